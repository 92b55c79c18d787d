"""Graded-relevance metrics: DCG, NDCG, RBP and ERR (they read the label values)."""
import numpy as np

import rankereval.metrics._kernels as _kernels
from rankereval._utils._choices import DCG_GAINS, DCG_LOG_BASES
from rankereval._threads import effective_n_threads
from rankereval._validation import check_choice, check_flag, check_k, check_log_base
from rankereval.data import BinaryLabels
from rankereval.metrics._base import Metric, MetricInfo, RealParam

_SCALINGS = {name: code for code, name in enumerate(DCG_GAINS)}  # code: the kernels' argument
_LOG_BASES = dict(zip(DCG_LOG_BASES, (np.log, np.log2)))


def _log(base, x):
    """log_base(x): NumPy's ln or log2 for 'e' and '2', else ln(x) / ln(b) (scikit-learn's
    ``dcg_score(log_base=b)``)."""
    if base in _LOG_BASES:
        return _LOG_BASES[base](x)
    return np.log(x) / np.log(float(base))


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
    log_base : {'e', '2'} or float, default='e'
        Base of the logarithm in the discount: 'e', '2', or any number b > 1 (as
        scikit-learn's ``dcg_score(log_base=10)``; ``2`` and ``math.e`` read as '2' and 'e',
        another base is kept as the string of its number, ``'10'``). The smaller, the heavier the emphasis on the top ranks; NDCG does not depend on it.

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

    info = MetricInfo(
        name="dcg", kernel="dcg", labels="graded", cutoff="optional",
        choices={"relevance_scaling": tuple(_SCALINGS), "log_base": tuple(_LOG_BASES)},
        tokens={"power": ("relevance_scaling", "power"), "log2": ("log_base", "2")},
        summary="DCG@k: discounted cumulative gain (graded); no @k: the whole ranking",
        undefined="its labels have no item with relevance > 0",
        value_range=(0.0, float("inf")),
    )

    def __init__(self, k=None, relevance_scaling="identity", log_base="e"):
        self.k = check_k(k, allow_none=True)
        self.relevance_scaling = check_choice(relevance_scaling, tuple(_SCALINGS), "relevance_scaling")
        self.log_base = check_log_base(log_base)

    def _discounts(self, n):
        """1 / log_b(i + 1) for ranks i = 1 .. n."""
        return 1.0 / _log(self.log_base, np.arange(2, n + 2, dtype=np.float64))

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k, "disc": self._discounts(y_pred.indices.shape[1] + 1),
                "power": _SCALINGS[self.relevance_scaling]}


def _ideal(y_true, k, discounts, power, what, metric):
    """The best value of a gain sum at k of every label row: the row's own gains sorted in
    decreasing order (top k selected, not sorted), weighted by ``discounts(n)`` (the weights
    of ranks 1..n); NaN for a row without a positive label. NDCG's IDCG and normalised RBP's
    ideal RBP. ``what``: the sum's name and a note on the labels; ``metric`` the metric in the error of a float64
    overflow."""
    n_pos = y_true.n_positives
    longest = int(n_pos.max()) if n_pos.size else 0
    m = longest if k is None else min(k, longest)
    disc = discounts(m + 1)
    if isinstance(y_true, BinaryLabels):
        # every gain is 1: the ideal is a prefix sum of the discounts
        prefix = np.concatenate(([np.nan], np.cumsum(disc)))
        return prefix[n_pos if k is None else np.minimum(n_pos, k)]
    out = np.empty(y_true.n_rows, dtype=np.float64)
    _kernels.ideal_dcg(y_true.indptr, y_true.values, -1 if k is None else k, disc, power, out,
                       effective_n_threads(y_true.values.size))
    if np.isinf(out).any():
        row = int(np.flatnonzero(np.isinf(out))[0])
        raise ValueError(
            f"the ideal {what[0]} of label row {row} overflows float64 (labels up to "
            f"{y_true.values[y_true.indptr[row]:y_true.indptr[row + 1]].max():g}{what[1]}); "
            f"{metric} is undefined there"
        )
    return out


class NDCG(DCG):
    r"""Normalized Discounted Cumulative Gain at k (nDCG@k), in [0, 1].

    Takes the same arguments as :class:`DCG`.

    Notes
    -----
    DCG@k normalised by the best DCG@k achievable with the row's labels [KJ]_:

    .. math::

        \mathrm{nDCG}@k(y) = \frac{\mathrm{DCG}@k(y)}{\mathrm{IDCG}@k(y)},

    where :math:`\mathrm{IDCG}@k(y)` is the DCG@k of the label row's own values sorted in
    decreasing order (with ``k=None``, of all of them). IDCG is defined by all relevance
    labels, not by the retrieved items only: the latter would let nDCG be inflated by
    returning one relevant item at the top and filling up with irrelevant ones. IDCG is
    positive whenever the row has an item with relevance > 0; a row without one is NaN (edge
    case 2), and an IDCG that underflows to 0 for tiny positive labels gives 0.

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

    info = MetricInfo(
        name="ndcg", kernel="dcg", labels="graded", cutoff="optional",
        choices=DCG.info.choices, tokens=DCG.info.tokens,
        summary="NDCG@k: DCG@k / ideal DCG@k, in [0, 1] (graded); no @k: the whole ranking",
        undefined=DCG.info.undefined,
    )

    def _ideal(self, y_true):
        """IDCG@k of every label row."""
        return _ideal(y_true, self.k, self._discounts, _SCALINGS[self.relevance_scaling],
                      ("DCG", f" with relevance_scaling={self.relevance_scaling!r}"), "NDCG")

    def _kernel_args(self, y_true, y_pred):
        return dict(super()._kernel_args(y_true, y_pred), norm=self._ideal(y_true))


class RBP(Metric):
    r"""Rank-biased precision (Moffat & Zobel 2008), graded or binary.

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking. (First, as in every metric with a cutoff: write ``RBP(p=0.9)``.)
    p : float, default=0.8
        Persistence: the probability that the user goes on to the next rank, in (0, 1).
    residual : bool, default=False
        If True, the score is RBP's residual instead: the weight of every rank whose item
        is not judged, within the top k and beyond it (needs labels with judgments).
    normalize : bool, default=False
        If True, RBP divided by the largest RBP@k the row's labels allow (LensKit's
        ``RBP(normalize=True)``), in [0, 1] like NDCG. Not with ``residual``.

    Raises
    ------
    ValueError
        If p is not in (0, 1), k is not an integer > 0 or None, or ``residual`` and
        ``normalize`` are both true.

    Notes
    -----
    A user reads rank 1, then goes on to each next rank with probability p [MZ]_:

    .. math::

        \mathrm{RBP}_p@k(y) = (1 - p) \sum_{i=1}^{k'} \mathrm{rel}(y_i)\, p^{i - 1},
        \qquad k' = \min(k, |y|),

    with :math:`\mathrm{rel}` the label value: 1 for :class:`~rankereval.BinaryLabels`
    (ir_measures' ``RBP(rel=1)``, by cwl_eval), the grade for
    :class:`~rankereval.NumericLabels` (ir_measures' graded ``RBP``, by trectools, which
    does not scale grades: graded RBP can exceed 1). :func:`rankereval.evaluate` hands it
    the graded labels.

    Normalised (``normalize=True``), RBP is divided by its value for the ideal ranking of
    the row, the labels' own values sorted in decreasing order, cut at k:

    .. math::

        \mathrm{nRBP}_p@k(y) = \frac{\mathrm{RBP}_p@k(y)}{(1 - p)
        \sum_{i=1}^{\min(k, n_{rel})} g_{(i)}\, p^{i - 1}},

    with :math:`g_{(1)} \ge g_{(2)} \ge \dots` the positive label values of the row (all 1
    for :class:`~rankereval.BinaryLabels`: the denominator is :math:`1 - p^{\min(k,
    n_{rel})}`). This is LensKit's ``RBP(normalize=True)`` for binary labels and rankings of
    at least :math:`\min(k, n_{rel})` items; LensKit takes the ideal over the ranking's own
    length instead of k (a ranking of one relevant item then scores 1 however many relevant
    items it misses), and rankereval, as for NDCG, takes it over k, so that a short ranking
    cannot inflate its score. An empty ranking scores 0 (LensKit raises ZeroDivisionError).

    The residual is the weight RBP leaves unknown: that of the unjudged items of the top k'
    and of every rank after k',

    .. math::

        \mathrm{res}_p@k(y) = 1 - (1 - p) \sum_{i \le k',\, y_i \text{ judged}} p^{i - 1},

    so that binary RBP lies in :math:`[\mathrm{RBP}, \mathrm{RBP} + \mathrm{res}]` whatever
    the unjudged items turn out to be (for grades up to g, :math:`\mathrm{RBP} + g \cdot
    \mathrm{res}`).

    Edge cases:

    1. The ranking is empty: 0 (residual: 1).
    2. There are no relevant items in ``y_true``: NaN (also for the residual and the
       normalised RBP).
    3. ``residual=True`` with labels that carry no judgments: ValueError.

    References
    ----------
    .. [MZ] A. Moffat and J. Zobel: "Rank-biased precision for measurement of retrieval
       effectiveness". ACM Transactions on Information Systems 27(1), 2:1-2:27 (2008).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, RBP
    >>> y_true = BinaryLabels.from_positive_indices([[0, 2]]).with_judged([[0, 1, 2]])
    >>> y_pred = Rankings.from_ranked_indices([[0, 1, 2, 3]])
    >>> RBP(p=0.5).score(y_true, y_pred)  # 0.5 * (1 + 0.25)
    array([0.625])
    >>> RBP(p=0.5, residual=True).score(y_true, y_pred)  # 1 - 0.5 * (1 + 0.5 + 0.25)
    array([0.125])
    >>> RBP(p=0.5, normalize=True).score(y_true, y_pred)  # 0.625 / (0.5 * (1 + 0.5))
    array([0.83333333])
    """

    info = MetricInfo(
        name="rbp", kernel="rbp", labels="graded", cutoff="optional", aliases=("rankbiasedprecision",),
        summary="RBP@k[p=0.8]: rank-biased precision (graded or binary); [residual]: its residual; "
                "[normalize]: over the ideal RBP@k",
        reals={"p": RealParam(0.0, 1.0, (0.8, 0.5, 0.95), low_open=True, high_open=True)},
        value_range=(0.0, float("inf")),
        exclusive=(("residual", "normalize"),),
    )

    def __init__(self, k=None, p=0.8, residual=False, normalize=False):
        self.k = check_k(k, allow_none=True)
        self.p = self.info.reals["p"].check(p, "p")
        self.residual = check_flag(residual, "residual")
        self.normalize = check_flag(normalize, "normalize")
        if self.residual and self.normalize:
            raise ValueError("RBP: residual and normalize cannot both be true (the residual is a "
                             "weight left unknown, not a score to normalise)")

    def _weights(self, n):
        """(1 - p) p^(i - 1) for ranks i = 1 .. n."""
        return (1.0 - self.p) * self.p ** np.arange(n, dtype=np.float64)

    def _kernel_args(self, y_true, y_pred):
        weights = self._weights(y_pred.indices.shape[1] + 1)
        if self.residual:
            return {"k": self.k, "disc": weights, "kernel": "rbp_residual", "judged": True}
        if self.normalize:
            return {"k": self.k, "disc": weights,
                    "norm": _ideal(y_true, self.k, self._weights, 0, ("RBP", ""), "normalised RBP")}
        return {"k": self.k, "disc": weights}


class ERR(Metric):
    r"""Expected reciprocal rank (Chapelle et al. 2009), graded.

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking.
    max_grade : float, default=4
        The highest grade of the scale, :math:`g_{max}` (gdeval and ir_measures: 4). A
        label above it is an error.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None, max_grade is not a number > 0, or a label
        exceeds max_grade.

    Notes
    -----
    A user stops at rank i, satisfied, with probability
    :math:`R_i = (2^{g_i} - 1) / 2^{g_{max}}` [CM]_:

    .. math::

        \mathrm{ERR}@k(y) = \sum_{i=1}^{k'} \frac{R_i}{i} \prod_{j < i} (1 - R_j),
        \qquad k' = \min(k, |y|),

    with :math:`g_i` the grade of :math:`y_i` (1 for :class:`~rankereval.BinaryLabels`, 0
    for an item without label). This is gdeval's ``err@k``, which ir_measures' ``ERR@k``
    runs (with :math:`g_{max} = 4` fixed; gdeval prints 5 decimals).

    Edge cases:

    1. The ranking is empty: 0.
    2. There are no items with relevance > 0 in ``y_true``: NaN (gdeval leaves such
       queries out).

    References
    ----------
    .. [CM] O. Chapelle, D. Metzler, Y. Zhang and P. Grinspan: "Expected reciprocal rank
       for graded relevance". CIKM 2009.

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, ERR
    >>> y_true = NumericLabels.from_matrix([[4, 0, 1]])
    >>> # R = 15/16 at rank 1, then 1/16 at rank 3: 15/16 + (1/16) * (1/16) / 3
    >>> ERR().score(y_true, Rankings.from_ranked_indices([[0, 1, 2]]))
    array([0.93880208])
    """

    info = MetricInfo(
        name="err", kernel="err", labels="graded", cutoff="optional", aliases=("expectedreciprocalrank",),
        summary="ERR@k: expected reciprocal rank (graded; grades up to max_grade=4)",
        undefined="its labels have no item with relevance > 0",
        reals={"max_grade": RealParam(0.0, float("inf"), (4.0, 5.0), low_open=True)},
    )

    def __init__(self, k=None, max_grade=4.0):
        self.k = check_k(k, allow_none=True)
        self.max_grade = self.info.reals["max_grade"].check(max_grade, "max_grade")

    def _kernel_args(self, y_true, y_pred):
        if not isinstance(y_true, BinaryLabels) and y_true.values.size:
            top = float(y_true.values.max())
            if top > self.max_grade:
                raise ValueError(f"ERR: a label of {top:g} exceeds max_grade={self.max_grade:g}; "
                                 "give the scale's highest grade as max_grade")
        return {"k": self.k, "param": 2.0 ** -self.max_grade}
