/* Top-k selection of Rankings.from_scores (the row kernels of _topk.pyx): the paths.
 *
 * The algorithm (_topk_algo.h) is compiled once per path, each time over the traits of one
 * instruction set (_topk_traits.h: the interface; _topk_portable.h, _topk_avx2.h,
 * _topk_avx512.h) and for that instruction set, as a whole, in a namespace of its own (the
 * manner of Highway's per-target compilation). _topk.pyx picks a path's row function from
 * re_topk_paths once per call: the best the CPU has (re_topk_path_supported), detected at
 * import, or the one a test forces.
 */
#ifndef RANKEREVAL_TOPK_H
#define RANKEREVAL_TOPK_H

#include "_topk_traits.h"
#include "_topk_portable.h"
#include "_topk_avx2.h"
#include "_topk_avx512.h"

/* Score types, as rankereval/data/_conversion.py numbers them (_SCORE_CODES). */
enum re_score_code { RE_F32, RE_F64, RE_F16, RE_I8, RE_I16, RE_I32, RE_I64, RE_U8, RE_U16, RE_U32, RE_U64 };

/* How a row's candidates are given (the row function's `mode`). */
enum re_topk_mode {
    RE_DENSE,  /* scores[0:len] of items 0..len-1 */
    RE_LISTED, /* scores[0:m], only the sorted ids[0:len] */
    RE_SPARSE  /* (ids[p], scores[p]) for p < len, ids ascending; filtered by [keep, keep_end) */
};

namespace re_path_portable {
typedef re_isa_portable I;
#include "_topk_algo.h"
}  // namespace re_path_portable

#if RE_TOPK_X86
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,f16c,popcnt"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,f16c,popcnt")
#endif
namespace re_path_avx2 {
typedef re_isa_avx2 I;
#include "_topk_algo.h"
}  // namespace re_path_avx2
#if defined(__clang__)
#pragma clang attribute pop
#pragma clang attribute push(__attribute__((target("avx2,f16c,popcnt,avx512f"))), apply_to = function)
#else
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,f16c,popcnt,avx512f")
#endif
namespace re_path_avx512 {
typedef re_isa_avx512 I;
#include "_topk_algo.h"
}  // namespace re_path_avx512
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif /* RE_TOPK_X86 */

/* One row of any score type into int32 or int64 output ids, out[0:width]: the ranking, then
 * -1. `next`: the dense row this thread ranks next, or NULL (read ahead). */
typedef void (*re_topk_row_fn)(int code, bool out64, int mode, const void* scores, const int64_t* ids,
                               Py_ssize_t len, Py_ssize_t m, const int64_t* keep, const int64_t* keep_end,
                               Py_ssize_t k, const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap,
                               void* out, Py_ssize_t width, int64_t* out_len, int64_t* n_bad, const void* next);
/* The threshold a dense float32 row starts from at k; false where it starts from none. */
typedef bool (*re_topk_sampled_fn)(const float* row, Py_ssize_t m, Py_ssize_t k, float* t);

struct re_topk_path {
    const char* name;
    re_topk_row_fn row;
    re_topk_sampled_fn sampled;
};

enum { RE_PATH_PORTABLE, RE_PATH_AVX2, RE_PATH_AVX512, RE_N_PATHS };

static const re_topk_path re_topk_paths[RE_N_PATHS] = {
    {"portable", re_path_portable::re_topk_row, re_path_portable::re_sampled_threshold_f32},
#if RE_TOPK_X86
    {"avx2", re_path_avx2::re_topk_row, re_path_avx2::re_sampled_threshold_f32},
    {"avx512", re_path_avx512::re_topk_row, re_path_avx512::re_sampled_threshold_f32},
#else
    {"avx2", NULL, NULL},
    {"avx512", NULL, NULL},
#endif
};

/* Whether path p is compiled and the CPU has its instructions */
static inline bool re_topk_path_supported(int p) {
    if (p == RE_PATH_PORTABLE) return true;
#if RE_TOPK_X86
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c") &&
                      __builtin_cpu_supports("popcnt");
    if (p == RE_PATH_AVX2) return avx2;
    if (p == RE_PATH_AVX512) return avx2 && __builtin_cpu_supports("avx512f");
#endif
    return false;
}

static inline const char* re_topk_path_name(int p) { return re_topk_paths[p].name; }
static inline re_topk_row_fn re_topk_path_row(int p) { return re_topk_paths[p].row; }
static inline re_topk_sampled_fn re_topk_path_sampled(int p) { return re_topk_paths[p].sampled; }

#endif /* RANKEREVAL_TOPK_H */
