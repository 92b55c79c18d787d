"""Typed kernel of Serendipity (``rankereval/metrics/_serendipity.py``, which validates the
inputs and owns the formula's edge cases; this module only loops).

For ranking ``i``, with ``H`` its user's history (the row of the history CSR: row ``i``, or
row 0 when the history has a single row) and ``S`` the item-item similarity (a CSR over the
catalogue, rows sorted, every id inside it):

    out[i] = (1 / k') * sum over the top k' items r of (1 - sum_{h in H} S[r, h] / |H|) * rel(r)

``rel(r)`` is 1 (``ones``) or the value of ``r`` in the ranking's label row (0 when the row
does not hold it). Each thread marks the history of its ranking in a byte array over the
catalogue, walks the similarity row of each relevant top-k item once (O(|H| + k nnz(row))
per ranking, no dense product) and unmarks. A ranked id outside the catalogue is reported in
``bad[0]`` (left at -1 when there is none) and its ranking gets NaN; nothing is read out of
bounds.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport NAN
from libc.stdlib cimport calloc, free
from libc.stdint cimport uint8_t

from rankereval._typedefs cimport float64_t, int8_t, int64_t, label_idx_t, rank_t

import numpy as np


cdef inline double _label(const label_idx_t[::1] indptr, const label_idx_t[::1] indices,
                          const float64_t[::1] values, Py_ssize_t row, int64_t item) noexcept nogil:
    """The value of ``item`` in label row ``row`` (sorted ids; 0 when absent), by bisection."""
    cdef Py_ssize_t lo = indptr[row], hi = indptr[row + 1], mid
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if indices[mid] < item:
            lo = mid + 1
        else:
            hi = mid
    if lo < indptr[row + 1] and indices[lo] == item:
        return values[lo]
    return 0.0


def serendipity(const rank_t[:, ::1] ranks, const int64_t[::1] lengths, Py_ssize_t k,
                const int64_t[::1] h_indptr, const int64_t[::1] h_indices,
                const int64_t[::1] s_indptr, const int64_t[::1] s_indices, const float64_t[::1] s_data,
                const label_idx_t[::1] l_indptr, const label_idx_t[::1] l_indices,
                const float64_t[::1] l_values, bint ones, float64_t[::1] out, int64_t[::1] bad,
                int n_threads):
    """``out[i]``: Serendipity@k of ranking ``i`` (NaN for an empty top k or an empty
    history). ``h_*``: the history, one row or one per ranking, ids inside the catalogue
    (checked by the caller); ``s_*``: the similarity, ``n_items`` rows; ``l_*``: the labels,
    one row or one per ranking (unread with ``ones``)."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], n_items = s_indptr.shape[0] - 1
    cdef Py_ssize_t n_hist = h_indptr.shape[0] - 1, n_lab = l_indptr.shape[0] - 1
    cdef Py_ssize_t i, j, p, kk, hr, lr, nh
    cdef int64_t item, h
    cdef double total, sim, rel
    cdef uint8_t* mark = NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)
    if lengths.shape[0] != n:
        raise ValueError("lengths must have one entry per ranking")
    if n_hist != 1 and n_hist != n:
        raise ValueError("the history must have one row, or one per ranking")
    if not ones and n_lab != 1 and n_lab != n:
        raise ValueError("the labels must have one row, or one per ranking")
    if s_indices.shape[0] < s_indptr[n_items] or s_data.shape[0] < s_indptr[n_items] \
            or h_indices.shape[0] < h_indptr[n_hist]:
        raise ValueError("a CSR's indptr points past its indices")
    with nogil, parallel(num_threads=n_threads):
        mark = <uint8_t*> calloc(n_items + 1, sizeof(uint8_t))
        if mark == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                kk = lengths[i]
                if kk < 0:
                    kk = 0
                if kk > width:
                    kk = width
                if kk > k:
                    kk = k
                hr = i if n_hist > 1 else 0
                nh = h_indptr[hr + 1] - h_indptr[hr]
                if kk == 0 or nh <= 0:
                    out[i] = NAN
                    continue
                for p in range(h_indptr[hr], h_indptr[hr + 1]):
                    h = h_indices[p]
                    if h >= 0 and h < n_items:
                        mark[h] = 1
                lr = i if n_lab > 1 else 0
                total = 0.0
                for j in range(kk):
                    item = ranks[i, j]
                    if item < 0 or item >= n_items:
                        bad[0] = item
                        total = NAN
                        break
                    rel = 1.0 if ones else _label(l_indptr, l_indices, l_values, lr, item)
                    if rel == 0.0:
                        continue
                    sim = 0.0
                    for p in range(s_indptr[item], s_indptr[item + 1]):
                        h = s_indices[p]
                        if h >= 0 and h < n_items and mark[h]:
                            sim = sim + s_data[p]
                    total = total + (1.0 - sim / nh) * rel
                for p in range(h_indptr[hr], h_indptr[hr + 1]):
                    h = h_indices[p]
                    if h >= 0 and h < n_items:
                        mark[h] = 0
                out[i] = total / kk
            free(mark)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the serendipity kernel")
