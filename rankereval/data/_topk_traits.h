/* Top-k selection: the interface between the algorithm (_topk_algo.h) and the instruction
 * sets that implement its primitives (_topk_portable.h, _topk_avx2.h, _topk_avx512.h).
 *
 * This file holds what both sides read: the score types (re_score: order-preserving keys,
 * NaN/infinite tests), a buffer entry, the reading ahead of the next row, the sizes of the
 * blocks, the sample and the scratch space. It includes no other header of the package.
 *
 * An instruction set is a traits type with these static members (re_isa_portable is the
 * reference; AVX2 and AVX-512 derive from it and replace what they do faster):
 *
 * - block(p, t): the flags of the RE_TOPK_BLOCK scores p[0:32] against the threshold t, bit b
 *   set when p[b] > t or p[b] is NaN or infinite (re_flag).
 * - compresses<T>::value, compress_parts<T>(), compress<EXACT>(row, m, cs, j),
 *   compress_entries(row, ids, n, out, bad): the compress scan (the ids of the flagged
 *   scores of every block stored together, no branch on the scores), where the traits have
 *   one (compresses) and k >= m / compress_parts. `cs` is the scan's state
 *   (re_compress_state of _topk_algo.h): cs.threshold(), cs.block() (true when a compaction
 *   changed the threshold), cs.excluded(j), the exclusion bits cs.xmask, and cs.ids[cs.w++],
 *   cs.bad that the kernel writes.
 * - sample_keys(row, m, chunks, key, n_ok, lo, hi, ra, win): the 32-bit keys of the sampled
 *   scores (NaN and infinite: 0), how many are finite, their smallest and largest.
 * - kth_key(key, ns, r, lo, hi, sub): the largest key with at least r of key[0:ns] at or above
 *   it (lo < hi; sub: room for ns keys; key may be overwritten), rounded down in its low bits.
 * - words(buf, n, kbase, shift, indexed, key, words, lo, hi): the winners' 64-bit words, the
 *   inverted key (less kbase, shifted right) above the id or, indexed, the entry's index.
 * - sort_words(src, key, n, len, lo, hi, dst, count, ra): the first len of the distinct words
 *   src[0:n] in ascending order; returns src or dst, whichever holds all n words sorted
 *   as far as len.
 */
#ifndef RANKEREVAL_TOPK_TRAITS_H
#define RANKEREVAL_TOPK_TRAITS_H

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__SSE2__) || defined(_M_X64) || (defined(_M_IX86_FP) && _M_IX86_FP >= 2)
#include <emmintrin.h>
#define RE_HAVE_SSE2 1
#else
#define RE_HAVE_SSE2 0
#endif

/* AVX2 and AVX-512 are compiled where GCC or Clang targets x86, whatever the build's flags,
 * and chosen at run time (_topk.h) */
#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define RE_TOPK_X86 1
#include <immintrin.h>
#define RE_TARGET_AVX2 __attribute__((target("avx2,f16c,popcnt")))
#define RE_TARGET_AVX512 __attribute__((target("avx2,f16c,popcnt,avx512f")))
#else
#define RE_TOPK_X86 0
#endif

#if defined(__GNUC__) || defined(__clang__)
#define RE_NOINLINE __attribute__((noinline))
#define RE_ALWAYS_INLINE __attribute__((always_inline)) inline
static inline int re_ctz32(uint32_t x) { return __builtin_ctz(x); } /* x != 0 */
static inline int re_bit_width(uint32_t x) { return x ? 32 - __builtin_clz(x) : 0; }
#else
#if defined(_MSC_VER)
#define RE_NOINLINE __declspec(noinline)
#define RE_ALWAYS_INLINE __forceinline
#else
#define RE_NOINLINE
#define RE_ALWAYS_INLINE inline
#endif
static inline int re_ctz32(uint32_t x) {
    int c = 0;
    for (; !(x & 1); x >>= 1) ++c;
    return c;
}
static inline int re_bit_width(uint32_t x) {
    int w = 0;
    for (; x; x >>= 1) ++w;
    return w;
}
#endif

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
 * -0.0 and +0.0 tie), from_ukey its inverse. */
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

/* The score types of the compress scan (with int32 ids) */
template <typename T>
struct re_compressible {
    enum { value = 0 };
};
template <> struct re_compressible<float> { enum { value = 1 }; };
template <> struct re_compressible<double> { enum { value = 1 }; };
template <> struct re_compressible<int32_t> { enum { value = 1 }; };
template <> struct re_compressible<int64_t> { enum { value = 1 }; };

/* The sample's 32-bit keys: a window of the key, (key - base) >> shift, and the score at the
 * start of a window key's range. Keys of up to 32 bits are their own window; for 64-bit
 * scores sample_keys sets the window to the 32 highest bits of the sampled keys' range (the
 * top 32 bits of the key alone are the same for every integer from 0 to 2^32 - 1). */
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

template <typename T, typename ID>
struct re_entry {
    T v;
    ID id;
};

/* Reading the thread's next row ahead, a cache line at a time, while this row is worked on:
 * a request per step, interleaved with the work (a tight loop of prefetches stalls once the
 * line fill buffers are full and hides nothing). The lines go to L2. */
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

enum {
    RE_TOPK_BLOCK = 32,         /* the scores of one threshold test */
    RE_TOPK_SAMPLE_CHUNKS = 32, /* the sample: up to 32 runs of 32 scores spread over the row */
    RE_TOPK_SAMPLE_RUN = 32,
    RE_TOPK_SAMPLE = 1024,
    RE_TOPK_SHORT = 32,    /* winners up to this many are insertion sorted */
    RE_TOPK_SLACK = 64,    /* room in the buffer beyond k: a compaction at most every 64 candidates */
    RE_BUCKET_BITS = 12,   /* the word sorts' counters: at most 2^12 */
    RE_SAMPLE_HIST_BITS = 11
};

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

/* The selection buffer's size, cap, for k of rows with at most `most` candidates, of which
 * dense rows of m scores are scanned whole (m = 0: no such rows): the k best so far and
 * room for k or RE_TOPK_SLACK more, whichever is more; and where the dense scan starts from
 * a sampled threshold that many scores pass (k >= m / 256), room for the scores expected
 * above it, m r / ns, and four standard deviations more, so that a compaction is rare. */
static inline Py_ssize_t re_topk_cap(Py_ssize_t k, Py_ssize_t most, Py_ssize_t m) {
    if (k >= most) return most;
    Py_ssize_t cap = std::max(2 * k, k + (Py_ssize_t) RE_TOPK_SLACK);
    if (m >= 8 * RE_TOPK_SAMPLE && k < m && k * 256 >= m) {
        const Py_ssize_t ns = re_sample_chunks(k) * RE_TOPK_SAMPLE_RUN;
        const Py_ssize_t r = re_sample_rank(ns, k, m);
        if (r <= ns / 4) { /* the sample is used; r >= 2 */
            const double expected = (double) m * (double) r / (double) ns;
            const double room = expected * (1.0 + 4.0 / std::sqrt((double) r)) + 2 * RE_TOPK_BLOCK;
            if (room > (double) cap) cap = room >= (double) m ? m : (Py_ssize_t) room;
        }
    }
    return std::min(cap, most);
}

/* The per-thread scratch space, for any score and id type: 2 cap entries of <= 16 bytes (the
 * buffer; the words), 2 cap scores or keys of <= 8 bytes, the sample (2 keys of 4 bytes a
 * sampled score), then the word sorts' counters (re_topk_scratch_counts: where they start),
 * rounded up to 64 bytes (re_topk_scratch_fixed); then, for dense rows of m scores, the
 * compress scan's exclusion mask, a bit per score in 16-bit words, zero when allocated (the
 * scan clears what it sets). */
static inline size_t re_topk_scratch_counts(Py_ssize_t cap) {
    return (size_t) cap * (2 * 16 + 2 * 8) + RE_TOPK_SAMPLE * 8;
}
static inline size_t re_topk_scratch_fixed(Py_ssize_t cap) {
    return (re_topk_scratch_counts(cap) + sizeof(uint32_t) * ((size_t) 1 << RE_BUCKET_BITS) + 64 + 63) & ~(size_t) 63;
}
static inline size_t re_topk_scratch_bytes(Py_ssize_t cap, Py_ssize_t m) {
    return re_topk_scratch_fixed(cap) + ((size_t) m + 15) / 16 * sizeof(uint16_t);
}

#endif /* RANKEREVAL_TOPK_TRAITS_H */
