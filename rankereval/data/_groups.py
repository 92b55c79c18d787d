"""Grouped (learning-to-rank) arrays: one flat row per (query, document) pair, as LightGBM,
XGBoost and scikit-learn hold them, turned into one label row / one ranking per query.

The layout of the rows is found once (:class:`_Groups`): which query each row belongs to,
the order of the queries, and each row's *position* within its query (0, 1, ... in the order
of the input rows). That position is the item id of the row in the labels and rankings built
from the same ``qid``/``group``, so labels and rankings built separately agree.

Cost of the layout, for ``n`` rows:

* ``group=`` sizes (LightGBM), or a ``qid`` whose rows of each query are contiguous and in
  ascending query order (XGBoost's requirement): linear, no sort and no copy of the scores;
* a ``qid`` whose queries are contiguous but not in ascending order: linear, plus one sort of
  the (few) distinct query ids and a reordering of the rows;
* any other ``qid`` (rows of a query scattered): one stable ``np.argsort`` of ``qid``
  (about the cost of sorting the scores once), plus a reordering of the rows.

The rankings come from the top-k kernel of :meth:`Rankings.from_scores` over the scores of
each query (ragged rows); ties keep the lower position, that is the earlier input row.
"""
import numpy as np

from rankereval._validation import check_real
from rankereval.data._checks import _check_scores, _issparse, _reject_masked
from rankereval.data._conversion import _host_array


def _flat(x, name, n=None, what="rows"):
    """``x`` as a 1-D NumPy array (of length ``n`` if given), or a clear error."""
    x = _host_array(x, name)
    _reject_masked(x, name)
    if _issparse(x):
        raise TypeError(f"{name}: expected a 1-D array, got a sparse matrix")
    try:
        a = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: could not read it as a 1-D array ({exc})") from None
    if a.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array (one entry per row), got shape {a.shape}")
    if n is not None and a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} {what}, expected {n} (one per row of the data)")
    return a


def _finite(a, name):
    """``a`` (real numbers, checked by the caller) if it holds no NaN or infinite value."""
    if a.dtype.kind == "f":
        bad = ~np.isfinite(a)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"{name}[{i}] is {a[i]}: NaN and infinite values are not allowed (drop "
                             "that row, or give it a finite value)")
    return a


def _grades(y, name, n):
    """Grades of ``n`` rows: real, finite (any sign; NumericLabels checks the sign)."""
    g = _flat(y, name, n)
    if g.dtype.kind not in "biuf":
        raise ValueError(f"{name}: grades must be real numbers, got values of dtype {g.dtype}")
    return _finite(g, name)


class _Groups:
    """Where each flat row goes: ``perm`` (the rows in query order, or None when they are in
    it already), ``indptr`` (the rows of query ``i`` are ``perm[indptr[i]:indptr[i + 1]]``),
    ``pos`` (each reordered row's position within its query: its item id), ``query_ids``
    (one per query, in row order of the result) and ``n`` (the number of flat rows)."""

    __slots__ = ("perm", "indptr", "pos", "query_ids", "n")

    def __init__(self, n, qid=None, group=None):
        if (qid is None) == (group is None):
            raise TypeError("give the query of each row as qid=, or the group sizes as group= "
                            "(LightGBM's form), " + ("not both" if qid is not None else "one of them"))
        if group is not None:
            self._from_sizes(group, n)
        else:
            self._from_qid(qid, n)
        sizes = np.diff(self.indptr)
        self.pos = np.arange(n, dtype=np.int64) - np.repeat(self.indptr[:-1], sizes)
        self.n = n

    def _from_sizes(self, group, n):
        g = _flat(group, "group")
        if g.size and g.dtype.kind not in "iu":
            if g.dtype.kind == "f" and np.all(np.isfinite(g)) and np.all(g == np.round(g)):
                g = g.astype(np.int64)
            else:
                raise ValueError(f"group: sizes must be integers, got values of dtype {g.dtype}")
        g = g.astype(np.int64)
        if g.size and g.min() < 1:
            i = int(np.argmax(g < 1))
            raise ValueError(f"group[{i}] = {g[i]}: every group size must be at least 1")
        total = int(g.sum())
        if total != n:
            raise ValueError(f"group sizes sum to {total}, but the data has {n} rows; the sizes must "
                             "add up to the number of rows (LightGBM's group)")
        self.perm = None
        self.indptr = np.concatenate(([0], np.cumsum(g)))
        self.query_ids = np.arange(g.size, dtype=np.int64)

    def _from_qid(self, qid, n):
        q = _flat(qid, "qid", n)
        if q.dtype.kind == "f" and np.isnan(q).any():
            raise ValueError(f"qid[{int(np.argmax(np.isnan(q)))}] is NaN: every row needs a query id")
        if q.dtype.kind == "O":
            for i, v in enumerate(q):  # a float NaN (or None) among objects: as in a float array
                if v is None or (isinstance(v, (float, np.floating)) and v != v):
                    raise ValueError(f"qid[{i}] is {'None' if v is None else 'NaN'}: every row needs a query id")
            kinds = {type(v) for v in q}
            if len(kinds) > 1:
                names = sorted(k.__name__ for k in kinds)
                raise TypeError(f"qid holds ids of different types ({', '.join(names)}); ids of "
                                "different types never match (convert them to one type)")
        if n == 0:
            self.perm, self.indptr, self.query_ids = None, np.zeros(1, dtype=np.int64), q[:0]
            return
        try:
            change = q[1:] != q[:-1]
            n_blocks = int(np.count_nonzero(change)) + 1
            if n_blocks * 4 <= n and self._from_blocks(q, change, n):
                return
        except TypeError as exc:
            raise TypeError(f"qid: query ids must be comparable with each other ({exc})") from None
        # rows of a query scattered: one stable sort of the ids (rows keep their order)
        self.perm, qs = _stable_sort(q)
        starts = np.concatenate(([0], np.flatnonzero(qs[1:] != qs[:-1]) + 1))
        self.query_ids = q[self.perm[starts]]
        self.indptr = np.append(starts, n).astype(np.int64)

    def _from_blocks(self, q, change, n):
        """The layout when each query's rows are contiguous (runs of equal ids): then True."""
        starts = np.concatenate(([0], np.flatnonzero(change) + 1))
        block_ids = q[starts]
        border = np.argsort(block_ids, kind="stable")
        sorted_ids = block_ids[border]
        if sorted_ids.size > 1 and not np.all(sorted_ids[1:] != sorted_ids[:-1]):
            return False  # a query in two places
        lengths = np.diff(np.append(starts, n))
        self.query_ids = sorted_ids
        lens = lengths[border]
        self.indptr = np.concatenate(([0], np.cumsum(lens)))
        if np.all(border[1:] > border[:-1]):
            self.perm = None
        else:  # reorder whole blocks
            offsets = starts[border] - self.indptr[:-1]
            self.perm = np.repeat(offsets, lens) + np.arange(n, dtype=np.int64)
        return True

    @property
    def n_queries(self):
        return self.indptr.size - 1

    @property
    def width(self):
        """The largest query: the number of item ids."""
        return int(np.diff(self.indptr).max()) if self.n_queries else 0

    def take(self, values):
        return values if self.perm is None else values[self.perm]

    def csr(self, values, keep=None):
        """The values (already in query order) of each query's rows as a CSR matrix, column =
        position; ``keep``: a mask of the entries to store (the others are left out)."""
        import scipy.sparse as sp  # (not at import: the command line starts without SciPy)

        if keep is None:
            return sp.csr_array((values, self.pos, self.indptr), shape=(self.n_queries, self.width))
        kept = np.flatnonzero(keep)  # (a cumulative sum of a boolean mask is several times slower)
        indptr = np.searchsorted(kept, self.indptr)
        return sp.csr_array((values[kept], self.pos[kept], indptr), shape=(self.n_queries, self.width))

    # -- what the public constructors read (CSR matrices; the classes build themselves) ---
    def score_matrix(self, scores, name="scores"):
        """Checked scores of the rows, one CSR row per query, for ``Rankings.from_scores``."""
        s = _finite(_check_scores(_flat(scores, name, self.n), name), name)
        if s.dtype.kind == "b":
            s = s.view(np.uint8)
        return self.csr(self.take(s))

    def grades(self, y, name="y"):
        """Non-negative finite grades of the rows, in query order (float64)."""
        g = self.take(_grades(y, name, self.n)).astype(np.float64)
        if g.size and g.min() < 0:
            i = int(np.argmax(g < 0))
            row = i if self.perm is None else int(self.perm[i])
            raise ValueError(f"{name}[{row}] = {g[i]}: grades must be non-negative (0 = not relevant); "
                             "shift or clip negative grades first")
        return g

    def binary_matrix(self, y, relevance_level=1, name="y"):
        """The rows whose grade reaches ``relevance_level``, for ``BinaryLabels.from_matrix``."""
        g = _grades(y, name, self.n)
        level = check_real(relevance_level, "relevance_level")
        rel = self.take(g) >= level
        return self.csr(np.ones(rel.size), rel)

    def graded_matrix(self, g):
        """Checked grades in query order (see :meth:`grades`), for ``NumericLabels.from_matrix``."""
        return self.csr(g, g != 0)


def _stable_sort(q):
    """(stable order of ``q``, the sorted keys: anything whose runs of equal values are
    those of ``q[order]``). Integer ids whose range and row number fit 64 bits together are
    sorted as one composite key (id << bits | row) with NumPy's (SIMD) sort, several times
    faster than a stable argsort; other ids with ``np.argsort(kind='stable')``."""
    n = q.size
    if q.dtype.kind in "iub" and n:
        lo, hi = int(q.min()), int(q.max())
        bits = max(int(n - 1).bit_length(), 1)
        if (hi - lo).bit_length() + bits <= 64:
            key = q.astype(np.uint64) if lo >= 0 else (q.astype(np.int64) - lo).astype(np.uint64)
            if lo > 0:
                key -= np.uint64(lo)
            key <<= np.uint64(bits)
            key |= np.arange(n, dtype=np.uint64)
            key.sort()
            high = key >> np.uint64(bits)
            key &= np.uint64((1 << bits) - 1)
            return key.view(np.int64), high
    order = np.argsort(q, kind="stable")
    return order, q[order]

