"""scikit-learn-shaped ranking metrics: ``f(y_true, y_score, *, k=..., qid=...) -> float``.

Each function takes the ground truth and the model's scores either as dense 2-D arrays of
shape ``(n_queries, n_documents)`` (as :func:`sklearn.metrics.ndcg_score`) or as flat 1-D
arrays of one entry per (query, document) row with the query of each row in ``qid=`` (or
LightGBM's ``group=`` sizes), and returns the mean over queries. They are thin: the layout
comes from ``rankereval.data._groups`` (as :meth:`Rankings.from_groups`), the values from the
metric classes and their kernels.
"""
import numpy as np

from rankereval.data._groups import _Groups, _flat
from rankereval._validation import check_flag, check_log_base, check_nan_handling, check_k
from rankereval.data._checks import _reject_masked
from rankereval.data._conversion import _host_array
from rankereval.data import BinaryLabels, NumericLabels, Rankings
from rankereval.metrics._binary import AP, Precision, Recall
from rankereval.metrics._graded import DCG, NDCG
from rankereval.metrics._rank import ReciprocalRank

__all__ = ["ndcg_score", "dcg_score", "map_score", "precision_at_k", "recall_at_k", "mrr_score"]


def _layout(y_true, y_score, qid, group):
    """(groups, flat y_true, flat y_score) of 2-D arrays or of flat arrays with qid/group."""
    t = _host_array(y_true, "y_true")
    s = _host_array(y_score, "y_score")
    _reject_masked(t, "y_true")
    _reject_masked(s, "y_score")
    if qid is None and group is None:
        t, s = np.asarray(t), np.asarray(s)
        if t.ndim != 2 or s.ndim != 2:
            raise ValueError(
                "y_true and y_score: give 2-D arrays of shape (n_queries, n_documents), or flat "
                f"arrays with qid= (the query of each row) or group= (sizes); got shapes {t.shape} "
                f"and {s.shape}")
        if t.shape != s.shape:
            raise ValueError(f"y_true and y_score must have the same shape, got {t.shape} and {s.shape}")
        n_q, m = s.shape
        if m == 0:
            raise ValueError("y_score has no documents (0 columns)")
        return _Groups(s.size, group=np.full(n_q, m)), t.reshape(-1), s.reshape(-1)
    s = _flat(s, "y_score")
    t = _flat(t, "y_true", s.size)
    return _Groups(s.size, qid, group), t, s


def _mean(metric, scores, nan_handling, sample_weight, n_queries):
    """The (weighted) mean over queries after the NaN policy (as :meth:`Metric.mean`)."""
    from rankereval.stats import _engine

    nan_handling = check_nan_handling(nan_handling)
    w = None
    if sample_weight is not None:
        w = _flat(sample_weight, "sample_weight", n_queries, what="weights (one per query)")
        if w.dtype.kind not in "biuf" or not np.all(np.isfinite(w)) or (w.size and w.min() < 0):
            raise ValueError("sample_weight must hold finite, non-negative numbers (one per query)")
    scores, rows = metric._policy(scores, nan_handling)  # 'propagate' warns, and 'drop' of every query
    if w is None:
        return _engine.aggregate(metric.info, scores)
    return _engine.weighted_mean(scores, w if rows is None else w[rows])


def _log_base(log_base):
    return check_log_base(log_base)


def _tie_averaged_gains(groups, grades, scores, ranks):
    """NumericLabels in which each document's grade is the mean grade of the documents of its
    query that tie with it in score. Any order of the ties then gives the same DCG, which
    is the DCG averaged over all orders of the ties (as scikit-learn's ``ndcg_score``).
    ``ranks``: the whole ranking of each query (its positions, padded with -1). None when
    no two documents of a query tie (nothing to average)."""
    valid = ranks >= 0
    rows = (groups.indptr[:-1, None] + ranks)[valid]  # rows in query order, best first
    s = scores[rows]
    new = np.ones(s.size, dtype=bool)
    new[1:] = s[1:] != s[:-1]
    new[groups.indptr[:-1]] = True  # a tie never spans two queries
    if new.all():
        return None
    starts = np.flatnonzero(new)
    sizes = np.diff(np.append(starts, s.size))
    mean = np.add.reduceat(grades[rows], starts) / sizes
    averaged = np.zeros(groups.n)
    averaged[rows] = np.repeat(mean, sizes)
    return NumericLabels.from_matrix(groups.graded_matrix(averaged))


def _graded(y_true, y_score, k, qid, group, ignore_ties, log_base, normalize):
    """Per-query DCG@k or NDCG@k, ties averaged unless ``ignore_ties``."""
    k = check_k(k, allow_none=True)
    ignore_ties = check_flag(ignore_ties, "ignore_ties")
    base = _log_base(log_base)
    groups, t, s = _layout(y_true, y_score, qid, group)
    grades = groups.grades(t, "y_true")
    labels = NumericLabels.from_matrix(groups.graded_matrix(grades))
    rankings = Rankings.from_scores(groups.score_matrix(s, "y_score"), k=k if ignore_ties else None)
    metric = (NDCG if normalize else DCG)(k, log_base=base)
    averaged = None if ignore_ties else _tie_averaged_gains(groups, grades, groups.take(s), rankings.indices)
    if averaged is None:
        return metric, metric.score(labels, rankings), groups.n_queries
    dcg = DCG(k, log_base=base).score(averaged, rankings)
    if not normalize:
        return metric, dcg, groups.n_queries
    ideal = metric._ideal(labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        return metric, np.where(ideal > 0, dcg / ideal, np.nan), groups.n_queries


def ndcg_score(y_true, y_score, *, k=None, qid=None, group=None, sample_weight=None, ignore_ties=False,
               nan_handling="zerofill"):
    r"""Normalized discounted cumulative gain, averaged over queries (scikit-learn's form).

    Equal to :func:`sklearn.metrics.ndcg_score` on its dense 2-D input (linear gains,
    :math:`\log_2` discount, ties averaged, queries without a relevant document scoring 0),
    and taking flat learning-to-rank arrays with ``qid``/``group`` as well.

    Parameters
    ----------
    y_true : array-like of shape (n_queries, n_documents) or (n_rows,)
        Non-negative relevance grades (0: not relevant).
    y_score : array-like, the shape of ``y_true``
        Model scores, higher is better (finite real numbers).
    k : int, optional
        Only the top ``k`` documents of each query count; None: all of them.
    qid : array-like of shape (n_rows,), optional
        With flat ``y_true``/``y_score``: the query of each row (any comparable ids, sorted
        or not), as :meth:`Rankings.from_groups` takes it.
    group : array-like of int, optional
        Instead of ``qid``: LightGBM's group sizes (consecutive rows of each query).
    sample_weight : array-like of shape (n_queries,), optional
        A weight per query (in the order of the queries: rows of a 2-D input, ascending
        ``qid``, or the groups).
    ignore_ties : bool, default=False
        False: the gain of documents with equal scores is averaged over their ranks, which
        is the mean NDCG over every order of the ties (scikit-learn's default). True: ties
        keep the earlier document (column or row) first, which is faster (only the top
        ``k`` of each query are selected instead of sorting all of them).
    nan_handling : {'zerofill', 'drop', 'propagate', 'onefill'}, default='zerofill'
        Queries without a relevant document: 0 (scikit-learn's choice), left out of the
        mean, a NaN mean with an :class:`~rankereval.UndefinedMetricWarning`, or 1.

    Returns
    -------
    float

    See Also
    --------
    rankereval.NDCG : the metric class (per-query scores, confidence intervals); its
        default ``log_base='e'`` gives the same NDCG.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import ndcg_score
    >>> y_true = np.array([[10, 0, 0, 1, 5]])
    >>> y_score = np.array([[0.1, 0.2, 0.3, 4, 70]])
    >>> round(ndcg_score(y_true, y_score), 6)
    0.695694
    >>> round(ndcg_score(y_true, np.array([[1, 0, 0, 0, 1]]), k=1), 6)  # a tie at the top
    0.75

    Flat learning-to-rank arrays (one row per query-document pair):

    >>> y = np.array([3, 0, 1, 0, 2])
    >>> scores = np.array([0.9, 0.1, 0.5, 0.3, 0.8])
    >>> round(ndcg_score(y, scores, qid=[1, 1, 1, 2, 2]), 6)
    1.0
    """
    metric, scores, n_q = _graded(y_true, y_score, k, qid, group, ignore_ties, 2, True)
    return _mean(metric, scores, nan_handling, sample_weight, n_q)


def dcg_score(y_true, y_score, *, k=None, log_base=2, qid=None, group=None, sample_weight=None,
              ignore_ties=False, nan_handling="zerofill"):
    r"""Discounted cumulative gain, averaged over queries (scikit-learn's form).

    Equal to :func:`sklearn.metrics.dcg_score` (linear gains, ties averaged); arguments as
    :func:`ndcg_score`, plus ``log_base`` (2, ``'e'`` or any number > 1, as scikit-learn's).
    A query without a relevant document has DCG 0 (``nan_handling='zerofill'``, as
    scikit-learn; the metric class :class:`~rankereval.DCG` marks it NaN).

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import dcg_score
    >>> round(dcg_score(np.array([[10, 0, 0, 1, 5]]), np.array([[0.1, 0.2, 0.3, 4, 70]])), 6)
    9.499458
    """
    metric, scores, n_q = _graded(y_true, y_score, k, qid, group, ignore_ties, log_base, False)
    return _mean(metric, scores, nan_handling, sample_weight, n_q)


def _binary(metric, y_true, y_score, k, qid, group, relevance_level, sample_weight, nan_handling):
    groups, t, s = _layout(y_true, y_score, qid, group)
    labels = BinaryLabels.from_matrix(groups.binary_matrix(t, relevance_level, "y_true"))
    rankings = Rankings.from_scores(groups.score_matrix(s, "y_score"), k=k)
    return _mean(metric, metric.score(labels, rankings), nan_handling, sample_weight, groups.n_queries)


_BINARY_DOC = """

    Parameters
    ----------
    y_true : array-like of shape (n_queries, n_documents) or (n_rows,)
        Relevance grades; a document is relevant when its grade is at least
        ``relevance_level`` (0/1 labels: the 1s).
    y_score : array-like, the shape of ``y_true``
        Model scores, higher is better. Equal scores keep the earlier document (column, or
        row of the query) first.
    {k}
    qid, group, sample_weight
        As in :func:`ndcg_score`.
    relevance_level : number, default=1
    nan_handling : {{'propagate', 'drop', 'zerofill', 'onefill'}}, default='propagate'
        Queries without a relevant document are undefined (NaN): a NaN mean with an
        :class:`~rankereval.UndefinedMetricWarning`, left out of the mean, or counted as 0
        (or 1).

    Returns
    -------
    float
"""


def map_score(y_true, y_score, *, k=None, qid=None, group=None, relevance_level=1, sample_weight=None,
              nan_handling="propagate"):
    """Mean average precision over queries (:class:`~rankereval.AP` per query).

    Named ``map_score``, not ``average_precision_score``: scikit-learn's
    :func:`~sklearn.metrics.average_precision_score` is a classification metric that, on 2-D
    input, averages over the *columns* (classes), so the same name would silently mean
    another number. Without ties and with a relevant document in every query this equals
    :func:`sklearn.metrics.label_ranking_average_precision_score`.
    """
    return _binary(AP(k), y_true, y_score, k, qid, group, relevance_level, sample_weight, nan_handling)


def precision_at_k(y_true, y_score, *, k, qid=None, group=None, relevance_level=1, sample_weight=None,
                   nan_handling="propagate"):
    """Precision@k averaged over queries (:class:`~rankereval.Precision` per query)."""
    return _binary(Precision(k), y_true, y_score, k, qid, group, relevance_level, sample_weight, nan_handling)


def recall_at_k(y_true, y_score, *, k, qid=None, group=None, relevance_level=1, sample_weight=None,
                nan_handling="propagate"):
    """Recall@k averaged over queries (:class:`~rankereval.Recall` per query)."""
    return _binary(Recall(k), y_true, y_score, k, qid, group, relevance_level, sample_weight, nan_handling)


def mrr_score(y_true, y_score, *, k=None, qid=None, group=None, relevance_level=1, sample_weight=None,
              nan_handling="propagate"):
    """Mean reciprocal rank over queries (:class:`~rankereval.ReciprocalRank` per query)."""
    return _binary(ReciprocalRank(k), y_true, y_score, k, qid, group, relevance_level, sample_weight,
                   nan_handling)


_K_OPTIONAL = """k : int, optional
        Only the top ``k`` documents of each query count; None: all of them."""
_K_REQUIRED = """k : int
        The cutoff."""
map_score.__doc__ += _BINARY_DOC.format(k=_K_OPTIONAL) + """
    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import map_score
    >>> round(map_score([1, 0, 1, 0, 1], [0.9, 0.8, 0.1, 0.2, 0.5], qid=[1, 1, 1, 2, 2]), 6)
    0.916667
"""
precision_at_k.__doc__ += _BINARY_DOC.format(k=_K_REQUIRED) + """
    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import precision_at_k
    >>> precision_at_k(np.array([[1, 0, 1], [0, 0, 1]]), np.array([[0.3, 0.2, 0.1], [1, 2, 3]]), k=2)
    0.5
"""
recall_at_k.__doc__ += _BINARY_DOC.format(k=_K_REQUIRED) + """
    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import recall_at_k
    >>> recall_at_k(np.array([[1, 0, 1], [0, 0, 1]]), np.array([[0.3, 0.2, 0.1], [1, 2, 3]]), k=2)
    0.75
"""
mrr_score.__doc__ += _BINARY_DOC.format(k=_K_OPTIONAL) + """
    Examples
    --------
    >>> from rankereval import mrr_score
    >>> mrr_score([0, 1, 0, 0, 1], [0.9, 0.8, 0.1, 0.2, 0.5], group=[3, 2])
    0.75
"""


for _obj in (dcg_score, map_score, mrr_score, ndcg_score, precision_at_k, recall_at_k):
    _obj.__module__ = "rankereval"  # documented and pickled under the public name (rankereval/__init__.py)
del _obj
