/* Top-k with AVX2 (included by _topk.h, which chooses it at run time: re_topk_isa): the
 * block scan of _topk.h (re_scan_blocks, re_block_test), the same source compiled for AVX2,
 * which the compiler vectorises 8 float32 or 4 float64/int64 scores an instruction (int64:
 * vpcmpgtq, which SSE2 lacks).
 *
 * What it buys (benchmarks/bench_topk_paths.py, docs/guide/performance.rst): against the
 * same scan compiled for SSE2, 20 000 scores a row with 1M exclusions over 20 000 rows,
 * two threads, in one process taking turns: MEASURED_BELOW. */
#ifndef RANKEREVAL_TOPK_AVX2_H
#define RANKEREVAL_TOPK_AVX2_H

#define RE_AVX2 __attribute__((target("avx2")))

template <typename T, typename ID>
RE_AVX2 static void re_scan_blocks_avx2(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    re_scan_blocks<re_block_test>(row, m, st);
}

#endif /* RANKEREVAL_TOPK_AVX2_H */
