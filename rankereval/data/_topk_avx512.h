/* Top-k: the primitives of the AVX-512 path (the interface: _topk_traits.h), over the AVX2
 * ones: the compress scan with vpcompressd, the sample's keys (float32) and their k-th key
 * by bisection on all the keys at once, the winners' words (float32 scores, int32 ids) made
 * 8 at a time and sorted by buckets and transposition rounds. */
#ifndef RANKEREVAL_TOPK_AVX512_H
#define RANKEREVAL_TOPK_AVX512_H

#include "_topk_avx2.h"

#if RE_TOPK_X86

/* The vectors of the compress scan for each score type: a block of RE_TOPK_BLOCK scores as
 * VECS vectors of LANES; its exclusions, bits of the row's mask, as a mask per vector; a
 * vector's scores above t; and whether any score is NaN or infinite (integers: none). */
template <typename T>
struct re_v512;

struct re_v512_16 { /* 16 scores a vector (float32, int32) */
    enum { LANES = 16 };
    /* loaded straight into mask registers (GCC loads _load_mask16 into a general register
     * first, and the move from there takes port 5) */
    RE_TARGET_AVX512 static inline void candidates(const uint16_t* x, __mmask16* c) {
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
    RE_TARGET_AVX512 static inline void candidates(const uint16_t* x, __mmask16* c) {
        const uint32_t ex = ~((uint32_t) x[0] | (uint32_t) x[1] << 16);
        for (int q = 0; q < 4; ++q) c[q] = (__mmask16) ((ex >> (8 * q)) & 0xff);
    }
};

struct re_v512_int { /* integer scores are all finite */
    typedef __m512i V;
    RE_TARGET_AVX512 static inline __mmask16 finite(__mmask16 c, V) { return c; }
    RE_TARGET_AVX512 static inline __mmask16 not_finite(__mmask16, V) { return 0; }
    RE_TARGET_AVX512 static inline __m512i watch(__m512i sum, __mmask16, V) { return sum; }
    RE_TARGET_AVX512 static inline bool any_bad(__m512i) { return false; }
};

/* float32 and float64: PS/PD are _ps/_pd intrinsics through one macro */
#define RE_V512_FLOAT(T, BASE, VT, SUF, MASK)                                                        \
    template <>                                                                                      \
    struct re_v512<T> : BASE {                                                                       \
        typedef VT V;                                                                                \
        RE_TARGET_AVX512 static inline V load(const T* p) { return _mm512_loadu_##SUF(p); }                 \
        RE_TARGET_AVX512 static inline V set1(T t) { return _mm512_set1_##SUF(t); }                         \
        RE_TARGET_AVX512 static inline V inf() { return _mm512_set1_##SUF(std::numeric_limits<T>::infinity()); } \
        RE_TARGET_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {                             \
            return _mm512_mask_cmp_##SUF##_mask((MASK) c, v, t, _CMP_GT_OQ);                         \
        }                                                                                            \
        RE_TARGET_AVX512 static inline __mmask16 finite(__mmask16 c, V v) {                                 \
            return _mm512_mask_cmp_##SUF##_mask((MASK) c, v, inf(), _CMP_LT_OQ);                     \
        }                                                                                            \
        RE_TARGET_AVX512 static inline __mmask16 not_finite(__mmask16 c, V v) {                             \
            return _mm512_mask_cmp_##SUF##_mask((MASK) c, _mm512_abs_##SUF(v), inf(), _CMP_NLT_UQ);   \
        }                                                                                            \
        RE_TARGET_AVX512 static inline __m512i watch(__m512i sum, __mmask16 c, V v) {                       \
            return _mm512_cast##SUF##_si512(                                                         \
                _mm512_mask3_fmadd_##SUF(v, _mm512_setzero_##SUF(), _mm512_castsi512_##SUF(sum), (MASK) c)); \
        }                                                                                            \
        RE_TARGET_AVX512 static inline bool any_bad(__m512i sum) {                                          \
            const V s = _mm512_castsi512_##SUF(sum);                                                 \
            return _mm512_cmp_##SUF##_mask(s, s, _CMP_UNORD_Q) != 0;                                 \
        }                                                                                            \
    };
RE_V512_FLOAT(float, re_v512_16, __m512, ps, __mmask16)
RE_V512_FLOAT(double, re_v512_8, __m512d, pd, __mmask8)
#undef RE_V512_FLOAT

template <>
struct re_v512<int32_t> : re_v512_16, re_v512_int {
    RE_TARGET_AVX512 static inline V load(const int32_t* p) { return _mm512_loadu_si512((const void*) p); }
    RE_TARGET_AVX512 static inline V set1(int32_t t) { return _mm512_set1_epi32(t); }
    RE_TARGET_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) { return _mm512_mask_cmpgt_epi32_mask(c, v, t); }
};

template <>
struct re_v512<int64_t> : re_v512_8, re_v512_int {
    RE_TARGET_AVX512 static inline V load(const int64_t* p) { return _mm512_loadu_si512((const void*) p); }
    RE_TARGET_AVX512 static inline V set1(int64_t t) { return _mm512_set1_epi64((long long) t); }
    RE_TARGET_AVX512 static inline __mmask16 above(__mmask16 c, V v, V t) {
        return _mm512_mask_cmpgt_epi64_mask((__mmask8) c, v, t);
    }
};

/* The entries of the ids ids[0:n] of row, in the buffer (the scores read again, in the
 * cache); float32: 16 scores gathered at a time, interleaved with their ids. */
template <typename T>
static inline void re_entries_avx512(const T* row, const int32_t* ids, Py_ssize_t n, re_entry<T, int32_t>* out) {
    for (Py_ssize_t i = 0; i < n; ++i) {
        out[i].v = row[ids[i]];
        out[i].id = ids[i];
    }
}
RE_TARGET_AVX512 static void re_entries_avx512(const float* row, const int32_t* ids, Py_ssize_t n,
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
    for (; i < n; ++i) {
        out[i].v = row[ids[i]];
        out[i].id = ids[i];
    }
}

/* The words of write_packed (key above id) of float32 winners with int32 ids, 8 entries at
 * a time, with the smallest and largest key: the inverted order-preserving keys of
 * re_score<float> (ascending key: descending score), -0.0 made +0.0 first (they tie):
 * ~(b ^ (sign ? 0xffffffff : 0x80000000)) = b ^ (sign ? 0 : 0x7fffffff) */
RE_TARGET_AVX512 static void re_words_avx512(const re_entry<float, int32_t>* buf, Py_ssize_t n, uint32_t* key,
                                      uint64_t* words, uint32_t* lo, uint32_t* hi) {
    __m512i vlo = _mm512_set1_epi64(-1), vhi = _mm512_setzero_si512();
    for (Py_ssize_t i = 0; i < n; i += 8) {
        const __mmask8 m = (__mmask8) (n - i >= 8 ? 0xff : (1u << (n - i)) - 1);
        const __m512i e = _mm512_maskz_loadu_epi64(m, buf + i); /* 32-bit lanes: value, id, value, id, ... */
        const __m512i b = _mm512_castps_si512(_mm512_add_ps(_mm512_castsi512_ps(e), _mm512_setzero_ps()));
        const __m512i c = _mm512_xor_si512(b, _mm512_andnot_si512(_mm512_srai_epi32(b, 31), _mm512_set1_epi32(0x7fffffff)));
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
}

/* The compress scan's blocks (the traits' compress, below). EXACT: NaN and infinite scores
 * are looked for in each block (and left out and counted where found); otherwise the
 * candidates' scores are only watched (a sum of 0 x score: NaN once one is not finite), and
 * the pass returns false, its candidates to be dropped, when a score was NaN or infinite.
 * The ids of a block advance by an addition; the exclusions are loaded into mask registers. */
struct re_compress_avx512 {
    template <bool EXACT, typename T, typename CS>
    RE_TARGET_AVX512 static inline bool blocks(const T* row, Py_ssize_t m, CS& cs, Py_ssize_t& j) {
        typedef re_v512<T> C;
        enum { VECS = RE_TOPK_BLOCK / C::LANES };
        const __m512i step = _mm512_set1_epi32(RE_TOPK_BLOCK);
        typename C::V vt = C::set1(cs.threshold());
        __m512i ids[VECS]; /* the ids of the block's vectors (the first LANES lanes) */
        for (int q = 0; q < VECS; ++q)
            ids[q] = _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                      _mm512_set1_epi32(q * C::LANES));
        __m512i watched = _mm512_setzero_si512();
        for (j = 0; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
            if (cs.block()) vt = C::set1(cs.threshold());
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
};


/* The sample's keys of float32 rows: a chunk of 32 scores as two vectors, NaN and infinite
 * scores with key 0 (not counted in n_ok), and the smallest and largest key. */
RE_TARGET_AVX512 static inline void re_sample_keys_avx512(const float* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key,
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
}

/* The sampled threshold's bisection (the traits' kth_key) with AVX-512, on all the sampled
 * keys at once (16 compared a vector, without the histogram, whose increments of a few
 * popular counters form chains through memory): the largest key with at least r of the
 * keys at or above it. The keys become their offsets from the smallest, lo (in place), and
 * the offset is searched bit by bit from the highest bit of the keys' range, hi - lo, down
 * to 21 bits below it (the answer rounded down there: a few more scores pass). (A range,
 * not the highest bit where two keys differ: integer scores of either sign differ in the
 * sign bit whatever their range.) The first 8 bits are searched on all the keys, the others
 * on only those left between the bounds (into sub, room for ns keys). ns is a multiple of
 * 32. */
RE_TARGET_AVX512 static inline Py_ssize_t re_count_at_least_avx512(const uint32_t* key, Py_ssize_t n, uint32_t c) {
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

RE_TARGET_AVX512 static uint32_t re_sample_kth_avx512(uint32_t* key, Py_ssize_t ns, Py_ssize_t r, uint32_t lo, uint32_t hi,
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

/* Sorting up to 32 distinct 64-bit words in four registers (re_sort_small), for the fuller
 * buckets of the bucket sort below.
 *
 * The network is the bitonic sort written with ascending comparators only: merging two
 * sorted halves of 2m compares lane i with lane 2m - 1 - i (a "flip"), then each half is
 * sorted by half-cleaners of distances m / 2, ..., 1. A comparator stage in one register
 * is a permutation (each lane's partner), a min, a max and a blend (which lanes keep the
 * max). */
RE_TARGET_AVX512 static inline __m512i re_cx8(__m512i v, __m512i partner, __mmask8 take_max) {
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
RE_TARGET_AVX512 static inline __m512i re_clean8(__m512i v) {
    return re_cx8(re_cx8(re_cx8(v, RE_D4), RE_D2), RE_D1);
}

/* any 8 sorted */
RE_TARGET_AVX512 static inline __m512i re_sort8(__m512i v) {
    v = re_cx8(v, RE_D1);                  /* sorted pairs */
    v = re_cx8(re_cx8(v, RE_F4), RE_D1);   /* sorted fours */
    return re_cx8(re_cx8(re_cx8(v, RE_F8), RE_D2), RE_D1);
}

RE_TARGET_AVX512 static inline __m512i re_rev8(__m512i v) {
    return _mm512_permutexvar_epi64(_mm512_setr_epi64(7, 6, 5, 4, 3, 2, 1, 0), v);
}

/* a and b sorted: a, b become the 16 sorted (the flip across the two, then half-cleaners;
 * the upper half is left reversed, which keeps it bitonic) */
RE_TARGET_AVX512 static inline void re_merge16(__m512i& a, __m512i& b) {
    const __m512i rb = re_rev8(b);
    const __m512i lo = _mm512_min_epu64(a, rb), hi = _mm512_max_epu64(a, rb);
    a = re_clean8(lo);
    b = re_clean8(hi);
}

/* (a, b) and (c, d) sorted 16s: the 32 sorted */
RE_TARGET_AVX512 static inline void re_merge32(__m512i& a, __m512i& b, __m512i& c, __m512i& d) {
    const __m512i rd = re_rev8(d), rc = re_rev8(c);
    const __m512i l0 = _mm512_min_epu64(a, rd), l1 = _mm512_min_epu64(b, rc); /* the lower 16, bitonic */
    const __m512i u0 = _mm512_max_epu64(a, rd), u1 = _mm512_max_epu64(b, rc); /* the upper, reversed */
    a = re_clean8(_mm512_min_epu64(l0, l1)); /* half-cleaners of distance 8, then of 4, 2, 1 */
    b = re_clean8(_mm512_max_epu64(l0, l1));
    c = re_clean8(_mm512_min_epu64(u0, u1));
    d = re_clean8(_mm512_max_epu64(u0, u1));
}

/* w[0:len] sorted, 0 < len <= 32: masked loads fill the missing lanes with the largest word */
RE_TARGET_AVX512 static inline void re_sort_small(uint64_t* w, Py_ssize_t len) {
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

/* The bucket sort of the winners' words (the traits' sort_words): the first len of the words
 * src[0:n] (distinct; key[i], between lo and hi, is the top half of src[i], and is
 * overwritten) sorted into dst[0:len] (the others after them; dst has room for n + 16), when
 * their keys spread evenly enough: a counting pass puts them in about n buckets of equal
 * key ranges, and odd-even transposition rounds over the array (8 words a vector: each pair
 * of neighbours compared and ordered, the pairs starting at even, then at odd positions)
 * then sort every bucket at once: the comparisons across two buckets never swap, and L
 * rounds sort L words. At most RE_BUCKET_FEW rounds, fewer when two in a row swap nothing,
 * then each fuller bucket sorted alone by the sorting network above; and only as far as
 * the bucket that holds position len - 1. Returns false, having sorted nothing, when there
 * are 2^RE_BUCKET_BITS words or more or a bucket holds more than RE_BUCKET_ROUNDS (keys
 * bunched together: then the radix sort). No branch depends on a word. */
enum { RE_BUCKET_FEW = 4 };

RE_TARGET_AVX512 static bool re_bucket_sort_avx512(const uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len,
                                            uint32_t lo, uint32_t hi, uint64_t* dst, uint32_t* count, re_readahead& ra) {
    if (n >= ((Py_ssize_t) 1 << RE_BUCKET_BITS)) return false;
    /* the words into their buckets (the keys become their buckets, the counters their ends) */
    uint32_t nb;
    Py_ssize_t limit;
    const uint32_t most = re_bucket_starts<15>(key, n, len, lo, hi, count, ra, &nb, &limit);
    if (most > RE_BUCKET_ROUNDS) return false;
    for (Py_ssize_t i = 0; i < n; ++i) {
        if ((i & 15) == 0) ra.step();
        dst[count[key[i]]++] = src[i];
    }
    for (int i = 0; i < 16; ++i) dst[n + i] = ~(uint64_t) 0; /* the last vectors' padding: the largest */
    /* the transposition rounds */
    const __m512i partner = _mm512_setr_epi64(1, 0, 3, 2, 5, 4, 7, 6);
    bool clean_before = false;
    const uint32_t rounds = most < RE_BUCKET_FEW ? most : (uint32_t) RE_BUCKET_FEW;
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
    if (most <= RE_BUCKET_FEW) return true;
    /* the fuller buckets one by one, 16 buckets' sizes looked at a time (count[b]: the end of
     * bucket b) */
    const __m512i before = _mm512_setr_epi32(0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14);
    const __m512i few = _mm512_set1_epi32(RE_BUCKET_FEW);
    uint32_t start0 = 0; /* the end of the bucket before the vector's first */
    for (uint32_t b = 0; b < nb && (Py_ssize_t) start0 < limit; b += 16) {
        const __mmask16 in = (__mmask16) (nb - b >= 16 ? 0xffff : (1u << (nb - b)) - 1);
        const __m512i e = _mm512_maskz_loadu_epi32(in, count + b);
        const __m512i st = _mm512_mask_permutexvar_epi32(_mm512_set1_epi32((int) start0), (__mmask16) 0xfffe, before, e);
        __mmask16 full = _mm512_mask_cmpgt_epu32_mask(in, _mm512_sub_epi32(e, st), few);
        if (full) {
            uint32_t s0[16], e0[16];
            _mm512_storeu_si512((void*) s0, st);
            _mm512_storeu_si512((void*) e0, e);
            for (; full; full = (__mmask16) (full & (full - 1))) {
                const int l = __builtin_ctz((unsigned) full);
                if ((Py_ssize_t) s0[l] < limit) re_sort_small(dst + s0[l], (Py_ssize_t) (e0[l] - s0[l]));
            }
        }
        start0 = count[b + 15 < nb ? b + 15 : nb - 1];
    }
    return true;
}

#undef RE_D1
#undef RE_D2
#undef RE_D4
#undef RE_F4
#undef RE_F8

struct re_isa_avx512 : re_isa_avx2 {
    template <typename T>
    static inline Py_ssize_t compress_parts() { /* from k >= m / 256 */
        return 256;
    }
    template <bool EXACT, typename T, typename CS>
    RE_TARGET_AVX512 static inline bool compress(const T* row, Py_ssize_t m, CS& cs, Py_ssize_t& j) {
        return re_compress_avx512::blocks<EXACT>(row, m, cs, j);
    }
    /* every id's score is finite here (a row with another is scanned again, exactly) */
    template <typename T>
    static inline Py_ssize_t compress_entries(const T* row, const int32_t* ids, Py_ssize_t n,
                                              re_entry<T, int32_t>* out, int64_t&) {
        re_entries_avx512(row, ids, n, out);
        return n;
    }

    using re_isa_avx2::sample_keys;
    RE_TARGET_AVX512 static inline void sample_keys(const float* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key,
                                                    Py_ssize_t* n_ok, uint32_t* lo, uint32_t* hi, re_readahead& ra,
                                                    re_key_window<float>* win) {
        re_sample_keys_avx512(row, m, chunks, key, n_ok, lo, hi, ra, win);
    }

    RE_TARGET_AVX512 static inline uint32_t kth_key(uint32_t* key, Py_ssize_t ns, Py_ssize_t r, uint32_t lo,
                                                    uint32_t hi, uint32_t* sub) {
        return re_sample_kth_avx512(key, ns, r, lo, hi, sub);
    }

    /* float32 keys are 32 bits: kbase 0, shift 0, ids, not indices */
    using re_isa_avx2::words;
    RE_TARGET_AVX512 static inline void words(const re_entry<float, int32_t>* buf, Py_ssize_t n, uint32_t, int, bool,
                                              uint32_t* key, uint64_t* w, uint32_t* lo, uint32_t* hi) {
        re_words_avx512(buf, n, key, w, lo, hi);
    }

    /* the bucket sort where the keys spread evenly, else the radix sort (the AVX2 bucket
     * sort's conditions are the same) */
    RE_TARGET_AVX512 static inline uint64_t* sort_words(uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len,
                                                        uint32_t lo, uint32_t hi, uint64_t* dst, uint32_t* count,
                                                        re_readahead& ra) {
        if (re_bucket_sort_avx512(src, key, n, len, lo, hi, dst, count, ra)) return dst;
        return re_isa_portable::sort_words(src, key, n, len, lo, hi, dst, count, ra);
    }
};

#endif /* RE_TOPK_X86 */
#endif /* RANKEREVAL_TOPK_AVX512_H */
