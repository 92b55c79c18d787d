# The random numbers of the resampling engine, shared by every resampling kernel
# (``_bootstrap.pyx``, ``_compare.pyx``): one xoshiro256** stream per resample, keyed by
# ``(seed, resample)`` through SplitMix64, so that a resample's draws never depend on the
# number of threads. The inline generators are defined here so that every module that
# cimports them compiles them in (no call through a function pointer in the hot loops);
# the binomial sampler is defined in ``_bootstrap.pyx`` and exported from it.
from rankereval._typedefs cimport int64_t, uint64_t

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define rankereval_prefetch(p) __builtin_prefetch((const void *)(p))
    #else
    #define rankereval_prefetch(p) ((void)0)
    #endif
    """
    void rankereval_prefetch(const void *p) noexcept nogil


cdef extern from *:
    """
    #define RANKEREVAL_GOLDEN 0x9E3779B97F4A7C15ULL   /* 2**64 / golden ratio, odd */
    #define RANKEREVAL_TWO_POW_M53 1.1102230246251565e-16
    """
    const uint64_t GOLDEN "RANKEREVAL_GOLDEN"
    const double TWO_POW_M53 "RANKEREVAL_TWO_POW_M53"

cdef enum:
    # Scores per block of the resampling loop: 512 doubles = 4 KiB stay in L1 while they are
    # sampled, and a position takes 9 random bits (7 per 64-bit output, no rejection).
    # Measured on a 2-core AMD EPYC, CPU time per draw with 1M scores: 0.8-1.2 ns (512),
    # 2.0 (256), 3.8 (1024), 4.7 (2048), 18 (unblocked: a cache and TLB miss per draw); even
    # 10k scores (L2-resident) run 1.7x faster blocked than directly.
    BLOCK = 512
    BLOCK_MASK = 511


# --------------------------------------------------------------------------------------------
# PRNG: SplitMix64 (seeding) and xoshiro256** (drawing)
# --------------------------------------------------------------------------------------------

ctypedef struct rng_t:
    uint64_t s0
    uint64_t s1
    uint64_t s2
    uint64_t s3
    uint64_t spare      # the unused low half of the last 64-bit output (32-bit draws)
    int has_spare


ctypedef union bits_t:  # a double seen as its 64 bits (hashing)
    double d
    uint64_t u


cdef inline uint64_t _mix64(uint64_t z) noexcept nogil:
    """SplitMix64 finaliser: a bijective 64-bit hash."""
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline rng_t _stream(uint64_t seed, uint64_t stream) noexcept nogil:
    """xoshiro256** state of stream ``stream`` under ``seed``."""
    cdef rng_t st
    # key: output number `stream` of the SplitMix64 sequence seeded by `seed` (the finaliser is
    # a bijection, so distinct streams get distinct keys), then expanded to 256 bits by
    # SplitMix64 as the xoshiro authors recommend
    cdef uint64_t x = _mix64(seed + (stream + 1) * GOLDEN)
    x += GOLDEN
    st.s0 = _mix64(x)
    x += GOLDEN
    st.s1 = _mix64(x)
    x += GOLDEN
    st.s2 = _mix64(x)
    x += GOLDEN
    st.s3 = _mix64(x)
    if (st.s0 | st.s1 | st.s2 | st.s3) == 0:    # the one forbidden state
        st.s0 = 1
    st.spare = 0
    st.has_spare = 0
    return st


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t _next64(rng_t *st) noexcept nogil:
    """One xoshiro256** output."""
    cdef uint64_t result = _rotl(st.s1 * 5, 7) * 9
    cdef uint64_t t = st.s1 << 17
    st.s2 ^= st.s0
    st.s3 ^= st.s1
    st.s1 ^= st.s2
    st.s0 ^= st.s3
    st.s2 ^= t
    st.s3 = _rotl(st.s3, 45)
    return result


cdef inline uint64_t _next32(rng_t *st) noexcept nogil:
    """32 random bits: the two halves of one 64-bit output are used in turn."""
    cdef uint64_t r
    if st.has_spare:
        st.has_spare = 0
        return st.spare
    r = _next64(st)
    st.spare = r & 0xFFFFFFFFULL
    st.has_spare = 1
    return r >> 32


cdef inline double _uniform(rng_t *st) noexcept nogil:
    """A double in [0, 1) with 53 random bits."""
    return <double>(_next64(st) >> 11) * TWO_POW_M53


cdef inline uint64_t _bounded(rng_t *st, uint64_t m) noexcept nogil:
    """Unbiased integer in [0, m) for 0 < m <= 2**32 (Lemire's method)."""
    cdef uint64_t prod = _next32(st) * m
    cdef uint64_t low = prod & 0xFFFFFFFFULL
    cdef uint64_t threshold
    if low < m:                                   # rare: m / 2**32; never when m is 2**j
        threshold = (0x100000000ULL - m) % m     # 2**32 mod m
        while low < threshold:
            prod = _next32(st) * m
            low = prod & 0xFFFFFFFFULL
    return prod >> 32


cdef inline uint64_t _lemire(rng_t *st, uint64_t bits32, uint64_t m,
                            uint64_t threshold) noexcept nogil:
    """Integer in [0, m) from 32 random bits; ``threshold`` = 2**32 mod m.

    Lemire's method with the rejection made explicit: a rejected word (probability
    threshold / 2**32, zero when m is a power of two) is replaced by an independent unbiased
    draw, so the result is exactly uniform.
    """
    cdef uint64_t prod = bits32 * m
    if (prod & 0xFFFFFFFFULL) < threshold:
        return _bounded(st, m)
    return prod >> 32


cdef inline Py_ssize_t _checked_block(Py_ssize_t n, Py_ssize_t n_resamples, Py_ssize_t block,
                                      str empty_message) except -1:
    """Rows per block of the two-stage draw (``block <= 0``: BLOCK; at most ``n``), after
    checking the arguments of a resampling kernel (``empty_message`` when ``n <= 0``)."""
    if n <= 0:
        raise ValueError(empty_message)
    if n_resamples < 0:
        raise ValueError("n_resamples must be >= 0")
    if block <= 0:
        block = BLOCK
    if block > n:
        block = n
    if block > 0xFFFFFFFF:
        raise ValueError("block must be < 2**32")
    return block


# --------------------------------------------------------------------------------------------
# Defined in _bootstrap.pyx
# --------------------------------------------------------------------------------------------

cdef int64_t _binomial(rng_t *st, int64_t n, double p) noexcept nogil
