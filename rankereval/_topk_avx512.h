/* Top-k with AVX-512 (included by _topk.h, which chooses it at run time: re_topk_isa).
 *
 * The compress scan: the dense scan of a row from a sampled threshold that many scores
 * pass (k >= m / 256: a few in a thousand or more; float32, float64, int32 and int64
 * scores, int32 ids). The block scan of _topk.h visits the flagged scores of each block one
 * by one, and its branches are mispredicted about once a flagged block; here nothing
 * depends on the scores but the rare: each 16 (or 8) scores are compared with t, the ids of
 * the ones above it moved to the front of a vector (vpcompressd) and stored at the end of
 * an array (the values region of the scratch), which then grows by their number (stores
 * past the end are overwritten later). Their scores are read back from the row (in the
 * cache) into buffer entries before a compaction, which happens between blocks when the
 * buffer might fill, and at the end. The row's exclusions are set as bits of a per-thread
 * mask first (and cleared after), loaded straight into mask registers a block at a time;
 * the ids of a block advance by an addition (a broadcast, or a move from a general
 * register, would take the port that the comparisons and the compress share). NaN and
 * infinite scores are watched as a sum of 0 x score over the candidates (finite scores
 * leave it 0, the others make it NaN: one multiply-add a vector), tested once a row; a row
 * that has one is scanned again, exactly: each block's NaN and infinite scores left out
 * and counted.
 *
 * What it buys (benchmarks/bench_topk_paths.py, docs/guide/performance.rst): 20 000 scores
 * a row with 1M exclusions over 20 000 rows, two threads, against the AVX2 block scan in
 * one process taking turns: float32 1.3x at k = 100 and 1.6x at k = 1000, int32 1.3-1.6x,
 * float64 and int64 1.2-1.5x. */
#ifndef RANKEREVAL_TOPK_AVX512_H
#define RANKEREVAL_TOPK_AVX512_H

#define RE_AVX512 __attribute__((target("avx512f,popcnt")))

/* The vectors of the compress scan for each score type: a block of RE_TOPK_BLOCK scores as
 * VECS vectors of LANES; its exclusions, bits of the row's mask, as a mask per vector; a
 * vector's scores above t; and whether any score is NaN or infinite (integers: none). */
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

struct re_v512_int { /* integer scores are all finite */
    typedef __m512i V;
    RE_AVX512 static inline __mmask16 finite(__mmask16 c, V) { return c; }
    RE_AVX512 static inline __mmask16 not_finite(__mmask16, V) { return 0; }
    RE_AVX512 static inline __m512i watch(__m512i sum, __mmask16, V) { return sum; }
    RE_AVX512 static inline bool any_bad(__m512i) { return false; }
};

/* float32 and float64: PS/PD are _ps/_pd intrinsics through one macro */
#define RE_V512_FLOAT(T, BASE, VT, SUF, MASK)                                                        \
    template <>                                                                                      \
    struct re_v512<T> : BASE {                                                                       \
        typedef VT V;                                                                                \
        RE_AVX512 static inline V load(const T* p) { return _mm512_loadu_##SUF(p); }                 \
        RE_AVX512 static inline V set1(T t) { return _mm512_set1_##SUF(t); }                         \
        RE_AVX512 static inline V inf() { return _mm512_set1_##SUF(std::numeric_limits<T>::infinity()); } \
        RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {                             \
            return _mm512_mask_cmp_##SUF##_mask((MASK) c, v, t, _CMP_GT_OQ);                         \
        }                                                                                            \
        RE_AVX512 static inline __mmask16 finite(__mmask16 c, V v) {                                 \
            return _mm512_mask_cmp_##SUF##_mask((MASK) c, v, inf(), _CMP_LT_OQ);                     \
        }                                                                                            \
        RE_AVX512 static inline __mmask16 not_finite(__mmask16 c, V v) {                             \
            return _mm512_mask_cmp_##SUF##_mask((MASK) c, _mm512_abs_##SUF(v), inf(), _CMP_NLT_UQ);   \
        }                                                                                            \
        RE_AVX512 static inline __m512i watch(__m512i sum, __mmask16 c, V v) {                       \
            return _mm512_cast##SUF##_si512(                                                         \
                _mm512_mask3_fmadd_##SUF(v, _mm512_setzero_##SUF(), _mm512_castsi512_##SUF(sum), (MASK) c)); \
        }                                                                                            \
        RE_AVX512 static inline bool any_bad(__m512i sum) {                                          \
            const V s = _mm512_castsi512_##SUF(sum);                                                 \
            return _mm512_cmp_##SUF##_mask(s, s, _CMP_UNORD_Q) != 0;                                 \
        }                                                                                            \
    };
RE_V512_FLOAT(float, re_v512_16, __m512, ps, __mmask16)
RE_V512_FLOAT(double, re_v512_8, __m512d, pd, __mmask8)
#undef RE_V512_FLOAT

template <>
struct re_v512<int32_t> : re_v512_16, re_v512_int {
    RE_AVX512 static inline V load(const int32_t* p) { return _mm512_loadu_si512((const void*) p); }
    RE_AVX512 static inline V set1(int32_t t) { return _mm512_set1_epi32(t); }
    RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) { return _mm512_mask_cmpgt_epi32_mask(c, v, t); }
};

template <>
struct re_v512<int64_t> : re_v512_8, re_v512_int {
    RE_AVX512 static inline V load(const int64_t* p) { return _mm512_loadu_si512((const void*) p); }
    RE_AVX512 static inline V set1(int64_t t) { return _mm512_set1_epi64((long long) t); }
    RE_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {
        return _mm512_mask_cmpgt_epi64_mask((__mmask8) c, v, t);
    }
};

/* The state of a compress scan between its blocks: the ids of the scores above the
 * threshold so far (an array of cap + 16, in the values region of the scratch) and their
 * number w, the row's exclusion mask, the NaN/infinite count and the read-ahead; made
 * with no candidates (the first pass of a row), and put into the buffer's entries (the
 * scores read again from the row, in the cache) before a compaction and at the end. */
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

    re_compress_state(re_topk<T, int32_t>& st_, const T* row_, Py_ssize_t m)
        : st(st_), row(row_), ids((int32_t*) (st_.base + (size_t) st_.cap * 32)),
          xmask((uint16_t*) (st_.base + re_topk_scratch_fixed(st_.cap))), w(0), bad(0), ra(st_.ra),
          lines((int) (RE_TOPK_BLOCK * sizeof(T) / 64) / (st_.k * 32 < m ? 1 : 2)) {
        for (const int64_t* e = st.x; e < st.x_end; ++e)
            if (*e < m) xmask[*e / 16] = (uint16_t) (xmask[*e / 16] | 1u << (*e % 16));
    }

    inline void to_entries() {
        for (Py_ssize_t i = 0; i < w; ++i) {
            st.buf[i].v = row[ids[i]];
            st.buf[i].id = ids[i];
        }
        st.n = w;
    }

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
        st.n_bad += bad;
        st.ra = ra;
        to_entries();
        for (; j < m; ++j)
            if (re_flag(row[j], st.t)) st.offer(row[j], j);
    }
};

/* The blocks of the compress scan. EXACT: NaN and infinite scores are looked for in each
 * block (and left out and counted where found); otherwise the candidates' scores are only
 * watched, and the pass returns false, its candidates to be dropped, when a score was NaN
 * or infinite. */
template <bool EXACT, typename T>
RE_AVX512 static RE_ALWAYS_INLINE bool re_compress_blocks(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st,
                                                          re_compress_state<T>& cs, Py_ssize_t& j) {
    typedef re_v512<T> C;
    enum { VECS = RE_TOPK_BLOCK / C::LANES };
    const __m512i step = _mm512_set1_epi32(RE_TOPK_BLOCK);
    typename C::V vt = C::set1(st.t);
    __m512i ids[VECS]; /* the ids of the block's vectors (the first LANES lanes) */
    for (int q = 0; q < VECS; ++q)
        ids[q] = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                  _mm512_set1_epi32(q * C::LANES));
    __m512i watched = _mm512_setzero_si512();
    for (j = 0; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
        if (cs.block()) vt = C::set1(st.t);
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

/* The compress scan of a row: a first pass that tests the candidates' watched sum only once,
 * at its end, and in the rare row where a candidate is NaN or infinite a second, exact pass
 * from the same start (no candidates, the sampled threshold). */
template <typename T>
RE_AVX512 static void re_compress_scan_avx512(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    re_compress_state<T> cs(st, row, m);
    Py_ssize_t j = 0;
    const T t0 = st.t;
    if (!re_compress_blocks<false>(row, m, st, cs, j)) {
        cs.w = 0;
        st.n = 0;
        st.t = t0;
        st.compacted = false;
        re_compress_blocks<true>(row, m, st, cs, j);
    }
    cs.finish(m, j);
}

/* The compress scan where it applies (returns false elsewhere): float32, float64, int32 or
 * int64 scores, int32 ids, the first pass over a row from a sampled threshold with many
 * scores above it, and a buffer with room for a block past its compaction point. */
template <typename T, typename ID>
static inline bool re_scan_compress_avx512(const T*, Py_ssize_t, re_topk<T, ID>&) {
    return false;
}
template <typename T>
static inline bool re_scan_compress_avx512_if(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    if (!st.have_t || st.have_hi || st.n != 0 || st.compacted || st.k * 256 < m || st.cap < st.k + 2 * RE_TOPK_BLOCK)
        return false;
    re_compress_scan_avx512(row, m, st);
    return true;
}
#define RE_COMPRESS_TYPE(T)                                                                     \
    static inline bool re_scan_compress_avx512(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) { \
        return re_scan_compress_avx512_if(row, m, st);                                          \
    }
RE_COMPRESS_TYPE(float)
RE_COMPRESS_TYPE(double)
RE_COMPRESS_TYPE(int32_t)
RE_COMPRESS_TYPE(int64_t)
#undef RE_COMPRESS_TYPE

#endif /* RANKEREVAL_TOPK_AVX512_H */
