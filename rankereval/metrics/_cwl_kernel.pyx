"""Typed kernel of the C/W/L measures (``rankereval/metrics/_cwl.py``).

Moffat et al.'s C/W/L framework describes a user who reads a ranking from the top and, after
rank i, continues to rank i + 1 with probability C(i); the weight of rank i is
W(i) = prod_{j<i} C(j) / sum_t prod_{j<t} C(j), and the measure is the expected rate of gain
sum_i W(i) g(i) (cwl_eval's first column). The continuation function is the measure; it reads
the rank, the gain of the rank and the gains so far.

The gains come from the relevance profile of each ranking (``rankereval/metrics/_profile_fast.pyx``: one
code per rank of the top ``min(depth, width)``, the grade when stored, 0 or negative when not,
NaN past the end). Ranks past the end of a ranking, up to ``depth`` (cwl_eval's
``--max_depth``, 1000), have gain 0, as cwl_eval pads them. One pass per ranking: the running
product of the C(j) and the two sums; it stops once the product is 0 (nothing after counts).
"""
from cython.parallel cimport prange
from libc.math cimport NAN, isnan, log

from rankereval._typedefs cimport float64_t, int64_t

cdef enum:
    SDCG = 0     # C(i) = log2(i + 1) / log2(i + 2) for i < k, else 0
    INST = 1     # C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - sum_{j<=i} g(j)
    INSQ = 2     # C(i) = ((i + 2T - 1) / (i + 2T))^2
    BPM = 3      # C(i) = 1 while the gain so far < T and the cost so far (i) < K, else 0
    NERR8 = 4    # C(i) = 1 - g(i) for i < k, else 0
    NERR9 = 5    # C(i) = i / (i + 1) (1 - g(i)) for i < k, else 0
    NERR10 = 6   # C(i) = phi (1 - g(i))
    NERR11 = 7   # C(i) = ((i + 2T - 1) / (i + 2T))^2 (1 - g(i))

#: the measures of the kernel, by name (``score``'s ``measure``)
MEASURE_IDS = {"sdcg": SDCG, "inst": INST, "insq": INSQ, "bpm": BPM, "nerr8": NERR8, "nerr9": NERR9,
               "nerr10": NERR10, "nerr11": NERR11}


cdef inline double _gain(double code, double lo, double span) noexcept nogil:
    # the code's grade clipped to [lo, lo + span] and scaled into [0, 1] (items not stored,
    # unjudged or past the end: 0)
    if isnan(code) or code <= lo:
        return 0.0
    if code >= lo + span:
        return 1.0
    return (code - lo) / span


cdef double _one(const float64_t[:, ::1] codes, Py_ssize_t i, Py_ssize_t width, int measure,
                 double k, double t, double hb, double hc, double median, double lo, double span,
                 Py_ssize_t depth) noexcept nogil:
    cdef Py_ssize_t r
    cdef double g, c, x, rank, cum = 0.0, prod = 1.0, mass = 0.0, utility = 0.0
    cdef double target = t, budget = k
    cdef bint go_gain = True, go_cost = True
    cdef double ln2 = log(2.0)
    for r in range(depth):
        g = _gain(codes[i, r], lo, span) if r < width else 0.0
        rank = <double> (r + 1)
        mass += prod
        utility += prod * g
        cum += g
        if measure == SDCG:
            c = (log(rank + 1.0) / ln2) / (log(rank + 2.0) / ln2) if rank < k else 0.0
        elif measure == INST:
            x = rank + t + (t - cum)
            c = ((x - 1.0) / x) * ((x - 1.0) / x)
        elif measure == INSQ:
            x = rank + 2.0 * t
            c = ((x - 1.0) / x) * ((x - 1.0) / x)
        elif measure == BPM:
            # (cwl_eval's two loops: each constraint holds up to its first failure; the dynamic
            # form moves T by hb and K by hc times the gain's distance from the median)
            go_gain = go_gain and cum < target
            if go_gain:
                target = target + hb * (g - median)
            go_cost = go_cost and rank < budget
            if go_cost:
                budget = budget + hc * (g - median)
            c = 1.0 if go_gain and go_cost else 0.0
        elif measure == NERR8:
            c = 1.0 - g if rank < k else 0.0
        elif measure == NERR9:
            c = (rank / (rank + 1.0)) * (1.0 - g) if rank < k else 0.0
        elif measure == NERR10:
            c = t * (1.0 - g)
        else:  # NERR11
            x = rank + 2.0 * t
            c = ((x - 1.0) / x) * ((x - 1.0) / x) * (1.0 - g)
        prod = prod * c
        if prod == 0.0:
            break
    return utility / mass


def score(const float64_t[:, ::1] codes, int measure, double k, double t, double hb, double hc,
          double median, double lo, double hi, Py_ssize_t depth, float64_t[::1] out, int n_threads):
    """``out[i]``: the expected rate of gain of ranking i under ``measure`` (``MEASURE_IDS``).

    ``codes``: the profile (its first ``depth`` columns are read); the gain of a code is
    ``(min(code, hi) - lo) / (hi - lo)`` above ``lo``, else 0.
    ``k``: the cutoff of SDCG and NERR8/9, BPM's K; ``t``: T of INST/INSQ/NERR11/BPM and
    NERR10's phi; ``hb``, ``hc``, ``median``: dynamic BPM's. ``depth``: the ranks read (> 0).
    """
    cdef Py_ssize_t n = codes.shape[0], width = codes.shape[1], i
    if out.shape[0] != n:
        raise ValueError("one output per ranking")
    if depth < 1:
        raise ValueError("depth must be positive")
    if width > depth:
        width = depth  # (a profile shared with metrics that read deeper: the first depth ranks)
    if measure < SDCG or measure > NERR11:
        raise ValueError(f"unknown C/W/L measure id {measure}")
    if not hi > lo:
        raise ValueError("hi must exceed lo")
    cdef double span = hi - lo
    for i in prange(n, nogil=True, schedule='static', num_threads=n_threads):
        out[i] = _one(codes, i, width, measure, k, t, hb, hc, median, lo, span, depth)


def compat(const float64_t[:, ::1] ideal_pos, const int64_t[::1] lengths, const int64_t[::1] n_ideal,
           const float64_t[::1] tail, const float64_t[::1] head, bint normalize, float64_t[::1] out,
           int n_threads):
    """``out[i]``: Clarke et al.'s compatibility of ranking i (an RBO against its ideal
    ranking; ``rankereval/metrics/_cwl.py``).

    ``ideal_pos[i, r]``: the 1-based position in the ideal ranking of the item at rank r + 1
    (0: not relevant); ``n_ideal[i]``: the length of the ideal ranking; ``tail[d]`` =
    sum_{t <= d} p^(t-1) / t and ``head[d]`` = sum_{t <= d} p^(t-1) (index 0: 0), long enough
    for every ``max(length, n_ideal)``. The overlap of the two prefixes of length d counts
    each item of both from ``d = max(rank, ideal position)`` on, so the sum over depths is
    the sum over those items of ``tail[depth] - tail[d - 1]``.
    """
    cdef Py_ssize_t n = ideal_pos.shape[0], width = ideal_pos.shape[1], i
    if out.shape[0] != n or lengths.shape[0] != n or n_ideal.shape[0] != n:
        raise ValueError("one length, ideal length and output per ranking")
    if head.shape[0] != tail.shape[0]:
        raise ValueError("the two tables of the weights have the same length")
    for i in prange(n, nogil=True, schedule='static', num_threads=n_threads):
        out[i] = _compat_one(ideal_pos, i, width, lengths[i], n_ideal[i], tail, head, normalize)


cdef double _compat_one(const float64_t[:, ::1] ideal_pos, Py_ssize_t i, Py_ssize_t width, int64_t length,
                        int64_t n_ideal, const float64_t[::1] tail, const float64_t[::1] head,
                        bint normalize) noexcept nogil:
    cdef Py_ssize_t r, depth, m, top = tail.shape[0] - 1
    cdef double total = 0.0, pos, best
    if length < 0:
        length = 0
    if length > width:
        length = width
    depth = length if length > n_ideal else n_ideal
    if depth == 0 or depth > top:
        return NAN
    for r in range(length):
        pos = ideal_pos[i, r]
        if pos > 0:
            m = <Py_ssize_t> pos if pos > r + 1 else r + 1
            if m <= depth:
                total = total + (tail[depth] - tail[m - 1])
    if normalize:
        # the ideal against itself: the prefix of length d overlaps min(d, n_ideal) items
        best = head[n_ideal] + n_ideal * (tail[depth] - tail[n_ideal])
        total = total / best if best > 0 else 0.0
    else:
        total = total / head[depth]
    return total if total < 1.0 else 1.0  # (at most 1; the last bit of the sums can exceed it)
