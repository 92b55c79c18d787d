"""Typed kernel of the per-query agreement measures between two rankings (rank-biased overlap
and the overlap of top-k sets): :mod:`rankereval.agreement` checks and converts the inputs
and turns the results into arrays; this module only loops.

One pass per pair of rankings, O(s + l) time with s, l the lengths of the two (cut) rankings:
the items of ranking ``a`` go into a small open-addressing hash table (per thread, sized by
the width of ``a``, so item ids of any size cost nothing), each item of ``b`` is looked up,
and a shared item found at depth i of ``a`` and j of ``b`` enters the overlap at depth
max(i, j). The running overlap X_d then gives the sums of Webber, Moffat and Zobel's
extrapolated RBO and its bounds in one loop over the depths (see ``agreement.rbo`` for the
formulas). Ids are only hashed, never used as array indices; a depth is at most the width of
its array, so nothing is read out of bounds.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport NAN, log1p, pow
from libc.stdlib cimport free, malloc

from rankereval._typedefs cimport float64_t, int64_t, rank_t

import numpy as np


cdef inline Py_ssize_t _cut(int64_t length, Py_ssize_t width, Py_ssize_t k) noexcept nogil:
    """Items of a ranking used: its length (trusted only up to the width), cut at k."""
    cdef Py_ssize_t n = <Py_ssize_t>length
    if n < 0:
        n = 0
    if n > width:
        n = width
    return n if n < k else k


cdef inline Py_ssize_t _slot(int64_t key, Py_ssize_t mask) noexcept nogil:
    """First slot of ``key`` in a table of ``mask + 1`` slots (splitmix64 finaliser)."""
    cdef unsigned long long z = <unsigned long long>key + 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    z = z ^ (z >> 31)
    return <Py_ssize_t>(z & <unsigned long long>mask)


cdef void _one(const rank_t *ra, Py_ssize_t la, const rank_t *rb, Py_ssize_t lb, double p,
               bint rbo, int64_t *keys, int64_t *pos, Py_ssize_t mask, int64_t *inc,
               double *ext, double *lo, double *res, int64_t *overlap) noexcept nogil:
    """Overlap and (with ``rbo``) RBO_ext, RBO_min and RBO_res of one pair of rankings.

    ``keys``/``pos``: an empty hash table (keys -1) of ``mask + 1`` slots, left empty again;
    ``inc``: ``la + lb + 1`` zeros, left zero again.
    """
    cdef Py_ssize_t i, j, h, s, l, d, f, depth
    cdef int64_t item, x, xs, xl
    cdef double pw, q, sum_x, sum_w, extra, part2, part3, tail_w
    for i in range(la):
        item = <int64_t>ra[i]
        h = _slot(item, mask)
        while keys[h] != -1 and keys[h] != item:
            h = (h + 1) & mask
        keys[h] = item
        pos[h] = i + 1
    for j in range(lb):
        item = <int64_t>rb[j]
        h = _slot(item, mask)
        while keys[h] != -1:
            if keys[h] == item:
                depth = <Py_ssize_t>pos[h]
                if depth < j + 1:
                    depth = j + 1
                inc[depth] += 1
                break
            h = (h + 1) & mask
    for i in range(la):  # empty the table again (only the slots used)
        item = <int64_t>ra[i]
        h = _slot(item, mask)
        while keys[h] != item:
            h = (h + 1) & mask
        keys[h] = -1
    # clustered linear probing needs no tombstones here: every key inserted is removed
    s = la if la < lb else lb
    l = la if la > lb else lb
    x = 0
    xs = 0
    pw = 1.0
    sum_x = 0.0
    sum_w = 0.0
    extra = 0.0
    for d in range(1, l + 1):
        x += inc[d]
        inc[d] = 0
        if not rbo:
            continue
        pw *= p
        sum_x += x * pw / d
        sum_w += pw / d
        if d == s:
            xs = x
        if d > s:
            extra += (d - s) * pw / d
    xl = x
    overlap[0] = xl
    if not rbo:
        return
    q = (1.0 - p) / p
    if s == 0:
        ext[0] = NAN
    else:
        ext[0] = q * (sum_x + (<double>xs / s) * extra) + ((<double>(xl - xs)) / l + (<double>xs) / s) * pow(p, l)
    lo[0] = q * (sum_x - xl * sum_w - xl * log1p(-p))
    # residual: the most the unseen items can add (see agreement.rbo)
    f = l + s - <Py_ssize_t>xl
    if f < l + 1:
        f = l + 1
    part2 = 0.0
    for d in range(l + 1, f):
        pw *= p
        sum_w += pw / d
        part2 += (2.0 - (<double>(s + l)) / d) * pw
    # d >= f: sum p^d = p^f / (1 - p); sum p^d / d = -log(1 - p) - sum_{d < f} p^d / d
    tail_w = -log1p(-p) - sum_w
    if tail_w < 0.0:
        tail_w = 0.0
    part3 = pw * p / (1.0 - p) - xl * tail_w
    res[0] = q * (extra + part2 + part3)


def rbo_rows(const rank_t[:, ::1] a, const int64_t[::1] len_a, const rank_t[:, ::1] b,
             const int64_t[::1] len_b, Py_ssize_t k, double p, bint rbo, float64_t[::1] ext,
             float64_t[::1] lo, float64_t[::1] res, int64_t[::1] overlap, int n_threads):
    """Per row i: the rankings ``a[i]`` and ``b[i]`` cut at depth ``k`` (their first
    ``len[i]`` ids, at most the width), their overlap into ``overlap[i]`` and, with ``rbo``,
    RBO_ext, RBO_min and RBO_res at persistence ``p`` into ``ext``, ``lo``, ``res``.
    Every output has ``a.shape[0]`` entries; the caller checks shapes and ``0 < p < 1``."""
    cdef Py_ssize_t n = a.shape[0], wa = a.shape[1], wb = b.shape[1]
    cdef Py_ssize_t i, la, lb, cap, t
    cdef int64_t *keys
    cdef int64_t *pos
    cdef int64_t *inc
    if b.shape[0] != n or len_a.shape[0] != n or len_b.shape[0] != n or overlap.shape[0] != n:
        raise ValueError("rbo_rows: rows of a, b, lengths and outputs differ")
    if rbo and (ext.shape[0] != n or lo.shape[0] != n or res.shape[0] != n):
        raise ValueError("rbo_rows: rows of the RBO outputs differ")
    if k < 0:
        raise ValueError("rbo_rows: k must be >= 0")
    cap = 16
    while cap < 2 * wa + 2:
        cap *= 2
    if n == 0:
        return
    with nogil, parallel(num_threads=n_threads):
        keys = <int64_t *>malloc(cap * sizeof(int64_t))
        pos = <int64_t *>malloc(cap * sizeof(int64_t))
        inc = <int64_t *>malloc((wa + wb + 2) * sizeof(int64_t))
        if keys != NULL and pos != NULL and inc != NULL:
            for t in range(cap):
                keys[t] = -1
            for t in range(wa + wb + 2):
                inc[t] = 0
        for i in prange(n, schedule='static'):
            if keys == NULL or pos == NULL or inc == NULL:
                overlap[i] = -1  # the caller raises MemoryError
                continue
            la = _cut(len_a[i], wa, k)
            lb = _cut(len_b[i], wb, k)
            if rbo:
                _one(&a[i, 0] if wa > 0 else NULL, la, &b[i, 0] if wb > 0 else NULL, lb, p, rbo,
                     keys, pos, cap - 1, inc, &ext[i], &lo[i], &res[i], &overlap[i])
            else:
                _one(&a[i, 0] if wa > 0 else NULL, la, &b[i, 0] if wb > 0 else NULL, lb, p, rbo,
                     keys, pos, cap - 1, inc, NULL, NULL, NULL, &overlap[i])
        free(keys)
        free(pos)
        free(inc)
