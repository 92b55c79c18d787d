"""Typed kernel of the per-query agreement measures between two rankings (rank-biased overlap
and the overlap of top-k sets): :mod:`rankereval.agreement` checks and converts the inputs
and turns the results into arrays; this module only loops.

One pass per pair of rankings, O(s + l) time with s, l the lengths of the two (cut) rankings,
OpenMP over the pairs: each thread keeps a marker array over the item ids (4 bytes an id,
grown to the largest id met, at most 2^20 ids): ``mark[id] = base + depth`` for the ids of
ranking ``a``, where ``base`` grows by the length of ``a`` at every pair, so the marks of
earlier pairs read as absent and the array is never cleared (it is zeroed only when
``base`` would wrap at 2^32). Each id of ``b`` then reads its depth in ``a`` in one load, and
a shared item found at depth i of ``a`` and j of ``b`` enters the overlap at depth
e = max(i, j). A pair holding an id of 2^20 or more goes through a small open-addressing
hash table instead (per thread, sized by the width of ``a``; a slot belongs to the current
pair when its stamp is the row number). The sums over depths of Webber, Moffat and Zobel's
extrapolated RBO and its bounds (see ``agreement.rbo``) come from tables of p^d and of the
prefix sums of p^d and p^d / d, built once per call: a shared item adds
``sum_{d=e}^{l} p^d / d`` to ``sum_d X_d p^d / d``, so no loop over the depths is needed and
RBO_ext, RBO_min and RBO_res come out of the same pass. An id indexes the marker array only
after it is checked to lie below the array's size; a depth is at most the width of its
array, so nothing is read out of bounds.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport NAN, log1p, sqrt
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memset

from rankereval._typedefs cimport float64_t, int64_t, rank_t, uint32_t, uint64_t

cdef extern from "../metrics/_lookup.h":
    void re_prefetch(const void* p, Py_ssize_t bytes) noexcept nogil

import numpy as np

cdef enum:
    ROWS_AHEAD = 8   # the prefixes of row i + 8 are requested at row i (strided rows miss the cache)

#: ids below this go through a marker array per thread (4 bytes an id: at most 4 MiB per
#: thread); a ranking holding a larger id goes through the hash table
cdef uint64_t DIRECT_IDS = 1 << 20
cdef uint64_t DIRECT_MIN = 1 << 12


#: the largest value of ``base + width`` (2^32 - 1; lowered by tests to reach the restart)
cdef uint64_t _stamp_limit = 0xFFFFFFFFU


def _set_stamp_limit(uint64_t limit):
    """Set the largest value the marks may reach before they restart; returns the previous
    one (for the tests of the restart, which would otherwise need 2^32 ids)."""
    global _stamp_limit
    previous = _stamp_limit
    _stamp_limit = limit if limit < 0xFFFFFFFFU else 0xFFFFFFFFU
    return previous


cdef struct _Marks:
    uint32_t *mark     # mark[id] - base: the id's depth in the current ranking a (1 .. la)
    uint64_t size      # ids the array covers
    uint32_t base      # grows by la + 1 a pair, so the marks of earlier pairs read as absent


cdef inline void _marks_fresh(_Marks *m, Py_ssize_t width) noexcept nogil:
    """Zero the marks and restart ``base`` before ``base + width + 1`` could reach 2^32 (a
    zero mark reads as absent while ``base + width`` stays below 2^32)."""
    if <uint64_t>m.base + 2 * (<uint64_t>width + 1) > _stamp_limit:
        if m.mark != NULL:
            memset(m.mark, 0, m.size * sizeof(uint32_t))
        m.base = 0


cdef bint _marks_ready(_Marks *m, uint64_t top, Py_ssize_t width) noexcept nogil:
    """Whether ``m`` can hold ids up to ``top`` for a ranking of at most ``width`` ids,
    growing the array (zeroed) or restarting the stamps when needed; False when the ids are
    too large (or no memory): the caller then uses the hash table."""
    cdef uint64_t size
    cdef uint32_t *grown
    if top >= DIRECT_IDS:
        return False
    if top >= m.size:
        size = DIRECT_MIN
        while size <= top:
            size *= 2
        grown = <uint32_t *>realloc(m.mark, size * sizeof(uint32_t))
        if grown == NULL:
            return False
        memset(grown + m.size, 0, (size - m.size) * sizeof(uint32_t))
        m.mark = grown
        m.size = size
    _marks_fresh(m, width)
    return True


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


cdef inline void _sums(Py_ssize_t s, Py_ssize_t l, int64_t x, int64_t xs, double entered,
                       double p, double all_w, const double *pw, const double *p1,
                       const double *p2, double *ext, double *lo, double *res) noexcept nogil:
    """RBO_ext, RBO_min and RBO_res of one pair from its overlap ``x``, the shared items
    ``xs`` entering by depth s, and ``entered``, the sum of ``p2[e - 1]`` over the shared
    items (e the depth where each enters): O(1), from the tables and ``all_w = -ln(1 - p)``
    (the sum of p^d / d over every depth)."""
    cdef Py_ssize_t f
    cdef double q, extra, part2, part3, tail_w, sum_x
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
    lo[0] = q * (x * all_w - entered)
    # residual (see agreement.rbo): depths l < d < f add 2d - s - l, depths d >= f add d - X_l
    f = l + s - <Py_ssize_t>x
    if f < l + 1:
        f = l + 1
    part2 = 2.0 * (p1[f - 1] - p1[l]) - (s + l) * (p2[f - 1] - p2[l])
    tail_w = all_w - p2[f - 1]
    if tail_w < 0.0:
        tail_w = 0.0
    part3 = pw[f] / (1.0 - p) - x * tail_w
    res[0] = q * (extra + part2 + part3)


cdef inline uint64_t _row_max(const rank_t *r, Py_ssize_t n) noexcept nogil:
    """Largest id of a ranking read as unsigned (a negative id reads as huge), 0 if empty."""
    cdef uint64_t top = 0, u
    cdef Py_ssize_t i
    for i in range(n):
        u = <uint64_t>r[i]
        top = u if u > top else top
    return top


cdef bint _one_direct(const rank_t *ra, Py_ssize_t la, const rank_t *rb, Py_ssize_t lb, double p,
                      double all_w, bint rbo, const double *pw, const double *p1, const double *p2,
                      uint32_t *mark, uint64_t size, uint32_t base, double *ext, double *lo,
                      double *res, int64_t *overlap) noexcept nogil:
    """As :func:`_one` with a marker array over the ids instead of the hash table:
    ``mark[id] - base`` (unsigned) is the id's depth in ``a`` when it lies in 1 .. la
    (values of earlier pairs are at most ``base``). False, with nothing computed, when an id
    of ``a`` is not below ``size`` (the marks written are then stale once base moves on)."""
    cdef Py_ssize_t i, j, s, l
    cdef uint64_t u
    cdef uint32_t v, e, depth_a = <uint32_t>la, depth_s
    cdef int64_t x = 0, xs = 0
    cdef double entered = 0.0, entered_odd = 0.0
    for i in range(la):
        u = <uint64_t>ra[i]
        if u >= size:
            return False
        mark[u] = base + <uint32_t>(i + 1)
    s = la if la < lb else lb
    l = la if la > lb else lb
    depth_s = <uint32_t>s
    # two chains of sums (even and odd j), so that one addition need not wait for the other
    for j in range(0, lb - 1, 2):
        u = <uint64_t>rb[j]
        if u < size:
            v = mark[u] - base
            if v - 1 < depth_a:
                # a shared item enters the overlap X_d at depth max(i, j) and stays
                e = <uint32_t>(j + 1)
                e = v if v > e else e
                x += 1
                xs += e <= depth_s
                entered += p2[e - 1]
        u = <uint64_t>rb[j + 1]
        if u < size:
            v = mark[u] - base
            if v - 1 < depth_a:
                e = <uint32_t>(j + 2)
                e = v if v > e else e
                x += 1
                xs += e <= depth_s
                entered_odd += p2[e - 1]
    if lb % 2:
        u = <uint64_t>rb[lb - 1]
        if u < size:
            v = mark[u] - base
            if v - 1 < depth_a:
                e = <uint32_t>lb
                e = v if v > e else e
                x += 1
                xs += e <= depth_s
                entered += p2[e - 1]
    entered += entered_odd
    overlap[0] = x
    if rbo:
        _sums(s, l, x, xs, entered, p, all_w, pw, p1, p2, ext, lo, res)
    return True


cdef void _one(const rank_t *ra, Py_ssize_t la, const rank_t *rb, Py_ssize_t lb, double p,
               double all_w, bint rbo, const double *pw, const double *p1, const double *p2,
               int64_t *keys, int64_t *pos, int64_t *stamps, int64_t stamp, int shift,
               Py_ssize_t mask, double *ext, double *lo, double *res,
               int64_t *overlap) noexcept nogil:
    """Overlap and (with ``rbo``) RBO_ext, RBO_min and RBO_res of one pair of rankings, the
    ids of ``a`` in a hash table (ids too large for a marker array).

    ``pw[d] = p^d``, ``p1[d] = sum_{e<=d} p^e``, ``p2[d] = sum_{e<=d} p^e / e``; a slot of
    the hash table is in use for this pair when ``stamps[slot] == stamp``.
    """
    cdef Py_ssize_t i, j, h, s, l, e
    cdef int64_t item, x = 0, xs = 0
    cdef double entered = 0.0
    s = la if la < lb else lb
    l = la if la > lb else lb
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
    if rbo:
        _sums(s, l, x, xs, entered, p, all_w, pw, p1, p2, ext, lo, res)


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
    cdef _Marks *marks
    cdef bint done
    cdef int attempt
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
    cdef double all_w = -log1p(-p)
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
        marks = <_Marks *>malloc(sizeof(_Marks))
        if marks != NULL:
            marks.mark = NULL
            marks.size = 0
            marks.base = 0
        if stamps != NULL:
            for t in range(cap):
                stamps[t] = -1
        for i in prange(n, schedule='static'):
            if keys == NULL or pos == NULL or stamps == NULL or marks == NULL:
                overlap[i] = -1  # the caller raises MemoryError
                continue
            if i + ROWS_AHEAD < n:
                if wa > 0:
                    re_prefetch(&a[i + ROWS_AHEAD, 0], wa * sizeof(a[0, 0]))
                if wb > 0:
                    re_prefetch(&b[i + ROWS_AHEAD, 0], wb * sizeof(b[0, 0]))
            la = _cut(len_a[i], wa, k)
            lb = _cut(len_b[i], wb, k)
            done = False
            if la > 0 and lb > 0:
                # the marker array; grown (or refused: ids too large) when an id of a is
                # beyond it, then tried once more
                _marks_fresh(marks, wa)
                for attempt in range(2):
                    if attempt == 1 and not _marks_ready(marks, _row_max(&a[i, 0], la), wa):
                        break
                    if rbo:
                        done = _one_direct(&a[i, 0], la, &b[i, 0], lb, p, all_w, rbo, &pw[0], &p1[0],
                                           &p2[0], marks.mark, marks.size, marks.base, &ext[i],
                                           &lo[i], &res[i], &overlap[i])
                    else:
                        done = _one_direct(&a[i, 0], la, &b[i, 0], lb, p, all_w, rbo, &pw[0], &p1[0],
                                           &p2[0], marks.mark, marks.size, marks.base, NULL,
                                           NULL, NULL, &overlap[i])
                    marks.base += <uint32_t>(la + 1)
                    if done:
                        break
            if not done:
                # ids too large for the marker array, or an empty ranking: the hash table,
                # whose stamp is the row number (a thread's rows are distinct: never cleared)
                if rbo:
                    _one(&a[i, 0] if la > 0 else NULL, la, &b[i, 0] if lb > 0 else NULL, lb, p,
                         all_w, rbo, &pw[0], &p1[0], &p2[0], keys, pos, stamps, <int64_t>i, shift,
                         cap - 1, &ext[i], &lo[i], &res[i], &overlap[i])
                else:
                    _one(&a[i, 0] if la > 0 else NULL, la, &b[i, 0] if lb > 0 else NULL, lb, p,
                         all_w, rbo, &pw[0], &p1[0], &p2[0], keys, pos, stamps, <int64_t>i, shift,
                         cap - 1, NULL, NULL, NULL, &overlap[i])
        free(keys)
        free(pos)
        free(stamps)
        if marks != NULL:
            free(marks.mark)
        free(marks)


cdef inline double _contrib(int64_t top, int64_t g, Py_ssize_t d, bint whole) noexcept nogil:
    """c(d) of an item whose group of g items starts at position ``top`` (1-based): the share
    of the group's orders that put it in the prefix of depth d ('a', 'b'), or whether the
    group has begun ('w', ``whole``)."""
    cdef double c
    if whole or g == 1:
        return 1.0 if d >= top else 0.0
    c = <double>(d - top + 1) / g
    return 0.0 if c < 0.0 else (1.0 if c > 1.0 else c)


cdef Py_ssize_t _groups(const rank_t *r, const unsigned char *tie, Py_ssize_t n, Py_ssize_t k,
                        int64_t *items, int64_t *top, int64_t *size) noexcept nogil:
    """Items of a ranking with, per position, the first position (1-based) and the size of
    its tied group (``tie[j]``: positions j and j + 1 tie; NULL: no ties); cut at k, the
    group holding position k kept whole. Returns the number of items kept."""
    cdef Py_ssize_t j, start = 0, end, t
    while start < n:
        end = start + 1
        while tie != NULL and end < n and tie[end - 1]:
            end += 1
        for t in range(start, end):
            items[t] = <int64_t>r[t]
            top[t] = start + 1
            size[t] = end - start
        if end >= k:
            return end
        start = end
    return n


cdef void _one_tied(const int64_t *S, const int64_t *S_top, const int64_t *S_g, Py_ssize_t s,
                    const int64_t *L, const int64_t *L_top, const int64_t *L_g, Py_ssize_t l,
                    double p, int variant, int64_t *in_s, double *ext, double *lo,
                    double *hi) noexcept nogil:
    """RBO_ext, RBO_min and RBO_max of Corsi and Urbano (2024) for one pair, S the shorter
    ranking (``variant`` 0: 'a', 1: 'b', 2: 'w'), depth by depth as ``agreement._rbo_tied``
    states them; ``in_s[j]`` (scratch of l entries) is the position in S of L's item j, or
    -1. O(s l) time."""
    cdef Py_ssize_t i, j, d, f, lacking_seen
    cdef bint whole = variant == 2
    cdef double q = (1.0 - p) / p, pd = 1.0, x, norm, c, cs, cl, sum_s, sum_l, sq_s, sq_l
    cdef double seen = 0.0, tail_min = 0.0, tail_max = 0.0, tail_ext = 0.0, a_s = 0.0
    cdef double extra, total_c, n_c, x_l = 0.0, inv_d = 0.0
    for j in range(l):
        in_s[j] = -1
        for i in range(s):
            if S[i] == L[j]:
                in_s[j] = i
                x_l += 1.0
                break
    for d in range(1, l + 1):
        pd *= p
        inv_d += pd / d
        x = 0.0
        sum_s = 0.0
        sq_s = 0.0
        sum_l = 0.0
        sq_l = 0.0
        extra = 0.0
        total_c = 0.0
        n_c = 0.0
        lacking_seen = 0
        for j in range(l):
            cl = _contrib(L_top[j], L_g[j], d, whole)
            sum_l += cl
            sq_l += cl * cl
            if in_s[j] >= 0:
                x += _contrib(S_top[in_s[j]], S_g[in_s[j]], d, whole) * cl
            else:
                # items of L that S lacks, in L's order: the first d - s agree in max; the
                # mean of their nonzero contributions scales the extrapolation in ext
                if lacking_seen < d - s:
                    extra += cl
                lacking_seen += 1
                if cl > 0.0:
                    total_c += cl
                    n_c += 1.0
        if d <= s:
            for i in range(s):
                cs = _contrib(S_top[i], S_g[i], d, whole)
                sum_s += cs
                sq_s += cs * cs
        else:
            # below the shorter ranking its unseen items count whole: d items
            sum_s = d
            sq_s = d
        if variant == 0:
            norm = d
        elif variant == 1:
            norm = sqrt(sq_s * sq_l)
        else:
            norm = (sum_s + sum_l) / 2.0
        if d <= s:
            seen += x / norm * pd
            if d == s:
                a_s = x / norm
            continue
        tail_min += x / norm * pd
        tail_max += (x + extra) / norm * pd
        if s > 0:
            tail_ext += (x + (d - s) * a_s * (total_c / n_c if n_c > 0.0 else 0.0)) / norm * pd
    # beyond depth l no item is tied any more: as Webber, Moffat and Zobel (2010)
    lo[0] = q * (seen + tail_min + x_l * (-log1p(-p) - inv_d))
    f = l + s - <Py_ssize_t>x_l
    c = 0.0
    pd = 1.0
    for d in range(1, f + 2):
        pd *= p
        if d > l and d <= f:
            c += (2.0 * d - l - s + x_l) / d * pd
    hi[0] = q * (seen + tail_max + c + pd / (1.0 - p))
    if s == 0:
        ext[0] = NAN
    else:
        ext[0] = q * (seen + tail_ext + (x_l + (l - s) * a_s) / l * (p ** (l + 1)) / (1.0 - p))


def rbo_tied_rows(const rank_t[:, ::1] a, const int64_t[::1] len_a, const unsigned char[:, ::1] tie_a,
                  const rank_t[:, ::1] b, const int64_t[::1] len_b, const unsigned char[:, ::1] tie_b,
                  const int64_t[::1] rows, Py_ssize_t k, double p, int variant,
                  float64_t[::1] ext, float64_t[::1] lo, float64_t[::1] hi, int n_threads):
    """The tie-aware RBO (``variant`` 0: 'a', 1: 'b', 2: 'w') of the rows ``rows`` of a
    and b, into ``ext[i]``, ``lo[i]``, ``hi[i]`` for each listed row i (unclipped).
    ``tie_a`` / ``tie_b`` are shaped like ``a`` / ``b`` (width 0: no ties); rankings cut at
    k keep the group holding position k whole. Returns False when no memory was found."""
    cdef Py_ssize_t n = a.shape[0], wa = a.shape[1], wb = b.shape[1], m = rows.shape[0]
    cdef Py_ssize_t r, i, la, lb, w = wa + wb
    cdef int64_t *buf
    cdef bint failed = False
    if b.shape[0] != n or len_a.shape[0] != n or len_b.shape[0] != n:
        raise ValueError("rbo_tied_rows: rows of a, b and lengths differ")
    if ext.shape[0] != n or lo.shape[0] != n or hi.shape[0] != n:
        raise ValueError("rbo_tied_rows: rows of the outputs differ")
    if (tie_a.shape[1] != 0 and (tie_a.shape[0] != n or tie_a.shape[1] != wa)) or (
            tie_b.shape[1] != 0 and (tie_b.shape[0] != n or tie_b.shape[1] != wb)):
        raise ValueError("rbo_tied_rows: tie flags must be shaped like the rankings")
    if k < 1 or not 0.0 < p < 1.0 or variant < 0 or variant > 2:
        raise ValueError("rbo_tied_rows: k >= 1, 0 < p < 1 and variant 0, 1 or 2")
    for r in range(m):
        if rows[r] < 0 or rows[r] >= n:
            raise ValueError("rbo_tied_rows: a row number is out of range")
    with nogil, parallel(num_threads=n_threads):
        buf = <int64_t *>malloc((7 * w + 1) * sizeof(int64_t))
        for r in prange(m, schedule='dynamic'):
            if buf == NULL:
                failed = True
                continue
            i = rows[r]
            la = _groups(&a[i, 0] if wa > 0 else NULL,
                         &tie_a[i, 0] if tie_a.shape[1] > 0 else NULL,
                         _cut(len_a[i], wa, wa), k, buf, buf + w, buf + 2 * w)
            lb = _groups(&b[i, 0] if wb > 0 else NULL,
                         &tie_b[i, 0] if tie_b.shape[1] > 0 else NULL,
                         _cut(len_b[i], wb, wb), k, buf + 3 * w, buf + 4 * w, buf + 5 * w)
            if lb == 0 and la == 0:
                ext[i] = NAN
                lo[i] = 0.0
                hi[i] = 1.0
            elif la <= lb:
                _one_tied(buf, buf + w, buf + 2 * w, la, buf + 3 * w, buf + 4 * w, buf + 5 * w,
                          lb, p, variant, buf + 6 * w, &ext[i], &lo[i], &hi[i])
            else:
                _one_tied(buf + 3 * w, buf + 4 * w, buf + 5 * w, lb, buf, buf + w, buf + 2 * w,
                          la, p, variant, buf + 6 * w, &ext[i], &lo[i], &hi[i])
        free(buf)
    return not failed
