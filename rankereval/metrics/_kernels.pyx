"""Typed metric kernels: one pass per ranking, one float64 out per ranking.

Every public function here trusts its caller (``rankereval.metrics._base``) to have checked
shapes and dtypes. For each ranking ``i`` with label row ``r`` (``r = 0`` when one label row is
broadcast), the first k' items of the ranking are looked up in the label row, producing a
short list of *hits* (rank of the hit, position of its label in the CSR row). Each metric is
then a small reduction over that list, so the lookup code exists once.

Lookup strategies (``_lookup.h``), chosen per row by a cost model (``_choose``) unless a
test forces one:

* scan: compare each block of 8 ranked items with every label of the row, with SIMD
  compares. No scratch memory and no branch on the data; the cheapest choice for short
  label rows (a few dozen positives), at any cutoff -- the common recommendation case.
* bitset: each thread owns one bit per item id; the label row's items are set before and
  cleared after the row, so a lookup is one bit test. 100k items take 12.5 kB, which stays
  in L1 cache while the rankings stream past -- long label rows and long cutoffs.
* binary search in the sorted CSR row: no scratch memory, any id range; a few items looked
  up in a long label row.

The first items of the ranking a few rows ahead are prefetched (see ``re_prefetch``): for
short cutoffs in long rows that is most of the time saved.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, M_LN2, NAN, expm1, lround
from libc.stdlib cimport calloc, free, malloc

from rankereval._typedefs cimport float64_t, int8_t, int32_t, int64_t, label_idx_t, rank_t, uint64_t

import numpy as np

cdef extern from *:
    """
    #include <algorithm>
    #include <functional>
    /* the m largest of a[0:n] at the front, in descending order, by selection */
    static inline void re_top_values(double* a, Py_ssize_t m, Py_ssize_t n) {
        if (m <= 0) return;
        if (m < n) std::nth_element(a, a + m - 1, a + n, std::greater<double>());
        std::sort(a, a + (m < n ? m : n), std::greater<double>());
    }
    """
    void re_top_values(double* a, Py_ssize_t m, Py_ssize_t n) noexcept nogil

cdef extern from "_lookup.h":
    void re_prefetch(const void* p, Py_ssize_t bytes) noexcept nogil
    Py_ssize_t re_search[L, V](const L* a, Py_ssize_t n, V v) noexcept nogil
    Py_ssize_t re_scan_hits[R, L](const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                  uint64_t n_ids, int32_t* hit_rank, bint first_only) noexcept nogil
    void re_bitset_mark[L](uint64_t* bits, const L* lab, Py_ssize_t n, uint64_t n_ids,
                           bint value) noexcept nogil
    Py_ssize_t re_bitset_hits[R](const R* row, Py_ssize_t kk, const uint64_t* bits, uint64_t n_words,
                                 int32_t* hit_rank, bint first_only) noexcept nogil
    Py_ssize_t re_search_hits[R, L](const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                    int32_t* hit_rank, int32_t* hit_pos, bint first_only) noexcept nogil


# Metric reductions: the ids, their names and traits are declared once, in _metric_ids.pxd.
# Each metric class names its reduction in its registry entry (``MetricInfo.kernel``, a key
# of METRIC_IDS); ``score`` refuses any other id.
from rankereval.metrics._metric_ids cimport *
from rankereval.metrics._metric_ids import METRIC_IDS, ids_with

#: the reductions that read the judged items of a row (labels with judgments)
JUDGED_IDS = ids_with("judged_items")


cdef enum:
    PREFETCH_AHEAD = 8    # rows: the first items of row i + 8 are requested at row i
    PREFETCH_BYTES = 512  # at most this much of it (longer reads stream well on their own)

# lookup strategies; tests force one with rankereval.metrics._base._forced_lookup
cdef enum:
    AUTO = 0
    BITSET = 1
    SEARCH = 2
    SCAN = 3

LOOKUP_IDS = {"auto": AUTO, "bitset": BITSET, "search": SEARCH, "scan": SCAN}


cdef inline int _choose(Py_ssize_t kk, Py_ssize_t n_rel, bint bitset_ok) noexcept nogil:
    """Per-row choice of lookup: the cheapest by a cost model fitted to single-thread timings
    on this project's benchmark machine (units of 0.1 ns; n_rel 1-200, k 1-1000). scan: per
    block of 8 ranked items, 2 ns plus 1 ns per label; bitset: 1.5 ns per label (set, then
    clear) plus 2 ns per ranked item; binary search: per ranked item, 1 ns plus 1.6 ns per
    step. Off by up to 1.5x on single cases, which moves only near-ties."""
    cdef Py_ssize_t steps = 1
    cdef Py_ssize_t scan = ((kk + 7) >> 3) * (20 + 10 * n_rel)
    cdef Py_ssize_t search, bitset
    while (<Py_ssize_t> 1 << steps) <= n_rel:
        steps += 1
    search = kk * (10 + 16 * steps)
    if bitset_ok:
        bitset = 15 * n_rel + 20 * kk
        if bitset < scan and bitset < search:
            return BITSET
    return SCAN if scan <= search else SEARCH


cdef inline double _gain(double v, int power) noexcept nogil:
    if power:
        return expm1(v * M_LN2)  # 2**v - 1 without cancellation for tiny v
    return v


cdef inline bint _undefined(int metric, Py_ssize_t n_rel, Py_ssize_t n_judged) noexcept nogil:
    """Whether the metric is NaN for a label row with ``n_rel`` relevant items (and
    ``n_judged`` judged ones), known before any lookup (so the row costs nothing). A metric
    is undefined without a relevant item, HitRate also with more than one (its "single hit"
    is then ill-defined); except the counts (always defined) and Judged (undefined without
    a judged item)."""
    if n_rel != 0:
        return metric == HITRATE and n_rel != 1
    return not (metric == NUM_REL or metric == NUM_RET or metric == NUM_REL_RET
                or (metric == JUDGED and n_judged > 0))


cdef double _finish(int metric, Py_ssize_t k, bint truncated, int power, const float64_t* disc,
                           const float64_t* norm, Py_ssize_t lrow, Py_ssize_t n_rel, Py_ssize_t length,
                           const int32_t* hit_rank, const int32_t* hit_pos, Py_ssize_t n_hits,
                           const float64_t* vals, bint binary, double param, const int32_t* jhit_rank,
                           Py_ssize_t n_jhits, Py_ssize_t n_judged, double n_cat) noexcept nogil:
    """One metric's value for one ranking from the hits of the lookup (made up to the largest
    cutoff of the call): the hits (and judged hits) within this metric's cutoff, its
    reduction, and NDCG's division by the ideal DCG (``norm``, NULL for the others). Not
    inline: called once per metric and row, with ``_reduce`` (its one caller) inlined in it."""
    cdef Py_ssize_t kk = length if (k < 0 or k > length) else k
    cdef double v
    if _undefined(metric, n_rel, n_judged):
        return NAN
    while n_hits > 0 and hit_rank[n_hits - 1] >= kk:
        n_hits -= 1
    while n_jhits > 0 and jhit_rank[n_jhits - 1] >= kk:
        n_jhits -= 1
    v = _reduce(metric, hit_rank, hit_pos, n_hits, n_rel, kk, k, truncated, vals, disc, power, binary,
                param, jhit_rank, n_jhits, n_judged, n_cat)
    if norm != NULL:
        # DCG <= IDCG exactly, but the two sums round differently: a near-ideal ranking of
        # near-equal labels can land an ulp above 1, so clip. An IDCG that underflowed to 0
        # gives 0, as the definition says.
        v = min(v / norm[lrow], 1.0) if norm[lrow] > 0 else 0.0
    return v


cdef inline bint _all_undefined(const int32_t* metrics, Py_ssize_t n_metrics, Py_ssize_t n_rel,
                                Py_ssize_t n_judged) noexcept nogil:
    cdef Py_ssize_t m
    for m in range(n_metrics):
        if not _undefined(metrics[m], n_rel, n_judged):
            return False
    return True


cdef inline double _reduce(int metric, const int32_t* hit_rank, const int32_t* hit_pos, Py_ssize_t n_hits,
                           Py_ssize_t n_rel, Py_ssize_t kk, Py_ssize_t k, bint truncated,
                           const float64_t* vals, const float64_t* disc, int power, bint binary,
                           double param, const int32_t* jhit_rank, Py_ssize_t n_jhits,
                           Py_ssize_t n_judged, double n_cat) noexcept nogil:
    """The metric value of one ranking from its hits (see the module docstring): one branch
    per id of _metric_ids.pxd, one switch (an if/elif chain on constants, which Cython
    compiles to a C switch). ``param``: ERR's 2^-max_grade, the recall level of
    interpolated precision; 0 for the others. ``jhit_rank``: the ranks of the judged items
    (for the ids with the trait JUDGED_ITEMS; else unused). ``n_cat``: the number of items
    of the row's catalogue, the labels' items and every ranked id (for the ids with the
    trait CATALOGUE; else unused)."""
    cdef Py_ssize_t t, j, c, n_nonrel, above
    cdef double p, r, s, best, decay
    if metric == PRECISION:
        if truncated:
            return NAN if kk == 0 else n_hits / <double> kk
        return n_hits / <double> k
    elif metric == RECALL:
        return n_hits / <double> (min(n_rel, k) if truncated else n_rel)
    elif metric == F1:
        if n_hits == 0:
            return 0.0
        p = n_hits / <double> (kk if truncated else k)
        r = n_hits / <double> (min(n_rel, k) if truncated else n_rel)
        return 2.0 * p * r / (p + r)
    elif metric == HITRATE:  # defined for exactly one relevant item (see _undefined)
        return 1.0 if n_hits > 0 else 0.0
    elif metric == RECIPROCAL_RANK:
        return 1.0 / (hit_rank[0] + 1) if n_hits > 0 else 0.0
    elif metric == SUCCESS:
        return 1.0 if n_hits > 0 else 0.0
    elif metric == AP:
        s = 0.0
        for t in range(n_hits):
            s += (t + 1) / <double> (hit_rank[t] + 1)
        return s / (n_rel if k < 0 else min(k, n_rel))  # k < 0: the whole ranking
    elif metric == MEAN_RANKS:
        if n_hits == 0:
            return INFINITY
        s = 0.0
        for t in range(n_hits):
            s += hit_rank[t] + 1
        return s / n_hits
    elif metric == FIRST_RELEVANT_RANK:
        return hit_rank[0] + 1.0 if n_hits > 0 else INFINITY
    elif metric == DCG:
        s = 0.0
        for t in range(n_hits):
            s += (1.0 if binary else _gain(vals[hit_pos[t]], power)) * disc[hit_rank[t]]
        return s
    elif metric == AP_RELEVANT:  # trec_eval's map_cut: divided by the number of relevant items
        s = 0.0
        for t in range(n_hits):
            s += (t + 1) / <double> (hit_rank[t] + 1)
        return s / n_rel
    elif metric == RPREC:  # relevant items in the top R, over R
        t = 0
        while t < n_hits and hit_rank[t] < n_rel:
            t += 1
        return t / <double> n_rel
    elif metric == NUM_REL:
        return <double> n_rel
    elif metric == NUM_RET:
        return <double> kk
    elif metric == NUM_REL_RET:
        return <double> n_hits
    elif metric == IPREC:
        # trec_eval 10: the level as a number of relevant items, lround(level * R); the
        # highest precision at or after the rank where that many were found (0 if never)
        c = lround(param * n_rel)
        if c > n_hits:
            return 0.0
        best = 0.0
        for t in range(n_hits - 1, (c - 1 if c > 0 else 0) - 1, -1):
            r = (t + 1) / <double> (hit_rank[t] + 1)
            if r > best:
                best = r
        return best
    elif metric == BPREF:
        # judged non-relevant items ranked above each relevant one (the relevant items are
        # judged ones too): judged hits above it minus relevant hits above it
        n_nonrel = n_judged - n_rel
        s = 0.0
        j = 0
        for t in range(n_hits):
            while j < n_jhits and jhit_rank[j] < hit_rank[t]:
                j += 1
            above = j - t
            if above > 0:
                s += 1.0 - min(above, n_rel) / <double> min(n_nonrel, n_rel)
            else:
                s += 1.0
        return s / n_rel
    elif metric == JUDGED:
        return NAN if kk == 0 else n_jhits / <double> kk
    elif metric == RBP_RESIDUAL:  # the weight of every rank not judged: 1 - that of the judged ones
        s = 0.0
        for j in range(n_jhits):
            s += disc[jhit_rank[j]]
        return max(1.0 - s, 0.0)
    elif metric == ERR:
        s = 0.0
        decay = 1.0
        for t in range(n_hits):
            r = param if binary else _gain(vals[hit_pos[t]], 1) * param
            s += r * decay / (hit_rank[t] + 1)
            decay *= 1.0 - r
        return s
    elif metric == COVERAGE_ERROR:
        # the rank of the last relevant item; a relevant item outside the top kk ties with
        # every unranked item at the bottom, so covering it takes the whole catalogue
        return n_cat if n_hits < n_rel else hit_rank[n_hits - 1] + 1.0
    elif metric == LABEL_RANKING_LOSS:
        # (relevant, non-relevant) pairs in the wrong order over all such pairs: the
        # non-relevant items ranked above each ranked relevant one, and every non-relevant
        # item for a relevant one outside the top kk (ranked above it or tied with it)
        if n_rel >= n_cat:
            return NAN  # no non-relevant item: no pair to order
        s = (n_rel - n_hits) * (n_cat - n_rel)
        for t in range(n_hits):
            s += hit_rank[t] - t
        return s / (n_rel * (n_cat - n_rel))
    return NAN  # unreachable: ``score`` refuses unknown ids before the loop


def score(const int32_t[::1] metrics, const int64_t[::1] ks, const int8_t[::1] truncs,
          const int8_t[::1] powers, const label_idx_t[::1] l_indptr, const label_idx_t[::1] l_ind,
          const float64_t[::1] l_val, bint binary, Py_ssize_t n_items,
          const rank_t[:, ::1] ranks, const int64_t[::1] lengths,
          const float64_t[:, ::1] discs, const float64_t[:, ::1] norms, const int8_t[::1] divides,
          bint bitset_ok, int lookup, float64_t[:, ::1] out, int n_threads,
          const float64_t[::1] params, const label_idx_t[::1] j_indptr, const label_idx_t[::1] j_ind):
    """Score every ranking with one or more metrics over the same labels; see the module
    docstring.

    Metric ``j`` is reduction ``metrics[j]`` with cutoff ``ks[j]`` (``< 0``: the whole
    ranking), ``truncs[j]`` and gain ``powers[j]``; its scores go to column ``j`` of ``out``
    (shape ``(n_rankings, n_metrics)``). Each ranking is looked up in its label row once, up
    to the largest cutoff, and every metric reduces the hits within its own cutoff (hits come
    in rank order). ``discs[j]`` holds 1/log_b(i + 2) for every rank i that can occur (DCG;
    width 0 for the others). ``norms[j]`` (length 0, or the number of label rows) divides
    metric j's DCG (NDCG's ideal DCG). One label row is broadcast when ``l_indptr`` has two
    entries and there are several rankings. ``divides[j]``: whether ``norms[j]`` applies. ``bitset_ok``: the item range is small enough for a
    bitset per thread. ``lookup``: AUTO, or a strategy every row must use (for tests).
    ``params[j]``: metric j's real parameter (ERR's 2^-max_grade, a recall level; 0 for the
    others). ``j_indptr``/``j_ind``: the judged items of each label row, a CSR like the
    labels' (length 0 when no metric of the call reads them, see JUDGED_IDS); each row's
    ranking is then also looked up in its judged row.
    """
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], n_metrics = metrics.shape[0]
    cdef Py_ssize_t m
    if n_metrics == 0 or ks.shape[0] != n_metrics or truncs.shape[0] != n_metrics \
            or powers.shape[0] != n_metrics or discs.shape[0] != n_metrics \
            or norms.shape[0] != n_metrics or divides.shape[0] != n_metrics \
            or out.shape[1] != n_metrics or out.shape[0] != n or params.shape[0] != n_metrics:
        raise ValueError("one k, flag, gain, parameter, discount row and norm row per metric, and an "
                         "(n_rankings, n_metrics) output")
    cdef bint need_judged = False
    cdef bint need_pos = False
    cdef bint need_cat = False  # the size of each row's catalogue (CATALOGUE)
    # metrics that only need the first hit stop looking there (a 1000-long ranking is
    # common), when every metric of the call is one of them
    cdef bint first_only = True
    cdef int traits
    for m in range(n_metrics):
        if metrics[m] < 0 or metrics[m] >= N_METRIC_IDS:
            raise ValueError(f"unknown metric id {metrics[m]}; known: {METRIC_IDS}")
        traits = metric_traits(metrics[m])
        if traits & RANK_WEIGHTS and discs.shape[1] < width:
            raise ValueError(f"metric id {metrics[m]} ({'DCG' if metrics[m] == DCG else 'RBP'}) "
                             "needs a discount (weight) for every rank of the rankings")
        if divides[m] and norms.shape[1] < l_indptr.shape[0] - 1:
            raise ValueError("a norm row needs one value per label row")
        need_judged = need_judged or traits & JUDGED_ITEMS
        need_cat = need_cat or traits & CATALOGUE
        need_pos = need_pos or (traits & HIT_VALUES and not binary)
        first_only = first_only and traits & FIRST_HIT
    if need_judged and j_indptr.shape[0] != l_indptr.shape[0]:
        raise ValueError("the judged items need one CSR row per label row")
    cdef bint broadcast = l_indptr.shape[0] == 2 and n != 1
    cdef bint whole = False
    cdef Py_ssize_t k_max = 0
    for m in range(n_metrics):
        if ks[m] < 0:
            whole = True
        elif ks[m] > k_max:
            k_max = ks[m]
    if whole:
        k_max = -1
    cdef Py_ssize_t i, j, jb = 0, lrow, ls, n_rel, length, kk, n_hits, js, n_judged, n_jhits
    cdef double n_cat
    cdef Py_ssize_t j_nnz = j_ind.shape[0]
    cdef int32_t* jhit_rank = NULL
    cdef int32_t* jhit_pos = NULL
    cdef const label_idx_t* jlab
    cdef Py_ssize_t n_words = (n_items >> 6) + 1
    cdef Py_ssize_t nnz = l_ind.shape[0]
    cdef uint64_t n_ids = <uint64_t> n_items
    cdef int how
    cdef uint64_t* bits = NULL
    cdef int32_t* hit_rank = NULL
    cdef int32_t* hit_pos = NULL
    cdef const label_idx_t* lab
    cdef const rank_t* row
    cdef const float64_t* vals = &l_val[0] if l_val.shape[0] else NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)  # shared flag

    if lookup == BITSET and not bitset_ok:
        raise ValueError("the bitset lookup needs bitset_ok")
    # one label row for all rankings: with a bitset, set its bits once per thread, never clear
    cdef bint need_bits = bitset_ok and (lookup == AUTO or lookup == BITSET)
    cdef bint shared_bits = broadcast and need_bits
    # row i starts at rbase + i * width (no &ranks[i, 0]: out of bounds when width == 0)
    cdef const rank_t* rbase = &ranks[0, 0] if n > 0 and width > 0 else NULL
    # per-metric arguments as raw pointers (checked above), for the per-row reductions
    cdef const int32_t* mp = &metrics[0]
    cdef const int64_t* kp = &ks[0]
    cdef const int8_t* tp = &truncs[0]
    cdef const int8_t* pp = &powers[0]
    cdef const int8_t* dvp = &divides[0]
    cdef Py_ssize_t n_disc = discs.shape[1], n_norm = norms.shape[1]
    cdef const float64_t* dp = &discs[0, 0] if n_disc > 0 else NULL
    cdef const float64_t* np_ = &norms[0, 0] if n_norm > 0 else NULL
    # the first metric's arguments as plain locals: no store to `out` can alias them, so the
    # compiler keeps them in registers and specialises the one-metric loop on them
    cdef int metric0 = mp[0], power0 = pp[0]
    cdef Py_ssize_t k0 = kp[0]
    cdef bint trunc0 = tp[0] != 0
    cdef const float64_t* norm0 = np_ if dvp[0] else NULL
    cdef const float64_t* prm = &params[0]
    cdef double param0 = prm[0]
    cdef const label_idx_t* jptr = &j_indptr[0] if need_judged else NULL
    cdef bint jneed
    with nogil, parallel(num_threads=n_threads):
        jneed = need_judged  # private to the thread: kept in a register in the row loop
        bits = NULL
        jhit_rank = NULL
        jhit_pos = NULL
        hit_rank = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        hit_pos = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        if need_bits:
            bits = <uint64_t*> calloc(n_words + 1, sizeof(uint64_t))  # + 1: see re_bitset_hits
        if need_judged:
            jhit_rank = <int32_t*> malloc((width + 1) * sizeof(int32_t))
            jhit_pos = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        if hit_rank == NULL or hit_pos == NULL or (need_bits and bits == NULL) \
                or (need_judged and (jhit_rank == NULL or jhit_pos == NULL)):
            failed[0] = 1
        else:
            if shared_bits:
                for jb in range(max(l_indptr[0], 0), min(l_indptr[1], nnz)):
                    if <uint64_t> l_ind[jb] < n_ids:
                        bits[l_ind[jb] >> 6] |= (<uint64_t> 1) << (l_ind[jb] & 63)
            for i in prange(n, schedule='static'):
                lrow = 0 if broadcast else i
                ls = l_indptr[lrow]
                n_rel = l_indptr[lrow + 1] - ls
                length = lengths[i]
                # Storage is validated and frozen at construction; these cheap checks keep the
                # loop in bounds even if someone forces it writeable and edits it.
                if ls < 0 or n_rel < 0 or ls + n_rel > nnz:
                    for m in range(n_metrics):
                        out[i, m] = NAN
                    continue
                if length < 0 or length > width:
                    length = 0 if length < 0 else width
                kk = length if (k_max < 0 or k_max > length) else k_max
                n_hits = 0
                n_jhits = 0
                n_judged = 0
                if jneed:
                    js = jptr[lrow]
                    n_judged = jptr[lrow + 1] - js
                    if js < 0 or n_judged < 0 or js + n_judged > j_nnz:
                        for m in range(n_metrics):
                            out[i, m] = NAN
                        continue
                if _all_undefined(mp, n_metrics, n_rel, n_judged):
                    # (HitRate on rows without exactly one relevant item: most rows of a
                    # top-N workload) no lookup and no reduction: NaN, as _finish says
                    for m in range(n_metrics):
                        out[i, m] = NAN
                    continue
                n_cat = <double> n_items
                row = rbase + i * width
                if need_cat:  # the row's catalogue: the labels' items and every ranked id
                    for j in range(length):
                        if row[j] >= n_cat:
                            n_cat = row[j] + 1.0
                if i + PREFETCH_AHEAD < n:
                    re_prefetch(row + PREFETCH_AHEAD * width, min(kk * sizeof(rank_t), PREFETCH_BYTES))
                if n_rel > 0:  # (without relevant items nothing to look up: the counts, Judged)
                    lab = &l_ind[ls]
                    how = lookup
                    if shared_bits:
                        how = BITSET
                    elif how == AUTO:
                        how = _choose(kk, n_rel, bitset_ok)
                    if how == SCAN:
                        n_hits = re_scan_hits(row, kk, lab, n_rel, n_ids, hit_rank, first_only)
                    elif how == BITSET:
                        if not shared_bits:
                            re_bitset_mark(bits, lab, n_rel, n_ids, True)
                        n_hits = re_bitset_hits(row, kk, bits, n_words, hit_rank, first_only)
                        if not shared_bits:  # leave the bitset empty for the next row
                            re_bitset_mark(bits, lab, n_rel, n_ids, False)
                    else:
                        n_hits = re_search_hits(row, kk, lab, n_rel, hit_rank, hit_pos, first_only)
                    if need_pos and how != SEARCH:  # HIT_VALUES: where each hit's label is, for its value
                        for j in range(n_hits):
                            hit_pos[j] = <int32_t> re_search(lab, n_rel, row[hit_rank[j]])
                if jneed and n_judged > 0:  # the judged items: a second lookup, in the row's judged ids
                    jlab = &j_ind[js]
                    if lookup == SEARCH or (lookup == AUTO and _choose(kk, n_judged, False) == SEARCH):
                        n_jhits = re_search_hits(row, kk, jlab, n_judged, jhit_rank, jhit_pos, False)
                    else:
                        n_jhits = re_scan_hits(row, kk, jlab, n_judged, n_ids, jhit_rank, False)
                # every metric reduces the hits within its own cutoff (hits are in rank order)
                if n_metrics == 1:  # one metric: no loop, all hits are within its cutoff
                    out[i, 0] = _finish(metric0, k0, trunc0, power0, dp, norm0, lrow, n_rel, length,
                                        hit_rank, hit_pos, n_hits, vals + ls if vals != NULL else NULL, binary,
                                        param0, jhit_rank, n_jhits, n_judged, n_cat)
                else:
                    for m in range(n_metrics):
                        out[i, m] = _finish(mp[m], kp[m], tp[m] != 0, pp[m],
                                            dp + m * n_disc if dp != NULL else NULL,
                                            np_ + m * n_norm if np_ != NULL and dvp[m] else NULL,
                                            lrow, n_rel, length, hit_rank, hit_pos, n_hits,
                                            vals + ls if vals != NULL else NULL, binary, prm[m],
                                            jhit_rank, n_jhits, n_judged, n_cat)
        free(bits)
        free(hit_rank)
        free(hit_pos)
        free(jhit_rank)
        free(jhit_pos)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the metric kernel")


def ideal_dcg(const label_idx_t[::1] l_indptr, const float64_t[::1] l_val, Py_ssize_t k,
              const float64_t[::1] disc, int power, float64_t[::1] out, int n_threads):
    """DCG of each label row's own values sorted descending, cut at k (k < 0: all of them).

    The top k' values are selected, not sorted in full. Rows without a positive label get NaN.
    """
    cdef Py_ssize_t n = l_indptr.shape[0] - 1, i, j, ls, n_rel, m, max_len = 0
    cdef double* buf = NULL
    cdef double s
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)
    for i in range(n):
        if l_indptr[i + 1] - l_indptr[i] > max_len:
            max_len = l_indptr[i + 1] - l_indptr[i]
    with nogil, parallel(num_threads=n_threads):
        buf = <double*> malloc((max_len + 1) * sizeof(double))
        if buf == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                ls = l_indptr[i]
                n_rel = l_indptr[i + 1] - ls
                if n_rel <= 0 or ls < 0 or ls + n_rel > l_val.shape[0] or n_rel > max_len:
                    out[i] = NAN
                    continue
                m = n_rel if (k < 0 or k > n_rel) else k
                for j in range(n_rel):
                    buf[j] = _gain(l_val[ls + j], power)
                re_top_values(buf, m, n_rel)
                s = 0.0
                for j in range(m):
                    s = s + buf[j] * disc[j]  # not `+=`: that would make s a prange reduction
                out[i] = s
            free(buf)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the ideal DCG kernel")
