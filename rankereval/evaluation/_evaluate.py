"""Evaluate an experiment in one call: many metrics, one table, honest NaN warnings."""
import json
import warnings

import numpy as np

from rankereval.stats import _engine
from rankereval._utils import _render
from rankereval._utils._optional import require
from rankereval.evaluation._columns import (check_relevance_level, column_weights, columns_for_items, metric_columns,
                                            score_columns)
from rankereval._stack import user_stacklevel
from rankereval.data import BinaryLabels, Labels, NumericLabels, Rankings
from rankereval.exceptions import UndefinedMetricWarning

__all__ = ["evaluate", "Evaluation"]


# the columns' scoring is shared by evaluate, compare, the Accumulator, Dask and Spark
_metric_columns, _check_relevance_level, _score_columns = metric_columns, check_relevance_level, score_columns


def evaluate(y_true, y_pred=None, metrics=None, *, relevance_level=1, nan_handling="propagate",
             conf_interval=False, n_resamples=1000, confidence=0.95, random_state=None,
             method="percentile", resampling="multinomial", query_ids=None, n_bootstrap_samples=None,
             ties=None):
    """Evaluate rankings with many metrics at once: per-ranking scores, means and intervals.

    Parameters
    ----------
    y_true : BinaryLabels, NumericLabels or rankereval.io.TrecData
        Ground truth labels (one row, or one row per ranking); or qrels and run read together
        by :func:`rankereval.io.read_trec` / :func:`~rankereval.io.from_dataframes`, whose
        query ids then label the rows (``y_pred`` is then left out or None).
    y_pred : Rankings or None
        Rankings to evaluate (None with a ``TrecData``).
    metrics : list or dict
        :class:`~rankereval.Metric` objects and/or names (``"ndcg@10"``, ``"p@5"``,
        ``"map"``, ``"mrr@10"``, ir_measures' ``"nDCG@10"``, ``"P(rel=2)@5"``; see
        :func:`rankereval.metrics.from_name`), or a dict {column name: metric or name}. A
        name in a list names its column as written (``"map@50"`` stays ``"map@50"``), a
        metric object by its :attr:`Metric.name <rankereval.Metric.name>`.
    relevance_level : float, default=1
        With graded labels (``NumericLabels`` or a ``TrecData``), binary metrics count an
        item as relevant when its grade is at least this (as ``trec_eval -l``); graded
        metrics (DCG, NDCG) use the grades. Ignored for ``BinaryLabels``.
    nan_handling : {'propagate', 'drop', 'zerofill', 'onefill'}, default='propagate'
        What the means do with rankings where a metric is undefined (NaN), as in
        :meth:`Metric.mean <rankereval.Metric.mean>`. The per-ranking scores keep the NaN.
    conf_interval : bool, default=False
        Also compute a bootstrap confidence interval of every mean.
    n_resamples, confidence, random_state, method
        As in :meth:`Metric.mean <rankereval.Metric.mean>` (``n_resamples`` is the
        reference's ``n_bootstrap_samples``, the deprecated spelling here). Every metric is resampled
        with the same random streams, so an int ``random_state`` gives each metric the
        interval its own ``mean`` call would give.
    resampling : {'multinomial', 'poisson'}, default='multinomial'
        The classical bootstrap, or the Poisson bootstrap keyed by query: the query ids of a ``TrecData``, else the row numbers. Its intervals
        are those :func:`rankereval.dask.evaluate` computes on a cluster for the same
        queries and ``random_state`` (see :doc:`/guide/confidence_intervals`).
    query_ids : array-like of int or str, shape (n_rankings,), optional
        The query id of each row (with a ``TrecData``, its own): kept in
        :attr:`Evaluation.query_ids` and used as the Poisson bootstrap's query keys.
    ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
        For rankings that keep their tied scores (``ties="keep"`` when they were built or
        read): the scores of each metric over the orders of each tied group, as in
        :meth:`Metric.score <rankereval.Metric.score>`; None scores the recorded order
        (equal scores by item id). For such rankings the result also carries a
        :attr:`Evaluation.tie_report` (see :doc:`/guide/ties`).

    Returns
    -------
    Evaluation

    Warns
    -----
    UndefinedMetricWarning
        Once per call, with ``nan_handling='propagate'``, listing the metrics whose mean is
        NaN because some rankings are undefined.
    rankereval.exceptions.TiedScoresWarning
        With ``ties=None`` on rankings with recorded ties, when the ties inside a metric's
        cutoff could move its mean by more than 0.001 (listing those metrics and ranges).

    Raises
    ------
    TypeError, ValueError
        For inputs of the wrong type or shape, an unknown metric name, or two metrics with
        the same column name.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, evaluate
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3], [4]])
    >>> y_pred = Rankings.from_ranked_indices([[3, 0, 1], [1, 2, 0], [4, 0]])
    >>> ev = evaluate(y_true, y_pred, ["ndcg@3", "p@2", "map", "mrr@10"])
    >>> ev  # doctest: +NORMALIZE_WHITESPACE
    Evaluation of 3 rankings
    metric    mean  rankings
    ------  ------  --------
    ndcg@3  0.7174         3
    p@2     0.6667         3
    map     0.6389         3
    mrr@10  0.8333         3
    >>> ev.mean("p@2")
    0.6666666666666666
    >>> ev.scores.shape
    (3, 4)
    """
    from rankereval.io import TrecData

    if isinstance(y_true, TrecData):
        if metrics is None and y_pred is not None and not hasattr(y_pred, "indices"):
            y_pred, metrics = None, y_pred  # evaluate(data, metrics)
        if y_pred is not None:
            raise TypeError("y_pred must be None when y_true is a TrecData (it holds the run)")
        if query_ids is not None:
            raise TypeError("query_ids must be None when y_true is a TrecData (it has its own)")
        numeric, y_pred = y_true.numeric_labels, y_true.rankings
        query_ids = np.asarray(y_true.query_ids)
        doc_ids = y_true.doc_ids  # item j is document doc_ids[j]: item-indexed inputs follow it
    elif isinstance(y_true, Labels):
        numeric = y_true if isinstance(y_true, NumericLabels) else None
        doc_ids = None
        if not isinstance(y_pred, Rankings):
            raise TypeError(f"y_pred must be Rankings, got {type(y_pred).__name__}; build it with "
                            "Rankings.from_scores(...) or Rankings.from_ranked_indices(...)")
    else:
        raise TypeError(f"y_true must be BinaryLabels, NumericLabels or a rankereval.io.TrecData, "
                        f"got {type(y_true).__name__}")
    if metrics is None:
        raise TypeError("evaluate() needs metrics, e.g. evaluate(y_true, y_pred, ['ndcg@10', 'map'])")
    columns = _metric_columns(metrics)
    n_resamples, n_name = _engine.renamed(n_resamples, n_bootstrap_samples, "n_resamples",
                                          "n_bootstrap_samples", 1000, "evaluate")
    opts = _engine.options(nan_handling=nan_handling, conf_interval=conf_interval,
                           n_resamples=n_resamples, confidence=confidence, method=method,
                           resampling=resampling, random_state=random_state,
                           names={"n_resamples": n_name})
    nan_handling, conf_interval = opts.nan_handling, opts.conf_interval
    from rankereval.metrics._ties import check_ties

    ties = check_ties(ties)
    scored = columns_for_items(columns, doc_ids, y_pred)
    scores = score_columns(scored, y_true if isinstance(y_true, BinaryLabels) else None, numeric,
                           y_pred, relevance_level, ties)
    if query_ids is not None and not isinstance(y_true, TrecData):
        query_ids = np.asarray(query_ids)
        if query_ids.shape != (scores.shape[0],):
            raise ValueError(f"query_ids must have one id per ranking ({scores.shape[0]}), got shape "
                             f"{query_ids.shape}")
    scores.flags.writeable = False
    weights = column_weights(columns, y_true if isinstance(y_true, BinaryLabels) else None, numeric, y_pred,
                             relevance_level)

    # one seed for every metric (from None or a Generator): the same resamples for all
    seed = _engine.random_seed(opts.random_state) if conf_interval else None
    poisson = None
    if conf_interval and opts.resampling == "poisson":
        from rankereval.stats._resampling import query_key_hashes

        n, n_boot = scores.shape[0], opts.n_resamples
        part = _engine.partials(scores, nan_handling, query_key_hashes(query_ids, n),
                                _engine.stream_key(seed), n_boot, _engine.poisson_threads(n, n_boot),
                                _engine.geometric_columns(columns), moments=opts.method == "bca",
                                weights=weights)
        poisson = _engine.summarise(part, columns, nan_handling, n_boot, opts.confidence, opts.method)[1]
    means, intervals, n_used, n_undefined, notes = {}, {}, {}, {}, []
    for j, (col, m) in enumerate(columns):
        s, rows, n_undefined[col] = _engine.apply_nan_policy(scores[:, j], nan_handling)
        if nan_handling == "drop" and n_undefined[col] and not s.size:
            notes.append(m._all_undefined_message(n_undefined[col], label=col))
        if nan_handling == "propagate" and n_undefined[col]:
            notes.append(m._undefined_message(n_undefined[col], s.size, label=col))
        n_used[col] = int(s.size)
        w = None
        if weights is not None and _engine.is_weighted(m.info):
            w = weights[:, j] if rows is None else weights[rows, j]
        means[col] = _engine.aggregate(m.info, s, w)
        if poisson is not None:
            intervals[col] = poisson[col]
        elif conf_interval:
            intervals[col] = _engine.interval(s, opts, rows, m.info, random_state=seed, weights=w).confidence_interval
    if notes:
        warnings.warn("\n".join(notes), UndefinedMetricWarning, stacklevel=user_stacklevel())
    conf = opts.confidence
    report = None
    if y_pred._ties is not None:
        from rankereval.metrics._ties import tie_report

        binary = y_true if isinstance(y_true, BinaryLabels) else None
        report = tie_report(scored, lambda cols, t: score_columns(cols, binary, numeric, y_pred, relevance_level, t),
                            _engine.aggregate, y_pred, nan_handling, ties, means, weights)
    result = Evaluation(scores, [c for c, _ in columns], [m for _, m in columns], query_ids, means,
                        intervals if conf_interval else None, n_used, n_undefined, nan_handling,
                        conf if conf_interval else None)
    result.tie_report = report
    result._weights = weights  # the query weights of weighted-mean columns (compare reads them)
    return result


class Evaluation:
    """The result of :func:`rankereval.evaluate`: per-ranking scores and their means.

    Attributes
    ----------
    scores : ndarray of float64, shape (n_rankings, n_metrics), or None
        Read-only; column ``j`` holds metric ``names[j]`` (NaN where undefined). None when
        the per-query scores were left on a cluster (:mod:`rankereval.dask`).
    names : list of str
        Column names.
    metrics : list of Metric
        The metric of each column.
    query_ids : ndarray or None
        The query id of each row (when evaluated from a ``TrecData``).
    means : dict
        Column name -> mean after the NaN handling.
    conf_intervals : dict or None
        Column name -> (lower, upper) bootstrap interval, when asked for.
    n_used, n_undefined : dict
        Column name -> rankings that entered the mean, rankings where the metric is NaN.
    nan_handling : str
        The NaN handling of the means.
    tie_report : TieReport or None
        For rankings with recorded ties: how many rankings hold ties inside each metric's
        cutoff, how many positions are tied, and the range [pessimistic, optimistic] of each
        mean (see :doc:`/guide/ties`); None otherwise.
    cluster_scores : pyspark.sql.DataFrame or None
        From :func:`rankereval.spark.evaluate`: the per-query scores left on the cluster, a
        lazy DataFrame (query id, one column per metric); None otherwise.
    """

    tie_report = None
    cluster_scores = None
    _weights = None

    def __init__(self, scores, names, metrics, query_ids, means, conf_intervals, n_used,
                 n_undefined, nan_handling, confidence=None, n_rankings=None):
        self.scores = scores
        self._n_rankings = scores.shape[0] if n_rankings is None else int(n_rankings)
        self.names = list(names)
        self.metrics = list(metrics)
        self.query_ids = query_ids
        self.means = dict(means)
        self.conf_intervals = conf_intervals
        self.n_used = dict(n_used)
        self.n_undefined = dict(n_undefined)
        self.nan_handling = nan_handling
        self.confidence = confidence

    @property
    def n_rankings(self):
        return self._n_rankings

    def _per_query(self):
        if self.scores is None:
            raise ValueError("the per-query scores were not kept: on a cluster use DaskEvaluation.scores "
                             "or compute(scores=True) (Dask), Evaluation.cluster_scores (Spark); "
                             "with an Accumulator, keep_scores=True")
        return self.scores

    def _col(self, name):
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no metric column {name!r}; columns: {', '.join(self.names)}") from None

    def mean(self, name):
        """The mean of column ``name``."""
        self._col(name)
        return self.means[name]

    def __getitem__(self, name):
        """The per-ranking scores of column ``name`` (a read-only view)."""
        return self._per_query()[:, self._col(name)]

    # -- export --------------------------------------------------------------------------
    def to_pandas(self, per_query=True):
        """Per-ranking scores as a DataFrame: one column per metric, indexed by query id.

        ``per_query=True`` is the only form (it is accepted so that the same call reads the
        per-query scores of an ``Evaluation`` and of a :class:`~rankereval.stats.Comparison`);
        the table of means is :meth:`summary`. Needs pandas (``pip install 'rankereval[io]'``).
        """
        if per_query is not True:
            raise ValueError(f"to_pandas() gives the per-query scores (per_query=True), got "
                             f"per_query={per_query!r}; the table of means is Evaluation.summary()")
        pd = require("pandas", "io", "Evaluation.to_pandas")
        index = pd.Index(self.query_ids, name="query") if self.query_ids is not None else None
        return pd.DataFrame(np.array(self._per_query()), columns=self.names, index=index)

    def summary(self):
        """One row per metric: mean, interval bounds (when computed), rankings used and undefined.

        Needs pandas (``pip install 'rankereval[io]'``).
        """
        pd = require("pandas", "io", "Evaluation.summary")
        rows = {}
        for name in self.names:
            row = {"mean": self.means[name]}
            if self.conf_intervals is not None:
                row["ci_low"], row["ci_high"] = self.conf_intervals[name]
            row["n_used"] = self.n_used[name]
            row["n_undefined"] = self.n_undefined[name]
            if self.tie_report is not None:
                row.update(self.tie_report.row(name))
            rows[name] = row
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("metric")

    def to_dict(self, per_query=False):
        """A JSON-safe dict (NaN -> None, infinities as ``"inf"``)."""
        out = {"n_rankings": self.n_rankings, "nan_handling": self.nan_handling, "metrics": {}}
        if self.confidence is not None:
            out["confidence"] = self.confidence
        for j, name in enumerate(self.names):
            entry = {"metric": repr(self.metrics[j]), "mean": _render.json_number(self.means[name])}
            if self.conf_intervals is not None:
                entry["conf_interval"] = [_render.json_number(v) for v in self.conf_intervals[name]]
            entry["n_used"] = self.n_used[name]
            entry["n_undefined"] = self.n_undefined[name]
            if self.tie_report is not None:
                entry["ties"] = {key: _render.json_number(v) if isinstance(v, float) else v
                                 for key, v in self.tie_report.row(name).items()}
            if per_query:
                entry["scores"] = [_render.json_number(v) for v in self._per_query()[:, j]]
            out["metrics"][name] = entry
        if per_query and self.query_ids is not None:
            out["query_ids"] = [q.item() if hasattr(q, "item") else q for q in self.query_ids]
        return out

    def to_json(self, path=None, per_query=False, indent=2):
        """:meth:`to_dict` as strict JSON text; written to ``path`` when given."""
        text = json.dumps(self.to_dict(per_query=per_query), indent=indent, allow_nan=False)
        if path is not None:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    def _rows(self):
        """Header and text rows of the summary table (``repr`` and ``_repr_html_``)."""
        header = ["metric", "mean"]
        if self.conf_intervals is not None:
            header.append(f"{self.confidence * 100:g}% CI")
        header.append("rankings")
        if any(self.n_undefined.values()):
            header.append("undefined")
        ties = self.tie_report
        if ties is not None:
            header += ["tied rankings", "[pessimistic, optimistic]"]
        rows = []
        for name in self.names:
            row = [name, _render.fmt(self.means[name])]
            if self.conf_intervals is not None:
                lo, hi = self.conf_intervals[name]
                row.append(f"[{_render.fmt(lo)}, {_render.fmt(hi)}]")
            row.append(str(self.n_used[name]))
            if any(self.n_undefined.values()):
                row.append(str(self.n_undefined[name]))
            if ties is not None:
                t = ties.row(name)
                row.append(str(t["tied_rankings"]))
                row.append("refused" if t["pessimistic"] is None else
                           f"[{_render.fmt(t['pessimistic'])}, {_render.fmt(t['optimistic'])}]")
            rows.append(row)
        note = "" if self.nan_handling == "propagate" else f" (nan_handling={self.nan_handling!r})"
        if ties is not None:
            note += (f"; {ties.tied_positions} of {ties.positions} ranked positions tied, scored "
                     + ("in the recorded order" if ties.mode is None else f"with ties={ties.mode!r}"))
        return f"Evaluation of {self.n_rankings} rankings{note}", header, rows

    def __repr__(self):
        title, header, rows = self._rows()
        return f"{title}\n" + _render.table(header, rows).rstrip("\n")

    def _repr_html_(self):
        """The summary table as plain HTML (Jupyter shows it; no JavaScript)."""
        import html

        title, header, rows = self._rows()
        return _render.html_table(header, [[html.escape(c) for c in row] for row in rows], caption=title)



for _obj in (evaluate, Evaluation):
    _obj.__module__ = "rankereval"  # documented and pickled under the public name (rankereval/__init__.py)
del _obj
