/* Top-k selection of Rankings.from_scores (the row kernels of _topk.pyx).
 *
 * The rule: items by descending score, ties by ascending item id; excluded items (not in
 * valid_items, or in invalid_items) are never ranked; NaN and infinite scores of candidates
 * are dropped and counted.
 *
 * The algorithm, written once here (the portable core); one pass per row reads each score
 * once, in its own type (float16 as its bits, float32, float64, any integer):
 *
 * - Candidates are visited in ascending item id. Until the buffer holds `cap` (>= k + 32,
 *   or every candidate of the row) of them, every candidate is appended. Then the buffer is
 *   *compacted* to the k best (selection on a copy of the values, then a stable filter, so
 *   the buffer stays in id order) and the k-th best value becomes the threshold t. A wide
 *   dense row (8 192 scores or more) starts instead from a threshold estimated on a sample
 *   of the row (re_sample_threshold), with a second pass in the rare case that fewer than k
 *   scores pass it; where many scores pass it, the buffer has room for them all in nearly
 *   every row (re_topk_cap).
 * - From then on a candidate is kept only when its score is strictly above t: an item with
 *   score equal to t comes later in id order than the k-th best item, so it loses the tie.
 *   The dense scan tests a block of 32 scores at a time against t and visits only the
 *   flagged ones, without a branch per score (re_scan_blocks); a compaction, when the
 *   buffer might fill, happens between blocks. Exclusions (the sorted CSR row of
 *   invalid_items) are merged in only for blocks with flagged scores.
 * - At the end the winners are sorted by descending score, ties in ascending id, and the
 *   first k kept: short lists by insertion sort, longer ones as 64-bit words of an
 *   order-preserving key (inverted, less the smallest) above the id (or above the index in
 *   the buffer, for 64-bit ids, and for 64-bit keys that span 2^32 or more: their top 32
 *   bits, the rare runs of equal top bits ordered after the sort, re_topk::out_words),
 *   which are distinct, so that any sort of the words gives the rule's order: an LSD radix
 *   sort on the key bits that differ (re_topk::write_packed).
 * - All along, the thread's next row is requested a cache line at a time (re_readahead),
 *   interleaved with the work on this row.
 *
 * The instruction sets (re_topk_isa, the one run-time choice; a file each):
 * - the compress scan (re_compress_scan, written once here: where many scores pass the
 *   sampled threshold, k >= m / 256, the ids of the passing scores moved together, no
 *   branch on the scores), over a kernel of the blocks per instruction set;
 * - _topk_avx2.h: the block scan compiled for AVX2 and F16C, with its block test of
 *   float32, float64 and float16 scores written with AVX2 (8 scores an instruction), and
 *   the compress scan's kernel (the ids of 8 moved together by a permutation from a table);
 * - _topk_avx512.h: the compress scan's kernel (vpcompressd), the sample's keys and the
 *   bisection of its threshold, and the winners' words made 8 at a time and sorted by
 *   buckets and transposition rounds.
 * What stays was measured against the code before it and the portable core
 * (benchmarks/bench_topk.py --paths; docs/guide/performance.rst): each path gains 1.25x or
 * more at some workload there, or its removal made some workload 1.25x slower than before.
 * Removed (no workload 1.25x slower without them): AVX2 sample keys and bisection, an AVX2 bucket sort, a quicksort of the words, SSE2 block tests, the
 * words gathered straight from the scan's ids, the vectorised bucket counts and starts.
 *
 * Scratch per thread: 2 cap entries + 2 cap scores (the word sorts reuse them for cap
 * words, cap words or values, each with 16 spare) + the sample's keys (cap <= the row
 * length), then the compress scan's exclusion mask, a bit per score of a dense row.
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
#include <type_traits>

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

/* The instruction sets: chosen once, at run time, here, and nowhere else; their kernels in
 * one file each (_topk_avx2.h, _topk_avx512.h). Without them (another compiler or CPU),
 * the portable scan, which the compiler vectorises for SSE2. */
enum re_isa { RE_ISA_BASE, RE_ISA_AVX2, RE_ISA_AVX512 };

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define RE_TOPK_X86 1
#include <immintrin.h>
#define RE_AVX512 __attribute__((target("avx512f,popcnt")))

/* RANKEREVAL_DISABLE_AVX512 keeps AVX2, RANKEREVAL_DISABLE_AVX2 the portable kernels (set
 * before the first call; for tests and measurements) */
static inline int re_topk_isa() {
    static const int isa = !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("f16c") ||
                                   !__builtin_cpu_supports("popcnt") ||
                                   std::getenv("RANKEREVAL_DISABLE_AVX2")
                               ? RE_ISA_BASE
                           : !__builtin_cpu_supports("avx512f") ||
                                     std::getenv("RANKEREVAL_DISABLE_AVX512")
                               ? RE_ISA_AVX2
                               : RE_ISA_AVX512;
    return isa;
}
#else
#define RE_TOPK_X86 0
static inline int re_topk_isa() {
    return RE_ISA_BASE;
}
#endif

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
 * above the threshold and cost just that. Written once, compiled for each instruction set
 * through the scan that inlines it (re_scan_blocks; _topk_x86.h). */
struct re_block_test {
    template <typename T>
    static RE_ALWAYS_INLINE uint32_t test(const T* p, T t) {
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
};
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

/* Winners up to this many are insertion sorted, more are sorted as words (re_topk::write) */
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
#if RE_TOPK_X86
/* _topk_avx512.h: the winners' words and keys made (float32 scores, int32 ids; false for
 * the others) and sorted by buckets (re_topk::write_packed) */
template <typename T, typename ID>
static inline bool re_words_avx512(const re_entry<T, ID>*, Py_ssize_t, uint32_t*, uint64_t*, uint32_t*, uint32_t*) {
    return false;
}
RE_AVX512 static bool re_words_avx512(const re_entry<float, int32_t>* buf, Py_ssize_t n, uint32_t* key,
                                      uint64_t* words, uint32_t* lo, uint32_t* hi);
RE_AVX512 static bool re_bucket_sort_avx512(const uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len,
                                            uint32_t lo, uint32_t hi, uint64_t* dst, uint32_t* count, re_readahead& ra);
#endif

/* The selection state of one row. */
template <typename T, typename ID>
struct re_topk {
    typedef re_score<T> S;
    typedef typename S::U U;
    char* base;           /* the scratch space */
    re_entry<T, ID>* buf; /* candidates kept so far, in ascending id (cap; then cap more for the words) */
    T* vals;              /* selection (2 cap; the words' second buffer and keys) */
    T* sample;            /* RE_TOPK_SAMPLE scores (re_sample_threshold) */
    Py_ssize_t n, cap, k;
    const int64_t* x; /* exclusions still ahead, sorted */
    const int64_t* x_end;
    int64_t n_bad;
    T t;  /* once have_t, a candidate must score above t */
    T hi; /* and, once have_hi, at most hi (the second pass after a sampled threshold) */
    bool have_t, have_hi, compacted;
    re_readahead ra; /* the thread's next row (re_readahead): requested during the work */
    re_topk(void* scratch, Py_ssize_t cap_, Py_ssize_t k_, const int64_t* x_, const int64_t* x_end_)
        : n(0), cap(cap_), k(k_), x(x_), x_end(x_end_), n_bad(0), t(), hi(), have_t(false), have_hi(false),
          compacted(false) {
        base = (char*) scratch; /* the layout of re_topk_scratch_bytes */
        buf = (re_entry<T, ID>*) base;
        vals = (T*) (base + (size_t) cap * 32);
        sample = (T*) (base + (size_t) cap * 48);
    }

    struct greater { /* a functor, so that the selection inlines the comparison */
        inline bool operator()(const T& a, const T& b) const { return S::gt(a, b); }
    };
    struct by_score {
        inline bool operator()(const re_entry<T, ID>& a, const re_entry<T, ID>& b) const { return S::gt(a.v, b.v); }
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

    /* The ids of the min(n, k) best of buf[0:n] into out (re_topk::write): kbase is the
     * smallest inverted key (0 for keys of up to 32 bits), shift what the keys less kbase are
     * cut by to fit 32 bits (re_shift_to_32). Each entry becomes one 64-bit word: the key,
     * inverted (descending score), less kbase and shifted, above the id, or above the index
     * in buf where the id does not fit 32 bits or the keys are cut (then out_words orders the
     * runs of equal cut keys); a stable LSD radix sort of the words on the key bits leaves
     * ties in the order of buf, ascending id. Only the bits where the keys differ are sorted,
     * in as few passes of at most 11 bits as they need (scores above a threshold share their
     * top bits: the 20 000 standard normal scores' top 1 445 differ in 25 bits, three
     * passes); the counts of every pass are taken in one read. */
    template <typename Q>
    Py_ssize_t write_packed(Q* out, U kbase, int shift) {
        enum { MAX_BITS = 11, MAX_PASSES = 3 };
        const bool indexed = shift || sizeof(ID) > 4;
        uint64_t* words = (uint64_t*) (base + (size_t) cap * 16); /* after buf: 16 cap bytes */
        uint64_t* other = (uint64_t*) (base + (size_t) cap * 32); /* vals */
        uint32_t* key = (uint32_t*) (base + (size_t) cap * 40);
        /* the keys (inverted: ascending order is descending score) and the words */
        uint32_t lo = 0xffffffffu, hi = 0;
#if RE_TOPK_X86
        const bool avx512 = re_topk_isa() == RE_ISA_AVX512;
        if (!(avx512 && re_words_avx512(buf, n, key, other, &lo, &hi)))
#endif
        for (Py_ssize_t i = 0; i < n; ++i) {
            const uint32_t c = (uint32_t) ((U) ((U) ~S::ukey(buf[i].v) - kbase) >> shift);
            key[i] = c;
            other[i] = (uint64_t) c << 32 | (indexed ? (uint32_t) i : (uint32_t) buf[i].id);
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
        }
        const Py_ssize_t len = n < k ? n : k;
#if RE_TOPK_X86
        /* the words are distinct: any sort gives the rule's order */
        if (avx512 && re_bucket_sort_avx512(other, key, n, len, lo, hi, words,
                                            (uint32_t*) (base + re_topk_scratch_counts(cap)), ra))
            return out_words(words, len, indexed, shift, out);
#endif
        /* the radix sort (keys bunched together, or without AVX-512), from the words */
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
        return out_words(words, len, indexed, shift, out);
    }

    /* The ids of the sorted words w[0:len] (all n words in w, the others after them) into
     * out: the words' low halves, or, indexed, the ids of the entries they index. With cut
     * keys (shift > 0), each run of words with equal cut keys is first put in the rule's
     * order by the full keys (ties in buf order: ascending id); the run at position len - 1
     * takes its words from beyond len too. Runs are rare: the cut keys keep the top 32 bits
     * of the winners' range. */
    template <typename Q>
    Py_ssize_t out_words(uint64_t* w, Py_ssize_t len, bool indexed, int shift, Q* out) {
        if (!indexed) {
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
        for (Py_ssize_t a = 0; shift && a < len;) {
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
        if (n > k && k <= RE_TOPK_SHORT) compact();
        if (n <= RE_TOPK_SHORT || n > (Py_ssize_t) 0xffffffff) { /* words index buf with 32 bits */
            if (n <= RE_TOPK_SHORT)
                insertion_sort(buf, n);
            else
                std::stable_sort(buf, buf + n, by_score());
            if (n > k) n = k;
            for (Py_ssize_t i = 0; i < n; ++i) out[i] = (Q) buf[i].id;
            return n;
        }
        if (sizeof(U) <= 4) return write_packed(out, (U) 0, 0);
        /* 64-bit keys: packed too, less the smallest; when the winners' keys span 2^32 or
         * more, cut to their top 32 bits, with indices into buf in the words and the rare
         * runs of equal cut keys ordered after the sort (out_words). 20 000 x 20 000 scores,
         * 2 threads, against a radix sort of the entries: int64 the whole call 0.87x the
         * time at k = 100 and 0.72x at k = 1000 */
        U l = ~(U) 0, h = 0;
        for (Py_ssize_t i = 0; i < n; ++i) {
            const U c = (U) ~S::ukey(buf[i].v);
            l = c < l ? c : l;
            h = c > h ? c : h;
        }
        return write_packed(out, l, re_shift_to_32((uint64_t) (h - l)));
    }

    template <typename Q>
    void finish(Q* out, int64_t* out_len, int64_t* n_bad_out) {
        *out_len = write(out);
        *n_bad_out = n_bad;
    }
};

/* Offer the flagged scores of row[0:m] (every score until a threshold exists); M::test is the
 * block test (re_block_test: the same loop compiled for each instruction set).
 *
 * Once a threshold exists, the state lives in locals (a store into the buffer could alias
 * the members, which would then be reloaded) and for each block with flagged scores: the
 * exclusions of the block are cleared from its mask (one merge step per block, not per
 * candidate), then each flagged score is written to the buffer and counted in unless NaN
 * or infinite (or, in a second pass, above hi): no branch to mispredict; the buffer has
 * room, n < cap, at each write. A compaction in the middle of a block raises t, and the
 * rest of the block is kept anyway: an entry at or below t sorts after the k better ones * (ties by id: it comes later) and is dropped by the next compaction or the final sort. */
template <typename M, typename T, typename ID>
static inline void re_scan_blocks(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    Py_ssize_t j = 0;
    for (; j < m && !st.have_t; ++j) st.offer(row[j], j);
    if (j + RE_TOPK_BLOCK <= m) {
        const int64_t* x = st.x;
        const int64_t* const x_end = st.x_end;
        re_entry<T, ID>* const out = st.buf;
        const Py_ssize_t cap = st.cap;
        const bool can_compact = st.cap >= st.k + RE_TOPK_BLOCK, second = st.have_hi;
        const T hi = st.hi;
        T t = st.t;
        Py_ssize_t w = st.n;
        int64_t bad = 0;
        re_readahead ra = st.ra;
        const int ra_lines = (int) ((RE_TOPK_BLOCK * sizeof(T) + 63) / 64);
        for (; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
            ra.steps(ra_lines); /* the next row at the pace this one is read */
            uint32_t mask = M::test(row + j, t);
            if (!mask) continue;
            if (w > cap - RE_TOPK_BLOCK && can_compact) {
                st.n = w;
                st.compact();
                w = st.n;
                t = st.t;
                mask = M::test(row + j, t);
            }
            if (x < x_end && *x < j + RE_TOPK_BLOCK) {
                while (x < x_end && *x < j) ++x;
                for (; x < x_end && *x < j + RE_TOPK_BLOCK; ++x) mask &= ~((uint32_t) 1 << (*x - j));
            }
            while (mask) {
                const int b = re_ctz(mask);
                mask &= mask - 1;
                const T v = row[j + b];
                out[w].v = v;
                out[w].id = (ID) (j + b);
                const bool is_bad = re_score<T>::bad(v);
                bad += (int64_t) is_bad;
                w += (Py_ssize_t) !(is_bad | (second && re_score<T>::gt(v, hi)));
            }
        }
        st.n = w;
        st.x = x;
        st.ra = ra;
        st.n_bad += second ? 0 : bad; /* a second pass does not count again */
    }
    for (; j < m; ++j)
        if (re_flag(row[j], st.t)) st.offer(row[j], j);
}

#if RE_TOPK_X86
/* The compress scan: the dense scan of a row from a sampled threshold that many scores
 * pass (k >= m / 256: a few in a thousand or more; float32, float64, int32 and int64
 * scores, int32 ids), written once here over an instruction set's kernel K (_topk_avx2.h:
 * re_compress_avx2, _topk_avx512.h: re_compress_avx512). The block scan above visits the
 * flagged scores of each block one by one, and its branches are mispredicted about once a
 * flagged block; here nothing depends on the scores but the rare: K::blocks compares each
 * vector of scores with t, moves the ids of the ones above it to the front of a vector and
 * stores them at the end of an array (the values region of the scratch), which then grows
 * by their number (stores past the end are overwritten later). K::entries reads their
 * scores back from the row (in the cache) into buffer entries before a compaction, which
 * happens between blocks when the buffer might fill, and at the end. The row's exclusions
 * are set as bits of a per-thread mask first (and cleared after), read a block at a time.
 * NaN and infinite scores: K::blocks<false> returns false when the row had one among its
 * candidates that it could not leave out, and the row is then scanned again, EXACT. */
template <typename T, typename K>
struct re_compress_state {
    re_topk<T, int32_t>& st;
    const T* const row;
    int32_t* const ids;
    uint16_t* const xmask; /* the exclusions, a bit per score, 16 a word */
    Py_ssize_t w;
    int64_t bad;
    re_readahead ra;
    const int lines; /* of the next row a block: as many as the block's, or half when the sort is long */

    re_compress_state(re_topk<T, int32_t>& st_, const T* row_, Py_ssize_t m)
        : st(st_), row(row_), ids((int32_t*) (st_.base + (size_t) st_.cap * 32)),
          xmask((uint16_t*) (st_.base + re_topk_scratch_fixed(st_.cap))), w(0), bad(0), ra(st_.ra),
          lines((int) (RE_TOPK_BLOCK * sizeof(T) / 64) / (st_.k * 32 < m ? 1 : 2)) {
        for (const int64_t* e = st.x; e < st.x_end; ++e)
            if (*e < m) xmask[*e / 16] = (uint16_t) (xmask[*e / 16] | 1u << (*e % 16));
    }

    /* the exclusions of the block row[j:j + 32], a bit per score */
    inline uint32_t excluded(Py_ssize_t j) const {
        return (uint32_t) xmask[j / 16] | (uint32_t) xmask[j / 16 + 1] << 16;
    }

    inline void to_entries() { st.n = K::entries(row, ids, w, st.buf, bad); }

    /* The start of a block: lines of the next row requested, and a compaction if the block
     * could fill the buffer (returns true: the threshold changed). */
    inline bool block() {
        ra.steps(lines);
        const bool new_t = w > st.cap - RE_TOPK_BLOCK;
        if (new_t) {
            to_entries();
            st.compact();
            w = st.n;
            for (Py_ssize_t i = 0; i < w; ++i) ids[i] = st.buf[i].id;
        }
        return new_t;
    }

    /* The end: the exclusion mask cleared, the ids into buffer entries, the state back into
     * st, and the scores after the last whole block, one by one. */
    void finish(Py_ssize_t m, Py_ssize_t j) {
        for (const int64_t* e = st.x; e < st.x_end; ++e)
            if (*e < m) xmask[*e / 16] = 0;
        to_entries();
        st.n_bad += bad;
        st.ra = ra;
        for (; j < m; ++j)
            if (re_flag(row[j], st.t)) st.offer(row[j], j);
    }
};

/* The scan of a row: the first pass, and in the rare row where a candidate is NaN or
 * infinite and the first pass kept it, a second, exact pass from the same start (no
 * candidates, the sampled threshold). Inlined into K::scan, compiled for K's target. */
template <typename K, typename T>
static inline void re_compress_scan(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    re_compress_state<T, K> cs(st, row, m);
    Py_ssize_t j = 0;
    const T t0 = st.t;
    if (!K::template blocks<false>(row, m, st, cs, j)) {
        cs.w = 0;
        cs.bad = 0;
        st.n = 0;
        st.t = t0;
        st.compacted = false;
        K::template blocks<true>(row, m, st, cs, j);
    }
    cs.finish(m, j);
}

/* The compress scan of K where it applies (returns false elsewhere): float32, float64, int32
 * or int64 scores, int32 ids, the first pass over a row from a sampled threshold with many
 * scores above it (k >= m / K::parts<T>(), 256 or less), and a buffer with room for a
 * block past its compaction point. */
template <typename T>
struct re_compressible {
    enum { value = 0 };
};
template <> struct re_compressible<float> { enum { value = 1 }; };
template <> struct re_compressible<double> { enum { value = 1 }; };
template <> struct re_compressible<int32_t> { enum { value = 1 }; };
template <> struct re_compressible<int64_t> { enum { value = 1 }; };

template <typename K, typename T, typename ID>
static inline typename std::enable_if<!(re_compressible<T>::value && sizeof(ID) == 4), bool>::type
re_scan_compress(const T*, Py_ssize_t, re_topk<T, ID>&) {
    return false;
}
template <typename K, typename T, typename ID>
static inline typename std::enable_if<re_compressible<T>::value && sizeof(ID) == 4, bool>::type
re_scan_compress(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    if (!st.have_t || st.have_hi || st.n != 0 || st.compacted || st.k * K::template parts<T>() < m ||
        st.cap < st.k + 2 * RE_TOPK_BLOCK)
        return false;
    K::scan(row, m, st);
    return true;
}

#include "_topk_avx2.h"
#include "_topk_avx512.h"
#endif

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
    re_key_window<T> win;
#if RE_TOPK_X86
    const bool avx512 = re_topk_isa() == RE_ISA_AVX512; /* the keys: float32 */
    if (!(avx512 && re_sample_keys_avx512(row, m, chunks, key, &n_ok, &lo, &hi, ra, &win)))
#endif
        re_sample_keys(row, m, chunks, key, &n_ok, &lo, &hi, ra, &win);
    const Py_ssize_t r = re_sample_rank(n_ok, k, m);
    if (r > n_ok / 4) return false; /* k is too large a part of the row for the sample to help */
    uint32_t answer = hi; /* all sampled keys equal: the threshold is their score */
    const int top = re_bit_width(hi - lo) - 1; /* the highest bit of the keys' range */
#if RE_TOPK_X86
    if (top >= 0 && avx512) {
        answer = re_sample_kth_avx512(key, ns, r, lo, hi, sub);
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

/* The dense scan of a row: the compress scan where it applies (AVX-512), else the block
 * scan compiled for the best instruction set at hand. */
template <typename T, typename ID>
static inline void re_scan_dense(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
#if RE_TOPK_X86
    const int isa = re_topk_isa();
    if (isa == RE_ISA_AVX512 && re_scan_compress<re_compress_avx512>(row, m, st)) return;
    if (isa == RE_ISA_AVX2 && re_scan_compress<re_compress_avx2>(row, m, st)) return;
    if (isa >= RE_ISA_AVX2) {
        re_scan_blocks_avx2(row, m, st);
        return;
    }
#endif
    re_scan_blocks<re_block_test>(row, m, st);
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

/* Score types, as rankereval/data/_conversion.py numbers them (_SCORE_CODES). */
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