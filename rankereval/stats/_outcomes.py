"""The NaN policy of a comparison (which queries each column compares), the sums that give the
run means, and the wins, ties and losses of each pair.
"""
import numpy as np


def _prepare(scores, nan_handling, metric_objs, run_names, baseline):
    """The per-query scores (n, n_metrics, n_runs) as the tests see them, and the differences.

    Returns ``(scores, valid, undefined, propagated, geometric, pairs, diffs)``: the scores
    with NaN handling applied and geometric metrics as floored logs (infinities kept);
    whether each (query, metric) enters the means (the NaN policy of
    :func:`rankereval.stats._engine.apply_nan_policy`; a query infinite in some run enters the
    means but not the tests); where any run is undefined; the metrics made
    NaN by ``nan_handling='propagate'``; the geometric ones; the ``(run, baseline)`` index
    pairs; the differences (n, n_metrics * n_pairs), column ``m * n_pairs + j`` pair ``j``
    of metric ``m``, NaN where not compared. :mod:`rankereval.spark` runs it per partition.
    """
    from rankereval.stats._engine import fill_undefined, floored_log

    # only NaN is undefined (rankereval.stats._engine): an infinite score (MeanRanks, FirstRelevantRank
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
    """Exact sums (:class:`rankereval.stats._exact.ExactSum`, shape (n_metrics, n_runs)) of the
    scores that enter each run's mean: the engine's sums, so the means are evaluate's bits."""
    from rankereval.stats._exact import exact_column_sums

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
