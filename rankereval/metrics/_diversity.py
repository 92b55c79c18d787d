r"""Intent-aware diversity measures: ndeval's family (TREC Web track 2009-2014).

alpha-nDCG, ERR-IA, P-IA, MAP-IA, subtopic recall and NRBP read labels with a judgement per
intent (subtopic) of each query, :class:`~rankereval.IntentLabels`; an item is relevant to
an intent when its grade for that intent is at least ``rel`` (default 1: ndeval's positive
judgement, grades above 1 counting as 1; ``rel`` is pyndeval's and ir_measures'
``relevance_level`` / ``rel=``). Every measure of the family takes ``rel``; the
``relevance_level`` of :func:`rankereval.evaluate` (which thresholds the labels of binary
metrics) does not apply to them. They are equal to ndeval 4.5 (``ndeval.c`` of the TREC Web track, as
ir_measures' ``pyndeval`` provider runs it), with two differences:

* a query whose labels have no relevant item for any intent is NaN (ndeval: 0), as every
  metric of the package; ``nan_handling="zerofill"`` gives ndeval's mean;
* alpha-DCG@1 and ERR-IA@1 are divided by the ideal-ideal gain at rank 1, as at every other
  cutoff (ndeval leaves the first rank undivided: its values there are the number of intents
  the first item covers).

The intents of a query are those with at least one relevant item (ndeval's
``actualSubtopics``), all of weight :math:`1 / |S|` (ndeval's uniform intent weights).
Normalised measures divide by the same measure of ndeval's greedy ideal ranking: at each
rank, the item of largest gain given the items above it (ties to the larger document name
when read by :mod:`rankereval.io`, else to the larger item id). The best ranking is NP-hard to
find; the greedy one is not always the best, so alpha-nDCG, nERR-IA and nNRBP can exceed 1.
"""
import math

import numpy as np

import rankereval.metrics._diversity_kernel as _kernel
from rankereval._threads import effective_n_threads
from rankereval._validation import check_k
from rankereval.data._intents import check_intent_labels
from rankereval.metrics._base import _DIVERSITY_SCORER, Metric, MetricInfo, RealParam

#: the pseudo-kernel of the family (``MetricInfo.kernel``): scored by :func:`score_diversity`
KERNEL = "diversity"
#: the labels the family reads (``MetricInfo.labels``)
LABELS = "intents"

_UNDEFINED = "its labels have no item relevant to any intent"
_ALPHA = RealParam(0.0, 1.0, (0.5, 0.25, 1.0))
_BETA = RealParam(0.0, 1.0, (0.5, 0.8))
#: the grade from which an item is relevant to an intent (ndeval: any positive judgement, 1)
_REL = RealParam(0.0, math.inf, (1.0, 2.0), low_open=True)


def score_diversity(metrics, y_true, y_pred):
    """Scores of the diversity metrics ``metrics`` (checked inputs), one column each: every
    ranking looked up once in its label row, then each metric reduced from the hits."""
    check_intent_labels(y_true, metrics[0].name)
    rels = sorted({x.rel for x in metrics})
    if len(rels) > 1:  # one pass per relevance level (the intents that count depend on it)
        out = np.empty((y_pred.n_rows, len(metrics)), dtype=np.float64)
        for rel in rels:
            cols = [j for j, x in enumerate(metrics) if x.rel == rel]
            out[:, cols] = score_diversity([metrics[j] for j in cols], y_true, y_pred)
        return out
    rel = rels[0]
    kern = _kernel
    m = len(metrics)
    ids = np.array([kern.KERNEL_IDS[type(x).kernel_name] for x in metrics], dtype=np.int32)
    ks = np.array([-1 if getattr(x, "k", None) is None else x.k for x in metrics], dtype=np.int64)
    alphas = np.array([getattr(x, "alpha", 0.5) for x in metrics], dtype=np.float64)
    betas = np.array([getattr(x, "beta", 0.5) for x in metrics], dtype=np.float64)
    # one greedy ideal per distinct alpha of the normalised metrics, to the deepest rank they read
    group = np.zeros(m, dtype=np.int32)
    group_alpha, group_depth = [], []
    for j, x in enumerate(metrics):
        if ids[j] not in kern.NORMALISED:
            continue
        if ids[j] == kern.KERNEL_IDS["nnrbp"]:
            depth = _nrbp_depth(betas[j], int(y_true.n_intents.max(initial=0)))
        else:
            depth = -1 if ks[j] < 0 else int(ks[j])
        if alphas[j] in group_alpha:
            g = group_alpha.index(alphas[j])
            if group_depth[g] >= 0:
                group_depth[g] = -1 if depth < 0 else max(group_depth[g], depth)
        else:
            g = len(group_alpha)
            group_alpha.append(alphas[j])
            group_depth.append(depth)
        group[j] = g
    if not group_alpha:  # no normalised metric: a greedy of no rank (the kernel needs a group)
        group_alpha, group_depth = [0.5], [0]
    n_rows = y_true.n_rows
    norms = np.empty((n_rows, m), dtype=np.float64)
    actual = np.empty(n_rows, dtype=np.int64)
    order = y_true.order
    entry_ptr, intents, grades, n_int = (y_true.entry_ptr, y_true.entry_intents, y_true.entry_grades,
                                         y_true.n_intents)
    kern.ideals(y_true.indptr, entry_ptr, intents, grades, n_int,
                np.empty(0, dtype=np.int64) if order is None else order, rel, ids, ks, alphas, betas,
                group, np.array(group_alpha, dtype=np.float64), np.array(group_depth, dtype=np.int64), norms,
                actual, effective_n_threads(max(int(y_true.indices.shape[0]), 1) * max(len(group_alpha), 1)))
    ranks = y_pred.indices
    out = np.empty((y_pred.n_rows, m), dtype=np.float64)
    indices = y_true.indices
    kern.score(y_true.indptr, indices, entry_ptr, intents, grades, n_int, rel, ranks, y_pred.lengths,
               ids, ks, alphas, betas, norms, actual, out, effective_n_threads(ranks.size))
    return out


def _nrbp_depth(beta, max_intents):
    """The ranks of the greedy ideal that can change its NRBP: a rank's term is at most
    ``max_intents * beta**t``, and once that is below 2**-56 the sum (at least 1, the first
    rank's gain) no longer changes in double precision; -1 (every rank) for beta = 1."""
    if beta >= 1.0:
        return -1
    if beta <= 0.0:
        return 1
    return int(math.ceil((-56 * math.log(2.0) - math.log(max(max_intents, 1))) / math.log(beta))) + 1


_DIVERSITY_SCORER[0] = score_diversity


class _DiversityMetric(Metric):
    """A measure of the intent-aware family (scored by :func:`score_diversity`)."""

    #: the measure's id in the kernel (``_diversity_kernel.KERNEL_IDS``)
    kernel_name = None

    def _check_inputs(self, y_true, y_pred):
        check_intent_labels(y_true, self.name)
        super()._check_inputs(y_true, y_pred)

    def _kernel_args(self, y_true, y_pred):  # (scored by score_diversity, not the hit kernel)
        return {"k": getattr(self, "k", None)}


class _CutoffAlpha(_DiversityMetric):
    def __init__(self, k=None, alpha=0.5, rel=1.0):
        self.k = check_k(k, allow_none=True)
        self.alpha = _ALPHA.check(alpha, "alpha")
        self.rel = _REL.check(rel, "rel")


class _Cutoff(_DiversityMetric):
    def __init__(self, k=None, rel=1.0):
        self.k = check_k(k, allow_none=True)
        self.rel = _REL.check(rel, "rel")


class _NoCutoffAlphaBeta(_DiversityMetric):
    def __init__(self, alpha=0.5, beta=0.5, rel=1.0):
        self.alpha = _ALPHA.check(alpha, "alpha")
        self.beta = _BETA.check(beta, "beta")
        self.rel = _REL.check(rel, "rel")


def _info(name, summary, cutoff="optional", reals=None, aliases=(), value_range=(0.0, 1.0)):
    return MetricInfo(name=name, kernel=KERNEL, labels=LABELS, cutoff=cutoff, summary=summary, aliases=aliases,
                      undefined=_UNDEFINED, reals={**(reals or {}), "rel": _REL}, value_range=value_range)


class AlphaDCG(_CutoffAlpha):
    r"""alpha-DCG@k (Clarke et al. 2008) with ndeval's "ideal ideal" normalisation.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (ndeval reports 5, 10 and 20); None: the whole ranking.
    alpha : float, default=0.5
        Redundancy intolerance in [0, 1]: an item's gain for an intent is
        :math:`(1 - \alpha)^{c}`, with c the items above it already relevant to that intent.

    Notes
    -----
    With :math:`S` the query's intents with a relevant item and :math:`c_s(i)` the items above
    rank i relevant to intent s [CKC08]_:

    .. math::

        \mathrm{DCG}_\alpha@k = \sum_{i=1}^{\min(k, |y|)} \frac{\sum_{s \in S} \mathrm{rel}_s(y_i)
        (1 - \alpha)^{c_s(i)}}{\log_2(i + 1)}, \qquad
        \alpha\text{-DCG}@k = \frac{\mathrm{DCG}_\alpha@k}{\sum_{i=1}^{k}
        \frac{|S| (1 - \alpha)^{i - 1}}{\log_2(i + 1)}},

    the denominator being the DCG of an "ideal ideal" ranking whose every item is relevant to
    every intent (ndeval's collection-independent normalisation; values in [0, 1]). Without a
    cutoff, k is the length of the ranking.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 for an empty
    ranking. ndeval leaves alpha-DCG@1 undivided (the number of intents the first item
    covers); here it is divided like every other cutoff.

    References
    ----------
    .. [CKC08] C. L. A. Clarke, M. Kolla, G. V. Cormack, O. Vechtomova, A. Ashkan, S. Büttcher
       and I. MacKinnon: "Novelty and diversity in information retrieval evaluation". SIGIR 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import IntentLabels, Rankings, AlphaDCG
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1, 1: 1}, "b": {1: 1}}])
    >>> # rank 1: item 1 covers a and b (gain 2); rank 2: item 0, a again (gain 0.5) / log2(3)
    >>> dcg = 2 + 0.5 / np.log2(3)
    >>> ideal_ideal = 2 + 2 * 0.5 / np.log2(3)
    >>> bool(np.isclose(AlphaDCG(2).score(y_true, Rankings.from_ranked_indices([[1, 0]]))[0], dcg / ideal_ideal))
    True
    """

    kernel_name = "alpha_dcg"
    info = _info("alpha_dcg", "alpha-DCG@k: novelty-biased DCG over intents, ndeval's ideal-ideal normalisation",
                 reals={"alpha": _ALPHA})


class AlphaNDCG(_CutoffAlpha):
    r"""alpha-nDCG@k (Clarke et al. 2008), normalised by ndeval's greedy ideal ranking.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (ndeval reports 5, 10 and 20); None: the whole ranking (and the whole ideal).
    alpha : float, default=0.5
        Redundancy intolerance in [0, 1] (see :class:`AlphaDCG`).

    Notes
    -----
    :math:`\alpha\text{-nDCG}@k = \mathrm{DCG}_\alpha@k(y) / \mathrm{DCG}_\alpha@k(y^*)`, with
    :math:`\mathrm{DCG}_\alpha` as in :class:`AlphaDCG` and :math:`y^*` the greedy ideal
    ranking of the relevant items (ndeval's ``idealResult``: at each rank the item of largest
    gain given those above it, ties to the larger document name, or item id). Finding the best
    ranking is NP-hard; the greedy one can be beaten, so values above 1 are possible.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 when the ranking
    gains nothing (empty, or no relevant item in the top k).

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import IntentLabels, Rankings, AlphaNDCG
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1, 1: 1}, "b": {1: 1}, "c": {2: 1}}])
    >>> # the greedy ideal: 1 (gain 2), 2 (gain 1), 0 (gain 0.5)
    >>> y_pred = Rankings.from_ranked_indices([[0, 1, 2]])
    >>> dcg = 1 + 1.5 / np.log2(3) + 1 / 2
    >>> ideal = 2 + 1 / np.log2(3) + 0.5 / 2
    >>> bool(np.isclose(AlphaNDCG(3).score(y_true, y_pred)[0], dcg / ideal))
    True
    """

    kernel_name = "alpha_ndcg"
    info = _info("alpha_ndcg", "alpha-nDCG@k: novelty-biased NDCG over intents (ndeval, greedy ideal)",
                 reals={"alpha": _ALPHA}, value_range=(0.0, math.inf))


class ERRIA(_CutoffAlpha):
    r"""ERR-IA@k, intent-aware expected reciprocal rank, as ndeval computes it.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (ndeval reports 5, 10 and 20); None: the whole ranking.
    alpha : float, default=0.5
        The probability that a relevant item satisfies the user for its intent (ndeval's
        alpha, shared with alpha-nDCG).

    Notes
    -----
    With binary relevance per intent and stopping probability :math:`\alpha` for a relevant
    item, the ERR of intent s is :math:`\sum_i \frac{1}{i} \alpha (1 - \alpha)^{c_s(i)}
    \mathrm{rel}_s(y_i)`; ERR-IA averages it over the intents [CMZ09]_. ndeval normalises by
    the same sum for an "ideal ideal" ranking whose every item is relevant to every intent
    (its collection-independent normalisation, values in [0, 1]):

    .. math::

        \mathrm{ERR\text{-}IA}@k = \frac{\sum_{i=1}^{\min(k, |y|)} \frac{1}{i} \sum_{s \in S}
        \mathrm{rel}_s(y_i) (1 - \alpha)^{c_s(i)}}{\sum_{i=1}^{k} \frac{|S| (1 - \alpha)^{i - 1}}{i}}.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 for an empty
    ranking; ERR-IA@1 divided like every cutoff (ndeval leaves it undivided).

    References
    ----------
    .. [CMZ09] O. Chapelle, D. Metzler, Y. Zhang and P. Grinspan: "Expected reciprocal rank
       for graded relevance". CIKM 2009.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, ERRIA
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1}, "b": {1: 1}}])
    >>> # (1 + 1/2) / (2 + 2 * 0.5 / 2)
    >>> ERRIA(2).score(y_true, Rankings.from_ranked_indices([[0, 1]]))
    array([0.6])
    """

    kernel_name = "err_ia"
    info = _info("err_ia", "ERR-IA@k: intent-aware expected reciprocal rank (ndeval)", reals={"alpha": _ALPHA})


class NERRIA(_CutoffAlpha):
    r"""nERR-IA@k: :class:`ERRIA` divided by that of ndeval's greedy ideal ranking.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (ndeval reports 5, 10 and 20); None: the whole ranking (and the whole ideal).
    alpha : float, default=0.5
        As in :class:`ERRIA`.

    Notes
    -----
    The numerator of :class:`ERRIA` over the same for the greedy ideal ranking (see
    :class:`AlphaNDCG`); can exceed 1 where the greedy ideal is not the best ranking.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 when the ranking
    gains nothing.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, NERRIA
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1}, "b": {1: 1}}])
    >>> # (0 + 1/2) / (1 + 1/2)
    >>> NERRIA(2).score(y_true, Rankings.from_ranked_indices([[5, 1]]))
    array([0.33333333])
    """

    kernel_name = "nerr_ia"
    info = _info("nerr_ia", "nERR-IA@k: ERR-IA over that of the greedy ideal ranking (ndeval)",
                 reals={"alpha": _ALPHA}, value_range=(0.0, math.inf))


class PrecisionIA(_Cutoff):
    r"""P-IA@k, intent-aware precision (Agrawal et al. 2009), as ndeval computes it.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (ndeval reports 5, 10 and 20); None: the length of the ranking.

    Notes
    -----
    The mean over the intents :math:`S` with a relevant item of the precision at k for each:

    .. math::

        \mathrm{P\text{-}IA}@k = \frac{1}{|S|} \sum_{s \in S} \frac{1}{k}
        \sum_{i=1}^{\min(k, |y|)} \mathrm{rel}_s(y_i),

    a ranking shorter than k counting its missing ranks as not relevant [AGH09]_.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 for an empty
    ranking.

    References
    ----------
    .. [AGH09] R. Agrawal, S. Gollapudi, A. Halverson and S. Ieong: "Diversifying search
       results". WSDM 2009.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, PrecisionIA
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1, 1: 1}, "b": {1: 1}}])
    >>> # 3 (item, intent) pairs in the top 2: 3 / (2 * 2)
    >>> PrecisionIA(2).score(y_true, Rankings.from_ranked_indices([[0, 1]]))
    array([0.75])
    """

    kernel_name = "p_ia"
    info = _info("p_ia", "P-IA@k: intent-aware precision (ndeval)", aliases=("precision_ia",))


class SubtopicRecall(_Cutoff):
    r"""S-recall@k, subtopic recall (Zhai et al. 2003): the share of the intents covered.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (ndeval reports 5, 10 and 20); None: the whole ranking.

    Notes
    -----
    :math:`|\{s \in S : \exists i \le k, \mathrm{rel}_s(y_i)\}| / |S|`, with :math:`S` the
    intents with a relevant item [ZCL03]_ (ndeval's ``strec``).

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 for an empty
    ranking.

    References
    ----------
    .. [ZCL03] C. Zhai, W. W. Cohen and J. Lafferty: "Beyond independent relevance: methods and
       evaluation metrics for subtopic retrieval". SIGIR 2003.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, SubtopicRecall
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1}, "b": {1: 1}, "c": {2: 1}}])
    >>> SubtopicRecall(2).score(y_true, Rankings.from_ranked_indices([[0, 1, 2]]))
    array([0.66666667])
    """

    kernel_name = "strecall"
    info = _info("strec", "S-recall@k: share of the intents covered in the top k (ndeval strec)",
                 aliases=("strecall", "subtopicrecall"))


class APIA(_DiversityMetric):
    r"""MAP-IA, intent-aware average precision (Agrawal et al. 2009), as ndeval computes it.

    Notes
    -----
    The mean over the intents :math:`S` with a relevant item of the average precision of the
    whole ranking for each intent, :math:`\frac{1}{R_s} \sum_{i : \mathrm{rel}_s(y_i)}
    \frac{|\{j \le i : \mathrm{rel}_s(y_j)\}|}{i}`, with :math:`R_s` the items relevant to s
    (see :class:`PrecisionIA` for the source).

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 for an empty ranking.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, APIA
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1, 1: 1}, "b": {2: 1}}])
    >>> # a: (1/1 + 2/3) / 2; b: (1/2) / 1; mean of the two
    >>> APIA().score(y_true, Rankings.from_ranked_indices([[0, 2, 1]]))
    array([0.66666667])
    """

    kernel_name = "ap_ia"
    info = _info("ap_ia", "MAP-IA: intent-aware average precision of the whole ranking (ndeval)", cutoff="none",
                 aliases=("map_ia",))

    def __init__(self, rel=1.0):
        self.rel = _REL.check(rel, "rel")


class NRBP(_NoCutoffAlphaBeta):
    r"""NRBP, novelty- and rank-biased precision (Clarke et al. 2009), as ndeval computes it.

    Parameters
    ----------
    alpha : float, default=0.5
        Redundancy intolerance in [0, 1] (see :class:`AlphaDCG`).
    beta : float, default=0.5
        Patience in [0, 1]: the weight of rank i is :math:`\beta^{i - 1}`.

    Notes
    -----
    Over the whole ranking [CKV09]_:

    .. math::

        \mathrm{NRBP} = \frac{1 - (1 - \alpha)\beta}{|S|} \sum_{i=1}^{|y|} \beta^{i - 1}
        \sum_{s \in S} \mathrm{rel}_s(y_i) (1 - \alpha)^{c_s(i)},

    the factor making an "ideal ideal" ranking (every item relevant to every intent) score 1.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0); 0 for an empty ranking.

    References
    ----------
    .. [CKV09] C. L. A. Clarke, M. Kolla and O. Vechtomova: "An effectiveness measure for
       ambiguous and underspecified queries". ICTIR 2009.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, NRBP
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1}, "b": {1: 1}}])
    >>> # (1 - 0.25) / 2 * (1 + 0.5 * 1)
    >>> NRBP().score(y_true, Rankings.from_ranked_indices([[0, 1]]))
    array([0.5625])
    """

    kernel_name = "nrbp"
    info = _info("nrbp", "NRBP: novelty- and rank-biased precision (ndeval)", cutoff="none",
                 reals={"alpha": _ALPHA, "beta": _BETA})


class NNRBP(_NoCutoffAlphaBeta):
    r"""nNRBP: :class:`NRBP` divided by that of ndeval's greedy ideal ranking.

    Parameters
    ----------
    alpha, beta : float, default=0.5
        As in :class:`NRBP`.

    Notes
    -----
    The greedy ideal ranking of every relevant item (see :class:`AlphaNDCG`); can exceed 1
    where the greedy ideal is not the best ranking.

    Edge cases: NaN when no item is relevant to any intent (ndeval: 0/0, NaN too); 0 when the
    ranking gains nothing.

    Examples
    --------
    >>> from rankereval import IntentLabels, Rankings, NNRBP
    >>> y_true = IntentLabels.from_rows([{"a": {0: 1}, "b": {1: 1}}])
    >>> NNRBP().score(y_true, Rankings.from_ranked_indices([[1, 0]]))
    array([1.])
    """

    kernel_name = "nnrbp"
    info = _info("nnrbp", "nNRBP: NRBP over that of the greedy ideal ranking (ndeval)", cutoff="none",
                 reals={"alpha": _ALPHA, "beta": _BETA}, value_range=(0.0, math.inf))


#: the family, in the order of ndeval's output
DIVERSITY_METRICS = (ERRIA, NERRIA, AlphaDCG, AlphaNDCG, NRBP, NNRBP, APIA, PrecisionIA, SubtopicRecall)
