"""Typed kernel of the per-query agreement measures between two rankings (rank-biased overlap
and the overlap of top-k sets): :mod:`rankereval.agreement` checks and converts the inputs
and turns the results into arrays; this module only loops.

One pass per pair of rankings, O(s + l) time with s, l the lengths of the two (cut) rankings:
the items of ranking ``a`` go into a small open-addressing hash table (per thread, sized by
the width of ``a``, so item ids of any size cost nothing; a slot belongs to the current pair
when its stamp is the row number, so the table is never cleared), each item of ``b`` is
looked up, and a shared item found at depth i of ``a`` and j of ``b`` enters the overlap at
depth e = max(i, j). The sums over depths of Webber, Moffat and Zobel's extrapolated RBO and
its bounds (see ``agreement.rbo``) then come from tables of p^d and of the prefix sums of
p^d and p^d / d, built once per call: a shared item adds ``sum_{d=e}^{l} p^d / d`` to
``sum_d X_d p^d / d``, so no loop over the depths is needed. Ids are only hashed, never used as array indices; a depth is at most the width of
its array, so nothing is read out of bounds.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport NAN, log1p
from libc.stdlib cimport free, malloc

from rankereval._typedefs cimport float64_t, int64_t, rank_t

cdef extern from "../metrics/_lookup.h":
    void re_prefetch(const void* p, Py_ssize_t bytes) noexcept nogil

import numpy as np

cdef enum:
    ROWS_AHEAD = 8   # the prefixes of row i + 8 are requested at row i (strided rows miss the cache)


cdef inline Py_ssize_t _cut(int64_t length, Py_ssize_t width, Py_ssize_t k) noexcept nogil:
    """Items of a ranking used: its length (trusted only up to the width), cut at k."""
    cdef Py_ssize_t n = <Py_ssize_t>length
    if n < 0:
        n = 0
    if n > width:
        n = width
    return n if n < k else k


cdef inline Py_ssize_t _slot(int64_t key, int shift) noexcept nogil:
    """First slot of ``key`` in a table of ``2 ** (64 - shift)`` slots (Fibonacci hashing)."""
    return <Py_ssize_t>((<unsigned long long>key * 0x9E3779B97F4A7C15ULL) >> shift)


cdef void _one(const rank_t *ra, Py_ssize_t la, const rank_t *rb, Py_ssize_t lb, double p,
               bint rbo, const double *pw, const double *p1, const double *p2,
               int64_t *keys, int64_t *pos, int64_t *stamps, int64_t stamp, int shift,
               Py_ssize_t mask, double *ext, double *lo, double *res,
               int64_t *overlap) noexcept nogil:
    """Overlap and (with ``rbo``) RBO_ext, RBO_min and RBO_res of one pair of rankings.

    ``pw[d] = p^d``, ``p1[d] = sum_{e<=d} p^e``, ``p2[d] = sum_{e<=d} p^e / e``; a slot of
    the hash table is in use for this pair when ``stamps[slot] == stamp``.
    """
    cdef Py_ssize_t i, j, h, s, l, f, e
    cdef int64_t item, x = 0, xs
    cdef double entered = 0.0, q, extra, part2, part3, tail_w, sum_x
    s = la if la < lb else lb
    l = la if la > lb else lb
    xs = 0
    for i in range(la):
        item = <int64_t>ra[i]
        h = _slot(item, shift)
        while stamps[h] == stamp:
            h = (h + 1) & mask
        stamps[h] = stamp
        keys[h] = item
        pos[h] = i + 1
    for j in range(lb):
        item = <int64_t>rb[j]
        h = _slot(item, shift)
        while stamps[h] == stamp:
            if keys[h] == item:
                # a shared item enters the overlap X_d at depth max(i, j) and stays
                e = <Py_ssize_t>pos[h]
                e = e if e > j + 1 else j + 1     # branch-free: the orders differ at random
                x += 1
                xs += e <= s
                entered += p2[e - 1]
                break
            h = (h + 1) & mask
    overlap[0] = x
    if not rbo:
        return
    q = (1.0 - p) / p
    # sum_{d<=l} X_d p^d / d = sum over shared items of sum_{d=e}^{l} p^d / d
    sum_x = x * p2[l] - entered
    # sum_{d=s+1}^{l} (d - s) p^d / d
    extra = (p1[l] - p1[s]) - s * (p2[l] - p2[s])
    if s == 0:
        ext[0] = NAN
    else:
        ext[0] = q * (sum_x + (<double>xs / s) * extra) + ((<double>(x - xs)) / l + (<double>xs) / s) * pw[l]
    # sum_{d<=l} (X_d - X_l) p^d / d - X_l ln(1 - p)
    lo[0] = q * (x * (-log1p(-p)) - entered)
    # residual (see agreement.rbo): depths l < d < f add 2d - s - l, depths d >= f add d - X_l
    f = l + s - <Py_ssize_t>x
    if f < l + 1:
        f = l + 1
    part2 = 2.0 * (p1[f - 1] - p1[l]) - (s + l) * (p2[f - 1] - p2[l])
    tail_w = -log1p(-p) - p2[f - 1]
    if tail_w < 0.0:
        tail_w = 0.0
    part3 = pw[f] / (1.0 - p) - x * tail_w
    res[0] = q * (extra + part2 + part3)


def rbo_rows(const rank_t[:, ::1] a, const int64_t[::1] len_a, const rank_t[:, ::1] b,
             const int64_t[::1] len_b, Py_ssize_t k, double p, bint rbo, float64_t[::1] ext,
             float64_t[::1] lo, float64_t[::1] res, int64_t[::1] overlap, int n_threads):
    """Per row i: the rankings ``a[i]`` and ``b[i]`` cut at depth ``k`` (their first
    ``len[i]`` ids, at most the width), their overlap into ``overlap[i]`` and, with ``rbo``,
    RBO_ext, RBO_min and RBO_res at persistence ``p`` into ``ext``, ``lo``, ``res``.
    Every output has ``a.shape[0]`` entries; the caller checks ``0 < p < 1``."""
    cdef Py_ssize_t n = a.shape[0], wa = a.shape[1], wb = b.shape[1]
    cdef Py_ssize_t i, la, lb, cap, t, depth
    cdef int shift
    cdef int64_t stamp
    cdef int64_t *keys
    cdef int64_t *pos
    cdef int64_t *stamps
    if b.shape[0] != n or len_a.shape[0] != n or len_b.shape[0] != n or overlap.shape[0] != n:
        raise ValueError("rbo_rows: rows of a, b, lengths and outputs differ")
    if rbo and (ext.shape[0] != n or lo.shape[0] != n or res.shape[0] != n):
        raise ValueError("rbo_rows: rows of the RBO outputs differ")
    if k < 0:
        raise ValueError("rbo_rows: k must be >= 0")
    if n == 0:
        return
    wa = wa if wa < k else k
    wb = wb if wb < k else k
    # the depth tables: d = 0 .. wa + wb + 1 (f <= l + s, and l + 1 when s = 0)
    depth = wa + wb + 2
    d = np.arange(depth, dtype=np.float64)
    pw_arr = np.power(p, d)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(d > 0, pw_arr / np.maximum(d, 1.0), 0.0)
    p1_arr = np.cumsum(np.where(d > 0, pw_arr, 0.0))
    p2_arr = np.cumsum(terms)
    cdef const double[::1] pw = pw_arr
    cdef const double[::1] p1 = p1_arr
    cdef const double[::1] p2 = p2_arr
    cap = 16
    shift = 60
    while cap < 4 * wa + 2:
        cap *= 2
        shift -= 1
    with nogil, parallel(num_threads=n_threads):
        keys = <int64_t *>malloc(cap * sizeof(int64_t))
        pos = <int64_t *>malloc(cap * sizeof(int64_t))
        stamps = <int64_t *>malloc(cap * sizeof(int64_t))
        if stamps != NULL:
            for t in range(cap):
                stamps[t] = -1
        for i in prange(n, schedule='static'):
            if keys == NULL or pos == NULL or stamps == NULL:
                overlap[i] = -1  # the caller raises MemoryError
                continue
            if i + ROWS_AHEAD < n:
                if wa > 0:
                    re_prefetch(&a[i + ROWS_AHEAD, 0], wa * sizeof(a[0, 0]))
                if wb > 0:
                    re_prefetch(&b[i + ROWS_AHEAD, 0], wb * sizeof(b[0, 0]))
            la = _cut(len_a[i], wa, k)
            lb = _cut(len_b[i], wb, k)
            # the row number is the stamp: a thread's rows are distinct, so no clearing
            if rbo:
                _one(&a[i, 0] if la > 0 else NULL, la, &b[i, 0] if lb > 0 else NULL, lb, p, rbo,
                     &pw[0], &p1[0], &p2[0], keys, pos, stamps, <int64_t>i, shift, cap - 1,
                     &ext[i], &lo[i], &res[i], &overlap[i])
            else:
                _one(&a[i, 0] if la > 0 else NULL, la, &b[i, 0] if lb > 0 else NULL, lb, p, rbo,
                     &pw[0], &p1[0], &p2[0], keys, pos, stamps, <int64_t>i, shift, cap - 1,
                     NULL, NULL, NULL, &overlap[i])
        free(keys)
        free(pos)
        free(stamps)
