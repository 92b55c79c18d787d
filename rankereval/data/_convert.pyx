"""Typed kernels of the data layer: validation and conversion in one pass.

Validation, messages and dtype decisions live in the ``rankereval.data`` package; this module only loops.
Each function returns per-row flags or counts instead of raising inside ``nogil`` code, and
the caller turns them into an error message that names the offending row.
"""
from cython.parallel cimport parallel, prange
from libc.math cimport INFINITY
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from libc.stdint cimport uint16_t

from rankereval._typedefs cimport in_id_t, int8_t, int32_t, int64_t, rank_t, score_t, uint32_t, uint64_t

import numpy as np


cdef extern from *:
    int RANKEREVAL_DEBUG_BUILD


def debug_build():
    """Whether the kernels were compiled with bounds checks (``RANKEREVAL_DEBUG=1``)."""
    return bool(RANKEREVAL_DEBUG_BUILD)

# row kernels of the dense conversion (copy, range check, duplicate check)
cdef extern from "_dense.h":
    uint64_t re_copy_or_plain[T, Q](const T* p, Q* q, Py_ssize_t m) noexcept nogil
    uint64_t re_copy_or[T](const T* p, int32_t* q, Py_ssize_t m, bint stream) noexcept nogil
    bint re_dup_stamped[T](const T* p, Py_ssize_t m, uint16_t* stamps, uint16_t e) noexcept nogil
    void re_stream_fence() noexcept nogil
    void re_populate_write(void* p, size_t nbytes) noexcept nogil
    void re_prefetch(const void* p, Py_ssize_t nbytes) noexcept nogil


# Duplicate ids in a row are found in linear time. A bitset over the id range (set while the
# row is scanned, cleared after it: 12.5 kB for 100k items, so it stays in L1) is the fastest
# when ids are small; when ids are huge (e.g. hashed ids near 2**62) an open-addressing hash
# table sized to the row is used.

cdef inline Py_ssize_t _first_dup(const rank_t* row, Py_ssize_t n, uint64_t* bits,
                                  int64_t* table, int tbits) noexcept nogil:
    """Index of the first repeated id in row[0:n], or -1. ``bits`` is left all zero."""
    cdef Py_ssize_t j, t
    cdef int64_t v
    cdef uint64_t h, mask, bit
    if n < 2:
        return -1
    if bits != NULL:
        for j in range(n):
            v = row[j]
            bit = (<uint64_t> 1) << (v & 63)
            if bits[v >> 6] & bit:
                for t in range(j):  # clear what this row set, for the next row
                    bits[row[t] >> 6] = 0
                return j
            bits[v >> 6] |= bit
        for j in range(n):
            bits[row[j] >> 6] = 0
        return -1
    mask = (<uint64_t> 1 << tbits) - 1
    memset(table, 0xff, (mask + 1) * sizeof(int64_t))  # every slot -1 (ids are >= 0)
    for j in range(n):
        v = row[j]
        h = (<uint64_t> v * <uint64_t> 0x9E3779B97F4A7C15ULL) >> (64 - tbits)
        while table[h] != -1:
            if table[h] == v:
                return j
            h = (h + 1) & mask
        table[h] = v
    return -1


cdef inline int _table_bits(Py_ssize_t max_row_len) noexcept nogil:
    cdef int bits = 1
    while (<Py_ssize_t> 1 << bits) < 2 * max_row_len:
        bits += 1
    return bits


cdef extern from "../_utils/_limits.h":
    long long RE_BITSET_MAX_BITS
    bint re_bitset_fits(int64_t n_bits, int64_t n_ids) noexcept nogil

cdef inline bint _copy_row_fits_int31(const in_id_t* p, rank_t* q, Py_ssize_t m, int64_t* row_max) noexcept nogil:
    """Copy p[0:m] to q with a cast; True (and the row max) when every id is in [0, 2**31).
    The max is taken on the copy, in a second loop the compiler vectorises."""
    cdef Py_ssize_t j
    cdef rank_t mx = 0
    if re_copy_or_plain(p, q, m) >> 31:
        return False
    for j in range(m):
        mx = q[j] if q[j] > mx else mx
    row_max[0] = mx
    return True


def copy_minmax(const in_id_t[:, :] a, rank_t[:, ::1] out, int n_threads):
    """Copy ``a`` (any strides) into ``out`` with a C cast; return (lo, hi).

    ``hi`` is the largest id; ``lo`` is negative if and only if some id is negative (it is the
    exact minimum only for rows holding an id outside [0, 2**31)). One pass for conversion
    and range check: the caller retries with a wider ``out`` when ``hi`` does not fit, and
    rejects negative ids, so the cast never loses information in a result that is kept.
    """
    cdef Py_ssize_t n = a.shape[0], m = a.shape[1], i, j
    cdef int64_t[::1] row_lo = np.zeros(n, dtype=np.int64)
    cdef int64_t[::1] row_hi = np.empty(n, dtype=np.int64)
    cdef bint unit_stride = m > 0 and a.strides[1] == sizeof(in_id_t)
    cdef const in_id_t* p
    cdef rank_t* q
    cdef in_id_t v, a_lo, a_hi
    cdef int64_t fast_hi
    if n == 0 or m == 0:
        return 0, -1
    for i in prange(n, nogil=True, schedule='static', num_threads=n_threads):
        q = &out[i, 0]
        if unit_stride and _copy_row_fits_int31(&a[i, 0], q, m, &fast_hi):
            row_hi[i] = fast_hi
            continue
        a_lo = a[i, 0]
        a_hi = a_lo
        for j in range(m):
            v = a[i, j]
            q[j] = <rank_t> v
            a_lo = v if v < a_lo else a_lo
            a_hi = v if v > a_hi else a_hi
        row_lo[i] = a_lo
        row_hi[i] = a_hi
    return int(np.min(row_lo)), int(np.max(row_hi))


cdef enum:
    # ids a flat check pass takes at a time: its counters fit in 32 bits (which the compiler
    # vectorises at twice the width of 64-bit ones), and the second pass over a chunk's ids
    # reads them from the cache
    FLAT_CHUNK = 1 << 16


cdef (int64_t, int64_t) _copy_ids_chunk(const in_id_t* x, rank_t* out, Py_ssize_t n,
                                        int64_t n_cols) noexcept nogil:
    """Copy ``n`` ids into ``out``: (ids outside [0, n_cols), neighbours that do not
    increase). The range test is one unsigned comparison in the ids' own width (a negative
    id becomes a large one)."""
    cdef Py_ssize_t j
    cdef int32_t n_out = 0, n_down = 0
    cdef uint32_t hi32
    cdef uint64_t hi64
    if in_id_t is int32_t:
        hi32 = <uint32_t> (n_cols if n_cols < (<int64_t> 1 << 31) else (<int64_t> 1 << 31))
        for j in range(n):
            out[j] = <rank_t> x[j]
            n_out += (<uint32_t> x[j]) >= hi32
    else:
        hi64 = <uint64_t> n_cols
        for j in range(n):
            out[j] = <rank_t> x[j]
            n_out += (<uint64_t> x[j]) >= hi64
    for j in range(1, n):
        n_down += x[j] <= x[j - 1]
    return n_out, n_down


def copy_csr_structure(const in_id_t[::1] indptr, const in_id_t[::1] indices, int64_t n_cols,
                       rank_t[::1] out_indptr, rank_t[::1] out_indices, int n_threads):
    """Copy a CSR structure into the storage dtype while checking it.

    Returns 0 when it is valid and canonical (every row strictly increasing), 1 when it is
    valid but a row is unsorted or repeats an id (the caller canonicalises), 2 when it is
    invalid: indptr not starting at 0, decreasing or past the end of indices, or a column
    id outside [0, n_cols) (the caller asks scipy for the message). What is copied is
    meaningful only with 0.

    Flat passes over chunks of the ids, each without a dependence between iterations (so
    the compiler vectorises them): the copy with a count of ids out of range, a count of
    neighbours that do not increase, and the same count at the row boundaries, which do not
    matter.
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1, i, j, nnz, c, start, stop, n_chunks
    cdef int64_t n_out = 0, n_down = 0, n_down_at_starts = 0, chunk_out, chunk_down
    if n < 0 or indptr[0] != 0 or indptr[n] > indices.shape[0] or n_cols < 0:
        return 2
    for i in range(n + 1):
        if i < n and indptr[i + 1] < indptr[i]:
            return 2
        out_indptr[i] = <rank_t> indptr[i]
    nnz = indptr[n]
    n_chunks = (nnz + FLAT_CHUNK - 1) // FLAT_CHUNK
    for c in prange(n_chunks, nogil=True, schedule='static', num_threads=n_threads):
        start = c * FLAT_CHUNK
        stop = min(nnz, start + FLAT_CHUNK)
        chunk_out, chunk_down = _copy_ids_chunk(&indices[start], &out_indices[start], stop - start, n_cols)
        n_out += chunk_out
        n_down += chunk_down
        if c > 0:  # the pair across the chunks' border
            n_down += indices[start] <= indices[start - 1]
    if n_out:
        return 2
    if n_down:
        # a row boundary j (after a non-empty row, before the end) pairs ids of two rows
        for i in range(1, n):
            j = indptr[i]
            if indptr[i - 1] < j < nnz:
                n_down_at_starts += indices[j] <= indices[j - 1]
    return 1 if n_down > n_down_at_starts else 0


cdef (int64_t, int64_t) _label_data_chunk(const score_t* x, Py_ssize_t n, bint binary) noexcept nogil:
    """(zeros, bad values) among ``n`` stored labels (see check_label_data)."""
    cdef Py_ssize_t i
    cdef int32_t n_zero = 0, n_bad = 0
    cdef score_t v
    if binary:
        for i in range(n):
            v = x[i]
            n_zero += v == 0
            n_bad += (v != 0) & (v != 1)
    else:
        for i in range(n):
            v = x[i]
            n_zero += v == 0
            n_bad += not (v >= 0 and v < INFINITY)
    return n_zero, n_bad


def check_label_data(const score_t[::1] data, bint binary, int n_threads):
    """One pass over stored label values: ``(n_zero, ok)``.

    ``ok`` is False when a value is not finite, negative, or (``binary``) neither 0 nor 1;
    the caller then finds the offending value for its message. Counts, not branches, in
    chunks with 32-bit counters, so that the loop vectorises.
    """
    cdef Py_ssize_t n = data.shape[0], c, start, stop, n_chunks = (n + FLAT_CHUNK - 1) // FLAT_CHUNK
    cdef int64_t n_zero = 0, n_bad = 0, chunk_zero, chunk_bad
    for c in prange(n_chunks, nogil=True, schedule='static', num_threads=n_threads):
        start = c * FLAT_CHUNK
        stop = min(n, start + FLAT_CHUNK)
        chunk_zero, chunk_bad = _label_data_chunk(&data[start], stop - start, binary)
        n_zero += chunk_zero
        n_bad += chunk_bad
    return n_zero, n_bad == 0


# Duplicate checks of copy_dense_ids, by the size of the row's ids: a per-thread array of
# 16-bit stamps below DENSE_STAMP_MAX (8 MB at most), a bitset below RE_BITSET_MAX_BITS
# (8 MB), a hash table above. Both arrays grow with the ids seen.
cdef enum:
    DENSE_STAMP_MAX = 1 << 22
    DENSE_PREFETCH_ROWS = 8  # rows of input requested ahead of the one being converted


cdef struct _DupState:
    # per-thread state that changes inside a prange loop: reached through a pointer, because
    # Cython makes every variable assigned in the loop body private to each iteration
    uint16_t* stamps
    Py_ssize_t stamp_cap
    uint16_t epoch
    uint64_t* bits
    Py_ssize_t bit_cap


cdef inline Py_ssize_t _grown(uint64_t hi) noexcept nogil:
    """Capacity for ids up to hi: a power of two, at least 4096."""
    cdef Py_ssize_t cap = 4096
    while <uint64_t> cap <= hi:
        cap = cap * 2
    return cap


def copy_dense_ids(const in_id_t[:, ::1] a, int32_t[:, ::1] out, bint large, int n_threads):
    """Copy a C-contiguous 2-D id array into int32 ``out`` and find repeated ids, in one pass.

    Each row is cast, range-checked and checked for duplicates while it is in L1 cache, so
    the input is read once and the output written once (two streaming passes over the
    output, as in copy + duplicate check, cost a third more on this project's benchmark
    machine). The row kernels are in ``_dense.h``. The duplicate checks read the input row,
    not the output: a large output is written with streaming stores, which leave the caches.
    It uses per-thread stamps or a bitset that grow with the ids seen, or a hash table for
    a row with larger ids (see DENSE_STAMP_MAX). ``large``: ``out`` is larger than the
    caches, so it is faulted in first from this thread (``re_populate_write``) and written
    with streaming stores; a small output is better left in the caches.

    Returns ``(fits, bad)``: ``fits`` is False when some id is outside [0, 2**31) (then
    ``bad`` is not meaningful: the caller takes the general path); ``bad`` holds 1 for each
    row with a repeated id.
    """
    cdef Py_ssize_t n = a.shape[0], m = a.shape[1], i, cap
    cdef int8_t[::1] bad = np.zeros(n, dtype=np.int8)
    cdef int8_t[::1] flags = np.zeros(2, dtype=np.int8)  # shared: [id out of range, no memory]
    cdef uint64_t hi
    cdef _DupState* st = NULL
    cdef void* grown
    cdef int64_t* table = NULL
    cdef int tbits = _table_bits(m)
    if n == 0 or m == 0:
        return True, np.asarray(bad)
    if large:
        with nogil:
            re_populate_write(&out[0, 0], n * m * sizeof(int32_t))
    with nogil, parallel(num_threads=n_threads):
        st = <_DupState*> calloc(1, sizeof(_DupState))
        table = <int64_t*> malloc((<size_t> 1 << tbits) * sizeof(int64_t))
        if table == NULL or st == NULL:
            flags[1] = 1
        else:
            for i in prange(n, schedule='static'):
                if flags[0] or flags[1]:
                    continue
                if i + DENSE_PREFETCH_ROWS < n:
                    re_prefetch(&a[i + DENSE_PREFETCH_ROWS, 0], m * sizeof(in_id_t))
                # hi: the OR of the row's ids, which has the same highest bit as their max
                hi = re_copy_or(&a[i, 0], &out[i, 0], m, large)
                if hi >> 31:
                    flags[0] = 1
                    continue
                if hi < DENSE_STAMP_MAX:
                    if hi >= <uint64_t> st.stamp_cap:
                        cap = _grown(hi)
                        grown = calloc(cap, sizeof(uint16_t))
                        if grown == NULL:
                            flags[1] = 1
                            continue
                        free(st.stamps)  # the new array is all zero: no stamp of epoch >= 1
                        st.stamps = <uint16_t*> grown
                        st.stamp_cap = cap
                    st.epoch = st.epoch + 1
                    if st.epoch == 0:  # the stamp wrapped: clear once every 65535 rows
                        memset(st.stamps, 0, st.stamp_cap * sizeof(uint16_t))
                        st.epoch = 1
                    if re_dup_stamped(&a[i, 0], m, st.stamps, st.epoch):
                        bad[i] = 1
                    continue
                if hi < <uint64_t> RE_BITSET_MAX_BITS and hi >= <uint64_t> st.bit_cap:
                    cap = _grown(hi)
                    grown = calloc(cap >> 6, sizeof(uint64_t))
                    if grown == NULL:
                        flags[1] = 1
                        continue
                    free(st.bits)  # all zero: every row clears what it set
                    st.bits = <uint64_t*> grown
                    st.bit_cap = cap
                if _first_dup(&a[i, 0], m, st.bits if hi < <uint64_t> st.bit_cap else NULL, table, tbits) >= 0:
                    bad[i] = 1
        re_stream_fence()
        if st != NULL:
            free(st.stamps)
            free(st.bits)
        free(st)
        free(table)
    if flags[1]:
        raise MemoryError("could not allocate the scratch space to check for duplicate ids")
    return not flags[0], np.asarray(bad)


def ragged_duplicates(const int64_t[::1] indptr, const rank_t[::1] ids, int64_t max_id, int n_threads):
    """Flag rows of a ragged (CSR-like) id structure that hold a repeated id.

    Returns (bad, is_sorted): an int8 array with 1 per offending row, and whether every row
    is strictly increasing already (then no sort is needed to build canonical CSR).
    """
    cdef Py_ssize_t n = indptr.shape[0] - 1, i, j, start, end, max_len = 0
    cdef int8_t[::1] bad = np.zeros(n, dtype=np.int8)
    cdef int8_t[::1] unsorted = np.zeros(n, dtype=np.int8)
    cdef bint bitset_mode
    cdef int tbits
    cdef uint64_t* bits = NULL
    cdef int64_t* table = NULL
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)  # shared flag (a scalar would be thread-private)
    for i in range(n):
        if indptr[i + 1] - indptr[i] > max_len:
            max_len = indptr[i + 1] - indptr[i]
    if indptr[n] > ids.shape[0]:
        raise ValueError("indptr does not match the ids")
    bitset_mode = re_bitset_fits(max_id + 1, ids.shape[0])
    tbits = _table_bits(max_len)
    with nogil, parallel(num_threads=n_threads):
        bits = NULL
        table = NULL
        if bitset_mode:
            bits = <uint64_t*> calloc((max_id >> 6) + 1, sizeof(uint64_t))
        else:
            table = <int64_t*> malloc((<size_t> 1 << tbits) * sizeof(int64_t))
        if bits == NULL and table == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='static'):
                start = indptr[i]
                end = indptr[i + 1]
                for j in range(start + 1, end):
                    if ids[j] <= ids[j - 1]:
                        unsorted[i] = 1
                        break
                if unsorted[i] and end - start > 1:
                    # a strictly increasing row cannot hold a duplicate: only check the others
                    if _first_dup(&ids[start], end - start, bits, table, tbits) >= 0:
                        bad[i] = 1
        free(bits)
        free(table)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space to check for duplicate ids")
    return np.asarray(bad), not np.any(unsorted)


cdef inline bint _contains(const int64_t* a, Py_ssize_t n, int64_t v) noexcept nogil:
    """Binary search for v in the sorted a[0:n]."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and a[lo] == v


def filter_rankings(const rank_t[:, ::1] ranks, const int64_t[::1] lengths,
                    const int64_t[::1] f_indptr, const int64_t[::1] f_ids, bint broadcast, bint keep,
                    rank_t[:, ::1] out, int64_t[::1] out_len, int n_threads):
    """Keep (``keep``) or drop (not ``keep``) the items of each ranking listed in a filter row.

    The filter is a CSR structure with sorted rows; ``broadcast`` means its single row serves
    every ranking. ``out`` must be pre-filled with -1; order within a ranking is preserved.
    """
    cdef Py_ssize_t n = ranks.shape[0], i, j, f_row, f_start, f_n, c
    cdef bint found
    cdef const int64_t* fi = &f_ids[0]  # never empty: the caller pads ids with one sentinel
    for i in prange(n, nogil=True, schedule='static', num_threads=n_threads):
        f_row = 0 if broadcast else i
        f_start = f_indptr[f_row]
        f_n = f_indptr[f_row + 1] - f_start
        c = 0
        for j in range(lengths[i]):
            found = _contains(fi + f_start, f_n, ranks[i, j])
            if found == keep:
                out[i, c] = ranks[i, j]
                c = c + 1
        out_len[i] = c
