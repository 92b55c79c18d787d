"""Typed kernels of the metrics over tied scores (``Metric.score(..., ties=...)``).

A ranking that keeps its ties (``Rankings.ties``) is a sequence of groups of positions
``[a, b)`` whose items had equal scores. ``expected`` computes, in one pass per ranking and
without enumerating orders, the mean of a metric over every order of every group (each
order of each group equally likely, independently), after McSherry and Najork, "Computing
information retrieval performance measures efficiently in the presence of tied scores",
ECIR 2008. With ``n = b - a`` items in a group, ``r`` of them relevant, ``c`` relevant items
in the groups before it and ``m`` of its positions inside the cutoff:

* each position of the group holds a relevant item with probability ``r / n`` and carries
  the group's mean gain ``G / n``: the hit counts (precision, recall, F1, R-precision,
  the number of relevant items retrieved) and DCG (with RBP's weights) are linear in
  those, so their expectation is the sum over the group's positions inside the cutoff;
* AP: the relevant item at position ``a + t`` contributes its precision, whose numerator
  is ``1 + c`` plus the relevant items among the ``t`` group positions before it; its
  expectation is ``r / n * (1 + c) + t * r (r - 1) / (n (n - 1))``;
* the first relevant item of the first group with ``r > 0`` is at offset ``j`` with
  probability ``C(n - 1 - j, r - 1) / C(n, r)``: reciprocal rank and the first relevant
  rank are sums over that distribution;
* HitRate and Success: one minus the probability that no relevant item of the group that
  crosses the cutoff lands inside it, ``prod_t (n - r - t) / (n - t)`` over ``t < m``;
* MeanRanks (the whole ranking): the hit count is fixed, each group's relevant items sit
  on average at the group's middle rank.

``reorder`` writes the best order of each group (relevant items first, larger gains first)
or the worst one (the reverse); the metric kernel of :mod:`rankereval.metrics._kernels` then scores
it, which gives the optimistic and pessimistic values.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY, M_LN2, NAN, expm1
from libc.stdlib cimport free, malloc

from rankereval._typedefs cimport float64_t, int8_t, int32_t, int64_t, label_idx_t, rank_t, uint64_t

import numpy as np

cdef extern from "_lookup.h":
    void re_prefetch(const void* p, Py_ssize_t bytes) noexcept nogil
    Py_ssize_t re_search[L, V](const L* a, Py_ssize_t n, V v) noexcept nogil
    Py_ssize_t re_scan_hits[R, L](const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                  uint64_t n_ids, int32_t* hit_rank, bint first_only) noexcept nogil
    Py_ssize_t re_search_hits[R, L](const R* row, Py_ssize_t kk, const L* lab, Py_ssize_t n,
                                    int32_t* hit_rank, int32_t* hit_pos, bint first_only) noexcept nogil

cdef enum:
    SCAN_MAX = 32  # label rows up to this long are scanned (SIMD compares), longer ones searched
    PREFETCH_AHEAD = 8  # rows: the first items and tie flags of row i + 8 are requested at row i

cdef extern from *:
    """
    #include <algorithm>
    /* sort the (key, id) pairs of a group by key, keeping the input order among equal
       keys: descending for the best order, ascending for the worst */
    static inline void re_sort_group(double* key, int64_t* ids, int64_t* tmp_ids, double* tmp_key,
                                     Py_ssize_t* perm, Py_ssize_t n, int descending) {
        for (Py_ssize_t t = 0; t < n; ++t) perm[t] = t;
        if (descending)
            std::stable_sort(perm, perm + n, [key](Py_ssize_t x, Py_ssize_t y) { return key[x] > key[y]; });
        else
            std::stable_sort(perm, perm + n, [key](Py_ssize_t x, Py_ssize_t y) { return key[x] < key[y]; });
        for (Py_ssize_t t = 0; t < n; ++t) { tmp_ids[t] = ids[perm[t]]; tmp_key[t] = key[perm[t]]; }
        for (Py_ssize_t t = 0; t < n; ++t) { ids[t] = tmp_ids[t]; key[t] = tmp_key[t]; }
    }
    """
    void re_sort_group(double* key, int64_t* ids, int64_t* tmp_ids, double* tmp_key, Py_ssize_t* perm,
                       Py_ssize_t n, int descending) noexcept nogil


# The reductions with an expected value over tied orders: the ids of the metric kernel
# (_metric_ids.pxd) with the trait TIE_EXPECTED; a metric whose reduction is not here is
# refused by rankereval.metrics._ties.
from rankereval.metrics._metric_ids cimport *
from rankereval.metrics._metric_ids import METRIC_IDS, ids_with

TIE_IDS = {name: i for name, i in METRIC_IDS.items() if i in ids_with("tie_expected")}


cdef inline double _gain(double v, int power) noexcept nogil:
    if power:
        return expm1(v * M_LN2)  # 2**v - 1, as the metric kernel computes it
    return v


cdef double _expected_row(int metric, Py_ssize_t k, bint truncated, Py_ssize_t n_rel, Py_ssize_t length,
                          const int8_t* tie, const int32_t* hit_rank, const double* hit_gain,
                          Py_ssize_t n_hits, const float64_t* disc) noexcept nogil:
    """The expected value of one ranking (``tie[j]``: position j ties position j + 1) from
    its hits (the ranks of its relevant items, increasing, with their gains; at least up to
    the end of the group that crosses the cutoff)."""
    cdef Py_ssize_t h = 0
    cdef Py_ssize_t kk = length if (k < 0 or k > length) else k
    cdef Py_ssize_t cut = kk
    cdef Py_ssize_t a = 0, b, n, r, m, c = 0, j, t
    cdef double hits = 0.0, s = 0.0, g, p, none = 1.0, prec_q, q
    cdef double P, Q
    if metric == NUM_REL:
        return <double> n_rel
    if metric == NUM_RET:
        return <double> kk
    if n_rel == 0 and metric != NUM_REL_RET:
        return NAN
    if metric == HITRATE and n_rel != 1:
        return NAN
    if metric == RPREC:
        cut = n_rel if n_rel < length else length
    # only the groups that hold a relevant item change a value: go from hit to hit, each
    # time to the group around it (groups past the cutoff change nothing)
    while h < n_hits:
        a = hit_rank[h]
        while a > 0 and tie[a - 1]:
            a -= 1
        if a >= cut:
            break
        b = hit_rank[h] + 1
        while b < length and tie[b - 1]:
            b += 1
        n = b - a
        r = 0
        g = 0.0
        while h < n_hits and hit_rank[h] < b:
            g += hit_gain[h]
            r += 1
            h += 1
        m = (cut if cut < b else b) - a
        if m < 0:
            m = 0
        if metric == PRECISION or metric == RECALL or metric == F1 or metric == RPREC \
                or metric == NUM_REL_RET:
            hits += r * m / <double> n
        elif metric == DCG:
            if r > 0:
                p = 0.0
                for j in range(a, a + m):
                    p += disc[j]
                s += g / n * p
        elif metric == AP or metric == AP_RELEVANT:
            if r > 0:
                for t in range(m):
                    q = r / <double> n * (1 + c)
                    if n > 1:
                        q += t * (r * (r - 1.0)) / (n * (n - 1.0))
                    s += q / (a + t + 1)
        elif metric == HITRATE or metric == SUCCESS:
            if r > 0 and m > 0:
                # the probability that none of the r relevant items is among the m positions
                prec_q = 1.0
                for t in range(m):
                    if n - r - t <= 0:
                        prec_q = 0.0
                        break
                    prec_q *= (n - r - t) / <double> (n - t)
                none *= prec_q
        elif metric == RECIPROCAL_RANK or metric == FIRST_RELEVANT_RANK:
            if r > 0:
                # first relevant at offset j: P(0) = r / n, P(j + 1) = P(j) (n - j - r) / (n - 1 - j)
                P = r / <double> n
                for j in range(n - r + 1):
                    if metric == RECIPROCAL_RANK:
                        if a + j < cut:
                            s += P / (a + j + 1)
                    else:
                        s += P * (a + j + 1)
                    if j < n - r:
                        P = P * (n - j - r) / <double> (n - 1 - j)
                return s
        elif metric == MEAN_RANKS:
            hits += r
            s += r * (a + b + 1) / 2.0
        c += r
    if metric == PRECISION:
        if truncated:
            return NAN if kk == 0 else hits / kk
        return hits / k
    if metric == RECALL:
        return hits / <double> ((n_rel if n_rel < k else k) if truncated else n_rel)
    if metric == F1:
        if hits == 0:
            return 0.0
        P = <double> (kk if truncated else k)
        Q = <double> ((n_rel if n_rel < k else k) if truncated else n_rel)
        return 2.0 * hits / (P + Q)
    if metric == RPREC:
        return hits / n_rel
    if metric == NUM_REL_RET:
        return hits
    if metric == DCG:
        return s
    if metric == AP:
        return s / (n_rel if k < 0 else (k if k < n_rel else n_rel))
    if metric == AP_RELEVANT:
        return s / n_rel
    if metric == HITRATE or metric == SUCCESS:
        return 1.0 - none
    if metric == RECIPROCAL_RANK:
        return 0.0  # no relevant item in the ranking
    if metric == FIRST_RELEVANT_RANK:
        return INFINITY
    if metric == MEAN_RANKS:
        return INFINITY if hits == 0 else s / hits
    return NAN


def expected(int metric, Py_ssize_t k, bint truncated, int power,
             const label_idx_t[::1] l_indptr, const label_idx_t[::1] l_ind, const float64_t[::1] l_val,
             bint binary, Py_ssize_t n_items, const rank_t[:, ::1] ranks, const int64_t[::1] lengths,
             const int8_t[:, ::1] ties, const float64_t[::1] disc, const float64_t[::1] norm,
             float64_t[::1] out, int n_threads):
    """The expected value of reduction ``metric`` (a value of TIE_IDS) of every ranking over
    the orders of its tied groups, into ``out``. ``k < 0``: the whole ranking. ``disc``: DCG's
    discounts (at least one per rank) or empty; ``norm``: one ideal DCG per label row
    (NDCG), or empty. One label row serves every ranking when ``l_indptr`` has two entries.
    ``n_items``: label ids are below it. Each ranking's items are looked up in its label row
    once, up to the end of the group that crosses the cutoff, as the metric kernel does."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1]
    if metric not in TIE_IDS.values():
        raise ValueError(f"unknown reduction id {metric}")
    if ties.shape[0] != n or ties.shape[1] != width or lengths.shape[0] != n or out.shape[0] != n:
        raise ValueError("ties, lengths and out need one row per ranking")
    if metric == DCG and disc.shape[0] < width:
        raise ValueError("DCG needs a discount for every rank of the rankings")
    if norm.shape[0] and norm.shape[0] < l_indptr.shape[0] - 1:
        raise ValueError("a norm needs one value per label row")
    cdef bint broadcast = l_indptr.shape[0] == 2 and n != 1
    cdef bint graded = not binary and l_val.shape[0] > 0
    cdef bint divide = norm.shape[0] > 0
    cdef Py_ssize_t nnz = l_ind.shape[0]
    cdef Py_ssize_t i, j, lrow, ls, n_rel, length, end, n_hits
    cdef double v
    cdef const float64_t* dp = &disc[0] if disc.shape[0] else NULL
    cdef int32_t* hit_rank = NULL
    cdef int32_t* hit_pos = NULL
    cdef double* hit_gain = NULL
    cdef const rank_t* row
    cdef const label_idx_t* lab
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)
    # the positions a row reads: up to the cutoff (and the group crossing it), at most 128
    cdef Py_ssize_t look = 128 if k < 0 or k > 120 else k + 8
    with nogil, parallel(num_threads=n_threads):
        hit_rank = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        hit_pos = <int32_t*> malloc((width + 1) * sizeof(int32_t))
        hit_gain = <double*> malloc((width + 1) * sizeof(double))
        if hit_rank == NULL or hit_pos == NULL or hit_gain == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                lrow = 0 if broadcast else i
                ls = l_indptr[lrow]
                n_rel = l_indptr[lrow + 1] - ls
                length = lengths[i]
                if ls < 0 or n_rel < 0 or ls + n_rel > nnz or length < 0 or length > width:
                    out[i] = NAN  # storage edited behind the frozen arrays' back
                    continue
                n_hits = 0
                if i + PREFETCH_AHEAD < n and width > 0:  # as the metric kernel does
                    re_prefetch(&ranks[i + PREFETCH_AHEAD, 0], min(width, look) * sizeof(rank_t))
                    re_prefetch(&ties[i + PREFETCH_AHEAD, 0], min(width, look))
                if n_rel > 0 and length > 0:
                    # the hits up to the end of the group that crosses the cutoff (R-precision:
                    # the cutoff is R; the whole ranking without a cutoff)
                    end = length if k < 0 or k > length else k
                    if metric == RPREC:
                        end = n_rel if n_rel < length else length
                    if end > 0:
                        while end < length and ties[i, end - 1]:
                            end = end + 1
                    row = &ranks[i, 0]
                    lab = &l_ind[ls]
                    if n_rel <= SCAN_MAX:
                        n_hits = re_scan_hits(row, end, lab, n_rel, <uint64_t> n_items, hit_rank, False)
                        if graded:
                            for j in range(n_hits):
                                hit_pos[j] = <int32_t> re_search(lab, n_rel, row[hit_rank[j]])
                    else:
                        n_hits = re_search_hits(row, end, lab, n_rel, hit_rank, hit_pos, False)
                    for j in range(n_hits):
                        hit_gain[j] = _gain(l_val[ls + hit_pos[j]], power) if graded else 1.0
                v = _expected_row(metric, k, truncated, n_rel, length, &ties[i, 0] if width > 0 else NULL,
                                  hit_rank, hit_gain, n_hits, dp)
                if divide and metric == DCG and v == v:
                    v = min(v / norm[lrow], 1.0) if norm[lrow] > 0 else 0.0
                out[i] = v
        free(hit_rank)
        free(hit_pos)
        free(hit_gain)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the tie kernel")


cdef void _reorder_row(const rank_t* row, const int8_t* tie, int64_t* out, Py_ssize_t length, Py_ssize_t upto,
                       const label_idx_t* lab, Py_ssize_t n_rel, const float64_t* vals, bint best,
                       double* key, double* tmp_key, int64_t* ids, int64_t* tmp_ids,
                       Py_ssize_t* perm) noexcept nogil:
    """``reorder`` of one ranking (``vals``: the label values, NULL for binary labels), of
    the groups that start before ``upto``."""
    cdef Py_ssize_t a = 0, b, j, pos
    while a < length and a < upto:
        b = a + 1
        while b < length and tie[b - 1]:
            b += 1
        if b - a > 1:
            for j in range(a, b):
                ids[j - a] = row[j]
                pos = re_search(lab, n_rel, row[j])
                if pos < 0:
                    key[j - a] = 0.0
                elif vals != NULL:
                    key[j - a] = vals[pos]
                else:
                    key[j - a] = 1.0
            re_sort_group(key, ids, tmp_ids, tmp_key, perm, b - a, best)
            for j in range(a, b):
                out[j] = ids[j - a]
        a = b


def reorder(const label_idx_t[::1] l_indptr, const label_idx_t[::1] l_ind, const float64_t[::1] l_val,
            bint binary, const rank_t[:, ::1] ranks, const int64_t[::1] lengths, const int8_t[:, ::1] ties,
            bint best, Py_ssize_t k, int64_t[:, ::1] out, int n_threads):
    """Each ranking with every tied group in its best order (``best``: relevant items first,
    by decreasing label value, else by item order) or its worst (the reverse: non-relevant
    first, then increasing label value), into ``out`` (shape of ``ranks``; pads copied). Only
    the groups that start within the cutoff ``k`` are reordered (``k < 0``: every group)."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1]
    if ties.shape[0] != n or ties.shape[1] != width or out.shape[0] != n or out.shape[1] != width \
            or lengths.shape[0] != n:
        raise ValueError("ties and out need the shape of the rankings")
    cdef bint broadcast = l_indptr.shape[0] == 2 and n != 1
    cdef bint graded = not binary and l_val.shape[0] > 0
    cdef Py_ssize_t nnz = l_ind.shape[0]
    cdef Py_ssize_t i, j, lrow, ls, n_rel, length
    cdef double* key = NULL
    cdef double* tmp_key = NULL
    cdef int64_t* ids = NULL
    cdef int64_t* tmp_ids = NULL
    cdef Py_ssize_t* perm = NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)
    with nogil, parallel(num_threads=n_threads):
        key = <double*> malloc((width + 1) * sizeof(double))
        tmp_key = <double*> malloc((width + 1) * sizeof(double))
        ids = <int64_t*> malloc((width + 1) * sizeof(int64_t))
        tmp_ids = <int64_t*> malloc((width + 1) * sizeof(int64_t))
        perm = <Py_ssize_t*> malloc((width + 1) * sizeof(Py_ssize_t))
        if key == NULL or tmp_key == NULL or ids == NULL or tmp_ids == NULL or perm == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                if width == 0:
                    continue
                for j in range(width):
                    out[i, j] = ranks[i, j]
                lrow = 0 if broadcast else i
                ls = l_indptr[lrow]
                n_rel = l_indptr[lrow + 1] - ls
                length = lengths[i]
                if ls < 0 or n_rel < 0 or ls + n_rel > nnz or length < 0 or length > width:
                    continue
                _reorder_row(&ranks[i, 0], &ties[i, 0], &out[i, 0], length,
                             length if k < 0 or k > length else k, &l_ind[ls] if n_rel > 0 else NULL,
                             n_rel, &l_val[ls] if graded and n_rel > 0 else NULL, best, key, tmp_key, ids,
                             tmp_ids, perm)
        free(key)
        free(tmp_key)
        free(ids)
        free(tmp_ids)
        free(perm)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the tie kernel")


def stored_positions(const int64_t[::1] indptr, const int64_t[::1] ids, const rank_t[:, ::1] ranks,
                     const int64_t[::1] lengths, int64_t[:, ::1] out, int n_threads):
    """Where each ranked id of row i is stored among the sorted ids ``ids[indptr[i]:indptr[i +
    1]]`` of a CSR score matrix (``Rankings.from_scores`` with ``ties="keep"``, to read the
    ranked scores); 0 for the padding and for an id that is not stored."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], nnz = ids.shape[0]
    if indptr.shape[0] != n + 1 or lengths.shape[0] != n or out.shape[0] != n or out.shape[1] != width:
        raise ValueError("one CSR row, length and output row per ranking")
    cdef Py_ssize_t i, j, s, e, pos
    with nogil:
        for i in prange(n, schedule='static', num_threads=n_threads):
            s = indptr[i]
            e = indptr[i + 1]
            if s < 0 or e < s or e > nnz:
                e = s = 0
            for j in range(width):
                out[i, j] = 0
                if j < lengths[i] and e > s:
                    pos = re_search(&ids[s], e - s, ranks[i, j])
                    if pos >= 0:
                        out[i, j] = s + pos
