/* Top-k: the primitives of the AVX2 path (the interface: _topk_traits.h), over the portable
 * ones: the block test of float32, float64 and float16 scores (float16 converted by F16C,
 * exact), 8 scores an instruction, and the compress scan. Integer blocks keep the portable
 * test, which the compiler vectorises for AVX2 where the algorithm is compiled for it. The
 * winners' words are sorted by buckets and transposition rounds. */
#ifndef RANKEREVAL_TOPK_AVX2_H
#define RANKEREVAL_TOPK_AVX2_H

#include "_topk_portable.h"

#if RE_TOPK_X86

/* the bucket sorts' limit: a bucket of more words than this, and the radix sort instead */
enum { RE_BUCKET_ROUNDS = 12 };

/* The buckets of the vector bucket sorts (AVX2 and AVX-512), given n < 2^RE_BUCKET_BITS
 * keys in [lo, hi]: *nb (about n) buckets, each key replaced by its bucket, count[b] set
 * to bucket b's start; the next row is requested every STEP + 1 keys. Returns the largest
 * bucket's size, with *limit the end of the bucket that holds position len - 1. */
template <int STEP>
static inline uint32_t re_bucket_starts(uint32_t* key, Py_ssize_t n, Py_ssize_t len, uint32_t lo, uint32_t hi,
                                        uint32_t* count, re_readahead& ra, uint32_t* nb_out, Py_ssize_t* limit) {
    int nb_bits = re_bit_width((uint32_t) n);
    const int bits = re_bit_width(hi - lo);
    if (nb_bits > bits) nb_bits = bits;
    const int shift = bits - nb_bits;
    const uint32_t nb = ((hi - lo) >> shift) + 1;
    std::memset(count, 0, sizeof(uint32_t) * nb);
    for (Py_ssize_t i = 0; i < n; ++i) {
        if ((i & STEP) == 0) ra.step();
        key[i] = (key[i] - lo) >> shift;
        ++count[key[i]];
    }
    uint32_t pos = 0, most = 0; /* the sizes become the buckets' starts */
    for (uint32_t b = 0; b < nb; ++b) {
        const uint32_t c = count[b];
        count[b] = pos;
        pos += c;
        most = c > most ? c : most;
    }
    const uint32_t* const after = std::upper_bound(count, count + nb, (uint32_t) (len - 1));
    *limit = after == count + nb ? n : (Py_ssize_t) *after;
    *nb_out = nb;
    return most;
}

struct re_isa_avx2 : re_isa_portable {
    using re_isa_portable::block;
    /* "not x <= t, or x == -inf" (t is finite) flags the scores above t and the NaN and
     * infinite ones in two comparisons; F: float32 vectors of 8 scores, each loaded by LOAD */
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

    RE_TARGET_AVX2 static inline uint32_t block(const float* p, float t) {
        const __m256 vt = _mm256_set1_ps(t);
        RE_FLAG8(_mm256_loadu_ps(p + 8 * q), vt)
    }
    RE_TARGET_AVX2 static inline uint32_t block(const re_half* p, re_half t) {
        const __m256 vt = _mm256_set1_ps(_cvtsh_ss(t.bits));
        RE_FLAG8(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*) (p + 8 * q))), vt)
    }
#undef RE_FLAG8
    RE_TARGET_AVX2 static inline uint32_t block(const double* p, double t) {
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

    /* The compress scan: each 32 scores flagged as in the block test, less the block's
     * exclusions, and the ids of each 8 moved to the front by a permutation (vpermd, its
     * lanes from a table of the 256 masks) of the block's ids, which advance by an addition.
     * NaN and infinite scores are flagged too and left out (and counted) when the ids become
     * entries: the first pass is exact. From k >= m / 128 (int32: m / 256); below that the
     * block scan, which skips the blocks without flagged scores, is as fast. */
    template <typename T>
    struct compresses : re_compressible<T> {};
    template <typename T>
    static inline Py_ssize_t compress_parts() {
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

#define RE_FLAGS(T, V, SUF, W)                                                                       \
    RE_TARGET_AVX2 static inline V set1(T t) { return _mm256_set1_##SUF(t); }                         \
    RE_TARGET_AVX2 static inline uint32_t flags(const T* p, V vt) {                                   \
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
    RE_TARGET_AVX2 static inline __m256i set1(int32_t t) { return _mm256_set1_epi32(t); }
    RE_TARGET_AVX2 static inline __m256i set1(int64_t t) { return _mm256_set1_epi64x((long long) t); }
    RE_TARGET_AVX2 static inline uint32_t flags(const int32_t* p, __m256i vt) {
        uint32_t f = 0;
        for (int q = 0; q < 4; ++q)
            f |= (uint32_t) _mm256_movemask_ps(_mm256_castsi256_ps(
                     _mm256_cmpgt_epi32(_mm256_loadu_si256((const __m256i*) (p + 8 * q)), vt)))
                 << (8 * q);
        return f;
    }
    RE_TARGET_AVX2 static inline uint32_t flags(const int64_t* p, __m256i vt) {
        uint32_t f = 0;
        for (int q = 0; q < 8; ++q)
            f |= (uint32_t) _mm256_movemask_pd(_mm256_castsi256_pd(
                     _mm256_cmpgt_epi64(_mm256_loadu_si256((const __m256i*) (p + 4 * q)), vt)))
                 << (4 * q);
        return f;
    }

    /* The blocks row[j:j + 32] from j = 0 while whole; exact in one pass (returns true). */
    template <bool EXACT, typename T, typename CS>
    RE_TARGET_AVX2 static inline bool compress(const T* row, Py_ssize_t m, CS& cs, Py_ssize_t& j) {
        const table& tab = lanes();
        const __m256i eight = _mm256_set1_epi32(8);
        __m256i id8 = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7); /* the ids of the next 8 scores */
        auto vt = set1(cs.threshold());
        for (j = 0; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
            if (cs.block()) vt = set1(cs.threshold());
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

    /* The winners' words by a bucket sort where their keys spread evenly (else the radix
     * sort): a counting pass puts them in about n buckets of equal key ranges, then odd-even
     * transposition rounds over the array, 4 words a vector, sort every bucket at once (the
     * comparisons across two buckets never swap; L rounds sort L words), as many rounds as the
     * fullest bucket has words, fewer when two in a row swap nothing, and only as far as the
     * bucket holding position len - 1. AVX2 compares 64-bit lanes as signed integers, so the
     * words are placed with their top bit flipped, and left so: the algorithm reads only their
     * low halves and whether high halves are equal. The next row is requested a line every 32
     * words placed and every 4 vectors of a round. */
    RE_TARGET_AVX2 static inline uint64_t* sort_words(uint64_t* src, uint32_t* key, Py_ssize_t n, Py_ssize_t len,
                                                      uint32_t lo, uint32_t hi, uint64_t* dst, uint32_t* count,
                                                      re_readahead& ra) {
        if (n >= ((Py_ssize_t) 1 << RE_BUCKET_BITS)) return re_isa_portable::sort_words(src, key, n, len, lo, hi, dst, count, ra);
        uint32_t nb;
        Py_ssize_t limit;
        const uint32_t most = re_bucket_starts<31>(key, n, len, lo, hi, count, ra, &nb, &limit);
        if (most > RE_BUCKET_ROUNDS)
            return re_isa_portable::sort_words(src, key, n, len, lo, hi, dst, count, ra);
        const uint64_t flip = (uint64_t) 1 << 63;
        for (Py_ssize_t i = 0; i < n; ++i) {
            if ((i & 31) == 0) ra.step();
            dst[count[key[i]]++] = src[i] ^ flip;
        }
        for (int i = 0; i < 16; ++i) dst[n + i] = ~flip; /* the last vectors' padding: the largest */
        const __m256i odd = _mm256_setr_epi64x(0, -1, 0, -1);
        bool clean_before = false;
        for (uint32_t round = 0; round < most; ++round) {
            int swapped = 0;
            for (Py_ssize_t j = round & 1; j < limit; j += 4) {
                if ((j & 12) == 0) ra.step();
                const __m256i v = _mm256_loadu_si256((const __m256i*) (dst + j));
                const __m256i p = _mm256_permute4x64_epi64(v, 0xb1); /* neighbours swapped: 1 0 3 2 */
                /* distinct words: the even lane takes its partner when greater, the odd when not */
                const __m256i take = _mm256_xor_si256(_mm256_cmpgt_epi64(v, p), odd);
                swapped |= _mm256_movemask_pd(_mm256_castsi256_pd(take));
                _mm256_storeu_si256((__m256i*) (dst + j), _mm256_blendv_epi8(v, p, take));
            }
            const bool clean = swapped == 0;
            if (clean && clean_before) break;
            clean_before = clean;
        }
        return dst;
    }

    /* The entries of the ids, NaN and infinite scores left out and counted in bad */
    template <typename T>
    static inline Py_ssize_t compress_entries(const T* row, const int32_t* ids, Py_ssize_t n,
                                              re_entry<T, int32_t>* out, int64_t& bad) {
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
};

#endif /* RE_TOPK_X86 */
#endif /* RANKEREVAL_TOPK_AVX2_H */
