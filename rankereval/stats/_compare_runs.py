""":func:`compare`: score every run with every metric, test every pair of runs, correct the
p-values and build the :class:`~rankereval.stats.Comparison` (the statistics are described in
:mod:`rankereval.stats`).
"""
from dataclasses import replace

import numpy as np

from rankereval._utils._choices import TESTS
from rankereval.stats._alignment import _collect, _resolve_metrics
from rankereval.stats._checks import _check_arguments
from rankereval.stats._comparison import Comparison
from rankereval.stats._corrections import adjust_pvalues
from rankereval.stats._outcomes import _outcomes, _prepare, _run_means, _score_sums
from rankereval.stats._paired_tests import (
    _bootstrap_means, _bootstrap_p, CI_RESAMPLES, _linearised, _moments, _percentile_ci, _permutation_test,
    _t_from_moments, _tukey_test)


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
    import rankereval.stats._resampling as bootstrap
    from rankereval.stats import _engine
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

    from rankereval.stats import _seeds
    from rankereval.metrics._ties import check_ties

    flat, seed_groups = _seeds.expand({str(k): v for k, v in runs.items()})
    scores, query_ids, report = _collect(y_true, flat, metric_objs, relevance_level, queries,
                                         check_ties(ties))
    seed_scores = None
    if seed_groups is not None:   # several runs per system: each system's mean over its runs
        seed_scores = scores
        scores = _seeds.mean_over_runs(scores, seed_groups)
    weights = report.pop("_weights", None)   # (n, n_metrics): the labels' query weights, or None
    scores, valid, undefined, propagated, geometric, pairs, diffs = _prepare(
        scores, nan_handling, metric_objs, run_names, baseline)
    report["n_undefined"] = {name: int(undefined[:, m].sum()) for m, name in enumerate(metric_names)}
    if nan_default:
        _engine.warn_compare_default(report["n_undefined"], "compare")
    n_q, n_metrics, n_runs = scores.shape
    n_pairs = len(pairs)

    # a weighted mean (GAUC): the tests are on the difference of the weighted means, from the
    # linearised values (t-test), the scaled differences (sign flips), the ratio (bootstrap)
    wcols = None if weights is None else np.repeat(
        np.where(_engine.weighted_columns(list(zip(metric_names, metric_objs)))[None, :], weights, np.nan),
        n_pairs, axis=1)
    pseudo, flips, ratio = _linearised(diffs, wcols)
    n_used, mean_diff, sd = _moments(pseudo)
    if ratio is not None:
        mean_diff = np.where(np.isnan(wcols).all(axis=0), mean_diff, ratio)
    seed = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
    ci_resamples = 0
    if test == "t":
        p, ci_low, ci_high = _t_from_moments(n_used, mean_diff, sd, alternative, alpha)
    else:
        ci_resamples = n_resamples if test == "bootstrap" else min(n_resamples, CI_RESAMPLES)
        boot, t_null = _bootstrap_means(diffs, ci_resamples, rng, studentized=test == "bootstrap",
                                        weights=wcols)
        ci_low, ci_high = _percentile_ci(boot, alternative, alpha)
        if test == "bootstrap":
            p = _bootstrap_p(t_null, n_used, mean_diff, sd, alternative)
        elif test == "permutation":
            p = _permutation_test(flips, alternative, n_resamples, seed)
        else:
            finite = np.isfinite(scores).all(axis=2)
            p = _tukey_test(_scaled(np.where(np.isfinite(scores), scores, 0.0), weights, metric_names,
                                    metric_objs, valid & finite),
                            valid & finite, pairs, n_resamples, seed).reshape(-1)
        del boot, t_null

    counts = valid.sum(axis=0)
    means = _run_means(_score_sums(scores, valid).to_float(), counts)       # (M, R)
    if weights is not None:
        means = _weighted_run_means(means, scores, valid, weights, metric_names, metric_objs)
    result = _finish(metric_names, metric_objs, run_names, baseline, pairs, test, correction, alpha,
                     n_resamples, alternative, nan_handling, ci_resamples, propagated, geometric,
                     means, counts, mean_diff, sd, ci_low, ci_high, p, _outcomes(diffs, metric_objs, n_pairs),
                     scores, valid, query_ids, report)
    if seed_scores is not None:
        # the runs' own scores as the tests' scores are prepared (NaN policy, logs)
        from rankereval.stats._engine import fill_undefined, floored_log

        seed_scores = np.array(seed_scores, dtype=np.float64)  # infinities kept, as in _prepare
        seed_scores = fill_undefined(seed_scores, nan_handling)
        if geometric.any():
            seed_scores[:, geometric, :] = floored_log(seed_scores[:, geometric, :])
        seed_scores.setflags(write=False)
    return replace(result, seed_scores=seed_scores, seed_groups=seed_groups,
                   geometric=tuple(bool(g) for g in geometric),
                   weighted=tuple(bool(m.info.aggregate == "weighted") for m in metric_objs),
                   query_weights=weights)


def _scaled(scores, weights, metric_names, metric_objs, valid):
    """``scores`` (n, M, R) with each weighted metric's scores times ``w / mean(w)`` over its
    valid queries: their plain means are the weighted means, and a permutation of the runs
    within a query (Tukey's HSD) scales alike, so the randomized test is the weighted one."""
    from rankereval.stats._engine import weighted_columns

    if weights is None:
        return scores
    out = np.array(scores, dtype=np.float64)
    for m in np.flatnonzero(weighted_columns(list(zip(metric_names, metric_objs)))):
        w = np.where(valid[:, m], weights[:, m], 0.0)
        total = w.sum()
        scale = w / (total / max(int(valid[:, m].sum()), 1)) if total > 0 else np.zeros_like(w)
        out[:, m, :] = np.where(w[:, None] == 0, 0.0, scale[:, None] * out[:, m, :])
    return out


def _weighted_run_means(means, scores, valid, weights, metric_names, metric_objs):
    """``means`` (M, R) with the weighted metrics' means ``sum(w x) / sum(w)`` over their valid
    queries (exact sums, as :func:`rankereval.evaluate`)."""
    from rankereval.stats._engine import weighted_columns
    from rankereval.stats._exact import ratio_mean

    means = np.array(means, dtype=np.float64)
    for m in np.flatnonzero(weighted_columns(list(zip(metric_names, metric_objs)))):
        rows = valid[:, m]
        for r in range(scores.shape[2]):
            means[m, r] = ratio_mean(scores[rows, m, r], weights[rows, m]) if rows.any() else np.nan
    return means


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
    from rankereval.stats._engine import exp_mean

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


compare.__module__ = "rankereval"  # documented under the public name (rankereval/__init__.py)
