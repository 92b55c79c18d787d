"""Typed top-k selection of ``Rankings.from_scores``: the loops over rows.

The selection itself (one pass per row, running threshold, exclusions merged while
scanning, stable sort of the winners) is in ``_topk_algo.h``, compiled once per
instruction-set path (``_topk.h``); ``rankereval/data/_rankings.py`` validates the input,
chooses the buffer size and writes the messages.

Scores are read in their own type. They arrive here as bytes (a ``uint8`` view of the
array, no copy) with a type code (``_topk.h``: ``re_score_code``), and the C++ code
dispatches on the code once per row: one Cython function instead of a fused
specialisation per score type keeps the extension small and quick to build.
"""
from cython.parallel cimport parallel, prange
from libc.stdlib cimport calloc, free

from libc.stdint cimport int8_t, int64_t, uint8_t

import numpy as np


cdef extern from "_topk.h":
    enum re_topk_mode:
        RE_DENSE
        RE_LISTED
        RE_SPARSE
    enum:
        RE_N_PATHS
    ctypedef void (*re_topk_row_fn)(int code, bint out64, int mode, const void* scores, const int64_t* ids,
                                    Py_ssize_t length, Py_ssize_t m, const int64_t* keep, const int64_t* keep_end,
                                    Py_ssize_t k, const int64_t* x, const int64_t* x_end, void* scratch,
                                    Py_ssize_t cap, void* out, Py_ssize_t width, int64_t* out_len, int64_t* n_bad,
                                    const void* next) noexcept nogil
    ctypedef bint (*re_topk_sampled_fn)(const float* row, Py_ssize_t m, Py_ssize_t k, float* t) noexcept nogil
    Py_ssize_t re_topk_cap(Py_ssize_t k, Py_ssize_t most, Py_ssize_t m) noexcept nogil
    size_t re_topk_scratch_bytes(Py_ssize_t cap, Py_ssize_t m) noexcept nogil
    bint re_topk_path_supported(int p) noexcept nogil
    const char* re_topk_path_name(int p) noexcept nogil
    re_topk_row_fn re_topk_path_row(int p) noexcept nogil
    re_topk_sampled_fn re_topk_path_sampled(int p) noexcept nogil


# The instruction-set paths of the kernel (``_topk.h``), by name, best last
PATHS = tuple(re_topk_path_name(p).decode() for p in range(RE_N_PATHS))


def available_paths():
    """The paths this CPU can run (``portable`` always, then ``avx2``, ``avx512``)."""
    return tuple(name for p, name in enumerate(PATHS) if re_topk_path_supported(p))


def _default_path():
    """The best path the CPU has; ``RANKEREVAL_DISABLE_AVX512=1`` keeps AVX2 and
    ``RANKEREVAL_DISABLE_AVX2=1`` the portable path (read once, at import: for benchmarks that
    compare builds, including earlier ones that read the same variables)."""
    import os

    have = available_paths()
    if os.environ.get("RANKEREVAL_DISABLE_AVX2"):
        return "portable"
    if os.environ.get("RANKEREVAL_DISABLE_AVX512") and "avx2" in have:
        return "avx2"
    return have[len(have) - 1]  # (no negative indices: wraparound is off)


cdef int _path = PATHS.index(_default_path())


def path():
    """The name of the path :func:`topk` takes."""
    return PATHS[_path]


def _set_path(name):
    """Make :func:`topk` take the path ``name`` (for tests and measurements; not thread-safe).
    Returns the path taken before. A ValueError for a path this CPU cannot run."""
    global _path
    if name not in PATHS:
        raise ValueError(f"_set_path: unknown top-k path {name!r}; the paths are {', '.join(PATHS)}")
    if name not in available_paths():
        raise ValueError(f"_set_path: this CPU cannot run the top-k path {name!r} (it lacks the instructions); "
                         f"it can run {', '.join(available_paths())}")
    before = PATHS[_path]
    _path = PATHS.index(name)
    return before


class forced_path:
    """``with forced_path("avx2"): ...``: the top-k takes that path inside the block (the one
    before is restored after); see :func:`_set_path`."""

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.before = _set_path(self.name)
        return self

    def __exit__(self, *exc):
        _set_path(self.before)
        return False


cdef enum:
    # rows handed to a thread at a time (dynamic: a busy core takes fewer); the first row of
    # a chunk is not read ahead (which thread takes the chunk is not known), 1 in 16
    ROWS_PER_CHUNK = 16
    # results of this many bytes or more are faulted in before the rows are ranked, one
    # write a 4 KiB page (see topk)
    PREFAULT_BYTES = 1 << 22
    PAGE_BYTES = 4096


def buffer_size(Py_ssize_t k, Py_ssize_t most, Py_ssize_t m):
    """The per-thread selection buffer (``cap`` of :func:`topk`) for the top ``k`` of rows
    with at most ``most`` candidates each, dense rows of ``m`` scores scanned whole (0 when
    the rows are sparse or only listed ids are read): ``_topk_traits.h``, ``re_topk_cap``."""
    if k < 1 or most < k or m < 0:
        raise ValueError("buffer_size: needs 1 <= k <= most and m >= 0")
    return re_topk_cap(k, most, m)


def sampled_threshold(const float[::1] row, Py_ssize_t k):
    """The threshold from which :func:`topk` scans the dense float32 ``row`` at ``k`` (estimated
    on a sample of the row: ``_topk_algo.h``, ``re_sample_threshold``), or None where it starts from
    none. For the tests."""
    cdef float t = 0
    if row.shape[0] == 0 or k < 1:
        raise ValueError("sampled_threshold: needs a row of at least one score and k >= 1")
    if not re_topk_path_sampled(_path)(&row[0], row.shape[0], k, &t):
        return None
    return t


def topk(int code, Py_ssize_t itemsize, const uint8_t[:, :] dense, Py_ssize_t m,
         const int64_t[::1] indptr, const int64_t[::1] ids, const uint8_t[::1] data,
         Py_ssize_t k, Py_ssize_t cap,
         const int64_t[::1] v_indptr, const int64_t[::1] v_ids, int v_mode,
         const int64_t[::1] x_indptr, const int64_t[::1] x_ids, int x_mode,
         uint8_t[:, ::1] out, bint out64, int64_t[::1] out_len, int64_t[::1] n_bad, int n_threads):
    """Top ``k`` items of each row into ``out`` (a byte view of int32 or int64 ids; after the
    ranking of each row, the rest of the row is set to -1).

    Dense scores: ``dense`` is a byte view of an ``(n, m)`` array whose rows are contiguous
    (``indptr`` is then ignored and may be empty). Sparse or ragged scores (``dense`` is
    None): row ``i`` holds the scores ``data[indptr[i]:indptr[i + 1]]`` (counted in items of
    ``itemsize`` bytes) of the items ``ids[...]`` (ascending).

    Filters are CSR structures with sorted rows whose ids are padded with one sentinel
    (never empty); mode 0: no filter, 1: one row per score row, 2: one row for all.
    ``cap`` (at least k + 32 unless no row has more than ``cap`` candidates) is the size of the
    per-thread buffer. ``out`` needs at least one id column. Writes the number of items
    ranked and the number of NaN/infinite candidate scores of each row.
    """
    cdef bint is_dense = dense is not None
    cdef Py_ssize_t n = dense.shape[0] if is_dense else indptr.shape[0] - 1, i, r, start, length
    cdef void* scratch = NULL
    cdef size_t nbytes = re_topk_scratch_bytes(cap, m if is_dense else 0)
    cdef int8_t[::1] failed = np.zeros(1, dtype=np.int8)  # shared flag (a scalar would be thread-private)
    cdef const int64_t* vp = &v_indptr[0]
    cdef const int64_t* vi = &v_ids[0]
    cdef const int64_t* xp = &x_indptr[0]
    cdef const int64_t* xi = &x_ids[0]
    cdef const int64_t* x_lo
    cdef const int64_t* x_hi
    cdef const int64_t* keep
    cdef const int64_t* keep_end
    cdef const uint8_t* dp = NULL
    cdef const uint8_t* nxt
    cdef const int64_t* ip = NULL
    cdef int mode
    cdef re_topk_row_fn row_fn = re_topk_path_row(_path)  # the path: one choice per call
    cdef Py_ssize_t width = out.shape[1] // (8 if out64 else 4)
    cdef uint8_t* o
    cdef Py_ssize_t out_bytes = out.shape[0] * out.shape[1], off
    if n <= 0:
        return
    if out.shape[0] != n or width < 1 or width < k:
        raise ValueError("topk: out needs one row per score row and at least k id columns")
    if is_dense:
        if m <= 0 or dense.shape[1] != m * itemsize:
            raise ValueError("topk: dense scores need contiguous rows of at least one score")
    else:
        if data.shape[0] == 0 or data.shape[0] != ids.shape[0] * itemsize or indptr[n] > ids.shape[0]:
            raise ValueError("topk: sparse scores need matching, non-empty data and ids")
        dp = &data[0]
        ip = &ids[0]
    if out_bytes >= PREFAULT_BYTES:
        # A new result's memory is given its pages on first write; with transparent huge
        # pages (NumPy asks for them from 4 MiB) that clears 2 MiB at once, in whichever
        # thread writes first, while it is between rows: the clearing evicts the row read
        # ahead into its cache, and the other thread waits when it writes to the same page.
        # One write a page here first, in one thread, before any row is read (the kernel
        # overwrites every entry): 20 000 x 20 000 float32 scores, k = 1000 (an 80 MB
        # result), 2 threads: 0.098 s instead of 0.113 s, the pages' clearing included
        # (0.092 s into a result written before).
        o = &out[0, 0]
        with nogil:
            off = 0
            while off < out_bytes:
                o[off] = 0xff
                off += PAGE_BYTES
    with nogil, parallel(num_threads=n_threads):
        scratch = calloc(nbytes, 1)  # zeroed: the exclusion masks of the dense scan start clear
        if scratch == NULL:
            failed[0] = 1
        else:
            for i in prange(n, schedule='dynamic', chunksize=ROWS_PER_CHUNK):
                r = 0 if x_mode == 2 else i
                x_lo = xi + xp[r] if x_mode else xi
                x_hi = xi + xp[r + 1] if x_mode else xi
                r = 0 if v_mode == 2 else i
                keep = vi + vp[r] if v_mode else NULL
                keep_end = vi + vp[r + 1] if v_mode else NULL
                if is_dense:
                    mode = RE_LISTED if v_mode else RE_DENSE
                    # the row this thread takes next (the same chunk, or any with one thread), read
                    # ahead while this one is worked on (_topk_traits.h: re_readahead)
                    nxt = (&dense[i + 1, 0] if ((i + 1) % ROWS_PER_CHUNK != 0 or n_threads == 1) and i + 1 < n
                           else NULL)
                    row_fn(code, out64, mode, &dense[i, 0], keep, keep_end - keep if v_mode else m, m,
                                NULL, NULL, k, x_lo, x_hi, scratch, cap, &out[i, 0], width, &out_len[i], &n_bad[i],
                                nxt)
                else:
                    start = indptr[i]
                    length = indptr[i + 1] - start
                    row_fn(code, out64, RE_SPARSE, dp + start * itemsize, ip + start, length, 0,
                                keep, keep_end, k, x_lo, x_hi, scratch, cap, &out[i, 0], width, &out_len[i],
                                &n_bad[i], NULL)
            free(scratch)
    if failed[0]:
        raise MemoryError("could not allocate the scratch space to rank scores")
