"""Typed metric kernels: one pass per ranking, one float64 out per ranking.

Every public function here trusts its caller (``metrics.py``) to have checked shapes and
dtypes. For each ranking ``i`` with label row ``r`` (``r = 0`` when one label row is
broadcast), the first k' items of the ranking are looked up in the label row, producing a
short list of *hits* (rank of the hit, position of its label in the CSR row). Each metric is
then a small reduction over that list, so the lookup code exists once.

Lookup strategies (chosen by the caller):

* bitset: each thread owns one bit per item id; the label row's items are set before and
  cleared after the row, so a lookup is one bit test. 100k items take 12.5 kB, which stays
  in L1 cache while the rankings stream past -- the common recommendation case. (An int32
  "stamp" array per item was 32x larger and missed L2 on this workload.)
* binary search in the sorted CSR row: no scratch memory, any id range.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, M_LN2, NAN, expm1
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

# metric ids, mirrored in metrics.py
cdef enum:
    PRECISION = 0
    RECALL = 1
    F1 = 2
    HITRATE = 3
    RECIPROCAL_RANK = 4
    AP = 5
    MEAN_RANKS = 6
    FIRST_RELEVANT_RANK = 7
    DCG = 8

METRIC_IDS = {
    "precision": PRECISION, "recall": RECALL, "f1": F1, "hitrate": HITRATE,
    "reciprocal_rank": RECIPROCAL_RANK, "ap": AP, "mean_ranks": MEAN_RANKS,
    "first_relevant_rank": FIRST_RELEVANT_RANK, "dcg": DCG,
}


cdef inline Py_ssize_t _search(const label_idx_t* a, Py_ssize_t n, int64_t v) noexcept nogil:
    """Position of v in the sorted a[0:n], or -1. Branch-light lower bound."""
    cdef const label_idx_t* base = a
    cdef Py_ssize_t half
    if n == 0:
        return -1
    while n > 1:
        half = n >> 1
        if base[half] <= v:
            base = base + half
        n -= half
    if base[0] == v:
        return base - a
    return -1


cdef inline bint _prefer_bitset(Py_ssize_t kk, Py_ssize_t n_rel) noexcept nogil:
    """Per-row choice of lookup. The bitset costs 2 * n_rel read-modify-writes (set, then
    clear) and one cheap bit test per ranked item; binary search costs about log2(n_rel)
    steps per ranked item. Measured on the benchmark workload (one thread, per row): setting
    and clearing ~17 ns per label, a bit test ~0.3 ns, a search step ~3 ns; hence the factor
    6. Short cutoffs (k=10) and long label rows take the binary search, k=100 the bitset."""
    cdef Py_ssize_t steps = 1
    while (<Py_ssize_t> 1 << steps) <= n_rel:
        steps += 1
    return 6 * n_rel <= kk * steps


cdef inline double _gain(double v, int power) noexcept nogil:
    if power:
        return expm1(v * M_LN2)  # 2**v - 1 without cancellation for tiny v
    return v


cdef inline double _reduce(int metric, const int32_t* hit_rank, const int32_t* hit_pos, Py_ssize_t n_hits,
                           Py_ssize_t n_rel, Py_ssize_t kk, Py_ssize_t k, bint truncated,
                           const float64_t* vals, const float64_t* disc, int power, bint binary) noexcept nogil:
    """The metric value of one ranking from its hits (see the module docstring)."""
    cdef Py_ssize_t t
    cdef double p, r, s
    if metric == PRECISION:
        if truncated:
            return NAN if kk == 0 else n_hits / <double> kk
        return n_hits / <double> k
    if metric == RECALL:
        return n_hits / <double> (min(n_rel, k) if truncated else n_rel)
    if metric == F1:
        if n_hits == 0:
            return 0.0
        p = n_hits / <double> (kk if truncated else k)
        r = n_hits / <double> (min(n_rel, k) if truncated else n_rel)
        return 2.0 * p * r / (p + r)
    if metric == HITRATE:
        return 1.0 if n_hits > 0 else 0.0
    if metric == RECIPROCAL_RANK:
        return 1.0 / (hit_rank[0] + 1) if n_hits > 0 else 0.0
    if metric == AP:
        s = 0.0
        for t in range(n_hits):
            s += (t + 1) / <double> (hit_rank[t] + 1)
        return s / min(k, n_rel)
    if metric == MEAN_RANKS:
        if n_hits == 0:
            return INFINITY
        s = 0.0
        for t in range(n_hits):
            s += hit_rank[t] + 1
        return s / n_hits
    if metric == FIRST_RELEVANT_RANK:
        return hit_rank[0] + 1.0 if n_hits > 0 else INFINITY
    # DCG
    s = 0.0
    for t in range(n_hits):
        s += (1.0 if binary else _gain(vals[hit_pos[t]], power)) * disc[hit_rank[t]]
    return s


def score(int metric, const label_idx_t[::1] l_indptr, const label_idx_t[::1] l_ind,
          const float64_t[::1] l_val, bint binary, Py_ssize_t n_items,
          const rank_t[:, ::1] ranks, const int64_t[::1] lengths, Py_ssize_t k, bint truncated,
          const float64_t[::1] disc, int power, const float64_t[::1] norm,
          bint use_bitset, float64_t[::1] out, int n_threads):
    """Score every ranking; see the module docstring.

    ``k < 0`` means the whole ranking. ``disc`` holds 1/log_b(i + 2) for every rank i that
    can occur (DCG only). ``norm`` (length 0 or the number of label rows) divides each DCG
    (NDCG's ideal DCG). One label row is broadcast when ``l_indptr`` has two entries and
    there are several rankings.
    """
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1]
    cdef bint broadcast = l_indptr.shape[0] == 2 and n != 1
    cdef bint need_pos = metric == DCG and not binary
    # these two only need the first hit: stop looking there (a 1000-long ranking is common)
    cdef bint first_only = metric == RECIPROCAL_RANK or metric == FIRST_RELEVANT_RANK
    cdef bint divide = norm.shape[0] > 0
    cdef Py_ssize_t i, j, jb, lrow, ls, n_rel, length, kk, n_hits, p
    cdef Py_ssize_t n_words = (n_items >> 6) + 1
    cdef Py_ssize_t nnz = l_ind.shape[0]
    cdef uint64_t n_ids = <uint64_t> n_items
    cdef int64_t item
    cdef uint64_t* bits = NULL
    cdef int32_t* hit_rank = NULL
    cdef int32_t* hit_pos = NULL
    cdef const label_idx_t* lab
    cdef const float64_t* vals = &l_val[0] if l_val.shape[0] else NULL
    cdef const float64_t* dp = &disc[0] if disc.shape[0] else NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)  # shared flag
    cdef double v

    with nogil, parallel(num_threads=n_threads):
        bits = NULL
        hit_rank = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        hit_pos = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        if use_bitset:
            bits = <uint64_t*> calloc(n_words, sizeof(uint64_t))
        if hit_rank == NULL or hit_pos == NULL or (use_bitset and bits == NULL):
            failed[0] = 1
        else:
            if broadcast and use_bitset:
                # one label row for all rankings: set its bits once per thread, never clear
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
                    out[i] = NAN
                    continue
                if length < 0 or length > width:
                    length = 0 if length < 0 else width
                if n_rel == 0 or (metric == HITRATE and n_rel != 1):
                    out[i] = NAN
                    continue
                kk = length if (k < 0 or k > length) else k
                lab = &l_ind[ls]
                n_hits = 0
                if use_bitset and (broadcast or _prefer_bitset(kk, n_rel)):
                    if not broadcast:
                        for j in range(n_rel):
                            if <uint64_t> lab[j] < n_ids:
                                bits[lab[j] >> 6] |= (<uint64_t> 1) << (lab[j] & 63)
                    for j in range(kk):
                        item = ranks[i, j]
                        if <uint64_t> item < n_ids and (bits[item >> 6] >> (item & 63)) & 1:
                            hit_rank[n_hits] = <int32_t> j
                            if need_pos:  # graded DCG: the label's position, for its value
                                hit_pos[n_hits] = <int32_t> _search(lab, n_rel, item)
                            n_hits = n_hits + 1
                            if first_only:
                                break
                    if not broadcast:  # leave the bitset empty for the next row
                        for j in range(n_rel):
                            if <uint64_t> lab[j] < n_ids:
                                bits[lab[j] >> 6] = 0
                else:
                    for j in range(kk):
                        p = _search(lab, n_rel, ranks[i, j])
                        if p >= 0:
                            hit_rank[n_hits] = <int32_t> j
                            hit_pos[n_hits] = <int32_t> p
                            n_hits = n_hits + 1
                            if first_only:
                                break
                v = _reduce(metric, hit_rank, hit_pos, n_hits, n_rel, kk, k, truncated,
                            vals + ls if vals != NULL else NULL, dp, power, binary)
                if divide:
                    # DCG <= IDCG exactly, but the two sums round differently: a near-ideal
                    # ranking of near-equal labels can land an ulp above 1, so clip. An IDCG
                    # that underflowed to 0 gives 0, as the definition says.
                    v = min(v / norm[lrow], 1.0) if norm[lrow] > 0 else 0.0
                out[i] = v
        free(bits)
        free(hit_rank)
        free(hit_pos)
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
