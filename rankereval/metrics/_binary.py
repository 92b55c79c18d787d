"""Binary-relevance metrics of the top k: Precision, Recall, F1, HitRate, AP and Success.

Each needs :class:`~rankereval.BinaryLabels` (an item is relevant or not).
"""
from rankereval._validation import check_choice, check_k
from rankereval.metrics._base import Metric, MetricInfo, _CutoffMetric, _OptionalCutoffMetric


_DENOMINATORS = ("min", "relevant")


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

    info = MetricInfo(
        name="p", kernel="precision", aliases=("precision", "prec"),
        summary="Precision@k: fraction of the top k that is relevant",
    )


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

    info = MetricInfo(
        name="recall", kernel="recall", aliases=("r",),
        summary="Recall@k: fraction of the relevant items in the top k",
    )


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

    info = MetricInfo(
        name="f1", kernel="f1", aliases=("f",),
        summary="F1@k: harmonic mean of Precision@k and Recall@k",
    )


class HitRate(_CutoffMetric):
    r"""HitRate@k: whether the single relevant item occurs in the top k.

    Differs from Recall@k in that ``y_true`` has to contain exactly one relevant item per
    row (leave-one-out evaluation). To ask "is any relevant item in the top k" with several
    relevant items, use :class:`Success` (trec_eval's ``success_k``).

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

    info = MetricInfo(
        name="hitrate", kernel="hitrate", aliases=("hr", "hit"),
        summary="HitRate@k: the single relevant item is in the top k (leave-one-out)",
        undefined="its labels do not hold exactly one relevant item (HitRate is for "
                  "leave-one-out data; for 'any relevant item in the top k' use Success@k)",
    )


class AP(_OptionalCutoffMetric):
    r"""AveragePrecision@k: precision averaged over the ranks of the relevant items.

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking, with :math:`Z = \| y_{true} \|_1` (trec_eval's ``map``).
    denominator : {'min', 'relevant'}, default='min'
        'min': :math:`Z = \min(k, \| y_{true} \|_1)`, so that a perfect top k scores 1;
        'relevant': :math:`Z = \| y_{true} \|_1` (trec_eval's ``map_cut_k``, ranx's and
        ir_measures' ``map@k``/``AP@k``; name ``ap@k[relevant]``). The same for ``k=None``.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None, or denominator is not 'min' or 'relevant'.

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
    :math:`\| y_{true} \|_1`, which ``denominator='relevant'`` gives; the two agree when
    there are at most k relevant items.)

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

    info = MetricInfo(
        name="ap", kernel="ap", cutoff="optional", aliases=("map", "averageprecision"),
        summary="AP@k: average precision (mean: MAP); no @k: the whole ranking, "
                "trec_eval's map; ap@k[relevant]: divided by all relevant items (map_cut_k)",
        choices={"denominator": _DENOMINATORS}, tokens={"relevant": ("denominator", "relevant")},
    )

    def __init__(self, k=None, denominator="min"):
        super().__init__(k)
        self.denominator = check_choice(denominator, _DENOMINATORS, "denominator")

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k, "kernel": "ap" if self.denominator == "min" else "ap_relevant"}


class Success(Metric):
    r"""Success@k: 1 if any relevant item is in the top k, else 0.

    trec_eval's ``success_k``, ranx's ``hit_rate@k``, torchmetrics' ``RetrievalHitRate``.
    Unlike :class:`HitRate`, any number of relevant items is allowed.

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
    For each ranking :math:`y` in ``y_pred``

    .. math::

        \mathrm{Success}@k(y) = \max_{i=1,\ldots,k'} \mathrm{rel}(y_i), \qquad k' = \min(k, |y|).

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: 0.
    2. There is no relevant item in ``y_true``: NaN (trec_eval scores such a judged query
       0 and counts it; use ``nan_handling="zerofill"`` for its mean).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Success
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2], []])
    >>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [2, 1], [0]])
    >>> Success(3).score(y_true, y_pred)
    array([ 0.,  1., nan])
    """

    info = MetricInfo(
        name="success", kernel="success", aliases=("s",),
        summary="Success@k: 1 if any relevant item is in the top k (trec_eval success_k)",
    )

    def __init__(self, k):
        self.k = check_k(k)

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k}
