"""Typed kernels of the paired tests of :func:`rankereval.compare` (``stats/_paired_tests.py``):
resampled statistics in O(n + B) memory.

Validation, NaN handling, p-values, intervals and corrections live in the Python modules of
``stats/``; this module only loops. Every kernel takes a C-contiguous float64 matrix with one row per query
and one column per comparison, makes for each resample *one* pass over the rows that serves
every column, and writes that resample's statistics to row ``b`` of its output. Resample
``b`` draws only from the random stream ``(seed, b)`` of the resampling engine
(``_bootstrap.pxd``: xoshiro256** seeded by SplitMix64, the generators the bootstrap uses),
and each resample is computed by one thread from start to end, so the output is
bit-identical for any number of threads, with or without OpenMP.

Kernels
-------
``sign_flip_sums``
    Paired randomization (sign-flip) test: ``sum_i s_i d[i, c]`` with independent fair signs
    ``s_i``. Query ``i`` is flipped when bit ``i % 64`` of output ``i // 64`` of the stream is
    set. The sum is computed 8 queries at a time from a table of the 256 signed sums of those
    8 rows (built once per block of queries and shared by all resamples of a thread), so a
    resample costs ``n / 8`` row additions instead of ``n``, reading tables that stay in the
    L2 cache.
``bootstrap_sums``
    Paired bootstrap: the column sums of ``n`` rows drawn with replacement. It draws the same
    indices as ``_bootstrap.resample_means`` for the same ``(seed, b)`` (two exact stages:
    how many draws fall in each block of 512 rows, then positions inside the block), so a
    one-column call reproduces the bootstrap of the mean.
``tukey_ranges``
    Randomized Tukey HSD (Carterette 2012): for each metric the range (max - min) of the run
    sums after permuting the runs' scores independently within every query.
"""
from cython.parallel cimport prange
from libc.stdlib cimport free, malloc

from rankereval.stats._bootstrap cimport (
    BLOCK,
    BLOCK_MASK,
    _binomial,
    _checked_block,
    _bounded,
    _lemire,
    _next64,
    _stream,
    rankereval_prefetch,
    rng_t,
)
from rankereval._typedefs cimport float64_t, int64_t, uint64_t

import numpy as np

cdef extern from *:
    """
    /* acc[0:n] += row[0:n]; the arrays never overlap (vectorised without aliasing checks) */
    static inline void rankereval_add_row(double *__restrict acc, const double *__restrict row,
                                          Py_ssize_t n) {
        for (Py_ssize_t c = 0; c < n; c++) acc[c] += row[c];
    }
    """
    void add_row "rankereval_add_row" (double *acc, const double *row, Py_ssize_t n) noexcept nogil

cdef extern from *:
    """
    /* acc[0:n] += the sum of 8 rows, added as a balanced tree: the 8 loads are independent
       and acc is updated once, so the table lookups of the sign-flip kernel overlap instead
       of waiting on each other through acc (a fixed order: deterministic rounding) */
    static inline void rankereval_add_rows8(double *__restrict acc, const double *__restrict r0,
            const double *__restrict r1, const double *__restrict r2, const double *__restrict r3,
            const double *__restrict r4, const double *__restrict r5, const double *__restrict r6,
            const double *__restrict r7, Py_ssize_t n) {
        for (Py_ssize_t c = 0; c < n; c++)
            acc[c] += ((r0[c] + r1[c]) + (r2[c] + r3[c])) + ((r4[c] + r5[c]) + (r6[c] + r7[c]));
    }
    """
    void add_rows8 "rankereval_add_rows8" (double *acc, const double *r0, const double *r1,
                                          const double *r2, const double *r3, const double *r4,
                                          const double *r5, const double *r6, const double *r7,
                                          Py_ssize_t n) noexcept nogil

cdef enum:
    GROUP = 8            # queries per table lookup of the sign-flip kernel (one byte of signs)
    PATTERNS = 256       # sign patterns of a group
    # Doubles of sign tables per thread (256 KiB: L2-resident), unless one block of 64
    # queries needs more (more than 16 columns); see _sign_block.
    TABLE_DOUBLES = 1 << 15


# --------------------------------------------------------------------------------------------
# Sign flips
# --------------------------------------------------------------------------------------------

cdef inline Py_ssize_t _sign_block(Py_ssize_t n_cols) noexcept nogil:
    """Queries per block of the sign-flip kernel: a multiple of 64 (one 64-bit output of signs
    per 64 queries, so that the stream is consumed identically for any block size), with
    tables of about ``TABLE_DOUBLES`` doubles (256 KiB) when the columns allow it."""
    cdef Py_ssize_t words = TABLE_DOUBLES // (8 * PATTERNS * n_cols)   # 8 groups per word
    if words < 1:
        words = 1
    return 64 * words


cdef void _build_tables(const float64_t *d, Py_ssize_t n_cols, Py_ssize_t start,
                        Py_ssize_t stop, double *table) noexcept nogil:
    """Signed sums of each group of 8 rows of ``d[start:stop]`` for the 256 sign patterns.

    ``table[(g * 256 + p) * n_cols + c]`` is ``sum_j s_j d[start + 8 g + j, c]`` with
    ``s_j = -1`` when bit ``j`` of ``p`` is set; rows beyond ``stop`` count as zero. Pattern
    ``p`` is pattern ``p - 2**h`` (``h`` its highest bit) with row ``h`` flipped, i.e. minus
    twice that row: one subtraction per entry, the same rounding for every caller.
    """
    cdef Py_ssize_t n_groups = (stop - start + GROUP - 1) // GROUP
    cdef Py_ssize_t g, j, i, c, p, h
    cdef double *t
    cdef double *dst
    cdef const double *src
    cdef const float64_t *row
    for g in range(n_groups):
        t = table + g * PATTERNS * n_cols
        for c in range(n_cols):
            t[c] = 0.0
        for j in range(GROUP):
            i = start + g * GROUP + j
            if i < stop:
                add_row(t, d + i * n_cols, n_cols)
        h = 0
        for p in range(1, PATTERNS):
            if p >= (2 << h):
                h += 1
            src = t + (p - (1 << h)) * n_cols
            dst = t + p * n_cols
            i = start + g * GROUP + h
            if i < stop:
                row = d + i * n_cols
                for c in range(n_cols):
                    dst[c] = src[c] - 2.0 * row[c]
            else:
                for c in range(n_cols):
                    dst[c] = src[c]


cdef int _sign_flip_range(const float64_t *d, Py_ssize_t n, Py_ssize_t n_cols, uint64_t seed,
                          Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t qblock,
                          float64_t *out) noexcept nogil:
    """Sign-flip sums of resamples ``b0 <= b < b1`` into ``out[b]``; -1 if out of memory."""
    cdef Py_ssize_t nb = b1 - b0
    cdef Py_ssize_t b, c, g, k, start, stop, n_groups
    cdef double *table
    cdef rng_t *states
    cdef rng_t *st
    cdef double *acc
    cdef double *zero
    cdef const double *rows[8]
    cdef uint64_t r
    if nb <= 0:
        return 0
    # the tables of a block, then one row of zeros
    table = <double *> malloc(((qblock // GROUP) * PATTERNS + 1) * n_cols * sizeof(double))
    states = <rng_t *> malloc(nb * sizeof(rng_t))
    if table == NULL or states == NULL:
        free(table)
        free(states)
        return -1
    zero = table + (qblock // GROUP) * PATTERNS * n_cols
    for c in range(n_cols):
        zero[c] = 0.0
    for b in range(nb):
        states[b] = _stream(seed, <uint64_t>(b0 + b))
        acc = out + (b0 + b) * n_cols
        for c in range(n_cols):
            acc[c] = 0.0
    start = 0
    while start < n:
        stop = start + qblock if qblock < n - start else n
        _build_tables(d, n_cols, start, stop, table)
        n_groups = (stop - start + GROUP - 1) // GROUP
        for b in range(nb):
            st = &states[b]
            acc = out + (b0 + b) * n_cols
            g = 0
            while g < n_groups:
                r = _next64(st)                       # the signs of the next 64 queries
                # groups beyond the block (its last word only) read the zero row
                for k in range(8):
                    rows[k] = (table + ((g + k) * PATTERNS + <Py_ssize_t>((r >> (8 * k)) & 255))
                               * n_cols if g + k < n_groups else zero)
                add_rows8(acc, rows[0], rows[1], rows[2], rows[3], rows[4], rows[5], rows[6],
                          rows[7], n_cols)
                g += 8
        start = stop
    free(table)
    free(states)
    return 0


def sign_flip_sums(const float64_t[:, ::1] d, Py_ssize_t n_resamples, uint64_t seed,
                   int n_threads=1):
    """Column sums of ``n_resamples`` random sign flips of the rows of ``d``.

    Parameters
    ----------
    d : ndarray of float64, shape (n, n_cols), C-contiguous
        Per-query differences, one column per comparison (rows to ignore hold zeros).
    n_resamples : int
        Number of resamples B.
    seed : int in [0, 2**64)
        Key of the random streams; resample ``b`` uses stream ``(seed, b)`` only, and the
        same signs for every column.
    n_threads : int, default=1
        OpenMP threads (the result does not depend on it).

    Returns
    -------
    sums : ndarray of float64, shape (n_resamples, n_cols)
        ``sums[b, c] = sum_i s_bi d[i, c]``, ``s_bi = -1`` if bit ``i % 64`` of output
        ``i // 64`` of stream ``(seed, b)`` is set, else ``+1``.
    """
    cdef Py_ssize_t n = d.shape[0]
    cdef Py_ssize_t n_cols = d.shape[1]
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0")
    out_arr = np.zeros((n_resamples, n_cols), dtype=np.float64)
    if n == 0 or n_cols == 0 or n_resamples == 0:
        return out_arr
    cdef float64_t[:, ::1] out = out_arr
    cdef int nt = _clamp_threads(n_threads, n_resamples)
    status_arr = np.zeros(nt, dtype=np.intc)
    cdef int[::1] status = status_arr
    cdef const float64_t *dp = &d[0, 0]
    cdef float64_t *op = &out[0, 0]
    cdef Py_ssize_t qblock = _sign_block(n_cols)
    cdef Py_ssize_t t
    with nogil:
        for t in prange(nt, schedule='static', num_threads=nt):
            status[t] = _sign_flip_range(dp, n, n_cols, seed, t * n_resamples // nt,
                                         (t + 1) * n_resamples // nt, qblock, op)
    if status_arr.any():
        raise MemoryError("not enough memory for the sign-flip tables")
    return out_arr


# --------------------------------------------------------------------------------------------
# Paired bootstrap
# --------------------------------------------------------------------------------------------

cdef void _bootstrap_one(const float64_t *d, Py_ssize_t n, Py_ssize_t n_cols, Py_ssize_t block,
                         uint64_t seed, uint64_t b, const double *zero,
                         double *acc) noexcept nogil:
    """Column sums of one bootstrap resample of the rows of ``d`` (stream ``b``) into ``acc``.

    The draws are those of ``_bootstrap._resample_mean`` for the same stream, row by row;
    ``zero`` is a row of ``n_cols`` zeros.
    """
    cdef rng_t st = _stream(seed, b)
    cdef const double *rows[4]
    cdef int64_t left = n
    cdef Py_ssize_t start, size, rest, j, p
    cdef int64_t c
    cdef uint64_t m, r, threshold
    cdef const float64_t *xb
    for j in range(n_cols):
        acc[j] = 0.0
    start = 0
    while start < n and left > 0:
        size = block if block < n - start else n - start
        rest = n - start
        c = left if size == rest else _binomial(&st, left, <double>size / <double>rest)
        left -= c
        if start + 2 * block < n:
            p = (start + 2 * block) * n_cols
            while p < (start + 3 * block if start + 3 * block < n else n) * n_cols:
                rankereval_prefetch(d + p)
                p += 8
        xb = d + start * n_cols
        m = <uint64_t>size
        threshold = (0x100000000ULL - m) % m
        j = 0
        if size == BLOCK:
            while j + 7 <= c:
                r = _next64(&st)
                # 7 positions of 9 bits; the 8th row of the tree sum is the zero row
                add_rows8(acc, xb + <Py_ssize_t>(r & BLOCK_MASK) * n_cols,
                          xb + <Py_ssize_t>((r >> 9) & BLOCK_MASK) * n_cols,
                          xb + <Py_ssize_t>((r >> 18) & BLOCK_MASK) * n_cols,
                          xb + <Py_ssize_t>((r >> 27) & BLOCK_MASK) * n_cols,
                          xb + <Py_ssize_t>((r >> 36) & BLOCK_MASK) * n_cols,
                          xb + <Py_ssize_t>((r >> 45) & BLOCK_MASK) * n_cols,
                          xb + <Py_ssize_t>((r >> 54) & BLOCK_MASK) * n_cols, zero, n_cols)
                j += 7
        while j + 4 <= c:
            # the draws in the order of _resample_mean (a rejected word draws again)
            r = _next64(&st)
            rows[0] = xb + <Py_ssize_t>_lemire(&st, r >> 32, m, threshold) * n_cols
            rows[1] = xb + <Py_ssize_t>_lemire(&st, r & 0xFFFFFFFFULL, m, threshold) * n_cols
            r = _next64(&st)
            rows[2] = xb + <Py_ssize_t>_lemire(&st, r >> 32, m, threshold) * n_cols
            rows[3] = xb + <Py_ssize_t>_lemire(&st, r & 0xFFFFFFFFULL, m, threshold) * n_cols
            add_rows8(acc, rows[0], rows[1], rows[2], rows[3], zero, zero, zero, zero, n_cols)
            j += 4
        while j < c:
            add_row(acc, xb + <Py_ssize_t>_bounded(&st, m) * n_cols, n_cols)
            j += 1
        start += size


def bootstrap_sums(const float64_t[:, ::1] d, Py_ssize_t n_resamples, uint64_t seed,
                   int n_threads=1, Py_ssize_t block=0):
    """Column sums of ``n_resamples`` paired bootstrap resamples of the rows of ``d``.

    Parameters
    ----------
    d : ndarray of float64, shape (n, n_cols), C-contiguous, n > 0
        Per-query differences, one column per comparison.
    n_resamples : int
        Number of resamples B.
    seed : int in [0, 2**64)
        Key of the random streams; resample ``b`` uses stream ``(seed, b)`` and the same
        rows for every column.
    n_threads : int, default=1
        OpenMP threads (the result does not depend on it).
    block : int, default=0
        Rows per block of the two-stage draw, as in ``_bootstrap.resample_means`` (0: 512).

    Returns
    -------
    sums : ndarray of float64, shape (n_resamples, n_cols)
    """
    cdef Py_ssize_t n = d.shape[0]
    cdef Py_ssize_t n_cols = d.shape[1]
    cdef Py_ssize_t b
    block = _checked_block(n, n_resamples, block, "bootstrap_sums needs at least one row")
    out_arr = np.zeros((n_resamples, n_cols), dtype=np.float64)
    if n_cols == 0 or n_resamples == 0:
        return out_arr
    cdef float64_t[:, ::1] out = out_arr
    cdef const float64_t *dp = &d[0, 0]
    cdef float64_t *op = &out[0, 0]
    cdef int nt = _clamp_threads(n_threads, n_resamples)
    zero_arr = np.zeros(n_cols, dtype=np.float64)
    cdef float64_t[::1] zero = zero_arr
    cdef const float64_t *zp = &zero[0]
    with nogil:
        for b in prange(n_resamples, schedule='static', num_threads=nt):
            _bootstrap_one(dp, n, n_cols, block, seed, <uint64_t>b, zp, op + b * n_cols)
    return out_arr


# --------------------------------------------------------------------------------------------
# Randomized Tukey HSD
# --------------------------------------------------------------------------------------------

cdef int _tukey_range(const float64_t *s, Py_ssize_t n, Py_ssize_t n_metrics, Py_ssize_t n_runs,
                      uint64_t seed, Py_ssize_t b0, Py_ssize_t b1, float64_t *out) noexcept nogil:
    """Max ranges of the permuted run sums for resamples ``b0 <= b < b1``; -1: no memory."""
    cdef Py_ssize_t width = n_metrics * n_runs
    cdef Py_ssize_t b, i, j, m, r, tmp
    cdef double lo, hi, v
    cdef rng_t st
    cdef const float64_t *row
    cdef double *acc
    cdef Py_ssize_t *perm
    if b1 <= b0:
        return 0
    acc = <double *> malloc(width * sizeof(double))
    perm = <Py_ssize_t *> malloc(n_runs * sizeof(Py_ssize_t))
    if acc == NULL or perm == NULL:
        free(acc)
        free(perm)
        return -1
    for b in range(b0, b1):
        st = _stream(seed, <uint64_t>b)
        for j in range(width):
            acc[j] = 0.0
        for i in range(n):
            # a uniform permutation of the runs (Fisher-Yates), the same for every metric
            for r in range(n_runs):
                perm[r] = r
            for r in range(n_runs - 1, 0, -1):
                j = <Py_ssize_t>_bounded(&st, <uint64_t>(r + 1))
                tmp = perm[r]
                perm[r] = perm[j]
                perm[j] = tmp
            row = s + i * width
            for m in range(n_metrics):
                for r in range(n_runs):
                    acc[m * n_runs + perm[r]] += row[m * n_runs + r]
        for m in range(n_metrics):
            lo = acc[m * n_runs]
            hi = lo
            for r in range(1, n_runs):
                v = acc[m * n_runs + r]
                if v < lo:
                    lo = v
                if v > hi:
                    hi = v
            out[b * n_metrics + m] = hi - lo
    free(acc)
    free(perm)
    return 0


def tukey_ranges(const float64_t[:, ::1] s, Py_ssize_t n_metrics, Py_ssize_t n_runs,
                 Py_ssize_t n_resamples, uint64_t seed, int n_threads=1):
    """Null distribution of the largest difference between run sums (randomized Tukey HSD).

    Parameters
    ----------
    s : ndarray of float64, shape (n, n_metrics * n_runs), C-contiguous
        Per-query scores; column ``m * n_runs + r`` is run ``r`` under metric ``m``. Rows a
        metric ignores hold zeros for every run of that metric.
    n_metrics, n_runs : int
        The layout of the columns (``n_runs >= 2``).
    n_resamples : int
        Number of resamples B.
    seed : int in [0, 2**64)
        Key of the random streams; resample ``b`` uses stream ``(seed, b)`` only.
    n_threads : int, default=1
        OpenMP threads (the result does not depend on it).

    Returns
    -------
    ranges : ndarray of float64, shape (n_resamples, n_metrics)
        For each resample and metric, ``max_r - min_r`` of the run sums after the scores of
        every query were permuted among the runs (one permutation per query, shared by the
        metrics).
    """
    cdef Py_ssize_t n = s.shape[0]
    if n_runs < 2 or n_metrics < 0 or s.shape[1] != n_metrics * n_runs:
        raise ValueError("s must have n_metrics * n_runs columns, n_runs >= 2")
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0")
    out_arr = np.zeros((n_resamples, n_metrics), dtype=np.float64)
    if n == 0 or n_metrics == 0 or n_resamples == 0:
        return out_arr
    cdef float64_t[:, ::1] out = out_arr
    cdef int nt = _clamp_threads(n_threads, n_resamples)
    status_arr = np.zeros(nt, dtype=np.intc)
    cdef int[::1] status = status_arr
    cdef const float64_t *sp = &s[0, 0]
    cdef float64_t *op = &out[0, 0]
    cdef Py_ssize_t t
    with nogil:
        for t in prange(nt, schedule='static', num_threads=nt):
            status[t] = _tukey_range(sp, n, n_metrics, n_runs, seed, t * n_resamples // nt,
                                     (t + 1) * n_resamples // nt, op)
    if status_arr.any():
        raise MemoryError("not enough memory for the Tukey HSD buffers")
    return out_arr


cdef int _clamp_threads(int n_threads, Py_ssize_t n_resamples):
    if n_threads > n_resamples:
        n_threads = <int>n_resamples
    return n_threads if n_threads >= 1 else 1
