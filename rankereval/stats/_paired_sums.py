"""Paired comparisons from mergeable sums: :func:`rankereval.compare` over blocks of queries.

The counterpart of ``_engine.partials`` for the paired tests. Each block of queries (a
Spark partition; any disjoint split) turns its per-query scores into sums that merge by
addition (:func:`merge`), and :func:`summarise` turns the total into the statistics of
every (metric, pair) column, which ``_compare_runs._finish`` makes a :class:`~rankereval.stats.Comparison`.
The tests whose statistics are sums:

* ``'t'``: per column the number of differences, their sum and their centred sum of squares
  (merged with Chan et al.'s update, so the variance is as exact as the in-memory one);
  the p-values and intervals are those of :func:`rankereval.compare` (``scipy.stats.ttest_rel``);
* ``'permutation'``: sign flips keyed by (seed, query, resample)
  (``_bootstrap.keyed_sign_sums``): the same randomization test as in memory, with other
  random signs (there they follow the row order, which a split does not keep);
* ``'bootstrap'``: the bootstrap-t test with Poisson resampling keyed by query
  (exact sums, ``rankereval.stats._exact.poisson_exact``, of the differences and their squares:
  the same bits whatever the partitioning).

The intervals of ``'permutation'`` and ``'bootstrap'`` are Poisson percentile intervals of the
mean difference. Tukey's HSD permutes each query's scores among the runs and takes the largest
difference of run means: not a sum, so it is refused.
"""
import numpy as np

import rankereval.stats._bootstrap as _bootstrap
from rankereval.stats._engine import merge_partials as _merge_partials
from rankereval.stats._exact import poisson_exact
from rankereval.stats._resampling import query_key_hashes
from rankereval.stats._paired_tests import (
    _EPS, _bootstrap_p, _count_extreme, _percentile_ci, _t_from_moments, _tolerance)
from rankereval.stats._outcomes import _outcomes, _prepare, _score_sums

#: the tests computed from sums
TESTS = ("t", "permutation", "bootstrap")

# compare's steps that a block-wise caller (rankereval.spark) runs around the sums: its
# argument checks, metrics, run means and result, under the names of this interface
from rankereval.stats._checks import _check_arguments as check_arguments
from rankereval.stats._compare_runs import _finish as finish
from rankereval.stats._alignment import _resolve_metrics as resolve_metrics
from rankereval.stats._outcomes import _run_means as run_means


def partials(scores, keys, nan_handling, metric_objs, run_names, baseline, test, seeds,
             n_resamples, ci_resamples, weights=None):
    """The sums of one block of queries.

    ``scores``: (n, n_metrics, n_runs) per-query scores of the block's queries, ``keys`` their
    query ids; ``seeds``: (sign flips, Poisson weights) keys. A dict of arrays.

    ``weights`` (n, n_metrics), the query weights of the weighted means (GAUC; 1 elsewhere),
    or None: then the block also holds, exactly, per column ``sum(w)``, ``sum(w d)``,
    ``sum(w^2 d^2)``, ``sum(w^2 d)``, ``sum(w^2)`` and ``sum(|w d|)`` (``w_sums``: the
    difference of the weighted means and its delta-method variance), the weighted run means'
    sums (``w_score_sums``, ``w_counts``), the keyed sign flips of ``w d`` and the Poisson
    per-resample sums of the first five (``wp_sums``: the resampled ratios).
    """
    scores, valid, undefined, _, _, pairs, diffs = _prepare(scores, nan_handling, metric_objs,
                                                            run_names, baseline)
    used = ~np.isnan(diffs)
    d0 = np.where(used, diffs, 0.0)
    n = used.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, d0.sum(axis=0) / np.maximum(n, 1), 0.0)
    centred = np.where(used, diffs - mean, 0.0)
    better, worse, ties = _outcomes(diffs, metric_objs, len(pairs))
    part = {
        "n_q": np.int64(scores.shape[0]),
        "undefined": undefined.sum(axis=0),
        "counts": valid.sum(axis=0),
        "score_sums": _score_sums(scores, valid),
        "n": n,
        "s1": d0.sum(axis=0),
        "m2": (centred * centred).sum(axis=0),
        "abs": np.abs(d0).sum(axis=0),
        "max": np.abs(d0).max(axis=0, initial=0.0),
        "better": better, "worse": worse, "ties": ties,
    }
    if test != "t":
        hashes = query_key_hashes(keys, scores.shape[0])
        x = np.ascontiguousarray(np.hstack([diffs, diffs * diffs]))
        part["p_sums"], part["p_weights"] = poisson_exact(x, hashes, seeds[1], ci_resamples)
        if test == "permutation":
            part["flips"] = _bootstrap.keyed_sign_sums(np.ascontiguousarray(d0), hashes, seeds[0],
                                                       n_resamples)
    if weights is not None:
        _weighted_partials(part, scores, valid, diffs, used, weights, len(pairs), keys, test, seeds,
                           n_resamples, ci_resamples)
    return part


def _weighted_terms(diffs, used, w):
    """The columns ``w, w d, w^2 d^2, w^2 d, w^2, |w d|`` of the used differences (0 elsewhere)."""
    w = np.where(used, w, 0.0)
    d = np.where(used, diffs, 0.0)
    wd = w * d
    return [w, wd, wd * wd, w * wd, w * w, np.abs(wd)]


def _weighted_partials(part, scores, valid, diffs, used, weights, n_pairs, keys, test, seeds, n_resamples,
                       ci_resamples):
    from rankereval.stats._exact import exact_column_sums, weighted_terms

    wcols = np.repeat(weights, n_pairs, axis=1)                    # (n, C): column m * P + j
    terms = _weighted_terms(diffs, used, wcols)
    part["w_sums"] = exact_column_sums(np.hstack(terms))
    n_q, n_metrics, n_runs = scores.shape
    w3 = np.where(valid, weights, 0.0)[:, :, None]
    x = np.where(valid[:, :, None], weighted_terms(np.where(valid[:, :, None], scores, 0.0), w3), 0.0)
    total = exact_column_sums(x.reshape(n_q, n_metrics * n_runs))
    total.limbs = total.limbs.reshape((total.limbs.shape[0], n_metrics, n_runs))
    total.inf = total.inf.reshape(n_metrics, n_runs)
    part["w_score_sums"] = total
    part["w_counts"] = exact_column_sums(w3[:, :, 0])
    if test != "t":
        hashes = query_key_hashes(keys, n_q)
        nan = ~used
        x = np.ascontiguousarray(np.hstack([np.where(nan, np.nan, t) for t in terms[:5]]))
        part["wp_sums"] = poisson_exact(x, hashes, seeds[1], ci_resamples)[0]
        if test == "permutation":
            part["w_flips"] = _bootstrap.keyed_sign_sums(np.ascontiguousarray(terms[1]), hashes, seeds[0],
                                                         n_resamples)


def weighted_run_means(total, means, weighted):
    """``means`` (n_metrics, n_runs) with the weighted metrics' (``weighted``: a bool per metric)
    ``sum(w x) / sum(w)`` from the merged sums."""
    if "w_sums" not in total:
        return means
    num = total["w_score_sums"].to_float()
    den = total["w_counts"].to_float()
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(den[:, None] > 0, num / np.where(den > 0, den, 1.0)[:, None], np.nan)
    return np.where(np.asarray(weighted)[:, None], ratio, means)


def merge(a, b):
    """The sums of two disjoint blocks together (``m2`` by Chan et al.'s pairwise update)."""
    out = _merge_partials({k: v for k, v in a.items() if k != "m2"},
                          {k: v for k, v in b.items() if k != "m2"})
    na, nb = a["n"], b["n"]
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = b["s1"] / nb - a["s1"] / na
        cross = np.where((na > 0) & (nb > 0), delta * delta * na * nb / np.maximum(n, 1), 0.0)
    out["m2"] = a["m2"] + b["m2"] + cross
    return out


def moments(total):
    """Per column: number of differences, mean and standard deviation (ddof=1), as
    ``compare._moments`` (a standard deviation at the level of rounding noise is 0)."""
    n = total["n"]
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total["s1"] / n
        sd = np.sqrt(np.maximum(total["m2"], 0.0) / (n - 1))
    sd = np.where(sd <= 64.0 * _EPS * total["max"], 0.0, sd)
    return n, mean, np.where(n >= 2, sd, np.nan)


def summarise(total, test, alternative, alpha, n_resamples, weighted=None):
    """``(n, mean, sd, p, ci_low, ci_high)`` per column from the merged sums. ``weighted``: a
    bool per column, the columns of weighted means (:func:`_weighted_summary`)."""
    out = _summarise(total, test, alternative, alpha, n_resamples)
    if weighted is None or not np.any(weighted) or "w_sums" not in total:
        return out
    mine = _weighted_summary(total, test, alternative, alpha, n_resamples)
    return tuple(np.where(weighted, b, a) for a, b in zip(out, mine))


def _weighted_summary(total, test, alternative, alpha, n_resamples):
    """The statistics of every column as a difference of weighted means ``D = sum(w d) /
    sum(w)``: the t-test of the delta-method standard error ``(n / W) sqrt(sum(w^2 (d - D)^2)
    / (n - 1)) / sqrt(n)`` (compare's linearised values), the sign flips of ``w d``, and the
    Poisson bootstrap of the ratio (percentile interval; bootstrap-t with each resample's
    delta-method standard error)."""
    n = total["n"]
    c = n.shape[0]
    s = total["w_sums"].to_float().reshape(6, c)
    w, wd, q2, q1, q0, absolute = s
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(w > 0, wd / w, np.nan)
        spread = np.maximum(q2 - 2.0 * mean * q1 + mean * mean * q0, 0.0)
        sd = n / w * np.sqrt(spread / (n - 1))
    sd = np.where((n >= 2) & (w > 0), sd, np.nan)
    n = np.where(w > 0, n, 0)
    if test == "t":
        p, low, high = _t_from_moments(n, mean, sd, alternative, alpha)
        return n, mean, sd, p, low, high
    ps = total["wp_sums"].to_float()                                  # (5 C, B)
    p2, p1, p3, p4, p5 = (ps[k * c:(k + 1) * c] for k in range(5))   # w, w d, w^2 d^2, w^2 d, w^2
    drawn = total["p_weights"][:c]                                    # queries drawn per resample
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(p2 > 0, p1 / np.where(p2 > 0, p2, 1.0), mean[:, None])
    low, high = _percentile_ci(ratio.T, alternative, alpha)
    if test == "permutation":
        tol = _tolerance(n, absolute)
        count = _count_extreme(total["w_flips"], wd, tol, alternative)
        p = np.where(n > 0, (count + 1.0) / (n_resamples + 1.0), np.nan)
        return n, mean, sd, p, low, high
    with np.errstate(invalid="ignore", divide="ignore"):
        var = drawn * (p3 - 2.0 * ratio * p4 + ratio * ratio * p5) / ((drawn - 1.0) * p2 * p2)
        t_null = ((ratio - mean[:, None]) / np.sqrt(np.maximum(var, 0.0))).T
    t_null = np.where(np.isfinite(t_null) & (sd > 0)[None, :], t_null, 0.0)
    return n, mean, sd, _bootstrap_p(t_null, n, mean, sd, alternative), low, high


def _summarise(total, test, alternative, alpha, n_resamples):
    n, mean, sd = moments(total)
    if test == "t":
        p, low, high = _t_from_moments(n, mean, sd, alternative, alpha)
        return n, mean, sd, p, low, high
    n_cols = n.shape[0]
    p_sums = total["p_sums"].to_float()
    weights, sums, squares = total["p_weights"][:n_cols], p_sums[:n_cols], p_sums[n_cols:]
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = (sums / weights).T                                     # (B, C) resampled means
    low, high = _percentile_ci(boot, alternative, alpha)
    if test == "permutation":
        tol = _tolerance(n, total["abs"])
        count = _count_extreme(total["flips"], total["s1"], tol, alternative)
        p = np.where(n > 0, (count + 1.0) / (n_resamples + 1.0), np.nan)
        return n, mean, sd, p, low, high
    # bootstrap-t: the t statistics of the resamples around the observed mean are the null
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (squares - weights * (sums / weights) ** 2) / (weights - 1.0)
        t_null = ((sums / weights - mean[:, None]) / np.sqrt(np.maximum(var, 0.0) / weights)).T
    # no spread (every difference equal, or a resample of one value): as compare, 0
    t_null = np.where(np.isfinite(t_null) & (sd > 0)[None, :], t_null, 0.0)
    return n, mean, sd, _bootstrap_p(t_null, n, mean, sd, alternative), low, high
