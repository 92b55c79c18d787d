/* Top-k selection of Rankings.from_scores (the row kernels of _topk.pyx).
 *
 * The rule: items by descending score, ties by ascending item id; excluded items (not in
 * valid_items, or in invalid_items) are never ranked; NaN and infinite scores of candidates
 * are dropped and counted.
 *
 * One pass per row reads each score once, in its own type (float16 as its bits, float32,
 * float64, any integer):
 *
 * - Candidates are visited in ascending item id. Until the buffer holds `cap` (>= k + 32, or
 *   every candidate of the row) of them, every candidate is appended. Then the buffer is
 *   *compacted* to the k best (selection on a copy of the values, then a stable filter, so
 *   the buffer stays in id order) and the k-th best value becomes the threshold t. A wide
 *   dense row (8 192 scores or more) starts instead from a threshold estimated on a sample
 *   of the row (re_sample_threshold: a bisection on the sampled keys, after a histogram
 *   without AVX-512; no branch per sampled score), with a second pass in the rare case that
 *   fewer than k scores pass it; where many scores pass it, the buffer has room for them
 *   all in nearly every row (re_topk_cap).
 * - From then on a candidate is kept only when its score is strictly above t: an item with
 *   score equal to t comes later in id order than the k-th best item, so it loses the tie.
 *   The dense scan tests a block of 32 scores at a time against t (SSE2 or AVX2 for float32
 *   and float64, F16C for float16, a loop the compiler vectorises otherwise) and visits only the flagged ones,
 *   without a branch per score; a compaction, when the buffer might fill, happens between
 *   blocks. Where more than a few scores in a thousand pass (a sampled threshold: rows of
 *   8 192 scores or more; k >= m / 256, or m / 128 for 64-bit scores with AVX2 only;
 *   float32, float64, int32 and int64 scores), the scan has no branch on the scores at
 *   all: the ids of the passing scores of each 8 or 16 are moved together (AVX2
 *   permutation, AVX-512 compress) and appended (re_scan_compress_avx2/avx512); their
 *   scores are read back at the end.
 * - Exclusions (the sorted CSR row of invalid_items) are merged in only for blocks with
 *   flagged scores: the exclusion pointer moves forward with the item id, and the
 *   exclusions of a block clear their bits from its mask. The compress scan, which looks
 *   at every block, first sets the row's exclusions as bits in a per-thread mask (and
 *   clears them after): a test per block would be mispredicted about once an exclusion.
 * - At the end the winners are sorted by descending score, ties in ascending id, and the
 *   first k kept: short lists by insertion sort; for ids of up to 32 bits, as 64-bit words
 *   of an order-preserving key (inverted, less the smallest) above the id, which are
 *   distinct, so that any sort of the words gives the rule's order (64-bit keys that span
 *   2^32 or more: their top 32 bits above the index in the buffer, and the rare runs of
 *   equal top bits ordered after the sort, re_topk::out_words). With AVX-512, buckets of equal key
 *   ranges and odd-even transposition rounds (re_bucket_sort_avx512), or a vectorised
 *   quicksort when the keys bunch (re_sort_words_avx512); otherwise an LSD radix sort on
 *   the key bits that differ (re_topk::write_packed). 64-bit ids: a stable LSD radix sort
 *   of the entries.
 * - All along, the thread's next row is requested a cache line at a time (re_readahead,
 *   re_topk_dense's `next`), interleaved with the work on this row: the memory of the next
 *   row and the computing of this one overlap, which a loop of prefetches after the scan
 *   did not achieve.
 *
 * Time a row (20 000 standard normal float32 scores, k = 1000; one thread, rows in L2, this
 * project's benchmark machine with AVX-512): about 1.2 us sample, 4.5-5.5 us scan, 6-7 us
 * sort of the ~1 330 winners: 12-14 us (17-22 us before the bucket sort, the AVX-512 sample
 * and the read-ahead, of which 9 us the radix sort). On two threads over a 1.5 GiB matrix
 * (benchmarks/bench_topk.py) k = 1000 took 1.4-1.8x the time of k = 10 (1.8x before); on a
 * Zen 3 with AVX2 only, 2.0-2.2x (3.05x before the AVX2 sort and scan of large k); on an
 * Intel Xeon with AVX-512, 1.48x (1.54x before the full buckets sorted one by one, the
 * multiply-add watch for NaN and the shorter bisection of the sample), where a row in the
 * cache takes 17 000-18 000 ticks of its 2.6 GHz counter at k = 1000 and 6 300 at k = 10.
 *
 * Scratch per thread: 2 cap entries + 2 cap scores (the word sorts reuse them for cap
 * words, cap words or values, cap keys or ids, each with 16 spare) + the sample's keys +
 * the bucket sort's 4 096 counters (cap <= the row length).
 */
#ifndef RANKEREVAL_TOPK_H
#define RANKEREVAL_TOPK_H

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "_lookup.h" /* RE_HAVE_SSE2, re_ctz */

#if defined(__GNUC__)
#define RE_NOINLINE __attribute__((noinline))
#define RE_ALWAYS_INLINE __attribute__((always_inline)) inline
#elif defined(_MSC_VER)
#define RE_NOINLINE __declspec(noinline)
#define RE_ALWAYS_INLINE __forceinline
#else
#define RE_NOINLINE
#define RE_ALWAYS_INLINE inline
#endif

/* The number of bits of x (0 for 0) */
static inline int re_bit_width(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return x ? 32 - __builtin_clz(x) : 0;
#else
    int w = 0;
    for (; x; x >>= 1) ++w;
    return w;
#endif
}

/* How far keys spanning `range` are shifted right to fit 32 bits (their top 32 bits) */
static inline int re_shift_to_32(uint64_t range) {
    const int width = range >> 32 ? 32 + re_bit_width((uint32_t) (range >> 32)) : re_bit_width((uint32_t) range);
    return width > 32 ? width - 32 : 0;
}

/* IEEE binary16, read as its bits (numpy float16 viewed as uint16) */
struct re_half {
    uint16_t bits;
};

/* Per score type: bad (NaN or infinite), gt (strictly greater, for finite values) and ukey
 * (an unsigned key with the order of the finite values: equal values get equal keys, so
 * -0.0 and +0.0 tie). */
template <typename T>
struct re_score;

#define RE_INT_SCORE(T, UT)                                                                   \
    template <>                                                                               \
    struct re_score<T> {                                                                      \
        typedef UT U;                                                                         \
        static inline bool bad(T) { return false; }                                           \
        static inline bool gt(T a, T b) { return a > b; }                                     \
        static inline U ukey(T v) { return (U) v ^ ((U) 1 << (8 * sizeof(U) - 1)); }          \
        static inline T from_ukey(U u) { return (T) (U) (u ^ ((U) 1 << (8 * sizeof(U) - 1))); } \
    };
RE_INT_SCORE(int8_t, uint8_t)
RE_INT_SCORE(int16_t, uint16_t)
RE_INT_SCORE(int32_t, uint32_t)
RE_INT_SCORE(int64_t, uint64_t)
#undef RE_INT_SCORE

#define RE_UINT_SCORE(T)                                                                      \
    template <>                                                                               \
    struct re_score<T> {                                                                      \
        typedef T U;                                                                          \
        static inline bool bad(T) { return false; }                                           \
        static inline bool gt(T a, T b) { return a > b; }                                     \
        static inline U ukey(T v) { return v; }                                               \
        static inline T from_ukey(U u) { return u; }                                          \
    };
RE_UINT_SCORE(uint8_t)
RE_UINT_SCORE(uint16_t)
RE_UINT_SCORE(uint32_t)
RE_UINT_SCORE(uint64_t)
#undef RE_UINT_SCORE

template <>
struct re_score<float> {
    typedef uint32_t U;
    static inline bool bad(float v) { return !(std::fabs(v) <= FLT_MAX); }
    static inline bool gt(float a, float b) { return a > b; }
    static inline U ukey(float v) {
        const float w = v + 0.0f; /* -0.0 becomes +0.0: they tie */
        U b;
        std::memcpy(&b, &w, sizeof b);
        return b ^ ((U) ((int32_t) b >> 31) | 0x80000000u); /* negative: all bits flipped */
    }
    static inline float from_ukey(U u) {
        const U b = (u & 0x80000000u) ? u ^ 0x80000000u : ~u;
        float v;
        std::memcpy(&v, &b, sizeof v);
        return v;
    }
};

template <>
struct re_score<double> {
    typedef uint64_t U;
    static inline bool bad(double v) { return !(std::fabs(v) <= DBL_MAX); }
    static inline bool gt(double a, double b) { return a > b; }
    static inline U ukey(double v) {
        const double w = v + 0.0; /* -0.0 becomes +0.0: they tie */
        U b;
        std::memcpy(&b, &w, sizeof b);
        return b ^ ((U) ((int64_t) b >> 63) | ((U) 1 << 63)); /* negative: all bits flipped */
    }
    static inline double from_ukey(U u) {
        const U b = (u >> 63) ? u ^ ((U) 1 << 63) : ~u;
        double v;
        std::memcpy(&v, &b, sizeof v);
        return v;
    }
};

template <>
struct re_score<re_half> {
    typedef uint16_t U;
    /* sign-magnitude -> two's complement: the order of the finite values, -0 == +0 */
    static inline int32_t skey(re_half v) {
        const int32_t mag = v.bits & 0x7fff;
        return (v.bits & 0x8000) ? -mag : mag;
    }
    static inline bool bad(re_half v) { return (v.bits & 0x7c00) == 0x7c00; }
    static inline bool gt(re_half a, re_half b) { return skey(a) > skey(b); }
    static inline U ukey(re_half v) { return (U) (skey(v) + 0x8000); }
    static inline re_half from_ukey(U u) {
        const int32_t sk = (int32_t) u - 0x8000;
        re_half v;
        v.bits = (uint16_t) (sk < 0 ? 0x8000 | -sk : sk);
        return v;
    }
};

/* The sample's 32-bit keys (re_sample_threshold): a window of the key, (key - base) >>
 * shift, and the score at the start of a window key's range, which is what a threshold
 * estimated on 32-bit keys needs. Keys of up to 32 bits are their own window (base 0,
 * shift 0); for 64-bit scores re_sample_keys sets the window to the 32 highest bits of the
 * sampled keys' range: the top 32 bits of the key alone are the same for every integer
 * from 0 to 2^32 - 1 (k = 1000 of 20 000 int64 scores within +-4 000 once let half the row
 * through). */
template <typename T>
struct re_key_window {
    typedef typename re_score<T>::U U;
    U base;
    int shift;
    re_key_window() : base(0), shift(0) {}
    inline uint32_t key(T v) const { return (uint32_t) ((U) (re_score<T>::ukey(v) - base) >> shift); }
    inline T score(uint32_t key) const { return re_score<T>::from_ukey((U) (base + ((U) key << shift))); }
};

/* a score the threshold test flags: above t, or NaN/infinite (dropped, but counted) */
template <typename T>
static inline bool re_flag(T v, T t) {
    return re_score<T>::gt(v, t) | re_score<T>::bad(v);
}

/* Reading the thread's next row ahead, a cache line at a time, while this row is worked on
 * (re_topk_dense): the work of a row alternates between reading memory (the scan) and
 * computing on what it read (the sample's selection, the winners' sort), and without
 * requests in flight during the computing the memory time and the compute time of the rows
 * add up. A request per step, interleaved with that work: a tight loop of a thousand
 * prefetches instead stalls once the core's line fill buffers are full, for as long as the
 * lines take to arrive, and hides nothing (measured: 10 us of computing a row, 20 000 rows
 * of 80 kB on two threads: 0.21 s without requests or with the tight loop, 0.15 s with a
 * request every 11 ns of it; reading alone 0.09 s). The lines go to L2 (a row is larger
 * than L1). */
struct re_readahead {
    const char* p;
    const char* end;
    re_readahead() : p(NULL), end(NULL) {}
    re_readahead(const void* row, Py_ssize_t bytes)
        : p((const char*) ((uintptr_t) row & ~(uintptr_t) 63)), end((const char*) row + bytes) {}
    static inline void line(const char* c) {
#if defined(__GNUC__) || defined(__clang__)
        __builtin_prefetch(c, 0, 2);
#elif RE_HAVE_SSE2
        _mm_prefetch(c, _MM_HINT_T1);
#else
        (void) c;
#endif
    }
    inline void step() {
        if (p < end) {
            line(p);
            p += 64;
        }
    }
    inline void steps(int lines) {
        for (int i = 0; i < lines; ++i) step();
    }
    inline void rest() {
        for (; p < end; p += 64) line(p);
    }
};

template <typename T, typename ID>
struct re_entry {
    T v;
    ID id;
};

/* the scores tested per vectorised threshold test */
enum { RE_TOPK_BLOCK = 32 };

/* The bucket sort's counters (re_bucket_place): at most 2^RE_BUCKET_BITS buckets, their
 * counters in the scratch space (on the stack, k = 1000 with AVX2 took 1.1x the time: 20 000
 * float32 scores a row, the rows in the cache). */
enum { RE_BUCKET_BITS = 12 };

/* Bit b set when p[b] is flagged by the threshold t (re_flag), for a block of 32 scores.
 * First one OR over the block (a loop the compiler vectorises): most blocks have no score
 * above the threshold and cost just that. */
template <typename T>
static inline uint32_t re_block_mask(const T* p, T t) {
    int any = 0;
    for (int b = 0; b < RE_TOPK_BLOCK; ++b) any |= (int) re_flag(p[b], t);
    if (!any) return 0;
#if RE_HAVE_SSE2
    /* the flags as bytes (0 or 0xff; a loop the compiler vectorises), gathered by movemask */
    uint8_t f[RE_TOPK_BLOCK];
    for (int b = 0; b < RE_TOPK_BLOCK; ++b) f[b] = (uint8_t) -(int) re_flag(p[b], t);
    return (uint32_t) _mm_movemask_epi8(_mm_loadu_si128((const __m128i*) f)) |
           ((uint32_t) _mm_movemask_epi8(_mm_loadu_si128((const __m128i*) (f + 16))) << 16);
#else
    uint32_t mask = 0;
    for (int b = 0; b < RE_TOPK_BLOCK; ++b) mask |= (uint32_t) re_flag(p[b], t) << b;
    return mask;
#endif
}

#if RE_HAVE_SSE2
/* The SSE2 operations of re_block_mask_sse2, for float32 (4 lanes) and float64 (2 lanes). */
template <typename T>
struct re_sse2;

template <>
struct re_sse2<float> {
    typedef __m128 V;
    enum { LANES = 4 };
    static inline V set1(float v) { return _mm_set1_ps(v); }
    static inline V load(const float* p) { return _mm_loadu_ps(p); }
    static inline V not_le(V a, V b) { return _mm_cmpnle_ps(a, b); }
    static inline V eq(V a, V b) { return _mm_cmpeq_ps(a, b); }
    static inline V or_(V a, V b) { return _mm_or_ps(a, b); }
    static inline V zero() { return _mm_setzero_ps(); }
    static inline uint32_t movemask(V a) { return (uint32_t) _mm_movemask_ps(a); }
};

template <>
struct re_sse2<double> {
    typedef __m128d V;
    enum { LANES = 2 };
    static inline V set1(double v) { return _mm_set1_pd(v); }
    static inline V load(const double* p) { return _mm_loadu_pd(p); }
    static inline V not_le(V a, V b) { return _mm_cmpnle_pd(a, b); }
    static inline V eq(V a, V b) { return _mm_cmpeq_pd(a, b); }
    static inline V or_(V a, V b) { return _mm_or_pd(a, b); }
    static inline V zero() { return _mm_setzero_pd(); }
    static inline uint32_t movemask(V a) { return (uint32_t) _mm_movemask_pd(a); }
};

/* float32 and float64 with SIMD (X: re_sse2 or re_avx2): compare and flag X::LANES scores
 * at a time, the flags of the block gathered by movemask, so that only the flagged scores
 * are visited one by one. */
#define RE_BLOCK_MASK_SIMD_BODY                                                                  \
    enum { N = RE_TOPK_BLOCK / X::LANES };                                                       \
    const typename X::V vt = X::set1(t);                                                         \
    const typename X::V minus_inf = X::set1(-std::numeric_limits<T>::infinity());                \
    typename X::V f[N];                                                                          \
    typename X::V any = X::zero();                                                               \
    for (int q = 0; q < N; ++q) {                                                                \
        const typename X::V x = X::load(p + X::LANES * q);                                       \
        /* not x <= t: above t, NaN or +inf; or -inf (t is finite) */                            \
        f[q] = X::or_(X::not_le(x, vt), X::eq(x, minus_inf));                                    \
        any = X::or_(any, f[q]);                                                                 \
    }                                                                                            \
    if (!X::movemask(any)) return 0;                                                             \
    uint32_t mask = 0;                                                                           \
    for (int q = 0; q < N; ++q) mask |= X::movemask(f[q]) << (X::LANES * q);                     \
    return mask;

template <typename T>
static inline uint32_t re_block_mask_sse2(const T* p, T t) {
    typedef re_sse2<T> X;
    RE_BLOCK_MASK_SIMD_BODY
}
template <>
inline uint32_t re_block_mask<float>(const float* p, float t) {
    return re_block_mask_sse2(p, t);
}

template <>
inline uint32_t re_block_mask<double>(const double* p, double t) {
    return re_block_mask_sse2(p, t);
}
#endif

/* AVX2 (8 float32 or 4 float64 lanes) where the compiler can target it per function: the
 * dense scan of float32/float64 rows is compiled a second time for AVX2 and chosen at run
 * time on a CPU that has it (re_scan). Halves the instructions of the scan. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__)) && RE_HAVE_SSE2
#define RE_TOPK_AVX2 1
#include <immintrin.h>
#define RE_AVX2 __attribute__((target("avx2")))
#define RE_AVX2_POPCNT __attribute__((target("avx2,popcnt")))

template <typename T>
struct re_avx2;

template <>
struct re_avx2<float> {
    typedef __m256 V;
    enum { LANES = 8 };
    RE_AVX2 static inline V set1(float v) { return _mm256_set1_ps(v); }
    RE_AVX2 static inline V load(const float* p) { return _mm256_loadu_ps(p); }
    RE_AVX2 static inline V not_le(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_NLE_UQ); }
    RE_AVX2 static inline V eq(V a, V b) { return _mm256_cmp_ps(a, b, _CMP_EQ_OQ); }
    RE_AVX2 static inline V or_(V a, V b) { return _mm256_or_ps(a, b); }
    RE_AVX2 static inline V zero() { return _mm256_setzero_ps(); }
    RE_AVX2 static inline uint32_t movemask(V a) { return (uint32_t) _mm256_movemask_ps(a); }
};

template <>
struct re_avx2<double> {
    typedef __m256d V;
    enum { LANES = 4 };
    RE_AVX2 static inline V set1(double v) { return _mm256_set1_pd(v); }
    RE_AVX2 static inline V load(const double* p) { return _mm256_loadu_pd(p); }
    RE_AVX2 static inline V not_le(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_NLE_UQ); }
    RE_AVX2 static inline V eq(V a, V b) { return _mm256_cmp_pd(a, b, _CMP_EQ_OQ); }
    RE_AVX2 static inline V or_(V a, V b) { return _mm256_or_pd(a, b); }
    RE_AVX2 static inline V zero() { return _mm256_setzero_pd(); }
    RE_AVX2 static inline uint32_t movemask(V a) { return (uint32_t) _mm256_movemask_pd(a); }
};

template <typename T>
RE_AVX2 static inline uint32_t re_block_mask_avx2(const T* p, T t) {
    typedef re_avx2<T> X;
    RE_BLOCK_MASK_SIMD_BODY
}

/* RANKEREVAL_DISABLE_AVX2 (set before the first call) keeps the SSE2 scan: for tests */
static inline bool re_cpu_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2") && !std::getenv("RANKEREVAL_DISABLE_AVX2");
    return has;
}

static inline bool re_cpu_has_avx2_popcnt() {
    static const bool has = re_cpu_has_avx2() && __builtin_cpu_supports("popcnt");
    return has;
}

/* RANKEREVAL_DISABLE_AVX512 (set before the first call) keeps the AVX2 scans and the radix
 * sort of the winners, and RANKEREVAL_DISABLE_AVX2 the SSE2 scans: for tests */
static inline bool re_cpu_has_avx512() {
    static const bool has = re_cpu_has_avx2() && __builtin_cpu_supports("avx512f") &&
                            __builtin_cpu_supports("popcnt") && !std::getenv("RANKEREVAL_DISABLE_AVX512");
    return has;
}

#define RE_AVX512 __attribute__((target("avx512f,popcnt")))

/* Sorting distinct 64-bit words in ascending order with AVX-512 (re_sort_words_avx512), for
 * the winners of a row as words of key and id (re_topk::write_packed): a quicksort whose
 * partitions are vectorised (8 words compared with the pivot at a time, the two sides
 * gathered by vpcompressq), down to segments of at most 32 words, which a sorting network
 * sorts in four registers. Only the segments that hold one of the first k positions are
 * sorted. No branch depends on a word except the one per segment; the LSD radix sort it
 * replaces spends about 10 ns a word on 1 300 winners (three passes of scattered stores),
 * this about 2.
 *
 * The network is the bitonic sort written with ascending comparators only: merging two
 * sorted halves of 2m compares lane i with lane 2m - 1 - i (a "flip"), then each half is
 * sorted by half-cleaners of distances m / 2, ..., 1. A comparator stage in one register
 * is a permutation (each lane's partner), a min, a max and a blend (which lanes keep the
 * max). */
RE_AVX512 static inline __m512i re_cx8(__m512i v, __m512i partner, __mmask8 take_max) {
    const __m512i p = _mm512_permutexvar_epi64(partner, v);
    return _mm512_mask_blend_epi64(take_max, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
}

/* pairs at distance 1, 2 and 4 (half-cleaners), and the flips of blocks of 4 and 8 */
#define RE_D1 _mm512_setr_epi64(1, 0, 3, 2, 5, 4, 7, 6), (__mmask8) 0xaa
#define RE_D2 _mm512_setr_epi64(2, 3, 0, 1, 6, 7, 4, 5), (__mmask8) 0xcc
#define RE_D4 _mm512_setr_epi64(4, 5, 6, 7, 0, 1, 2, 3), (__mmask8) 0xf0
#define RE_F4 _mm512_setr_epi64(3, 2, 1, 0, 7, 6, 5, 4), (__mmask8) 0xcc
#define RE_F8 _mm512_setr_epi64(7, 6, 5, 4, 3, 2, 1, 0), (__mmask8) 0xf0

/* a bitonic sequence of 8 sorted */
RE_AVX512 static inline __m512i re_clean8(__m512i v) {
    return re_cx8(re_cx8(re_cx8(v, RE_D4), RE_D2), RE_D1);
}

/* any 8 sorted */
RE_AVX512 static inline __m512i re_sort8(__m512i v) {
    v = re_cx8(v, RE_D1);                  /* sorted pairs */
    v = re_cx8(re_cx8(v, RE_F4), RE_D1);   /* sorted fours */
    return re_cx8(re_cx8(re_cx8(v, RE_F8), RE_D2), RE_D1);
}

RE_AVX512 static inline __m512i re_rev8(__m512i v) {
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(7, 6, 5, 4, 3, 2, 1, 0), v);
}

/* a and b sorted: a, b become the 16 sorted (the flip across the two, then half-cleaners;
 * the upper half is left reversed, which keeps it bitonic) */
RE_AVX512 static inline void re_merge16(__m512i& a, __m512i& b) {
    const __m512i rb = re_rev8(b);
    const __m512i lo = _mm512_min_epu64(a, rb), hi = _mm512_max_epu64(a, rb);
    a = re_clean8(lo);
    b = re_clean8(hi);
}

/* (a, b) and (c, d) sorted 16s: the 32 sorted */
RE_AVX512 static inline void re_merge32(__m512i& a, __m512i& b, __m512i& c, __m512i& d) {
    const __m512i rd = re_rev8(d), rc = re_rev8(c);
    const __m512i l0 = _mm512_min_epu64(a, rd), l1 = _mm512_min_epu64(b, rc); /* the lower 16, bitonic */
    const __m512i u0 = _mm512_max_epu64(a, rd), u1 = _mm512_max_epu64(b, rc); /* the upper, reversed */
    a = re_clean8(_mm512_min_epu64(l0, l1)); /* half-cleaners of distance 8, then of 4, 2, 1 */
    b = re_clean8(_mm512_max_epu64(l0, l1));
    c = re_clean8(_mm512_min_epu64(u0, u1));
    d = re_clean8(_mm512_max_epu64(u0, u1));
}

/* w[0:len] sorted, 0 < len <= 32: masked loads fill the missing lanes with the largest word */
RE_AVX512 static inline void re_sort_small(uint64_t* w, Py_ssize_t len) {
    const __m512i top = _mm512_set1_epi64(-1);
    __mmask8 m[4];
    for (int r = 0; r < 4; ++r) {
        const Py_ssize_t in = len - 8 * r;
        m[r] = (__mmask8) (in >= 8 ? 0xff : in > 0 ? (1u << in) - 1 : 0);
    }
    __m512i a = re_sort8(_mm512_mask_loadu_epi64(top, m[0], w));
    if (len <= 8) {
        _mm512_mask_storeu_epi64(w, m[0], a);
        return;
    }
    __m512i b = re_sort8(_mm512_mask_loadu_epi64(top, m[1], w + 8));
    re_merge16(a, b);
    if (len > 16) {
        __m512i c = re_sort8(_mm512_mask_loadu_epi64(top, m[2], w + 16));
        __m512i d = re_sort8(_mm512_mask_loadu_epi64(top, m[3], w + 24));
        re_merge16(c, d);
        re_merge32(a, b, c, d);
        _mm512_mask_storeu_epi64(w + 16, m[2], c);
        _mm512_mask_storeu_epi64(w + 24, m[3], d);
    }
    _mm512_storeu_si512((void*) w, a);
    _mm512_mask_storeu_epi64(w + 8, m[1], b);
}

/* Split w[0:len] (len > 32) around a pivot, the median of three of its words: those at
 * most the pivot first (stored back in place: the write position never passes the read
 * position), the others gathered in tmp and copied after them. Returns how many are at
 * most the pivot: at least 2 and at most len - 1, the words being distinct. */
RE_AVX512 static inline Py_ssize_t re_partition_words(uint64_t* w, Py_ssize_t len, uint64_t* tmp, re_readahead& ra) {
    uint64_t a = w[0], b = w[len / 2], c = w[len - 1];
    if (a > b) std::swap(a, b);
    if (b > c) b = a > c ? a : c; /* the median */
    const __m512i pivot = _mm512_set1_epi64((long long) b);
    Py_ssize_t nl = 0, nr = 0;
    Py_ssize_t i = 0;
    for (; i + 8 <= len; i += 8) {
        if (i & 8) ra.step(); /* a line per 16 words: about 8 ns */
        const __m512i v = _mm512_loadu_si512((const void*) (w + i));
        const __mmask8 le = _mm512_cmple_epu64_mask(v, pivot);
        const int n_le = __builtin_popcount((unsigned) le);
        _mm512_mask_storeu_epi64(w + nl, (__mmask8) ((1u << n_le) - 1), _mm512_maskz_compress_epi64(le, v));
        _mm512_mask_storeu_epi64(tmp + nr, (__mmask8) (0xffu >> n_le), _mm512_maskz_compress_epi64((__mmask8) ~le, v));
        nl += n_le;
        nr += 8 - n_le;
    }
    if (i < len) {
        const __mmask8 in = (__mmask8) ((1u << (len - i)) - 1);
        const __m512i v = _mm512_maskz_loadu_epi64(in, w + i);
        const __mmask8 le = _mm512_mask_cmple_epu64_mask(in, v, pivot), gt = in & (__mmask8) ~le;
        const int n_le = __builtin_popcount((unsigned) le), n_gt = __builtin_popcount((unsigned) gt);
        _mm512_mask_storeu_epi64(w + nl, (__mmask8) ((1u << n_le) - 1), _mm512_maskz_compress_epi64(le, v));
        _mm512_mask_storeu_epi64(tmp + nr, (__mmask8) ((1u << n_gt) - 1), _mm512_maskz_compress_epi64(gt, v));
        nl += n_le;
        nr += n_gt;
    }
    std::memcpy(w + nl, tmp, (size_t) nr * sizeof(uint64_t));
    return nl;
}

/* w[0:n] (distinct words) rearranged so that w[0:min(n, k)] are the smallest, ascending;
 * tmp: room for n words. A segment that quicksort splits unevenly too often is sorted by
 * std::sort instead (the words being distinct, any correct sort gives the same result). */
RE_AVX512 static void re_sort_words_avx512(uint64_t* w, Py_ssize_t n, Py_ssize_t k, uint64_t* tmp, re_readahead& ra) {
    struct segment {
        Py_ssize_t lo, hi;
        int depth;
    };
    enum { MAX_DEPTH = 48 };
    segment stack[MAX_DEPTH + 2];
    int top = 0;
    stack[top++] = segment{0, n, 0};
    while (top) {
        const segment s = stack[--top];
        if (s.lo >= k) continue; /* none of the first k positions */
        const Py_ssize_t len = s.hi - s.lo;
        if (len <= 32) {
            ra.steps(4);
            if (len > 1) re_sort_small(w + s.lo, len);
        } else if (s.depth >= MAX_DEPTH) {
            std::sort(w + s.lo, w + s.hi);
        } else {
            const Py_ssize_t nl = re_partition_words(w + s.lo, len, tmp, ra);
            stack[top++] = segment{s.lo + nl, s.hi, s.depth + 1};
            stack[top++] = segment{s.lo, s.lo + nl, s.depth + 1};
        }
    }
}

/* The keys (inverted order-preserving keys of the scores) and the words (key above id) of
 * the winners buf[0:n], with the smallest and largest key: for float32 scores and int32 ids,
 * 8 entries at a time (returns false for the other types: a scalar loop). */
template <typename T, typename ID>
static inline bool re_words_avx512(const re_entry<T, ID>*, Py_ssize_t, uint32_t*, uint64_t*, uint32_t*, uint32_t*) {
    return false;
}
/* The inverted order-preserving keys of re_score<float> in the lanes of f (ascending key:
 * descending score), -0.0 made +0.0 first (they tie): ~(b ^ (sign ? 0xffffffff : 0x80000000))
 * = b ^ (sign ? 0 : 0x7fffffff) */
RE_AVX512 static inline __m512i re_inverted_keys_avx512(__m512 f) {
    const __m512i b = _mm512_castps_si512(_mm512_add_ps(f, _mm512_setzero_ps()));
    return _mm512_xor_si512(b, _mm512_andnot_si512(_mm512_srai_epi32(b, 31), _mm512_set1_epi32(0x7fffffff)));
}

RE_AVX512 static inline bool re_words_avx512(const re_entry<float, int32_t>* buf, Py_ssize_t n, uint32_t* key,
                                             uint64_t* words, uint32_t* lo, uint32_t* hi) {
    __m512i vlo = _mm512_set1_epi64(-1), vhi = _mm512_setzero_si512();
    for (Py_ssize_t i = 0; i < n; i += 8) {
        const __mmask8 m = (__mmask8) (n - i >= 8 ? 0xff : (1u << (n - i)) - 1);
        const __m512i e = _mm512_maskz_loadu_epi64(m, buf + i); /* 32-bit lanes: value, id, value, id, ... */
        const __m512i c = re_inverted_keys_avx512(_mm512_castsi512_ps(e)); /* used in the value lanes */
        /* key in the high half of each 64-bit lane, id in the low */
        const __m512i w = _mm512_shuffle_epi32(_mm512_mask_blend_epi32((__mmask16) 0x5555, e, c), _MM_PERM_CDAB);
        _mm512_mask_storeu_epi64(words + i, m, w);
        const __m512i kk = _mm512_srli_epi64(w, 32);
        _mm512_mask_cvtepi64_storeu_epi32(key + i, m, kk);
        vlo = _mm512_mask_min_epu64(vlo, m, vlo, kk);
        vhi = _mm512_mask_max_epu64(vhi, m, vhi, kk);
    }
    *lo = (uint32_t) _mm512_reduce_min_epu64(vlo);
    *hi = (uint32_t) _mm512_reduce_max_epu64(vhi);
    return true;
}

/* The bucket sort of the winners' words (re_bucket_sort_avx512/_avx2): the first len of the
 * words src[0:n] (distinct; key[i], between lo and hi, is the top half of src[i], and is
 * overwritten) sorted into dst[0:len] (the others after them; dst has room for n + 16), when
 * their keys spread evenly enough: a counting pass puts them in about n buckets of equal
 * key ranges, and odd-even transposition rounds over the array (a vector of words at a
 * time: each pair of neighbours compared and ordered, the pairs starting at even, then at
 * odd positions) then sort every bucket at once: the comparisons across two buckets never
 * swap, and L rounds sort L words. As many rounds as the fullest bucket has words (with
 * AVX-512 at most RE_BUCKET_FEW, then each fuller bucket sorted alone by a sorting
 * network: re_sort_full_buckets_avx512), fewer when two in a row swap nothing; and only as
 * far as the bucket that holds position len - 1. Returns false, having sorted nothing,
 * when a bucket holds more than RE_BUCKET_ROUNDS words (keys bunched together: then
 * re_sort_words_avx512, or the radix sort). No branch depends on a word. The radix sort spends about 7 ns a word on the
 * 1 330 winners of k = 1000 (four passes of scattered stores), this about 5 (AVX-512; an
 * eighth less than the radix sort with AVX2).
 *
 * re_bucket_place: the words into their buckets in dst (the keys become their buckets;
 * `starts` turns the buckets' sizes into their starts; `flip` is xored into every word),
 * and the fullest bucket's size and the end of the bucket holding position len - 1; or
 * false when there are too many words or a bucket is too full. A line of the next row is
 * requested every pace + 1 words of each of its two passes (pace + 1 a power of two). */
/* RE_BUCKET_FEW: at k = 1000 of 20 000 standard normal scores the fullest bucket holds about
 * 7 words, and a dozen or so buckets more than 4 (the winners are densest just above the
 * threshold): four rounds, then those dozen sorted alone, took 0.91x the time of the row
 * in the cache and 0.96x from memory (Intel Xeon; three rounds 0.95x / 1.00x, five
 * 0.93x / 0.96x). */
enum { RE_BUCKET_ROUNDS = 12, RE_BUCKET_FEW = 4 };

/* the sizes count[0:nb] become the buckets' starts; returns the largest size */
static uint32_t re_bucket_starts(uint32_t* count, uint32_t nb) {
    uint32_t pos = 0, fullest = 0;
    for (uint32_t b = 0; b < nb; ++b) {
        const uint32_t c = count[b];
        count[b] = pos;
        pos += c;
        fullest = c > fullest ? c : fullest;
    }
    return fullest;
}

/* the same with AVX-512, 16 sizes a vector: shifted copies added, then the carry of the
 * vectors before (about 0.3 us instead of 1.2 us for the 2 048 buckets of k = 1000) */
RE_AVX512 static uint32_t re_bucket_starts_avx512(uint32_t* count, uint32_t nb) {
    const __m512i lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    __m512i carry = _mm512_setzero_si512(), fullest = _mm512_setzero_si512();
    for (uint32_t b = 0; b < nb; b += 16) {
        const __mmask16 in = (__mmask16) (nb - b >= 16 ? 0xffff : (1u << (nb - b)) - 1);
        const __m512i c = _mm512_maskz_loadu_epi32(in, count + b);
        fullest = _mm512_max_epu32(fullest, c);
        __m512i v = c;
        for (int d = 1; d < 16; d <<= 1) /* lane i += lane i - d */
            v = _mm512_add_epi32(v, _mm512_maskz_permutexvar_epi32((__mmask16) (0xffffu << d),
                                                                   _mm512_sub_epi32(lane, _mm512_set1_epi32(d)), v));
        v = _mm512_add_epi32(v, carry); /* inclusive sums */
        _mm512_mask_storeu_epi32(count + b, in, _mm512_sub_epi32(v, c));
        carry = _mm512_permutexvar_epi32(_mm512_set1_epi32(15), v);
    }
    return _mm512_reduce_max_epu32(fullest);
}

/* the same with AVX2, 8 sizes a vector: shifted copies added within each half, the lower
 * half's total to the upper half, then the carry of the vectors before; the sizes after the
 * last whole vector one by one */
RE_AVX2 static uint32_t re_bucket_starts_avx2(uint32_t* count, uint32_t nb) {
    const __m256i last = _mm256_set1_epi32(7), mid = _mm256_set1_epi32(3);
    __m256i carry = _mm256_setzero_si256(), fullest = _mm256_setzero_si256();
    uint32_t b = 0;
    for (; b + 8 <= nb; b += 8) {
        const __m256i c = _mm256_loadu_si256((const __m256i*) (count + b));
        fullest = _mm256_max_epu32(fullest, c);
        __m256i v = _mm256_add_epi32(c, _mm256_slli_si256(c, 4));
        v = _mm256_add_epi32(v, _mm256_slli_si256(v, 8));
        v = _mm256_add_epi32(v, _mm256_blend_epi32(_mm256_setzero_si256(), _mm256_permutevar8x32_epi32(v, mid), 0xf0));
        v = _mm256_add_epi32(v, carry); /* inclusive sums */
        _mm256_storeu_si256((__m256i*) (count + b), _mm256_sub_epi32(v, c));
        carry = _mm256_permutevar8x32_epi32(v, last);
    }
    uint32_t f[8];
    _mm256_storeu_si256((__m256i*) f, fullest);
    uint32_t most = *std::max_element(f, f + 8), pos = (uint32_t) _mm256_cvtsi256_si32(carry);
    for (; b < nb; ++b) {
        const uint32_t c = count[b];
        count[b] = pos;
        pos += c;
        most = c > most ? c : most;
    }
    return most;
}

/* the keys key[0:n] become their buckets (key - lo) >> shift; with AVX-512 16 at a time,
 * before the counting loop (which then only counts: 4.0 instead of 4.7 thousand cycles
 * for the placing of the 1 330 winners of k = 1000) */
static void re_buckets(uint32_t* key, Py_ssize_t n, uint32_t lo, int shift) {
    for (Py_ssize_t i = 0; i < n; ++i) key[i] = (key[i] - lo) >> shift;
}
RE_AVX512 static void re_buckets_avx512(uint32_t* key, Py_ssize_t n, uint32_t lo, int shift) {
    const __m512i l = _mm512_set1_epi32((int) lo);
    const __m128i s = _mm_cvtsi32_si128(shift);
    for (Py_ssize_t i = 0; i < n; i += 16) {
        const __mmask16 m = (__mmask16) (n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
        const __m512i b = _mm512_srl_epi32(_mm512_sub_epi32(_mm512_maskz_loadu_epi32(m, key + i), l), s);
        _mm512_mask_storeu_epi32(key + i, m, b);
    }
}

static inline bool re_bucket_place(const uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len, uint32_t lo,
                                   uint32_t hi, uint64_t* dst, uint32_t* count, re_readahead& ra, uint32_t* most,
                                   Py_ssize_t* limit, uint32_t* n_buckets,
                                   uint32_t (*starts)(uint32_t*, uint32_t),
                                   void (*buckets)(uint32_t*, Py_ssize_t, uint32_t, int), uint64_t flip,
                                   Py_ssize_t pace) {
    if (n >= ((Py_ssize_t) 1 << RE_BUCKET_BITS)) return false;
    int nb_bits = re_bit_width((uint32_t) n);
    const int bits = re_bit_width(hi - lo);
    if (nb_bits > bits) nb_bits = bits;
    const int shift = bits - nb_bits;
    const uint32_t nb = ((hi - lo) >> shift) + 1;
    std::memset(count, 0, sizeof(uint32_t) * nb);
    buckets(key, n, lo, shift);
    for (Py_ssize_t i = 0; i < n; ++i) {
        if ((i & pace) == 0) ra.step();
        ++count[key[i]];
    }
    const uint32_t fullest = starts(count, nb); /* the sizes become the buckets' starts */
    if (fullest > RE_BUCKET_ROUNDS) return false;
    const uint32_t* const after = std::upper_bound(count, count + nb, (uint32_t) (len - 1));
    *limit = after == count + nb ? n : (Py_ssize_t) *after;
    *most = fullest;
    *n_buckets = nb;
    for (Py_ssize_t i = 0; i < n; ++i) {
        if ((i & pace) == 0) ra.step();
        dst[count[key[i]]++] = src[i] ^ flip;
    }
    for (int i = 0; i < 16; ++i) dst[n + i] = ~flip; /* the last vectors' padding: the largest */
    return true;
}

/* After RE_BUCKET_FEW rounds every bucket of at most that many words is sorted; the few
 * fuller ones (where the winners are densest) are sorted one by one (re_sort_small), as far
 * as position limit. end[0:nb]: where each bucket ends (re_bucket_place leaves its
 * counters so). */
RE_AVX512 static void re_sort_full_buckets_avx512(uint64_t* dst, const uint32_t* end, uint32_t nb,
                                                 Py_ssize_t limit) {
    const __m512i before = _mm512_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    const __m512i few = _mm512_set1_epi32(RE_BUCKET_FEW);
    uint32_t start0 = 0; /* the end of the bucket before the vector's first */
    for (uint32_t b = 0; b < nb && (Py_ssize_t) start0 < limit; b += 16) {
        const __mmask16 in = (__mmask16) (nb - b >= 16 ? 0xffff : (1u << (nb - b)) - 1);
        const __m512i e = _mm512_maskz_loadu_epi32(in, end + b);
        const __m512i s = _mm512_mask_permutexvar_epi32(_mm512_set1_epi32((int) start0), (__mmask16) 0xfffe, before, e);
        __mmask16 full = _mm512_mask_cmpgt_epu32_mask(in, _mm512_sub_epi32(e, s), few);
        if (full) {
            uint32_t st[16], en[16];
            _mm512_storeu_si512((void*) st, s);
            _mm512_storeu_si512((void*) en, e);
            for (; full; full = (__mmask16) (full & (full - 1))) {
                const int l = __builtin_ctz((unsigned) full);
                if ((Py_ssize_t) st[l] < limit) re_sort_small(dst + st[l], (Py_ssize_t) (en[l] - st[l]));
            }
        }
        start0 = end[b + 15 < nb ? b + 15 : nb - 1];
    }
}

RE_AVX512 static bool re_bucket_sort_avx512(const uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len,
                                            uint32_t lo, uint32_t hi, uint64_t* dst, uint32_t* count, re_readahead& ra) {
    uint32_t most, nb;
    Py_ssize_t limit;
    if (!re_bucket_place(src, key, n, len, lo, hi, dst, count, ra, &most, &limit, &nb, re_bucket_starts_avx512,
                         re_buckets_avx512, 0, 15))
        return false;
    const __m512i partner = _mm512_setr_epi64(1, 0, 3, 2, 5, 4, 7, 6);
    bool clean_before = false;
    const uint32_t rounds = most < RE_BUCKET_FEW ? most : RE_BUCKET_FEW;
    for (uint32_t round = 0; round < rounds; ++round) {
        __mmask8 swapped = 0;
        for (Py_ssize_t j = round & 1; j < limit; j += 8) {
            if (j & 8) ra.step();
            const __m512i v = _mm512_loadu_si512((const void*) (dst + j));
            const __m512i p = _mm512_permutexvar_epi64(partner, v);
            const __m512i s = _mm512_mask_blend_epi64((__mmask8) 0xaa, _mm512_min_epu64(v, p), _mm512_max_epu64(v, p));
            swapped |= _mm512_cmpneq_epu64_mask(s, v);
            _mm512_storeu_si512((void*) (dst + j), s);
        }
        const bool clean = swapped == 0;
        if (clean && clean_before) return true; /* every neighbouring pair in order */
        clean_before = clean;
    }
    if (most > RE_BUCKET_FEW) re_sort_full_buckets_avx512(dst, count, nb, limit);
    return true;
}

/* The same with AVX2: 4 words a vector. AVX2 compares 64-bit lanes as signed integers, so
 * the words are placed with their top bit flipped (unsigned order becomes signed order),
 * and left so: re_topk::out_words reads only their low halves and whether high halves are
 * equal, which the flip keeps.
 * The words being distinct, the even lane of a pair takes its partner when it is
 * greater, and the odd lane when it is not: one comparison and one blend a vector, whose
 * mask also tells whether the round swapped anything.
 *
 * The next row is requested more slowly than with AVX-512: a line every 32 words placed
 * and every 4 vectors of a round, so that the requests spread over the rounds (on a Zen 3,
 * where a prefetch fills L1 too, requests in a burst evict the words being sorted and
 * queue behind each other; 20 000 x 20 000 float32 scores, k = 1 000, 2 threads, in one
 * process taking turns: 0.91-0.94x the time with the rounds' pace, 0.96x more with the
 * placing's, against a line every 2 vectors and 16 words). */
RE_AVX2 static bool re_bucket_sort_avx2(const uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len,
                                        uint32_t lo, uint32_t hi, uint64_t* dst, uint32_t* count, re_readahead& ra) {
    uint32_t most, nb;
    Py_ssize_t limit;
    const uint64_t flip = (uint64_t) 1 << 63;
    if (!re_bucket_place(src, key, n, len, lo, hi, dst, count, ra, &most, &limit, &nb, re_bucket_starts_avx2,
                         re_buckets, flip, 31))
        return false;
    const __m256i odd = _mm256_setr_epi64x(0, -1, 0, -1);
    bool clean_before = false;
    for (uint32_t round = 0; round < most; ++round) {
        int swapped = 0;
        for (Py_ssize_t j = round & 1; j < limit; j += 4) {
            if ((j & 12) == 0) ra.step();
            const __m256i v = _mm256_loadu_si256((const __m256i*) (dst + j));
            const __m256i p = _mm256_permute4x64_epi64(v, 0xb1); /* neighbours swapped: 1 0 3 2 */
            const __m256i take = _mm256_xor_si256(_mm256_cmpgt_epi64(v, p), odd);
            swapped |= _mm256_movemask_pd(_mm256_castsi256_pd(take));
            _mm256_storeu_si256((__m256i*) (dst + j), _mm256_blendv_epi8(v, p, take));
        }
        const bool clean = swapped == 0;
        if (clean && clean_before) break;
        clean_before = clean;
    }
    return true;
}

/* The sample's keys (re_sample_threshold) with AVX-512, for float32 rows: RE_TOPK_SAMPLE_RUN
 * (32) scores a chunk as two vectors, NaN and infinite scores with key 0 (and not counted
 * in n_ok), and the smallest and largest key; float64 and int64 rows below. Returns false
 * for the other types. */
template <typename T>
static inline bool re_sample_keys_avx512(const T*, Py_ssize_t, Py_ssize_t, uint32_t*, Py_ssize_t*, uint32_t*,
                                         uint32_t*, re_readahead&, re_key_window<T>*) {
    return false;
}
RE_AVX512 static inline bool re_sample_keys_avx512(const float* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key,
                                                    Py_ssize_t* n_ok, uint32_t* lo, uint32_t* hi, re_readahead& ra,
                                                    re_key_window<float>*) {
    const __m512i inf = _mm512_set1_epi32(0x7f800000), magnitude = _mm512_set1_epi32(0x7fffffff);
    const __m512i sign = _mm512_set1_epi32((int) 0x80000000u);
    __m512i vlo = _mm512_set1_epi32(-1), vhi = _mm512_setzero_si512();
    int ok = 0;
    for (Py_ssize_t c = 0; c < chunks; ++c) {
        ra.steps(6);
        const float* p = row + (c * (m - 32)) / (chunks - 1);
        for (int h = 0; h < 2; ++h) {
            const __m512 f = _mm512_add_ps(_mm512_loadu_ps(p + 16 * h), _mm512_setzero_ps()); /* -0.0: +0.0 */
            const __m512i b = _mm512_castps_si512(f);
            const __mmask16 good = _mm512_cmplt_epu32_mask(_mm512_and_si512(b, magnitude), inf);
            /* re_score<float>::ukey: negative, all bits flipped; else the sign bit set */
            const __m512i u = _mm512_xor_si512(b, _mm512_or_si512(_mm512_srai_epi32(b, 31), sign));
            const __m512i kk = _mm512_maskz_mov_epi32(good, u);
            _mm512_storeu_si512((void*) (key + 32 * c + 16 * h), kk);
            vlo = _mm512_min_epu32(vlo, kk);
            vhi = _mm512_max_epu32(vhi, kk);
            ok += __builtin_popcount((unsigned) good);
        }
    }
    *n_ok = ok;
    *lo = _mm512_reduce_min_epu32(vlo);
    *hi = _mm512_reduce_max_epu32(vhi);
    return true;
}

/* The same for 64-bit scores, 8 a vector: re_score<T>::ukey of the finite sampled scores
 * (float64: -0.0 made +0.0, negative scores' bits all flipped, the others' sign bit set;
 * int64: the sign bit flipped) and their range, which sets the window of the 32-bit keys
 * (re_key_window), then the keys; as re_sample_keys does one score at a time (32 scores a
 * chunk: 4 vectors), with the same thresholds (checked on 6 000 rows with NaN, +-inf, -0.0
 * and the extremes of either type). 20 000 x 20 000 scores with 1M exclusions, 2 threads,
 * against the scalar keys in one process taking turns: float64 0.88-0.89x the time at
 * k = 10, 100 and 1000, int64 0.92-0.94x. */
RE_AVX512 static inline __m512i re_ukeys_avx512(const double* p, __mmask8* good) {
    const __m512i b = _mm512_castpd_si512(_mm512_add_pd(_mm512_loadu_pd(p), _mm512_setzero_pd()));
    *good = _mm512_cmplt_epu64_mask(_mm512_and_si512(b, _mm512_set1_epi64(0x7fffffffffffffffll)),
                                    _mm512_set1_epi64(0x7ff0000000000000ll));
    return _mm512_xor_si512(b, _mm512_or_si512(_mm512_srai_epi64(b, 63), _mm512_set1_epi64((long long) (1ull << 63))));
}
RE_AVX512 static inline __m512i re_ukeys_avx512(const int64_t* p, __mmask8* good) {
    *good = 0xff;
    return _mm512_xor_si512(_mm512_loadu_si512((const void*) p), _mm512_set1_epi64((long long) (1ull << 63)));
}
template <typename T>
RE_AVX512 static inline bool re_sample_keys_avx512_64(const T* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key,
                                                       Py_ssize_t* n_ok, uint32_t* lo, uint32_t* hi, re_readahead& ra,
                                                       re_key_window<T>* win) {
    __m512i ulo = _mm512_set1_epi64(-1), uhi = _mm512_setzero_si512();
    for (Py_ssize_t c = 0; c < chunks; ++c) {
        const T* p = row + (c * (m - 32)) / (chunks - 1);
        for (int q = 0; q < 4; ++q) {
            __mmask8 good;
            const __m512i u = re_ukeys_avx512(p + 8 * q, &good);
            ulo = _mm512_mask_min_epu64(ulo, good, ulo, u);
            uhi = _mm512_mask_max_epu64(uhi, good, uhi, u);
        }
    }
    const uint64_t l = _mm512_reduce_min_epu64(ulo), h = _mm512_reduce_max_epu64(uhi);
    if (l <= h) {
        win->base = l;
        win->shift = re_shift_to_32(h - l);
    }
    const __m512i base = _mm512_set1_epi64((long long) win->base);
    const __m128i shift = _mm_cvtsi32_si128(win->shift);
    __m256i klo = _mm256_set1_epi32(-1), khi = _mm256_setzero_si256();
    int ok = 0;
    for (Py_ssize_t c = 0; c < chunks; ++c) {
        ra.steps(6);
        const T* p = row + (c * (m - 32)) / (chunks - 1);
        for (int q = 0; q < 4; ++q) {
            __mmask8 good;
            const __m512i u = re_ukeys_avx512(p + 8 * q, &good);
            const __m256i k = _mm512_maskz_cvtepi64_epi32(good, _mm512_srl_epi64(_mm512_sub_epi64(u, base), shift));
            _mm256_storeu_si256((__m256i*) (key + 32 * c + 8 * q), k);
            klo = _mm256_min_epu32(klo, k);
            khi = _mm256_max_epu32(khi, k);
            ok += __builtin_popcount((unsigned) good);
        }
    }
    uint32_t kl[8], kh[8];
    _mm256_storeu_si256((__m256i*) kl, klo);
    _mm256_storeu_si256((__m256i*) kh, khi);
    *lo = *std::min_element(kl, kl + 8);
    *hi = *std::max_element(kh, kh + 8);
    *n_ok = ok;
    return true;
}
RE_AVX512 static inline bool re_sample_keys_avx512(const double* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key,
                                                    Py_ssize_t* n_ok, uint32_t* lo, uint32_t* hi, re_readahead& ra,
                                                    re_key_window<double>* win) {
    return re_sample_keys_avx512_64(row, m, chunks, key, n_ok, lo, hi, ra, win);
}
RE_AVX512 static inline bool re_sample_keys_avx512(const int64_t* row, Py_ssize_t m, Py_ssize_t chunks,
                                                    uint32_t* key, Py_ssize_t* n_ok, uint32_t* lo, uint32_t* hi,
                                                    re_readahead& ra, re_key_window<int64_t>* win) {
    return re_sample_keys_avx512_64(row, m, chunks, key, n_ok, lo, hi, ra, win);
}

/* The same with AVX2 for float32 rows, 8 scores a vector; false for the other types (their
 * keys are the loops of re_sample_keys). */
template <typename T>
static inline bool re_sample_keys_avx2(const T*, Py_ssize_t, Py_ssize_t, uint32_t*, Py_ssize_t*, uint32_t*, uint32_t*,
                                       re_readahead&, re_key_window<T>*) {
    return false;
}
RE_AVX2_POPCNT static inline bool re_sample_keys_avx2(const float* row, Py_ssize_t m, Py_ssize_t chunks,
                                                      uint32_t* key, Py_ssize_t* n_ok, uint32_t* lo, uint32_t* hi,
                                                      re_readahead& ra, re_key_window<float>*) {
    const __m256i inf = _mm256_set1_epi32(0x7f800000), magnitude = _mm256_set1_epi32(0x7fffffff);
    const __m256i sign = _mm256_set1_epi32((int) 0x80000000u);
    __m256i vlo = _mm256_set1_epi32(-1), vhi = _mm256_setzero_si256();
    int ok = 0;
    for (Py_ssize_t c = 0; c < chunks; ++c) {
        ra.steps(6);
        const float* p = row + (c * (m - 32)) / (chunks - 1);
        for (int q = 0; q < 4; ++q) {
            const __m256i b = _mm256_castps_si256(_mm256_add_ps(_mm256_loadu_ps(p + 8 * q), _mm256_setzero_ps()));
            /* finite: the magnitude below infinity's (both non-negative: a signed comparison) */
            const __m256i good = _mm256_cmpgt_epi32(inf, _mm256_and_si256(b, magnitude));
            const __m256i u = _mm256_xor_si256(b, _mm256_or_si256(_mm256_srai_epi32(b, 31), sign));
            const __m256i kk = _mm256_and_si256(u, good);
            _mm256_storeu_si256((__m256i*) (key + 32 * c + 8 * q), kk);
            vlo = _mm256_min_epu32(vlo, kk);
            vhi = _mm256_max_epu32(vhi, kk);
            ok += __builtin_popcount((unsigned) _mm256_movemask_ps(_mm256_castsi256_ps(good)));
        }
    }
    uint32_t kl[8], kh[8];
    _mm256_storeu_si256((__m256i*) kl, vlo);
    _mm256_storeu_si256((__m256i*) kh, vhi);
    *lo = *std::min_element(kl, kl + 8);
    *hi = *std::max_element(kh, kh + 8);
    *n_ok = ok;
    return true;
}

/* The sampled threshold's bisection (re_sample_threshold) with AVX-512, on all the sampled
 * keys at once (16 compared a vector, without the histogram, whose increments of a few
 * popular counters form chains through memory): the largest key with at least r of the
 * keys at or above it. The keys become their offsets from the smallest, lo (in place), and
 * the offset is searched bit by bit from the highest bit of the keys' range, hi - lo, down
 * to 21 bits below it (the answer rounded down there: a few more scores pass). A range
 * rather than the highest bit where two keys differ: integer scores of either sign differ
 * in the sign bit whatever their range, and rounding 21 bits below it lost the bits of
 * small integers (k = 1000 of 20 000 int32 scores within +-4 000 let three times k pass
 * instead of a third more). The first 8 bits are searched on all the keys, the others on
 * only those left between the bounds (into sub, room for ns keys): for standard normal
 * scores about a seventh of them (with 20 000 float32 scores a row the whole row took
 * 0.97x the time at k = 1000, 0.92-0.96x at k = 10, on an Intel Xeon). ns is a multiple
 * of 32. */
RE_AVX512 static inline Py_ssize_t re_count_at_least_avx512(const uint32_t* key, Py_ssize_t n, uint32_t c) {
    const __m512i vc = _mm512_set1_epi32((int) c);
    int n0 = 0, n1 = 0; /* two sums: the comparisons of a step do not wait for each other */
    Py_ssize_t i = 0;
    for (; i + 32 <= n; i += 32) {
        n0 += __builtin_popcount((unsigned) _mm512_cmpge_epu32_mask(_mm512_loadu_si512((const void*) (key + i)), vc));
        n1 += __builtin_popcount(
            (unsigned) _mm512_cmpge_epu32_mask(_mm512_loadu_si512((const void*) (key + i + 16)), vc));
    }
    for (; i < n; i += 16) {
        const __mmask16 m = (__mmask16) (n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
        n0 += __builtin_popcount((unsigned) _mm512_mask_cmpge_epu32_mask(m, _mm512_maskz_loadu_epi32(m, key + i), vc));
    }
    return n0 + n1;
}

RE_AVX512 static uint32_t re_sample_kth_avx512(uint32_t* key, Py_ssize_t ns, Py_ssize_t r, uint32_t lo, uint32_t hi,
                                               uint32_t* sub) {
    enum { COARSE = 8 };
    const __m512i vlo = _mm512_set1_epi32((int) lo);
    for (Py_ssize_t i = 0; i < ns; i += 16)
        _mm512_storeu_si512((void*) (key + i), _mm512_sub_epi32(_mm512_loadu_si512((const void*) (key + i)), vlo));
    const int top = re_bit_width(hi - lo) - 1;
    const int low = top > 21 ? top - 21 : 0;
    const int fine = top - COARSE >= low ? top - COARSE : low - 1; /* the highest bit searched in sub */
    uint32_t answer = 0; /* every offset is >= 0, and r <= ns */
    int bit = top;
    for (; bit > fine; --bit) {
        const uint32_t c = answer | (1u << bit);
        answer = re_count_at_least_avx512(key, ns, c) >= r ? c : answer;
    }
    if (bit < low) return lo + answer;
    /* the r-th largest offset is in [answer, answer + 2^(fine + 1)): the offsets there into
     * sub, and those above counted, then the rest of the bits on sub alone */
    const __m128i width = _mm_cvtsi32_si128(fine + 1);
    const __m512i prefix = _mm512_set1_epi32((int) (answer >> (fine + 1)));
    Py_ssize_t above = 0, nsub = 0;
    for (Py_ssize_t i = 0; i < ns; i += 16) {
        const __m512i v = _mm512_loadu_si512((const void*) (key + i));
        const __m512i p = _mm512_srl_epi32(v, width);
        const __mmask16 in = _mm512_cmpeq_epi32_mask(p, prefix);
        above += __builtin_popcount((unsigned) _mm512_cmpgt_epu32_mask(p, prefix));
        const int n_in = __builtin_popcount((unsigned) in); /* a compress into memory is slow on a Zen 4 */
        _mm512_mask_storeu_epi32(sub + nsub, (__mmask16) ((1u << n_in) - 1), _mm512_maskz_compress_epi32(in, v));
        nsub += n_in;
    }
    const Py_ssize_t need = r - above;
    for (; bit >= low; --bit) {
        const uint32_t c = answer | (1u << bit);
        answer = re_count_at_least_avx512(sub, nsub, c) >= need ? c : answer;
    }
    return lo + answer;
}

/* The same with AVX2, 8 keys a vector: the offsets with their top bit flipped (into
 * flipped, ns keys) compare as signed integers, and an offset is >= c when it is > c - 1
 * (c >= 1); the counts add up per lane. */
RE_AVX2 static uint32_t re_sample_kth_avx2(const uint32_t* key, Py_ssize_t ns, Py_ssize_t r, uint32_t lo, uint32_t hi,
                                           uint32_t* flipped) {
    const __m256i flip_lo = _mm256_set1_epi32((int) (0x80000000u + lo)); /* (key - lo) ^ 2^31 = key - (lo + 2^31) */
    for (Py_ssize_t i = 0; i < ns; i += 8)
        _mm256_storeu_si256((__m256i*) (flipped + i),
                            _mm256_sub_epi32(_mm256_loadu_si256((const __m256i*) (key + i)), flip_lo));
    const int top = re_bit_width(hi - lo) - 1;
    const int low = top > 21 ? top - 21 : 0;
    uint32_t answer = 0;
    for (int bit = top; bit >= low; --bit) {
        const uint32_t c = answer | (1u << bit);
        const __m256i below = _mm256_set1_epi32((int) ((c - 1) ^ 0x80000000u));
        __m256i n0 = _mm256_setzero_si256(), n1 = _mm256_setzero_si256();
        for (Py_ssize_t i = 0; i < ns; i += 16) { /* a comparison is -1 where true */
            n0 = _mm256_sub_epi32(n0, _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i*) (flipped + i)), below));
            n1 = _mm256_sub_epi32(n1, _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i*) (flipped + i + 8)), below));
        }
        uint32_t lanes[8];
        _mm256_storeu_si256((__m256i*) lanes, _mm256_add_epi32(n0, n1));
        Py_ssize_t n = 0;
        for (int l = 0; l < 8; ++l) n += lanes[l];
        answer = n >= r ? c : answer;
    }
    return lo + answer;
}

#undef RE_D1
#undef RE_D2
#undef RE_D4
#undef RE_F4
#undef RE_F8
#else
#define RE_TOPK_AVX2 0
#endif

/* The threshold of a dense row can start from a sample of its scores:
 * RE_TOPK_SAMPLE_CHUNKS runs of RE_TOPK_SAMPLE_RUN scores spread over the row (a few cache
 * lines each). See re_sample_threshold. */
enum { RE_TOPK_SAMPLE_CHUNKS = 32, RE_TOPK_SAMPLE_RUN = 32, RE_TOPK_SAMPLE = 1024 };

/* The sample's runs for k, and the rank r of the threshold among its n_ok finite scores:
 * the k best of m hold about mu = n_ok k / m of them, and the r-th largest sampled score,
 * with r = mu + 2 sqrt(mu) + 2, is below the k-th best of the row in all but a few rows in
 * a hundred (then a second pass). */
static inline Py_ssize_t re_sample_chunks(Py_ssize_t k) {
    return k >= 256 ? RE_TOPK_SAMPLE_CHUNKS : RE_TOPK_SAMPLE_CHUNKS / 2;
}
static inline Py_ssize_t re_sample_rank(Py_ssize_t n_ok, Py_ssize_t k, Py_ssize_t m) {
    const double mu = (double) n_ok * (double) k / (double) m;
    return (Py_ssize_t) (mu + 2.0 * std::sqrt(mu) + 2.0);
}

/* Winners up to this many are insertion sorted, more are radix sorted (re_topk::sorted) */
enum { RE_TOPK_SHORT = 32 };

/* Room in the selection buffer beyond k: a compaction at most every RE_TOPK_SLACK candidates */
enum { RE_TOPK_SLACK = 64 };

/* The selection buffer's size, cap, for k of rows with at most `most` candidates, of which
 * dense rows of m scores are scanned whole (m = 0: no such rows): the k best so far and
 * room for k or RE_TOPK_SLACK more candidates, whichever is more. And where the dense scan
 * starts from a sampled threshold that many scores pass (k >= m / 256: the rows of the
 * compress scan), room for the scores expected above it, m r / ns (re_sample_rank), and
 * four standard deviations (about 1 / sqrt(r) of it each) more: there a compaction
 * (a selection among the buffer, and with the compress scan the ids to entries and back)
 * costs more than the longer sort of the winners it saves, and it is most often a single
 * one, which refines the threshold little. Measured (20 000 float32 scores a row, two
 * threads, in one process alternately): k = 100 with room for 650 candidates instead of
 * 200 took 0.76x the time (AVX-512; 0.83x with AVX2, 0.94x with SSE2), k = 200 0.77x,
 * k = 300 0.87x; more room for k = 10 (which the refined threshold of its compactions
 * keeps fast) took 1.14x, hence only these rows. */
static inline Py_ssize_t re_topk_cap(Py_ssize_t k, Py_ssize_t most, Py_ssize_t m) {
    if (k >= most) return most;
    Py_ssize_t cap = std::max(2 * k, k + (Py_ssize_t) RE_TOPK_SLACK);
    if (m >= 8 * RE_TOPK_SAMPLE && k < m && k * 256 >= m) {
        const Py_ssize_t ns = re_sample_chunks(k) * RE_TOPK_SAMPLE_RUN;
        const Py_ssize_t r = re_sample_rank(ns, k, m);
        if (r <= ns / 4) { /* the sample is used (re_sample_threshold); r >= 2 */
            const double expected = (double) m * (double) r / (double) ns;
            const double room = expected * (1.0 + 4.0 / std::sqrt((double) r)) + 2 * RE_TOPK_BLOCK;
            if (room > (double) cap) cap = room >= (double) m ? m : (Py_ssize_t) room;
        }
    }
    return std::min(cap, most);
}

/* Bytes of per-thread scratch, for any score and id type. re_topk_scratch_fixed: the
 * buffers of `cap` entries (2 cap entries of <= 16 bytes, 2 cap scores or keys of <= 8
 * bytes), the sample (2 keys of 4 bytes a sampled score) and the bucket sort's counters
 * (where re_topk_scratch_counts says), rounded up to a multiple of 64: where the exclusion
 * mask starts. re_topk_scratch_bytes adds, for dense rows of m scores,
 * the exclusion mask of the compress scan (re_compress_state), a bit per score in 16-bit
 * words, which must be zero when the space is allocated (the scan clears what it sets). */
static inline size_t re_topk_scratch_counts(Py_ssize_t cap) {
    return (size_t) cap * (2 * 16 + 2 * 8) + RE_TOPK_SAMPLE * 8;
}
static inline size_t re_topk_scratch_fixed(Py_ssize_t cap) {
    return (re_topk_scratch_counts(cap) + sizeof(uint32_t) * ((size_t) 1 << RE_BUCKET_BITS) + 64 + 63) & ~(size_t) 63;
}
static inline size_t re_topk_scratch_bytes(Py_ssize_t cap, Py_ssize_t m) {
    return re_topk_scratch_fixed(cap) + ((size_t) m + 15) / 16 * sizeof(uint16_t);
}

/* The selection state of one row. */
template <typename T, typename ID>
struct re_topk {
    typedef re_score<T> S;
    typedef typename S::U U;
    char* base;           /* the scratch space */
    re_entry<T, ID>* buf; /* candidates kept so far, in ascending id */
    re_entry<T, ID>* tmp; /* the final sort */
    T* vals;              /* selection; radix keys (2 cap) */
    T* sample;            /* RE_TOPK_SAMPLE scores (re_sample_threshold) */
    Py_ssize_t n, cap, k;
    const int64_t* x; /* exclusions still ahead, sorted */
    const int64_t* x_end;
    int64_t n_bad;
    T t;  /* once have_t, a candidate must score above t */
    T hi; /* and, once have_hi, at most hi (the second pass after a sampled threshold) */
    bool have_t, have_hi, compacted;
    re_readahead ra; /* the thread's next row (re_readahead): requested during the work */
    /* After an AVX-512 compress scan the candidates may still be ids in the scan's array
     * (ids_list, n of them; their scores in ids_row): made entries of buf by
     * pending_entries when anything but the packed sort needs them (materialize), or read
     * straight into the packed sort's words and keys by pending_words. */
    const void* ids_row;
    const int32_t* ids_list;
    void (*pending_entries)(re_topk&);
    void (*pending_words)(re_topk&, uint32_t*, uint64_t*, uint32_t*, uint32_t*);

    re_topk(void* scratch, Py_ssize_t cap_, Py_ssize_t k_, const int64_t* x_, const int64_t* x_end_)
        : n(0), cap(cap_), k(k_), x(x_), x_end(x_end_), n_bad(0), t(), hi(), have_t(false), have_hi(false),
          compacted(false), ids_row(NULL), ids_list(NULL), pending_entries(NULL), pending_words(NULL) {
        base = (char*) scratch; /* the layout of re_topk_scratch_bytes */
        buf = (re_entry<T, ID>*) base;
        tmp = buf + cap;
        vals = (T*) (base + (size_t) cap * 32);
        sample = (T*) (base + (size_t) cap * 48);
    }

    inline void materialize() {
        if (pending_entries != NULL) {
            pending_entries(*this);
            pending_entries = NULL;
            pending_words = NULL;
        }
    }

    struct greater { /* a functor, so that the selection inlines the comparison */
        inline bool operator()(const T& a, const T& b) const { return S::gt(a, b); }
    };

    inline bool excluded(int64_t id) {
        while (x < x_end && *x < id) ++x;
        return x < x_end && *x == id;
    }

    /* Keep the k best of buf[0:n] (n > k) in id order; t becomes the k-th best score. Not
     * inlined: called rarely, it would crowd the registers of the scan loops. */
    RE_NOINLINE void compact() {
        for (Py_ssize_t i = 0; i < n; ++i) vals[i] = buf[i].v;
        std::nth_element(vals, vals + (k - 1), vals + n, greater());
        const T kth = vals[k - 1];
        Py_ssize_t above = 0;
        for (Py_ssize_t i = 0; i < k - 1; ++i) above += S::gt(vals[i], kth);
        Py_ssize_t ties = k - above; /* entries equal to kth that stay: the first (lowest ids) */
        Py_ssize_t w = 0;
        for (Py_ssize_t i = 0; i < n; ++i) { /* branch-free: which entries stay is unpredictable */
            const T v = buf[i].v;
            const bool gt = S::gt(v, kth);
            const bool eq = !gt & !S::gt(kth, v);
            const bool keep = gt | (eq & (ties > 0));
            ties -= (Py_ssize_t) (eq & keep);
            buf[w] = buf[i];
            w += (Py_ssize_t) keep;
        }
        n = w;
        t = kth;
        have_t = true;
        compacted = true;
    }

    /* A candidate in ascending id order (before the threshold exists, or flagged by it). */
    inline void offer(T v, int64_t id) {
        if (x < x_end && excluded(id)) return;
        if (S::bad(v)) {
            n_bad += (int64_t) !have_hi; /* a second pass does not count again */
            return;
        }
        if ((have_t && !S::gt(v, t)) || (have_hi && S::gt(v, hi))) return;
        buf[n].v = v;
        buf[n].id = (ID) id;
        if (++n == cap && cap > k) compact();
    }

    /* Insertion sort of a[0:len] by descending score (stable: ties keep their order). */
    static void insertion_sort(re_entry<T, ID>* a, Py_ssize_t len) {
        for (Py_ssize_t i = 1; i < len; ++i) {
            if (!S::gt(a[i].v, a[i - 1].v)) continue;
            const re_entry<T, ID> e = a[i];
            Py_ssize_t j = i;
            do {
                a[j] = a[j - 1];
                --j;
            } while (j > 0 && S::gt(e.v, a[j - 1].v));
            a[j] = e;
        }
    }

    /* Stable LSD radix sort of a[0:len] by descending score, on the bytes of ~ukey (computed
     * once into key; key_tmp and other, len entries each, are the second buffers), with the
     * counts of every byte taken in one pass and a byte that is the same for all skipped (the
     * top bytes of scores above a threshold often are). Returns a or other: where the
     * result is. */
    static re_entry<T, ID>* radix_sort(re_entry<T, ID>* a, Py_ssize_t len, re_entry<T, ID>* other, U* key, U* key_tmp) {
        Py_ssize_t count[sizeof(U)][256];
        std::memset(count, 0, sizeof count);
        for (Py_ssize_t i = 0; i < len; ++i) {
            const U c = (U) ~S::ukey(a[i].v);
            key[i] = c;
            for (unsigned d = 0; d < sizeof(U); ++d) ++count[d][(c >> (8 * d)) & 0xff];
        }
        re_entry<T, ID>* src = a;
        re_entry<T, ID>* dst = other;
        for (unsigned d = 0; d < sizeof(U); ++d) {
            Py_ssize_t* cnt = count[d];
            bool one_bucket = false;
            Py_ssize_t pos = 0;
            for (int b = 0; b < 256; ++b) {
                const Py_ssize_t c = cnt[b];
                one_bucket |= c == len;
                cnt[b] = pos;
                pos += c;
            }
            if (one_bucket) continue;
            const unsigned shift = 8 * d;
            for (Py_ssize_t i = 0; i < len; ++i) {
                const Py_ssize_t to = cnt[(key[i] >> shift) & 0xff]++;
                key_tmp[to] = key[i];
                dst[to] = src[i];
            }
            std::swap(src, dst);
            std::swap(key, key_tmp);
        }
        return src;
    }

    /* Sort buf[0:n] by descending score, stably (ties in ascending id, the order of buf);
     * returns where the result is. Short: insertion sort. Long: the LSD radix sort.
     * (A counting pass into buckets of a few entries each, then an insertion pass, took 40%
     * fewer instructions at k = 1000 but more time: the insertion pass mispredicts a branch
     * for about every entry, where the radix sort has none.) */
    re_entry<T, ID>* sorted() {
        if (n <= RE_TOPK_SHORT) {
            insertion_sort(buf, n);
            return buf;
        }
        U* key = (U*) vals; /* vals holds 2 cap scores: room for two key arrays */
        return radix_sort(buf, n, tmp, key, key + cap);
    }

    /* The ids of the min(n, k) best of buf[0:n] into out, for ids of at most 32 bits
     * (re_topk::write): kbase is the smallest inverted key (0 for keys of up to 32 bits),
     * shift what the keys less kbase are cut by to fit 32 bits (re_shift_to_32). Each entry
     * becomes one 64-bit word: the key, inverted (descending score), less kbase and shifted,
     * above the id (with a shift, above the index in buf: out_words orders the runs of equal
     * cut keys); a stable LSD radix sort of the words on the key bits leaves ties in the
     * order of buf, ascending id. Only the bits where the
     * keys differ are sorted, in as few passes of at most 11 bits as they need (scores above
     * a threshold share their top bits: the 20 000 standard normal scores' top 1 445 differ
     * in 25 bits, three passes); the counts of every pass are taken in one read. */
    template <typename Q>
    Py_ssize_t write_packed(Q* out, U kbase, int shift) {
        enum { MAX_BITS = 11, MAX_PASSES = 3 };
        uint64_t* words = (uint64_t*) (base + (size_t) cap * 16); /* buf and tmp: 16 cap bytes */
        uint64_t* other = (uint64_t*) (base + (size_t) cap * 32); /* vals */
        uint32_t* key = (uint32_t*) (base + (size_t) cap * 40);
        /* the keys (inverted: ascending order is descending score) and the words */
        uint32_t lo = 0xffffffffu, hi = 0;
#if RE_TOPK_AVX2
        const bool avx2 = re_cpu_has_avx2(), avx512 = re_cpu_has_avx512();
        bool have_words = false;
        if (pending_words != NULL) { /* the words straight from the ids (AVX-512) */
            pending_words(*this, key, other, &lo, &hi);
            pending_entries = NULL;
            pending_words = NULL;
            have_words = true;
        }
        if (!have_words && !(avx512 && re_words_avx512(buf, n, key, other, &lo, &hi)))
#endif
            for (Py_ssize_t i = 0; i < n; ++i) {
                const uint32_t c = (uint32_t) ((U) ((U) ~S::ukey(buf[i].v) - kbase) >> shift);
                key[i] = c;
                other[i] = (uint64_t) c << 32 | (shift ? (uint32_t) i : (uint32_t) buf[i].id);
                lo = c < lo ? c : lo;
                hi = c > hi ? c : hi;
            }
        const Py_ssize_t len = n < k ? n : k;
#if RE_TOPK_AVX2
        /* the words are distinct: sorted by buckets (re_bucket_sort_*), or by quicksort when
         * the keys bunch together (AVX-512) */
        uint64_t* sorted_words = words;
        uint32_t* const counters = (uint32_t*) (base + re_topk_scratch_counts(cap));
        bool done = avx512 ? re_bucket_sort_avx512(other, key, n, len, lo, hi, words, counters, ra)
                           : avx2 && re_bucket_sort_avx2(other, key, n, len, lo, hi, words, counters, ra);
        if (!done && avx512) {
            re_sort_words_avx512(other, n, len, words, ra);
            sorted_words = other;
            done = true;
        }
        if (done) return out_words(sorted_words, len, shift, out);
#endif
        /* the radix sort (no AVX2, or keys bunched together): the keys from the words (the
         * bucket sort may have made key their buckets) */
        const int bits = re_bit_width(hi - lo);
        /* the fewest passes, or one more when a pass over n words costs less than the
         * counts of the wider digits (a few winners: 2 passes of 6 bits, not 1 of 11) */
        int passes = (bits + MAX_BITS - 1) / MAX_BITS;
        for (; passes && passes < MAX_PASSES; ++passes) {
            const Py_ssize_t wide = (Py_ssize_t) 1 << ((bits + passes - 1) / passes);
            const Py_ssize_t narrow = (Py_ssize_t) 1 << ((bits + passes) / (passes + 1));
            if (passes * (3 * n + wide) <= (passes + 1) * (3 * n + narrow)) break;
        }
        const int width = passes ? (bits + passes - 1) / passes : 0;
        const uint32_t digit = (1u << width) - 1;
        uint32_t count[MAX_PASSES][1 << MAX_BITS];
        for (int d = 0; d < MAX_PASSES; ++d) std::memset(count[d], 0, sizeof(uint32_t) << width);
        for (Py_ssize_t i = 0; i < n; ++i) {
            const uint32_t c = (uint32_t) (other[i] >> 32) - lo;
            words[i] = (uint64_t) c << 32 | (uint32_t) other[i];
            ++count[0][c & digit]; /* the counts of unused passes are never read */
            ++count[1][(c >> width) & digit];
            ++count[2][(c >> (2 * width)) & digit];
        }
        for (int d = 0; d < passes; ++d) {
            uint32_t* cnt = count[d];
            uint32_t pos = 0;
            for (uint32_t b = 0; b <= digit; ++b) {
                const uint32_t c = cnt[b];
                cnt[b] = pos;
                pos += c;
            }
            const unsigned shift = 32 + d * width;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 4
#endif
            for (Py_ssize_t i = 0; i < n; ++i) {
                if ((i & 3) == 0) ra.step();
                const uint64_t w = words[i];
                other[cnt[(w >> shift) & digit]++] = w;
            }
            std::swap(words, other);
        }
        return out_words(words, len, shift, out);
    }

    /* The ids of the sorted words w[0:len] (all n words in w, the others after them) into
     * out. With truncated keys (shift > 0) the words hold indices into buf, and each run of
     * words with equal truncated keys is put in the rule's order by the full keys (ties in
     * buf order: ascending id); the run at position len - 1 takes its words from beyond len
     * too. Runs are rare: the truncated keys keep the top 32 bits of the winners' range. */
    template <typename Q>
    Py_ssize_t out_words(uint64_t* w, Py_ssize_t len, int shift, Q* out) {
        if (!shift) {
            for (Py_ssize_t i = 0; i < len; ++i) out[i] = (Q) (uint32_t) w[i];
            return len;
        }
        const re_entry<T, ID>* const e = buf;
        struct by_key {
            const re_entry<T, ID>* e;
            inline bool operator()(uint64_t a, uint64_t b) const {
                const U ka = (U) ~S::ukey(e[(uint32_t) a].v), kb = (U) ~S::ukey(e[(uint32_t) b].v);
                return ka != kb ? ka < kb : (uint32_t) a < (uint32_t) b;
            }
        };
        const by_key less = {e};
        for (Py_ssize_t a = 0; a < len;) {
            const uint32_t c = (uint32_t) (w[a] >> 32);
            Py_ssize_t b = a + 1;
            while (b < len && (uint32_t) (w[b] >> 32) == c) ++b;
            if (b == len) {
                Py_ssize_t end = len;
                for (Py_ssize_t i = len; i < n; ++i)
                    if ((uint32_t) (w[i] >> 32) == c) std::swap(w[end++], w[i]);
                if (end - a > 1) std::partial_sort(w + a, w + len, w + end, less);
            } else if (b - a > 1) {
                std::sort(w + a, w + b, less);
            }
            a = b;
        }
        for (Py_ssize_t i = 0; i < len; ++i) out[i] = (Q) e[(uint32_t) w[i]].id;
        return len;
    }

    /* The <= k best, sorted, into out; returns how many. More than k left (at most
     * cap, about 2k): sorting as far as the first k is cheaper than a compaction first,
     * except before a short insertion sort. */
    template <typename Q>
    Py_ssize_t write(Q* out) {
        if (n > k && k <= RE_TOPK_SHORT) {
            materialize();
            compact();
        }
        if (n > RE_TOPK_SHORT && sizeof(ID) <= 4) {
            if (sizeof(U) <= 4) {
                if (pending_words == NULL) materialize(); /* no words straight from the compress scan */
                return write_packed(out, (U) 0, 0);
            }
            /* 64-bit keys: packed too, less the smallest; when the winners' keys span 2^32
             * or more, truncated to their top 32 bits, with indices into buf in the words
             * and the rare runs of equal truncated keys ordered after the sort (out_words).
             * 20 000 x 20 000 scores, 2 threads, against the radix sort of the entries:
             * int64 the whole call 0.87x the time at k = 100 and 0.72x at k = 1000 */
            materialize();
            U l = ~(U) 0, h = 0;
            for (Py_ssize_t i = 0; i < n; ++i) {
                const U c = (U) ~S::ukey(buf[i].v);
                l = c < l ? c : l;
                h = c > h ? c : h;
            }
            return write_packed(out, l, re_shift_to_32((uint64_t) (h - l)));
        }
        materialize();
        const re_entry<T, ID>* r = sorted();
        if (n > k) n = k;
        for (Py_ssize_t i = 0; i < n; ++i) out[i] = (Q) r[i].id;
        return n;
    }

    template <typename Q>
    void finish(Q* out, int64_t* out_len, int64_t* n_bad_out) {
        *out_len = write(out);
        *n_bad_out = n_bad;
    }
};

/* Offer the flagged scores of row[0:m] (every score until a threshold exists); MASK is the
 * block test (re_block_mask, or its AVX2 version).
 *
 * Once a threshold exists, the state lives in locals (a store into the buffer could alias
 * the members, which would then be reloaded) and for each block with flagged scores: the
 * exclusions of the block are cleared from its mask (one merge step per block, not per
 * candidate), then each flagged score is written to the buffer and counted in unless NaN
 * or infinite (or, in a second pass, above hi): no branch to mispredict; the buffer has
 * room, n < cap, at each write. A compaction in the middle of a block raises t, and the
 * rest of the block is kept anyway: an entry at or below t sorts after the k better ones
 * (ties by id: it comes later) and is dropped by the next compaction or the final sort. */
#define RE_SCAN_DENSE_BODY(MASK)                                                                 \
    Py_ssize_t j = 0;                                                                            \
    for (; j < m && !st.have_t; ++j) st.offer(row[j], j);                                       \
    if (j + RE_TOPK_BLOCK <= m) {                                                                \
        const int64_t* x = st.x;                                                                 \
        const int64_t* const x_end = st.x_end;                                                   \
        re_entry<T, ID>* const out = st.buf;                                                     \
        const Py_ssize_t cap = st.cap;                                                           \
        const bool can_compact = st.cap >= st.k + RE_TOPK_BLOCK, second = st.have_hi;           \
        const T hi = st.hi;                                                                      \
        T t = st.t;                                                                              \
        Py_ssize_t w = st.n;                                                                     \
        int64_t bad = 0;                                                                         \
        re_readahead ra = st.ra;                                                                 \
        const int ra_lines = (int) ((RE_TOPK_BLOCK * sizeof(T) + 63) / 64);                      \
        for (; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {                                     \
            ra.steps(ra_lines); /* the next row at the pace this one is read */                  \
            uint32_t mask = MASK(row + j, t);                                                    \
            if (!mask) continue;                                                                 \
            if (w > cap - RE_TOPK_BLOCK && can_compact) {                                        \
                st.n = w;                                                                        \
                st.compact();                                                                    \
                w = st.n;                                                                        \
                t = st.t;                                                                        \
                mask = MASK(row + j, t);                                                         \
            }                                                                                    \
            if (x < x_end && *x < j + RE_TOPK_BLOCK) {                                           \
                while (x < x_end && *x < j) ++x;                                                 \
                for (; x < x_end && *x < j + RE_TOPK_BLOCK; ++x) mask &= ~((uint32_t) 1 << (*x - j)); \
            }                                                                                    \
            while (mask) {                                                                       \
                const int b = re_ctz(mask);                                                      \
                mask &= mask - 1;                                                                \
                const T v = row[j + b];                                                          \
                out[w].v = v;                                                                    \
                out[w].id = (ID) (j + b);                                                        \
                const bool is_bad = re_score<T>::bad(v);                                         \
                bad += (int64_t) is_bad;                                                         \
                w += (Py_ssize_t) !(is_bad | (second && re_score<T>::gt(v, hi)));               \
            }                                                                                    \
        }                                                                                        \
        st.n = w;                                                                                \
        st.x = x;                                                                                \
        st.ra = ra;                                                                              \
        st.n_bad += second ? 0 : bad; /* a second pass does not count again */                   \
    }                                                                                            \
    for (; j < m; ++j)                                                                           \
        if (re_flag(row[j], st.t)) st.offer(row[j], j);

template <typename T, typename ID>
static inline void re_scan_dense_base(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    RE_SCAN_DENSE_BODY(re_block_mask)
}

/* re_scan<T, ID>::run: the dense scan, with AVX2 for float32/float64 where available */
template <typename T, typename ID>
struct re_scan {
    static inline void run(const T* row, Py_ssize_t m, re_topk<T, ID>& st) { re_scan_dense_base(row, m, st); }
};

#if RE_TOPK_AVX2
template <typename T, typename ID>
RE_AVX2 static void re_scan_dense_avx2(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    RE_SCAN_DENSE_BODY(re_block_mask_avx2)
}

/* For each 8-bit mask, its set bits' lane numbers first (then zeros): the permutation that
 * moves the flagged lanes of 8 to the front (an AVX2 "compress"). */
struct re_compress_table {
    uint8_t lanes[256][8];
    re_compress_table() {
        for (int mask = 0; mask < 256; ++mask) {
            int w = 0;
            for (int b = 0; b < 8; ++b)
                if (mask >> b & 1) lanes[mask][w++] = (uint8_t) b;
            for (; w < 8; ++w) lanes[mask][w] = 0;
        }
    }
};

static inline const re_compress_table& re_compress_lanes() {
    static const re_compress_table table; /* built once, on first use (thread-safe) */
    return table;
}

/* The scan of a dense float32 row (int32 ids) once a threshold exists, where many scores
 * pass it (a sampled threshold, k >= m / 256: a few in a thousand or more). The block loop
 * of re_scan_dense visits the flagged scores of each block one by one, and its branches
 * are mispredicted about once a flagged block. Here nothing depends on the scores but the
 * rare: each 8 (AVX2) or 16 (AVX-512) scores are compared with t, and the ids of the ones
 * above it are moved to the front of a vector (AVX2: a permutation from re_compress_table;
 * AVX-512: vpcompressd) and stored at the end of an array (the values region of the
 * scratch), which then grows by their number (stores past the end are overwritten later);
 * their scores are read back from the row (in the cache; AVX-512: a gather) into buffer
 * entries before a compaction, which happens between blocks when the buffer might fill,
 * and at the end (AVX-512: straight into the words of the sort, re_words_from_ids_avx512,
 * unless entries are needed). (Moving the scores too took a second compress per 16
 * scores, on the port that the comparisons and the compress saturate: 7% of k = 1000.) A
 * block's exclusions, a word of the row's exclusion mask, clear its mask first. NaN and
 * infinite scores (rare: with AVX2 the largest magnitude's bits at least infinity's, with
 * AVX-512 a sum of 0 x score that is NaN) are looked for once a block with AVX2, where only
 * such a block leaves them out and counts them; with AVX-512 once a row, and a row that
 * has one is scanned again, block by block like that.
 * With AVX-512 the ids of a block advance by an addition and its exclusions are loaded
 * straight into mask registers: a broadcast, or a move from a general register, would take
 * the port that the comparisons and the compress share (with the row in the cache,
 * 8-10% of k = 100 and k = 1000). */
template <typename T>
static inline void re_compress_to_entries(const T* row, const int32_t* ids, Py_ssize_t n, re_entry<T, int32_t>* out) {
    for (Py_ssize_t i = 0; i < n; ++i) {
        out[i].v = row[ids[i]];
        out[i].id = ids[i];
    }
}

/* The same with AVX-512: 16 scores gathered at a time, interleaved with their ids. */
RE_AVX512 static void re_compress_to_entries_avx512(const float* row, const int32_t* ids, Py_ssize_t n,
                                                    re_entry<float, int32_t>* out) {
    const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    const __m512i second = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i id = _mm512_loadu_si512((const void*) (ids + i));
        const __m512i v = _mm512_castps_si512(_mm512_i32gather_ps(id, row, 4));
        _mm512_storeu_si512((void*) (out + i), _mm512_permutex2var_epi32(v, first, id));
        _mm512_storeu_si512((void*) (out + i + 8), _mm512_permutex2var_epi32(v, second, id));
    }
    re_compress_to_entries(row, ids + i, n - i, out + i);
}

/* The words and keys of write_packed straight from the ids and the row (AVX-512): 16 scores
 * gathered a step (one 16-lane gather: half the time of the 8-lane steps before, 1.5
 * instead of 2.8 thousand cycles for the 1 330 winners of k = 1000), made keys by
 * re_inverted_keys_avx512, and written as two vectors of 8 words. The words start where
 * the ids do (the scan's array is the values region, and so is write_packed's `other`),
 * so the steps go from the last: a step's words overwrite only ids at positions at least
 * twice its own, which this step or the ones before it (later positions) have read. */
RE_AVX512 static void re_words_from_ids_avx512(const float* row, const int32_t* ids, Py_ssize_t n, uint32_t* key,
                                               uint64_t* words, uint32_t* lo, uint32_t* hi) {
    __m512i vlo = _mm512_set1_epi32(-1), vhi = _mm512_setzero_si512();
    for (Py_ssize_t i = (n - 1) & ~(Py_ssize_t) 15; i >= 0; i -= 16) {
        const __mmask16 m = (__mmask16) (n - i >= 16 ? 0xffff : (1u << (n - i)) - 1);
        const __m512i id = _mm512_maskz_loadu_epi32(m, ids + i);
        const __m512i c = re_inverted_keys_avx512(_mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, id, row, 4));
        const __m512i w0 = _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(_mm512_castsi512_si256(c)), 32),
                                           _mm512_cvtepu32_epi64(_mm512_castsi512_si256(id)));
        const __m512i w1 =
            _mm512_or_si512(_mm512_slli_epi64(_mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(c, 1)), 32),
                            _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64(id, 1)));
        _mm512_mask_storeu_epi64(words + i, (__mmask8) m, w0);
        _mm512_mask_storeu_epi64(words + i + 8, (__mmask8) (m >> 8), w1);
        _mm512_mask_storeu_epi32(key + i, m, c);
        vlo = _mm512_mask_min_epu32(vlo, m, vlo, c);
        vhi = _mm512_mask_max_epu32(vhi, m, vhi, c);
    }
    *lo = _mm512_reduce_min_epu32(vlo);
    *hi = _mm512_reduce_max_epu32(vhi);
}

/* The same with AVX2, 8 scores gathered a step, written as two vectors of 4 words (the
 * steps from the last, as above: a step's words overwrite only ids at positions at least
 * twice its own). 20 000 float32 scores a row, k = 1 000, with the rows in the cache: the
 * ids made entries and the entries made words one at a time took 1.15-1.2x the time of the
 * whole row (0.83x with the AVX2 sample keys, against 0.97-0.99x with those alone). */
RE_AVX2 static inline __m256i re_inverted_keys_avx2(__m256 f) {
    const __m256i b = _mm256_castps_si256(_mm256_add_ps(f, _mm256_setzero_ps()));
    return _mm256_xor_si256(b, _mm256_andnot_si256(_mm256_srai_epi32(b, 31), _mm256_set1_epi32(0x7fffffff)));
}
RE_AVX2 static inline void re_words8_avx2(__m256i id, __m256i c, uint64_t* words) {
    const __m256i w0 = _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm256_castsi256_si128(c)), 32),
                                       _mm256_cvtepu32_epi64(_mm256_castsi256_si128(id)));
    const __m256i w1 = _mm256_or_si256(_mm256_slli_epi64(_mm256_cvtepu32_epi64(_mm256_extracti128_si256(c, 1)), 32),
                                       _mm256_cvtepu32_epi64(_mm256_extracti128_si256(id, 1)));
    _mm256_storeu_si256((__m256i*) words, w0);
    _mm256_storeu_si256((__m256i*) (words + 4), w1);
}
RE_AVX2 static void re_words_from_ids_avx2(const float* row, const int32_t* ids, Py_ssize_t n, uint32_t* key,
                                           uint64_t* words, uint32_t* lo, uint32_t* hi) {
    __m256i vlo = _mm256_set1_epi32(-1), vhi = _mm256_setzero_si256();
    Py_ssize_t i = n & ~(Py_ssize_t) 7;
    if (i < n) { /* the last, partial step: its lanes past n are left out of the range (the
                  * words and keys past n are never read) */
        const __m256i in = _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (n - i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        const __m256i id = _mm256_maskload_epi32(ids + i, in);
        const __m256i c = re_inverted_keys_avx2(
            _mm256_mask_i32gather_ps(_mm256_setzero_ps(), row, id, _mm256_castsi256_ps(in), 4));
        re_words8_avx2(id, c, words + i);
        _mm256_storeu_si256((__m256i*) (key + i), c);
        vlo = _mm256_blendv_epi8(vlo, c, in);
        vhi = _mm256_and_si256(c, in);
    }
    for (i -= 8; i >= 0; i -= 8) {
        const __m256i id = _mm256_loadu_si256((const __m256i*) (ids + i));
        const __m256i c = re_inverted_keys_avx2(_mm256_i32gather_ps(row, id, 4));
        re_words8_avx2(id, c, words + i);
        _mm256_storeu_si256((__m256i*) (key + i), c);
        vlo = _mm256_min_epu32(vlo, c);
        vhi = _mm256_max_epu32(vhi, c);
    }
    uint32_t l[8], h[8];
    _mm256_storeu_si256((__m256i*) l, vlo);
    _mm256_storeu_si256((__m256i*) h, vhi);
    *lo = *std::min_element(l, l + 8);
    *hi = *std::max_element(h, h + 8);
}

/* The state of a compress scan between its blocks: the ids of the scores above the
 * threshold so far (an array of cap + 16, in the values region of the scratch) and their
 * number w, the row's exclusion mask, the NaN/infinite count and the read-ahead; made
 * with no candidates (the first pass of a row), and put into the buffer's entries (the
 * scores read again from the row, in the cache) before a compaction and by finish. */
template <typename T>
struct re_compress_state {
    re_topk<T, int32_t>& st;
    const T* const row;
    int32_t* const ids;
    uint16_t* const xmask; /* the exclusions, a bit per score, 16 a word (read as __mmask16 too) */
    Py_ssize_t w;
    int64_t bad;
    re_readahead ra;
    const int lines; /* of the next row a block: as many as the block's, or half when the sort is long */
    const bool avx512; /* else AVX2 */

    re_compress_state(re_topk<T, int32_t>& st_, const T* row_, Py_ssize_t m, bool avx512_)
        : st(st_), row(row_), ids((int32_t*) (st_.base + (size_t) st_.cap * 32)),
          xmask((uint16_t*) (st_.base + re_topk_scratch_fixed(st_.cap))), w(0), bad(0), ra(st_.ra),
          lines((int) (RE_TOPK_BLOCK * sizeof(T) / 64) / (st_.k * 32 < m ? 1 : 2)),
          avx512(avx512_) { /* no candidates yet (re_scan_compress) */
        for (const int64_t* e = st.x; e < st.x_end; ++e)
            if (*e < m) xmask[*e / 16] = (uint16_t) (xmask[*e / 16] | 1u << (*e % 16));
    }

    inline void from_entries() {
        for (Py_ssize_t i = 0; i < w; ++i) ids[i] = st.buf[i].id;
    }

    inline void to_entries() {
        entries(row, ids, w, st.buf, avx512);
        st.n = w;
    }

    /* the ids' entries (float32 with AVX-512: gathered, 16 at a time) */
    static inline void entries(const float* r, const int32_t* i, Py_ssize_t n, re_entry<float, int32_t>* out,
                               bool gather) {
        if (gather)
            re_compress_to_entries_avx512(r, i, n, out);
        else
            re_compress_to_entries(r, i, n, out);
    }
    template <typename U>
    static inline void entries(const U* r, const int32_t* i, Py_ssize_t n, re_entry<U, int32_t>* out, bool) {
        re_compress_to_entries(r, i, n, out);
    }

    /* The start of the block row[j:j + 32]: lines of the next row requested (at the pace
     * this row is read, or half of it when the sort will be long: the rest during the
     * sort), a compaction if the block could fill the buffer (returns true: the threshold
     * changed), and the block's exclusions as a mask. */
    inline bool block(Py_ssize_t j, uint32_t& excluded) {
        excluded = (uint32_t) xmask[j / 16] | (uint32_t) xmask[j / 16 + 1] << 16;
        return block(j);
    }
    inline bool block(Py_ssize_t) {
        ra.steps(lines);
        const bool new_t = w > st.cap - RE_TOPK_BLOCK;
        if (new_t) {
            to_entries();
            st.compact();
            w = st.n;
            from_entries();
        }
        return new_t;
    }

    /* A compress scan of the row (AVX2 or AVX-512): the first pass, B::blocks<false> (NaN
     * and infinite scores looked for once), and when it finds one, the exact pass from the
     * same start (no candidates, the sampled threshold), then finish. Inlined into the
     * caller, whose target the passes need for being inlined in turn: the state then lives
     * in registers (with the passes called through pointers, the count of ids became a
     * chain through memory: 1.19x the time of k = 1 000 with AVX2). */
    template <typename B>
    static RE_ALWAYS_INLINE void scan(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st, bool avx512) {
        re_compress_state cs(st, row, m, avx512);
        Py_ssize_t j = 0;
        const T t0 = st.t;
        if (!B::template blocks<false>(row, m, st, cs, j)) {
            cs.w = 0;
            st.n = 0;
            st.t = t0;
            st.compacted = false;
            B::template blocks<true>(row, m, st, cs, j);
        }
        cs.finish(m, j);
    }

    /* The end: the ids into buffer entries, the state back into st, and the scores after
     * the last whole block, one by one. */
    void finish(Py_ssize_t m, Py_ssize_t j) {
        for (const int64_t* e = st.x; e < st.x_end; ++e)
            if (*e < m) xmask[*e / 16] = 0;
        st.n_bad += bad;
        st.ra = ra;
        if (j == m) { /* no scores after the last block: the ids wait for the sort */
            st.n = w;
            st.ids_row = row;
            st.ids_list = ids;
            st.pending_entries = avx512 ? entries_from_ids<true> : entries_from_ids<false>;
            pend_words(st, avx512);
            return;
        }
        to_entries();
        for (; j < m; ++j)
            if (re_flag(row[j], st.t)) st.offer(row[j], j);
    }

    template <bool GATHER>
    static void entries_from_ids(re_topk<T, int32_t>& t) {
        entries((const T*) t.ids_row, t.ids_list, t.n, t.buf, GATHER);
    }

    /* float32: the packed sort's words straight from the ids; the other types' are made
     * from entries (re_topk::write) */
    static void words_from_ids(re_topk<float, int32_t>& t, uint32_t* key, uint64_t* words, uint32_t* lo,
                               uint32_t* hi) {
        re_words_from_ids_avx512((const float*) t.ids_row, t.ids_list, t.n, key, words, lo, hi);
    }
    static void words_from_ids_avx2(re_topk<float, int32_t>& t, uint32_t* key, uint64_t* words, uint32_t* lo,
                                    uint32_t* hi) {
        re_words_from_ids_avx2((const float*) t.ids_row, t.ids_list, t.n, key, words, lo, hi);
    }
    static inline void pend_words(re_topk<float, int32_t>& t, bool avx512) {
        t.pending_words = avx512 ? words_from_ids : words_from_ids_avx2;
    }
    template <typename U>
    static inline void pend_words(re_topk<U, int32_t>&, bool) {}
};

/* The block test of the AVX2 compress scan for each score type: the scores of a block of
 * RE_TOPK_BLOCK above t as bits, and those that are NaN or infinite (floats) as `bad`
 * (left as 0 when there are none, found for float32 by one test a block). */
template <typename T>
struct re_v256;

template <>
struct re_v256<float> {
    typedef __m256 V;
    RE_AVX2_POPCNT static inline V set1(float t) { return _mm256_set1_ps(t); }
    /* the first pass: the largest magnitude's bits gathered in most, tested once a row */
    RE_AVX2_POPCNT static inline uint32_t block_fast(const float* p, V vt, __m256i& most) {
        const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
        uint32_t keep = 0;
        for (int q = 0; q < 4; ++q) {
            const __m256 v = _mm256_loadu_ps(p + 8 * q);
            keep |= (uint32_t) _mm256_movemask_ps(_mm256_cmp_ps(v, vt, _CMP_GT_OQ)) << (8 * q);
            most = _mm256_max_epi32(most, _mm256_castps_si256(_mm256_and_ps(v, abs_mask)));
        }
        return keep;
    }
    RE_AVX2_POPCNT static inline bool any_bad(__m256i most) {
        return _mm256_movemask_epi8(_mm256_cmpgt_epi32(most, _mm256_set1_epi32(0x7f800000 - 1))) != 0;
    }
    /* the exact pass: the block's NaN and infinite scores as bits too, found by one test */
    RE_AVX2_POPCNT static inline uint32_t block(const float* p, V vt, uint32_t* bad) {
        __m256i mag = _mm256_setzero_si256();
        const uint32_t keep = block_fast(p, vt, mag); /* t is finite */
        if (any_bad(mag)) {
            const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
            const __m256 inf = _mm256_set1_ps(std::numeric_limits<float>::infinity());
            for (int q = 0; q < 4; ++q)
                *bad |= (uint32_t) _mm256_movemask_ps(
                            _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(p + 8 * q), abs_mask), inf, _CMP_NLT_UQ))
                        << (8 * q);
        }
        return keep;
    }
};

template <>
struct re_v256<double> {
    typedef __m256d V;
    RE_AVX2_POPCNT static inline V set1(double t) { return _mm256_set1_pd(t); }
    /* the first pass: the lanes that are NaN or infinite gathered in most */
    RE_AVX2_POPCNT static inline uint32_t block_fast(const double* p, V vt, __m256i& most) {
        const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
        const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
        uint32_t keep = 0;
        for (int q = 0; q < 8; ++q) {
            const __m256d v = _mm256_loadu_pd(p + 4 * q);
            keep |= (uint32_t) _mm256_movemask_pd(_mm256_cmp_pd(v, vt, _CMP_GT_OQ)) << (4 * q);
            most = _mm256_or_si256(most, _mm256_castpd_si256(_mm256_cmp_pd(_mm256_and_pd(v, abs_mask), inf, _CMP_NLT_UQ)));
        }
        return keep;
    }
    RE_AVX2_POPCNT static inline bool any_bad(__m256i most) { return !_mm256_testz_si256(most, most); }
    /* the exact pass: the block's NaN and infinite scores as bits too */
    RE_AVX2_POPCNT static inline uint32_t block(const double* p, V vt, uint32_t* bad) {
        __m256i lanes = _mm256_setzero_si256();
        const uint32_t keep = block_fast(p, vt, lanes);
        if (any_bad(lanes)) {
            const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffll));
            const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
            for (int q = 0; q < 8; ++q)
                *bad |= (uint32_t) _mm256_movemask_pd(
                            _mm256_cmp_pd(_mm256_and_pd(_mm256_loadu_pd(p + 4 * q), abs_mask), inf, _CMP_NLT_UQ))
                        << (4 * q);
        }
        return keep;
    }
};

template <>
struct re_v256<int32_t> {
    typedef __m256i V;
    RE_AVX2_POPCNT static inline V set1(int32_t t) { return _mm256_set1_epi32(t); }
    /* integers are all finite */
    RE_AVX2_POPCNT static inline uint32_t block_fast(const int32_t* p, V vt, __m256i&) {
        uint32_t none = 0;
        return block(p, vt, &none);
    }
    RE_AVX2_POPCNT static inline bool any_bad(__m256i) { return false; }
    RE_AVX2_POPCNT static inline uint32_t block(const int32_t* p, V vt, uint32_t*) {
        uint32_t keep = 0;
        for (int q = 0; q < 4; ++q)
            keep |= (uint32_t) _mm256_movemask_ps(_mm256_castsi256_ps(
                        _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i*) (p + 8 * q)), vt)))
                    << (8 * q);
        return keep;
    }
};

template <>
struct re_v256<int64_t> {
    typedef __m256i V;
    RE_AVX2_POPCNT static inline V set1(int64_t t) { return _mm256_set1_epi64x((long long) t); }
    /* integers are all finite */
    RE_AVX2_POPCNT static inline uint32_t block_fast(const int64_t* p, V vt, __m256i&) {
        uint32_t none = 0;
        return block(p, vt, &none);
    }
    RE_AVX2_POPCNT static inline bool any_bad(__m256i) { return false; }
    RE_AVX2_POPCNT static inline uint32_t block(const int64_t* p, V vt, uint32_t*) {
        uint32_t keep = 0;
        for (int q = 0; q < 8; ++q)
            keep |= (uint32_t) _mm256_movemask_pd(_mm256_castsi256_pd(
                        _mm256_cmpgt_epi64(_mm256_loadu_si256((const __m256i*) (p + 4 * q)), vt)))
                    << (4 * q);
        return keep;
    }
};

/* The compress scan with AVX2: the block's bits of the scores above t, less the excluded
 * ones, and the ids of each 8 moved together by a permutation from re_compress_table (of
 * the block's ids, advanced 8 at a time by an addition). As with AVX-512, a first pass
 * looks for NaN and infinite scores once a row (EXACT false: their magnitudes gathered,
 * tested at the end; returns false when there was one), and only a row that has one is
 * scanned again, EXACT: each block's NaN and infinite scores left out and counted (all
 * its scores tested: the excluded ones' magnitudes too, which only costs an exact pass).
 * 20 000 float32 scores a row, k = 1 000, the rows in the cache, against the test a block
 * (in one process, taking turns): 0.9x the time of the whole row. */
template <bool EXACT, typename T>
RE_AVX2_POPCNT static bool re_scan_compress_avx2_blocks(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st,
                                                        re_compress_state<T>& cs, Py_ssize_t& j) {
    typedef re_v256<T> C;
    const re_compress_table& table = re_compress_lanes();
    const __m256i eight = _mm256_set1_epi32(8);
    typename C::V vt = C::set1(st.t);
    __m256i most = _mm256_setzero_si256();
    __m256i id8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); /* the ids of the next 8 scores */
    for (j = 0; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
        uint32_t excluded;
        if (cs.block(j, excluded)) vt = C::set1(st.t);
        uint32_t keep;
        if (EXACT) {
            uint32_t bad = 0;
            keep = C::block(row + j, vt, &bad);
            if (bad) { /* NaN or infinite scores */
                keep &= ~bad;
                cs.bad += __builtin_popcount(bad & ~excluded);
            }
        } else {
            keep = C::block_fast(row + j, vt, most);
        }
        keep &= ~excluded;
        for (int q = 0; q < 4; ++q) {
            const uint32_t mask = (keep >> (8 * q)) & 0xff;
            const __m256i perm = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*) table.lanes[mask]));
            _mm256_storeu_si256((__m256i*) (cs.ids + cs.w), _mm256_permutevar8x32_epi32(id8, perm));
            cs.w += __builtin_popcount(mask);
            id8 = _mm256_add_epi32(id8, eight);
        }
    }
    return EXACT || !C::any_bad(most);
}

template <typename T>
struct re_compress_avx2 {
    template <bool EXACT>
    RE_AVX2_POPCNT static inline bool blocks(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st,
                                             re_compress_state<T>& cs, Py_ssize_t& j) {
        return re_scan_compress_avx2_blocks<EXACT>(row, m, st, cs, j);
    }
};
template <typename T>
RE_AVX2_POPCNT static void re_scan_compress_avx2(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    re_compress_state<T>::template scan<re_compress_avx2<T> >(row, m, st, false);
}

/* The vectors of the AVX-512 compress scan for each score type: a block of RE_TOPK_BLOCK
 * scores as VECS vectors of LANES; its exclusions, bits of the row's mask, as a mask per
 * vector; a vector's scores above t; and whether any score is NaN or infinite (integers:
 * none), watched as a sum of 0 x score, which finite scores leave 0 and the others make
 * NaN: one multiply-add a vector, where the largest magnitude (an AND and a max) took two
 * operations on the ports that the comparisons and the compress use (20 000 float32
 * scores a row in the cache, k = 100: 0.91-0.92x the time of the whole row, k = 1000
 * 0.95-0.97x). */
template <typename T>
struct re_v512;

struct re_v512_16 { /* 16 scores a vector (float32, int32) */
    enum { LANES = 16 };
    /* loaded straight into mask registers (GCC loads _load_mask16 into a general register
     * first, and the move from there takes port 5) */
    RE_AVX512 static inline void candidates(const uint16_t* x, __mmask16* c) {
        __mmask16* const x2 = (__mmask16*) x;
#if defined(__clang__)
        const __mmask16 ex0 = _load_mask16(x2), ex1 = _load_mask16(x2 + 1);
#else
        __mmask16 ex0, ex1;
        __asm__("kmovw %1, %0" : "=k"(ex0) : "m"(x2[0]));
        __asm__("kmovw %1, %0" : "=k"(ex1) : "m"(x2[1]));
#endif
        c[0] = _knot_mask16(ex0);
        c[1] = _knot_mask16(ex1);
    }
};

struct re_v512_8 { /* 8 scores a vector (float64, int64): a byte of the mask each */
    enum { LANES = 8 };
    RE_AVX512 static inline void candidates(const uint16_t* x, __mmask16* c) {
        const uint32_t ex = ~((uint32_t) x[0] | (uint32_t) x[1] << 16);
        for (int q = 0; q < 4; ++q) c[q] = (__mmask16) ((ex >> (8 * q)) & 0xff);
    }
};

template <typename V>
struct re_v512_int { /* integer scores are all finite */
    RE_AVX512 static inline __mmask16 finite(__mmask16 c, V) { return c; }
    RE_AVX512 static inline __mmask16 not_finite(__mmask16, V) { return 0; }
    RE_AVX512 static inline __m512i watch(__m512i sum, __mmask16, V) { return sum; }
    RE_AVX512 static inline bool any_bad(__m512i) { return false; }
};

template <>
struct re_v512<float> : re_v512_16 {
    typedef __m512 V;
    RE_AVX512 static inline V load(const float* p) { return _mm512_loadu_ps(p); }
    RE_AVX512 static inline V set1(float t) { return _mm512_set1_ps(t); }
    RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {
        return _mm512_mask_cmp_ps_mask(c, v, t, _CMP_GT_OQ);
    }
    RE_AVX512 static inline __mmask16 finite(__mmask16 c, V v) {
        return _mm512_mask_cmp_ps_mask(c, v, _mm512_set1_ps(std::numeric_limits<float>::infinity()), _CMP_LT_OQ);
    }
    RE_AVX512 static inline __mmask16 not_finite(__mmask16 c, V v) {
        return _mm512_mask_cmp_ps_mask(c, _mm512_abs_ps(v), _mm512_set1_ps(std::numeric_limits<float>::infinity()),
                                       _CMP_NLT_UQ);
    }
    RE_AVX512 static inline __m512i watch(__m512i sum, __mmask16 c, V v) {
        return _mm512_castps_si512(_mm512_mask3_fmadd_ps(v, _mm512_setzero_ps(), _mm512_castsi512_ps(sum), c));
    }
    RE_AVX512 static inline bool any_bad(__m512i sum) {
        return _mm512_cmp_ps_mask(_mm512_castsi512_ps(sum), _mm512_castsi512_ps(sum), _CMP_UNORD_Q) != 0;
    }
};

template <>
struct re_v512<double> : re_v512_8 {
    typedef __m512d V;
    RE_AVX512 static inline V load(const double* p) { return _mm512_loadu_pd(p); }
    RE_AVX512 static inline V set1(double t) { return _mm512_set1_pd(t); }
    RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {
        return _mm512_mask_cmp_pd_mask((__mmask8) c, v, t, _CMP_GT_OQ);
    }
    RE_AVX512 static inline __mmask16 finite(__mmask16 c, V v) {
        return _mm512_mask_cmp_pd_mask((__mmask8) c, v, _mm512_set1_pd(std::numeric_limits<double>::infinity()),
                                       _CMP_LT_OQ);
    }
    RE_AVX512 static inline __mmask16 not_finite(__mmask16 c, V v) {
        return _mm512_mask_cmp_pd_mask((__mmask8) c, _mm512_abs_pd(v),
                                       _mm512_set1_pd(std::numeric_limits<double>::infinity()), _CMP_NLT_UQ);
    }
    RE_AVX512 static inline __m512i watch(__m512i sum, __mmask16 c, V v) {
        return _mm512_castpd_si512(
            _mm512_mask3_fmadd_pd(v, _mm512_setzero_pd(), _mm512_castsi512_pd(sum), (__mmask8) c));
    }
    RE_AVX512 static inline bool any_bad(__m512i sum) {
        return _mm512_cmp_pd_mask(_mm512_castsi512_pd(sum), _mm512_castsi512_pd(sum), _CMP_UNORD_Q) != 0;
    }
};

template <>
struct re_v512<int32_t> : re_v512_16, re_v512_int<__m512i> {
    typedef __m512i V;
    RE_AVX512 static inline V load(const int32_t* p) { return _mm512_loadu_si512((const void*) p); }
    RE_AVX512 static inline V set1(int32_t t) { return _mm512_set1_epi32(t); }
    RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) { return _mm512_mask_cmpgt_epi32_mask(c, v, t); }
};

template <>
struct re_v512<int64_t> : re_v512_8, re_v512_int<__m512i> {
    typedef __m512i V;
    RE_AVX512 static inline V load(const int64_t* p) { return _mm512_loadu_si512((const void*) p); }
    RE_AVX512 static inline V set1(int64_t t) { return _mm512_set1_epi64((long long) t); }
    RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {
        return _mm512_mask_cmpgt_epi64_mask((__mmask8) c, v, t);
    }
};

/* The blocks of the AVX-512 compress scan. EXACT: NaN and infinite scores are looked for in
 * each block (and left out and counted where found); otherwise the candidates' scores are
 * only watched (re_v512::watch), and the pass returns false, its candidates to be dropped,
 * when a score was NaN or infinite. */
template <bool EXACT, typename T>
RE_AVX512 static bool re_scan_compress_avx512_blocks(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st,
                                                     re_compress_state<T>& cs, Py_ssize_t& j) {
    typedef re_v512<T> C;
    enum { VECS = RE_TOPK_BLOCK / C::LANES };
    const __m512i step = _mm512_set1_epi32(RE_TOPK_BLOCK);
    typename C::V vt = C::set1(st.t);
    /* the ids of the block's vectors (the first LANES lanes), advanced a block at a time (a
     * broadcast of j would take the port that the comparisons and the compress share) */
    __m512i ids[VECS];
    for (int q = 0; q < VECS; ++q)
        ids[q] = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                  _mm512_set1_epi32(q * C::LANES));
    __m512i watched = _mm512_setzero_si512();
    for (j = 0; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
        if (cs.block(j)) vt = C::set1(st.t);
        typename C::V v[VECS];
        for (int q = 0; q < VECS; ++q) v[q] = C::load(row + j + q * C::LANES);
        __mmask16 candidate[VECS];
        C::candidates(cs.xmask + j / 16, candidate);
        bool block_bad = false;
        if (EXACT) {
            __m512i sum = _mm512_setzero_si512();
            for (int q = 0; q < VECS; ++q) sum = C::watch(sum, (__mmask16) -1, v[q]);
            block_bad = C::any_bad(sum);
        } else { /* the candidates' only: an excluded item's NaN or -inf needs no exact pass */
            for (int q = 0; q < VECS; ++q) watched = C::watch(watched, candidate[q], v[q]);
        }
        for (int q = 0; q < VECS; ++q) {
            __mmask16 keep = C::above(candidate[q], v[q], vt); /* t is finite */
            if (EXACT && block_bad) {
                keep = C::finite(keep, v[q]);
                cs.bad += __builtin_popcount((unsigned) C::not_finite(candidate[q], v[q]));
            }
            _mm512_storeu_si512((void*) (cs.ids + cs.w), _mm512_maskz_compress_epi32(keep, ids[q]));
            cs.w += __builtin_popcount((unsigned) keep);
            ids[q] = _mm512_add_epi32(ids[q], step);
        }
    }
    return EXACT || !C::any_bad(watched);
}

/* The AVX-512 compress scan (re_compress_state::scan): a first pass that tests the
 * candidates' watched sum only once, at its end (a test and a branch a block less), and in
 * the rare row where a candidate is NaN or infinite a second, exact pass from the same
 * start: no candidates, the sampled threshold (re_scan_compress runs this scan only as the
 * first pass over a row). The AVX2 scan above is run the same way. */
template <typename T>
struct re_compress_avx512 {
    template <bool EXACT>
    RE_AVX512 static inline bool blocks(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st,
                                        re_compress_state<T>& cs, Py_ssize_t& j) {
        return re_scan_compress_avx512_blocks<EXACT>(row, m, st, cs, j);
    }
};
template <typename T>
RE_AVX512 static void re_scan_compress_avx512(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    re_compress_state<T>::template scan<re_compress_avx512<T> >(row, m, st, true);
}

/* The compress scan where it applies: float32, float64, int32 or int64 scores (AVX-512, or
 * AVX2 with POPCNT), int32 ids, a first pass from a threshold with many scores above it,
 * and a buffer with room for a block past its compaction point. */
template <typename T, typename ID>
static inline bool re_scan_compress(const T*, Py_ssize_t, re_topk<T, ID>&) {
    return false;
}
/* float64, int32 and int64 the same way; with AVX2 only, 64-bit scores from k >= m / 128
 * (4 scores a vector: below that the block scan, which skips the blocks without flagged
 * scores, was as fast). 20 000 x 20 000 scores (standard normal, integers x 1000) with 1M
 * exclusions, 2 threads, against the block scan, in one process taking turns: AVX-512,
 * k = 100 / 1000 took 0.95x / 0.87x the time (float64), 0.99x / 0.86x (int64), 0.70x /
 * 0.71x (int32); AVX2, k = 100 / 300 / 1000 0.83x / 0.72x / 0.74x (int32), k = 300 /
 * 1000 0.96x / 0.88x (float64) and 0.95x / 0.84x (int64), where at k = 100 the compress
 * scan of 64-bit scores took 0.99-1.05x. */
template <typename T>
static inline bool re_scan_compress_any(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    if (!re_cpu_has_avx2_popcnt() || !st.have_t || st.have_hi || st.n != 0 || st.compacted || st.k * 256 < m ||
        st.cap < st.k + 2 * RE_TOPK_BLOCK)
        return false;
    if (re_cpu_has_avx512()) {
        re_scan_compress_avx512(row, m, st);
        return true;
    }
    if (sizeof(T) == 8 && st.k * 128 < m) return false;
    re_scan_compress_avx2(row, m, st);
    return true;
}
static inline bool re_scan_compress(const float* row, Py_ssize_t m, re_topk<float, int32_t>& st) {
    return re_scan_compress_any(row, m, st);
}
static inline bool re_scan_compress(const double* row, Py_ssize_t m, re_topk<double, int32_t>& st) {
    return re_scan_compress_any(row, m, st);
}
static inline bool re_scan_compress(const int32_t* row, Py_ssize_t m, re_topk<int32_t, int32_t>& st) {
    return re_scan_compress_any(row, m, st);
}
static inline bool re_scan_compress(const int64_t* row, Py_ssize_t m, re_topk<int64_t, int32_t>& st) {
    return re_scan_compress_any(row, m, st);
}

/* float32 and float64: the block test with AVX2 where the CPU has it */
template <typename T, typename ID>
struct re_scan_float {
    static inline void run(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
        if (re_cpu_has_avx2())
            re_scan_dense_avx2(row, m, st);
        else
            re_scan_dense_base(row, m, st);
    }
};
template <typename ID>
struct re_scan<float, ID> : re_scan_float<float, ID> {};
template <typename ID>
struct re_scan<double, ID> : re_scan_float<double, ID> {};

/* int64 with AVX2: the block test 4 scores at a time (vpcmpgtq), where the loop the
 * compiler vectorises for SSE2 has no 64-bit comparison. 20 000 x 20 000 int64 scores
 * with 1M exclusions, 2 threads: k = 10 and 100 in about 0.73x the time. */
RE_AVX2 static inline uint32_t re_block_mask_avx2_i64(const int64_t* p, int64_t t) {
    const __m256i vt = _mm256_set1_epi64x((long long) t);
    __m256i f[RE_TOPK_BLOCK / 4];
    __m256i any = _mm256_setzero_si256();
    for (int q = 0; q < RE_TOPK_BLOCK / 4; ++q) {
        f[q] = _mm256_cmpgt_epi64(_mm256_loadu_si256((const __m256i*) (p + 4 * q)), vt);
        any = _mm256_or_si256(any, f[q]);
    }
    if (_mm256_testz_si256(any, any)) return 0;
    uint32_t mask = 0;
    for (int q = 0; q < RE_TOPK_BLOCK / 4; ++q)
        mask |= (uint32_t) _mm256_movemask_pd(_mm256_castsi256_pd(f[q])) << (4 * q);
    return mask;
}

/* re_scan<SCORE, ID> with the block test MASK, compiled for TARGET and chosen at run time
 * when HAS() (otherwise the base scan) */
#define RE_SCAN_WITH(SCORE, TARGET, MASK, HAS)                                                   \
    template <typename ID>                                                                       \
    TARGET static void re_scan_dense_##MASK(const SCORE* row, Py_ssize_t m, re_topk<SCORE, ID>& st) { \
        typedef SCORE T;                                                                         \
        RE_SCAN_DENSE_BODY(MASK)                                                                 \
    }                                                                                            \
    template <typename ID>                                                                       \
    struct re_scan<SCORE, ID> {                                                                  \
        static inline void run(const SCORE* row, Py_ssize_t m, re_topk<SCORE, ID>& st) {         \
            if (HAS())                                                                           \
                re_scan_dense_##MASK(row, m, st);                                                \
            else                                                                                 \
                re_scan_dense_base(row, m, st);                                                  \
        }                                                                                        \
    };

RE_SCAN_WITH(int64_t, RE_AVX2, re_block_mask_avx2_i64, re_cpu_has_avx2)

/* float16 with F16C (and AVX2): the block test on the scores converted to float32, 8 at a
 * time (vcvtph2ps; exact, and NaN, infinities and signed zeros keep their order and ties),
 * instead of the integer keys of re_score<re_half> per score. 20 000 x 20 000 float16
 * scores, 2 threads: k = 10 and 100 in about half the time. */
#define RE_F16C __attribute__((target("avx2,f16c")))

static inline bool re_cpu_has_f16c() {
    static const bool has = re_cpu_has_avx2() && __builtin_cpu_supports("f16c");
    return has;
}

RE_F16C static inline uint32_t re_block_mask_f16c(const re_half* p, re_half t) {
    const __m256 vt = _mm256_set1_ps(_cvtsh_ss(t.bits));
    const __m256 minus_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    __m256 f[RE_TOPK_BLOCK / 8];
    __m256 any = _mm256_setzero_ps();
    for (int q = 0; q < RE_TOPK_BLOCK / 8; ++q) {
        const __m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*) (p + 8 * q)));
        /* not x <= t: above t, NaN or +inf; or -inf (t is finite) */
        f[q] = _mm256_or_ps(_mm256_cmp_ps(x, vt, _CMP_NLE_UQ), _mm256_cmp_ps(x, minus_inf, _CMP_EQ_OQ));
        any = _mm256_or_ps(any, f[q]);
    }
    if (!_mm256_movemask_ps(any)) return 0;
    uint32_t mask = 0;
    for (int q = 0; q < RE_TOPK_BLOCK / 8; ++q) mask |= (uint32_t) _mm256_movemask_ps(f[q]) << (8 * q);
    return mask;
}

RE_SCAN_WITH(re_half, RE_F16C, re_block_mask_f16c, re_cpu_has_f16c)
#undef RE_SCAN_WITH
#endif

template <typename T, typename ID>
static inline void re_scan_dense(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
#if RE_TOPK_AVX2
    if (re_scan_compress(row, m, st)) return; /* where it applies (float32, float64, int32, int64) */
#endif
    re_scan<T, ID>::run(row, m, st);
}

/* A first threshold for a dense row, from a sample of its finite scores: the score that
 * r ~ mu + 2 sqrt(mu) + 2 sampled scores reach, where mu = sample * k / m is the expected
 * number of sampled scores among the row's top k. Somewhat more than k scores of the row
 * then pass it (about 1.3 k at k = 1000 of 20 000), and fewer than k only in a few rows
 * in a hundred: then a second pass over the row, which is still in the cache, collects
 * the rest. The sample is 512 scores (1024 from k = 256: a tighter threshold saves more
 * there), in runs of 32 spread over the row. Not used for a short row (under 8 192
 * scores), where the first `cap` scores give a threshold for less, nor when k is a large
 * part of the row. At a small k too it pays: a threshold that rises from the first `cap`
 * scores lets hundreds of early scores through, each a mispredicted branch (k = 10 of
 * 20 000 scores a row, two threads reading from memory: about 25% less time with it).
 *
 * The r-th largest sampled score is found on the top 32 bits of the order-preserving keys
 * without a data-dependent branch per score (a selection such as std::nth_element
 * mispredicts about one branch per sampled score): a histogram of 11 bits of the keys (the
 * highest 11 of their range, largest less smallest) gives the bucket of the r-th largest;
 * the keys of that bucket, copied out, are searched by bisection, bit by bit from the
 * highest, each bit by counting the keys at or above a candidate (a vectorised loop).
 * Sixteen bits below the histogram's are searched: below them the answer is rounded down
 * (a threshold a little lower: a few more scores pass it). */
enum { RE_SAMPLE_HIST_BITS = 11 };

/* The sample's keys (re_sample_threshold), without AVX-512: NaN and infinite scores get key
 * 0, below every finite score's (loops the compiler vectorises); n_ok counts the finite
 * ones; lo and hi: the smallest and largest key. For 64-bit scores a first pass over the
 * sampled scores sets the window (re_key_window) to their range. */
template <typename T>
static inline void re_sample_keys(const T* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key, Py_ssize_t* n_ok,
                                  uint32_t* lo, uint32_t* hi, re_readahead& ra, re_key_window<T>* win) {
    typedef typename re_score<T>::U U;
    if (sizeof(U) == 8) {
        U l = ~(U) 0, h = 0;
        for (Py_ssize_t c = 0; c < chunks; ++c) {
            const T* p = row + (c * (m - RE_TOPK_SAMPLE_RUN)) / (chunks - 1);
            for (Py_ssize_t b = 0; b < RE_TOPK_SAMPLE_RUN; ++b) {
                if (re_score<T>::bad(p[b])) continue;
                const U u = re_score<T>::ukey(p[b]);
                l = u < l ? u : l;
                h = u > h ? u : h;
            }
        }
        if (l <= h) {
            win->base = l;
            win->shift = re_shift_to_32((uint64_t) (h - l));
        }
    }
    Py_ssize_t ok_all = 0;
    for (Py_ssize_t c = 0; c < chunks; ++c) {
        ra.steps(6);
        const T* p = row + (c * (m - RE_TOPK_SAMPLE_RUN)) / (chunks - 1);
        uint32_t* kc = key + c * RE_TOPK_SAMPLE_RUN;
        int32_t ok = 0;
        for (Py_ssize_t b = 0; b < RE_TOPK_SAMPLE_RUN; ++b) {
            const uint32_t good = (uint32_t) !re_score<T>::bad(p[b]);
            kc[b] = good ? win->key(p[b]) : 0;
            ok += (int32_t) good;
        }
        ok_all += ok;
    }
    uint32_t l = 0xffffffffu, h = 0;
    for (Py_ssize_t i = 0; i < chunks * RE_TOPK_SAMPLE_RUN; ++i) {
        l = key[i] < l ? key[i] : l;
        h = key[i] > h ? key[i] : h;
    }
    *n_ok = ok_all;
    *lo = l;
    *hi = h;
}

template <typename T>
static inline bool re_sample_threshold(const T* row, Py_ssize_t m, Py_ssize_t k, T* sample, T* t0,
                                       re_readahead& ra) {
    typedef re_score<T> S;
    if (m < 8 * RE_TOPK_SAMPLE) return false;
    uint32_t* key = (uint32_t*) sample; /* room for 2 RE_TOPK_SAMPLE keys */
    uint32_t* sub = key + RE_TOPK_SAMPLE;
    const Py_ssize_t chunks = re_sample_chunks(k);
    /* the sampled keys (NaN and infinite scores: 0), how many are finite, their range */
    const Py_ssize_t ns = chunks * RE_TOPK_SAMPLE_RUN;
    Py_ssize_t n_ok = 0;
    uint32_t lo = 0xffffffffu, hi = 0;
    re_key_window<T> win; /* the AVX-512 keys of float32 scores are their own */
#if RE_TOPK_AVX2
    if (!(re_cpu_has_avx512() ? re_sample_keys_avx512(row, m, chunks, key, &n_ok, &lo, &hi, ra, &win)
                              : re_cpu_has_avx2_popcnt() &&
                                    re_sample_keys_avx2(row, m, chunks, key, &n_ok, &lo, &hi, ra, &win)))
#endif
        re_sample_keys(row, m, chunks, key, &n_ok, &lo, &hi, ra, &win);
    const Py_ssize_t r = re_sample_rank(n_ok, k, m);
    if (r > n_ok / 4) return false; /* k is too large a part of the row for the sample to help */
    uint32_t answer = hi; /* all sampled keys equal: the threshold is their score */
    const int top = re_bit_width(hi - lo) - 1; /* the highest bit of the keys' range */
#if RE_TOPK_AVX2
    if (top >= 0 && re_cpu_has_avx512()) {
        answer = re_sample_kth_avx512(key, ns, r, lo, hi, sub);
    } else if (top >= 0 && re_cpu_has_avx2()) {
        answer = re_sample_kth_avx2(key, ns, r, lo, hi, sub);
    } else
#endif
    if (top >= 0) {
        /* the histogram of digit = (key >> shift) - (lo >> shift): 11 bits of the range
         * (2^11 + 1 values: the range's top bits may carry into one more) */
        const int shift = top >= RE_SAMPLE_HIST_BITS - 1 ? top - (RE_SAMPLE_HIST_BITS - 1) : 0;
        const uint32_t base = lo >> shift;
        uint32_t count[(1 << RE_SAMPLE_HIST_BITS) + 1];
        const uint32_t top_digit = (hi >> shift) - base;
        std::memset(count, 0, sizeof(uint32_t) * (top_digit + 1));
        for (Py_ssize_t i = 0; i < ns; ++i) ++count[(key[i] >> shift) - base];
        uint32_t d = top_digit;
        Py_ssize_t above = 0; /* sampled keys in the buckets above d */
        while (above + (Py_ssize_t) count[d] < r) above += count[d--];
        /* the (r - above)-th largest key of bucket d */
        Py_ssize_t nsub = 0;
        const uint32_t in_d = d + base;
        for (Py_ssize_t i = 0; i < ns; ++i) {
            sub[nsub] = key[i] ^ 0x80000000u; /* signed comparisons below (SSE2 has them) */
            nsub += (Py_ssize_t) (key[i] >> shift == in_d);
        }
        const int32_t* skey = (const int32_t*) sub;
        const Py_ssize_t need = r - above;
        answer = (d + base) << shift;
        const int low = shift > 16 ? shift - 16 : 0;
        for (int bit = shift - 1; bit >= low; --bit) {
            const uint32_t c = answer | (1u << bit);
            const int32_t sc = (int32_t) (c ^ 0x80000000u);
            int32_t n_at_least = 0;
            for (Py_ssize_t i = 0; i < nsub; ++i) n_at_least += (int32_t) (skey[i] >= sc);
            answer = (Py_ssize_t) n_at_least >= need ? c : answer;
        }
    }
    /* at least r sampled keys are >= answer; the threshold is the score with that key */
    const T t = win.score(answer);
    if (S::bad(t)) return false;
    *t0 = t;
    return true;
}

/* The threshold a dense float32 row of m scores starts from at k (re_sample_threshold), for
 * the tests; false when it starts from none (a short row, or k too large a part of it). */
static inline bool re_sampled_threshold_f32(const float* row, Py_ssize_t m, Py_ssize_t k, float* t) {
    uint32_t sample[2 * RE_TOPK_SAMPLE];
    re_readahead ra;
    return k < m && re_sample_threshold(row, m, k, (float*) sample, t, ra);
}

/* Dense row: candidates are the ids 0..m-1 minus the exclusions [x, x_end). */
template <typename T, typename Q>
static void re_topk_dense(const T* row, Py_ssize_t m, Py_ssize_t k, const int64_t* x, const int64_t* x_end,
                          void* scratch, Py_ssize_t cap, Q* out, int64_t* out_len, int64_t* n_bad, const void* next) {
    re_topk<T, Q> st(scratch, cap, k, x, x_end);
    if (next != NULL) st.ra = re_readahead(next, m * (Py_ssize_t) sizeof(T));
    T t0 = T();
    const bool sampled = k < m && re_sample_threshold(row, m, k, st.sample, &t0, st.ra);
    if (sampled) {
        st.t = t0;
        st.have_t = true;
    }
    re_scan_dense(row, m, st);
    if (!sampled || st.compacted || st.n >= k) {
        st.finish(out, out_len, n_bad); /* the sort requests the rest of the next row */
        st.ra.rest();
        return;
    }
    /* fewer than k candidates above the sampled threshold: the others score at most t0 */
    const Py_ssize_t above = st.write(out);
    re_topk<T, Q> rest(scratch, cap, k - above, x, x_end);
    rest.hi = t0;
    rest.have_hi = true;
    rest.ra = st.ra;
    re_scan_dense(row, m, rest);
    *out_len = above + rest.write(out + above);
    *n_bad = st.n_bad;
    rest.ra.rest();
}

/* Dense row, only the listed ids (sorted valid_items; ids >= m are not items of the row). */
template <typename T, typename Q>
static void re_topk_listed(const T* row, Py_ssize_t m, const int64_t* ids, const int64_t* ids_end, Py_ssize_t k,
                           const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap, Q* out,
                           int64_t* out_len, int64_t* n_bad) {
    re_topk<T, Q> st(scratch, cap, k, x, x_end);
    ids_end = std::lower_bound(ids, ids_end, (int64_t) m);
    for (; ids < ids_end && !st.have_t; ++ids) st.offer(row[*ids], *ids);
    for (; ids < ids_end; ++ids) {
        const T v = row[*ids];
        if (re_flag(v, st.t)) st.offer(v, *ids);
    }
    st.finish(out, out_len, n_bad);
}

/* Sparse row: the stored (id, score) pairs, ids ascending; with `keep`, only ids listed in
 * the sorted [keep, keep_end) (valid_items) are candidates. */
template <typename T, typename Q>
static void re_topk_sparse(const T* data, const int64_t* ids, Py_ssize_t len, const int64_t* keep,
                           const int64_t* keep_end, Py_ssize_t k, const int64_t* x, const int64_t* x_end,
                           void* scratch, Py_ssize_t cap, Q* out, int64_t* out_len, int64_t* n_bad) {
    re_topk<T, Q> st(scratch, cap, k, x, x_end);
    for (Py_ssize_t p = 0; p < len; ++p) {
        const int64_t id = ids[p];
        if (keep != NULL) {
            while (keep < keep_end && *keep < id) ++keep;
            if (keep == keep_end || *keep != id) continue;
        }
        if (!st.have_t || re_flag(data[p], st.t)) st.offer(data[p], id);
    }
    st.finish(out, out_len, n_bad);
}

/* Score types, as data.py numbers them (_SCORE_CODES). */
enum re_score_code {
    RE_F32, RE_F64, RE_F16, RE_I8, RE_I16, RE_I32, RE_I64, RE_U8, RE_U16, RE_U32, RE_U64
};

/* How a row's candidates are given (re_topk_row's `mode`). */
enum re_topk_mode {
    RE_DENSE,  /* scores[0:len] of items 0..len-1 */
    RE_LISTED, /* scores[0:m], only the sorted ids[0:len] */
    RE_SPARSE  /* (ids[p], scores[p]) for p < len, ids ascending; filtered by [keep, keep_end) */
};

template <typename T, typename Q>
static inline void re_topk_typed(int mode, const void* scores, const int64_t* ids, Py_ssize_t len, Py_ssize_t m,
                                 const int64_t* keep, const int64_t* keep_end, Py_ssize_t k, const int64_t* x,
                                 const int64_t* x_end, void* scratch, Py_ssize_t cap, void* out, int64_t* out_len,
                                 int64_t* n_bad, const void* next) {
    const T* s = (const T*) scores;
    if (mode == RE_DENSE)
        re_topk_dense(s, len, k, x, x_end, scratch, cap, (Q*) out, out_len, n_bad, next);
    else if (mode == RE_LISTED)
        re_topk_listed(s, m, ids, ids + len, k, x, x_end, scratch, cap, (Q*) out, out_len, n_bad);
    else
        re_topk_sparse(s, ids, len, keep, keep_end, k, x, x_end, scratch, cap, (Q*) out, out_len, n_bad);
}

template <typename Q>
static inline void re_topk_q(int code, int mode, const void* scores, const int64_t* ids, Py_ssize_t len,
                             Py_ssize_t m, const int64_t* keep, const int64_t* keep_end, Py_ssize_t k,
                             const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap, void* out,
                             int64_t* out_len, int64_t* n_bad, const void* next) {
#define RE_CASE(C, T)                                                                                 \
    case C:                                                                                           \
        re_topk_typed<T, Q>(mode, scores, ids, len, m, keep, keep_end, k, x, x_end, scratch, cap, out, \
                            out_len, n_bad, next);                                                    \
        break;
    switch (code) {
        RE_CASE(RE_F32, float)
        RE_CASE(RE_F64, double)
        RE_CASE(RE_F16, re_half)
        RE_CASE(RE_I8, int8_t)
        RE_CASE(RE_I16, int16_t)
        RE_CASE(RE_I32, int32_t)
        RE_CASE(RE_I64, int64_t)
        RE_CASE(RE_U8, uint8_t)
        RE_CASE(RE_U16, uint16_t)
        RE_CASE(RE_U32, uint32_t)
        RE_CASE(RE_U64, uint64_t)
    }
#undef RE_CASE
}

/* One row of any score type into int32 or int64 output ids, out[0:width]: the ranking,
 * then -1 (the output is not filled beforehand: one write of it instead of two). `next`:
 * the dense row this thread ranks next, or NULL. */
static inline void re_topk_row(int code, bool out64, int mode, const void* scores, const int64_t* ids,
                               Py_ssize_t len, Py_ssize_t m, const int64_t* keep, const int64_t* keep_end,
                               Py_ssize_t k, const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap,
                               void* out, Py_ssize_t width, int64_t* out_len, int64_t* n_bad, const void* next) {
    if (out64) {
        re_topk_q<int64_t>(code, mode, scores, ids, len, m, keep, keep_end, k, x, x_end, scratch, cap, out,
                           out_len, n_bad, next);
        std::fill((int64_t*) out + *out_len, (int64_t*) out + width, (int64_t) -1);
    } else {
        re_topk_q<int32_t>(code, mode, scores, ids, len, m, keep, keep_end, k, x, x_end, scratch, cap, out,
                           out_len, n_bad, next);
        std::fill((int32_t*) out + *out_len, (int32_t*) out + width, (int32_t) -1);
    }
}

#endif /* RANKEREVAL_TOPK_H */
