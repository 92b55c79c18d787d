/* Per-row lookups of the metric kernel (_kernels.pyx): which of the first kk items of one
 * ranking are in one label row. Each function writes the 0-based ranks of the hits, in
 * order, to hit_rank (room for kk entries) and returns how many there are; with first_only
 * it stops after the first hit.
 *
 * They are plain C++ rather than Cython so that every value of the hot loops is a local
 * the compiler can keep in a register, and so that the loops have the exact shape the
 * vectoriser needs. Each appends a hit without a branch (write the slot, advance the count
 * by 0 or 1): whether a ranked item is relevant is a coin flip no branch predictor learns.
 *
 * Ids: labels are sorted, distinct and in [0, n_ids); ranked ids may be anything, and an id
 * outside [0, n_ids) is never a hit. R and L are int32_t or int64_t, independently.
 */
#ifndef RANKEREVAL_LOOKUP_H
#define RANKEREVAL_LOOKUP_H

#include <cstdint>
#include <cstddef>

/* SSE2 is part of every x86-64 CPU: used without compiler flags or runtime dispatch */
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define RE_HAVE_SSE2 1
#else
#define RE_HAVE_SSE2 0
#endif

#if defined(__GNUC__) || defined(__clang__)
static inline int re_popcount(uint64_t x) { return __builtin_popcountll(x); }
static inline int re_ctz(uint64_t x) { return __builtin_ctzll(x); } /* x != 0 */
#define RE_RESTRICT __restrict__
#else
static inline int re_popcount(uint64_t x) { int c = 0; for (; x; x &= x - 1) ++c; return c; }
static inline int re_ctz(uint64_t x) { int c = 0; for (; !(x & 1); x >>= 1) ++c; return c; }
#define RE_RESTRICT
#endif

/* Ask for every cache line of p[0:bytes] (part of a row a few iterations ahead). When a loop
 * reads the first few items of each long row, the hardware prefetcher either misses them or,
 * seeing the addresses climb, streams the whole rows: reading 10 of 100 ids per row took as
 * long as reading all 100 (85 ns per row) on this project's benchmark machine, 17 ns with
 * these hints. */
static inline void re_prefetch(const void* p, Py_ssize_t bytes) {
#if defined(__GNUC__) || defined(__clang__)
    const char* end = (const char*) p + bytes;
    for (const char* c = (const char*) ((uintptr_t) p & ~(uintptr_t) 63); c < end; c += 64)
        __builtin_prefetch(c);
#else
    (void) p; (void) bytes;
#endif
}

/* Position of v in the sorted a[0:n], or -1: a lower bound whose loop body is a conditional
 * move, so its only branch (the loop) depends on n alone. */
template <typename L, typename V>
static inline Py_ssize_t re_search(const L* a, Py_ssize_t n, V v) {
    if (n == 0) return -1;
    const L* base = a;
    while (n > 1) {
        const Py_ssize_t half = n >> 1;
        base = ((int64_t) base[half] <= (int64_t) v) ? base + half : base;
        n -= half;
    }
    return ((int64_t) *base == (int64_t) v) ? base - a : -1;
}

/* Bit t of the result is set when r[t] (t < m <= 64) is one of lab[0:n]. Eight ranked items
 * are compared with each label at once: fixed-width loops the compiler turns into SIMD
 * compares (two SSE2 compares for eight int32 ids). Lanes past m never count. */
template <typename R, typename L>
static inline uint64_t re_block_hits(const R* r, Py_ssize_t m, const L* lab, Py_ssize_t n,
                                     uint64_t n_ids) {
    uint64_t mask = 0;
    for (Py_ssize_t c = 0; c < m; c += 8) {
        L blk[8], acc[8];
        for (int t = 0; t < 8; ++t) {
            const R x = (c + t < m) ? r[c + t] : (R) -1;
            blk[t] = ((uint64_t) x < n_ids) ? (L) x : (L) -1;  /* -1 matches no label */
            acc[t] = 0;
        }
        for (Py_ssize_t l = 0; l < n; ++l) {
            const L x = lab[l];
            for (int t = 0; t < 8; ++t) acc[t] |= (L) (blk[t] == x);
        }
        for (int t = 0; t < 8; ++t) mask |= (uint64_t) (acc[t] != 0) << (c + t);
    }
    /* a corrupted (negative) label could match the -1 of an unused lane: drop those lanes */
    return m >= 64 ? mask : mask & ((((uint64_t) 1) << m) - 1);
}

#if RE_HAVE_SSE2
/* The same for int32 ids on every x86-64 CPU, written out: per label, one broadcast and two
 * compares of four ids each (the compiler's version of the loop above spills its lanes). No
 * range check is needed: labels are in [0, n_ids), so an id outside can equal none of them. */
static inline uint64_t re_block_hits(const int32_t* r, Py_ssize_t m, const int32_t* lab,
                                     Py_ssize_t n, uint64_t n_ids) {
    (void) n_ids;
    uint64_t mask = 0;
    for (Py_ssize_t c = 0; c < m; c += 8) {
        int32_t tail[8];
        const int32_t* src = r + c;
        if (m - c < 8) {  /* never read past the row: copy the last few ids, pad with -1 */
            for (int t = 0; t < 8; ++t) tail[t] = (c + t < m) ? src[t] : -1;
            src = tail;
        }
        const __m128i b0 = _mm_loadu_si128((const __m128i*) src);
        const __m128i b1 = _mm_loadu_si128((const __m128i*) (src + 4));
        __m128i a0 = _mm_setzero_si128(), a1 = _mm_setzero_si128();
        for (Py_ssize_t l = 0; l < n; ++l) {
            const __m128i x = _mm_set1_epi32(lab[l]);
            a0 = _mm_or_si128(a0, _mm_cmpeq_epi32(b0, x));
            a1 = _mm_or_si128(a1, _mm_cmpeq_epi32(b1, x));
        }
        const uint64_t bits8 = (uint64_t) (_mm_movemask_ps(_mm_castsi128_ps(a0))
                                           | (_mm_movemask_ps(_mm_castsi128_ps(a1)) << 4));
        mask |= bits8 << c;
    }
    return m >= 64 ? mask : mask & ((((uint64_t) 1) << m) - 1);
}
#endif

/* scan: compare every ranked item with every label; for short cutoffs and short label rows */
template <typename R, typename L>
static inline Py_ssize_t re_scan_hits(const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                      uint64_t n_ids, int32_t* RE_RESTRICT hit_rank,
                                      bool first_only) {
    Py_ssize_t n_hits = 0;
    for (Py_ssize_t c = 0; c < kk; c += 64) {
        uint64_t mask = re_block_hits(row + c, kk - c < 64 ? kk - c : 64, lab, n, n_ids);
        while (mask) {
            hit_rank[n_hits++] = (int32_t) (c + re_ctz(mask));
            if (first_only) return n_hits;
            mask &= mask - 1;
        }
    }
    return n_hits;
}

/* bitset: set (value = true) or clear the bits of a label row's items */
template <typename L>
static inline void re_bitset_mark(uint64_t* RE_RESTRICT bits, const L* lab, Py_ssize_t n,
                                  uint64_t n_ids, bool value) {
    for (Py_ssize_t l = 0; l < n; ++l) {
        const uint64_t x = (uint64_t) lab[l];
        if (x < n_ids) {
            if (value) bits[x >> 6] |= ((uint64_t) 1) << (x & 63);
            else bits[x >> 6] = 0;
        }
    }
}

/* bitset: one bit test per ranked item (the row's bits are set). bits has n_words + 1 words,
 * the last always zero: an id past the bitset reads that word, so the loop has no branch on
 * the data. (Ids from n_ids up to the end of the last real word read bits never set.) */
template <bool FirstOnly, typename R>
static inline Py_ssize_t re_bitset_hits_t(const R* row, Py_ssize_t kk,
                                          const uint64_t* RE_RESTRICT bits, uint64_t n_words,
                                          int32_t* RE_RESTRICT hit_rank) {
    Py_ssize_t n_hits = 0;
    for (Py_ssize_t j = 0; j < kk; ++j) {
        const uint64_t x = (uint64_t) row[j];
        uint64_t word = x >> 6;
        word = word < n_words ? word : n_words;
        const Py_ssize_t h = (Py_ssize_t) ((bits[word] >> (x & 63)) & 1);
        hit_rank[n_hits] = (int32_t) j;
        n_hits += h;
        if (FirstOnly && h) break;
    }
    return n_hits;
}

template <typename R>
static inline Py_ssize_t re_bitset_hits(const R* row, Py_ssize_t kk, const uint64_t* bits,
                                        uint64_t n_words, int32_t* hit_rank, bool first_only) {
    return first_only ? re_bitset_hits_t<true>(row, kk, bits, n_words, hit_rank)
                      : re_bitset_hits_t<false>(row, kk, bits, n_words, hit_rank);
}

/* binary search of each ranked item in the sorted label row; also records where */
template <bool FirstOnly, typename R, typename L>
static inline Py_ssize_t re_search_hits_t(const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                          int32_t* RE_RESTRICT hit_rank,
                                          int32_t* RE_RESTRICT hit_pos) {
    Py_ssize_t n_hits = 0;
    for (Py_ssize_t j = 0; j < kk; ++j) {
        const Py_ssize_t p = re_search(lab, n, row[j]);
        const Py_ssize_t h = p >= 0;
        hit_rank[n_hits] = (int32_t) j;
        hit_pos[n_hits] = (int32_t) p;
        n_hits += h;
        if (FirstOnly && h) break;
    }
    return n_hits;
}

template <typename R, typename L>
static inline Py_ssize_t re_search_hits(const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                        int32_t* hit_rank, int32_t* hit_pos, bool first_only) {
    return first_only ? re_search_hits_t<true>(row, kk, lab, n, hit_rank, hit_pos)
                      : re_search_hits_t<false>(row, kk, lab, n, hit_rank, hit_pos);
}

#endif
