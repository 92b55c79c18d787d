/* Top-k with AVX2 (included by _topk.h, which chooses it at run time: re_topk_isa): the
 * block scan of _topk.h (re_scan_blocks) compiled for AVX2 and F16C, with the block test of
 * float32, float64 and float16 scores (float16 converted to float32: vcvtph2ps; exact, and
 * NaN, infinities and signed zeros keep their order and ties) written for it, 8 scores an
 * instruction: "not x <= t, or x == -inf" (t is finite) flags the scores above t and the
 * NaN and infinite ones in two comparisons; int64 and the other integers: the portable
 * test, which the compiler vectorises (int64 with vpcmpgtq, which SSE2 lacks).
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

#endif /* RANKEREVAL_TOPK_AVX2_H */
