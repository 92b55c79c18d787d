"""Agreement between rankings, and between orderings of systems.

Per query, between two :class:`~rankereval.Rankings` of the same queries:

* :func:`rbo`: rank-biased overlap (Webber, Moffat and Zobel, TOIS 2010), extrapolated, with
  its lower bound and residual, for lists of any (different) lengths, and its tie-aware
  variants (Corsi and Urbano, SIGIR 2024) for rankings that keep ties;
* :func:`jaccard`: the overlap of the two top-k sets over their union.

Between two orderings of systems (e.g. the means of two evaluations of the same runs, or the
same runs judged by two sets of qrels):

* :func:`kendall_tau`: Kendall's tau-b (equal to :func:`scipy.stats.kendalltau`);
* :func:`tau_ap`: AP correlation (Yilmaz, Aslam and Robertson, SIGIR 2008), which weighs
  swaps near the top more.

>>> from rankereval import Rankings
>>> from rankereval.agreement import rbo, jaccard, kendall_tau, tau_ap
>>> a = Rankings.from_ranked_indices([[1, 2, 3, 4], [5, 6, 7]])
>>> b = Rankings.from_ranked_indices([[1, 3, 2, 4], [8, 9]])
>>> r = rbo(a, b, p=0.9)
>>> r.ext.round(4)
array([0.955, 0.   ])
>>> r.min.round(4), r.max.round(4)
(array([0.5614, 0.    ]), array([0.955 , 0.7378]))
>>> jaccard(a, b, k=2).round(4)
array([0.3333, 0.    ])
>>> round(kendall_tau({"bm25": 0.31, "dense": 0.42, "hybrid": 0.45},
...                   {"bm25": 0.52, "dense": 0.61, "hybrid": 0.58}), 4)
0.3333
"""
from typing import NamedTuple

import numpy as np

__all__ = ["rbo", "RBOResult", "jaccard", "kendall_tau", "tau_ap"]


class RBOResult(NamedTuple):
    """Rank-biased overlap of each pair of rankings (arrays of float64, one entry per query).

    Attributes
    ----------
    ext : ndarray
        Extrapolated RBO (RBO_ext): the agreement seen in the prefixes, assumed to continue
        below them; NaN where a ranking is empty (nothing to extrapolate from).
    min : ndarray
        The lower bound RBO_min: every unseen item disagrees.
    max : ndarray
        The upper bound ``min + res``: every unseen item agrees as much as it can.
    res : ndarray
        The residual RBO_res: the part of RBO the prefixes leave open.
    """

    ext: np.ndarray
    min: np.ndarray
    max: np.ndarray
    res: np.ndarray

    def mean(self):
        """Mean of ``ext`` over the queries where it is defined (NaN if none is)."""
        ok = ~np.isnan(self.ext)
        return float(self.ext[ok].mean()) if ok.any() else float("nan")


def _rankings(x, name):
    from rankereval.data import Rankings

    if isinstance(x, Rankings):
        return x
    if x is None or isinstance(x, (str, bytes, dict)):
        raise TypeError(f"{name} must be Rankings (or ranked ids, one list per query), got "
                        f"{type(x).__name__}")
    return Rankings.from_ranked_indices(x)


def _pair(a, b):
    a, b = _rankings(a, "a"), _rankings(b, "b")
    if a.n_rows != b.n_rows:
        raise ValueError(f"a and b must rank the same queries: a has {a.n_rows} rankings, b has "
                         f"{b.n_rows}")
    return a, b


def _cutoff(k, name="k"):
    from rankereval._validation import check_k

    return check_k(k, name)


def _kernel(a, b, k, p, rbo):
    import rankereval.agreement._kernels as _agreement
    from rankereval._threads import effective_n_threads

    ia, ib = a.indices, b.indices
    if ia.dtype != ib.dtype:  # one fused type for both: the wider
        ia, ib = ia.astype(np.int64), ib.astype(np.int64)
    ia, ib = np.ascontiguousarray(ia), np.ascontiguousarray(ib)
    la = np.ascontiguousarray(a.lengths, dtype=np.int64)
    lb = np.ascontiguousarray(b.lengths, dtype=np.int64)
    n = a.n_rows
    overlap = np.empty(n, dtype=np.int64)
    outs = [np.empty(n if rbo else 0) for _ in range(3)]
    depth = np.iinfo(np.intp).max if k is None else int(k)
    _agreement.rbo_rows(ia, la, ib, lb, depth, float(p), rbo, *outs, overlap,
                        effective_n_threads(ia.size + ib.size))
    if n and (overlap < 0).any():
        raise MemoryError("rbo: no memory for the per-thread hash tables")
    return outs, overlap


def rbo(a, b, *, p=0.9, k=None, ties=None):
    r"""Rank-biased overlap of each pair of rankings, extrapolated, with its bounds.

    Parameters
    ----------
    a, b : Rankings (or ranked ids, one list per query)
        Two rankings of each query, row by row; the rows may have different lengths (RBO
        for uneven lists), and either may be empty.
    p : float in (0, 1), default=0.9
        Persistence: the weight of depth d is proportional to ``p ** (d - 1)``, so the top
        ``1 / (1 - p)`` items carry most of it (p = 0.9: the top 10 have 86% of it).
    k : int, optional
        Evaluate the prefixes of depth ``k`` only (both rankings cut at k; with ``ties``, a
        tied group that crosses depth k is kept whole, as ``Rankings.from_scores(...,
        k=k, ties="keep")`` keeps it).
    ties : {None, 'a', 'b', 'w'}, default=None
        How tied items are treated when ``a`` or ``b`` keeps its ties
        (``Rankings.from_scores(..., ties="keep")``, :attr:`~rankereval.Rankings.ties`);
        the variants of Corsi and Urbano (SIGIR 2024). None: the recorded order (equal
        scores ordered by item id), as without ties. 'a': ties are uncertainty; RBO^a,
        whose overlaps (and ``min``) are the mean over every order of each tied group.
        'b': ties are uncertainty, and the agreement at each depth is corrected for the
        information the ties lose (RBO^b, like Kendall's tau-b). 'w': ties are equality
        (Webber, Moffat and Zobel's treatment, RBO^w): a tied group enters the prefix whole
        at its first position. On rankings without ties every variant equals ``ties=None``
        exactly (the same kernel computes it).

    Returns
    -------
    RBOResult
        Arrays ``ext``, ``min``, ``max``, ``res``, one entry per query.

    Notes
    -----
    Let S and L be the two rankings of a query with lengths :math:`s \le l`, and
    :math:`X_d = |S_{:d} \cap L_{:d}|` the overlap at depth d (for :math:`d > s`, S is all
    of S). Following Webber, Moffat and Zobel (2010), eq. 32, the extrapolated value
    assumes that the agreement :math:`X_s / s` of the shorter list continues below it:

    .. math::

        \mathrm{RBO}_\mathrm{ext} = \frac{1-p}{p}\Big(\sum_{d=1}^{l} \frac{X_d}{d} p^d
        + \sum_{d=s+1}^{l} \frac{X_s (d-s)}{s\,d} p^d\Big)
        + \Big(\frac{X_l - X_s}{l} + \frac{X_s}{s}\Big) p^l .

    For lists of one length it is their eq. 30. The lower bound counts no overlap from
    unseen items, :math:`\mathrm{RBO}_\min = \frac{1-p}{p}\big(\sum_{d=1}^{l}
    \frac{X_d - X_l}{d} p^d - X_l \ln(1-p)\big)`; the upper bound ``max`` lets every unseen
    item agree where it can: at depth :math:`s < d \le l` the overlap is at most
    :math:`X_d + d - s`, below l at most :math:`\min(d, 2d - s - l + X_l)`; ``res = max -
    min`` is their residual (eq. 13 for even lists). All values lie in [0, 1]; identical
    rankings have ``ext = max = 1``, disjoint ones ``ext = min = 0``.

    **Ties** (Corsi and Urbano, 2024). Each item of a ranking holds a contribution
    :math:`c(d)` to the prefix of depth d. For an item of a tied group of g items whose
    first position is t, :math:`c(d) = \min(1, \max(0, (d - t + 1) / g))` in the variants
    'a' and 'b' (the group fills its positions jointly: at depth d, each of its items is in
    the prefix in the share of its orders that put it there), and :math:`c(d) = [d \ge t]`
    in 'w'; an untied item has :math:`c(d) = [d \ge t]` in all three. The overlap is
    :math:`X_d = \sum_i c^S_i(d)\, c^L_i(d)` and the agreement at depth d is :math:`X_d / d`
    ('a'), :math:`X_d / \sqrt{\sum_i c^S_i(d)^2 \sum_i c^L_i(d)^2}` ('b') or
    :math:`2 X_d / (\sum_i c^S_i(d) + \sum_i c^L_i(d))` ('w'); below the shorter ranking
    (:math:`s < d \le l`) its sums count d items, all whole. ``ext`` extrapolates
    :math:`A_s` to the unseen items of S, each matched with the mean contribution of the
    items of L that S lacks; ``max`` lets the first :math:`d - s` of those items (L's
    order) agree; beyond depth l, where no item is tied any more, ``ext``, ``min`` and
    ``max`` continue as without ties. For 'a', ``min`` equals the mean of ``ties=None``'s
    ``min`` over every order of every tied group of both rankings (the overlaps are linear
    in the orders); ``ext`` and ``max`` are not exactly such means. The tie-aware values
    come from a typed kernel (O(s l) per pair of tied rankings, OpenMP over the pairs),
    only for the rows holding a tie; the other rows keep the values of ``ties=None``.

    References
    ----------
    .. [1] W. Webber, A. Moffat, J. Zobel, "A similarity measure for indefinite rankings",
       ACM TOIS 28(4), 2010.
    .. [2] M. Corsi, J. Urbano, "The treatment of ties in rank-biased overlap", SIGIR 2024.

    Examples
    --------
    >>> from rankereval.agreement import rbo
    >>> r = rbo([[1, 2, 3]], [[1, 2, 3]], p=0.5)
    >>> float(r.ext[0]), round(float(r.min[0]), 4), round(float(r.max[0]), 4)
    (1.0, 0.9544, 1.0)

    Items 0 and 1 tied in both rankings: RBO^a is the mean over the orders of the pair
    (1 when both put the same item first, 1/2 otherwise), RBO^w counts the tie as equality:

    >>> from rankereval import Rankings
    >>> tied = Rankings.from_scores([[0.9, 0.9, 0.5]], ties="keep")
    >>> rbo(tied, tied, p=0.5, ties="a").ext, rbo(tied, tied, p=0.5, ties="w").ext
    (array([0.75]), array([1.]))
    """
    from rankereval._validation import check_real

    a, b = _pair(a, b)
    p = float(check_real(p, "p"))
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be strictly between 0 and 1, got {p!r}")
    k = None if k is None else _cutoff(k)
    if ties is not None and (not isinstance(ties, str) or ties not in TIE_VARIANTS):
        raise ValueError(f"ties must be None (the recorded order), 'a', 'b' or 'w' (the variants "
                         f"of Corsi and Urbano), got {ties!r}")
    (ext, low, res), _ = _kernel(a, b, k, p, True)
    low = np.clip(low, 0.0, 1.0)
    res = np.clip(res, 0.0, 1.0 - low)
    high = low + res
    if ties is not None and (a.has_ties or b.has_ties):
        # only the rows holding a tie leave the kernel's values
        rows = np.flatnonzero(_tied_rows(a) | _tied_rows(b))
        if rows.size:
            e, lo, hi = _tied_kernel(a, b, rows, k, p, ties)
            lo = np.clip(lo, 0.0, 1.0)
            hi = np.minimum(np.maximum(hi, lo), 1.0)
            ext[rows], low[rows], high[rows], res[rows] = e, lo, hi, hi - lo
    return RBOResult(ext, low, high, res)


def _tied_kernel(a, b, rows, k, p, variant):
    """ext, min and max (unclipped) of the tie-aware RBO of the listed rows: the typed
    kernel ``_agreement.rbo_tied_rows`` (O(s l) per pair)."""
    import rankereval.agreement._kernels as _agreement
    from rankereval._threads import effective_n_threads

    ia, ib = a.indices, b.indices
    if ia.dtype != ib.dtype:
        ia, ib = ia.astype(np.int64), ib.astype(np.int64)
    ia, ib = np.ascontiguousarray(ia), np.ascontiguousarray(ib)

    def flags(r, width):
        if r.ties is None:
            return np.zeros((r.n_rows, 0), dtype=np.uint8)
        return np.ascontiguousarray(r.ties[:, :width]).view(np.uint8)

    n = a.n_rows
    out = [np.full(n, np.nan) for _ in range(3)]
    depth = ia.shape[1] + ib.shape[1] + 1 if k is None else int(k)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    ok = _agreement.rbo_tied_rows(
        ia, np.ascontiguousarray(a.lengths, dtype=np.int64), flags(a, ia.shape[1]),
        ib, np.ascontiguousarray(b.lengths, dtype=np.int64), flags(b, ib.shape[1]),
        rows, max(depth, 1), float(p), TIE_VARIANTS.index(variant), *out,
        effective_n_threads(rows.size * (ia.shape[1] + ib.shape[1]) ** 2))
    # a row left unwritten (min is NaN: its thread found no memory) fails the call too: the
    # kernel's flag only reports the thread that ran the last row
    if not ok or np.isnan(out[1][rows]).any():
        raise MemoryError("rbo: no memory for the per-thread buffers of the tie-aware kernel")
    return out[0][rows], out[1][rows], out[2][rows]


#: the tie-aware variants of RBO (Corsi and Urbano, SIGIR 2024)
TIE_VARIANTS = ("a", "b", "w")


def _tied_rows(r):
    """Rows of ``r`` holding a tied group."""
    if r.ties is None:
        return np.zeros(r.n_rows, dtype=bool)
    width = r.ties.shape[1]
    inside = np.arange(width) < (r.lengths[:, None] - 1)  # a flag j pairs positions j, j + 1
    return (r.ties & inside).any(axis=1)


def jaccard(a, b, k):
    """Jaccard index of the two top-k sets of each query: ``|A ∩ B| / |A ∪ B|``.

    Parameters
    ----------
    a, b : Rankings (or ranked ids, one list per query)
        Two rankings of each query, row by row.
    k : int
        Depth of the top-k sets (a shorter ranking gives all its items).

    Returns
    -------
    ndarray of float64, shape (n_queries,)
        NaN where both top-k sets are empty.

    Examples
    --------
    >>> from rankereval.agreement import jaccard
    >>> jaccard([[1, 2, 3, 4]], [[2, 1, 5]], k=3)
    array([0.5])
    """
    a, b = _pair(a, b)
    k = _cutoff(k)
    _, overlap = _kernel(a, b, k, 0.5, False)
    size_a = np.minimum(a.lengths, k)
    size_b = np.minimum(b.lengths, k)
    union = size_a + size_b - overlap
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, overlap / np.maximum(union, 1), np.nan)


# ----------------------------------------------------------------------------------------
# orderings of systems
# ----------------------------------------------------------------------------------------

def _scores(x, y):
    """The two score vectors, matched by system name when both are mappings."""
    if isinstance(x, dict) or isinstance(y, dict):
        if not (isinstance(x, dict) and isinstance(y, dict)):
            raise TypeError("x and y must both be dicts {system: score} or both arrays")
        if set(x) != set(y):
            raise ValueError(f"x and y must score the same systems: only in x {sorted(set(x) - set(y), key=str)}, "
                             f"only in y {sorted(set(y) - set(x), key=str)}")
        names = list(x)
        xs = np.array([x[n] for n in names], dtype=np.float64)
        ys = np.array([y[n] for n in names], dtype=np.float64)
    else:
        xs = np.asarray(x, dtype=np.float64)
        ys = np.asarray(y, dtype=np.float64)
    for v, name in ((xs, "x"), (ys, "y")):
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D (one score per system), got shape {v.shape}")
        if not np.isfinite(v).all():
            raise ValueError(f"{name} must hold finite scores (no NaN or infinity)")
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must score the same number of systems, got {xs.size} and {ys.size}")
    if xs.size < 2:
        raise ValueError(f"x and y must score at least two systems, got {xs.size}")
    return xs, ys


def kendall_tau(x, y):
    """Kendall's tau-b between two orderings of the same systems.

    Parameters
    ----------
    x, y : dict {system: score} or array-like of float
        Two scores per system (e.g. mean NDCG@10 under two sets of qrels); dicts are matched
        by system name, arrays by position.

    Returns
    -------
    float
        Equal to ``scipy.stats.kendalltau(x, y).statistic`` (tau-b: ties in either ordering
        are accounted for); NaN when every system is tied in one of them. The p-value, when
        wanted, is scipy's.

    Examples
    --------
    >>> from rankereval.agreement import kendall_tau
    >>> round(kendall_tau([0.1, 0.2, 0.3, 0.4], [0.1, 0.3, 0.2, 0.4]), 4)
    0.6667
    """
    from scipy.stats import kendalltau

    xs, ys = _scores(x, y)
    return float(kendalltau(xs, ys)[0])


def tau_ap(x, y, *, higher_is_better=True):
    r"""AP correlation of the ordering ``y`` with the reference ordering ``x``.

    .. math::

        \tau_{AP} = \frac{2}{N-1} \sum_{i=2}^{N} \frac{C(i)}{i-1} - 1

    where the systems are taken in the order of ``y`` (best first) and C(i) counts the
    systems above the i-th one in ``y`` that are also above it in ``x`` (Yilmaz, Aslam and
    Robertson, SIGIR 2008). Like Kendall's tau it is 1 for the same order and -1 for the
    reverse, but a swap near the top costs more than one near the bottom; it is not
    symmetric (``x`` is the reference, e.g. the official qrels; ``y`` the ordering judged).

    Parameters
    ----------
    x, y : dict {system: score} or array-like of float
        Scores of the same systems; dicts are matched by system name.
    higher_is_better : bool, default=True
        Whether a higher score ranks a system higher.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If two systems tie in ``x`` or in ``y``: tau_AP is defined for strict orderings
        (the tie-aware variants of Urbano and Marrero, SIGIR 2017, are not implemented).

    Examples
    --------
    >>> from rankereval.agreement import tau_ap
    >>> round(tau_ap([4, 3, 2, 1], [3, 4, 2, 1]), 4)   # the top two swapped
    0.3333
    >>> round(tau_ap([4, 3, 2, 1], [4, 3, 1, 2]), 4)   # the bottom two swapped
    0.7778
    """
    xs, ys = _scores(x, y)
    if not isinstance(higher_is_better, (bool, np.bool_)):
        raise TypeError(f"higher_is_better must be True or False, got {higher_is_better!r}")
    for v, name in ((xs, "x"), (ys, "y")):
        if np.unique(v).size != v.size:
            raise ValueError(f"{name} has tied scores: tau_ap needs a strict ordering of the systems")
    sign = 1.0 if higher_is_better else -1.0
    order = np.argsort(-sign * ys, kind="stable")            # systems in y's order, best first
    ref = sign * xs[order]                                   # their reference scores
    n = ref.size
    # C(i): systems above position i in y that x also ranks above it
    above = np.array([np.count_nonzero(ref[:i] > ref[i]) for i in range(1, n)], dtype=np.float64)
    return float(2.0 / (n - 1) * np.sum(above / np.arange(1, n)) - 1.0)
