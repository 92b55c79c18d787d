"""Typed kernels of the beyond-accuracy metrics: they read rankings only, never labels.

Validation, normalisation of the inputs (popularity, tail sets, item features) and the
formulas' edge cases live in ``rankereval/metrics/_beyond.py`` and ``_system.py``; this
module only loops. Every function checks each ranked id against the size of the array it
indexes and reports the first id out of range in ``bad[0]`` (left at -1 when there is none),
so no id is ever read out of bounds; the caller raises the error.

* ``mean_values``: per ranking, the mean of a per-item value over the top k (novelty,
  average popularity, tail share: one kernel, different values).
* ``ild_dense`` / ``ild_csr``: intra-list diversity from unit-norm item vectors, in
  O(k d) per ranking: the sum of pairwise dot products of the top k is
  ``(|s|^2 - sum_i |x_i|^2) / 2`` with ``s`` the sum of the k vectors.
* ``exposure``: how often (or with which rank-discounted weight) each item appears in the
  top k of all rankings, from one parallel pass with one histogram per thread.
"""
from cython.parallel cimport parallel, prange, threadid
from libc.math cimport NAN
from libc.stdlib cimport calloc, free
from libc.stdint cimport uint8_t
from libc.string cimport memset

from rankereval._typedefs cimport float64_t, int8_t, int64_t, label_idx_t, rank_t

cdef extern from "_lookup.h":
    void re_prefetch(const void* p, Py_ssize_t bytes) noexcept nogil

import numpy as np

cdef enum:
    PREFETCH_AHEAD = 2  # rankings: the feature rows of ranking i + 2 are requested at ranking i
    ROWS_AHEAD = 8      # rankings: the top of ranking i + 8 is requested at ranking i

#: the kernels a beyond-accuracy metric can name in its registry entry (``MetricInfo.kernel``)
KERNELS = ("mean_values", "ild", "exposure")


cdef inline Py_ssize_t _top(Py_ssize_t k, int64_t length, Py_ssize_t width) noexcept nogil:
    """Number of items of a ranking in its top k (lengths are trusted only up to the width)."""
    cdef Py_ssize_t n = length
    if n < 0:
        n = 0
    if n > width:
        n = width
    return n if n < k else k


def mean_values(const rank_t[:, ::1] ranks, const int64_t[::1] lengths, Py_ssize_t k,
                const float64_t[::1] values, bint beyond_ok, double beyond, float64_t[::1] out,
                int64_t[::1] bad, int n_threads):
    """``out[i]``: mean of ``values[id]`` over the top ``k`` ids of ranking ``i`` (NaN when
    the top k is empty). With ``beyond_ok``, an id past the end of ``values`` counts as
    ``beyond`` instead of being reported (a tail set given as ids covers no catalogue)."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], n_values = values.shape[0]
    cdef Py_ssize_t i, j, kk
    cdef int64_t item
    cdef double s
    for i in prange(n, nogil=True, schedule='static', num_threads=n_threads):
        if i + ROWS_AHEAD < n and width > 0:  # the rows are read with a long stride: request them early
            re_prefetch(&ranks[i + ROWS_AHEAD, 0], min(k, width) * sizeof(rank_t))
        kk = _top(k, lengths[i], width)
        s = 0.0
        for j in range(kk):
            item = ranks[i, j]
            if item >= n_values and beyond_ok:
                s = s + beyond
            elif item < 0 or item >= n_values:
                bad[0] = item
                s = NAN
                break
            else:
                s = s + values[item]
        out[i] = s / kk if kk > 0 else NAN


def ild_dense(const rank_t[:, ::1] ranks, const int64_t[::1] lengths, Py_ssize_t k,
              const float64_t[:, ::1] unit, const float64_t[::1] sq_norms, float64_t[::1] out,
              int64_t[::1] bad, int n_threads):
    """``out[i]``: 1 - mean cosine similarity over the pairs of the top ``k`` of ranking ``i``
    (NaN for fewer than two items), from row-normalised features ``unit`` (one row per
    item) and their squared norms (1 up to rounding)."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1]
    cdef Py_ssize_t n_items = unit.shape[0], d = unit.shape[1]
    cdef Py_ssize_t i, j, t, kk
    cdef int64_t item
    cdef double ss, diag
    cdef double* acc = NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)
    if sq_norms.shape[0] != n_items:
        raise ValueError("sq_norms must have one entry per row of unit")
    with nogil, parallel(num_threads=n_threads):
        acc = <double*> calloc(d + 1, sizeof(double))
        if acc == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                # the feature rows are read at random: request those of a ranking a few rows
                # ahead (one row of 64 doubles is 8 cache lines) while this one is summed
                if i + ROWS_AHEAD < n and width > 0:
                    re_prefetch(&ranks[i + ROWS_AHEAD, 0], min(k, width) * sizeof(rank_t))
                if i + PREFETCH_AHEAD < n:
                    for j in range(_top(k, lengths[i + PREFETCH_AHEAD], width)):
                        item = ranks[i + PREFETCH_AHEAD, j]
                        if item >= 0 and item < n_items:
                            re_prefetch(&unit[item, 0], d * sizeof(double))
                kk = _top(k, lengths[i], width)
                if kk < 2:
                    out[i] = NAN
                    continue
                memset(acc, 0, d * sizeof(double))
                diag = 0.0
                for j in range(kk):
                    item = ranks[i, j]
                    if item < 0 or item >= n_items:
                        bad[0] = item
                        diag = NAN
                        break
                    diag = diag + sq_norms[item]
                    for t in range(d):
                        acc[t] = acc[t] + unit[item, t]
                ss = 0.0
                for t in range(d):
                    ss = ss + acc[t] * acc[t]
                out[i] = _ild(ss, diag, kk)
            free(acc)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the diversity kernel")


cdef inline double _ild(double ss, double diag, Py_ssize_t kk) noexcept nogil:
    """1 - the mean of the kk (kk - 1) / 2 pairwise dot products, from the squared norm ``ss``
    of the sum of the unit vectors and the sum ``diag`` of their squared norms."""
    cdef double v = 1.0 - (ss - diag) / (kk * (kk - 1.0))
    # cosine similarities lie in [-1, 1], so 1 - their mean lies in [0, 2]; the O(k d) sum
    # rounds differently from the pairwise one and can land an ulp outside
    if v != v:
        return v
    return 0.0 if v < 0.0 else (2.0 if v > 2.0 else v)


def ild_csr(const rank_t[:, ::1] ranks, const int64_t[::1] lengths, Py_ssize_t k,
            const label_idx_t[::1] indptr, const label_idx_t[::1] indices, const float64_t[::1] data,
            Py_ssize_t n_features, const float64_t[::1] sq_norms, float64_t[::1] out,
            int64_t[::1] bad, int n_threads):
    """:func:`ild_dense` for row-normalised features in CSR form (``indptr``, ``indices``,
    ``data``; ``n_features`` columns). Each thread accumulates into a dense vector of
    ``n_features`` and resets only the entries it touched."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], n_items = indptr.shape[0] - 1
    cdef Py_ssize_t i, j, p, t, kk, n_touched
    cdef int64_t item, col
    cdef double ss, diag
    cdef double* acc = NULL
    cdef uint8_t* seen = NULL
    cdef int64_t* touched = NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)
    if sq_norms.shape[0] != n_items:
        raise ValueError("sq_norms must have one entry per item")
    with nogil, parallel(num_threads=n_threads):
        acc = <double*> calloc(n_features + 1, sizeof(double))
        seen = <uint8_t*> calloc(n_features + 1, sizeof(uint8_t))
        touched = <int64_t*> calloc(n_features + 1, sizeof(int64_t))
        if acc == NULL or seen == NULL or touched == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                if i + ROWS_AHEAD < n and width > 0:
                    re_prefetch(&ranks[i + ROWS_AHEAD, 0], min(k, width) * sizeof(rank_t))
                kk = _top(k, lengths[i], width)
                if kk < 2:
                    out[i] = NAN
                    continue
                diag = 0.0
                n_touched = 0
                for j in range(kk):
                    item = ranks[i, j]
                    if item < 0 or item >= n_items:
                        bad[0] = item
                        diag = NAN
                        break
                    diag = diag + sq_norms[item]
                    for p in range(indptr[item], indptr[item + 1]):
                        col = indices[p]
                        if col < 0 or col >= n_features:  # a corrupt CSR: never write outside
                            bad[0] = item
                            diag = NAN
                            break
                        if not seen[col]:
                            seen[col] = 1
                            touched[n_touched] = col
                            n_touched = n_touched + 1
                        acc[col] = acc[col] + data[p]
                ss = 0.0
                for t in range(n_touched):
                    col = touched[t]
                    ss = ss + acc[col] * acc[col]
                    acc[col] = 0.0
                    seen[col] = 0
                out[i] = _ild(ss, diag, kk)
        free(acc)
        free(seen)
        free(touched)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space of the diversity kernel")


def exposure(const rank_t[:, ::1] ranks, const int64_t[::1] lengths, Py_ssize_t k,
             const float64_t[::1] disc, const float64_t[::1] weights, float64_t[:, ::1] hist,
             int64_t[::1] bad, int n_threads):
    """Exposure of every item in the top ``k`` of all rankings, one histogram per thread.

    ``hist`` has shape ``(n_threads, n_items)`` and must be zero on entry; the caller sums
    its rows. A ranked item at rank ``j`` (0-based) of ranking ``i`` adds
    ``weights[i] * disc[j]`` to its entry; an empty ``disc`` means 1 for every rank and an
    empty ``weights`` 1 for every ranking (the bootstrap's resampling multiplicities).
    """
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], n_items = hist.shape[1]
    cdef Py_ssize_t i, j, kk, tid
    cdef int64_t item
    cdef double w
    cdef bint use_disc = disc.shape[0] > 0, use_weights = weights.shape[0] > 0
    if hist.shape[0] < n_threads:
        raise ValueError("hist needs one row per thread")
    if use_weights and weights.shape[0] != n:
        raise ValueError("weights must have one entry per ranking")
    if use_disc and disc.shape[0] < min(k, width):
        raise ValueError("disc must cover every rank of the top k")
    with nogil, parallel(num_threads=n_threads):
        tid = threadid()
        for i in prange(n, schedule='static'):
            if i + ROWS_AHEAD < n and width > 0:  # the rows are read with a long stride: request them early
                re_prefetch(&ranks[i + ROWS_AHEAD, 0], min(k, width) * sizeof(rank_t))
            w = weights[i] if use_weights else 1.0
            if w == 0.0:
                continue
            kk = _top(k, lengths[i], width)
            for j in range(kk):
                item = ranks[i, j]
                if item < 0 or item >= n_items:
                    bad[0] = item
                    break
                hist[tid, item] = hist[tid, item] + (w * disc[j] if use_disc else w)
