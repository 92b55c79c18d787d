"""Typed kernel of the relevance profile: what each ranked item is, rank by rank.

The metric kernel (``_kernels.pyx``) reduces a short list of hits per ranking; the measures
whose value depends on the whole sequence of judgements of a ranking (trec_eval's G, infAP,
Rndcg, interpolated precisions averaged over levels, ...) read instead the *profile* of each
ranking: one code per rank of its top k,

* the item's label value (its grade; 1 for binary labels) when the label row stores it,
* 0 when it is judged but not stored (judged not relevant),
* -2 when it is in the pool but not judged (a negative grade of a qrels file),
* -1 when it is not in the pool (unjudged; every item not stored, without judgments),
* NaN past the end of the ranking.

The formulas over the profile live in ``rankereval/metrics/_profile.py``; this module only
looks items up (binary search in each sorted CSR row) and writes the codes. Every row is
bounds-checked against its CSR; a row whose CSR offsets are out of range gets NaN codes.
"""
from cython.parallel cimport prange
from libc.math cimport NAN

from rankereval._typedefs cimport float64_t, int64_t, label_idx_t, rank_t

cdef extern from "_lookup.h":
    Py_ssize_t re_search[L, V](const L* a, Py_ssize_t n, V v) noexcept nogil

cdef enum:
    NOT_POOLED = -1     # the codes of the profile (see the module docstring)
    POOL_UNJUDGED = -2


cdef inline bint broadcast_ok(Py_ssize_t n_indptr, Py_ssize_t n) noexcept nogil:
    return n_indptr == 2 and n != 1


cdef inline bint _in_range(Py_ssize_t start, Py_ssize_t size, Py_ssize_t nnz) noexcept nogil:
    return start >= 0 and size >= 0 and start + size <= nnz


def gather(const label_idx_t[::1] l_indptr, const label_idx_t[::1] l_ind, const float64_t[::1] l_val,
           const label_idx_t[::1] j_indptr, const label_idx_t[::1] j_ind,
           const label_idx_t[::1] p_indptr, const label_idx_t[::1] p_ind,
           const rank_t[:, ::1] ranks, const int64_t[::1] lengths, float64_t[:, ::1] out, int n_threads):
    """``out[i, t]``: the code of the item at rank t of ranking i (see the module docstring),
    for t < ``out.shape[1]``.

    ``l_val`` empty: binary labels (value 1). ``j_indptr`` empty: no judgments (an item not
    stored is -1, not pooled). ``p_indptr`` empty: no pool beyond the judged items. One label
    row (``l_indptr`` of length 2) serves every ranking.
    """
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], kk = out.shape[1]
    cdef Py_ssize_t nnz = l_ind.shape[0], j_nnz = j_ind.shape[0], p_nnz = p_ind.shape[0]
    cdef bint has_val = l_val.shape[0] > 0, has_j = j_indptr.shape[0] > 0, has_p = p_indptr.shape[0] > 0
    if out.shape[0] != n or lengths.shape[0] != n or kk > width:
        raise ValueError("one output row per ranking and at most the rankings' width of columns")
    if has_val and l_val.shape[0] != nnz:
        raise ValueError("one label value per stored label")
    if (has_j and j_indptr.shape[0] != l_indptr.shape[0]) or (has_p and p_indptr.shape[0] != l_indptr.shape[0]):
        raise ValueError("the judged items and the pool need one CSR row per label row")
    if l_indptr.shape[0] < (2 if broadcast_ok(l_indptr.shape[0], n) else n + 1):
        raise ValueError("one label row per ranking, or one for all")
    cdef bint broadcast = l_indptr.shape[0] == 2 and n != 1
    cdef Py_ssize_t i, t, r, ls = 0, n_rel = 0, js = 0, n_j = 0, ps = 0, n_p = 0, length, pos
    cdef rank_t item
    cdef bint ok
    for i in prange(n, nogil=True, schedule='static', num_threads=n_threads):
        r = 0 if broadcast else i
        # (the row bounds are assigned here, not through pointers, so that they are private
        # to each thread of the prange)
        ls = l_indptr[r]
        n_rel = l_indptr[r + 1] - ls
        ok = _in_range(ls, n_rel, nnz)
        js = 0
        n_j = 0
        ps = 0
        n_p = 0
        if has_j:
            js = j_indptr[r]
            n_j = j_indptr[r + 1] - js
            ok = ok and _in_range(js, n_j, j_nnz)
        if has_p:
            ps = p_indptr[r]
            n_p = p_indptr[r + 1] - ps
            ok = ok and _in_range(ps, n_p, p_nnz)
        length = lengths[i]
        if length < 0:
            length = 0
        if length > kk:
            length = kk
        for t in range(kk):
            if not ok or t >= length:
                out[i, t] = NAN
                continue
            item = ranks[i, t]
            pos = re_search(&l_ind[ls], n_rel, item) if n_rel > 0 else -1
            if pos >= 0:
                out[i, t] = l_val[ls + pos] if has_val else 1.0
            elif has_j and n_j > 0 and re_search(&j_ind[js], n_j, item) >= 0:
                out[i, t] = 0.0
            elif has_p and n_p > 0 and re_search(&p_ind[ps], n_p, item) >= 0:
                out[i, t] = <double> POOL_UNJUDGED
            else:
                out[i, t] = <double> NOT_POOLED
