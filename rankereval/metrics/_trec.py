r"""trec_eval's measures beyond precision, recall, AP and NDCG: R-precision, the counts,
interpolated precision, GMAP, and the two that need judgments (bpref, Judged@k).

Each needs :class:`~rankereval.BinaryLabels` (an item is relevant or not). Bpref and Judged
also need to know which items were judged: labels with judgments (:attr:`Labels.judged
<rankereval.BinaryLabels.judged>`, filled by :mod:`rankereval.io`).
"""
from rankereval.metrics._base import Metric, MetricInfo, RealParam, _OptionalCutoffMetric, _WholeRankingMetric


class RPrecision(_WholeRankingMetric):
    r"""R-precision: precision at R, the number of relevant items (trec_eval's ``Rprec``).

    Notes
    -----
    With :math:`R = \| y_{true} \|_1` [BV]_

    .. math::

        \mathrm{RPrecision}(y) = \frac{1}{R} \sum_{i=1}^{\min(R, |y|)} \mathrm{rel}(y_i).

    It is the point where precision equals recall. A ranking shorter than R counts the
    missing ranks as not relevant (the division is by R).

    Edge cases:

    1. The ranking is empty: 0.
    2. There are no relevant items in ``y_true``: NaN (trec_eval scores 0; use
       ``nan_handling="zerofill"`` for its mean).

    References
    ----------
    .. [BV] C. Buckley and E. M. Voorhees: "Retrieval System Evaluation", in: TREC:
       Experiment and Evaluation in Information Retrieval. MIT Press (2005).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, RPrecision
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
    >>> y_pred = Rankings.from_ranked_indices([[5, 2, 0], [1, 4]])
    >>> RPrecision().score(y_true, y_pred)
    array([0.5       , 0.33333333])
    """

    info = MetricInfo(
        name="rprec", kernel="rprec", cutoff="none", aliases=("rprecision",),
        summary="R-precision: precision at R, the number of relevant items (trec_eval Rprec)",
    )


class NumRelevant(_WholeRankingMetric):
    r"""The number of relevant items of the label row (trec_eval's ``num_rel``).

    Notes
    -----
    :math:`\| y_{true} \|_1`, whatever the ranking. Always defined: a row without relevant
    items gives 0. (trec_eval's summary line is the sum over queries, not the mean: multiply
    the mean by the number of queries.)

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NumRelevant
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], []])
    >>> NumRelevant().score(y_true, Rankings.from_ranked_indices([[5, 2], [1]]))
    array([2., 0.])
    """

    info = MetricInfo(
        name="numrel", kernel="num_rel", cutoff="none", aliases=("numrelevant",),
        summary="Number of relevant items of the labels (trec_eval num_rel)",
        undefined=None, value_range=(0.0, float("inf")),
    )


class NumRetrieved(_OptionalCutoffMetric):
    r"""The number of ranked items within the cutoff (trec_eval's ``num_ret``).

    Parameters
    ----------
    k : int or None, default=None
        Count only the top k (an integer > 0); None counts the whole ranking.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None.

    Notes
    -----
    :math:`\min(k, |y|)`. Always defined, also without relevant items. (trec_eval's
    summary line is the sum over queries.)

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NumRetrieved
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], []])
    >>> y_pred = Rankings.from_ranked_indices([[5, 2, 0], [1]])
    >>> NumRetrieved().score(y_true, y_pred), NumRetrieved(2).score(y_true, y_pred)
    (array([3., 1.]), array([2., 1.]))
    """

    info = MetricInfo(
        name="numret", kernel="num_ret", cutoff="optional", aliases=("numretrieved",),
        summary="Number of ranked items in the top k (trec_eval num_ret)",
        undefined=None, value_range=(0.0, float("inf")),
    )


class NumRelevantRetrieved(_OptionalCutoffMetric):
    r"""The number of relevant items within the cutoff (trec_eval's ``num_rel_ret``).

    Parameters
    ----------
    k : int or None, default=None
        Count only the top k (an integer > 0); None counts the whole ranking.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None.

    Notes
    -----
    :math:`\sum_{i=1}^{\min(k, |y|)} \mathrm{rel}(y_i)`. Always defined: 0 without relevant
    items. (trec_eval's summary line is the sum over queries.)

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NumRelevantRetrieved
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], []])
    >>> y_pred = Rankings.from_ranked_indices([[5, 2, 0], [1]])
    >>> NumRelevantRetrieved().score(y_true, y_pred)
    array([2., 0.])
    """

    info = MetricInfo(
        name="numrelret", kernel="num_rel_ret", cutoff="optional", aliases=("numrelevantretrieved",),
        summary="Number of relevant items in the top k (trec_eval num_rel_ret)",
        undefined=None, value_range=(0.0, float("inf")),
    )


class InterpolatedPrecision(Metric):
    r"""Interpolated precision at a recall level (trec_eval's ``iprec_at_recall_x``).

    Parameters
    ----------
    recall_level : float
        The recall level, in [0, 1] (trec_eval reports 0.0, 0.1, ..., 1.0).

    Raises
    ------
    ValueError
        If recall_level is not a number in [0, 1].

    Notes
    -----
    trec_eval 10's definition exactly [BV2]_: the level becomes a number of relevant items
    :math:`c = \mathrm{lround}(\ell R)` (:math:`R = \| y_{true} \|_1`, rounded half away
    from zero), and the value is the highest precision at any rank where at least c
    relevant items have been retrieved:

    .. math::

        \mathrm{iprec}_\ell(y) = \max \{ \mathrm{Precision}@i(y) : 1 \le i \le |y|,\;
        \textstyle\sum_{j \le i} \mathrm{rel}(y_j) \ge \max(c, 1) \},

    and 0 when fewer than :math:`\max(c, 1)` relevant items are in the ranking (the
    maximum is reached at the rank of a relevant item). trec_eval 9 and pytrec_eval round
    with :math:`c = \lfloor \ell R + 0.9 \rfloor` instead; the two differ when the
    fractional part of :math:`\ell R` lies in [0.1, 0.5) and :math:`\ell R > 1`, e.g.
    :math:`\ell = 0.2, R = 7`: lround(1.4) = 1, but :math:`\lfloor 2.3 \rfloor = 2`.

    Edge cases:

    1. The ranking is empty: 0.
    2. There are no relevant items in ``y_true``: NaN (trec_eval: 0).

    References
    ----------
    .. [BV2] C. Buckley and E. M. Voorhees: "Retrieval System Evaluation", in: TREC:
       Experiment and Evaluation in Information Retrieval. MIT Press (2005).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, InterpolatedPrecision
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2, 3]])
    >>> y_pred = Rankings.from_ranked_indices([[1, 9, 2, 3]])
    >>> # c = lround(0.5 * 3) = 2: precisions at ranks 3 and 4 are 2/3 and 3/4
    >>> InterpolatedPrecision(0.5).score(y_true, y_pred)
    array([0.75])
    """

    info = MetricInfo(
        name="iprec", kernel="iprec", cutoff="none", aliases=("interpolatedprecision",),
        summary="Interpolated precision at a recall level, iprec@0.1 (trec_eval iprec_at_recall_x)",
        reals={"recall_level": RealParam(0.0, 1.0, (0.0, 0.1, 0.3, 0.5, 0.7, 1.0))},
        at="recall_level",
    )

    def __init__(self, recall_level):
        self.recall_level = self.info.reals["recall_level"].check(recall_level, "recall_level")

    def _kernel_args(self, y_true, y_pred):
        return {"k": None, "param": self.recall_level}


class GMAP(_WholeRankingMetric):
    r"""Geometric mean average precision (trec_eval's ``gm_map``).

    Per ranking the same value as ``AP()`` (the whole ranking, divided by the number of
    relevant items); :meth:`~rankereval.Metric.mean` (and :func:`rankereval.evaluate`)
    average geometrically, with every score floored at :math:`10^{-5}` first (trec_eval's
    ``MIN_GEO_MEAN``):

    .. math::

        \mathrm{GMAP} = \exp\Big(\frac{1}{n} \sum_{q=1}^{n} \log \max(\mathrm{AP}_q, 10^{-5})\Big).

    Notes
    -----
    GMAP rewards systems that do not fail on any query [RO]_. The per-ranking scores are
    AP itself, not its logarithm, so that
    ``nan_handling="zerofill"`` counts an undefined ranking as AP 0 (floored to
    :math:`10^{-5}`, as trec_eval does for a judged query without relevant documents). The
    bootstrap resamples the logarithms and maps the mean, the distribution and the interval
    back with exp (percentile and BCa intervals follow a monotone map; the standard error is
    that of the mapped distribution). trec_eval prints gm_map only in its summary; pytrec_eval
    reports :math:`\log \max(\mathrm{AP}_q, 10^{-5})` per query.

    Edge cases: those of :class:`AP` (NaN without relevant items, 0 for an empty ranking).

    References
    ----------
    .. [RO] S. Robertson: "On GMAP: and other transformations". CIKM 2006.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, GMAP
    >>> y_true = BinaryLabels.from_positive_indices([[0], [1]])
    >>> y_pred = Rankings.from_ranked_indices([[0], [2, 3, 1, 4]])
    >>> GMAP().score(y_true, y_pred)
    array([1.  , 0.33333333])
    >>> round(GMAP().mean(y_true, y_pred), 6)  # sqrt(1 * 1/3)
    0.57735
    """

    info = MetricInfo(
        name="gmap", kernel="ap", cutoff="none", aliases=("gm_map", "geometricmap"),
        summary="GMAP: AP per ranking, averaged geometrically (trec_eval gm_map)",
        aggregate="geometric",
    )


class Bpref(_WholeRankingMetric):
    r"""Binary preference (trec_eval's ``bpref``): how many judged non-relevant items are
    ranked above each relevant one. Needs labels with judgments.

    Notes
    -----
    With R relevant and N judged non-relevant items in the labels [BV04]_, and
    :math:`n_r` the number of judged non-relevant items ranked above the relevant item r,

    .. math::

        \mathrm{bpref}(y) = \frac{1}{R} \sum_{r \text{ relevant, retrieved}}
        \Big(1 - \frac{\min(n_r, R)}{\min(N, R)}\Big),

    where a term with :math:`n_r = 0` is 1 (also when N = 0). Unjudged items are skipped:
    they neither count as non-relevant nor move the relevant ones. trec_eval 10's code
    exactly; a grade below 0 in a qrels file is "in the pool but not judged" there and in
    :mod:`rankereval.io`.

    Edge cases:

    1. The ranking is empty: 0.
    2. There are no relevant items in ``y_true``: NaN (trec_eval: 0).
    3. The labels carry no judgments: ValueError.

    References
    ----------
    .. [BV04] C. Buckley and E. M. Voorhees: "Retrieval evaluation with incomplete
       information". SIGIR 2004.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Bpref
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2]]).with_judged([[1, 2, 7, 8]])
    >>> # 7 (judged, not relevant), 5 (unjudged), 1 (relevant, 1 above), 2 (1 above)
    >>> Bpref().score(y_true, Rankings.from_ranked_indices([[7, 5, 1, 2]]))
    array([0.5])
    """

    info = MetricInfo(
        name="bpref", kernel="bpref", cutoff="none", judged=True,
        summary="bpref: relevant items ranked above judged non-relevant ones (trec_eval bpref)",
    )

    def _kernel_args(self, y_true, y_pred):
        return {"k": None, "judged": True}


class GMBpref(Bpref):
    r"""Bpref averaged geometrically (trec_eval's ``gm_bpref``). Needs labels with judgments.

    Per ranking the same value as :class:`Bpref`; :meth:`~rankereval.Metric.mean` (and
    :func:`rankereval.evaluate`) average geometrically with every score floored at
    :math:`10^{-5}`, as :class:`GMAP` does for AP:

    .. math::

        \mathrm{GMBpref} = \exp\Big(\frac{1}{n} \sum_{q=1}^{n} \log \max(\mathrm{bpref}_q, 10^{-5})\Big).

    Notes
    -----
    trec_eval prints gm_bpref only in its summary. Edge cases: those of :class:`Bpref`.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, GMBpref
    >>> y_true = BinaryLabels.from_positive_indices([[1], [1]]).with_judged([[1, 7], [1, 7]])
    >>> y_pred = Rankings.from_ranked_indices([[1, 7], [7, 1]])
    >>> GMBpref().score(y_true, y_pred)
    array([1., 0.])
    >>> round(GMBpref().mean(y_true, y_pred), 6)  # sqrt(1 * 1e-5)
    0.003162
    """

    info = MetricInfo(
        name="gmbpref", kernel="bpref", cutoff="none", judged=True, aliases=("geometricbpref",),
        summary="GM-bpref: bpref per ranking, averaged geometrically (trec_eval gm_bpref)",
        aggregate="geometric",
    )


class Judged(_OptionalCutoffMetric):
    r"""Judged@k: the fraction of the top k that is judged (ir_measures' ``Judged@k``).
    Needs labels with judgments.

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
    .. math::

        \mathrm{Judged}@k(y) = \frac{|\{ i \le k' : y_i \text{ judged} \}|}{k'},
        \qquad k' = \min(k, |y|),

    the division by the items there are, like ``Precision(k, truncated=True)`` and ir_measures'
    ``Judged@k``. Relevant and non-relevant judged items count alike. Judged means in the
    labels' judgments or their pool: every line of a qrels file counts, also one with a negative
    grade, as ir_measures' ``Judged`` counts them (a negative grade is "in the pool, not
    judged" for :class:`Bpref` and :class:`InfAP`, trec_eval's convention, but it is a line of
    the qrels all the same).

    Edge cases:

    1. The ranking is empty: NaN (no item to judge).
    2. The label row has no judged item: NaN (ir_measures leaves such queries out).
    3. The labels carry no judgments: ValueError.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Judged
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2]]).with_judged([[1, 2, 7, 8]])
    >>> Judged(4).score(y_true, Rankings.from_ranked_indices([[7, 5, 1, 3]]))
    array([0.5])
    """

    info = MetricInfo(
        name="judged", kernel="judged", cutoff="optional", judged=True,
        summary="Judged@k: fraction of the top k that is judged (ir_measures Judged@k)",
        undefined="its labels have no judged item or its ranking is empty",
    )

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k, "judged": "pool"}


__all__ = ["RPrecision", "NumRelevant", "NumRetrieved", "NumRelevantRetrieved",
           "InterpolatedPrecision", "GMAP", "Bpref", "GMBpref", "Judged"]
