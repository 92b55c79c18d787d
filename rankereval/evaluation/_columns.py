"""The metric columns of an evaluation and their per-query scores (shared internals).

:func:`metric_columns` reads the ``metrics`` argument of :func:`rankereval.evaluate`,
:func:`rankereval.compare`, the Accumulator, :mod:`rankereval.dask` and :mod:`rankereval.spark`
into ``[(column name, Metric)]``; :func:`score_columns` scores every column with one kernel
call per kind of labels. The means and intervals of the scores are :mod:`rankereval.stats._engine`'s.
"""
import numpy as np

from rankereval.metrics._adjusted import Adjusted, threshold_labels
from rankereval.metrics._base import Metric, labels_for, score_many
from rankereval.metrics._names import from_name
from rankereval.metrics._system import SystemMetric

__all__ = ["metric_columns", "check_relevance_level", "score_columns", "column_weights", "columns_for_rows",
           "refuse_row_inputs", "columns_for_items"]


def refuse_catalogue_metrics(columns, where):
    """ValueError for a metric that reads the size of the catalogue (the kernel trait
    CATALOGUE: CoverageError, LabelRankingLoss) in an entry point over partitions (Dask,
    Spark), whose partitions number their items apart and so do not share that size; and
    (:func:`refuse_row_inputs`) for one whose inputs hold a row per ranking."""
    from rankereval.metrics._metric_ids import METRIC_IDS, ids_with

    catalogue = ids_with("catalogue")
    for name, m in columns:
        if METRIC_IDS.get(m.info.kernel) in catalogue:
            raise ValueError(f"metric {name!r} reads the number of items of the catalogue, which the "
                             f"partitions of {where} do not share (each numbers its items apart); "
                             "compute it with rankereval.evaluate on the whole data")
    refuse_row_inputs(columns, where)


def _row_input_rows(metric, name):
    """How many rows the per-ranking input ``name`` of ``metric`` holds."""
    value = getattr(getattr(metric, "metric", metric), name)  # an Adjusted metric: the one it wraps
    return value.n_rows if hasattr(value, "n_rows") else value.shape[0]


def refuse_row_inputs(columns, where):
    """ValueError for a metric with an input of one row per ranking (``MetricInfo.row_inputs``:
    Serendipity's history) in an entry point over partitions (Dask, Spark): they split the
    rankings by query id, so a partition's rankings cannot be matched to rows aligned by
    position, and they number the items of each partition apart, so its item ids are not
    those the history and the similarity are indexed by."""
    for name, m in columns:
        for p in m.info.row_inputs:
            raise ValueError(f"metric {name!r}: its {p} has one row per ranking, aligned by position, and "
                             f"its inputs are indexed by item id; the partitions of {where} split the "
                             "rankings by query id and number their items apart, so they cannot follow "
                             "either; compute it with rankereval.evaluate or the Accumulator")


def columns_for_items(columns, doc_ids, rankings):
    """The columns with the item-indexed inputs of their metrics (the popularity, long-tail
    items and item features of the beyond-accuracy metrics, indexed by the user's integer item
    ids) in the numbering of data read from files or frames, whose item ``j`` is the user's
    item ``doc_ids[j]`` (``TrecData.doc_ids``). Unchanged without such a metric or with
    ``doc_ids`` None (data that hold the user's ids). A metric whose inputs cannot follow the
    renumbering, or data whose item ids are not integers, is a ValueError naming the reason."""
    def follows(m):  # the metrics of array inputs (rankereval.metrics._beyond) say how
        return bool(m.info.inputs) and hasattr(m, "_on_items")

    if doc_ids is None or not any(follows(m) for _, m in columns):
        return columns
    r = rankings.indices
    ranked = np.unique(r[np.arange(r.shape[1]) < rankings.lengths[:, None]]).astype(np.int64)
    return [(name, m._on_items(doc_ids, ranked) if follows(m) else m) for name, m in columns]


def columns_for_rows(columns, rows):
    """The columns with only the rows ``rows`` of their per-ranking inputs
    (``MetricInfo.row_inputs``): the metrics of one batch of the Accumulator."""
    out = []
    for name, m in columns:
        if m.info.row_inputs and any(_row_input_rows(m, p) > 1 for p in m.info.row_inputs):
            if m is not getattr(m, "metric", m):
                raise TypeError(f"metric {name!r}: an Adjusted metric with an input of one row per ranking "
                                "cannot be accumulated batch by batch; use the metric itself")
            m = m._for_rows(rows)
        out.append((name, m))
    return out


def metric_columns(metrics):
    """``[(column name, Metric)]`` from a list of metrics/names or a dict {column: metric/name}.

    In a list, a name is its column's name as the user spelt it (``"map@50"`` stays
    ``"map@50"``, not ``"ap@50"``); a :class:`Metric` object's column is its ``.name``."""
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    if isinstance(metrics, dict):
        items = list(metrics.items())
        for col, _ in items:
            if not isinstance(col, str):
                raise TypeError(f"metrics: column names must be str, got {col!r}")
    elif isinstance(metrics, (list, tuple)):
        items = [(None, m) for m in metrics]
    else:
        raise TypeError("metrics must be a list of Metric objects and/or names, or a dict "
                        f"{{column name: metric or name}}, got {type(metrics).__name__}")
    if not items:
        raise ValueError("metrics is empty: give at least one metric, e.g. ['ndcg@10', 'map']")
    columns = []
    for col, m in items:
        if isinstance(m, str):
            col = m if col is None else col  # a list names a column by the string given
            m = from_name(m)
        if isinstance(m, SystemMetric):
            raise TypeError(f"metrics: {m.name} is a system-level metric (one value for all rankings, "
                            f"no score per ranking); compute it with {type(m).__name__}.compute(y_pred)")
        if not isinstance(m, Metric):
            raise TypeError(f"metrics: expected a Metric or a metric name, got {m!r}")
        columns.append((m.name if col is None else col, m))
    seen = {}
    for col, m in columns:
        if col in seen:
            raise ValueError(f"metrics: two metrics have the column name {col!r} ({seen[col]!r} and "
                             f"{m!r}); give them distinct names with a dict {{name: metric}}")
        seen[col] = m
    return columns


def check_relevance_level(relevance_level):
    if (isinstance(relevance_level, (bool, np.bool_)) or not isinstance(relevance_level, (int, float, np.number))
            or not np.isfinite(relevance_level) or relevance_level <= 0):
        raise ValueError(f"relevance_level must be a finite number > 0 (labels of 0 and below are "
                         f"never stored, so they cannot be relevant), got {relevance_level!r}")


def score_columns(columns, binary, numeric, y_pred, relevance_level, ties=None):
    """Scores of every ``(name, metric)`` column, shape ``(n_rankings, n_columns)``.

    ``binary`` / ``numeric``: the labels as given (one of them may be None); binary metrics
    over graded labels see them thresholded at ``relevance_level``. One validation and one
    kernel call per kind of labels: every ranking is looked up in its label row once for all
    the metrics that read those labels. :mod:`rankereval.dask` calls it per partition.
    ``ties``: a mode of ``Metric.score(..., ties=...)`` for rankings with recorded ties (then
    one tie kernel call per metric).
    """
    if numeric is not None and any(m.info.labels == "binary" for _, m in columns):
        check_relevance_level(relevance_level)
        binary = threshold_labels(numeric, relevance_level)
    groups = {}
    rankings_only = []
    adjusted = []  # a relevance level or judged-only rankings of their own: a call each
    for j, (_, m) in enumerate(columns):
        if m.info.labels == "none":  # beyond-accuracy metrics read the rankings only
            rankings_only.append(j)
            continue
        if isinstance(m, Adjusted):
            adjusted.append(j)
            continue
        labels = labels_for(m, binary, numeric)
        groups.setdefault(id(labels), (labels, []))[1].append(j)
    scores = np.empty((y_pred.n_rows, len(columns)), dtype=np.float64)
    tied = ties is not None and y_pred.has_ties
    for labels, cols in groups.values():
        first = columns[cols[0]][1]
        first._check_inputs(labels, y_pred)
        for j in cols:
            if type(columns[j][1]).score is not Metric.score:
                raise TypeError(f"{type(columns[j][1]).__name__} overrides Metric.score; evaluate "
                                "scores metrics through their registry entries and kernel reductions")
        if tied:
            from rankereval.metrics._ties import tied_scores

            for j in cols:
                scores[:, j] = tied_scores(columns[j][1], labels, y_pred, ties)
        else:
            scores[:, cols] = score_many([columns[j][1] for j in cols], labels, y_pred)
    for j in rankings_only:
        scores[:, j] = columns[j][1].score(None, y_pred, ties=ties if tied else None)
    for j in adjusted:
        scores[:, j] = columns[j][1]._score_with(numeric if numeric is not None else binary, y_pred,
                                                 relevance_level, ties if tied else None)
    return scores


def column_weights(columns, binary, numeric, y_pred, relevance_level):
    """The query weights of the columns, shape ``(n_rankings, n_columns)`` (1 in the columns of
    unweighted means), or None when no column is a weighted mean
    (``MetricInfo.aggregate == 'weighted'``). Each weighted column's weights come from the
    labels its metric reads, as :func:`score_columns` hands them (binary metrics over graded
    labels: thresholded at ``relevance_level``): a property of the query, the same for every
    run scored against those labels."""
    weighted = [j for j, (_, m) in enumerate(columns) if m.info.aggregate == "weighted"]
    if not weighted:
        return None
    out = np.ones((y_pred.n_rows, len(columns)), dtype=np.float64)
    thresholded = None
    for j in weighted:
        m = columns[j][1]
        if isinstance(m, Adjusted):
            out[:, j] = m._query_weights(numeric if numeric is not None else binary, y_pred, relevance_level)
            continue
        labels = labels_for(m, binary, numeric)
        if m.info.labels == "binary" and numeric is not None:
            if thresholded is None:
                check_relevance_level(relevance_level)
                thresholded = threshold_labels(numeric, relevance_level)
            labels = thresholded
        out[:, j] = m._query_weights(labels, y_pred)
    return out
