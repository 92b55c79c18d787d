"""The inputs of :func:`rankereval.compare`: metrics, runs and their per-query scores, aligned by
position (labels and Rankings) or by query id (TREC files, DataFrames, ranx dicts).
"""
import os
import warnings

import numpy as np


def _resolve_metrics(metrics):
    """``(names, metric objects)``, exactly as :func:`rankereval.evaluate` names its columns."""
    from rankereval.evaluation._columns import metric_columns as _metric_columns

    columns = _metric_columns(metrics)
    return [c for c, _ in columns], [m for _, m in columns]


def _per_query_scores(y_true, run, metrics, relevance_level, ties=None, weights=None):
    """(n_queries, n_metrics) per-query scores of one run, by :func:`rankereval.evaluate`.

    ``y_true`` is labels and ``run`` Rankings, or ``y_true`` is a ``TrecData`` and ``run``
    None; graded labels are thresholded at ``relevance_level`` for the binary metrics.
    ``weights``: a list that receives the query weights of the weighted-mean metrics
    ((n_queries, n_metrics), 1 elsewhere; None when there is none), read from the labels.
    """
    from rankereval.evaluation._evaluate import evaluate

    # 'drop': the means are not used, and an all-NaN column must not warn here
    columns = {str(i): m for i, m in enumerate(metrics)}
    with warnings.catch_warnings():
        # the range of the means over tied orders is the evaluation's business, not the test's
        from rankereval.exceptions import TiedScoresWarning

        warnings.simplefilter("ignore", TiedScoresWarning)
        ev = evaluate(y_true, run, columns, relevance_level=relevance_level, nan_handling="drop",
                      ties=ties)
    if weights is not None:
        weights.append(ev._weights)
    return ev.scores


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
        weights = []
        per_run = [_per_query_scores(y_true, run, metrics, relevance_level, ties, weights) for run in values]
        n = per_run[0].shape[0]
        report = {"aligned_by": "position", "queries": "all", "n_queries": n}
        # the weights are the labels' (every run has the same): the first run's
        report["_weights"] = weights[0]
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
    kept_weights = None
    for j, (name, d) in enumerate(zip(names, datas)):
        rows = d.query_ids.get_indexer(keep)
        if (rows < 0).any():
            absent = [q for q, r in zip(keep, rows) if r < 0]
            raise ValueError(f"runs[{name!r}] has no row for {_some(absent)}: read it with "
                             "read_trec(..., missing='empty') or pass the run file path")
        weights = []
        scores[:, :, j] = _per_query_scores(d, None, metrics, relevance_level, ties, weights)[rows]
        if weights[0] is not None and j == 0:  # the labels' weights: one qrels for every run
            kept_weights = weights[0][rows]
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
        "_weights": kept_weights,
    }
    return scores, np.asarray(keep, dtype=object), report
