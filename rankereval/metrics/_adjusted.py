"""A metric evaluated with trec_eval's ``-l`` and ``-J`` options of its own.

ir_measures writes them as measure parameters, ``P(rel=2)@5`` and ``AP(judged_only=True)``;
rankereval's name grammar as options, ``p@5[rel=2]`` and ``ap[judged_only]``
(:func:`~rankereval.metrics.from_name` reads both). :class:`Adjusted` wraps any
registered metric that reads labels; the labels and rankings it hands the metric are built
here, once per call, and the metric's own kernel does the rest.
"""
import numbers

import numpy as np

from rankereval.data import BinaryLabels, Labels, NumericLabels, Rankings
from rankereval.data._rankings import apply_filters as _apply_filters
from rankereval.metrics._base import Metric, _score_many

__all__ = ["Adjusted", "threshold_labels"]


def threshold_labels(labels, level):
    """Binary labels: the items of ``labels`` whose value is ``>= level`` (as ``trec_eval -l``),
    with the judgments of ``labels`` kept."""
    keep = labels.values >= level
    rows = np.repeat(np.arange(labels.n_rows), np.diff(labels.indptr))
    counts = np.bincount(rows[keep], minlength=labels.n_rows)
    indptr = np.zeros_like(labels.indptr)
    np.cumsum(counts, out=indptr[1:])
    binary = BinaryLabels._from_canonical(indptr, labels.indices[keep], None, labels.n_items)
    return binary if labels.judged is None else binary.with_judged(labels.judged)


def judged_rankings(labels, y_pred, who):
    """``y_pred`` with every item that ``labels`` has not judged removed (``trec_eval -J``:
    the items below move up)."""
    if labels.judged is None:
        raise ValueError(f"{who} ranks judged items only (judged_only), but y_true has no judgments: "
                         "build it with y_true.with_judged(judged_ids), or read it with rankereval.io "
                         "(read_trec, from_dataframes), which keeps every judged item")
    ranks, lengths = _apply_filters(y_pred.indices, y_pred.lengths, labels.judged, None)
    return Rankings._from_padded(np.ascontiguousarray(ranks), np.ascontiguousarray(lengths, dtype=np.int64))


def _binary_with_rel(metric):
    """A graded metric that ``rel=`` turns into its binary form: RBP (ir_measures' ``RBP(rel=1)``,
    cwl_eval's binary RBP: items graded at least ``rel`` count 1, the others 0)."""
    from rankereval.metrics._graded import RBP

    return type(metric) is RBP


class Adjusted(Metric):
    """``metric`` with a relevance level and/or judged-only rankings of its own.

    Parameters
    ----------
    metric : Metric
        A registered metric that reads labels (not a beyond-accuracy metric).
    rel : int or float, optional
        Items graded at least ``rel`` are relevant, for this metric alone (trec_eval ``-l``,
        ir_measures' ``rel=``); only for metrics of binary labels, and RBP (binary RBP, as
        ir_measures' ``RBP(rel=1)``). None: the relevance level
        of the call (:func:`rankereval.evaluate`'s ``relevance_level``, 1 in
        :meth:`score`).
    judged_only : bool, default=False
        Remove the items without a judgment from each ranking before scoring (trec_eval
        ``-J``, ir_measures' ``judged_only=True``); the labels must carry judgments
        (:attr:`~rankereval.BinaryLabels.judged`, kept by :mod:`rankereval.io`).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, Precision
    >>> from rankereval.metrics import Adjusted, from_name
    >>> y_true = NumericLabels.from_matrix([[2, 1, 0, 2]])
    >>> y_pred = Rankings.from_ranked_indices([[0, 1, 2]])
    >>> Adjusted(Precision(2), rel=2).score(y_true, y_pred)
    array([0.5])
    >>> from_name("P(rel=2)@2") == Adjusted(Precision(2), rel=2) == from_name("p@2[rel=2]")
    True
    >>> Adjusted(Precision(2), rel=2).name
    'p@2[rel=2]'
    """

    def __init__(self, metric, rel=None, judged_only=False):
        if not isinstance(metric, Metric) or type(metric).info is None or isinstance(metric, Adjusted):
            raise TypeError(f"metric must be a registered Metric (not an Adjusted one), got {metric!r}")
        if metric.info.labels == "none":
            raise ValueError(f"metric: {metric.name} reads rankings only; rel and judged_only do not apply")
        if rel is not None:
            if isinstance(rel, (bool, np.bool_)) or not isinstance(rel, numbers.Real) or not np.isfinite(rel) \
                    or rel <= 0:
                raise ValueError(f"rel must be a finite number > 0 (labels of 0 and below are never stored, "
                                 f"so they cannot be relevant), got {rel!r}")
            if metric.info.labels != "binary" and not _binary_with_rel(metric):
                raise ValueError(f"rel: {metric.name} reads the grades themselves, so a relevance level "
                                 "does not apply to it")
            rel = int(rel) if float(rel).is_integer() else float(rel)
        if not isinstance(judged_only, (bool, np.bool_)):
            raise TypeError(f"judged_only must be True or False, got {judged_only!r}")
        if rel is None and not judged_only:
            raise ValueError("Adjusted needs rel or judged_only=True (without them it is the metric itself)")
        self.metric = metric
        self.rel = rel
        self.judged_only = bool(judged_only)
        self.info = metric.info  # the wrapped metric's registry entry: its range, NaN policy...

    @property
    def name(self):
        """The wrapped metric's name with ``rel=`` / ``judged_only`` among its options:
        ``"p@5[rel=2]"``, ``"ndcg@10[power,judged_only]"``."""
        opts = ([f"rel={self.rel}"] if self.rel is not None else []) + (["judged_only"] if self.judged_only else [])
        inner = self.metric.name
        if inner.endswith("]"):
            return f"{inner[:-1]},{','.join(opts)}]"
        return f"{inner}[{','.join(opts)}]"

    def _labels(self, y_true, relevance_level):
        """The labels the wrapped metric reads: graded ``y_true`` (or binary) thresholded at
        ``rel`` (else ``relevance_level``) for a binary metric."""
        if self.info.labels == "binary" or self.rel is not None:  # rel on RBP: binary RBP
            level = relevance_level if self.rel is None else self.rel
            if isinstance(y_true, NumericLabels) or level != 1:
                return threshold_labels(y_true, level)
        return y_true

    def _inputs(self, y_true, y_pred, relevance_level):
        """The labels and rankings the wrapped metric reads: graded ``y_true`` (or binary)
        thresholded at ``rel`` (else ``relevance_level``) for a binary metric, and ``y_pred``
        without its unjudged items when ``judged_only``."""
        labels = self._labels(y_true, relevance_level)
        if self.judged_only:
            y_pred = judged_rankings(labels, y_pred, self.name)
        return labels, y_pred

    def _query_weights(self, y_true, y_pred, relevance_level=1):
        """The wrapped metric's query weights, from the labels it reads (thresholded at ``rel``;
        judged-only rankings change no weight: the weights are the labels')."""
        return self.metric._query_weights(self._labels(y_true, relevance_level), y_pred)

    def _tie_refusal(self):
        """Why this metric has no value over tied orders (None when it has one)."""
        from rankereval.metrics._ties import refusal

        if self.judged_only:
            return f"{self.name} removes the unjudged items, which splits the tied groups"
        return refusal(self.metric)

    def _score_with(self, y_true, y_pred, relevance_level, ties=None):
        if ties is not None and y_pred.has_ties and self.judged_only:
            from rankereval.metrics._ties import tied_scores

            return tied_scores(self, y_true, y_pred, ties)  # refused, with the reason
        labels, rankings = self._inputs(y_true, y_pred, relevance_level)
        self.metric._check_inputs(labels, rankings)
        if ties is not None:
            from rankereval.metrics._ties import tied_scores

            return tied_scores(self.metric, labels, rankings, ties)
        return _score_many([self.metric], labels, rankings)[:, 0]

    def score(self, y_true, y_pred, *, ties=None):
        """Individual scores for each ranking (graded labels are thresholded at ``rel``, 1 when
        it is None; see :meth:`Metric.score <rankereval.Metric.score>`, also for ``ties``)."""
        from rankereval.metrics._ties import check_ties

        ties = check_ties(ties)
        if not isinstance(y_true, Labels):
            raise TypeError(f"y_true must be BinaryLabels or NumericLabels, got {type(y_true).__name__}")
        if not isinstance(y_pred, Rankings):
            raise TypeError(f"y_pred must be Rankings, got {type(y_pred).__name__}")
        return self._score_with(y_true, y_pred, 1, ties)
