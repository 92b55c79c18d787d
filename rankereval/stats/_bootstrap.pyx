"""Typed kernels of the bootstrap: resampled means in O(n + B) memory.

Validation, defaults, the choice between the multinomial shortcut and the general loop, and the
confidence intervals live in ``stats/_resampling.py``; this module only loops.

Random numbers
--------------
Each resample ``b`` owns an independent xoshiro256** stream (Blackman & Vigna 2018) whose
256-bit state is filled by SplitMix64 from a key that hashes ``(seed, b)``. A resample therefore
depends only on ``(seed, b)``: results are bit-identical for any number of threads, with or
without OpenMP. Integers in ``[0, m)`` are drawn without bias by Lemire's multiply-and-reject
method (ACM TOMACS 2019), two per 64-bit output.
The generators are defined in ``_bootstrap.pxd``, shared with the paired tests of
``_compare.pyx``.

Cache-friendly resampling
-------------------------
Drawing ``n`` indices uniformly from ``[0, n)`` touches a random cache line per draw: once the
scores outgrow the L2 cache every draw is a cache (and TLB) miss, ~15-20x slower than a draw
from L1. The kernel instead draws the same distribution in two exact stages:

1. split ``[0, n)`` into consecutive blocks of ``block`` scores and draw how many of the ``n``
   draws land in each block, a multinomial, as a chain of conditional binomials
   ``c_k ~ Binomial(n - c_0 - ... - c_{k-1}, size_k / (size_k + ... + size_{K-1}))``;
2. draw ``c_k`` positions uniformly inside block ``k`` (512 scores: 9 random bits each).

Given its block, a uniform index is uniform within the block, so the multiset of drawn scores
has exactly the law of ``n`` i.i.d. uniform draws. Blocks are visited in order (the next ones
are prefetched) and each fits in L1, so the loop runs at L1 speed, ~1 ns per draw. Binomials
use inversion for small means and Hoermann's BTRS transformed rejection otherwise (Hoermann
1993, "The generation of binomial random variates", J. Statist. Comput. Simul. 46).
"""
from cython.parallel cimport prange
from libc.math cimport exp, fabs, floor, isfinite, isnan, log, log1p, sqrt
from libc.stdlib cimport free, malloc

from rankereval._typedefs cimport float64_t, int64_t, uint32_t, uint64_t

import math

import numpy as np

# --------------------------------------------------------------------------------------------
# Binomial variates
# --------------------------------------------------------------------------------------------

# _TAIL[k] = log(k!) - [(k + 1/2) log(k + 1) - (k + 1) + log(2 pi) / 2], exact for small k
cdef double _TAIL[16]
for _k in range(16):
    _TAIL[_k] = math.lgamma(_k + 1) - ((_k + 0.5) * math.log(_k + 1) - (_k + 1)
                                       + 0.5 * math.log(2 * math.pi))


cdef inline double _stirling_tail(double k) noexcept nogil:
    """log(k!) minus its Stirling approximation around k + 1 (see _TAIL)."""
    cdef double x, x2
    if k < 16:
        return _TAIL[<int>k]
    x = k + 1.0
    x2 = x * x
    return (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - 1.0 / (1680.0 * x2)) / x2) / x2) / x


cdef int64_t _binomial_inversion(rng_t *st, int64_t n, double p) noexcept nogil:
    """Binomial(n, p) by sequential search, for p <= 1/2 and n p < 10 (O(n p) per draw)."""
    cdef double q = 1.0 - p
    cdef double s = p / q
    cdef double a = (n + 1) * s
    cdef double r0 = exp(n * log1p(-p))          # P(X = 0) >= e**-10 here
    cdef double np_ = n * p
    cdef double bound = np_ + 10.0 * sqrt(np_ * q + 1.0)
    cdef double r, u
    cdef int64_t x
    if bound > n:
        bound = n
    while True:
        u = _uniform(st)
        r = r0
        x = 0
        while u > r:
            u -= r
            x += 1
            if x > bound:          # only through rounding: the mass beyond is < 1e-20
                break
            r *= a / x - s         # P(X = x) / P(X = x - 1) = (n - x + 1) p / (x q)
        if x <= bound:
            return x


cdef int64_t _binomial_btrs(rng_t *st, int64_t n, double p) noexcept nogil:
    """Binomial(n, p) by transformed rejection with squeeze (BTRS), p <= 1/2, n p >= 10."""
    cdef double q = 1.0 - p
    cdef double spq = sqrt(n * p * q)
    cdef double b = 1.15 + 2.53 * spq
    cdef double a = -0.0873 + 0.0248 * b + 0.01 * p
    cdef double c = n * p + 0.5
    cdef double v_r = 0.92 - 4.2 / b
    cdef double alpha = (2.83 + 5.1 / b) * spq
    cdef double r = p / q
    cdef double m = floor((n + 1) * p)           # the mode
    cdef double nm = n - m
    cdef double u, v, us, k, lhs, rhs
    while True:
        u = _uniform(st) - 0.5
        v = _uniform(st)
        us = 0.5 - fabs(u)
        if us <= 0.0:
            continue
        k = floor((2.0 * a / us + b) * u + c)
        if k < 0.0 or k > n:
            continue
        if us >= 0.07 and v <= v_r:              # squeeze: accepted without logarithms
            return <int64_t>k
        if v <= 0.0:
            return <int64_t>k
        lhs = log(v * alpha / (a / (us * us) + b))
        # log(f(k) / f(m)) for the binomial pmf f, arranged to avoid cancelling O(n log n)
        # terms: every logarithm is of a ratio close to 1 or of a small number
        rhs = ((m + 0.5) * log((m + 1.0) / (r * (nm + 1.0)))
               + (n + 1.0) * log1p((k - m) / (n - k + 1.0))
               + (k + 0.5) * log(r * (n - k + 1.0) / (k + 1.0))
               + _stirling_tail(m) + _stirling_tail(nm)
               - _stirling_tail(k) - _stirling_tail(n - k))
        if lhs <= rhs:
            return <int64_t>k


cdef int64_t _binomial(rng_t *st, int64_t n, double p) noexcept nogil:
    """A Binomial(n, p) variate, n >= 0, any p (clipped to [0, 1])."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    if p > 0.5:
        return n - _binomial(st, n, 1.0 - p)
    if n * p < 10.0:
        return _binomial_inversion(st, n, p)
    return _binomial_btrs(st, n, p)


# --------------------------------------------------------------------------------------------
# Resampled means
# --------------------------------------------------------------------------------------------

cdef double _resample_mean(const float64_t *x, Py_ssize_t n, Py_ssize_t block,
                           uint64_t seed, uint64_t b) noexcept nogil:
    """Mean of one bootstrap resample of x[0:n] (n draws with replacement), stream b."""
    cdef rng_t st = _stream(seed, b)
    # four partial sums break the floating-point add chain (several loads in flight); their
    # order is fixed, so the result is reproducible
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int64_t left = n                 # draws not yet assigned to a block
    cdef Py_ssize_t start, size, rest, j, p
    cdef int64_t c
    cdef uint64_t m, r, threshold
    cdef const float64_t *xb
    start = 0
    while start < n and left > 0:
        size = block if block < n - start else n - start
        rest = n - start                  # scores in this block and the following ones
        c = left if size == rest else _binomial(&st, left, <double>size / <double>rest)
        left -= c
        if start + 2 * block < n:         # fetch the block after next while sampling this one
            for p in range(start + 2 * block, min(start + 3 * block, n), 8):
                rankereval_prefetch(x + p)
        xb = x + start
        m = <uint64_t>size
        threshold = (0x100000000ULL - m) % m     # Lemire: reject low words below 2**32 mod m
        j = 0
        if size == BLOCK:
            # a power of two: 9 random bits make an exactly uniform position, 7 per output
            while j + 7 <= c:
                r = _next64(&st)
                s0 += xb[r & BLOCK_MASK]
                s1 += xb[(r >> 9) & BLOCK_MASK]
                s2 += xb[(r >> 18) & BLOCK_MASK]
                s3 += xb[(r >> 27) & BLOCK_MASK]
                s0 += xb[(r >> 36) & BLOCK_MASK]
                s1 += xb[(r >> 45) & BLOCK_MASK]
                s2 += xb[(r >> 54) & BLOCK_MASK]
                j += 7
        while j + 4 <= c:                         # two 32-bit draws per 64-bit output
            r = _next64(&st)
            s0 += xb[_lemire(&st, r >> 32, m, threshold)]
            s1 += xb[_lemire(&st, r & 0xFFFFFFFFULL, m, threshold)]
            r = _next64(&st)
            s2 += xb[_lemire(&st, r >> 32, m, threshold)]
            s3 += xb[_lemire(&st, r & 0xFFFFFFFFULL, m, threshold)]
            j += 4
        while j < c:
            s0 += xb[_bounded(&st, m)]
            j += 1
        start += size
    return ((s0 + s1) + (s2 + s3)) / <double>n


cdef inline int _resample_threads(int n_threads, Py_ssize_t n_resamples) noexcept nogil:
    """The OpenMP threads for ``n_resamples`` resamples: ``n_threads``, at least one and at
    most one per resample (each thread owns a range of resamples)."""
    if n_threads > n_resamples:
        n_threads = <int>n_resamples
    return n_threads if n_threads > 0 else 1


cdef _check_keyed(Py_ssize_t n_keys, Py_ssize_t n, Py_ssize_t n_resamples):
    """The arguments of the keyed resamples (``poisson_exact``, ``keyed_sign_sums``)."""
    if n_keys != n:
        raise ValueError(f"keys has {n_keys} entries for {n} rows")
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0")


def resample_means(const float64_t[::1] x, Py_ssize_t n_resamples, uint64_t seed,
                   int n_threads=1, Py_ssize_t block=0):
    """Means of ``n_resamples`` bootstrap resamples of ``x``.

    Parameters
    ----------
    x : ndarray of float64, shape (n,), C-contiguous, n > 0
        The scores (read-only arrays are fine).
    n_resamples : int
        Number of resamples B.
    seed : int in [0, 2**64)
        Key of the random streams; resample ``b`` uses stream ``(seed, b)`` only.
    n_threads : int, default=1
        OpenMP threads (the caller, ``stats/_resampling.py``, applies the package's thread policy;
        at most one per resample is used). The result does not depend on it.
    block : int, default=0
        Scores per block of the two-stage draw (see the module docstring); ``0`` means 512,
        the fast path. Any value gives the same distribution (``block >= n``: direct draws);
        tests use it to compare the stages against direct draws.

    Returns
    -------
    means : ndarray of float64, shape (n_resamples,)

    Notes
    -----
    Extra memory is O(B): no resample and no index array is ever materialised.
    """
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t b
    block = _checked_block(n, n_resamples, block, "resample_means needs at least one score")
    out_arr = np.empty(n_resamples, dtype=np.float64)
    cdef float64_t[::1] out = out_arr
    cdef const float64_t *xp = &x[0]
    cdef int nt = _resample_threads(n_threads, n_resamples)
    with nogil:
        for b in prange(n_resamples, schedule='static', num_threads=nt):
            out[b] = _resample_mean(xp, n, block, seed, <uint64_t>b)
    return out_arr


# --------------------------------------------------------------------------------------------
# Poisson bootstrap: counter-based weights keyed by (seed, query key, resample)
# --------------------------------------------------------------------------------------------
#
# The weight of query q in resample b is Poisson(1), drawn by inversion from one 64-bit
# hash r = mix64(key(q) ^ t(b)), where key(q) is a stable 64-bit hash of the query's key
# (``hash_int_keys`` / ``hash_str_keys``) and t(b) = mix64(seed + (b + 1) * GOLDEN) is the
# b-th SplitMix64 output under the seed. r is compared with the Poisson(1) distribution
# function scaled to 2**64 (``_POISSON_CDF``): w = #{k : r >= 2**64 F(k)}. A weight depends
# on nothing but (seed, key, b), so any subset of the queries can be weighted anywhere, in
# any order, and per-resample sums over disjoint subsets merge by addition.

# 2**64 * P(X <= k) for X ~ Poisson(1), k = 0 .. 19, rounded down (the mass beyond k = 19,
# 7e-21, is below 2**-64: a weight never exceeds 20). Exact to the last bit: computed with
# Python integers from a 40-digit e**-1 (decimal), not with doubles.
cdef enum:
    POISSON_TABLE = 20
cdef uint64_t _POISSON_CDF[POISSON_TABLE]


def _poisson_cdf_table():
    import decimal
    ctx = decimal.Context(prec=50)
    term = ctx.exp(decimal.Decimal(-1))
    total = decimal.Decimal(0)
    out = []
    for k in range(POISSON_TABLE):
        if k:
            term = ctx.divide(term, k)
        total = ctx.add(total, term)
        out.append(int(ctx.multiply(total, decimal.Decimal(2) ** 64)))
    return out


for _k, _t in enumerate(_poisson_cdf_table()):
    _POISSON_CDF[_k] = _t
POISSON_CDF = np.array(_poisson_cdf_table(), dtype=np.uint64)


cdef inline uint64_t _poisson1(uint64_t r) noexcept nogil:
    """Poisson(1) variate from 64 uniform bits, by inversion against _POISSON_CDF."""
    # w <= 3 with probability 0.981: four comparisons without a branch, then the rare tail
    cdef uint64_t w = ((r >= _POISSON_CDF[0]) + (r >= _POISSON_CDF[1])
                       + (r >= _POISSON_CDF[2]) + (r >= _POISSON_CDF[3]))
    if w == 4:
        while w < POISSON_TABLE and r >= _POISSON_CDF[w]:
            w += 1
    return w


cdef inline uint64_t _resample_key(uint64_t seed, uint64_t b) noexcept nogil:
    return _mix64(seed + (b + 1) * GOLDEN)


cdef _resample_keys(uint64_t seed, Py_ssize_t n_resamples):
    """t(b) of every resample b (a uint64 array): the keys of the resamples under ``seed``."""
    out_arr = np.empty(n_resamples, dtype=np.uint64)
    cdef uint64_t[::1] out = out_arr
    cdef Py_ssize_t b
    for b in range(n_resamples):
        out[b] = _resample_key(seed, <uint64_t>b)
    return out_arr


def poisson_weights(const uint64_t[::1] keys, uint64_t seed, Py_ssize_t n_resamples):
    """Poisson(1) weights, shape ``(len(keys), n_resamples)``, as int32 (tests and docs)."""
    cdef Py_ssize_t n = keys.shape[0], i, b
    out_arr = np.empty((n, n_resamples), dtype=np.int32)
    cdef int[:, ::1] out = out_arr
    with nogil:
        for i in range(n):
            for b in range(n_resamples):
                out[i, b] = <int>_poisson1(_mix64(keys[i] ^ _resample_key(seed, <uint64_t>b)))
    return out_arr


# --------------------------------------------------------------------------------------------
# Exact sums
# --------------------------------------------------------------------------------------------
# Every finite double is an integer multiple of 2**-1074. A sum of doubles (times small integer
# weights) is kept exactly as an integer in base 2**32, one int64 "limb" per digit: limb d holds
# the digit of weight 2**(32 d - 1074). A double m * 2**(s - 1074) (integer mantissa m < 2**53,
# 0 <= s < 2046) adds m << (s % 32) (at most 85 bits, three digits) into limbs s // 32 .. + 2.
# Digits are brought back into [-2**31, 2**31) by carrying (``_carry``) often enough that no
# limb overflows. The sum therefore does not depend on the order of the terms or on how they
# are split into blocks: blocks add limb by limb, and the correctly rounded double of the total
# (``rankereval.stats._exact.ExactSum.to_float``) is the same bits whichever way the terms came.
# Infinities are kept apart as flags (1: +inf seen, 2: -inf seen), which combine by OR as IEEE sums would.

cdef enum:
    EXACT_LIMBS = 68           # 68 * 32 bits: 2045 + 85 bits of terms, 50 bits of carries
    CARRY_EVERY = 65536        # rows between carries: 2**16 * 20 * 2**32 < 2**63

EXACT_LIMBS_ = EXACT_LIMBS


cdef inline void _digits(double v, Py_ssize_t *d, uint64_t *p) noexcept nogil:
    """The three base-2**32 digits p[0..2] of |v| shifted to limb d (v finite, nonzero)."""
    cdef uint64_t bits = (<uint64_t *>&v)[0]
    cdef uint64_t e = (bits >> 52) & 0x7FF
    cdef uint64_t m = bits & 0xFFFFFFFFFFFFFULL
    cdef uint64_t s, r, lo
    if e == 0:
        s = 0
    else:
        m |= 0x10000000000000ULL
        s = e - 1
    d[0] = <Py_ssize_t>(s >> 5)
    r = s & 31
    lo = m << r
    p[0] = lo & 0xFFFFFFFFULL
    p[1] = lo >> 32
    p[2] = (m >> (64 - r)) if r else 0


cdef inline void _carry(int64_t *limbs, Py_ssize_t stride, Py_ssize_t b0, Py_ssize_t b1) noexcept nogil:
    """Bring digits 0 .. EXACT_LIMBS - 2 of columns b0 <= b < b1 into [-2**31, 2**31)."""
    cdef Py_ssize_t k, b
    cdef int64_t c
    cdef int64_t *a
    for k in range(EXACT_LIMBS - 1):
        a = limbs + k * stride
        for b in range(b0, b1):
            c = (a[b] + <int64_t>0x80000000LL) >> 32
            a[b] -= c * <int64_t>4294967296LL  # c << 32 without shifting a negative value (UB)
            a[b + stride] += c


cdef int _poisson_block(const float64_t[:, ::1] x, const uint64_t[::1] keys,
                        const uint64_t *tb, Py_ssize_t b0, Py_ssize_t b1, Py_ssize_t n_res,
                        int64_t *limbs, signed char *inf, double *wall, double *wmiss) noexcept nogil:
    """Accumulate resamples b0 <= b < b1 over every row of x exactly; -1 if out of memory.

    ``limbs``: shape (EXACT_LIMBS, m, n_res); ``inf``: (m, n_res) flags. Per row, the weights
    of the resamples are drawn into a buffer first (one hash each), then each column's digits
    are added in plain loops over the buffer (the compiler vectorises them): the cost per
    (row, resample) is one hash whatever the number of columns.
    """
    cdef Py_ssize_t n = x.shape[0], m = x.shape[1], nb = b1 - b0, i, j, b, d
    cdef Py_ssize_t stride = m * n_res
    cdef uint64_t key
    cdef uint64_t p[3]
    cdef int64_t q0, q1, q2
    cdef double v
    cdef int64_t *l0
    cdef int64_t *l1
    cdef int64_t *l2
    cdef double *s
    cdef signed char *f
    cdef signed char flag
    cdef double *wa
    cdef const uint64_t *t = tb + b0
    if nb <= 0:
        return 0
    cdef int64_t *w = <int64_t *>malloc(nb * sizeof(int64_t))
    if w == NULL:
        return -1
    wa = wall + b0
    for i in range(n):
        key = keys[i]
        for b in range(nb):
            w[b] = <int64_t>_poisson1(_mix64(key ^ t[b]))
        for b in range(nb):
            wa[b] += <double>w[b]
        for j in range(m):
            v = x[i, j]
            if v == 0.0:
                continue
            if isnan(v):          # NaN scores weigh nothing: their weight is counted in wmiss
                s = wmiss + j * n_res + b0
                for b in range(nb):
                    s[b] += <double>w[b]
            elif not isfinite(v):  # an infinite score with weight 0 takes no part
                f = inf + j * n_res + b0
                flag = 1 if v > 0 else 2
                for b in range(nb):
                    if w[b] != 0:
                        f[b] |= flag
            else:
                _digits(v, &d, p)
                l0 = limbs + d * stride + j * n_res + b0
                l1 = l0 + stride
                l2 = l1 + stride
                q0, q1, q2 = <int64_t>p[0], <int64_t>p[1], <int64_t>p[2]
                if v < 0:
                    q0, q1, q2 = -q0, -q1, -q2
                for b in range(nb):
                    l0[b] += w[b] * q0
                    l1[b] += w[b] * q1
                    l2[b] += w[b] * q2
        if (i + 1) % CARRY_EVERY == 0:
            for j in range(m):
                _carry(limbs + j * n_res, stride, b0, b1)
    for j in range(m):
        _carry(limbs + j * n_res, stride, b0, b1)
    free(w)
    return 0


def poisson_exact(const float64_t[:, ::1] x, const uint64_t[::1] keys, uint64_t seed,
                  Py_ssize_t n_resamples, int n_threads=1):
    """Per-resample sums of a Poisson bootstrap of the columns of ``x``, kept exactly.

    Parameters
    ----------
    x : ndarray of float64, shape (n, m), C-contiguous
        One row per query, one column per metric; NaN entries take no part.
    keys : ndarray of uint64, shape (n,)
        Stable 64-bit hashes of the queries' keys (``hash_int_keys`` / ``hash_str_keys``).
    seed : int in [0, 2**64)
        Key of the resamples.
    n_resamples : int
        Number of resamples B.
    n_threads : int, default=1
        OpenMP threads, each owning a contiguous range of resamples. The result does not
        depend on it, nor on the order of the rows or how they are split into calls.

    Returns
    -------
    limbs : ndarray of int64, shape (EXACT_LIMBS, m, B)
        ``sum_i w[i, b] * x[i, j]`` over the rows where ``x[i, j]`` is finite, as base-2**32
        digits (see ``rankereval.stats._exact.ExactSum``).
    inf : ndarray of int8, shape (m, B)
        1 where a drawn score was +inf, 2 where one was -inf (3: both).
    weights : ndarray of float64, shape (m, B)
        ``weights[j, b] = sum_i w[i, b]`` over the rows where ``x[i, j]`` is not NaN
        (integers, exact below 2**53).
    """
    cdef Py_ssize_t n = x.shape[0], m = x.shape[1], b, c, size
    cdef int failed = 0
    _check_keyed(keys.shape[0], n, n_resamples)
    limbs_arr = np.zeros((EXACT_LIMBS, m, n_resamples), dtype=np.int64)
    inf_arr = np.zeros((m, n_resamples), dtype=np.int8)
    wall_arr = np.zeros(n_resamples, dtype=np.float64)
    wmiss_arr = np.zeros((m, n_resamples), dtype=np.float64)
    cdef uint64_t[::1] tb = _resample_keys(seed, n_resamples)
    if n_resamples == 0 or m == 0:
        return limbs_arr, inf_arr, np.zeros((m, n_resamples), dtype=np.float64)
    cdef int64_t[:, :, ::1] limbs = limbs_arr
    cdef signed char[:, ::1] inf = inf_arr
    cdef double[::1] wall = wall_arr
    cdef double[:, ::1] wmiss = wmiss_arr
    cdef int nt = _resample_threads(n_threads, n_resamples)
    size = (n_resamples + nt - 1) // nt  # resamples a thread
    with nogil:
        for c in prange(nt, schedule='static', num_threads=nt):
            if _poisson_block(x, keys, &tb[0], c * size, min((c + 1) * size, n_resamples),
                              n_resamples, &limbs[0, 0, 0], &inf[0, 0], &wall[0], &wmiss[0, 0]) != 0:
                failed = 1
    if failed:
        raise MemoryError("poisson_exact: no memory for a buffer of weights")
    return limbs_arr, inf_arr, wall_arr[None, :] - wmiss_arr


def exact_sums(const float64_t[:, ::1] x):
    """The sums of the columns of ``x`` kept exactly (NaN entries take no part).

    Returns ``(limbs, inf)``: limbs of shape (EXACT_LIMBS, m) as in ``poisson_exact``, and
    the infinity flags of each column, shape (m,).
    """
    cdef Py_ssize_t n = x.shape[0], m = x.shape[1], i, j, d
    cdef uint64_t p[3]
    cdef double v
    limbs_arr = np.zeros((EXACT_LIMBS, m), dtype=np.int64)
    inf_arr = np.zeros(m, dtype=np.int8)
    if m == 0:
        return limbs_arr, inf_arr
    cdef int64_t[:, ::1] limbs = limbs_arr
    cdef signed char[::1] inf = inf_arr
    with nogil:
        for i in range(n):
            for j in range(m):
                v = x[i, j]
                if v == 0.0 or isnan(v):
                    continue
                if not isfinite(v):
                    inf[j] |= 1 if v > 0 else 2
                    continue
                _digits(v, &d, p)
                if v > 0:
                    limbs[d, j] += <int64_t>p[0]
                    limbs[d + 1, j] += <int64_t>p[1]
                    limbs[d + 2, j] += <int64_t>p[2]
                else:
                    limbs[d, j] -= <int64_t>p[0]
                    limbs[d + 1, j] -= <int64_t>p[1]
                    limbs[d + 2, j] -= <int64_t>p[2]
            if (i + 1) % CARRY_EVERY == 0:
                _carry(&limbs[0, 0], m, 0, m)
        _carry(&limbs[0, 0], m, 0, m)
    return limbs_arr, inf_arr


cdef void _sign_block(const float64_t[:, ::1] x, const uint64_t[::1] keys, const uint64_t *tb,
                      Py_ssize_t b0, Py_ssize_t b1, double *out) noexcept nogil:
    """Accumulate resamples b0 <= b < b1 of keyed sign flips over every row of x (in order)."""
    cdef Py_ssize_t n = x.shape[0], m = x.shape[1], i, j, b
    cdef uint64_t key
    cdef double sgn
    cdef double *o
    for i in range(n):
        key = keys[i]
        for b in range(b0, b1):
            # the top bit of the (query, resample) hash: +1 or -1 with probability 1/2 each
            sgn = 1.0 - 2.0 * <double>(_mix64(key ^ tb[b]) >> 63)
            o = out + b * m
            for j in range(m):
                o[j] += sgn * x[i, j]


def keyed_sign_sums(const float64_t[:, ::1] x, const uint64_t[::1] keys, uint64_t seed,
                    Py_ssize_t n_resamples, int n_threads=1):
    """Per-resample sums of sign-flipped rows, each query's sign keyed by (seed, query, resample).

    The randomization test of paired differences whose resamples merge across partitions:
    the sign of query ``i`` in resample ``b`` is the top bit of ``mix64(keys[i] ^ t(b))``
    (``t(b)`` as in :func:`poisson_sums`), so it depends on nothing but ``(seed, key, b)``
    and the sums of disjoint sets of queries add up.

    Parameters
    ----------
    x : ndarray of float64, shape (n, m), C-contiguous
        One row per query (0 where a query takes no part).
    keys : ndarray of uint64, shape (n,)
        Stable hashes of the query keys (``hash_int_keys`` / ``hash_str_keys``).
    seed : int in [0, 2**64)
    n_resamples : int
    n_threads : int, default=1
        Threads, each owning a range of resamples; the result does not depend on it.

    Returns
    -------
    ndarray of float64, shape (n_resamples, m)
        ``out[b, j] = sum_i s[i, b] * x[i, j]``, rows added in order.
    """
    cdef Py_ssize_t n = x.shape[0], m = x.shape[1], b, c, size
    _check_keyed(keys.shape[0], n, n_resamples)
    out_arr = np.zeros((n_resamples, m), dtype=np.float64)
    if n_resamples == 0 or m == 0 or n == 0:
        return out_arr
    cdef uint64_t[::1] tb = _resample_keys(seed, n_resamples)
    cdef double[:, ::1] out = out_arr
    cdef int nt = _resample_threads(n_threads, n_resamples)
    size = (n_resamples + nt - 1) // nt  # resamples a thread
    with nogil:
        for c in prange(nt, schedule='static', num_threads=nt):
            _sign_block(x, keys, &tb[0], c * size, min((c + 1) * size, n_resamples), &out[0, 0])
    return out_arr


def hash_int_keys(const int64_t[::1] ids):
    """Stable 64-bit hashes of integer query keys (the same on every platform and run)."""
    cdef Py_ssize_t i, n = ids.shape[0]
    out_arr = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] out = out_arr
    with nogil:
        for i in range(n):
            out[i] = _mix64(_mix64(<uint64_t>ids[i] ^ 0x696E74206B657973ULL) + GOLDEN)
    return out_arr


def hash_str_keys(const uint32_t[:, ::1] codes):
    """Stable 64-bit hashes of string query keys, given as the code points of a NumPy
    ``str_`` array viewed as ``uint32`` (one row per key, NUL-padded)."""
    cdef Py_ssize_t i, j, n = codes.shape[0], width = codes.shape[1]
    cdef uint64_t h, length
    out_arr = np.empty(n, dtype=np.uint64)
    cdef uint64_t[::1] out = out_arr
    with nogil:
        for i in range(n):
            h = 0x737472206B657973ULL
            length = 0
            for j in range(width):
                if codes[i, j] == 0:
                    break
                h = _mix64(h ^ codes[i, j]) + GOLDEN
                length += 1
            out[i] = _mix64(h ^ length)
    return out_arr


# --------------------------------------------------------------------------------------------
# Test hooks: the raw generators
# --------------------------------------------------------------------------------------------

def binomial_samples(int64_t n, double p, Py_ssize_t size, uint64_t seed, uint64_t stream=0):
    """``size`` Binomial(n, p) variates from stream ``(seed, stream)`` (for tests)."""
    out_arr = np.empty(size, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    cdef rng_t st = _stream(seed, stream)
    cdef Py_ssize_t i
    with nogil:
        for i in range(size):
            out[i] = _binomial(&st, n, p)
    return out_arr


def bounded_samples(uint64_t m, Py_ssize_t size, uint64_t seed, uint64_t stream=0):
    """``size`` integers drawn uniformly from ``[0, m)``, ``0 < m <= 2**32`` (for tests)."""
    if m == 0 or m > 0x100000000ULL:
        raise ValueError("m must be in [1, 2**32]")
    out_arr = np.empty(size, dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    cdef rng_t st = _stream(seed, stream)
    cdef Py_ssize_t i
    with nogil:
        for i in range(size):
            out[i] = <int64_t>_bounded(&st, m)
    return out_arr


def raw_outputs(uint64_t seed, uint64_t stream, Py_ssize_t size):
    """The first ``size`` 64-bit outputs of stream ``(seed, stream)`` (for tests)."""
    out_arr = np.empty(size, dtype=np.uint64)
    cdef uint64_t[::1] out = out_arr
    cdef rng_t st = _stream(seed, stream)
    cdef Py_ssize_t i
    for i in range(size):
        out[i] = _next64(&st)
    return out_arr


# --------------------------------------------------------------------------------------------
# Distinct values (for the multinomial shortcut) and centred moments (for BCa)
# --------------------------------------------------------------------------------------------

def small_support(const float64_t[::1] x, Py_ssize_t max_distinct):
    """Distinct values of ``x`` and their counts, if there are at most ``max_distinct``.

    One pass with an open-addressing hash table of O(max_distinct) slots that stops at the
    first value beyond ``max_distinct``: continuous data costs O(max_distinct), not
    O(n log n) like ``np.unique``. ``-0.0`` and ``0.0`` are one value. ``x`` must be NaN-free.

    Returns
    -------
    (values, counts) : (ndarray of float64, ndarray of int64), values sorted ascending,
        or ``None`` when ``x`` has more than ``max_distinct`` distinct values.
    """
    cdef Py_ssize_t n = x.shape[0]
    cdef Py_ssize_t cap = 16
    cdef int shift = 60                 # 64 - log2(cap): multiplicative hashing, top bits
    if max_distinct < 1:
        return None
    while cap < 2 * max_distinct:
        cap *= 2
        shift -= 1
    keys_arr = np.zeros(cap, dtype=np.float64)
    counts_arr = np.zeros(cap, dtype=np.int64)
    cdef float64_t[::1] keys = keys_arr
    cdef int64_t[::1] counts = counts_arr
    cdef uint64_t mask = <uint64_t>(cap - 1)
    cdef Py_ssize_t i, n_distinct = 0
    cdef uint64_t h
    cdef double v, last = 0.0
    cdef Py_ssize_t last_slot = -1
    cdef bint overflow = False
    cdef bits_t bits
    with nogil:
        for i in range(n):
            v = x[i] + 0.0                     # -0.0 + 0.0 == +0.0: one key for both zeros
            if last_slot >= 0 and v == last:   # runs of equal values are common
                counts[last_slot] += 1
                continue
            bits.d = v
            h = (bits.u * GOLDEN) >> shift
            while True:
                if counts[h] == 0:
                    if n_distinct == max_distinct:
                        overflow = True
                        break
                    keys[h] = v
                    counts[h] = 1
                    n_distinct += 1
                    break
                if keys[h] == v:
                    counts[h] += 1
                    break
                h = (h + 1) & mask
            if overflow:
                break
            last = v
            last_slot = <Py_ssize_t>h
    if overflow:
        return None
    used = counts_arr > 0
    values = keys_arr[used]
    order = np.argsort(values)
    return values[order], counts_arr[used][order]


def centred_moments(const float64_t[::1] x, double centre):
    """``(sum((x - centre)**2), sum((x - centre)**3))`` in one pass, without temporaries."""
    cdef Py_ssize_t i, n = x.shape[0]
    cdef double d, m2 = 0.0, m3 = 0.0
    with nogil:
        for i in range(n):
            d = x[i] - centre
            m2 += d * d
            m3 += d * d * d
    return m2, m3
