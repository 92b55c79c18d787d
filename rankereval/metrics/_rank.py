"""Rank-based metrics: where the relevant items are (ReciprocalRank, MeanRanks,
FirstRelevantRank). Each needs :class:`~rankereval.BinaryLabels`.
"""
from rankereval.metrics._base import Metric, MetricInfo, _OptionalCutoffMetric


class _WholeRankingMetric(Metric):
    """A binary metric over the whole ranking (no cutoff)."""

    def __init__(self):
        pass

    def _kernel_args(self, y_true, y_pred):
        return {"k": None}


class ReciprocalRank(_OptionalCutoffMetric):
    r"""ReciprocalRank@k: one over the rank of the first relevant item in the top k.

    Its mean over rankings is the mean reciprocal rank (MRR@k).

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking (trec_eval's ``recip_rank``).

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None.

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

    info = MetricInfo(
        name="rr", kernel="reciprocal_rank", cutoff="optional",
        aliases=("mrr", "reciprocalrank", "recip_rank"),
        summary="ReciprocalRank@k: 1 / rank of the first relevant item (mean: MRR); "
                "no @k: the whole ranking",
    )


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

    info = MetricInfo(
        name="meanranks", kernel="mean_ranks", cutoff="none", aliases=("meanrank",),
        summary="MeanRanks: mean rank of the relevant items in the ranking",
        value_range=(1.0, float("inf")), higher_is_better=False,
    )


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

    info = MetricInfo(
        name="firstrelevantrank", kernel="first_relevant_rank", cutoff="none", aliases=("frr",),
        summary="FirstRelevantRank: rank of the first relevant item",
        value_range=(1.0, float("inf")), higher_is_better=False,
    )
