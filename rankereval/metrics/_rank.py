"""Rank-based metrics: where the relevant items are (ReciprocalRank, MeanRanks,
FirstRelevantRank, and scikit-learn's multilabel ranking metrics CoverageError and
LabelRankingLoss). Each needs :class:`~rankereval.BinaryLabels`.
"""
from rankereval.metrics._base import MetricInfo, _OptionalCutoffMetric, _WholeRankingMetric


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


class CoverageError(_OptionalCutoffMetric):
    r"""CoverageError@k: how far down the ranking one must go to cover every relevant item.

    scikit-learn's ``coverage_error`` (multilabel ranking) for a ranking: the rank of the
    last relevant item, where the items outside the top k (or outside the ranking) share
    the last ranks, tied.

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None.

    Notes
    -----
    For a ranking :math:`y` with relevant items :math:`R`, over a catalogue of :math:`N`
    items (the labels' ``n_items``, or one more than the largest id of the ranking if
    that is larger: item ids are ``0 .. N - 1``) [TK]_

    .. math::

        \mathrm{CoverageError}@k(y) = \begin{cases}
            \max \{i \le k' \mid y_i \in R\} & \text{if every item of } R \text{ is in } y_1..y_{k'},\\
            N & \text{otherwise,}
        \end{cases} \qquad k' = \min(k, |y|).

    This is scikit-learn's :math:`|\{j : s_j \ge \min_{r \in R} s_r\}|` for scores
    :math:`s` whose order is the ranking (larger scores first, every item outside the top
    :math:`k'` at one lower score): a relevant item outside the top :math:`k'` ties with
    every other such item, and scikit-learn counts every tied item as ranked above it.
    Lower is better; the best value is :math:`|R|`.

    Edge cases:

    1. A relevant item is outside the top :math:`k'` (or the ranking is empty): :math:`N`.
    2. There is no relevant item in ``y_true``: NaN (scikit-learn gives 0).

    References
    ----------
    .. [TK] G. Tsoumakas, I. Katakis and I. Vlahavas: "Mining Multi-label Data", in: Data
       Mining and Knowledge Discovery Handbook. Springer (2010).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, CoverageError
    >>> y_true = BinaryLabels.from_positive_indices([[0, 2], [1]])
    >>> y_pred = Rankings.from_ranked_indices([[2, 3, 0, 1], [3, 2]])
    >>> CoverageError().score(y_true, y_pred)
    array([3., 4.])
    """

    info = MetricInfo(
        name="coverageerror", kernel="coverage_error", cutoff="optional",
        summary="CoverageError@k: rank of the last relevant item (N if one is not ranked); "
                "scikit-learn's coverage_error",
        value_range=(1.0, float("inf")), higher_is_better=False,
    )


class LabelRankingLoss(_OptionalCutoffMetric):
    r"""LabelRankingLoss@k: the fraction of (relevant, non-relevant) pairs in the wrong order.

    scikit-learn's ``label_ranking_loss`` (multilabel ranking) for a ranking, where the
    items outside the top k (or outside the ranking) share the last ranks, tied.

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None.

    Notes
    -----
    For a ranking :math:`y` with relevant items :math:`R`, over a catalogue of :math:`N`
    items (the labels' ``n_items``, or one more than the largest id of the ranking if
    that is larger: item ids are ``0 .. N - 1``) [TK]_

    .. math::

        \mathrm{LabelRankingLoss}@k(y) = \frac{\left|\{(r, j) \in R \times \bar R \mid
            \mathrm{rank}(j) \le \mathrm{rank}(r)\}\right|}{|R| \, (N - |R|)},

    where :math:`\bar R` are the :math:`N - |R|` non-relevant items and an item outside the
    top :math:`k' = \min(k, |y|)` has the tied rank :math:`k' + 1`. A pair is in the wrong
    order when the non-relevant item is ranked above the relevant one or tied with it (as
    scikit-learn counts :math:`s_r \le s_j`, for scores whose order is the ranking): each
    relevant item at rank :math:`i \le k'` counts the non-relevant items above it, each
    relevant item outside the top :math:`k'` counts all :math:`N - |R|`. Lower is better.

    Edge cases:

    1. Every relevant item is outside the top :math:`k'` (or the ranking is empty): 1.
    2. There is no relevant item in ``y_true``, or every item of the catalogue is relevant
       (no pair to order): NaN (scikit-learn gives 0).

    References
    ----------
    .. [TK] G. Tsoumakas, I. Katakis and I. Vlahavas: "Mining Multi-label Data", in: Data
       Mining and Knowledge Discovery Handbook. Springer (2010).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, LabelRankingLoss
    >>> y_true = BinaryLabels.from_positive_indices([[0, 2], [1]])
    >>> y_pred = Rankings.from_ranked_indices([[2, 3, 0, 1], [3, 2]])
    >>> LabelRankingLoss().score(y_true, y_pred)
    array([0.25, 1.  ])
    """

    info = MetricInfo(
        name="labelrankingloss", kernel="label_ranking_loss", cutoff="optional", aliases=("lrloss",),
        summary="LabelRankingLoss@k: fraction of (relevant, non-relevant) pairs in the wrong order; "
                "scikit-learn's label_ranking_loss",
        undefined="its labels have no relevant item, or every item is relevant",
        higher_is_better=False,
    )
