r"""The C/W/L family: measures defined by a user model, as ``cwl_eval`` computes them.

Moffat et al.'s C/W/L framework describes a user who reads a ranking from the top and, after
rank :math:`i`, goes on to rank :math:`i + 1` with probability :math:`C(i)` (the
*continuation* function, which may read the gains seen so far). The weight of rank :math:`i`
is the probability of reaching it, normalised over the ranks,

.. math::

    W(i) = \frac{\prod_{j < i} C(j)}{\sum_{t=1}^{D} \prod_{j < t} C(j)},

and each measure here is the *expected rate of gain* :math:`\sum_{i=1}^{D} W(i)\, g(i)`
(cwl_eval's first column, ``EU``: gain per item read; the value ir_measures' ``cwl_eval``
provider reports). :math:`D` is cwl_eval's depth: the ranking truncated at ``depth`` ranks,
and shorter rankings padded to ``depth`` with ranks of gain 0 (cwl_eval's ``--max_depth``,
1000; the padded ranks count in the normalisation, as in cwl_eval).

Gains: each item's grade (1 for binary labels) clipped to [``min_grade``, ``max_grade``]
and scaled into [0, 1] (ir_measures' ``min_rel`` and ``max_rel``, and its clipping):
:math:`g = (\min(\max(\text{grade}, m), M) - m) / (M - m)`; an item not stored in the labels
(not relevant, unjudged, past the end of the ranking) has gain 0. The defaults (0, 1) read
grades as gains, as cwl_eval reads a gain file; cwl_eval refuses a gain above 1 (its
``--max_gain``), where a grade above ``max_grade`` counts as ``max_grade`` here. Costs: every item costs 1 (cwl_eval without a cost file), so BPM's K is a number of
items.

The scores are computed by the typed kernel ``rankereval/metrics/_cwl_kernel.pyx`` from each
ranking's relevance profile (``rankereval/metrics/_profile_fast.pyx``, one pass for all the profile
metrics of a call).
"""
import numpy as np

from rankereval._threads import effective_n_threads
from rankereval._validation import check_k
from rankereval.data import BinaryLabels
from rankereval.metrics import _cwl_kernel
from rankereval.metrics._base import MetricInfo, RealParam
from rankereval.metrics._profile import KERNEL, _ProfileMetric

#: cwl_eval's default depth (``--max_depth``; ir_measures' provider fixes it)
DEPTH = 1000

_GRADES = {
    "min_grade": RealParam(0.0, float("inf"), (0.0,), high_open=True),
    # (one example each: the generic tests run every combination; tests/test_cwl.py varies them)
    "max_grade": RealParam(0.0, float("inf"), (4.0,), low_open=True, high_open=True),
    # (an integer; the generic tests read a short depth, past every ranking they draw)
    "depth": RealParam(1.0, float("inf"), (15,), high_open=True),
}
_T = RealParam(0.0, float("inf"), (2.5,), low_open=True, high_open=True)
_UNDEFINED = None  # a C/W/L value is always defined (0 without any gain)


def _check_depth(depth):
    value = _GRADES["depth"].check(depth, "depth")
    if value != int(value):
        raise ValueError(f"depth must be a whole number of ranks, got {depth!r}")
    return int(value)


class _CWLMetric(_ProfileMetric):
    """A C/W/L measure: the kernel's ``measure`` and its arguments."""

    _measure = None

    def _grades(self, min_grade, max_grade, depth):
        self.min_grade = _GRADES["min_grade"].check(min_grade, "min_grade")
        self.max_grade = _GRADES["max_grade"].check(max_grade, "max_grade")
        if not self.max_grade > self.min_grade:
            raise ValueError(f"max_grade must exceed min_grade, got max_grade={max_grade!r} "
                             f"and min_grade={min_grade!r}")
        self.depth = _check_depth(depth)

    def _depth(self):
        # (the ranks the profile reads: past a cutoff k, where C is 0, no rank is reached)
        k = getattr(self, "k", None)
        return self.depth if k is None or getattr(self, "hc", 0.0) > 0 else min(k, self.depth)

    def _arguments(self):
        """``(k, t, hb, hc, median)`` of the kernel."""
        raise NotImplementedError

    def _from_profile(self, prof):
        out = np.empty(prof.n)
        k, t, hb, hc, median = self._arguments()
        _cwl_kernel.score(np.ascontiguousarray(prof.codes), _cwl_kernel.MEASURE_IDS[self.info.name],
                          float(k), float(t), float(hb), float(hc), float(median),
                          self.min_grade, self.max_grade, self.depth, out,
                          effective_n_threads(prof.n * max(prof.width, 1)))
        return out


class _CutoffCWLMetric(_CWLMetric):
    """A C/W/L measure whose only parameter besides the grades is the cutoff k (SDCG, NERR8,
    NERR9)."""

    def __init__(self, k, min_grade=0.0, max_grade=1.0, depth=DEPTH):
        self.k = check_k(k)
        self._grades(min_grade, max_grade, depth)

    def _arguments(self):
        return self.k, 0.0, 0.0, 0.0, 0.0


_COMMON_DOC = """
    min_grade, max_grade : float, default=0, 1
        The grades scaled to the gains 0 and 1 (ir_measures' ``min_rel`` and ``max_rel``):
        grades at or below ``min_grade`` give no gain, grades at or above ``max_grade`` gain 1.
    depth : int, default=1000
        The ranks read (cwl_eval's ``--max_depth``): longer rankings are truncated, shorter
        ones padded with ranks of gain 0."""


class SDCG(_CutoffCWLMetric):
    r"""Scaled DCG@k (cwl_eval's ``NDCG-k``, ir_measures' ``SDCG@k``): DCG of the top
    :math:`k` with linear gains, divided by the DCG of :math:`k` items of gain 1.

    Parameters
    ----------
    k : int
        The cutoff.
    {common}

    Notes
    -----
    :math:`C(i) = \log_2(i + 1) / \log_2(i + 2)` for :math:`i < k`, else 0, so
    :math:`W(i) = \frac{1 / \log_2(i + 1)}{\sum_{t=1}^{k} 1 / \log_2(t + 1)}` for
    :math:`i \le \min(k, D)`. Unlike NDCG, the scale does not depend on the relevant items:
    a ranking can reach 1 only when its top k all have gain 1. Always defined (0 without
    gain).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, SDCG
    >>> y_true = BinaryLabels.from_positive_indices([[2]])
    >>> # (1 / log2(3)) / (1 + 1 / log2(3))
    >>> SDCG(2).score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([0.38685281])
    """

    info = MetricInfo(
        name="sdcg", kernel=KERNEL, labels="graded", cutoff="required", aliases=("scaleddcg",),
        summary="SDCG@k: DCG@k over the DCG of k items of gain 1 (cwl_eval NDCG-k, ir_measures SDCG)",
        undefined=_UNDEFINED, reals=dict(_GRADES),
    )


class INST(_CWLMetric):
    r"""INST (Moffat et al. 2015; cwl_eval's ``INST``): an adaptive user who expects to
    need a gain of T, and reads on longer while the gain still missing is large.

    Parameters
    ----------
    T : float, default=1
        The gain the user wants (> 0).
    {common}

    Notes
    -----
    With :math:`T_i = T - \sum_{j \le i} g(j)`,
    :math:`C(i) = \left(\frac{i + T + T_i - 1}{i + T + T_i}\right)^2`. Always defined.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, INST
    >>> # C(1) = (1/2)^2, then C(i) = (i / (i + 1))^2: rank i is reached with probability 1 / i^2,
    >>> # and the gain at rank 1 weighs 1 / (1 + 1/4 + ... + 1/1000^2)
    >>> INST().score(BinaryLabels.from_positive_indices([[1]]), Rankings.from_ranked_indices([[1]]))
    array([0.60829672])
    """

    info = MetricInfo(
        name="inst", kernel=KERNEL, labels="graded", cutoff="none",
        summary="INST[T=1]: Moffat et al.'s adaptive C/W/L measure (cwl_eval, ir_measures INST)",
        undefined=_UNDEFINED, reals={"T": _T, **_GRADES},
    )

    def __init__(self, T=1.0, min_grade=0.0, max_grade=1.0, depth=DEPTH):
        self.T = self.info.reals["T"].check(T, "T")
        self._grades(min_grade, max_grade, depth)

    def _arguments(self):
        return 0.0, self.T, 0.0, 0.0, 0.0


class INSQ(_CWLMetric):
    r"""INSQ (Moffat et al. 2012; cwl_eval's ``INSQ``): INST's user with a fixed
    expectation T, whatever the gains seen.

    Parameters
    ----------
    T : float, default=1
        The gain the user wants (> 0).
    {common}

    Notes
    -----
    :math:`C(i) = \left(\frac{i + 2T - 1}{i + 2T}\right)^2`. Always defined.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, INSQ
    >>> # C(i) = ((i + 3) / (i + 4))^2: rank i is reached with probability (4 / (i + 3))^2, so the
    >>> # gain at rank 2 weighs (4/5)^2 / (16 * (1/4^2 + 1/5^2 + ... + 1/1003^2))
    >>> INSQ(T=2).score(BinaryLabels.from_positive_indices([[1]]), Rankings.from_ranked_indices([[5, 1]]))
    array([0.14142949])
    """

    info = MetricInfo(
        name="insq", kernel=KERNEL, labels="graded", cutoff="none",
        summary="INSQ[T=1]: INST with a fixed expectation (cwl_eval, ir_measures INSQ)",
        undefined=_UNDEFINED, reals={"T": _T, **_GRADES},
    )

    def __init__(self, T=1.0, min_grade=0.0, max_grade=1.0, depth=DEPTH):
        self.T = self.info.reals["T"].check(T, "T")
        self._grades(min_grade, max_grade, depth)

    def _arguments(self):
        return 0.0, self.T, 0.0, 0.0, 0.0


class BPM(_CWLMetric):
    r"""The bejewelled player model (Zhang et al. 2017; cwl_eval's ``BPM-Static`` and
    ``BPM-Dynamic``, ir_measures' ``BPM(T=...)@K``): the user stops at the first rank where
    the gain so far reaches T or the items read reach K.

    Parameters
    ----------
    k : int
        K, the most items the user reads (the cost budget; each item costs 1).
    T : float, default=1
        The gain the user wants (> 0).
    hb, hc : float, default=0
        The dynamic model's rates (Zhang et al.'s :math:`h_b`, :math:`h_c`): after each rank
        read, T moves by ``hb`` and K by ``hc`` times the rank's gain minus ``median``. Both 0:
        the static model.
    median : float, default=0.5
        The dynamic model's median gain (Zhang et al.'s :math:`rel_{med}`).
    {common}

    Notes
    -----
    :math:`C(i) = 1` while :math:`\sum_{j \le i} g(j) < T_i` and :math:`i < K_i` (from rank 1
    on; once either fails, 0 for the rest), where :math:`T_1 = T`, :math:`K_1 = K` and, in the
    dynamic model, :math:`T_{i+1} = T_i + h_b (g(i) - \text{median})` and
    :math:`K_{i+1} = K_i + h_c (g(i) - \text{median})`. The measure is the mean gain of the
    ranks read. Always defined.

    cwl_eval's ``BPM-Dynamic`` never moves K (its cost loop adds :math:`h_c(g(i) -
    \text{median})` to T, which that loop no longer reads): it equals this model with
    ``hc=0``. This follows Zhang et al., where both budgets move.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, BPM
    >>> y_true = BinaryLabels.from_positive_indices([[3]])
    >>> # the user reads 1, 2 and 3 (the gain reaches T = 1 at rank 3): 1 / 3
    >>> BPM(10).score(y_true, Rankings.from_ranked_indices([[1, 2, 3, 4]]))
    array([0.33333333])
    """

    info = MetricInfo(
        name="bpm", kernel=KERNEL, labels="graded", cutoff="required", aliases=("bejewelledplayermodel",),
        summary="BPM@K[T=1]: the bejewelled player model, static or dynamic (cwl_eval, ir_measures BPM)",
        undefined=_UNDEFINED,
        reals={"T": _T, "hb": RealParam(0.0, float("inf"), (0.0,), high_open=True),
               "hc": RealParam(0.0, float("inf"), (0.0,), high_open=True),
               "median": RealParam(0.0, 1.0, (0.5,)), **_GRADES},
    )

    def __init__(self, k, T=1.0, hb=0.0, hc=0.0, median=0.5, min_grade=0.0, max_grade=1.0, depth=DEPTH):
        self.k = check_k(k)
        self.T = self.info.reals["T"].check(T, "T")
        self.hb = self.info.reals["hb"].check(hb, "hb")
        self.hc = self.info.reals["hc"].check(hc, "hc")
        self.median = self.info.reals["median"].check(median, "median")
        self._grades(min_grade, max_grade, depth)

    def _arguments(self):
        return self.k, self.T, self.hb, self.hc, self.median


_NERR_REF = """
    References
    ----------
    L. Azzopardi, J. Mackenzie and A. Moffat: "ERR is not C/W/L: exploring the relationship
    between expected reciprocal rank and other metrics". ICTIR 2021."""


class NERR8(_CutoffCWLMetric):
    r"""NERR, equation 8 of Azzopardi et al. 2021 (cwl_eval's ``NERR-EQ8``, ir_measures'
    ``NERR8@k``): ERR's user as a C/W/L model, stopping at k.

    Parameters
    ----------
    k : int
        The cutoff.
    {common}

    Notes
    -----
    :math:`C(i) = 1 - g(i)` for :math:`i < k`, else 0. Always defined.
    {ref}

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, NERR8
    >>> y_true = NumericLabels.from_matrix([[0, 0.5, 1]])
    >>> # weights 1, 1/2 over 1.5: (0.5 + 0.5 * 1) / 1.5
    >>> NERR8(2).score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([0.66666667])
    """

    info = MetricInfo(
        name="nerr8", kernel=KERNEL, labels="graded", cutoff="required",
        summary="NERR8@k: ERR's user as C/W/L, to rank k (Azzopardi et al. eq. 8; cwl_eval, ir_measures)",
        undefined=_UNDEFINED, reals=dict(_GRADES),
    )


class NERR9(_CutoffCWLMetric):
    r"""NERR, equation 9 of Azzopardi et al. 2021 (cwl_eval's ``NERR-EQ9``, ir_measures'
    ``NERR9@k``): ERR's user with reciprocal-rank patience, stopping at k.

    Parameters
    ----------
    k : int
        The cutoff.
    {common}

    Notes
    -----
    :math:`C(i) = \frac{i}{i + 1}(1 - g(i))` for :math:`i < k`, else 0. Always defined.
    {ref}

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NERR9
    >>> y_true = BinaryLabels.from_positive_indices([[2]])
    >>> # weights 1, 1/2 over 1.5: 0.5 / 1.5
    >>> NERR9(2).score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([0.33333333])
    """

    info = MetricInfo(
        name="nerr9", kernel=KERNEL, labels="graded", cutoff="required",
        summary="NERR9@k: Azzopardi et al.'s eq. 9, to rank k (cwl_eval, ir_measures NERR9)",
        undefined=_UNDEFINED, reals=dict(_GRADES),
    )


class NERR10(_CWLMetric):
    r"""NERR, equation 10 of Azzopardi et al. 2021 (cwl_eval's ``NERR-EQ10``, ir_measures'
    ``NERR10(p=...)``): ERR's user with RBP's persistence, to full depth.

    Parameters
    ----------
    p : float, default=0.9
        The persistence :math:`\phi`, in (0, 1).
    {common}

    Notes
    -----
    :math:`C(i) = \phi (1 - g(i))`. Always defined.
    {ref}

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NERR10
    >>> y_true = BinaryLabels.from_positive_indices([[2]])
    >>> # weights 1, 1/2 (then 0) over 1.5
    >>> NERR10(0.5).score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([0.33333333])
    """

    info = MetricInfo(
        name="nerr10", kernel=KERNEL, labels="graded", cutoff="none",
        summary="NERR10[p=0.9]: Azzopardi et al.'s eq. 10, RBP's persistence (cwl_eval, ir_measures NERR10)",
        undefined=_UNDEFINED,
        reals={"p": RealParam(0.0, 1.0, (0.5,), low_open=True, high_open=True), **_GRADES},
    )

    def __init__(self, p=0.9, min_grade=0.0, max_grade=1.0, depth=DEPTH):
        self.p = self.info.reals["p"].check(p, "p")
        self._grades(min_grade, max_grade, depth)

    def _arguments(self):
        return 0.0, self.p, 0.0, 0.0, 0.0


class NERR11(_CWLMetric):
    r"""NERR, equation 11 of Azzopardi et al. 2021 (cwl_eval's ``NERR-EQ11``, ir_measures'
    ``NERR11(T=...)``): ERR's user with INSQ's patience, to full depth.

    Parameters
    ----------
    T : float, default=1
        INSQ's expected gain (> 0).
    {common}

    Notes
    -----
    :math:`C(i) = \left(\frac{i + 2T - 1}{i + 2T}\right)^2 (1 - g(i))`. Always defined.
    {ref}

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NERR11
    >>> y_true = BinaryLabels.from_positive_indices([[1]])
    >>> NERR11().score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([1.])
    """

    info = MetricInfo(
        name="nerr11", kernel=KERNEL, labels="graded", cutoff="none",
        summary="NERR11[T=1]: Azzopardi et al.'s eq. 11, INSQ's patience (cwl_eval, ir_measures NERR11)",
        undefined=_UNDEFINED, reals={"T": _T, **_GRADES},
    )

    def __init__(self, T=1.0, min_grade=0.0, max_grade=1.0, depth=DEPTH):
        self.T = self.info.reals["T"].check(T, "T")
        self._grades(min_grade, max_grade, depth)

    def _arguments(self):
        return 0.0, self.T, 0.0, 0.0, 0.0


for _cls in (SDCG, INST, INSQ, BPM, NERR8, NERR9, NERR10, NERR11):
    _cls.__doc__ = _cls.__doc__.replace("{common}", _COMMON_DOC.strip("\n")[4:]).replace(
        "{ref}", _NERR_REF.strip("\n")[4:])
del _cls


def _ideal_positions(prof):
    """``(n, width)``: the 1-based position in its ideal ranking of each ranked relevant item
    (0 for the others), and ``(n,)`` the length of each ideal ranking.

    The ideal ranking: the relevant items of the label row by decreasing grade, those of equal
    grade that the ranking retrieves first, in the ranking's order (ir_measures orders them by
    the run's scores), then the others. The position of an item of grade g retrieved at rank r
    is 1 + (the row's items graded above g) + (the items of grade g ranked before r).
    """
    labels = prof._labels
    codes = prof.codes
    n, width = codes.shape
    counts = np.diff(labels.indptr).astype(np.int64)
    if labels.indptr[0] != 0 or (counts < 0).any() or labels.indptr[-1] != labels.indices.shape[0]:
        raise ValueError("y_true's row pointers do not match its stored labels (corrupted storage)")
    if isinstance(labels, BinaryLabels):
        values = np.ones(labels.indices.shape[0])
    else:
        values = np.asarray(labels.values, dtype=np.float64)
    positive = values > 0
    row_of = np.repeat(np.arange(labels.n_rows, dtype=np.int64), counts)
    n_ideal = np.bincount(row_of[positive], minlength=labels.n_rows).astype(np.int64)[prof._rows]
    rel = codes > 0  # (NaN past the end compares False)
    r_rows, r_ranks = np.nonzero(rel)
    grade = codes[r_rows, r_ranks]
    # the distinct grades, and each label value's and each ranked grade's index among them
    levels = np.unique(values[positive])
    n_levels = max(levels.shape[0], 1)
    key = row_of[positive] * n_levels + np.searchsorted(levels, values[positive])
    key.sort()
    label_row = prof._rows[r_rows]
    level = np.searchsorted(levels, grade)
    ranked_key = label_row * n_levels + level
    # items of the row graded above g: from the first key past (row, g) to the row's end
    row_end = np.searchsorted(key, (label_row + 1) * n_levels, side="left")
    above = row_end - np.searchsorted(key, ranked_key, side="right")
    # items of grade g ranked before: the rank of each within its (ranking, grade) group
    group = r_rows * n_levels + level
    order = np.argsort(group, kind="stable")  # (np.nonzero is row-major: ranks ascend)
    sorted_group = group[order]
    first = np.searchsorted(sorted_group, sorted_group, side="left")
    before = np.empty_like(order)
    before[order] = np.arange(order.shape[0]) - first
    pos = np.zeros((n, width))
    pos[r_rows, r_ranks] = 1.0 + above + before
    return pos, n_ideal


class Compat(_ProfileMetric):
    r"""Compatibility with the ideal ranking (Clarke, Vtyurina and Smucker 2021; ir_measures'
    ``Compat``): the rank-biased overlap of the ranking with an ideal ranking of the
    judgements.

    Parameters
    ----------
    p : float, default=0.95
        RBO's persistence, in (0, 1).
    normalize : bool, default=True
        Divide by the compatibility of the ideal ranking with itself (so that the ideal ranking
        scores 1 however few relevant items there are).

    Notes
    -----
    The ideal ranking :math:`I` holds the relevant items by decreasing grade, those of equal
    grade that the ranking :math:`y` retrieves first (in its order). With
    :math:`D = \max(|y|, |I|)` and :math:`X_d` the items common to the first :math:`d` of
    both,

    .. math::

        \mathrm{Compat}(y) = \frac{\sum_{d=1}^{D} p^{d-1} X_d / d}{\sum_{d=1}^{D} p^{d-1}},

    divided, with ``normalize``, by the same sum of :math:`I` against itself. Not a C/W/L
    measure: it is here as ir_measures' ``compat`` provider computes it.

    Edge cases: NaN without relevant items (ir_measures: 0); an empty ranking scores 0.
    ir_measures orders the equal grades of the ideal by the run's scores, the unretrieved
    items taking the score 0: equal to this whenever the run's scores are positive.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Compat
    >>> y_true = BinaryLabels.from_positive_indices([[1]])
    >>> # D = 2, X = (0, 1): (0.5 * 1/2) / (1 + 0.5), over the ideal's (1 + 0.5 * 1/2) / 1.5
    >>> Compat(0.5).score(y_true, Rankings.from_ranked_indices([[0, 1]]))
    array([0.2])
    """

    info = MetricInfo(
        name="compat", kernel=KERNEL, labels="graded", cutoff="none", aliases=("compatibility",),
        summary="Compat[p=0.95]: RBO with the ideal ranking (Clarke et al. 2021; ir_measures Compat)",
        reals={"p": RealParam(0.0, 1.0, (0.8,), low_open=True, high_open=True)},
    )

    def __init__(self, p=0.95, normalize=True):
        from rankereval._validation import check_flag
        self.p = self.info.reals["p"].check(p, "p")
        self.normalize = check_flag(normalize, "normalize")

    def _depth(self):
        return None

    def _from_profile(self, prof):
        pos, n_ideal = _ideal_positions(prof)
        top = int(max(prof.width, int(n_ideal.max()) if n_ideal.size else 0))
        d = np.arange(1, top + 1, dtype=np.float64)
        weights = self.p ** (d - 1.0)
        tail = np.concatenate(([0.0], np.cumsum(weights / d)))
        head = np.concatenate(([0.0], np.cumsum(weights)))
        out = np.empty(prof.n)
        _cwl_kernel.compat(pos, prof.lengths, n_ideal, tail, head, self.normalize, out,
                           effective_n_threads(prof.n * max(prof.width, 1)))
        return np.where(n_ideal > 0, out, np.nan)
