/* Top-k: the primitives of the portable path (the interface: _topk_traits.h), plain C++ that
 * the compiler vectorises for the baseline instruction set (SSE2 on x86-64). The other paths
 * derive from these traits and replace what they do faster. */
#ifndef RANKEREVAL_TOPK_PORTABLE_H
#define RANKEREVAL_TOPK_PORTABLE_H

#include "_topk_traits.h"

struct re_isa_portable {
    /* Bit b set when p[b] is flagged (re_flag). First one OR over the block: most blocks have
     * no flagged score and cost just that. */
    template <typename T>
    static RE_ALWAYS_INLINE uint32_t block(const T* p, T t) {
        int any = 0;
        for (int b = 0; b < RE_TOPK_BLOCK; ++b) any |= (int) re_flag(p[b], t);
        if (!any) return 0;
#if RE_HAVE_SSE2
        /* the flags as bytes (0 or 0xff), gathered by movemask */
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

    /* no compress scan */
    template <typename T>
    struct compresses {
        enum { value = 0 };
    };

    /* The sampled scores' keys: NaN and infinite scores get key 0, below every finite score's;
     * for 64-bit scores a first pass sets the window (re_key_window) to the sampled range. */
    template <typename T>
    static inline void sample_keys(const T* row, Py_ssize_t m, Py_ssize_t chunks, uint32_t* key, Py_ssize_t* n_ok,
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

    /* The r-th largest key without a branch per key: a histogram of the highest 11 bits of the
     * keys' range gives the bucket of the r-th largest; that bucket's keys, copied out, are
     * searched by bisection from the highest bit, each bit by counting the keys at or above
     * a candidate; 16 bits below the histogram's, the answer is rounded down. */
    static inline uint32_t kth_key(uint32_t* key, Py_ssize_t ns, Py_ssize_t r, uint32_t lo, uint32_t hi,
                                   uint32_t* sub) {
        const int top = re_bit_width(hi - lo) - 1;
        const int shift = top >= RE_SAMPLE_HIST_BITS - 1 ? top - (RE_SAMPLE_HIST_BITS - 1) : 0;
        const uint32_t base = lo >> shift;
        uint32_t count[(1 << RE_SAMPLE_HIST_BITS) + 1]; /* the range's top bits may carry into one more */
        const uint32_t top_digit = (hi >> shift) - base;
        std::memset(count, 0, sizeof(uint32_t) * (top_digit + 1));
        for (Py_ssize_t i = 0; i < ns; ++i) ++count[(key[i] >> shift) - base];
        uint32_t d = top_digit;
        Py_ssize_t above = 0; /* keys in the buckets above d */
        while (above + (Py_ssize_t) count[d] < r) above += count[d--];
        Py_ssize_t nsub = 0;
        const uint32_t in_d = d + base;
        for (Py_ssize_t i = 0; i < ns; ++i) {
            sub[nsub] = key[i] ^ 0x80000000u; /* signed comparisons below (SSE2 has them) */
            nsub += (Py_ssize_t) (key[i] >> shift == in_d);
        }
        const int32_t* skey = (const int32_t*) sub;
        const Py_ssize_t need = r - above;
        uint32_t answer = (d + base) << shift;
        const int low = shift > 16 ? shift - 16 : 0;
        for (int bit = shift - 1; bit >= low; --bit) {
            const uint32_t c = answer | (1u << bit);
            const int32_t sc = (int32_t) (c ^ 0x80000000u);
            int32_t n_at_least = 0;
            for (Py_ssize_t i = 0; i < nsub; ++i) n_at_least += (int32_t) (skey[i] >= sc);
            answer = (Py_ssize_t) n_at_least >= need ? c : answer;
        }
        return answer;
    }

    /* The winners' words and keys */
    template <typename T, typename ID>
    static inline void words(const re_entry<T, ID>* buf, Py_ssize_t n, typename re_score<T>::U kbase, int shift,
                             bool indexed, uint32_t* key, uint64_t* w, uint32_t* lo, uint32_t* hi) {
        typedef typename re_score<T>::U U;
        uint32_t l = 0xffffffffu, h = 0;
        for (Py_ssize_t i = 0; i < n; ++i) {
            const uint32_t c = (uint32_t) ((U) ((U) ~re_score<T>::ukey(buf[i].v) - kbase) >> shift);
            key[i] = c;
            w[i] = (uint64_t) c << 32 | (indexed ? (uint32_t) i : (uint32_t) buf[i].id);
            l = c < l ? c : l;
            h = c > h ? c : h;
        }
        *lo = l;
        *hi = h;
    }

    /* An LSD radix sort of the words on the key bits that differ, in the fewest passes of at
     * most 11 bits (or one more when a pass over n words costs less than the counts of the
     * wider digits), the counts of every pass taken in one read. */
    static inline uint64_t* sort_words(uint64_t* src, uint32_t*, Py_ssize_t n, Py_ssize_t, uint32_t lo, uint32_t hi,
                                       uint64_t* dst, uint32_t*, re_readahead& ra) {
        enum { MAX_BITS = 11, MAX_PASSES = 3 };
        const int bits = re_bit_width(hi - lo);
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
        uint64_t* words = dst;
        uint64_t* other = src;
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
        return words;
    }
};

#endif /* RANKEREVAL_TOPK_PORTABLE_H */
