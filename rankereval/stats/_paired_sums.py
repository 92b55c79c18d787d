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
             n_resamples, ci_resamples):
    """The sums of one block of queries.

    ``scores``: (n, n_metrics, n_runs) per-query scores of the block's queries, ``keys`` their
    query ids; ``seeds``: (sign flips, Poisson weights) keys. A dict of arrays.
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
    return part


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


def summarise(total, test, alternative, alpha, n_resamples):
    """``(n, mean, sd, p, ci_low, ci_high)`` per column from the merged sums."""
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
