"""Byte-level loops of the TREC readers: one pass over a block of text that says whether the
fast parse applies, and short ids packed into 64-bit integers."""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.stdlib cimport calloc, free


cdef extern from "_scan.h":
    ctypedef struct re_scan_t:
        int64_t n_newlines
        int64_t n_empty
        int irregular
        int special
    re_scan_t re_scan(const uint8_t* p, size_t n) noexcept nogil
    int64_t re_parse_plain(const uint8_t* p, size_t n, int n_cols, int qi, int di, int vi, uint64_t* q,
                           uint64_t* d, double* v, int64_t cap) noexcept nogil
    ctypedef struct re_slot:
        uint64_t key
        int64_t code
    size_t re_encode_ids(re_slot* table, int bits, const uint64_t* ids, size_t n, int32_t* codes,
                         uint64_t* uniques, int64_t* n_uniques, int64_t limit) noexcept nogil


def scan_block(const uint8_t[::1] buf):
    """``(n_newlines, n_empty_lines, irregular, special)`` of a block of text.

    ``n_empty_lines`` counts the lines without any byte (the text before the first newline
    is a line). ``irregular``: a space starts or ends a line or follows another space (the
    fields are then not separated by exactly one space). ``special``: the block holds a
    byte that the readers rewrite before parsing (``#``, tab, carriage return, vertical tab
    or form feed). The loop is in ``_scan.h``.
    """
    cdef re_scan_t r
    if buf.shape[0] == 0:
        return 0, 0, False, False
    with nogil:
        r = re_scan(&buf[0], buf.shape[0])
    return r.n_newlines, r.n_empty, bool(r.irregular), bool(r.special)


def parse_plain(const uint8_t[::1] buf, int n_cols, int qi, int di, int vi, Py_ssize_t n_lines):
    """``(q, d, value)`` of a block of plain text (see ``re_parse_plain`` in ``_scan.h``): the
    ids of columns ``qi`` and ``di`` packed as :func:`pack_ids` packs them, the numbers of
    column ``vi``; or None when the block needs the general parser. ``n_lines``: an upper
    bound of its number of lines."""
    cdef uint64_t[::1] q = np.empty(n_lines, dtype=np.uint64)
    cdef uint64_t[::1] d = np.empty(n_lines, dtype=np.uint64)
    cdef double[::1] v = np.empty(n_lines, dtype=np.float64)
    cdef int64_t rows
    if not 0 <= qi < n_cols or not 0 <= di < n_cols or not 0 <= vi < n_cols:
        raise ValueError("column indices out of range")
    if buf.shape[0] == 0 or n_lines == 0:
        return None
    with nogil:
        rows = re_parse_plain(&buf[0], buf.shape[0], n_cols, qi, di, vi, &q[0], &d[0], &v[0], n_lines)
    if rows < 0:
        return None
    return np.asarray(q)[:rows], np.asarray(d)[:rows], np.asarray(v)[:rows]


def pack_ids(const int32_t[::1] offsets, const uint8_t[::1] data, uint64_t[::1] out):
    """Write string ``i`` (the bytes ``data[offsets[i]:offsets[i + 1]]``) into ``out[i]`` as a
    big-endian integer, zero-padded on the right; False (``out`` partly written) if a string
    is empty, longer than 8 bytes or holds a NUL byte, since the packing is then not
    one-to-one. Order-preserving: comparing the integers compares the strings byte-wise."""
    cdef Py_ssize_t n = offsets.shape[0] - 1, i
    cdef int32_t start, length, j
    cdef uint64_t word
    cdef uint8_t c
    cdef bint ok = True
    if n > out.shape[0]:
        raise ValueError(f"out holds {out.shape[0]} values, {n} strings were given")
    if n > 0 and (offsets[0] < 0 or offsets[n] > data.shape[0]):
        raise ValueError("offsets point outside data")
    with nogil:
        for i in range(n):
            start = offsets[i]
            length = offsets[i + 1] - start
            if length < 1 or length > 8:
                ok = False
                break
            word = 0
            for j in range(length):
                c = data[start + j]
                if c == 0:
                    ok = False
                    break
                word = (word << 8) | c
            if not ok:
                break
            out[i] = word << (8 * (8 - length))
    return ok


# the table is grown (GROWTH times) once it would hold more ids than LOAD_NUM / LOAD_DEN of
# its slots: it is sized by the distinct ids seen, not by the number of ids given
_LOAD_NUM = 3
_LOAD_DEN = 4
_GROWTH_BITS = 1
_MAX_IDS = (1 << 31) - 1


cdef class PackedIds:
    """Integer codes of ids packed by :func:`pack_ids` or :func:`parse_plain`, in order of
    first appearance, block after block (:meth:`encode`); :meth:`uniques` are the packed
    ids of codes 0, 1, ..."""
    cdef re_slot* table
    cdef int bits
    cdef object _uniques  # uint64 array, the first n used
    cdef int64_t n

    def __cinit__(self):
        self.bits = 10
        self.table = <re_slot*> calloc(<size_t> 1 << self.bits, sizeof(re_slot))
        if self.table == NULL:
            raise MemoryError()
        self._uniques = np.empty(1 << 10, dtype=np.uint64)
        self.n = 0

    def __dealloc__(self):
        free(self.table)

    cdef int64_t _limit(self):
        return ((<int64_t> 1 << self.bits) * _LOAD_NUM) // _LOAD_DEN

    cdef void _grow(self) except *:
        cdef int bits = self.bits + _GROWTH_BITS
        cdef size_t size = <size_t> 1 << bits
        cdef re_slot* table = <re_slot*> calloc(size, sizeof(re_slot))
        cdef uint64_t[::1] keys = self._uniques
        cdef int32_t[::1] scratch = np.empty(max(self.n, 1), dtype=np.int32)
        cdef int64_t n = 0
        if table == NULL:
            raise MemoryError()
        # the same ids in the same order get the same codes
        if self.n:
            with nogil:
                re_encode_ids(table, bits, &keys[0], self.n, &scratch[0], &keys[0], &n, self.n)
        free(self.table)
        self.table = table
        self.bits = bits

    def encode(self, const uint64_t[::1] ids):
        """int32 codes of ``ids`` (packed ids: never 0)."""
        cdef Py_ssize_t n = ids.shape[0], start = 0
        out = np.empty(n, dtype=np.int32)
        cdef int32_t[::1] codes = out
        cdef uint64_t[::1] uniques
        cdef int64_t limit, count
        if n and np.asarray(ids).min() == 0:
            raise ValueError("0 is not a packed id")
        while start < n:
            limit = self._limit()
            if self.n >= limit:
                self._grow()
                continue
            if limit > self._uniques.shape[0]:
                if self.n >= _MAX_IDS:
                    raise ValueError(f"more than {_MAX_IDS} distinct ids")
                grown = np.empty(min(limit, _MAX_IDS), dtype=np.uint64)
                grown[:self.n] = self._uniques[:self.n]
                self._uniques = grown
            limit = min(limit, self._uniques.shape[0])
            uniques = self._uniques
            count = self.n
            with nogil:
                start += re_encode_ids(self.table, self.bits, &ids[start], n - start, &codes[start],
                                       &uniques[0], &count, limit)
            self.n = count
        return out

    def uniques(self):
        """The packed ids of codes 0, 1, ... (a copy)."""
        return self._uniques[:self.n].copy()

    def __len__(self):
        return self.n
