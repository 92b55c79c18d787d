r"""Ranking metrics: per-ranking scores and means with bootstrap confidence intervals.

All metrics allow you to get both individual scores as well as mean scores:
:meth:`Metric.score` gives one value per ranking, :meth:`Metric.mean` the mean over all
rankings after handling NaN values.

>>> from rankereval import BinaryLabels, Rankings, ReciprocalRank
>>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
>>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
>>> metric = ReciprocalRank(3)
>>> metric.score(y_true, y_pred)
array([0., 1.])
>>> metric.mean(y_true, y_pred)
0.5

rankereval returns NaN in ill-specified cases (for instance a label row without any
relevant item). If you observe a NaN value, check the edge cases of the metric, then either
remove those rankings or handle them with the ``nan_handling`` option of :meth:`Metric.mean`.
"""
from numbers import Integral, Real

import numpy as np

from rankereval import _kernels
from rankereval.data import _MAX_K, BinaryLabels, Labels, NumericLabels, Rankings, _n_threads

__all__ = [
    "Metric",
    "Precision",
    "Recall",
    "F1",
    "HitRate",
    "ReciprocalRank",
    "AP",
    "MeanRanks",
    "FirstRelevantRank",
    "DCG",
    "NDCG",
]

_NAN_HANDLING = ("propagate", "drop", "zerofill")
# label id range up to which a per-thread bitset (one bit per item, 8 MB at most) is used
_BITSET_MAX_ITEMS = 1 << 26
# how the kernel looks ranked items up in a label row: "auto" chooses per row; tests set
# "bitset", "search" or "scan" to check every strategy on the same input
_LOOKUP = "auto"
_NO_VALUES = np.empty(0)


def _check_k(k, allow_none=False):
    if k is None and allow_none:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k <= 0:
        raise ValueError(f"k must be an integer > 0{' or None' if allow_none else ''}, got {k!r}")
    if k > _MAX_K:
        raise ValueError(f"k must be at most 2**62, got {k!r}")
    return int(k)


def _check_flag(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


class Metric:
    """Base class of all metrics.

    A metric object holds its parameters (such as the cutoff ``k``); :meth:`score` and
    :meth:`mean` take the ground truth (:class:`~rankereval.data.BinaryLabels` or
    :class:`~rankereval.data.NumericLabels`) and the :class:`~rankereval.data.Rankings` to
    evaluate. One label row serves every ranking; otherwise row ``i`` of the labels belongs
    to ranking ``i``.
    """

    _metric = None  # kernel id
    _binary_only = True

    # -- parameters ----------------------------------------------------------------------
    def _params(self):
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._params() == other._params()

    def __hash__(self):
        return hash((type(self).__name__, tuple(self._params().items())))

    def __reduce__(self):
        return (_restore_metric, (type(self), self._params()))

    # -- scoring -------------------------------------------------------------------------
    def _check_inputs(self, y_true, y_pred):
        if not isinstance(y_true, Labels):
            raise TypeError(
                f"y_true must be BinaryLabels or NumericLabels, got {type(y_true).__name__}; "
                "build it with BinaryLabels.from_positive_indices(...) or *.from_matrix(...)"
            )
        if not isinstance(y_pred, Rankings):
            raise TypeError(
                f"y_pred must be Rankings, got {type(y_pred).__name__}; build it with "
                "Rankings.from_ranked_indices(...) or Rankings.from_scores(...)"
            )
        if self._binary_only and not isinstance(y_true, BinaryLabels):
            raise TypeError(
                f"{type(self).__name__} needs BinaryLabels, got {type(y_true).__name__}; "
                "threshold graded labels first (e.g. BinaryLabels.from_matrix(grades >= 1))"
            )
        if y_true.n_rows != 1 and y_true.n_rows != y_pred.n_rows:
            raise ValueError(
                f"y_true has {y_true.n_rows} label rows but y_pred has {y_pred.n_rows} rankings; "
                "give one label row per ranking, or a single label row for all rankings"
            )

    def _run(self, y_true, y_pred, k, truncated=False, disc=None, power=0, norm=None):
        """Call the metric kernel (``k=None``: the whole ranking)."""
        ranks = y_pred.indices
        work = ranks.shape[0] * (ranks.shape[1] if k is None else min(k, ranks.shape[1]))
        bitset_ok = y_true.n_items <= min(_BITSET_MAX_ITEMS, 64 * ranks.size + 65536)
        lookup = _kernels.LOOKUP_IDS[_LOOKUP]
        if lookup == _kernels.LOOKUP_IDS["bitset"] and not bitset_ok:
            lookup = _kernels.LOOKUP_IDS["auto"]
        out = np.empty(y_pred.n_rows, dtype=np.float64)
        _kernels.score(
            self._metric,
            y_true.indptr,
            y_true.indices,
            _NO_VALUES if isinstance(y_true, BinaryLabels) else y_true.values,  # binary: all 1
            isinstance(y_true, BinaryLabels),
            y_true.n_items,
            ranks,
            y_pred.lengths,
            -1 if k is None else k,
            truncated,
            np.empty(0) if disc is None else disc,
            power,
            np.empty(0) if norm is None else norm,
            bitset_ok,
            lookup,
            out,
            _n_threads(work),
        )
        return out

    def score(self, y_true, y_pred):
        """Individual scores for each ranking.

        Parameters
        ----------
        y_true : BinaryLabels or NumericLabels
            Ground truth labels: one row, or one row per ranking.
        y_pred : Rankings
            Rankings to be evaluated.

        Returns
        -------
        ndarray of float64, shape (n_rankings,)
            The metric of each ranking.

        Raises
        ------
        TypeError
            If ``y_true`` or ``y_pred`` are of incorrect type.
        ValueError
            If the numbers of label rows and rankings differ (and there is more than one
            label row).
        """
        self._check_inputs(y_true, y_pred)
        return self._score(y_true, y_pred)

    def _score(self, y_true, y_pred):
        raise NotImplementedError

    # -- aggregation ---------------------------------------------------------------------
    def _scores_for_mean(self, y_true, y_pred, nan_handling):
        """Scores after the NaN policy of :meth:`mean` ('propagate' keeps them as they are)."""
        if nan_handling not in _NAN_HANDLING:
            raise ValueError(f"nan_handling must be one of {_NAN_HANDLING}, got {nan_handling!r}")
        scores = self.score(y_true, y_pred)
        if nan_handling == "drop":
            return scores[~np.isnan(scores)]
        if nan_handling == "zerofill":
            return np.where(np.isnan(scores), 0.0, scores)
        return scores

    def mean(
        self,
        y_true,
        y_pred,
        nan_handling="propagate",
        conf_interval=False,
        n_bootstrap_samples=1000,
        confidence=0.95,
        random_state=None,
        method="percentile",
    ):
        """Mean score over all rankings after handling NaN values.

        Parameters
        ----------
        y_true : BinaryLabels or NumericLabels
            Ground truth labels.
        y_pred : Rankings
            Rankings to be evaluated.
        nan_handling : {'propagate', 'drop', 'zerofill'}, default='propagate'
            'propagate': return NaN if any score is NaN; 'drop': ignore NaN scores;
            'zerofill': replace NaN scores with zero.
        conf_interval : bool, default=False
            If True, also return a bootstrap confidence interval of the mean.
        n_bootstrap_samples : int, default=1000
            Number of bootstrap resamples (an int > 1).
        confidence : float, default=0.95
            Confidence level of the interval, 0 < confidence < 1.
        random_state : None, int or numpy.random.Generator, default=None
            Seed or generator for the resampling; an int makes intervals reproducible. The
            global NumPy random state is never used.
        method : {'percentile', 'bca'}, default='percentile'
            Percentile bootstrap, or bias-corrected and accelerated (BCa), which is more
            accurate for skewed score distributions (e.g. reciprocal rank) and small samples.

        Returns
        -------
        float or dict
            The mean if ``conf_interval`` is False; otherwise
            ``{"score": mean, "conf_interval": (lower, upper)}``. No scores left after NaN
            handling gives NaN (and ``(nan, nan)``).

        Raises
        ------
        TypeError
            If ``y_true`` or ``y_pred`` are of incorrect type.
        ValueError
            If ``n_bootstrap_samples``, ``confidence``, ``method`` or ``nan_handling`` are
            invalid.

        Examples
        --------
        >>> from rankereval import BinaryLabels, Rankings, Precision
        >>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
        >>> y_pred = Rankings.from_ranked_indices([[0, 2, 1], [1, 2]])
        >>> Precision(2).mean(y_true, y_pred)
        0.75
        >>> Precision(2).mean(y_true, y_pred, conf_interval=True, random_state=0)
        {'score': 0.75, 'conf_interval': (0.5, 1.0)}
        """
        from rankereval.bootstrap import _validate

        _validate(n_bootstrap_samples, confidence, method, n_name="n_bootstrap_samples", conf_name="confidence")
        scores = self._scores_for_mean(y_true, y_pred, nan_handling)
        if not conf_interval:
            return float(np.mean(scores)) if scores.size else float("nan")
        result = self._bootstrap(scores, n_bootstrap_samples, confidence, method, random_state)
        return {"score": result.mean, "conf_interval": result.confidence_interval}

    def bootstrap(
        self,
        y_true,
        y_pred,
        nan_handling="propagate",
        n_resamples=1000,
        confidence_level=0.95,
        method="percentile",
        random_state=None,
    ):
        """Bootstrap distribution of the mean score, as a result object.

        Like ``mean(..., conf_interval=True)`` but returns a
        :class:`~rankereval.bootstrap.BootstrapResult` with the interval, the bootstrap
        distribution and the standard error (names as in :func:`scipy.stats.bootstrap`).

        Examples
        --------
        >>> from rankereval import BinaryLabels, Rankings, HitRate
        >>> y_true = BinaryLabels.from_positive_indices([[0], [1], [2], [3]])
        >>> y_pred = Rankings.from_ranked_indices([[0, 1], [0, 1], [2, 0], [0, 1]])
        >>> res = HitRate(2).bootstrap(y_true, y_pred, random_state=0)
        >>> res.mean
        0.75
        >>> res.bootstrap_distribution.shape
        (1000,)
        """
        from rankereval.bootstrap import _validate

        _validate(n_resamples, confidence_level, method)
        scores = self._scores_for_mean(y_true, y_pred, nan_handling)
        return self._bootstrap(scores, n_resamples, confidence_level, method, random_state)

    @staticmethod
    def _bootstrap(scores, n_resamples, confidence_level, method, random_state):
        from rankereval.bootstrap import bootstrap_mean

        if np.isnan(scores).any():  # 'propagate' with NaN scores
            from rankereval.bootstrap import BootstrapResult

            return BootstrapResult.undefined(n_resamples, confidence_level, method)
        return bootstrap_mean(
            scores,
            n_resamples=n_resamples,
            confidence_level=confidence_level,
            method=method,
            random_state=random_state,
        )


def _restore_metric(cls, params):
    return cls(**params)


class _CutoffMetric(Metric):
    """A binary metric with a cutoff ``k`` and an optional ``truncated`` flag."""

    _has_truncated = True

    def __init__(self, k, truncated=False):
        self.k = _check_k(k)
        self.truncated = _check_flag(truncated, "truncated")

    def _params(self):
        return {"k": self.k, "truncated": self.truncated} if self._has_truncated else {"k": self.k}

    def _score(self, y_true, y_pred):
        return self._run(y_true, y_pred, self.k, self.truncated)


class Precision(_CutoffMetric):
    r"""Precision@k: the fraction of the top k items that are relevant.

    Parameters
    ----------
    k : int
        Number of top results of each ranking to evaluate (an integer > 0).
    truncated : bool, default=False
        If True, k is clipped at the length of the ranking: :math:`k' = \min(k, |y|)`.

    Raises
    ------
    ValueError
        If k is not an integer > 0.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred`` [MN]_

    .. math::

        \mathrm{Precision}@k(y) = \frac{\sum_{i=1}^{\min(k, |y|)} \mathrm{rel}(y_i)}{k'},

    where :math:`\mathrm{rel}(y_i)` is the relevance label of the item at rank i, and
    :math:`k' = \min(k, |y|)` if ``truncated`` else :math:`k' = k` (default).

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: Precision@k is 0; with ``truncated=True``
       it is NaN, since :math:`k' = 0` leaves nothing to divide by.
    2. There are no relevant items in ``y_true``: NaN. This marks invalid instances
       explicitly and is consistent with Recall.

    References
    ----------
    .. [MN] C. D. Manning, P. Raghavan and H. Schütze: "Introduction to Information
       Retrieval". Cambridge University Press (2008).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Precision
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1,2,3]])
    >>> y_pred = Rankings.from_ranked_indices([[3,2,1], [1,2]])
    >>> Precision(3).score(y_true, y_pred)
    array([0.        , 0.66666667])
    """

    _metric = _kernels.METRIC_IDS["precision"]


class Recall(_CutoffMetric):
    r"""Recall@k: the fraction of the relevant items that are in the top k.

    Parameters
    ----------
    k : int
        Number of top results of each ranking to evaluate (an integer > 0).
    truncated : bool, default=False
        If True, the number of relevant items is clipped at k, so that a perfect ranking
        always scores 1.

    Raises
    ------
    ValueError
        If k is not an integer > 0.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred`` with labels ``y_true`` [MN]_

    .. math::

        \mathrm{Recall}@k(y) = \frac{\sum_{i=1}^{\min(k, |y|)} \mathrm{rel}(y_i)}{n_{rel}},

    where :math:`n_{rel} = \| y_{true} \|_1` if ``truncated`` is False (default) and
    :math:`n_{rel} = \min(\| y_{true} \|_1, k)` otherwise. (The original reference printed
    ``max`` here; the parameter's description, "clipped at k", is the definition.)

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: Recall@k is 0.
    2. There are no relevant items in ``y_true``: NaN. This marks invalid instances
       explicitly.

    References
    ----------
    .. [MN] C. D. Manning, P. Raghavan and H. Schütze: "Introduction to Information
       Retrieval". Cambridge University Press (2008).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Recall
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1]])
    >>> y_pred = Rankings.from_ranked_indices([[3,2,1], [1,2]])
    >>> Recall(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([0., 1.])
    """

    _metric = _kernels.METRIC_IDS["recall"]


class F1(_CutoffMetric):
    r"""F1@k: the harmonic mean of Precision@k and Recall@k.

    Parameters
    ----------
    k : int
        Number of top results of each ranking to evaluate (an integer > 0).
    truncated : bool, default=False
        Passed to both Precision@k and Recall@k.

    Raises
    ------
    ValueError
        If k is not an integer > 0.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred`` [MN]_

    .. math::

        \mathrm{F1}@k(y) = \frac{2 \cdot \mathrm{Precision}@k(y) \cdot \mathrm{Recall}@k(y)}
                                {\mathrm{Precision}@k(y) + \mathrm{Recall}@k(y)}.

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: Recall@k = Precision@k = 0, so F1@k = 0
       (also with ``truncated=True``, where Precision@k alone would be NaN).
    2. Recall@k = Precision@k = 0: F1@k is defined as 0.
    3. There are no relevant items in ``y_true``: NaN.

    References
    ----------
    .. [MN] C. D. Manning, P. Raghavan and H. Schütze: "Introduction to Information
       Retrieval". Cambridge University Press (2008).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, F1
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1]])
    >>> y_pred = Rankings.from_ranked_indices([[3,2,1], [1,2]])
    >>> F1(3).score(y_true, y_pred)  # doctest: +NORMALIZE_WHITESPACE
    array([0. , 0.5])
    """

    _metric = _kernels.METRIC_IDS["f1"]


class HitRate(_CutoffMetric):
    r"""HitRate@k: whether the single relevant item occurs in the top k.

    Differs from Recall@k in that ``y_true`` has to contain exactly one relevant item per
    row (leave-one-out evaluation).

    Parameters
    ----------
    k : int
        Number of top results of each ranking to evaluate (an integer > 0).
    truncated : bool, default=False
        Accepted for compatibility with the other cutoff metrics; it has no effect, since a
        hit within :math:`\min(k, |y|)` is a hit within k.

    Raises
    ------
    ValueError
        If k is not an integer > 0.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred`` [MN]_

    .. math::

        \mathrm{HitRate}@k(y) = \sum_{i=1}^{k'} \mathrm{rel}(y_i), \qquad k' = \min(k, |y|).

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: HitRate@k is 0.
    2. The label row does not contain exactly one relevant item: NaN (zero or several
       relevant items make "the hit" ill-defined; use Recall@k there).

    References
    ----------
    .. [MN] C. D. Manning, P. Raghavan and H. Schütze: "Introduction to Information
       Retrieval". Cambridge University Press (2008).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, HitRate
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0],[1]])
    >>> y_pred = Rankings.from_ranked_indices([[3,2,1], [1,2]])
    >>> HitRate(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([0., 1.])
    """

    _metric = _kernels.METRIC_IDS["hitrate"]


class ReciprocalRank(_CutoffMetric):
    r"""ReciprocalRank@k: one over the rank of the first relevant item in the top k.

    Its mean over rankings is the mean reciprocal rank (MRR@k).

    Parameters
    ----------
    k : int
        Number of top results of each ranking to evaluate (an integer > 0).

    Raises
    ------
    ValueError
        If k is not an integer > 0.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred`` [NC]_

    .. math::

        \mathrm{ReciprocalRank}@k(y) = \max_{i=1,\ldots,k'} \frac{\mathrm{rel}(y_i)}{i},
        \qquad k' = \min(k, |y|).

    Edge cases:

    1. The ranking is empty, or its first relevant item appears beyond rank k: 0.
    2. There is no relevant item in ``y_true``: NaN.

    References
    ----------
    .. [NC] N. Craswell: "Mean Reciprocal Rank", in: Encyclopedia of Database Systems.
       Springer (2009).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, ReciprocalRank
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1]])
    >>> y_pred = Rankings.from_ranked_indices([[3,0,1], [1,2]])
    >>> ReciprocalRank(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([0.5, 1. ])
    """

    _metric = _kernels.METRIC_IDS["reciprocal_rank"]
    _has_truncated = False

    def __init__(self, k):
        super().__init__(k)


class AP(_CutoffMetric):
    r"""AveragePrecision@k: precision averaged over the ranks of the relevant items.

    Parameters
    ----------
    k : int
        Number of top results of each ranking to evaluate (an integer > 0).

    Raises
    ------
    ValueError
        If k is not an integer > 0.

    Notes
    -----
    An approximation to the area under the precision-recall curve [MN]_:

    .. math::

        \mathrm{AP}@k(y) = \frac{1}{Z} \sum_{i=1}^{k'} \mathrm{rel}(y_i)\cdot
        \mathrm{Precision}@i(y), \qquad k' = \min(k, |y|), \qquad
        Z = \min\big(k, \| y_{true} \|_1\big).

    The denominator counts relevant items in the labels, not in the ranking: defining it by
    the retrieved items only would let AP be inflated by returning one relevant item at the
    top and filling the rest with irrelevant ones. (trec_eval's ``map_cut`` divides by
    :math:`\| y_{true} \|_1`; the two agree when there are at most k relevant items.)

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: 0.
    2. There are no relevant items in ``y_true``: NaN, consistent with the other metrics.
    3. There are no relevant items in the top k of the ranking: 0.

    References
    ----------
    .. [MN] C. D. Manning, P. Raghavan and H. Schütze: "Introduction to Information
       Retrieval". Cambridge University Press (2008).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, AP
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1,2,3]])
    >>> y_pred = Rankings.from_ranked_indices([[3,2,1], [1,2]])
    >>> AP(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([0. , 0.66666667])
    """

    _metric = _kernels.METRIC_IDS["ap"]
    _has_truncated = False

    def __init__(self, k):
        super().__init__(k)


class _WholeRankingMetric(Metric):
    """A binary metric over the whole ranking (no cutoff)."""

    def _score(self, y_true, y_pred):
        return self._run(y_true, y_pred, None)


class MeanRanks(_WholeRankingMetric):
    r"""MeanRanks: the mean rank of the relevant items that appear in the ranking.

    Used for evaluating permutations of the items; it takes no cutoff.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred``

    .. math::

        \mathrm{MeanRanks}(y) = \frac{\sum_{i=1}^{|y|} i\cdot\mathrm{rel}(y_i)}
                                      {\sum_{i=1}^{|y|} \mathrm{rel}(y_i)}.

    Relevant items missing from the ranking do not enter the mean (the formula above sums
    over the ranking only).

    Edge cases:

    1. There are relevant items in ``y_true`` but none appears in the ranking: +inf (the
       relevant items are ranked "after everything").
    2. There is no relevant item in ``y_true``: NaN.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, MeanRanks
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1]])
    >>> y_pred = Rankings.from_ranked_indices([[3,0,5], [1,2]])
    >>> MeanRanks().score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([2.5, 1. ])
    """

    _metric = _kernels.METRIC_IDS["mean_ranks"]


class FirstRelevantRank(_WholeRankingMetric):
    r"""FirstRelevantRank: the rank of the first relevant item in the ranking.

    Used for evaluating permutations of the items; it takes no cutoff.

    Notes
    -----
    For each ranking :math:`y` in ``y_pred``

    .. math::

        \mathrm{FirstRelevantRank}(y) = \min \{i \mid \mathrm{rel}(y_i) = 1\}.

    Edge cases:

    1. There are relevant items in ``y_true`` but none appears in the ranking: +inf (the
       minimum over an empty set).
    2. There is no relevant item in ``y_true``: NaN.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, FirstRelevantRank
    >>> # use separate labels for each ranking
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5],[1]])
    >>> y_pred = Rankings.from_ranked_indices([[3,0,5], [1,2]])
    >>> FirstRelevantRank().score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([2., 1.])
    """

    _metric = _kernels.METRIC_IDS["first_relevant_rank"]


_SCALINGS = {"identity": 0, "power": 1}
_LOG_BASES = {"e": np.log, "2": np.log2}


class DCG(Metric):
    r"""Discounted Cumulative Gain at k (DCG@k).

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking.
    relevance_scaling : {'identity', 'power'}, default='identity'
        How relevance labels are transformed: 'identity' uses
        :math:`f(\mathrm{rel}) = \mathrm{rel}`, 'power' uses
        :math:`f(\mathrm{rel}) = 2^{\mathrm{rel}} - 1`.
    log_base : {'e', '2'}, default='e'
        Base of the logarithm in the discount. The smaller, the heavier the emphasis on the
        top ranks.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None, or relevance_scaling or log_base are invalid.

    Notes
    -----
    A weighted sum of the relevance labels of the top k results [KJ]_:

    .. math::

        \mathrm{DCG}@k(y) = \sum_{i=1}^{k'} \frac{f(\mathrm{rel}(y_i))}{\log_b(i + 1)},
        \qquad k' = \min(k, |y|),

    with f the ``relevance_scaling`` and b the ``log_base``. The original definition uses
    'identity' and leaves the base open; trec_eval's ``ndcg_cut`` uses 'identity' with base 2.
    'power' is :math:`2^{\mathrm{rel}} - 1` exactly (the original rankerEval computed
    :math:`\mathrm{rel}^2 - 1`).

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: 0.
    2. There are no items with relevance > 0 in ``y_true``: NaN, consistent with the other
       metrics.

    References
    ----------
    .. [KJ] K. Järvelin, J. Kekäläinen: "Cumulated gain-based evaluation of IR
       techniques". ACM Transactions on Information Systems 20(4), 422-446 (2002).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, DCG
    >>> # use separate labels for each ranking
    >>> y_true = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    >>> y_pred = Rankings.from_ranked_indices([[0,2,1], [1,0]])
    >>> DCG(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([ 5.61610776, 10.85443211])
    """

    _metric = _kernels.METRIC_IDS["dcg"]
    _binary_only = False

    def __init__(self, k=None, relevance_scaling="identity", log_base="e"):
        self.k = _check_k(k, allow_none=True)
        if relevance_scaling not in _SCALINGS:
            raise ValueError(f"relevance_scaling must be 'identity' or 'power', got {relevance_scaling!r}")
        if log_base not in _LOG_BASES:
            raise ValueError(f"log_base must be 'e' or '2', got {log_base!r}")
        self.relevance_scaling = relevance_scaling
        self.log_base = log_base

    def _params(self):
        return {"k": self.k, "relevance_scaling": self.relevance_scaling, "log_base": self.log_base}

    def _discounts(self, n):
        """1 / log_b(i + 1) for ranks i = 1 .. n."""
        return 1.0 / _LOG_BASES[self.log_base](np.arange(2, n + 2, dtype=np.float64))

    def _score(self, y_true, y_pred, norm=None):
        disc = self._discounts(y_pred.indices.shape[1] + 1)
        return self._run(y_true, y_pred, self.k, disc=disc, power=_SCALINGS[self.relevance_scaling], norm=norm)


class NDCG(DCG):
    r"""Normalized Discounted Cumulative Gain at k (nDCG@k), in [0, 1].

    Takes the same arguments as :class:`DCG`.

    Notes
    -----
    DCG@k normalised by the best DCG@k achievable with the row's labels [KJ]_:

    .. math::

        \mathrm{nDCG}@k(y) = \begin{cases}
            \frac{\mathrm{DCG}@k(y)}{\mathrm{IDCG}@k(y)} & \text{if } \mathrm{IDCG}@k(y) > 0 \\
            0 & \text{otherwise}
        \end{cases}

    where :math:`\mathrm{IDCG}@k(y)` is the DCG@k of the label row's own values sorted in
    decreasing order (with ``k=None``, of all of them). IDCG is defined by all relevance
    labels, not by the retrieved items only: the latter would let nDCG be inflated by
    returning one relevant item at the top and filling up with irrelevant ones.

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: DCG@k is 0, so nDCG@k is 0.
    2. There are no items with relevance > 0 in ``y_true``: NaN, consistent with the other
       metrics.
    3. There are no items with relevance > 0 in the top k of the ranking: 0.

    References
    ----------
    .. [KJ] K. Järvelin, J. Kekäläinen: "Cumulated gain-based evaluation of IR
       techniques". ACM Transactions on Information Systems 20(4), 422-446 (2002).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, NDCG
    >>> # use separate labels for each ranking
    >>> y_true = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    >>> y_pred = Rankings.from_ranked_indices([[0,2,1], [1,0]])
    >>> NDCG(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([0.81749351, 1.        ])
    """

    def _ideal(self, y_true):
        """IDCG@k of every label row, from the row's own values (top k selected, not sorted)."""
        n_pos = y_true.n_positives
        longest = int(n_pos.max()) if n_pos.size else 0
        m = longest if self.k is None else min(self.k, longest)
        disc = self._discounts(m + 1)
        if isinstance(y_true, BinaryLabels):
            # every gain is 1: IDCG is a prefix sum of the discounts
            prefix = np.concatenate(([np.nan], np.cumsum(disc)))
            cut = n_pos if self.k is None else np.minimum(n_pos, self.k)
            return prefix[cut]
        out = np.empty(y_true.n_rows, dtype=np.float64)
        _kernels.ideal_dcg(
            y_true.indptr, y_true.values, -1 if self.k is None else self.k, disc,
            _SCALINGS[self.relevance_scaling], out, _n_threads(y_true.values.size),
        )
        if np.isinf(out).any():
            row = int(np.flatnonzero(np.isinf(out))[0])
            raise ValueError(
                f"the ideal DCG of label row {row} overflows float64 (labels up to "
                f"{y_true.values[y_true.indptr[row]:y_true.indptr[row + 1]].max():g} with "
                f"relevance_scaling={self.relevance_scaling!r}); NDCG is undefined there"
            )
        return out

    def _score(self, y_true, y_pred):
        return super()._score(y_true, y_pred, norm=self._ideal(y_true))
