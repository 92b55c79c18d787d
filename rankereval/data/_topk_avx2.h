/* Top-k with AVX2 (included by _topk.h, which chooses it at run time: re_topk_isa): the
 * compress scan's kernel (re_compress_avx2, below; where many scores pass the sampled
 * threshold), and the block scan of _topk.h (re_scan_blocks) compiled for AVX2 and F16C,
 * with the block test of float32, float64 and float16 scores (float16 converted to
 * float32: vcvtph2ps; exact, and NaN, infinities and signed zeros keep their order and
 * ties) written for it, 8 scores an instruction: "not x <= t, or x == -inf" (t is
 * finite) flags the scores above t and the NaN and infinite ones in two comparisons; int64
 * and the other integers: the portable test, which the compiler vectorises (int64 with
 * vpcmpgtq, which SSE2 lacks).
 *
 * What it buys over the portable core compiled for SSE2: benchmarks/bench_topk.py --paths,
 * whose table is on docs/guide/performance.rst (2 000 x 20 000 scores). With the portable
 * block test compiled for AVX2 instead of these, float16 took 1.4-1.7x the time and
 * float64 at k = 10 1.25-1.4x (4 000 x 20 000, 2 threads, against the code before). */
#ifndef RANKEREVAL_TOPK_AVX2_H
#define RANKEREVAL_TOPK_AVX2_H

#define RE_AVX2_F16C __attribute__((target("avx2,f16c")))

struct re_block_test_avx2 : re_block_test {
    using re_block_test::test;
    /* F: float32 vectors of 8 scores, each loaded by LOAD(q) */
#define RE_FLAG8(LOAD, VT)                                                                          \
    const __m256 minus_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());               \
    __m256 f[4], any = _mm256_setzero_ps();                                                         \
    for (int q = 0; q < 4; ++q) {                                                                   \
        const __m256 x = LOAD;                                                                      \
        f[q] = _mm256_or_ps(_mm256_cmp_ps(x, VT, _CMP_NLE_UQ), _mm256_cmp_ps(x, minus_inf, _CMP_EQ_OQ)); \
        any = _mm256_or_ps(any, f[q]);                                                              \
    }                                                                                               \
    if (!_mm256_movemask_ps(any)) return 0;                                                         \
    uint32_t mask = 0;                                                                              \
    for (int q = 0; q < 4; ++q) mask |= (uint32_t) _mm256_movemask_ps(f[q]) << (8 * q);            \
    return mask;

    RE_AVX2_F16C static inline uint32_t test(const float* p, float t) {
        const __m256 vt = _mm256_set1_ps(t);
        RE_FLAG8(_mm256_loadu_ps(p + 8 * q), vt)
    }
    RE_AVX2_F16C static inline uint32_t test(const re_half* p, re_half t) {
        const __m256 vt = _mm256_set1_ps(_cvtsh_ss(t.bits));
        RE_FLAG8(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*) (p + 8 * q))), vt)
    }
#undef RE_FLAG8
    RE_AVX2_F16C static inline uint32_t test(const double* p, double t) {
        const __m256d vt = _mm256_set1_pd(t), minus_inf = _mm256_set1_pd(-std::numeric_limits<double>::infinity());
        __m256d f[8], any = _mm256_setzero_pd();
        for (int q = 0; q < 8; ++q) {
            const __m256d x = _mm256_loadu_pd(p + 4 * q);
            f[q] = _mm256_or_pd(_mm256_cmp_pd(x, vt, _CMP_NLE_UQ), _mm256_cmp_pd(x, minus_inf, _CMP_EQ_OQ));
            any = _mm256_or_pd(any, f[q]);
        }
        if (!_mm256_movemask_pd(any)) return 0;
        uint32_t mask = 0;
        for (int q = 0; q < 8; ++q) mask |= (uint32_t) _mm256_movemask_pd(f[q]) << (4 * q);
        return mask;
    }
};

/* flatten: re_scan_blocks and the tests inlined into this function, compiled for its target */
template <typename T, typename ID>
__attribute__((target("avx2,f16c"), flatten)) static void re_scan_blocks_avx2(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    re_scan_blocks<re_block_test_avx2>(row, m, st);
}

/* The compress scan's kernel (re_compress_scan of _topk.h): each 32 scores compared with t,
 * the block's flags less its exclusions, and the ids of each 8 moved to the front by a
 * permutation (vpermd, its lanes from a table of the 256 masks) of the block's ids, which
 * advance by an addition. NaN and infinite scores are flagged with the scores above t ("not
 * x <= t, or x == -inf", as in the block test) and left out and counted when the ids become
 * entries (a few thousand a row at most), so the first pass is exact: no watching, and no
 * second pass. */
#define RE_AVX2_POPCNT __attribute__((target("avx2,f16c,popcnt")))

struct re_compress_avx2 {
    /* From k >= m / 128, int32 from k >= m / 256: below that the block scan, which skips
     * the blocks without flagged scores, was as fast or faster (4 000 x 20 000 scores with
     * 200 000 exclusions, k = 100, this scan against the block scan in one process: float32
     * 1.04-1.08x the time in 5 runs, 0.89x in one without exclusions; float64 1.06-1.07x
     * in 2; int32 0.82-0.99x in 5) */
    template <typename T>
    static inline Py_ssize_t parts() {
        return std::numeric_limits<T>::is_integer && sizeof(T) == 4 ? 256 : 128;
    }
    struct table { /* for each 8-bit mask, its set bits' lanes first (then zeros) */
        uint8_t lanes[256][8];
        table() {
            for (int mask = 0; mask < 256; ++mask) {
                int w = 0;
                for (int b = 0; b < 8; ++b)
                    if (mask >> b & 1) lanes[mask][w++] = (uint8_t) b;
                for (; w < 8; ++w) lanes[mask][w] = 0;
            }
        }
    };
    static const table& lanes() {
        static const table t; /* built once, on first use (thread-safe) */
        return t;
    }

    /* the flags of a block of 32 scores: above t, NaN or infinite (t is finite) */
#define RE_FLAGS(T, V, SUF, W)                                                                       \
    RE_AVX2_POPCNT static inline V set1(T t) { return _mm256_set1_##SUF(t); }                         \
    RE_AVX2_POPCNT static inline uint32_t flags(const T* p, V vt) {                                   \
        const V minus_inf = _mm256_set1_##SUF(-std::numeric_limits<T>::infinity());                  \
        uint32_t f = 0;                                                                              \
        for (int q = 0; q < 32 / W; ++q) {                                                           \
            const V x = _mm256_loadu_##SUF(p + W * q);                                              \
            f |= (uint32_t) _mm256_movemask_##SUF(_mm256_or_##SUF(_mm256_cmp_##SUF(x, vt, _CMP_NLE_UQ), \
                                                                 _mm256_cmp_##SUF(x, minus_inf, _CMP_EQ_OQ))) \
                 << (W * q);                                                                         \
        }                                                                                            \
        return f;                                                                                    \
    }
    RE_FLAGS(float, __m256, ps, 8)
    RE_FLAGS(double, __m256d, pd, 4)
#undef RE_FLAGS
    RE_AVX2_POPCNT static inline __m256i set1(int32_t t) { return _mm256_set1_epi32(t); }
    RE_AVX2_POPCNT static inline __m256i set1(int64_t t) { return _mm256_set1_epi64x((long long) t); }
    RE_AVX2_POPCNT static inline uint32_t flags(const int32_t* p, __m256i vt) {
        uint32_t f = 0;
        for (int q = 0; q < 4; ++q)
            f |= (uint32_t) _mm256_movemask_ps(_mm256_castsi256_ps(
                     _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i*) (p + 8 * q)), vt)))
                 << (8 * q);
        return f;
    }
    RE_AVX2_POPCNT static inline uint32_t flags(const int64_t* p, __m256i vt) {
        uint32_t f = 0;
        for (int q = 0; q < 8; ++q)
            f |= (uint32_t) _mm256_movemask_pd(_mm256_castsi256_pd(
                     _mm256_cmpgt_epi64(_mm256_loadu_si256((const __m256i*) (p + 4 * q)), vt)))
                 << (4 * q);
        return f;
    }

    template <bool EXACT, typename T>
    RE_AVX2_POPCNT static inline bool blocks(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st,
                                             re_compress_state<T, re_compress_avx2>& cs, Py_ssize_t& j) {
        const table& tab = lanes();
        const __m256i eight = _mm256_set1_epi32(8);
        __m256i id8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); /* the ids of the next 8 scores */
        auto vt = set1(st.t);
        for (j = 0; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
            if (cs.block()) vt = set1(st.t);
            const uint32_t keep = flags(row + j, vt) & ~cs.excluded(j);
            for (int q = 0; q < 4; ++q) {
                const uint32_t mask = (keep >> (8 * q)) & 0xff;
                const __m256i perm = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i*) tab.lanes[mask]));
                _mm256_storeu_si256((__m256i*) (cs.ids + cs.w), _mm256_permutevar8x32_epi32(id8, perm));
                cs.w += __builtin_popcount(mask);
                id8 = _mm256_add_epi32(id8, eight);
            }
        }
        return true;
    }

    /* the entries of the ids, NaN and infinite scores left out and counted in bad */
    template <typename T>
    static inline Py_ssize_t entries(const T* row, const int32_t* ids, Py_ssize_t n, re_entry<T, int32_t>* out,
                                     int64_t& bad) {
        Py_ssize_t w = 0;
        for (Py_ssize_t i = 0; i < n; ++i) {
            const T v = row[ids[i]];
            const bool is_bad = re_score<T>::bad(v);
            out[w].v = v;
            out[w].id = ids[i];
            bad += (int64_t) is_bad;
            w += (Py_ssize_t) !is_bad;
        }
        return w;
    }

    template <typename T>
    __attribute__((target("avx2,f16c,popcnt"), flatten)) static void scan(const T* row, Py_ssize_t m,
                                                                          re_topk<T, int32_t>& st) {
        re_compress_scan<re_compress_avx2>(row, m, st);
    }
};

#endif /* RANKEREVAL_TOPK_AVX2_H */
