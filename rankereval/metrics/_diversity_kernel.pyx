"""Typed kernels of the intent-aware diversity measures (ndeval's family).

The labels are :class:`~rankereval.data.IntentLabels`: a CSR of the judged items of each
query (sorted item ids; the collapsed grade is the largest over the intents), and for each
stored entry ``e`` its intents ``ent_intent[ent_ptr[e]:ent_ptr[e + 1]]`` (the query's local
intent numbers, ascending) with their grades. An intent of an entry is *relevant* when its
grade is at least ``rel`` (ndeval: a positive judgement).

Two kernels, both one typed pass with the GIL released:

* :func:`ideals`, per label row: the number of intents with a relevant item (ndeval's
  ``actualSubtopics``) and, for the normalised measures, the value of the greedy ideal
  ranking (ndeval's ``idealResult``: at each rank the item of largest gain, ties to the larger
  ``order`` key, the gains of its intents then multiplied by ``1 - alpha``). The greedy runs
  once per distinct ``alpha`` (``group`` of each metric), to the deepest rank its metrics read.
* :func:`score`, per ranking: each ranked item looked up once in its label row (binary
  search), then every metric reduced from those entries.

The sums are accumulated in ndeval's order (gains as running products, prefix sums rank by
rank, intents in ascending order), so that values equal ndeval's to the last bits.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport NAN, log
from libc.stdlib cimport free, malloc

from rankereval._typedefs cimport float64_t, int32_t, int64_t, label_idx_t, rank_t

# the measures (the ``kernel`` argument of each metric): ids of the kernels' switch
cdef enum:
    ALPHA_DCG = 0
    ALPHA_NDCG = 1
    ERR_IA = 2
    NERR_IA = 3
    P_IA = 4
    ST_RECALL = 5
    AP_IA = 6
    NRBP = 7
    NNRBP = 8

#: kernel name -> id
KERNEL_IDS = {"alpha_dcg": ALPHA_DCG, "alpha_ndcg": ALPHA_NDCG, "err_ia": ERR_IA, "nerr_ia": NERR_IA,
              "p_ia": P_IA, "strecall": ST_RECALL, "ap_ia": AP_IA, "nrbp": NRBP, "nnrbp": NNRBP}
#: the ids whose value divides by the greedy ideal's
NORMALISED = frozenset({ALPHA_NDCG, NERR_IA, NNRBP})


cdef inline double _discount(Py_ssize_t t) noexcept nogil:
    # ndeval's discount(t) for the rank t + 1 (0-based t)
    if t <= 0:
        return 1.0
    return log(2.0) / log(t + 2.0)


cdef inline Py_ssize_t _search(const label_idx_t* a, Py_ssize_t n, int64_t v) noexcept nogil:
    # position of v in the sorted a[0:n], or -1
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if <int64_t> a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < n and <int64_t> a[lo] == v:
        return lo
    return -1


cdef inline bint _row_ok(Py_ssize_t start, Py_ssize_t stop, Py_ssize_t nnz) noexcept nogil:
    return 0 <= start <= stop <= nnz


cdef inline bint _entry_ok(const int64_t[::1] ent_ptr, const int32_t[::1] ent_intent, Py_ssize_t e,
                           int64_t n_int) noexcept nogil:
    # the entry's intents lie inside the arrays and are below the row's intent count
    cdef int64_t a = ent_ptr[e], b = ent_ptr[e + 1], p
    if a < 0 or b < a or b > ent_intent.shape[0]:
        return False
    for p in range(a, b):
        if ent_intent[p] < 0 or ent_intent[p] >= n_int:
            return False
    return True


cdef inline double _gain(int64_t e, const int64_t[::1] ent_ptr, const int32_t[::1] ent_intent,
                         const float64_t[::1] ent_grade, double rel, const double* gain) noexcept nogil:
    # the gain of entry e: its relevant intents' gains, summed in intent order (ndeval's sum)
    cdef double score = 0.0
    cdef int64_t p
    for p in range(ent_ptr[e], ent_ptr[e + 1]):
        if ent_grade[p] >= rel:
            score = score + gain[ent_intent[p]]
    return score


cdef double _metric_value(int kid, int64_t k, double alpha, double beta, Py_ssize_t depth,
                          const int64_t* hits, const int64_t[::1] ent_ptr, const int32_t[::1] ent_intent,
                          const float64_t[::1] ent_grade, double rel, double* gain, int64_t* count,
                          double* total, int64_t n_int, int64_t actual, Py_ssize_t length,
                          const int64_t* n_rel_intent) noexcept nogil:
    """The (not normalised) value of measure ``kid`` of one ranking whose first ``depth``
    ranks hold the label entries ``hits`` (-1: not stored)."""
    cdef Py_ssize_t t, s, p, stop
    cdef int64_t e, nk
    cdef double score, acc = 0.0, ideal_acc = 0.0, ideal_gain, decay, v, w
    cdef int64_t pairs = 0, covered = 0
    for s in range(n_int):
        gain[s] = 1.0
        count[s] = 0
        total[s] = 0.0
    nk = k if k >= 0 else length
    stop = depth if depth < nk else nk
    if kid == ALPHA_DCG or kid == ALPHA_NDCG or kid == ERR_IA or kid == NERR_IA or kid == NRBP or kid == NNRBP:
        decay = 1.0
        for t in range(stop):
            score = 0.0
            e = hits[t]
            if e >= 0:
                for p in range(ent_ptr[e], ent_ptr[e + 1]):
                    if ent_grade[p] >= rel:
                        s = ent_intent[p]
                        score = score + gain[s]
                        gain[s] = gain[s] * (1.0 - alpha)
            if kid == ALPHA_DCG or kid == ALPHA_NDCG:
                acc = acc + score * _discount(t)
            elif kid == ERR_IA or kid == NERR_IA:
                acc = acc + score / (t + 1.0)
            else:
                acc = acc + score * decay
                decay = decay * beta
        if kid == NRBP or kid == NNRBP:
            return acc * (1.0 - (1.0 - alpha) * beta) / actual
        if nk == 0:
            return 0.0
        if k < 0 and (kid == ALPHA_NDCG or kid == NERR_IA):
            return acc  # divided by the ideal's own sum (no cutoff: no ideal-ideal to cancel)
        # ndeval's "ideal ideal" normalisation: every intent covered at every rank
        ideal_gain = <double> actual
        for t in range(nk):
            if kid == ALPHA_DCG or kid == ALPHA_NDCG:
                ideal_acc = ideal_acc + ideal_gain * _discount(t)
            else:
                ideal_acc = ideal_acc + ideal_gain / (t + 1.0)
            ideal_gain = ideal_gain * (1.0 - alpha)
        return acc / ideal_acc
    if kid == P_IA or kid == ST_RECALL:
        for t in range(stop):
            e = hits[t]
            if e >= 0:
                for p in range(ent_ptr[e], ent_ptr[e + 1]):
                    if ent_grade[p] >= rel:
                        pairs += 1
                        s = ent_intent[p]
                        if count[s] == 0:
                            covered += 1
                        count[s] += 1
        if kid == ST_RECALL:
            return (<double> covered) / (<double> actual)
        if nk == 0:
            return 0.0
        return (<double> pairs) / ((<double> nk) * actual)
    # AP_IA: the mean over the intents with a relevant item of each intent's average precision
    for t in range(stop):
        e = hits[t]
        if e >= 0:
            for p in range(ent_ptr[e], ent_ptr[e + 1]):
                if ent_grade[p] >= rel:
                    s = ent_intent[p]
                    count[s] += 1
                    total[s] = total[s] + count[s] / (t + 1.0)
    v = 0.0
    for s in range(n_int):
        if n_rel_intent[s] > 0:
            v = v + total[s] / n_rel_intent[s]
    return v / actual


def ideals(const label_idx_t[::1] indptr, const int64_t[::1] ent_ptr, const int32_t[::1] ent_intent,
           const float64_t[::1] ent_grade, const int64_t[::1] n_intents, const int64_t[::1] order, double rel,
           const int32_t[::1] kernels, const int64_t[::1] ks, const float64_t[::1] alphas,
           const float64_t[::1] betas, const int32_t[::1] group, const float64_t[::1] group_alpha,
           const int64_t[::1] group_depth, float64_t[:, ::1] norms, int64_t[::1] actual, int n_threads):
    """Per label row: ``actual[r]``, the number of intents with a relevant item, and
    ``norms[r, j]``, the value of metric ``j`` (if it is normalised) on the greedy ideal
    ranking of the row's relevant items. ``group[j]``: the greedy of metric ``j`` (one per
    distinct alpha, ``group_alpha``), run to ``group_depth`` ranks (-1: every relevant item).
    A row whose arrays are inconsistent gets ``actual`` -1."""
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, nnz = ent_ptr.shape[0] - 1, m = kernels.shape[0]
    cdef Py_ssize_t n_groups = group_alpha.shape[0]
    if n_rows < 0 or norms.shape[0] != n_rows or norms.shape[1] != m or actual.shape[0] != n_rows \
            or n_intents.shape[0] != n_rows or ent_grade.shape[0] != ent_intent.shape[0] \
            or (order.shape[0] != 0 and order.shape[0] != nnz) or ks.shape[0] != m or alphas.shape[0] != m \
            or betas.shape[0] != m or group.shape[0] != m or group_depth.shape[0] != n_groups:
        raise ValueError("inconsistent array shapes")
    cdef Py_ssize_t r, j, t, c, g, s, p, start, stop, n_cand, depth, best, max_int = 0, max_len = 0
    cdef int64_t n_int, e, nk
    cdef double score, best_score, a, acc, decay, ideal_gain, ideal_acc
    cdef bint ok
    cdef int64_t* cand
    cdef double* gain
    cdef double* gbuf
    cdef double* cur
    cdef int64_t* inv
    cdef int64_t* inv_ptr
    cdef Py_ssize_t q, max_pairs = 0
    cdef char* used
    for j in range(m):
        if group[j] < 0 or group[j] >= n_groups:
            raise ValueError("a metric's greedy group is out of range")
    for r in range(n_rows):
        if n_intents[r] > max_int:
            max_int = n_intents[r]
        if indptr[r + 1] - indptr[r] > max_len:
            max_len = indptr[r + 1] - indptr[r]
        if 0 <= indptr[r] <= indptr[r + 1] <= nnz and \
                ent_ptr[indptr[r + 1]] - ent_ptr[indptr[r]] > max_pairs:
            max_pairs = ent_ptr[indptr[r + 1]] - ent_ptr[indptr[r]]
    with nogil, parallel(num_threads=n_threads):
        cand = <int64_t*> malloc((max_len + 1) * sizeof(int64_t))
        gbuf = <double*> malloc((max_len + 1) * sizeof(double))
        used = <char*> malloc((max_len + 1) * sizeof(char))
        gain = <double*> malloc((max_int + 1) * sizeof(double))
        cur = <double*> malloc((max_len + 1) * sizeof(double))
        inv = <int64_t*> malloc((max_pairs + 1) * sizeof(int64_t))
        inv_ptr = <int64_t*> malloc((max_int + 2) * sizeof(int64_t))
        for r in prange(n_rows, schedule='dynamic'):
            start = indptr[r]
            stop = indptr[r + 1]
            n_int = n_intents[r]
            ok = _row_ok(start, stop, nnz) and n_int >= 0 and cand != NULL and gbuf != NULL \
                and used != NULL and gain != NULL and cur != NULL and inv != NULL and inv_ptr != NULL
            if ok:
                for e in range(start, stop):
                    if not _entry_ok(ent_ptr, ent_intent, e, n_int):
                        ok = False
                        break
            if not ok:
                actual[r] = -1
                for j in range(m):
                    norms[r, j] = NAN
                continue
            # the intents with a relevant item, and the items relevant to one (the candidates)
            for s in range(n_int):
                gain[s] = 0.0
            n_cand = 0
            for e in range(start, stop):
                a = 0.0
                for p in range(ent_ptr[e], ent_ptr[e + 1]):
                    if ent_grade[p] >= rel:
                        gain[ent_intent[p]] = 1.0
                        a = 1.0
                if a > 0.0:
                    cand[n_cand] = e
                    n_cand = n_cand + 1
            actual[r] = 0
            for s in range(n_int):
                if gain[s] > 0.0:
                    actual[r] += 1
            # the candidates of each intent (a CSR over the row's intents)
            for s in range(n_int + 1):
                inv_ptr[s] = 0
            for c in range(n_cand):
                e = cand[c]
                for p in range(ent_ptr[e], ent_ptr[e + 1]):
                    if ent_grade[p] >= rel:
                        inv_ptr[ent_intent[p] + 1] += 1
            for s in range(n_int):
                inv_ptr[s + 1] += inv_ptr[s]
            for c in range(n_cand):
                e = cand[c]
                for p in range(ent_ptr[e], ent_ptr[e + 1]):
                    if ent_grade[p] >= rel:
                        inv[inv_ptr[ent_intent[p]]] = c
                        inv_ptr[ent_intent[p]] += 1
            for s in range(n_int, 0, -1):
                inv_ptr[s] = inv_ptr[s - 1]
            inv_ptr[0] = 0
            for g in range(n_groups):
                depth = n_cand if group_depth[g] < 0 or group_depth[g] > n_cand else group_depth[g]
                for s in range(n_int):
                    gain[s] = 1.0
                for c in range(n_cand):
                    used[c] = 0
                # ndeval's greedy: the largest gain, ties to the larger order key. The gain of
                # every candidate is kept (``cur``) and computed again, in full and in ndeval's
                # order of the intents, only when the pick shares an intent with it (``inv``:
                # the candidates of each intent), so the values are those of ndeval's search.
                for c in range(n_cand):
                    cur[c] = _gain(cand[c], ent_ptr, ent_intent, ent_grade, rel, gain)
                for t in range(depth):
                    best = -1
                    for c in range(n_cand):
                        if used[c]:
                            continue
                        if best < 0 or cur[c] > cur[best] or (cur[c] == cur[best] and (
                                (order[cand[c]] > order[cand[best]]) if order.shape[0] != 0
                                else cand[c] > cand[best])):
                            best = c
                    used[best] = 1
                    gbuf[t] = cur[best]
                    e = cand[best]
                    for p in range(ent_ptr[e], ent_ptr[e + 1]):
                        if ent_grade[p] >= rel:
                            gain[ent_intent[p]] = gain[ent_intent[p]] * (1.0 - group_alpha[g])
                    for p in range(ent_ptr[e], ent_ptr[e + 1]):
                        if ent_grade[p] >= rel:
                            s = ent_intent[p]
                            for q in range(inv_ptr[s], inv_ptr[s + 1]):
                                c = inv[q]
                                if not used[c]:
                                    cur[c] = _gain(cand[c], ent_ptr, ent_intent, ent_grade, rel, gain)
                for j in range(m):
                    if group[j] != g:
                        continue
                    norms[r, j] = NAN
                    if actual[r] == 0:
                        continue
                    nk = ks[j] if ks[j] >= 0 else depth
                    if kernels[j] == NNRBP:
                        acc = 0.0
                        decay = 1.0
                        for t in range(depth):
                            acc = acc + gbuf[t] * decay
                            decay = decay * betas[j]
                        norms[r, j] = acc * (1.0 - (1.0 - alphas[j]) * betas[j]) / actual[r]
                    elif kernels[j] == ALPHA_NDCG or kernels[j] == NERR_IA:
                        acc = 0.0
                        for t in range(depth if depth < nk else nk):
                            if kernels[j] == ALPHA_NDCG:
                                acc = acc + gbuf[t] * _discount(t)
                            else:
                                acc = acc + gbuf[t] / (t + 1.0)
                        ideal_gain = <double> actual[r]
                        ideal_acc = 0.0
                        for t in range(nk):
                            if kernels[j] == ALPHA_NDCG:
                                ideal_acc = ideal_acc + ideal_gain * _discount(t)
                            else:
                                ideal_acc = ideal_acc + ideal_gain / (t + 1.0)
                            ideal_gain = ideal_gain * (1.0 - alphas[j])
                        norms[r, j] = acc / ideal_acc if ks[j] >= 0 else acc
        free(cand)
        free(gbuf)
        free(used)
        free(gain)
        free(cur)
        free(inv)
        free(inv_ptr)


def score(const label_idx_t[::1] indptr, const label_idx_t[::1] indices, const int64_t[::1] ent_ptr,
          const int32_t[::1] ent_intent, const float64_t[::1] ent_grade, const int64_t[::1] n_intents,
          double rel, const rank_t[:, ::1] ranks, const int64_t[::1] lengths, const int32_t[::1] kernels,
          const int64_t[::1] ks, const float64_t[::1] alphas, const float64_t[::1] betas,
          const float64_t[:, ::1] norms, const int64_t[::1] actual, float64_t[:, ::1] out, int n_threads):
    """``out[i, j]``: metric ``j`` of ranking ``i`` against label row ``i`` (or the only one).

    ``ks[j]``: the cutoff (-1: the whole ranking); ``norms`` and ``actual`` from
    :func:`ideals`. A ranking whose label row has no intent with a relevant item (or whose
    row is inconsistent) gets NaN."""
    cdef Py_ssize_t n = ranks.shape[0], width = ranks.shape[1], m = kernels.shape[0]
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1, nnz = ent_ptr.shape[0] - 1
    if n_rows < 1 or (n_rows != 1 and n_rows != n) or indices.shape[0] != nnz or lengths.shape[0] != n \
            or out.shape[0] != n or out.shape[1] != m or norms.shape[0] != n_rows or norms.shape[1] != m \
            or actual.shape[0] != n_rows or n_intents.shape[0] != n_rows or ks.shape[0] != m \
            or alphas.shape[0] != m or betas.shape[0] != m or ent_grade.shape[0] != ent_intent.shape[0]:
        raise ValueError("inconsistent array shapes")
    cdef bint broadcast = n_rows == 1 and n != 1
    cdef bint need_nrel = False
    cdef Py_ssize_t i, j, t, r, p, s, start, stop, length, depth, pos, max_int = 0
    cdef int64_t max_depth = 0, n_int, e
    cdef int64_t* hits
    cdef int64_t* count
    cdef int64_t* n_rel_intent
    cdef double* gain
    cdef double* total
    cdef double v
    for j in range(m):
        if kernels[j] < ALPHA_DCG or kernels[j] > NNRBP:
            raise ValueError(f"unknown diversity kernel id {kernels[j]}")
        if ks[j] < 0 or ks[j] > width or kernels[j] == NRBP or kernels[j] == NNRBP:
            max_depth = width
        elif ks[j] > max_depth:
            max_depth = ks[j]
        if kernels[j] == AP_IA:
            need_nrel = True
    for r in range(n_rows):
        if n_intents[r] > max_int:
            max_int = n_intents[r]
    with nogil, parallel(num_threads=n_threads):
        hits = <int64_t*> malloc((max_depth + 1) * sizeof(int64_t))
        count = <int64_t*> malloc((max_int + 1) * sizeof(int64_t))
        n_rel_intent = <int64_t*> malloc((max_int + 1) * sizeof(int64_t))
        gain = <double*> malloc((max_int + 1) * sizeof(double))
        total = <double*> malloc((max_int + 1) * sizeof(double))
        for i in prange(n, schedule='static'):
            r = 0 if broadcast else i
            start = indptr[r]
            stop = indptr[r + 1]
            n_int = n_intents[r]
            length = lengths[i]
            if length < 0:
                length = 0
            if length > width:
                length = width
            if actual[r] <= 0 or not _row_ok(start, stop, nnz) or n_int > max_int or hits == NULL \
                    or count == NULL or n_rel_intent == NULL or gain == NULL or total == NULL:
                for j in range(m):
                    out[i, j] = NAN
                continue
            depth = length if length < max_depth else max_depth
            for t in range(depth):
                pos = _search(&indices[start], stop - start, <int64_t> ranks[i, t])
                hits[t] = -1 if pos < 0 else start + pos
            if need_nrel:
                for s in range(n_int):
                    n_rel_intent[s] = 0
                for e in range(start, stop):
                    for p in range(ent_ptr[e], ent_ptr[e + 1]):
                        if ent_grade[p] >= rel:
                            n_rel_intent[ent_intent[p]] += 1
            for j in range(m):
                v = _metric_value(kernels[j], ks[j], alphas[j], betas[j], depth, hits, ent_ptr, ent_intent,
                                  ent_grade, rel, gain, count, total, n_int, actual[r], length, n_rel_intent)
                if kernels[j] == ALPHA_NDCG or kernels[j] == NERR_IA or kernels[j] == NNRBP:
                    # ndeval: a run without gain scores 0 (whatever the ideal)
                    v = 0.0 if v == 0.0 else v / norms[r, j]
                out[i, j] = v
        free(hits)
        free(count)
        free(n_rel_intent)
        free(gain)
        free(total)
