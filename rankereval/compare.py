"""Compare systems: paired significance tests, multiple-testing corrections, reports and plots.

:func:`compare` scores every run with every metric on the same queries, tests each pair of
runs (or each run against a baseline) on the per-query differences, corrects the p-values
for the number of comparisons of each metric, and returns a :class:`Comparison` that renders
as a table (pandas, Markdown, LaTeX, JSON) or a plot.

>>> from rankereval import BinaryLabels, Rankings, AP, ReciprocalRank
>>> from rankereval.compare import compare
>>> y_true = BinaryLabels.from_positive_indices([[0, 1], [2], [3, 4], [5], [6, 7], [8]] * 5)
>>> runs = {
...     "bm25": Rankings.from_ranked_indices([[9, 0, 1], [2, 9], [9, 8, 3], [5], [6, 9], [9, 8]] * 5),
...     "dense": Rankings.from_ranked_indices([[0, 1, 9], [2, 9], [3, 4, 9], [5], [6, 7], [8]] * 5),
... }
>>> cmp = compare(y_true, runs, {"AP@3": AP(3), "RR@3": ReciprocalRank(3)}, baseline="bm25")
>>> cmp
Comparison(test='t', correction='holm', alpha=0.05, alternative='two-sided', baseline='bm25', 2 runs, 2 metrics, 30 queries)
    run        AP@3      RR@3
a   bm25     0.6250    0.7222
b   dense  1.0000^a  1.0000^a
^x: significantly better than run x; 2 of 2 comparisons significant
>>> cmp.summary()[["metric", "run", "baseline", "diff", "p_value", "significant"]]
  metric    run baseline      diff       p_value  significant
0   AP@3  dense     bm25  0.375000  1.675256e-07         True
1   RR@3  dense     bm25  0.277778  1.163013e-05         True

Statistics (see the "Comparing systems" guide for which test to choose and why):

* ``test="t"``: paired t-test; p-values equal :func:`scipy.stats.ttest_rel`, intervals are
  the t intervals of the mean difference.
* ``test="permutation"``: paired randomization test (random sign flips of the per-query
  differences), ``p = (count + 1) / (B + 1)``.
* ``test="bootstrap"``: paired bootstrap test of the mean difference (bootstrap-t: the t
  statistics of resamples of the centred differences are the null distribution), percentile
  interval.
* ``test="tukey"``: randomized Tukey HSD over all runs at once (Carterette 2012): the null
  distribution of the *largest* difference between run means when every query's scores are
  permuted among the runs; its p-values are family-wise over all pairs of runs.

Resampling runs in typed kernels (``rankereval._compare``) that share the random streams of
the bootstrap (one 64-bit key per resample): memory O(n + B), every metric and pair of a call
in one pass over the per-query differences per resample, and the same result for any number
of threads.
"""
from dataclasses import dataclass, field, replace
import json
import math
import os
import warnings
from numbers import Real

import numpy as np

from rankereval._choices import ALTERNATIVES, CORRECTIONS, QUERIES, TESTS

from rankereval._leaderboard import Leaderboard
from rankereval._stack import user_stacklevel

__all__ = ["compare", "Comparison", "TESTS", "CORRECTIONS", "ALTERNATIVES", "adjust_pvalues", "Leaderboard"]

_CORRECTION_ALIASES = {"fdr_bh": "bh", "benjamini-hochberg": "bh"}
# the long format of Comparison.summary / to_json
LONG_COLUMNS = ("metric", "run", "baseline", "mean", "baseline_mean", "diff", "ci_low", "ci_high",
                "effect_size", "p_value", "p_corrected", "significant", "wins", "ties", "losses")
# Bootstrap resamples of the confidence intervals of the tests that are not bootstrap tests
# ('permutation', 'tukey'): at most this many. Each bootstrap draw of a query costs a row of
# differences (~5 ns for 10 columns), a sign flip 1/8 of a table row: 10,000 bootstrap
# resamples of 100k queries would take ~5 s of CPU, 10x the test itself. The Monte Carlo
# error of a 95% percentile bound from 1,000 resamples is ~0.08 standard errors.
CI_RESAMPLES = 1000
# keys of the runs in tables: 'q' has no superscript letter in Unicode, so it is skipped
_KEYS = "abcdefghijklmnoprstuvwxyz"
_SUPERSCRIPT = dict(zip(_KEYS, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))
_EPS = float(np.finfo(np.float64).eps)

_TEST_NAMES = {
    "t": "paired t-test",
    "permutation": "paired randomization (sign-flip) test",
    "bootstrap": "paired bootstrap test",
    "tukey": "randomized Tukey HSD",
}
_CORRECTION_NAMES = {
    "holm": "Holm correction per metric",
    "bonferroni": "Bonferroni correction per metric",
    "bh": "Benjamini-Hochberg correction per metric",
    "none": "no correction",
    "tukey": "family-wise over all pairs of runs",
}


# ----------------------------------------------------------------------------------------
# argument checks
# ----------------------------------------------------------------------------------------

def _choice(value, options, name, aliases=None):
    """``value`` (or what its alias stands for) if it is one of ``options``; else ValueError."""
    from rankereval._validation import check_choice

    if isinstance(value, str):
        value = (aliases or {}).get(value, value)
    return check_choice(value, options, name)


def _check_alpha(alpha):
    if (isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (Real, np.floating))
            or not 0.0 < float(alpha) < 1.0):
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def _check_resamples(n_resamples):
    """As every bootstrap's (rankereval._engine): an integer > 1 (one resample gives p = 0.5)."""
    from rankereval._validation import check_n_resamples

    return check_n_resamples(n_resamples)


def _threads(work):
    """OpenMP threads for a kernel over ``work`` elements: the package's one policy."""
    from rankereval._threads import effective_n_threads

    return effective_n_threads(work)


# ----------------------------------------------------------------------------------------
# multiple testing
# ----------------------------------------------------------------------------------------

def _check_arguments(runs, baseline, test, tests, correction, alternative, nan_handling, queries,
                     alpha, n_resamples):
    """The checked options of :func:`compare` (``tests``: the tests on offer) and the run names."""
    from rankereval._validation import check_nan_handling

    test = _choice(test, tests, "test")
    correction = _choice(correction, CORRECTIONS, "correction", _CORRECTION_ALIASES)
    alternative = _choice(alternative, ALTERNATIVES, "alternative")
    nan_handling = check_nan_handling(nan_handling)
    queries = _choice(queries, QUERIES, "queries")
    alpha = _check_alpha(alpha)
    n_resamples = _check_resamples(n_resamples)
    if not isinstance(runs, dict):
        raise TypeError(f"runs must be a dict {{name: run}}, got {type(runs).__name__}")
    if len(runs) < 2:
        raise ValueError(f"runs must hold at least two runs to compare, got {len(runs)}")
    run_names = [str(k) for k in runs]
    if len(set(run_names)) != len(run_names):
        raise ValueError(f"run names must be distinct, got {run_names}")
    if baseline is not None and str(baseline) not in run_names:
        raise ValueError(f"baseline must be one of the run names {run_names}, got {baseline!r}")
    return test, correction, alternative, nan_handling, queries, alpha, n_resamples, run_names


def adjust_pvalues(pvalues, method="holm"):
    """p-values adjusted for multiple testing (NaN entries are left out of the family).

    Parameters
    ----------
    pvalues : array-like of float, shape (m,)
        Raw p-values in [0, 1]; NaN marks a comparison that could not be tested: it stays
        NaN and does not count in the family.
    method : {'holm', 'bonferroni', 'bh', 'none'}, default='holm'
        Holm's step-down (family-wise error rate), Bonferroni, Benjamini-Hochberg (false
        discovery rate; ``'fdr_bh'`` is accepted as in statsmodels), or none.

    Returns
    -------
    ndarray of float64, shape (m,)
        Adjusted p-values, equal to those of
        ``statsmodels.stats.multitest.multipletests(p, method=...)[1]``; a comparison is
        significant at level alpha when its adjusted p-value is ``<= alpha``.

    Examples
    --------
    >>> from rankereval.compare import adjust_pvalues
    >>> adjust_pvalues([0.01, 0.04, 0.03], "holm")
    array([0.03, 0.06, 0.06])
    >>> adjust_pvalues([0.01, 0.04, 0.03], "bh")
    array([0.03, 0.04, 0.04])
    """
    method = _choice(method, CORRECTIONS, "correction", _CORRECTION_ALIASES)
    p = np.asarray(pvalues, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D, got shape {p.shape}")
    ok = ~np.isnan(p)
    if ((p[ok] < 0) | (p[ok] > 1)).any():
        raise ValueError("pvalues must lie in [0, 1]")
    out = np.full(p.shape, np.nan)
    q = p[ok]
    m = q.size
    if m == 0:
        return out
    if method == "none":
        adj = q.copy()
    elif method == "bonferroni":
        adj = np.minimum(q * m, 1.0)
    else:
        order = np.argsort(q, kind="stable")
        ranked = q[order]
        if method == "holm":
            stepped = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
        else:  # Benjamini-Hochberg
            stepped = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
        adj = np.empty(m)
        adj[order] = np.minimum(stepped, 1.0)
    out[ok] = adj
    return out


# ----------------------------------------------------------------------------------------
# the paired tests on a matrix of per-query differences (NaN: query not compared)
# ----------------------------------------------------------------------------------------

def _moments(d):
    """Per column: number of queries, mean, standard deviation (ddof=1) of the differences.

    A standard deviation at the level of rounding noise (differences that are equal but
    for their last bits, e.g. ``0.7 - 0.2`` and ``0.8 - 0.3``) is taken as 0.
    """
    valid = ~np.isnan(d)
    n = valid.sum(axis=0)
    d0 = np.where(valid, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = d0.sum(axis=0) / n
        centred = np.where(valid, d - mean, 0.0)
        sd = np.sqrt((centred * centred).sum(axis=0) / (n - 1))
    noise = 64.0 * _EPS * np.abs(d0).max(axis=0, initial=0.0)
    sd = np.where(sd <= noise, 0.0, sd)
    sd = np.where(n >= 2, sd, np.nan)
    return n, mean, sd


def _t_test(d, alternative, alpha):
    """Paired t-test per column: ``(p, ci_low, ci_high)``, as ``scipy.stats.ttest_rel``.

    All differences zero: p = 1 and the interval is ``(0, 0)`` (scipy returns NaN).
    """
    return _t_from_moments(*_moments(d), alternative, alpha)


def _t_from_moments(n, mean, sd, alternative, alpha):
    """:func:`_t_test` from the number, mean and standard deviation of each column."""
    from scipy.stats import t as t_dist

    df = n - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        se = sd / np.sqrt(n)
        t = mean / se
        if alternative == "two-sided":
            p = 2.0 * t_dist.sf(np.abs(t), df)
            crit = t_dist.ppf(1.0 - alpha / 2.0, df)
        elif alternative == "greater":
            p = t_dist.sf(t, df)
            crit = t_dist.ppf(1.0 - alpha, df)
        else:
            p = t_dist.cdf(t, df)
            crit = t_dist.ppf(1.0 - alpha, df)
        half = np.where(se == 0, 0.0, crit * se)
    p = np.where((se == 0) & (mean == 0), 1.0, np.minimum(p, 1.0))
    p = np.where(n >= 2, p, np.nan)
    low = mean - half if alternative != "less" else np.full_like(mean, -np.inf)
    high = mean + half if alternative != "greater" else np.full_like(mean, np.inf)
    low = np.where(n >= 2, low, np.nan)
    high = np.where(n >= 2, high, np.nan)
    return p, low, high


def _tolerance(n, abs_sum):
    """Rounding allowance when a resampled sum is compared with the observed one.

    Sums of the same terms in another order differ by at most ``(n - 1) eps sum|d|``; ties
    (common with discrete metrics) must count as "at least as extreme".
    """
    return 4.0 * np.maximum(n, 1) * _EPS * abs_sum


def _count_extreme(null, observed, tol, alternative):
    """Per column, how many rows of ``null`` are at least as extreme as ``observed``."""
    if alternative == "two-sided":
        return (np.abs(null) >= np.abs(observed) - tol).sum(axis=0)
    if alternative == "greater":
        return (null >= observed - tol).sum(axis=0)
    return (null <= observed + tol).sum(axis=0)


def _permutation_test(d, alternative, n_resamples, seed):
    """Paired sign-flip randomization test per column: p = (count + 1) / (B + 1)."""
    import rankereval._compare as _compare

    valid = ~np.isnan(d)
    d0 = np.ascontiguousarray(np.where(valid, d, 0.0))   # absent queries: a zero difference
    n = valid.sum(axis=0)
    sums = _compare.sign_flip_sums(d0, n_resamples, seed, _threads(d0.size * n_resamples // 8))
    observed = d0.sum(axis=0)
    tol = _tolerance(n, np.abs(d0).sum(axis=0))
    count = _count_extreme(sums, observed, tol, alternative)
    return np.where(n > 0, (count + 1.0) / (n_resamples + 1.0), np.nan)


def _bootstrap_means(d, n_resamples, rng, studentized=False):
    """Bootstrap means (and t statistics) of each column's differences (NaN: not in it).

    Returns ``(means, t)``, both (B, C): the mean of each resample, and with
    ``studentized=True`` the bootstrap t statistic ``(mean* - mean) / (sd* / sqrt(n))`` of the
    resample (else None). Columns with the same queries share one kernel call, i.e. one pass
    over the rows per resample (with their squares as extra columns when studentized), and
    each such group gets its own 64-bit key from ``rng``. The differences are centred first
    (the null of the test, and no cancellation in the sums of squares).
    """
    import rankereval._compare as _compare

    valid = ~np.isnan(d)
    means = np.full((n_resamples, d.shape[1]), np.nan)
    t = np.full((n_resamples, d.shape[1]), np.nan) if studentized else None
    groups = {}
    for c in range(d.shape[1]):
        groups.setdefault(valid[:, c].tobytes(), []).append(c)
    for cols in groups.values():
        rows = valid[:, cols[0]]
        n = int(rows.sum())
        seed = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        if n == 0:
            continue
        sub = d[np.ix_(rows, cols)]
        centre = sub.mean(axis=0)
        centred = sub - centre
        block = np.hstack([centred, centred * centred]) if studentized else centred
        block = np.ascontiguousarray(block)
        sums = _compare.bootstrap_sums(block, n_resamples, seed, _threads(block.size * n_resamples))
        shift = sums[:, :len(cols)] / n                      # mean* - mean
        means[:, cols] = centre + shift
        if studentized:
            with np.errstate(invalid="ignore", divide="ignore"):
                var = (sums[:, len(cols):] - n * shift * shift) / (n - 1)
                stat = shift / np.sqrt(np.maximum(var, 0.0) / n)
            t[:, cols] = np.where(np.isnan(stat), 0.0, stat)   # 0/0: a resample of one value
    return means, t


def _percentile_ci(means, alternative, alpha):
    with np.errstate(invalid="ignore"):
        if alternative == "two-sided":
            low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
        elif alternative == "greater":
            low = np.quantile(means, alpha, axis=0)
            high = np.full(means.shape[1], np.inf)
        else:
            low = np.full(means.shape[1], -np.inf)
            high = np.quantile(means, 1.0 - alpha, axis=0)
    nan = np.isnan(means).all(axis=0)
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def _bootstrap_test(t_null, d, alternative):
    """Paired bootstrap-t test: the bootstrap t statistics of the centred differences are the
    null distribution of the observed t statistic (Efron & Tibshirani 1993, 16.4; Sakai
    2006). p = (count + 1) / (B + 1); all differences zero: p = 1."""
    return _bootstrap_p(t_null, *_moments(d), alternative)


def _bootstrap_p(t_null, n, mean, sd, alternative):
    """:func:`_bootstrap_test` from the number, mean and standard deviation of each column."""
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = mean / (sd / np.sqrt(n))
    observed = np.where((sd == 0) & (mean == 0), 0.0, observed)
    tol = 1e-9 * np.where(np.isfinite(observed), np.abs(observed), 0.0)
    count = _count_extreme(t_null, observed, tol, alternative)
    b = t_null.shape[0]
    p = np.where(n > 1, (count + 1.0) / (b + 1.0), np.nan)
    return np.where((sd == 0) & (mean == 0), 1.0, p)


def _tukey_test(scores, valid, pairs, n_resamples, seed):
    """Randomized Tukey HSD p-values, (n_metrics, n_pairs).

    ``scores`` is (n, n_metrics, n_runs); rows where ``valid[:, m]`` is False are not used
    for metric m (zeros in the kernel's input: a permutation of zeros changes nothing).
    """
    import rankereval._compare as _compare

    n, n_metrics, n_runs = scores.shape
    s = np.where(valid[:, :, None], scores, 0.0)
    flat = np.ascontiguousarray(s.reshape(n, n_metrics * n_runs))
    ranges = _compare.tukey_ranges(flat, n_metrics, n_runs, n_resamples, seed,
                                   _threads(flat.size * n_resamples))
    sums = s.sum(axis=0)                                       # (n_metrics, n_runs)
    tol = _tolerance(valid.sum(axis=0), np.abs(s).sum(axis=(0, 2)))
    p = np.empty((n_metrics, len(pairs)))
    for j, (r, b) in enumerate(pairs):
        observed = np.abs(sums[:, r] - sums[:, b])
        count = (ranges >= observed - tol).sum(axis=0)
        p[:, j] = (count + 1.0) / (n_resamples + 1.0)
    return np.where(valid.any(axis=0)[:, None], p, np.nan)


# ----------------------------------------------------------------------------------------
# inputs: metrics, runs, alignment by query id
# ----------------------------------------------------------------------------------------

def _resolve_metrics(metrics):
    """``(names, metric objects)``, exactly as :func:`rankereval.evaluate` names its columns."""
    from rankereval._columns import metric_columns as _metric_columns

    columns = _metric_columns(metrics)
    return [c for c, _ in columns], [m for _, m in columns]


def _per_query_scores(y_true, run, metrics, relevance_level, ties=None):
    """(n_queries, n_metrics) per-query scores of one run, by :func:`rankereval.evaluate`.

    ``y_true`` is labels and ``run`` Rankings, or ``y_true`` is a ``TrecData`` and ``run``
    None; graded labels are thresholded at ``relevance_level`` for the binary metrics.
    """
    from rankereval._evaluation import evaluate

    # 'drop': the means are not used, and an all-NaN column must not warn here
    columns = {str(i): m for i, m in enumerate(metrics)}
    with warnings.catch_warnings():
        # the range of the means over tied orders is the evaluation's business, not the test's
        from rankereval.exceptions import TiedScoresWarning

        warnings.simplefilter("ignore", TiedScoresWarning)
        return evaluate(y_true, run, columns, relevance_level=relevance_level, nan_handling="drop",
                        ties=ties).scores


def _is_path(x):
    return isinstance(x, (str, bytes, os.PathLike))


def _some(ids, limit=5):
    shown = ", ".join(str(q) for q in ids[:limit])
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


def _collect(y_true, runs, metrics, relevance_level, queries, ties=None):
    """Per-query scores (n, n_metrics, n_runs), query ids (or None) and the alignment report."""
    from rankereval.data import Labels, Rankings

    names = list(runs)
    values = [runs[k] for k in names]
    if isinstance(y_true, Labels):
        for name, run in zip(names, values):
            if not isinstance(run, Rankings):
                raise TypeError(f"runs[{name!r}] must be Rankings when y_true is labels, got "
                                f"{type(run).__name__}")
        rows = {name: run.n_rows for name, run in zip(names, values)}
        if len(set(rows.values())) != 1:
            raise ValueError(f"runs have different numbers of rankings: {rows}; with labels "
                             "rows are matched by position, so every run needs the same rows")
        per_run = [_per_query_scores(y_true, run, metrics, relevance_level, ties) for run in values]
        n = per_run[0].shape[0]
        report = {"aligned_by": "position", "queries": "all", "n_queries": n}
        return np.stack(per_run, axis=2), None, report
    return _collect_trec(y_true, names, values, metrics, relevance_level, queries, ties)


def _is_ranx_dicts(x):
    """A dict of dicts (ranx' layout) or a ranx Qrels / Run (an object with ``to_dict()``; not a
    DataFrame, whose ``to_dict()`` is keyed by column)."""
    from collections.abc import Mapping

    if isinstance(x, Mapping):
        return True
    return callable(getattr(x, "to_dict", None)) and not hasattr(x, "columns")


def _collect_trec(qrels, names, values, metrics, relevance_level, queries, ties=None):
    from rankereval.io import TrecData, read_trec

    if qrels is not None and not _is_path(qrels) and not _is_ranx_dicts(qrels):
        raise TypeError("y_true must be BinaryLabels/NumericLabels (runs: Rankings), a qrels "
                        "file path (runs: run file paths or TrecData), ranx-style qrels "
                        "{query: {doc: grade}} (runs: {query: {doc: score}} dicts) or None (runs: "
                        f"TrecData), got {type(qrels).__name__}")
    datas = []
    for name, run in zip(names, values):
        if isinstance(run, TrecData):
            datas.append(run)
        elif _is_ranx_dicts(qrels) and _is_ranx_dicts(run):
            # ranx' Qrels / Run, or their {query: {doc: value}} dicts, read as io.from_dicts reads them
            from rankereval.io import from_dicts

            datas.append(from_dicts(qrels, run, relevance_level=relevance_level, missing="empty",
                                    ties="break" if ties is None else "keep"))
        elif _is_path(run):
            if qrels is None:
                raise TypeError(f"runs[{name!r}] is a path: pass the qrels path as y_true")
            # every query of the qrels gets a row (an empty ranking where the run has none),
            # so that queries can be aligned, filled or dropped below
            datas.append(read_trec(qrels, run, relevance_level=relevance_level, missing="empty",
                                   ties="break" if ties is None else "keep"))
        else:
            raise TypeError(f"runs[{name!r}] must be a run file path or a TrecData when y_true "
                            f"is a qrels path or None, got {type(run).__name__}")
    sources = {(d.report.qrels_source, d.report.n_judgements) for d in datas}
    if len(sources) > 1:
        raise ValueError("the runs were read against different qrels: "
                         + "; ".join(f"{n!r}: {d.report.qrels_source}" for n, d in zip(names, datas)))

    def ranked(d):
        missing = set(d.report.missing_queries) if d.report.missing == "empty" else set()
        return [q for q in d.query_ids if q not in missing]

    have = [ranked(d) for d in datas]
    sets = [set(h) for h in have]
    union = set().union(*sets)
    common = set.intersection(*sets)
    order = sorted(union, key=str)
    lacking = {name: [q for q in order if q not in s] for name, s in zip(names, sets)}
    if union != common and queries == "error":
        detail = "; ".join(f"{name!r} lacks {_some(ids)}" for name, ids in lacking.items() if ids)
        raise ValueError(f"the runs rank different queries ({detail}); pass "
                         "queries='intersection' to compare the common queries or "
                         "queries='union' to score missing queries as empty rankings "
                         "(trec_eval -c)")
    keep = [q for q in order if q in common] if queries != "union" else order
    qrels_queries = set(datas[0].query_ids)
    scores = np.empty((len(keep), len(metrics), len(names)))
    for j, (name, d) in enumerate(zip(names, datas)):
        rows = d.query_ids.get_indexer(keep)
        if (rows < 0).any():
            absent = [q for q, r in zip(keep, rows) if r < 0]
            raise ValueError(f"runs[{name!r}] has no row for {_some(absent)}: read it with "
                             "read_trec(..., missing='empty') or pass the run file path")
        scores[:, :, j] = _per_query_scores(d, None, metrics, relevance_level, ties)[rows]
    report = {
        "aligned_by": "query_id",
        "queries": queries,
        "n_queries": len(keep),
        "n_union": len(union),
        "n_common": len(common),
        # queries of the qrels that no run ranks: not compared (as trec_eval)
        "n_qrels_not_ranked": len(qrels_queries - union),
        "missing": {name: ids for name, ids in lacking.items()},
        # union: queries scored as an empty ranking per run; intersection: queries dropped
        "n_filled": {name: (len(ids) if queries == "union" else 0) for name, ids in lacking.items()},
        "n_dropped": 0 if queries == "union" else len(union) - len(common),
    }
    return scores, np.asarray(keep, dtype=object), report


# ----------------------------------------------------------------------------------------
# compare
# ----------------------------------------------------------------------------------------

def _prepare(scores, nan_handling, metric_objs, run_names, baseline):
    """The per-query scores (n, n_metrics, n_runs) as the tests see them, and the differences.

    Returns ``(scores, valid, undefined, propagated, geometric, pairs, diffs)``: the scores
    with NaN handling applied and geometric metrics as floored logs (infinities kept);
    whether each (query, metric) enters the means (the NaN policy of
    :func:`rankereval._engine.apply_nan_policy`; a query infinite in some run enters the
    means but not the tests); where any run is undefined; the metrics made
    NaN by ``nan_handling='propagate'``; the geometric ones; the ``(run, baseline)`` index
    pairs; the differences (n, n_metrics * n_pairs), column ``m * n_pairs + j`` pair ``j``
    of metric ``m``, NaN where not compared. :mod:`rankereval.spark` runs it per partition.
    """
    from rankereval._engine import fill_undefined, floored_log

    # only NaN is undefined (rankereval._engine): an infinite score (MeanRanks, FirstRelevantRank
    # retrieving nothing relevant) enters the means, as in evaluate; the paired tests need finite
    # differences, so a query infinite in some run is left out of that metric's tests only
    scores = np.array(scores, dtype=np.float64)
    undefined = np.isnan(scores).any(axis=2)                    # (n, n_metrics)
    n_q, n_metrics, n_runs = scores.shape
    if nan_handling in ("zerofill", "onefill"):
        scores = fill_undefined(scores, nan_handling)
        valid = np.ones((n_q, n_metrics), dtype=bool)
    elif nan_handling == "drop":
        valid = ~undefined
    else:
        valid = np.ones((n_q, n_metrics), dtype=bool)
    propagated = undefined.any(axis=0) if nan_handling == "propagate" else np.zeros(n_metrics, bool)
    valid[:, propagated] = False
    testable = valid & ~np.isinf(scores).any(axis=2)
    # a geometric mean (GMAP) is the exp of a mean of logs: compare the logs (floored as in
    # the mean), so that the tests and diff are on the log scale and the means geometric
    geometric = np.array([m.info.aggregate == "geometric" for m in metric_objs], dtype=bool)
    if geometric.any():
        scores[:, geometric, :] = floored_log(scores[:, geometric, :])

    if baseline is not None:
        b = run_names.index(str(baseline))
        pairs = [(r, b) for r in range(n_runs) if r != b]
    else:
        pairs = [(j, i) for i in range(n_runs) for j in range(i + 1, n_runs)]
    n_pairs = len(pairs)

    # differences: column m * n_pairs + j is pair j under metric m; NaN where not compared
    run_idx = np.array([r for r, _ in pairs], dtype=np.intp)
    base_idx = np.array([b for _, b in pairs], dtype=np.intp)
    with np.errstate(invalid="ignore"):
        diffs = scores[:, :, run_idx] - scores[:, :, base_idx]              # (n, M, P)
    diffs = np.where(testable[:, :, None], diffs, np.nan).reshape(n_q, n_metrics * n_pairs)
    return scores, valid, undefined, propagated, geometric, pairs, diffs


def _score_sums(scores, valid):
    """Exact sums (:class:`rankereval._exact.ExactSum`, shape (n_metrics, n_runs)) of the
    scores that enter each run's mean: the engine's sums, so the means are evaluate's bits."""
    from rankereval._exact import exact_column_sums

    n_q, n_metrics, n_runs = scores.shape
    x = np.where(valid[:, :, None], scores, 0.0).reshape(n_q, n_metrics * n_runs)
    total = exact_column_sums(x)
    total.limbs = total.limbs.reshape((total.limbs.shape[0], n_metrics, n_runs))
    total.inf = total.inf.reshape(n_metrics, n_runs)
    return total


def _run_means(sums, counts):
    """Means (n_metrics, n_runs) from rounded exact sums and the queries of each metric."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts[:, None] > 0, sums / np.maximum(counts, 1)[:, None], np.nan)


def _outcomes(diffs, metric_objs, n_pairs):
    """Per column of differences: queries where the run is better, worse, tied."""
    higher = np.array([m.info.higher_is_better for m in metric_objs])  # from the registry
    sign = np.where(np.repeat(higher, n_pairs), 1.0, -1.0)
    return (diffs * sign > 0).sum(axis=0), (diffs * sign < 0).sum(axis=0), (diffs == 0).sum(axis=0)


def compare(y_true, runs, metrics, *, baseline=None, test="t", correction="holm", alpha=0.05,
            n_resamples=10_000, alternative="two-sided", nan_handling=None, queries="error",
            random_state=None, relevance_level=1, ties=None):
    """Compare runs with paired significance tests, per metric, corrected for multiple testing.

    Parameters
    ----------
    y_true : BinaryLabels, NumericLabels, qrels path, dict or None
        Labels, with ``runs`` as Rankings whose rows are the same queries in the same order;
        or a TREC qrels file path, with ``runs`` as run file paths (read against it) or
        ``TrecData``; or ranx-style qrels ``{query_id: {doc_id: grade}}`` (or a ``ranx.Qrels``),
        with ``runs`` as ``{query_id: {doc_id: score}}`` dicts (or ``ranx.Run``), read as
        :func:`rankereval.io.from_dicts` reads them; or None with ``runs`` as ``TrecData`` read against one qrels file. With
        TREC data rows are aligned by query id, never by position.
    runs : dict
        ``{name: Rankings}``, or ``{name: run file path or TrecData}``; at least two runs.
        A value may be a list of such runs (several seeds or folds of one system): the
        system's per-query scores are then the means over its runs, and
        :meth:`Comparison.leaderboard` resamples its runs as well as the queries.
    metrics : Metric, str, list or dict
        Metric objects, metric names (resolved by ``rankereval.metrics.from_name``; each
        names its column as written, an object by its ``.name``, as in
        :func:`rankereval.evaluate`) or a ``{name: Metric}`` dict whose keys name the columns.
    baseline : str or None, default=None
        A run name: every other run is compared with it. None: all pairs of runs (each pair
        once: the later run in ``runs`` against the earlier one).
    test : {'t', 'permutation', 'bootstrap', 'tukey'}, default='t'
        The paired test (see the module docstring). ``'tukey'`` compares all pairs at once
        and needs ``baseline=None`` and ``alternative='two-sided'``.
    correction : {'holm', 'bonferroni', 'bh', 'none'}, default='holm'
        Correction of the p-values over the family of all comparisons of one metric.
        Tukey's HSD p-values are family-wise already: with ``test='tukey'`` no further
        correction is applied (``Comparison.correction`` is then ``'tukey'``).
    alpha : float, default=0.05
        Significance level; intervals have confidence ``1 - alpha``.
    n_resamples : int, default=10_000
        Resamples B of the resampling tests (``'t'`` uses none). The intervals of
        ``'permutation'`` and ``'tukey'`` use ``min(B, 1000)`` bootstrap resamples.
    alternative : {'two-sided', 'greater', 'less'}, default='two-sided'
        ``'greater'``: the run's mean is larger than the baseline's (in raw metric values).
    nan_handling : {'drop', 'zerofill', 'onefill', 'propagate'} or None, default=None
        None: ``'drop'`` in this release, with a ``FutureWarning`` when some metric has an
        undefined query: the next release makes the default ``'propagate'``, the Python API's
        one default (:doc:`/guide/nan_policy`). Queries where a run's score is undefined (NaN, e.g. no relevant document):
        ``'drop'`` leaves such a query out of that metric's comparisons (for every run, so
        that all comparisons of a metric use the same queries); ``'zerofill'`` scores it 0
        (``'onefill'``: 1);
        ``'propagate'`` makes that metric's results NaN. An infinite score (MeanRanks,
        FirstRelevantRank retrieving nothing relevant) is not undefined: it enters the run
        means as in :func:`rankereval.evaluate` (which are then infinite), and only the
        paired tests, which need finite differences, leave that query out for that metric.
    queries : {'error', 'intersection', 'union'}, default='error'
        With TREC data, runs that rank different queries raise a ValueError naming them;
        ``'intersection'`` compares the queries every run ranks, ``'union'`` those any run
        ranks, a missing one scored as an empty ranking (``trec_eval -c``).
    random_state : None, int or numpy.random.Generator, default=None
        Seed of the resampling; the global NumPy random state is never used.
    relevance_level : number, default=1
        Grade from which a document is relevant for binary metrics when labels are graded or
        run files are read (``trec_eval -l``).
    ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
        For runs that keep their tied scores (Rankings or ``TrecData`` built with
        ``ties="keep"``; run files are then read so): test the per-query values over the
        orders of the tied documents, as :func:`rankereval.evaluate` computes them
        ('expected': the mean over every order). None: the recorded order.

    Returns
    -------
    Comparison

    Raises
    ------
    ValueError, TypeError
        For invalid arguments (the message names the argument), runs over different queries
        (``queries='error'``), or runs with different numbers of rows.

    References
    ----------
    .. [1] B. Carterette, "Multiple testing in statistical analysis of systems-based
       information retrieval experiments", ACM TOIS 30(1), 2012.
    .. [2] M. D. Smucker, J. Allan, B. Carterette, "A comparison of statistical significance
       tests for information retrieval evaluation", CIKM 2007.
    .. [3] J. Urbano, H. Lima, A. Hanjalic, "Statistical significance testing in information
       retrieval: an empirical analysis of type I, type II and type III errors", SIGIR 2019.
    """
    import rankereval.bootstrap as bootstrap
    from rankereval import _engine
    from rankereval._validation import check_real

    nan_handling, nan_default = _engine.compare_nan_handling(nan_handling)
    test, correction, alternative, nan_handling, queries, alpha, n_resamples, run_names = _check_arguments(
        runs, baseline, test, TESTS, correction, alternative, nan_handling, queries, alpha, n_resamples)
    if test == "tukey" and baseline is not None:
        raise ValueError("test='tukey' compares all pairs of runs at once: use baseline=None")
    if test == "tukey" and alternative != "two-sided":
        raise ValueError("test='tukey' is two-sided: use alternative='two-sided'")
    check_real(relevance_level, "relevance_level")
    metric_names, metric_objs = _resolve_metrics(metrics)
    rng = bootstrap._rng(random_state)

    from rankereval import _seeds
    from rankereval.metrics._ties import check_ties

    flat, seed_groups = _seeds.expand({str(k): v for k, v in runs.items()})
    scores, query_ids, report = _collect(y_true, flat, metric_objs, relevance_level, queries,
                                         check_ties(ties))
    seed_scores = None
    if seed_groups is not None:   # several runs per system: each system's mean over its runs
        seed_scores = scores
        scores = _seeds.mean_over_runs(scores, seed_groups)
    scores, valid, undefined, propagated, geometric, pairs, diffs = _prepare(
        scores, nan_handling, metric_objs, run_names, baseline)
    report["n_undefined"] = {name: int(undefined[:, m].sum()) for m, name in enumerate(metric_names)}
    if nan_default:
        _engine.warn_compare_default(report["n_undefined"], "compare")
    n_q, n_metrics, n_runs = scores.shape
    n_pairs = len(pairs)

    n_used, mean_diff, sd = _moments(diffs)
    seed = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
    ci_resamples = 0
    if test == "t":
        p, ci_low, ci_high = _t_test(diffs, alternative, alpha)
    else:
        ci_resamples = n_resamples if test == "bootstrap" else min(n_resamples, CI_RESAMPLES)
        boot, t_null = _bootstrap_means(diffs, ci_resamples, rng, studentized=test == "bootstrap")
        ci_low, ci_high = _percentile_ci(boot, alternative, alpha)
        if test == "bootstrap":
            p = _bootstrap_test(t_null, diffs, alternative)
        elif test == "permutation":
            p = _permutation_test(diffs, alternative, n_resamples, seed)
        else:
            finite = np.isfinite(scores).all(axis=2)
            p = _tukey_test(np.where(np.isfinite(scores), scores, 0.0), valid & finite, pairs, n_resamples,
                            seed).reshape(-1)
        del boot, t_null

    counts = valid.sum(axis=0)
    means = _run_means(_score_sums(scores, valid).to_float(), counts)       # (M, R)
    result = _finish(metric_names, metric_objs, run_names, baseline, pairs, test, correction, alpha,
                     n_resamples, alternative, nan_handling, ci_resamples, propagated, geometric,
                     means, counts, mean_diff, sd, ci_low, ci_high, p, _outcomes(diffs, metric_objs, n_pairs),
                     scores, valid, query_ids, report)
    if seed_scores is not None:
        # the runs' own scores as the tests' scores are prepared (NaN policy, logs)
        from rankereval._engine import fill_undefined, floored_log

        seed_scores = np.array(seed_scores, dtype=np.float64)  # infinities kept, as in _prepare
        seed_scores = fill_undefined(seed_scores, nan_handling)
        if geometric.any():
            seed_scores[:, geometric, :] = floored_log(seed_scores[:, geometric, :])
        seed_scores.setflags(write=False)
    return replace(result, seed_scores=seed_scores, seed_groups=seed_groups,
                   geometric=tuple(bool(g) for g in geometric))


def _finish(metric_names, metric_objs, run_names, baseline, pairs, test, correction, alpha,
            n_resamples, alternative, nan_handling, ci_resamples, propagated, geometric, means,
            counts, mean_diff, sd, ci_low, ci_high, p, outcomes, scores, valid, query_ids, report):
    """The :class:`Comparison` from the statistics of each (metric, pair) column: corrected
    p-values, effect sizes, the long format. ``means`` (n_metrics, n_runs) are arithmetic
    (of logs for geometric metrics); ``outcomes``: (better, worse, ties) per column."""
    n_metrics, n_pairs = len(metric_names), len(pairs)
    run_idx = np.array([r for r, _ in pairs], dtype=np.intp)
    base_idx = np.array([b for _, b in pairs], dtype=np.intp)
    p_matrix = p.reshape(n_metrics, n_pairs)
    if test == "tukey":
        p_corrected = p_matrix.copy()
        correction = "tukey"
    else:
        p_corrected = np.vstack([adjust_pvalues(row, correction) for row in p_matrix])
    p_corrected = p_corrected.reshape(-1)

    with np.errstate(invalid="ignore", divide="ignore"):
        effect = np.where(sd > 0, mean_diff / sd, np.nan)
    means = np.array(means, dtype=np.float64)
    from rankereval._engine import exp_mean

    logs = means[geometric]
    means[geometric] = np.array([exp_mean(float(v)) for v in logs.ravel()]).reshape(logs.shape)  # as evaluate
    higher = np.array([m.info.higher_is_better for m in metric_objs])  # from the registry
    better, worse, ties = outcomes

    results = {
        "metric": np.repeat(np.array(metric_names, dtype=object), n_pairs),
        "run": np.tile(np.array([run_names[r] for r in run_idx], dtype=object), n_metrics),
        "baseline": np.tile(np.array([run_names[b] for b in base_idx], dtype=object), n_metrics),
        "mean": means[:, run_idx].reshape(-1),
        "baseline_mean": means[:, base_idx].reshape(-1),
        "diff": mean_diff,
        "ci_low": np.asarray(ci_low, dtype=np.float64),
        "ci_high": np.asarray(ci_high, dtype=np.float64),
        "effect_size": effect,
        "p_value": np.asarray(p, dtype=np.float64),
        "p_corrected": p_corrected,
        "significant": np.nan_to_num(p_corrected, nan=np.inf) <= alpha,
        "wins": better.astype(np.int64),
        "ties": ties.astype(np.int64),
        "losses": worse.astype(np.int64),
    }
    for key in ("mean", "baseline_mean", "diff", "ci_low", "ci_high", "effect_size", "p_value",
                "p_corrected"):
        results[key] = np.where(np.repeat(propagated, n_pairs), np.nan, results[key])
    results["significant"] &= ~np.repeat(propagated, n_pairs)
    for arr in results.values():
        arr.setflags(write=False)
    for arr in (scores, valid, means):
        if arr is not None:
            arr.setflags(write=False)
    return Comparison(
        metrics=tuple(metric_names), runs=tuple(run_names),
        baseline=None if baseline is None else str(baseline), test=test, correction=correction,
        alpha=alpha, n_resamples=n_resamples, alternative=alternative, nan_handling=nan_handling,
        ci_resamples=ci_resamples, higher_is_better=tuple(bool(h) for h in higher),
        pairs=tuple(pairs), means=means, n_queries=counts.astype(np.int64), results=results,
        scores=scores, valid=valid, query_ids=query_ids, report=report)


# ----------------------------------------------------------------------------------------
# the result
# ----------------------------------------------------------------------------------------

def _latex_escape(text):
    from rankereval._render import latex_escape

    return latex_escape(text)


def _markdown_escape(text):
    from rankereval._render import markdown_escape

    return markdown_escape(text)


def _json_value(x):
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


@dataclass(frozen=True, eq=False)
class Comparison:
    """Result of :func:`compare`: every comparison's statistics, and ways to show them.

    Attributes
    ----------
    metrics : tuple of str
        Metric names, in the order given.
    runs : tuple of str
        Run names, in the order given; run ``i`` has key letter ``keys[i]`` in tables.
    baseline : str or None
        The baseline run, or None (all pairs).
    test, correction, alternative, nan_handling : str
        As passed to :func:`compare`; ``correction`` is ``'tukey'`` for Tukey's HSD.
    alpha : float
    n_resamples : int
        B of the test (unused by ``'t'``).
    ci_resamples : int
        Bootstrap resamples of the intervals (0: t intervals).
    higher_is_better : tuple of bool
        Per metric, from its registry entry (``MetricInfo.higher_is_better``; False for
        MeanRanks and FirstRelevantRank).
    pairs : tuple of (int, int)
        ``(run index, baseline index)`` of each comparison.
    means : ndarray, shape (n_metrics, n_runs)
        Mean score of each run over the queries compared for that metric.
    n_queries : ndarray of int, shape (n_metrics,)
        Queries compared for each metric (after NaN handling).
    results : dict of ndarray
        The long format, one entry per (metric, pair), metric-major: see :meth:`summary`.
    scores : ndarray, shape (n_queries, n_metrics, n_runs)
        Per-query scores (NaN: undefined).
    valid : ndarray of bool, shape (n_queries, n_metrics)
        Whether a query is compared for a metric.
    query_ids : ndarray or None
        Query id of each row (TREC inputs), or None (rows by position).
    report : dict
        What was aligned, dropped or filled, in counts: ``aligned_by``, ``queries``,
        ``n_queries``, and with TREC inputs ``n_union``, ``n_common``,
        ``n_qrels_not_ranked``, ``missing`` (per run, ids), ``n_filled`` (per run),
        ``n_dropped``; ``n_undefined`` (per metric, queries with a NaN/infinite score).
    seed_scores : ndarray or None
        With several runs per system: every run's per-query scores, shape (n_queries,
        n_metrics, total runs), prepared as ``scores`` (NaN handling, logs of geometric
        metrics); None with one run per system.
    seed_groups : tuple of tuple of int or None
        Per system, the positions of its runs in ``seed_scores``.
    geometric : tuple of bool or None
        Per metric, whether it is averaged geometrically (its ``scores`` are then logs).
    """

    metrics: tuple
    runs: tuple
    baseline: object
    test: str
    correction: str
    alpha: float
    n_resamples: int
    alternative: str
    nan_handling: str
    ci_resamples: int
    higher_is_better: tuple
    pairs: tuple
    means: np.ndarray = field(repr=False)
    n_queries: np.ndarray = field(repr=False)
    results: dict = field(repr=False)
    scores: np.ndarray = field(repr=False)
    valid: np.ndarray = field(repr=False)
    query_ids: object = field(repr=False)
    report: dict = field(repr=False)
    #: several runs per system: the runs' scores (n_queries, n_metrics, n_runs_total) and, per
    #: system, the positions of its runs there (None: one run per system)
    seed_scores: object = field(default=None, repr=False)
    seed_groups: object = field(default=None, repr=False)
    #: per metric, whether it is averaged geometrically (its scores here are logs)
    geometric: object = field(default=None, repr=False)

    # -- rows ------------------------------------------------------------------------------
    @property
    def keys(self):
        """Key of each run in tables: ``a``, ``b``, ... (no ``q``), two letters beyond 25."""
        n = len(self.runs)
        if n <= len(_KEYS):
            return tuple(_KEYS[:n])
        return tuple(_KEYS[i // len(_KEYS)] + _KEYS[i % len(_KEYS)] for i in range(n))

    def rows(self):
        """The long format as a list of dicts (see :meth:`summary`)."""
        n = len(self.results["metric"])
        out = []
        for i in range(n):
            row = {}
            for col in LONG_COLUMNS:
                v = self.results[col][i]
                if isinstance(v, np.bool_):
                    v = bool(v)
                elif isinstance(v, np.integer):
                    v = int(v)
                elif isinstance(v, np.floating):
                    v = float(v)
                row[col] = v
            out.append(row)
        return out

    def summary(self):
        """Long format DataFrame: one row per (metric, comparison).

        Columns: ``metric, run, baseline, mean, baseline_mean, diff, ci_low, ci_high,
        effect_size, p_value, p_corrected, significant, wins, ties, losses``. ``diff`` is
        ``mean - baseline_mean`` over the compared queries, ``effect_size`` the mean
        difference over the standard deviation of the differences, ``wins``/``losses``
        count queries where the run is better/worse than the baseline (lower is better where
        the metric's registry entry says so: MeanRanks and FirstRelevantRank). For a
        metric averaged geometrically (:class:`~rankereval.GMAP`) the means are geometric
        and the tests, ``diff`` and its interval are on the log scale: ``diff`` is the mean
        of the per-query differences of log(max(AP, 1e-5)), the log of the ratio of the two
        GMAPs.
        """
        pd = _pandas()
        return pd.DataFrame({col: np.asarray(self.results[col]) for col in LONG_COLUMNS},
                            columns=list(LONG_COLUMNS))

    def to_pandas(self, per_query=None):
        """Per-query scores as a DataFrame, as :meth:`rankereval.Evaluation.to_pandas`.

        ``to_pandas(per_query=True)``: one row per query (indexed by query id with TREC
        inputs), one column per (metric, run) (a two-level column index); NaN where a query
        is not compared for a metric (see ``valid``). For a metric averaged geometrically the
        scores are logs, as in ``scores``.

        Until the next release, ``to_pandas()`` without ``per_query=True`` still returns the
        summary table (one row per metric and comparison) with a ``DeprecationWarning``: that
        table is :meth:`summary` now, and ``to_pandas()`` will mean the per-query scores.
        """
        if per_query is None or per_query is False:
            warnings.warn("Comparison.to_pandas() returning the table of comparisons is "
                          "deprecated: call Comparison.summary() for it; from the next release "
                          "to_pandas() returns the per-query scores (as Evaluation.to_pandas()), "
                          "available now as to_pandas(per_query=True)",
                          DeprecationWarning, stacklevel=user_stacklevel())
            return self.summary()
        if per_query is not True:
            raise TypeError(f"per_query must be True or False, got {per_query!r}")
        if self.scores is None:
            raise ValueError("the per-query scores of this comparison stayed on the cluster "
                             "(rankereval.spark.compare): summary() has its statistics")
        pd = _pandas()
        n_q, n_m, n_r = self.scores.shape
        values = np.where(self.valid[:, :, None], self.scores, np.nan).reshape(n_q, n_m * n_r)
        columns = pd.MultiIndex.from_product([list(self.metrics), list(self.runs)],
                                             names=["metric", "run"])
        index = (pd.Index(self.query_ids, name="query") if self.query_ids is not None
                 else pd.RangeIndex(n_q, name="query"))
        return pd.DataFrame(values, index=index, columns=columns)

    # -- significance marks ------------------------------------------------------------------
    def _beaten(self):
        """``beaten[m][r]``: indices of the runs run r is significantly better than (metric m)."""
        n_pairs = len(self.pairs)
        beaten = [[[] for _ in self.runs] for _ in self.metrics]
        for m, higher in enumerate(self.higher_is_better):
            for j, (r, b) in enumerate(self.pairs):
                k = m * n_pairs + j
                if not self.results["significant"][k]:
                    continue
                d = self.results["diff"][k]
                if d == 0 or math.isnan(d):
                    continue
                winner, loser = (r, b) if (d > 0) == higher else (b, r)
                beaten[m][winner].append(loser)
        for m in range(len(self.metrics)):
            for r in range(len(self.runs)):
                beaten[m][r].sort()
        return beaten

    def _best(self):
        """``best[m]``: runs with the best mean for metric m (ties: all of them)."""
        out = []
        for m, higher in enumerate(self.higher_is_better):
            row = self.means[m]
            if np.isnan(row).all():
                out.append(set())
                continue
            target = np.nanmax(row) if higher else np.nanmin(row)
            out.append({r for r in range(len(self.runs)) if row[r] == target})
        return out

    def _cells(self, digits, bold, mark, phantom=None):
        """Cell strings (runs x metrics) built by the given formatters."""
        from rankereval import _render

        keys = self.keys
        beaten = self._beaten()
        best = self._best()
        cells = [[None] * len(self.metrics) for _ in self.runs]
        for m in range(len(self.metrics)):
            used = sorted({k for r in range(len(self.runs)) for k in beaten[m][r]})
            for r in range(len(self.runs)):
                text = _render.fmt(self.means[m, r], digits)
                if r in best[m]:
                    text = bold(text)
                marks = [keys[k] for k in beaten[m][r]]
                if marks:
                    text += mark(marks)
                if phantom is not None:
                    rest = [keys[k] for k in used if k not in beaten[m][r]]
                    if rest:
                        text += phantom(rest)
                cells[r][m] = text
        return cells

    def caption(self):
        """One sentence on what the marks mean: test, correction, alpha and B."""
        test = _TEST_NAMES[self.test]
        if self.alternative != "two-sided" and self.test != "tukey":
            test = f"one-sided ({self.alternative}) {test}"
        resamples = f", B = {self.n_resamples:,} resamples" if self.test != "t" else ""
        return (f"Mean scores over {self._queries_text()}; a superscript marks a run that is "
                f"significantly better than the run with that key ({test}, "
                f"{_CORRECTION_NAMES[self.correction]}, alpha = {self.alpha:g}{resamples}). "
                "The best value of each metric is in bold.")

    def _queries_text(self):
        counts = sorted(set(int(n) for n in self.n_queries))
        if len(counts) == 1:
            return f"{counts[0]} queries"
        return f"{counts[0]}-{counts[-1]} queries (depending on the metric)"

    def table(self, digits=4):
        """Wide DataFrame, runs x metrics: each run's mean with its significance marks.

        Each cell is the run's mean followed by the keys (Unicode superscripts, as in ranx's
        report) of the runs it is significantly better than; column ``key`` gives each run's
        key. A DataFrame has no bold: :meth:`to_markdown` and :meth:`to_latex` mark the best
        value. The caption is in ``.attrs["caption"]``.
        """
        pd = _pandas()
        cells = self._cells(digits, bold=lambda s: s,
                            mark=lambda ks: "".join(_SUPERSCRIPT.get(ch, ch) for ch in "".join(ks)))
        df = pd.DataFrame(cells, index=pd.Index(list(self.runs), name="run"),
                          columns=list(self.metrics))
        df.insert(0, "key", list(self.keys))
        df.attrs["caption"] = self.caption()
        return df

    def to_markdown(self, digits=4):
        """A Markdown table (runs x metrics; best in bold, ``<sup>`` marks) and its caption."""
        cells = self._cells(digits, bold=lambda s: f"**{s}**",
                            mark=lambda ks: f"<sup>{','.join(ks)}</sup>")
        head = "| key | run | " + " | ".join(_markdown_escape(m) for m in self.metrics) + " |"
        rule = "|---|---|" + "---:|" * len(self.metrics)
        body = [f"| {k} | {_markdown_escape(r)} | " + " | ".join(row) + " |"
                for k, r, row in zip(self.keys, self.runs, cells)]
        return "\n".join([head, rule, *body, "", self.caption()]) + "\n"

    def to_latex(self, digits=4, caption=None, label=None):
        """A booktabs LaTeX table: best value bold, significance as superscript keys.

        Missing keys are padded with ``\\hphantom`` so that the numbers of a column align.
        The default caption states the test, the correction, alpha and B.
        """
        cells = self._cells(
            digits, bold=lambda s: rf"\textbf{{{s}}}",
            mark=lambda ks: "$^{" + "".join(ks) + "}$",
            phantom=lambda ks: r"\hphantom{$^{" + "".join(ks) + "}$}")
        text = caption if caption is not None else self.caption()
        lines = [r"\begin{table}", r"\centering",
                 r"\caption{" + _latex_escape(text) + "}"]
        if label is not None:
            lines.append(r"\label{" + str(label) + "}")
        lines += [r"\begin{tabular}{ll" + "r" * len(self.metrics) + "}", r"\toprule",
                  " & Run & " + " & ".join(_latex_escape(m) for m in self.metrics) + r" \\",
                  r"\midrule"]
        for k, r, row in zip(self.keys, self.runs, cells):
            lines.append(f"{k} & {_latex_escape(r)} & " + " & ".join(row) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def to_json(self, indent=None):
        """JSON: ``{"comparisons": [rows of the long format], "test", "correction", "alpha",
        "n_resamples", ...}``; NaN and infinite values are ``null``."""
        doc = {
            "comparisons": [{k: _json_value(v) for k, v in row.items()} for row in self.rows()],
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "n_resamples": self.n_resamples,
            "ci_resamples": self.ci_resamples,
            "alternative": self.alternative,
            "nan_handling": self.nan_handling,
            "baseline": self.baseline,
            "runs": list(self.runs),
            "metrics": list(self.metrics),
            "n_queries": {m: int(n) for m, n in zip(self.metrics, self.n_queries)},
            "alignment": json.loads(json.dumps(self.report, default=str)),
        }
        return json.dumps(doc, indent=indent, allow_nan=False)

    def __repr__(self):
        head = (f"Comparison(test={self.test!r}, correction={self.correction!r}, "
                f"alpha={self.alpha:g}, alternative={self.alternative!r}, "
                f"baseline={self.baseline!r}, {len(self.runs)} runs, {len(self.metrics)} metrics, "
                f"{self._queries_text()})")
        cells = self._cells(4, bold=lambda s: s, mark=lambda ks: "^" + ",".join(ks))
        widths = [max(len(m), *(len(c[i]) for c in cells)) for i, m in enumerate(self.metrics)]
        name_w = max(3, *(len(r) for r in self.runs))
        lines = [head, "    " + "run".ljust(name_w) + "".join(f"  {m:>{w}}" for m, w in
                                                              zip(self.metrics, widths))]
        for k, r, row in zip(self.keys, self.runs, cells):
            lines.append(f"{k:<3} " + r.ljust(name_w) + "".join(f"  {c:>{w}}" for c, w in
                                                                zip(row, widths)))
        n_sig = int(np.count_nonzero(self.results["significant"]))
        lines.append(f"^x: significantly better than run x; {n_sig} of "
                     f"{len(self.results['metric'])} comparisons significant")
        return "\n".join(lines)

    def _repr_html_(self):
        """Two plain HTML tables (Jupyter shows them; no JavaScript): the runs' means with
        the best in bold and superscript keys of the runs each is significantly better than
        (as :meth:`to_markdown`), then every comparison with its difference, the confidence
        interval of the difference and the p-values."""
        import html

        from rankereval import _render

        cells = self._cells(4, bold=lambda s: f"<strong>{s}</strong>",
                            mark=lambda ks: f"<sup>{html.escape(','.join(ks))}</sup>")
        means = _render.html_table(
            ["key", "run", *self.metrics],
            [[html.escape(k), html.escape(r), *row] for k, r, row in zip(self.keys, self.runs, cells)],
            caption=self.caption(), left=2)
        level = f"{(1 - self.alpha) * 100:g}% CI of diff"
        rows = []
        for row in self.rows():
            rows.append([html.escape(str(row["metric"])), html.escape(str(row["run"])),
                         html.escape(str(row["baseline"])), _render.fmt(row["diff"]),
                         f"[{_render.fmt(row['ci_low'])}, {_render.fmt(row['ci_high'])}]",
                         _render.fmt(row["p_value"]), _render.fmt(row["p_corrected"]),
                         "yes" if row["significant"] else "no"])
        pairs = _render.html_table(["metric", "run", "baseline", "diff", level, "p", "p corrected", "significant"],
                                   rows, caption=f"{len(rows)} comparisons ({self.correction} correction)", left=3)
        return f"<div>\n{means}\n{pairs}\n</div>"

    # -- leaderboard -----------------------------------------------------------------------
    def leaderboard(self, metric=None, *, n_resamples=None, random_state=None):
        """The runs ordered by one metric, with confidence intervals of their ranks.

        Parameters
        ----------
        metric : str, optional
            The metric (default: the first).
        n_resamples : int, optional
            Bootstrap resamples (default: ``min(n_resamples of the comparison, 1000)``).
        random_state : None, int or numpy.random.Generator, default=None
            Seed of the resampling.

        Returns
        -------
        Leaderboard
            One row per run (system), best first: ``mean``, the interval of the mean,
            ``rank``, ``rank_low``/``rank_high`` (the confidence interval of the rank at the
            comparison's confidence ``1 - alpha``, from the paired bootstrap of the queries,
            simultaneous over the run's differences to the others), ``p_best`` (share of
            resamples in which it has the best mean), ``may_be_best`` (no run is surely
            better), and with several runs per system ``n_seeds`` and ``seed_sd``. Renders as
            text, HTML, Markdown, LaTeX, pandas (``summary``, ``to_pandas``) and a plot (``plot``). The
            method is in the guide "Leaderboards and agreement".
        """
        import rankereval.bootstrap as bootstrap
        from rankereval._leaderboard import leaderboard

        if self.scores is None:
            raise ValueError("this Comparison holds no per-query scores: a leaderboard needs them")
        m = 0 if metric is None else self._metric_index(metric)
        n_resamples = _check_resamples(min(self.n_resamples, CI_RESAMPLES) if n_resamples is None
                                       else n_resamples)
        return leaderboard(self, m, n_resamples, bootstrap._rng(random_state))

    # -- plots -----------------------------------------------------------------------------
    def plot(self, kind="forest", *, metric=None, run=None, baseline=None, ax=None):
        """Draw the comparison with matplotlib; returns the Figure (never calls ``show``).

        Parameters
        ----------
        kind : {'forest', 'per-query'}, default='forest'
            ``'forest'``: the mean difference of each comparison with its confidence
            interval, one panel per metric (filled markers: significant). ``'per-query'``:
            the per-query differences of one metric and one pair, sorted.
        metric : str, optional
            The metric to draw (forest: all by default; per-query: the first by default).
        run, baseline : str, optional
            The pair of ``'per-query'`` (default: the first comparison).
        ax : matplotlib Axes, optional
            Draw into it (forest: only with one metric).

        Returns
        -------
        matplotlib.figure.Figure
        """
        if kind == "forest":
            return self._plot_forest(metric, ax)
        if kind == "per-query":
            return self._plot_per_query(metric, run, baseline, ax)
        raise ValueError(f"kind must be 'forest' or 'per-query', got {kind!r}")

    def _metric_index(self, metric):
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {list(self.metrics)}, got {metric!r}")
        return self.metrics.index(metric)

    def _plot_forest(self, metric, ax):
        plt = _pyplot()
        chosen = list(range(len(self.metrics))) if metric is None else [self._metric_index(metric)]
        if ax is None:
            # constrained layout: the figure title, panel titles and axis labels neither overlap
            # nor leave the figure when saved with a plain savefig (no bbox_inches="tight")
            fig, axes = plt.subplots(1, len(chosen), squeeze=False, sharey=True, layout="constrained",
                                     figsize=(3.2 * len(chosen) + 1.5, 0.45 * len(self.pairs) + 1.9))
            axes = list(axes[0])
        else:
            if len(chosen) != 1:
                raise ValueError("ax= draws one metric: pass metric=...")
            fig, axes = ax.figure, [ax]
        n_pairs = len(self.pairs)
        y = np.arange(n_pairs)[::-1].astype(float)
        labels = [f"{self.runs[r]} − {self.runs[b]}" for r, b in self.pairs]
        for a, m in zip(axes, chosen):
            sl = slice(m * n_pairs, (m + 1) * n_pairs)
            diff = np.asarray(self.results["diff"][sl], dtype=float)
            low = np.asarray(self.results["ci_low"][sl], dtype=float)
            high = np.asarray(self.results["ci_high"][sl], dtype=float)
            sig = np.asarray(self.results["significant"][sl], dtype=bool)
            finite = np.concatenate([v[np.isfinite(v)] for v in (diff, low, high)] + [[0.0]])
            span = max(float(finite.max() - finite.min()), 1e-12)
            # one-sided intervals: the open end is drawn to the edge of the panel
            low = np.where(np.isneginf(low), finite.min() - 0.1 * span, low)
            high = np.where(np.isposinf(high), finite.max() + 0.1 * span, high)
            a.hlines(y, low, high, color="C0", linewidth=2)
            a.scatter(diff, y, s=36, zorder=3, edgecolors="C0",
                      facecolors=np.where(sig, "C0", "white").tolist())
            a.axvline(0.0, color="0.5", linestyle="--", linewidth=1)
            a.set_title(self.metrics[m])
            a.set_xlabel("difference of means")
        axes[0].set_yticks(y)
        axes[0].set_yticklabels(labels)
        test = _TEST_NAMES[self.test]
        fig.suptitle(f"{test}, {int(round(100 * (1 - self.alpha)))}% intervals; "
                     "filled: significant", fontsize="small")
        return fig

    def _plot_per_query(self, metric, run, baseline, ax):
        plt = _pyplot()
        m = 0 if metric is None else self._metric_index(metric)
        j = self._pair_index(run, baseline)
        r, b = self.pairs[j]
        rows = self.valid[:, m]
        d = np.sort(self.scores[rows, m, r] - self.scores[rows, m, b])[::-1]
        if ax is None:
            fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
        else:
            fig = ax.figure
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # queries are counted: 0, 1, 2, ...
        x = np.arange(d.size)
        ax.plot(x, d, drawstyle="steps-mid", color="0.2", linewidth=1)
        ax.fill_between(x, 0.0, d, where=d > 0, step="mid", color="C2", alpha=0.5)
        ax.fill_between(x, 0.0, d, where=d < 0, step="mid", color="C3", alpha=0.5)
        ax.axhline(0.0, color="0.5", linewidth=1)
        k = m * len(self.pairs) + j
        ax.axhline(float(self.results["diff"][k]), color="C0", linestyle="--", linewidth=1,
                   label=f"mean {float(self.results['diff'][k]):+.4f}")
        ax.set_xlabel("queries, sorted by difference")
        ax.set_ylabel(f"{self.metrics[m]}: {self.runs[r]} − {self.runs[b]}")
        ax.set_title(f"wins {int(self.results['wins'][k])}, ties {int(self.results['ties'][k])}, "
                     f"losses {int(self.results['losses'][k])}")
        ax.legend(loc="upper right", fontsize="small")
        return fig

    def _pair_index(self, run, baseline):
        if run is None and baseline is None:
            return 0
        for j, (r, b) in enumerate(self.pairs):
            if ((run is None or self.runs[r] == run) and (baseline is None or self.runs[b] == baseline)):
                return j
        pairs = [(self.runs[r], self.runs[b]) for r, b in self.pairs]
        raise ValueError(f"no comparison of run={run!r} with baseline={baseline!r}; the "
                         f"comparisons (run, baseline) are {pairs}")


def _optional(module, extra, purpose):
    """Import an optional dependency, or an ImportError that names the extra to install."""
    from rankereval._optional import require

    return require(module, extra, purpose)


def _pandas():
    return _optional("pandas", "io", "Comparison tables")


def _pyplot():
    return _optional("matplotlib.pyplot", "plot", "Comparison.plot")


for _obj in (compare, Comparison):
    _obj.__module__ = "rankereval"  # documented and pickled under the public name (rankereval/__init__.py)
del _obj
