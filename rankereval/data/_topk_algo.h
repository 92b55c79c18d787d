/* Top-k selection of Rankings.from_scores: the algorithm, written once over the traits type
 * I of an instruction set (the interface: _topk_traits.h). Included by _topk.h once per
 * path, inside a namespace of its own and compiled for that path's instruction set; hence
 * no include guard. Every choice of instruction set is I's.
 *
 * The rule: items by descending score, ties by ascending item id; excluded items (not in
 * valid_items, or in invalid_items) are never ranked; NaN and infinite scores of candidates
 * are dropped and counted. One pass per row reads each score once, in its own type (float16
 * as its bits, float32, float64, any integer):
 *
 * - Candidates are visited in ascending item id. Until the buffer holds `cap` (>= k + 32,
 *   or every candidate of the row) of them, every candidate is appended. Then the buffer is
 *   *compacted* to the k best (selection on a copy of the values, then a stable filter, so
 *   the buffer stays in id order) and the k-th best value becomes the threshold t. A wide
 *   dense row (8 192 scores or more) starts instead from a threshold estimated on a sample
 *   of the row (re_sample_threshold), with a second pass in the rare case that fewer than k
 *   scores pass it.
 * - From then on a candidate is kept only when its score is strictly above t: an item with
 *   score equal to t comes later in id order than the k-th best item, so it loses the tie.
 *   The dense scan tests a block of 32 scores at a time against t (I::block) and visits only
 *   the flagged ones, or, where many scores pass a sampled threshold, stores the ids of the
 *   flagged scores without a branch (I::compress). Exclusions are merged in per block.
 * - At the end the winners are sorted by descending score, ties in ascending id, and the
 *   first k kept: short lists by insertion sort, longer ones as distinct 64-bit words of an
 *   order-preserving key above the id (I::words, I::sort_words).
 * - All along, the thread's next row is requested a cache line at a time (re_readahead).
 */

/* The selection state of one row. */
template <typename T, typename ID>
struct re_topk {
    typedef re_score<T> S;
    typedef typename S::U U;
    char* base;           /* the scratch space */
    re_entry<T, ID>* buf; /* candidates kept so far, in ascending id (cap; then cap more for the words) */
    T* vals;              /* selection (2 cap; the words' second buffer and keys) */
    T* sample;            /* RE_TOPK_SAMPLE scores (re_sample_threshold) */
    Py_ssize_t n, cap, k;
    const int64_t* x; /* exclusions still ahead, sorted */
    const int64_t* x_end;
    int64_t n_bad;
    T t;  /* once have_t, a candidate must score above t */
    T hi; /* and, once have_hi, at most hi (the second pass after a sampled threshold) */
    bool have_t, have_hi, compacted;
    re_readahead ra; /* the thread's next row (re_readahead): requested during the work */
    re_topk(void* scratch, Py_ssize_t cap_, Py_ssize_t k_, const int64_t* x_, const int64_t* x_end_)
        : n(0), cap(cap_), k(k_), x(x_), x_end(x_end_), n_bad(0), t(), hi(), have_t(false), have_hi(false),
          compacted(false) {
        base = (char*) scratch; /* the layout of re_topk_scratch_bytes */
        buf = (re_entry<T, ID>*) base;
        vals = (T*) (base + (size_t) cap * 32);
        sample = (T*) (base + (size_t) cap * 48);
    }

    struct greater { /* a functor, so that the selection inlines the comparison */
        inline bool operator()(const T& a, const T& b) const { return S::gt(a, b); }
    };
    struct by_score {
        inline bool operator()(const re_entry<T, ID>& a, const re_entry<T, ID>& b) const { return S::gt(a.v, b.v); }
    };

    inline bool excluded(int64_t id) {
        while (x < x_end && *x < id) ++x;
        return x < x_end && *x == id;
    }

    /* Keep the k best of buf[0:n] (n > k) in id order; t becomes the k-th best score. Not
     * inlined: called rarely, it would crowd the registers of the scan loops. */
    RE_NOINLINE void compact() {
        for (Py_ssize_t i = 0; i < n; ++i) vals[i] = buf[i].v;
        std::nth_element(vals, vals + (k - 1), vals + n, greater());
        const T kth = vals[k - 1];
        Py_ssize_t above = 0;
        for (Py_ssize_t i = 0; i < k - 1; ++i) above += S::gt(vals[i], kth);
        Py_ssize_t ties = k - above; /* entries equal to kth that stay: the first (lowest ids) */
        Py_ssize_t w = 0;
        for (Py_ssize_t i = 0; i < n; ++i) { /* branch-free: which entries stay is unpredictable */
            const T v = buf[i].v;
            const bool gt = S::gt(v, kth);
            const bool eq = !gt & !S::gt(kth, v);
            const bool keep = gt | (eq & (ties > 0));
            ties -= (Py_ssize_t) (eq & keep);
            buf[w] = buf[i];
            w += (Py_ssize_t) keep;
        }
        n = w;
        t = kth;
        have_t = true;
        compacted = true;
    }

    /* A candidate in ascending id order (before the threshold exists, or flagged by it). */
    inline void offer(T v, int64_t id) {
        if (x < x_end && excluded(id)) return;
        if (S::bad(v)) {
            n_bad += (int64_t) !have_hi; /* a second pass does not count again */
            return;
        }
        if ((have_t && !S::gt(v, t)) || (have_hi && S::gt(v, hi))) return;
        buf[n].v = v;
        buf[n].id = (ID) id;
        if (++n == cap && cap > k) compact();
    }

    /* Insertion sort of a[0:len] by descending score (stable: ties keep their order). */
    static void insertion_sort(re_entry<T, ID>* a, Py_ssize_t len) {
        for (Py_ssize_t i = 1; i < len; ++i) {
            if (!S::gt(a[i].v, a[i - 1].v)) continue;
            const re_entry<T, ID> e = a[i];
            Py_ssize_t j = i;
            do {
                a[j] = a[j - 1];
                --j;
            } while (j > 0 && S::gt(e.v, a[j - 1].v));
            a[j] = e;
        }
    }

    /* The ids of the min(n, k) best of buf[0:n] into out: each entry becomes one 64-bit
     * word, its key inverted (descending score), less kbase (the smallest inverted key; 0 for
     * keys of up to 32 bits) and shifted right to fit 32 bits (re_shift_to_32), above the id,
     * or above the index in buf where the id does not fit 32 bits or the keys are cut (then
     * out_words orders the runs of equal cut keys). The words are distinct, so any sort of
     * them gives the rule's order (ties in buf order: ascending id). */
    template <typename Q>
    Py_ssize_t write_packed(Q* out, U kbase, int shift) {
        const bool indexed = shift || sizeof(ID) > 4;
        uint64_t* words = (uint64_t*) (base + (size_t) cap * 16); /* after buf: 16 cap bytes */
        uint64_t* other = (uint64_t*) (base + (size_t) cap * 32); /* vals */
        uint32_t* key = (uint32_t*) (base + (size_t) cap * 40);
        uint32_t lo = 0xffffffffu, hi = 0;
        I::words(buf, n, kbase, shift, indexed, key, other, &lo, &hi);
        const Py_ssize_t len = n < k ? n : k;
        uint64_t* sorted = I::sort_words(other, key, n, len, lo, hi, words,
                                         (uint32_t*) (base + re_topk_scratch_counts(cap)), ra);
        return out_words(sorted, len, indexed, shift, out);
    }

    /* The ids of the sorted words w[0:len] (all n words in w, the others after them) into
     * out: the words' low halves, or, indexed, the ids of the entries they index. With cut
     * keys (shift > 0), each run of words with equal cut keys is first put in the rule's
     * order by the full keys (ties in buf order: ascending id); the run at position len - 1
     * takes its words from beyond len too. Runs are rare: the cut keys keep the top 32 bits
     * of the winners' range. */
    template <typename Q>
    Py_ssize_t out_words(uint64_t* w, Py_ssize_t len, bool indexed, int shift, Q* out) {
        if (!indexed) {
            for (Py_ssize_t i = 0; i < len; ++i) out[i] = (Q) (uint32_t) w[i];
            return len;
        }
        const re_entry<T, ID>* const e = buf;
        struct by_key {
            const re_entry<T, ID>* e;
            inline bool operator()(uint64_t a, uint64_t b) const {
                const U ka = (U) ~S::ukey(e[(uint32_t) a].v), kb = (U) ~S::ukey(e[(uint32_t) b].v);
                return ka != kb ? ka < kb : (uint32_t) a < (uint32_t) b;
            }
        };
        const by_key less = {e};
        for (Py_ssize_t a = 0; shift && a < len;) {
            const uint32_t c = (uint32_t) (w[a] >> 32);
            Py_ssize_t b = a + 1;
            while (b < len && (uint32_t) (w[b] >> 32) == c) ++b;
            if (b == len) {
                Py_ssize_t end = len;
                for (Py_ssize_t i = len; i < n; ++i)
                    if ((uint32_t) (w[i] >> 32) == c) std::swap(w[end++], w[i]);
                if (end - a > 1) std::partial_sort(w + a, w + len, w + end, less);
            } else if (b - a > 1) {
                std::sort(w + a, w + b, less);
            }
            a = b;
        }
        for (Py_ssize_t i = 0; i < len; ++i) out[i] = (Q) e[(uint32_t) w[i]].id;
        return len;
    }

    /* The <= k best, sorted, into out; returns how many. More than k left (at most
     * cap, about 2k): sorting as far as the first k is cheaper than a compaction first,
     * except before a short insertion sort. */
    template <typename Q>
    Py_ssize_t write(Q* out) {
        if (n > k && k <= RE_TOPK_SHORT) compact();
        if (n <= RE_TOPK_SHORT || n > (Py_ssize_t) 0xffffffff) { /* words index buf with 32 bits */
            if (n <= RE_TOPK_SHORT)
                insertion_sort(buf, n);
            else
                std::stable_sort(buf, buf + n, by_score());
            if (n > k) n = k;
            for (Py_ssize_t i = 0; i < n; ++i) out[i] = (Q) buf[i].id;
            return n;
        }
        if (sizeof(U) <= 4) return write_packed(out, (U) 0, 0);
        /* 64-bit keys: packed too, less the smallest; when the winners' keys span 2^32 or
         * more, cut to their top 32 bits, with indices into buf in the words and the rare
         * runs of equal cut keys ordered after the sort (out_words) */
        U l = ~(U) 0, h = 0;
        for (Py_ssize_t i = 0; i < n; ++i) {
            const U c = (U) ~S::ukey(buf[i].v);
            l = c < l ? c : l;
            h = c > h ? c : h;
        }
        return write_packed(out, l, re_shift_to_32((uint64_t) (h - l)));
    }

    template <typename Q>
    void finish(Q* out, int64_t* out_len, int64_t* n_bad_out) {
        *out_len = write(out);
        *n_bad_out = n_bad;
    }
};

/* The block scan: offer the flagged scores of row[0:m] (every score until a threshold exists),
 * each block of 32 tested by I::block.
 *
 * Once a threshold exists, the state lives in locals (a store into the buffer could alias
 * the members, which would then be reloaded) and for each block with flagged scores: the
 * exclusions of the block are cleared from its mask (one merge step per block, not per
 * candidate), then each flagged score is written to the buffer and counted in unless NaN
 * or infinite (or, in a second pass, above hi): no branch to mispredict; the buffer has
 * room, n < cap, at each write. A compaction in the middle of a block raises t, and the
 * rest of the block is kept anyway: an entry at or below t sorts after the k better ones
 * (ties by id: it comes later) and is dropped by the next compaction or the final sort. */
template <typename T, typename ID>
static inline void re_scan_blocks(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    Py_ssize_t j = 0;
    for (; j < m && !st.have_t; ++j) st.offer(row[j], j);
    if (j + RE_TOPK_BLOCK <= m) {
        const int64_t* x = st.x;
        const int64_t* const x_end = st.x_end;
        re_entry<T, ID>* const out = st.buf;
        const Py_ssize_t cap = st.cap;
        const bool can_compact = st.cap >= st.k + RE_TOPK_BLOCK, second = st.have_hi;
        const T hi = st.hi;
        T t = st.t;
        Py_ssize_t w = st.n;
        int64_t bad = 0;
        re_readahead ra = st.ra;
        const int ra_lines = (int) ((RE_TOPK_BLOCK * sizeof(T) + 63) / 64);
        for (; j + RE_TOPK_BLOCK <= m; j += RE_TOPK_BLOCK) {
            ra.steps(ra_lines); /* the next row at the pace this one is read */
            uint32_t mask = I::block(row + j, t);
            if (!mask) continue;
            if (w > cap - RE_TOPK_BLOCK && can_compact) {
                st.n = w;
                st.compact();
                w = st.n;
                t = st.t;
                mask = I::block(row + j, t);
            }
            if (x < x_end && *x < j + RE_TOPK_BLOCK) {
                while (x < x_end && *x < j) ++x;
                for (; x < x_end && *x < j + RE_TOPK_BLOCK; ++x) mask &= ~((uint32_t) 1 << (*x - j));
            }
            while (mask) {
                const int b = re_ctz32(mask);
                mask &= mask - 1;
                const T v = row[j + b];
                out[w].v = v;
                out[w].id = (ID) (j + b);
                const bool is_bad = re_score<T>::bad(v);
                bad += (int64_t) is_bad;
                w += (Py_ssize_t) !(is_bad | (second && re_score<T>::gt(v, hi)));
            }
        }
        st.n = w;
        st.x = x;
        st.ra = ra;
        st.n_bad += second ? 0 : bad; /* a second pass does not count again */
    }
    for (; j < m; ++j)
        if (re_flag(row[j], st.t)) st.offer(row[j], j);
}


/* The compress scan: the dense scan of a row from a sampled threshold that many scores
 * pass (k >= m / I::compress_parts; float32, float64, int32 and int64 scores, int32 ids).
 * The block scan above visits the flagged scores of each block one by one, and its branches
 * are mispredicted about once a flagged block; here nothing depends on the scores but the
 * rare: I::compress stores the ids of each block's flagged scores at the end of an array
 * (the values region of the scratch), which then grows by their number (stores past the end
 * are overwritten later). I::compress_entries reads their scores back from the row (in the
 * cache) into buffer entries before a compaction, which happens between blocks when the
 * buffer might fill, and at the end. The row's exclusions are set as bits of a per-thread
 * mask first (and cleared after), read a block at a time. NaN and infinite scores:
 * I::compress<false> returns false when the row had one among its candidates that it could
 * not leave out, and the row is then scanned again, EXACT. */
template <typename T, typename J = I> /* J: I, named where the compiler looks it up late */
struct re_compress_state {
    re_topk<T, int32_t>& st;
    const T* const row;
    int32_t* const ids;
    uint16_t* const xmask; /* the exclusions, a bit per score, 16 a word */
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

    /* the exclusions of the block row[j:j + 32], a bit per score */
    inline uint32_t excluded(Py_ssize_t j) const {
        return (uint32_t) xmask[j / 16] | (uint32_t) xmask[j / 16 + 1] << 16;
    }

    inline T threshold() const { return st.t; }

    inline void to_entries() { st.n = J::compress_entries(row, ids, w, st.buf, bad); }

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
        to_entries();
        st.n_bad += bad;
        st.ra = ra;
        for (; j < m; ++j)
            if (re_flag(row[j], st.t)) st.offer(row[j], j);
    }
};

/* The scan of a row: the first pass, and in the rare row where a candidate is NaN or
 * infinite and the first pass kept it, a second, exact pass from the same start (no
 * candidates, the sampled threshold). */
template <typename T, typename J>
static inline void re_compress_scan(const T* row, Py_ssize_t m, re_topk<T, int32_t>& st) {
    re_compress_state<T, J> cs(st, row, m);
    Py_ssize_t j = 0;
    const T t0 = st.t;
    if (!J::template compress<false>(row, m, cs, j)) {
        cs.w = 0;
        cs.bad = 0;
        st.n = 0;
        st.t = t0;
        st.compacted = false;
        J::template compress<true>(row, m, cs, j);
    }
    cs.finish(m, j);
}

/* The compress scan where the traits have one and it applies (returns false elsewhere): the
 * first pass over a row from a sampled threshold with many scores above it (k >= m /
 * I::compress_parts), and a buffer with room for a block past its compaction point. */
template <typename T, typename ID, typename J = I>
static inline typename std::enable_if<!(J::template compresses<T>::value && sizeof(ID) == 4), bool>::type
re_scan_compress(const T*, Py_ssize_t, re_topk<T, ID>&) {
    return false;
}
template <typename T, typename ID, typename J = I>
static inline typename std::enable_if<J::template compresses<T>::value && sizeof(ID) == 4, bool>::type
re_scan_compress(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    if (!st.have_t || st.have_hi || st.n != 0 || st.compacted || st.k * J::template compress_parts<T>() < m ||
        st.cap < st.k + 2 * RE_TOPK_BLOCK)
        return false;
    re_compress_scan<T, J>(row, m, st);
    return true;
}

/* A first threshold for a dense row, from a sample of its finite scores: the score that
 * r ~ mu + 2 sqrt(mu) + 2 sampled scores reach, where mu = sample * k / m is the expected
 * number of sampled scores among the row's top k. Somewhat more than k scores of the row
 * then pass it (about 1.3 k at k = 1000 of 20 000), and fewer than k only in a few rows
 * in a hundred: then a second pass over the row, which is still in the cache, collects
 * the rest. The sample is 512 scores (1024 from k = 256: a tighter threshold saves more
 * there), in runs of 32 spread over the row. Not used for a short row (under 8 192
 * scores), where the first `cap` scores give a threshold for less, nor when k is a large
 * part of the row. The r-th largest sampled score is found on 32-bit order-preserving keys
 * (I::sample_keys) without a data-dependent branch per score (I::kth_key). */
template <typename T>
static inline bool re_sample_threshold(const T* row, Py_ssize_t m, Py_ssize_t k, T* sample, T* t0,
                                       re_readahead& ra) {
    typedef re_score<T> S;
    if (m < 8 * RE_TOPK_SAMPLE) return false;
    uint32_t* key = (uint32_t*) sample; /* room for 2 RE_TOPK_SAMPLE keys */
    uint32_t* sub = key + RE_TOPK_SAMPLE;
    const Py_ssize_t chunks = re_sample_chunks(k);
    /* the sampled keys (NaN and infinite scores: 0), how many are finite, their range */
    const Py_ssize_t ns = chunks * RE_TOPK_SAMPLE_RUN;
    Py_ssize_t n_ok = 0;
    uint32_t lo = 0xffffffffu, hi = 0;
    re_key_window<T> win;
    I::sample_keys(row, m, chunks, key, &n_ok, &lo, &hi, ra, &win);
    const Py_ssize_t r = re_sample_rank(n_ok, k, m);
    if (r > n_ok / 4) return false; /* k is too large a part of the row for the sample to help */
    /* all sampled keys equal: the threshold is their score */
    const uint32_t answer = lo < hi ? I::kth_key(key, ns, r, lo, hi, sub) : hi;
    /* at least r sampled keys are >= answer; the threshold is the score with that key */
    const T t = win.score(answer);
    if (S::bad(t)) return false;
    *t0 = t;
    return true;
}

/* The threshold a dense float32 row of m scores starts from at k (re_sample_threshold), for
 * the tests; false when it starts from none (a short row, or k too large a part of it). */
static inline bool re_sampled_threshold_f32(const float* row, Py_ssize_t m, Py_ssize_t k, float* t) {
    uint32_t sample[2 * RE_TOPK_SAMPLE];
    re_readahead ra;
    return k < m && re_sample_threshold(row, m, k, (float*) sample, t, ra);
}

/* The dense scan of a row: the compress scan where it applies, else the block scan. */
template <typename T, typename ID>
static inline void re_scan_dense(const T* row, Py_ssize_t m, re_topk<T, ID>& st) {
    if (!re_scan_compress(row, m, st)) re_scan_blocks(row, m, st);
}

/* Dense row: candidates are the ids 0..m-1 minus the exclusions [x, x_end). */
template <typename T, typename Q>
static void re_topk_dense(const T* row, Py_ssize_t m, Py_ssize_t k, const int64_t* x, const int64_t* x_end,
                          void* scratch, Py_ssize_t cap, Q* out, int64_t* out_len, int64_t* n_bad, const void* next) {
    re_topk<T, Q> st(scratch, cap, k, x, x_end);
    if (next != NULL) st.ra = re_readahead(next, m * (Py_ssize_t) sizeof(T));
    T t0 = T();
    const bool sampled = k < m && re_sample_threshold(row, m, k, st.sample, &t0, st.ra);
    if (sampled) {
        st.t = t0;
        st.have_t = true;
    }
    re_scan_dense(row, m, st);
    if (!sampled || st.compacted || st.n >= k) {
        st.finish(out, out_len, n_bad); /* the sort requests the rest of the next row */
        st.ra.rest();
        return;
    }
    /* fewer than k candidates above the sampled threshold: the others score at most t0 */
    const Py_ssize_t above = st.write(out);
    re_topk<T, Q> rest(scratch, cap, k - above, x, x_end);
    rest.hi = t0;
    rest.have_hi = true;
    rest.ra = st.ra;
    re_scan_dense(row, m, rest);
    *out_len = above + rest.write(out + above);
    *n_bad = st.n_bad;
    rest.ra.rest();
}

/* Dense row, only the listed ids (sorted valid_items; ids >= m are not items of the row). */
template <typename T, typename Q>
static void re_topk_listed(const T* row, Py_ssize_t m, const int64_t* ids, const int64_t* ids_end, Py_ssize_t k,
                           const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap, Q* out,
                           int64_t* out_len, int64_t* n_bad) {
    re_topk<T, Q> st(scratch, cap, k, x, x_end);
    ids_end = std::lower_bound(ids, ids_end, (int64_t) m);
    for (; ids < ids_end && !st.have_t; ++ids) st.offer(row[*ids], *ids);
    for (; ids < ids_end; ++ids) {
        const T v = row[*ids];
        if (re_flag(v, st.t)) st.offer(v, *ids);
    }
    st.finish(out, out_len, n_bad);
}

/* Sparse row: the stored (id, score) pairs, ids ascending; with `keep`, only ids listed in
 * the sorted [keep, keep_end) (valid_items) are candidates. */
template <typename T, typename Q>
static void re_topk_sparse(const T* data, const int64_t* ids, Py_ssize_t len, const int64_t* keep,
                           const int64_t* keep_end, Py_ssize_t k, const int64_t* x, const int64_t* x_end,
                           void* scratch, Py_ssize_t cap, Q* out, int64_t* out_len, int64_t* n_bad) {
    re_topk<T, Q> st(scratch, cap, k, x, x_end);
    for (Py_ssize_t p = 0; p < len; ++p) {
        const int64_t id = ids[p];
        if (keep != NULL) {
            while (keep < keep_end && *keep < id) ++keep;
            if (keep == keep_end || *keep != id) continue;
        }
        if (!st.have_t || re_flag(data[p], st.t)) st.offer(data[p], id);
    }
    st.finish(out, out_len, n_bad);
}

template <typename T, typename Q>
static inline void re_topk_typed(int mode, const void* scores, const int64_t* ids, Py_ssize_t len, Py_ssize_t m,
                                 const int64_t* keep, const int64_t* keep_end, Py_ssize_t k, const int64_t* x,
                                 const int64_t* x_end, void* scratch, Py_ssize_t cap, void* out, int64_t* out_len,
                                 int64_t* n_bad, const void* next) {
    const T* s = (const T*) scores;
    if (mode == RE_DENSE)
        re_topk_dense(s, len, k, x, x_end, scratch, cap, (Q*) out, out_len, n_bad, next);
    else if (mode == RE_LISTED)
        re_topk_listed(s, m, ids, ids + len, k, x, x_end, scratch, cap, (Q*) out, out_len, n_bad);
    else
        re_topk_sparse(s, ids, len, keep, keep_end, k, x, x_end, scratch, cap, (Q*) out, out_len, n_bad);
}

template <typename Q>
static inline void re_topk_q(int code, int mode, const void* scores, const int64_t* ids, Py_ssize_t len,
                             Py_ssize_t m, const int64_t* keep, const int64_t* keep_end, Py_ssize_t k,
                             const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap, void* out,
                             int64_t* out_len, int64_t* n_bad, const void* next) {
#define RE_CASE(C, T)                                                                                 \
    case C:                                                                                           \
        re_topk_typed<T, Q>(mode, scores, ids, len, m, keep, keep_end, k, x, x_end, scratch, cap, out, \
                            out_len, n_bad, next);                                                    \
        break;
    switch (code) {
        RE_CASE(RE_F32, float)
        RE_CASE(RE_F64, double)
        RE_CASE(RE_F16, re_half)
        RE_CASE(RE_I8, int8_t)
        RE_CASE(RE_I16, int16_t)
        RE_CASE(RE_I32, int32_t)
        RE_CASE(RE_I64, int64_t)
        RE_CASE(RE_U8, uint8_t)
        RE_CASE(RE_U16, uint16_t)
        RE_CASE(RE_U32, uint32_t)
        RE_CASE(RE_U64, uint64_t)
    }
#undef RE_CASE
}

/* One row of any score type into int32 or int64 output ids, out[0:width]: the ranking,
 * then -1 (the output is not filled beforehand: one write of it instead of two). `next`:
 * the dense row this thread ranks next, or NULL. */
static void re_topk_row(int code, bool out64, int mode, const void* scores, const int64_t* ids,
                               Py_ssize_t len, Py_ssize_t m, const int64_t* keep, const int64_t* keep_end,
                               Py_ssize_t k, const int64_t* x, const int64_t* x_end, void* scratch, Py_ssize_t cap,
                               void* out, Py_ssize_t width, int64_t* out_len, int64_t* n_bad, const void* next) {
    if (out64) {
        re_topk_q<int64_t>(code, mode, scores, ids, len, m, keep, keep_end, k, x, x_end, scratch, cap, out,
                           out_len, n_bad, next);
        std::fill((int64_t*) out + *out_len, (int64_t*) out + width, (int64_t) -1);
    } else {
        re_topk_q<int32_t>(code, mode, scores, ids, len, m, keep, keep_end, k, x, x_end, scratch, cap, out,
                           out_len, n_bad, next);
        std::fill((int32_t*) out + *out_len, (int32_t*) out + width, (int32_t) -1);
    }
}
