"""Ground-truth labels and rankings: validated once, stored in the layout the kernels read.

* :class:`BinaryLabels` and :class:`NumericLabels` hold one label row per query/user as a
  CSR structure (sorted item ids, no explicit zeros). Items that are not stored are not
  relevant (label 0).
* :class:`Rankings` holds one ranking per query/user as a padded integer array of shape
  ``(n_rankings, max_length)`` (pad value ``-1``) plus the length of each row.

Item ids are non-negative integers. They are stored as ``int32`` while every id fits and as
``int64`` once an id reaches ``2**31``.
"""
from itertools import chain
from numbers import Integral
import warnings

import numpy as np
import scipy.sparse as sp

from rankereval import _convert, _topk
from rankereval._threads import effective_n_threads as _n_threads
from rankereval._validation import _INT32_MAX, _INT64_MAX, MAX_ID as _MAX_ID, check_k

__all__ = ["InvalidValuesWarning", "Labels", "BinaryLabels", "NumericLabels", "Rankings"]

# a converted ranking array at least this large is written around the caches (streaming
# stores): it would not stay in them anyway, and an ordinary store first reads each line
_STREAM_BYTES = 16 << 20


class InvalidValuesWarning(UserWarning):
    """Warns about input that is valid but probably not what was meant.

    Raised for empty rankings and for non-finite scores dropped by
    :meth:`Rankings.from_scores`.
    """


def _readonly(a):
    """Freeze storage. Only an array that owns its memory stays frozen: a view of a writeable
    base could be flipped back with ``flags.writeable = True`` and edited under the kernels."""
    if not a.flags.owndata:
        a = a.copy()
    a.flags.writeable = False
    return a


def _frozen_view(a):
    """A read-only view of storage frozen by this module (a row slice of a Labels or Rankings
    object): shared without a copy, its base stays read-only."""
    v = a.view()
    v.flags.writeable = False
    return v


def _id_dtype(max_id):
    return np.int32 if max_id <= _INT32_MAX else np.int64


# ----------------------------------------------------------------------------------------
# turning user input into a ragged structure (indptr, flat ids)
# ----------------------------------------------------------------------------------------

def _is_sequence(x):
    return isinstance(x, (list, tuple, np.ndarray))


def _reject_masked(x, name):
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError(
            f"{name}: masked arrays are not supported; drop the masked entries "
            "(e.g. with a list per row) instead of masking them"
        )


def _row_of(indptr, pos):
    return int(np.searchsorted(indptr, pos, side="right") - 1)


def _check_int_ids(flat, indptr, name):
    """Return ``flat`` as an int32/int64 array of non-negative ids or raise ValueError."""
    kind = flat.dtype.kind
    if kind in "iu":
        if kind == "u" and flat.size and flat.dtype.itemsize == 8 and flat.max() > _INT64_MAX:
            pos = int(np.argmax(flat > _INT64_MAX))
            raise ValueError(
                f"{name}: item id {flat[pos]} in row {_row_of(indptr, pos)} is too large "
                f"(item ids must be below 2**63)"
            )
        if flat.dtype not in (np.int32, np.int64) or not flat.dtype.isnative:
            flat = flat.astype(np.int64)
    elif kind == "O":
        # e.g. [1, None], [1, 'a'], or Python ints beyond int64
        for pos, v in enumerate(flat):
            if not isinstance(v, Integral) or isinstance(v, (bool, np.bool_)):
                raise ValueError(
                    f"{name}: item ids must be integers, got {v!r} in row {_row_of(indptr, pos)}"
                )
            if v < 0 or v > _INT64_MAX:
                raise ValueError(
                    f"{name}: item id {v} in row {_row_of(indptr, pos)} is out of range "
                    "(item ids must be non-negative and below 2**63)"
                )
        flat = flat.astype(np.int64)
    else:
        if flat.size == 0:
            return np.zeros(0, dtype=np.int32)
        if kind == "f":
            bad = ~np.isfinite(flat) | (flat != np.round(flat))
            pos = int(np.argmax(bad)) if bad.any() else 0
            raise ValueError(
                f"{name}: item ids must be integers, got {flat.dtype} values (e.g. {flat[pos].item()!r} "
                f"in row {_row_of(indptr, pos)}); convert integral values with .astype(int)"
            )
        if kind == "b":
            raise ValueError(f"{name}: item ids must be integers, got booleans")
        raise ValueError(
            f"{name}: item ids must be integers, got values of dtype {flat.dtype} "
            f"(e.g. {flat[0].item()!r} in row 0)"
        )
    if flat.size:
        lo = flat.min()
        if lo < 0:
            pos = int(np.argmax(flat < 0))
            raise ValueError(
                f"{name}: item ids must be non-negative, got {flat[pos]} in row {_row_of(indptr, pos)}"
            )
        if flat.dtype == np.int64 and flat.max() > _MAX_ID:
            pos = int(np.argmax(flat > _MAX_ID))
            raise ValueError(
                f"{name}: item id {flat[pos]} in row {_row_of(indptr, pos)} is too large "
                "(item ids must be below 2**63 - 1)"
            )
    return flat


def _ragged_ids(x, name):
    """Parse per-row id lists into (indptr int64, flat int32/int64 ids).

    Accepts a flat 1-D list/array (one row), a list of lists/arrays (ragged), or a 2-D array.
    """
    x = _host_array(x, name)
    _reject_masked(x, name)
    if isinstance(x, np.ndarray):
        if x.ndim == 0:
            raise ValueError(f"{name}: expected one or two dimensions, got a 0-d array")
        if x.ndim > 2:
            raise ValueError(f"{name}: expected at most two dimensions, got an array of shape {x.shape}")
        if x.ndim == 1:
            x = x[None, :]
        n, m = x.shape
        indptr = np.arange(0, (n + 1) * m, m, dtype=np.int64) if m else np.zeros(n + 1, dtype=np.int64)
        return indptr, _check_int_ids(np.ascontiguousarray(x).reshape(-1), indptr, name)
    if not isinstance(x, (list, tuple)):
        raise TypeError(
            f"{name}: expected a list of id lists, a NumPy array or a SciPy sparse matrix, "
            f"got {type(x).__name__}"
        )
    rows = _rows(x, name, "id lists", "single ids")
    lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    if rows and all(isinstance(r, np.ndarray) for r in rows):
        rows = [r for r in rows if r.size]  # an empty row (float64 by default) has no ids
        if rows and all(r.dtype.kind in "iu" for r in rows):
            # concatenating uint64 with signed ints would promote to float64: go through int64
            rows = [_check_int_ids(r, np.array([0, r.size]), name).astype(np.int64, copy=False) for r in rows]
        flat = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    else:
        flat = list(chain.from_iterable(rows))
        for v in flat:  # numpy would silently turn booleans into 0/1 and nest deeper lists
            if isinstance(v, (bool, np.bool_)):
                raise ValueError(f"{name}: item ids must be integers, got booleans")
            if _is_sequence(v):
                raise ValueError(f"{name}: expected at most two dimensions (rows of ids), got deeper nesting")
        try:
            arr = np.asarray(flat) if flat else np.zeros(0, dtype=np.int64)
        except (ValueError, TypeError, OverflowError):
            arr = np.asarray(flat, dtype=object)
        if arr.dtype.kind == "f" and all(isinstance(v, Integral) for v in flat):
            arr = np.asarray(flat, dtype=object)  # e.g. uint64 mixed with int64: keep them integers
        flat = arr
        if flat.ndim != 1:
            flat = np.asarray(list(chain.from_iterable(rows)), dtype=object)
    return indptr, _check_int_ids(flat, indptr, name)


def _rows(x, name, rows_are, items_are):
    """The rows of a list input: a flat list is one row; each row one-dimensional.

    The one place the list forms of ids, labels and scores are told apart; the callers turn
    the rows into their own arrays.
    """
    if len(x) == 0 or not any(_is_sequence(r) for r in x):
        return [x]
    if not all(_is_sequence(r) for r in x):
        raise ValueError(f"{name}: mixes {rows_are} and {items_are}; give a list of rows (one per row)")
    for r in x:
        _reject_masked(r, name)
        if isinstance(r, np.ndarray) and r.ndim != 1:
            raise ValueError(f"{name}: each row must be one-dimensional, got a row of shape {r.shape}")
    return x


def _row_arrays(rows, name, rows_are, items_are):
    """:func:`_rows` as one-dimensional arrays (deeper nesting refused)."""
    arrs = [np.asarray(r) for r in _rows(rows, name, rows_are, items_are)]
    if any(a.ndim != 1 for a in arrs):
        raise ValueError(f"{name}: expected at most two dimensions ({rows_are})")
    return arrs


def _raise_duplicates(bad, indptr, flat, name):
    rows = np.flatnonzero(bad)
    if rows.size:
        r = int(rows[0])
        row = flat[indptr[r]:indptr[r + 1]]
        u, c = np.unique(row, return_counts=True)
        raise ValueError(
            f"{name}: duplicate item id {int(u[c > 1][0])} in row {r}"
            + (f" (and {rows.size - 1} more rows with duplicates)" if rows.size > 1 else "")
        )


def _check_sparse_structure(x, name):
    """Reject sparse input whose index arrays were edited into an invalid state."""
    fmt = x.format
    try:
        if fmt in ("csr", "csc", "bsr"):
            x.check_format(full_check=True)
        elif fmt == "coo":
            coords = getattr(x, "coords", None) or (x.row, x.col)
            for axis, c in enumerate(coords):
                if c.size and (c.min() < 0 or c.max() >= x.shape[axis]):
                    raise ValueError(f"index out of range along axis {axis}")
    except ValueError as exc:
        raise ValueError(f"{name}: invalid sparse {fmt} structure: {exc}") from None


def _canonical_sparse(x, name):
    """Copy any scipy sparse input to canonical CSR (sorted, summed duplicates)."""
    if x.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D sparse matrix, got {x.ndim} dimensions")
    _check_sparse_structure(x, name)
    m = sp.csr_array(x, copy=True)
    m.sum_duplicates()
    return m


# ----------------------------------------------------------------------------------------
# batches: row selection and concatenation
# ----------------------------------------------------------------------------------------

def _row_selection(key, n, cls_name):
    """``((start, stop), None)`` for a slice with step 1, else ``(None, rows)`` with the
    selected row numbers as a non-negative int64 array."""
    if isinstance(key, slice):
        start, stop, step = key.indices(n)
        if step == 1:
            return (start, max(start, stop)), None
        return None, np.arange(start, stop, step, dtype=np.int64)
    if isinstance(key, (Integral, np.integer)) and not isinstance(key, (bool, np.bool_)):
        raise TypeError(
            f"{cls_name} rows are selected with a slice, a boolean mask or a list of row numbers; "
            f"for row {key} write [{key}:{key} + 1] or [[{key}]]"
        )
    arr = _host_array(key, "key")
    if isinstance(arr, (list, tuple)):
        arr = np.asarray(arr) if len(arr) else np.zeros(0, dtype=np.int64)
    if not isinstance(arr, np.ndarray):
        raise TypeError(
            f"{cls_name} rows are selected with a slice, a boolean mask or integer row numbers, "
            f"got {type(key).__name__}"
        )
    if arr.ndim != 1:
        raise IndexError(f"a row selection must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        if arr.shape[0] != n:
            raise IndexError(f"the boolean row mask has {arr.shape[0]} entries, expected one per row ({n})")
        return None, np.flatnonzero(arr)
    if arr.dtype.kind not in "iu":
        raise IndexError(f"row numbers must be integers or booleans, got values of dtype {arr.dtype}")
    if arr.size and (arr.min() < -n or arr.max() >= n):
        bad = arr[(arr < -n) | (arr >= n)][0]
        raise IndexError(f"row {bad} is out of range for {n} rows")
    rows = arr.astype(np.int64)
    return None, np.where(rows < 0, rows + n, rows)


def _batch_parts(seq, cls, base, name):
    """The parts to concatenate as a list, all of class ``cls`` (or of one subclass of
    ``base`` when ``cls`` is None)."""
    if isinstance(seq, (base, np.ndarray, str)) or not hasattr(seq, "__iter__"):
        raise TypeError(f"{name}: expected a sequence (e.g. a list) of {(cls or base).__name__} objects, "
                        f"got {type(seq).__name__}")
    parts = list(seq)
    if not parts:
        raise ValueError(f"{name}: need at least one {(cls or base).__name__} to concatenate")
    want = cls or type(parts[0])
    for i, p in enumerate(parts):
        if type(p) is not want:
            raise TypeError(f"{name}[{i}]: expected {want.__name__}, got {type(p).__name__}")
    return parts


# ----------------------------------------------------------------------------------------
# labels
# ----------------------------------------------------------------------------------------

class Labels:
    """Base class of ground-truth labels: one sparse row of item labels per ranking.

    Do not instantiate directly; use :meth:`BinaryLabels.from_positive_indices`,
    :meth:`BinaryLabels.from_matrix` or :meth:`NumericLabels.from_matrix`.
    """

    __slots__ = ("_indptr", "_indices", "_values", "_n_items", "_judged")

    def __init__(self, *args, **kwargs):
        raise TypeError(
            f"create {type(self).__name__} with {type(self).__name__}.from_matrix(...)"
            + (" or .from_positive_indices(...)" if type(self) is BinaryLabels else "")
        )

    @classmethod
    def _from_canonical(cls, indptr, indices, values, n_items, shared=False):
        """Wrap arrays that already satisfy the storage invariants (no checks, no copies).

        ``shared``: ``indices`` and ``values`` are views of another object's frozen storage.
        """
        freeze = _frozen_view if shared else _readonly
        self = object.__new__(cls)
        self._indptr = _readonly(indptr)
        self._indices = freeze(indices)
        # BinaryLabels may leave values unset (None): all ones, made on first use (_vals)
        self._values = None if values is None else freeze(values)
        self._n_items = int(n_items)
        self._judged = None
        return self

    def _vals(self):
        if self._values is None:
            self._values = _readonly(np.ones(self._indices.shape[0]))
        return self._values

    @classmethod
    def _from_csr(cls, m):
        """Store a canonical CSR (sorted, no duplicates, no zeros) with the narrowest id dtype."""
        nnz = m.nnz
        # scipy needs 64-bit indices once the width or nnz exceeds int32, whatever the ids
        dt = _id_dtype(max(m.shape[1], nnz))
        return cls._from_canonical(
            np.asarray(m.indptr, dtype=dt),
            np.asarray(m.indices, dtype=dt),
            np.asarray(m.data, dtype=np.float64),
            m.shape[1],
        )

    # -- read-only views -----------------------------------------------------------------
    @property
    def indptr(self):
        """Row pointers of the CSR structure, shape ``(n_rows + 1,)``, read-only."""
        return self._indptr.view()

    @property
    def indices(self):
        """Item ids of the stored (non-zero) labels, sorted within each row, read-only."""
        return self._indices.view()

    @property
    def values(self):
        """Label values (float64) aligned with :attr:`indices`, never zero, read-only."""
        return self._vals().view()

    @property
    def n_rows(self):
        """Number of label rows."""
        return self._indptr.shape[0] - 1

    @property
    def n_items(self):
        """Number of item columns (largest stored id + 1, or the input matrix's width)."""
        return self._n_items

    @property
    def judged(self):
        """The judged items of each row, as :class:`BinaryLabels` (a CSR of sorted ids, every
        relevant item among them), or None when the labels carry no judgments.

        Judgments tell a judged non-relevant item (a grade-0 line of a qrels file) from an
        unjudged one, which the labels alone cannot (they store no zeros). :class:`Bpref`,
        :class:`Judged` and ``RBP(residual=True)`` need them; every other metric ignores them.
        :mod:`rankereval.io` fills them; :meth:`with_judged` adds them.
        """
        return self._judged

    def with_judged(self, judged):
        """These labels with the judged items of each row attached (see :attr:`judged`).

        Parameters
        ----------
        judged : list of lists, list of ndarrays, ndarray, scipy sparse matrix or labels
            The ids of the judged items of each row, relevant or not (anything
            :meth:`BinaryLabels.from_positive_indices` accepts, or labels: their stored
            items), one row per label row.

        Returns
        -------
        BinaryLabels or NumericLabels
            A new object of the same class, sharing the labels' storage.

        Raises
        ------
        ValueError
            If ``judged`` has another number of rows, or a relevant (stored) item of a row is
            not among its judged items.

        Examples
        --------
        >>> from rankereval import BinaryLabels
        >>> y = BinaryLabels.from_positive_indices([[0, 5], [1]])
        >>> y.with_judged([[0, 2, 5], [1, 3]]).judged.indices_to_list()
        [[0, 2, 5], [1, 3]]
        """
        if isinstance(judged, Labels):
            judged = BinaryLabels._from_canonical(judged._indptr, judged._indices, None, judged._n_items, shared=True)
        else:
            judged = BinaryLabels.from_positive_indices(judged)
        if judged.n_rows != self.n_rows:
            raise ValueError(f"judged has {judged.n_rows} rows but the labels have {self.n_rows}; "
                             "give the judged ids of every label row")
        n_items = max(self._n_items, judged._n_items)
        width = (self.n_rows, n_items)
        if not (np.array_equal(self._indptr, judged._indptr) and np.array_equal(self._indices, judged._indices)):
            self._check_judged(judged, width)
        dt = np.promote_types(self._indptr.dtype, judged._indptr.dtype)
        out = type(self)._from_canonical(self._indptr.astype(dt, copy=False), self._indices.astype(dt, copy=False),
                                         self._values, n_items, shared=True)
        out._judged = BinaryLabels._from_canonical(judged._indptr.astype(dt, copy=False),
                                                    judged._indices.astype(dt, copy=False), None,
                                                    n_items, shared=True)
        return out

    def _check_judged(self, judged, width):
        """ValueError unless every stored item of a row is among ``judged``'s items of that
        row (skipped when both hold the same items: every read of binary labels whose
        listed items are all relevant)."""
        mine = sp.csr_array((np.ones(self._indices.shape[0]), self._indices, self._indptr), shape=width)
        theirs = sp.csr_array((np.ones(judged._indices.shape[0]), judged._indices, judged._indptr), shape=width)
        missing = mine - mine.multiply(theirs)
        missing.eliminate_zeros()
        if missing.nnz:
            row = int(np.flatnonzero(np.diff(missing.indptr))[0])
            item = int(missing.indices[missing.indptr[row]])
            raise ValueError(f"judged: item {item} of label row {row} is relevant but not judged; "
                             "the judged items of a row include its relevant ones")

    @property
    def n_positives(self):
        """Number of relevant (non-zero) items in each row, shape ``(n_rows,)``."""
        return np.diff(self._indptr).astype(np.int64)

    @property
    def csr(self):
        """The labels as a :class:`scipy.sparse.csr_array` sharing the read-only storage."""
        return sp.csr_array(
            (self._vals().view(), self._indices.view(), self._indptr.view()),
            shape=(self.n_rows, self._n_items),
            copy=False,
        )

    def __len__(self):
        return self.n_rows

    def indices_to_list(self):
        """Item ids with a non-zero label, one sorted list per row."""
        return [r.tolist() for r in np.split(self._indices, self._indptr[1:-1])] if self.n_rows else []

    def labels_to_list(self):
        """Non-zero label values, one list per row, aligned with :meth:`indices_to_list`."""
        return [r.tolist() for r in np.split(self._vals(), self._indptr[1:-1])] if self.n_rows else []

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        if (self._judged is None) != (other._judged is None) or (
                self._judged is not None and not self._judged == other._judged):
            return False
        return (
            np.array_equal(self._indptr, other._indptr)
            and np.array_equal(self._indices, other._indices)
            # binary values are all 1 by construction: equal ids mean equal labels
            and (type(self) is BinaryLabels or np.array_equal(self._values, other._values))
        )

    __hash__ = None

    def __reduce__(self):
        args = (type(self), self._indptr, self._indices, self._values, self._n_items)
        if self._judged is not None:  # (labels without judgments pickle as 0.3.0 wrote them)
            args += (self._judged._indptr, self._judged._indices)
        return (_restore_labels, args)

    def __repr__(self):
        judged = "" if self._judged is None else f", judged={self._judged._indices.shape[0]}"
        return (f"{type(self).__name__}(n_rows={self.n_rows}, n_items={self._n_items}, "
                f"nnz={self._indices.shape[0]}{judged})")

    # -- batches -------------------------------------------------------------------------
    def __getitem__(self, key):
        """Rows ``key`` of the labels, as labels of the same class.

        ``key`` is a slice (``y[1000:2000]``; the stored ids and values are shared, not
        copied, for a step of 1), a boolean mask with one entry per row, or integer row
        numbers (negative numbers count from the end, as in NumPy). A single integer is
        refused: write ``y[i:i + 1]`` or ``y[[i]]`` for one row.

        Examples
        --------
        >>> from rankereval import BinaryLabels
        >>> y = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3], [4]])
        >>> y[1:].indices_to_list()
        [[1, 2, 3], [4]]
        >>> y[[2, 0]].indices_to_list()
        [[4], [0, 5]]
        >>> y[np.array([True, False, True])].indices_to_list()
        [[0, 5], [4]]
        """
        indptr = self._indptr
        step1, rows = _row_selection(key, self.n_rows, type(self).__name__)
        if step1 is not None:
            start, stop = step1
            lo, hi = int(indptr[start]), int(indptr[stop])
            values = None if self._values is None else self._values[lo:hi]
            out = type(self)._from_canonical(
                indptr[start:stop + 1] - indptr[start], self._indices[lo:hi], values, self._n_items, shared=True
            )
        else:
            starts = indptr[rows]
            counts = indptr[rows + 1] - starts
            new_indptr = np.zeros(rows.size + 1, dtype=indptr.dtype)
            np.cumsum(counts, out=new_indptr[1:])
            pos = np.arange(int(new_indptr[-1]), dtype=np.int64) + np.repeat(starts - new_indptr[:-1], counts)
            values = None if self._values is None else self._values[pos]
            out = type(self)._from_canonical(new_indptr, self._indices[pos], values, self._n_items)
        if self._judged is not None:
            out._judged = self._judged[key]
        return out

    @classmethod
    def concatenate(cls, labels, n_items=None):
        """Stack the rows of several label objects of one class (e.g. user batches).

        Parameters
        ----------
        labels : sequence of BinaryLabels or of NumericLabels
            At least one; all of the same class (the class this is called on, if it is
            not :class:`Labels` itself).
        n_items : int, optional
            Number of items of the result. By default the largest ``n_items`` of the parts
            (labels built with :meth:`BinaryLabels.from_positive_indices` count the items up
            to their largest id, so batches differ); when given, no part may have more.

        Returns
        -------
        BinaryLabels or NumericLabels
            The rows of ``labels[0]``, then those of ``labels[1]``, and so on.

        Raises
        ------
        TypeError
            If ``labels`` is not a sequence of labels of one class.
        ValueError
            If ``labels`` is empty, or a part has more items than ``n_items``.

        Examples
        --------
        >>> from rankereval import BinaryLabels
        >>> a = BinaryLabels.from_positive_indices([[0, 5], [1]])
        >>> b = BinaryLabels.from_positive_indices([[2, 3]])
        >>> y = BinaryLabels.concatenate([a, b])
        >>> y.indices_to_list(), y.n_items
        ([[0, 5], [1], [2, 3]], 6)
        """
        target = None if cls is Labels else cls
        parts = _batch_parts(labels, target, Labels, "labels")
        cls = type(parts[0])
        widest = max(p._n_items for p in parts)
        if n_items is None:
            n_items = widest
        else:
            if isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, Integral) or n_items < 0:
                raise ValueError(f"n_items must be a non-negative integer, got {n_items!r}")
            n_items = int(n_items)
            for i, p in enumerate(parts):
                if p._n_items > n_items:
                    raise ValueError(f"labels[{i}] has {p._n_items} items, more than n_items={n_items}")
        nnz = sum(p._indices.shape[0] for p in parts)
        dt = _id_dtype(max(n_items, nnz))
        indptr = np.zeros(sum(p.n_rows for p in parts) + 1, dtype=dt)
        row, offset = 0, 0
        for p in parts:
            indptr[row + 1:row + p.n_rows + 1] = p._indptr[1:] + offset
            row += p.n_rows
            offset += p._indices.shape[0]
        indices = np.concatenate([p._indices for p in parts]).astype(dt, copy=False)
        if cls is BinaryLabels and all(p._values is None for p in parts):
            values = None
        else:
            values = np.concatenate([p._vals() for p in parts])
        out = cls._from_canonical(indptr, indices, values, n_items)
        with_judged = [p._judged is not None for p in parts]
        if any(with_judged):
            if not all(with_judged):
                raise ValueError(f"labels[{with_judged.index(False)}] has no judgments but labels["
                                 f"{with_judged.index(True)}] has: give judgments to all parts or none")
            judged = BinaryLabels.concatenate([p._judged for p in parts], n_items=n_items)
            jt = judged._indptr.dtype
            if jt != dt:  # one dtype for the labels and their judgments (the wider)
                wide = np.promote_types(jt, dt)
                out = cls._from_canonical(indptr.astype(wide), indices.astype(wide), values, n_items)
                judged = BinaryLabels._from_canonical(judged._indptr.astype(wide), judged._indices.astype(wide),
                                                      None, n_items)
            out._judged = judged
        return out

    # -- construction --------------------------------------------------------------------
    @classmethod
    def _from_matrix(cls, labels, binary):
        name = "labels"
        labels = _host_array(labels, name)
        _reject_masked(labels, name)
        if sp.issparse(labels):
            return cls._from_sparse_matrix(labels, name, binary)
        if isinstance(labels, np.ndarray):
            arr = labels
        elif isinstance(labels, (list, tuple)):
            arr = _dense_label_rows(labels, name)
        else:
            raise TypeError(
                f"{name}: expected a list of label rows, a NumPy array or a SciPy sparse matrix, "
                f"got {type(labels).__name__}"
            )
        if arr.ndim == 0:
            raise ValueError(f"{name}: expected one or two dimensions, got a 0-d array")
        if arr.ndim > 2:
            raise ValueError(f"{name}: expected at most two dimensions, got an array of shape {arr.shape}")
        if arr.ndim == 1:
            arr = arr[None, :]
        m = sp.csr_array(_check_label_values(arr, name, binary))
        m.eliminate_zeros()
        return cls._from_csr(m)


    @classmethod
    def _from_sparse_matrix(cls, x, name, binary, pattern=False):
        """Sparse labels in a few vectorised passes and one copy of each array.

        With ``pattern``, only which entries are non-zero matters (``from_positive_indices``).
        """
        if x.ndim != 2:
            raise ValueError(f"{name}: expected a 2-D sparse matrix, got {x.ndim} dimensions")
        if not pattern and x.format == "csr":
            fast = cls._from_csr_fast(x)
            if fast is not None:
                return fast
        _check_sparse_structure(x, name)
        m = x if x.format == "csr" else x.tocsr()
        if not m.has_canonical_format:  # unsorted or duplicate entries: sum them, as scipy does
            m = _canonical_sparse(m, name)
        if pattern:
            data = m.data
            if data.dtype.kind not in "biufc":
                raise ValueError(f"{name}: a sparse matrix of {data.dtype} values has no non-zero pattern")
        else:
            data = _check_label_values(m.data, name, binary)
        indptr, indices = m.indptr, m.indices
        nonzero = data != 0
        if not nonzero.all():  # explicit zeros are "not relevant": not stored
            kept = np.concatenate(([0], np.cumsum(nonzero)))
            indptr, indices, data = kept[indptr], indices[nonzero], data[nonzero]
        dt = _id_dtype(max(m.shape[1], data.size))
        values = None if binary else np.array(data, dtype=np.float64)
        return cls._from_canonical(indptr.astype(dt), indices.astype(dt), values, m.shape[1])

    @classmethod
    def _from_csr_fast(cls, x):
        """Canonical CSR with float labels and no explicit zeros, checked and copied in two
        typed passes (the common case); None when anything needs the general path, which
        also writes the error messages."""
        data = x.data
        if (
            data.dtype not in (np.float32, np.float64)
            or not data.flags.c_contiguous
            or data.shape != x.indices.shape
            or x.indptr.size != x.shape[0] + 1
        ):
            return None
        return cls._from_ragged_fast(x.indptr, x.indices, data, x.shape[1])

    @classmethod
    def _from_ragged_fast(cls, indptr, indices, data, n_cols):
        """Rows ``indices[indptr[i]:indptr[i + 1]]`` of ids in ``[0, n_cols)``, each row
        strictly increasing, with float labels ``data`` (None: all ones, BinaryLabels only)
        and no zeros: checked and copied in two typed passes (the common case; ragged list
        columns of Parquet or Arrow arrive so). None when anything needs the general path,
        which also writes the error messages."""
        if (
            indptr.dtype not in (np.int32, np.int64)
            or indices.dtype not in (np.int32, np.int64)
            or not (indptr.flags.c_contiguous and indices.flags.c_contiguous)
            or indptr.ndim != 1 or indices.ndim != 1 or indptr.size < 1
            or int(indptr[-1]) != indices.size  # scipy tolerates unused entries past the end
            or (data is None and cls is not BinaryLabels)
        ):
            return None
        if indptr.dtype != indices.dtype:  # the typed pass reads both as one dtype
            if indices.dtype == np.int32 and int(indptr.max()) <= _INT32_MAX and int(indptr.min()) >= 0:
                indptr = indptr.astype(np.int32)  # n_rows + 1 entries: the cheap side (no value wraps)
            else:
                indptr, indices = indptr.astype(np.int64), indices.astype(np.int64)
        binary = cls is BinaryLabels
        threads = _n_threads(indices.size)
        if data is not None:
            n_zero, ok = _convert.check_label_data(data, binary, threads)
            if not ok or n_zero:
                return None
        dt = _id_dtype(max(n_cols, indices.size))
        out_indptr = np.empty(indptr.size, dtype=dt)
        out_indices = np.empty(indices.size, dtype=dt)
        if _convert.copy_csr_structure(indptr, indices, n_cols, out_indptr, out_indices, threads):
            return None
        values = None if binary else np.array(data, dtype=np.float64)
        return cls._from_canonical(out_indptr, out_indices, values, n_cols)


def _restore_labels(cls, indptr, indices, values, n_items, judged_indptr=None, judged_indices=None):
    out = cls._from_canonical(indptr, indices, values, n_items)
    if judged_indptr is not None:
        out._judged = BinaryLabels._from_canonical(judged_indptr, judged_indices, None, n_items)
    return out


def _dense_label_rows(rows, name):
    """A (possibly ragged) list of label rows as a 2-D float array, missing entries 0."""
    if len(rows) == 0:
        return np.zeros((1, 0))
    arrs = _row_arrays(rows, name, "label rows", "single labels")
    width = max(a.shape[0] for a in arrs)
    kinds = {a.dtype.kind for a in arrs if a.size}
    if kinds - set("biuf"):
        bad = next(a for a in arrs if a.size and a.dtype.kind not in "biuf")
        raise ValueError(f"{name}: labels must be real numbers, got {bad.dtype} values such as {bad[0]!r}")
    out = np.zeros((len(arrs), width), dtype=np.result_type(*[a.dtype for a in arrs]) if arrs else float)
    for i, a in enumerate(arrs):
        out[i, : a.shape[0]] = a
    return out


def _check_label_values(data, name, binary):
    """Labels as float64, or a ValueError/TypeError naming the first offending value."""
    kind = data.dtype.kind
    if kind == "c":
        raise TypeError(f"{name}: complex labels are not supported")
    if kind not in "biuf":
        raise ValueError(f"{name}: labels must be real numbers, got values of dtype {data.dtype}")
    # check what is stored: a finite longdouble beyond float64 becomes inf here and is rejected
    with np.errstate(over="ignore"):
        data = data.astype(np.float64, copy=False)
    if data.size == 0 or kind == "b":
        return data
    # fast path, two reductions: NaN and inf propagate into the sum (which may also overflow
    # on its own: then the exact checks below decide)
    lo = data.min()
    if binary:
        if lo >= 0 and data.max() <= 1 and np.count_nonzero(data == 1) + np.count_nonzero(data == 0) == data.size:
            return data
    else:
        with np.errstate(over="ignore"):
            total = data.sum()
        if lo >= 0 and np.isfinite(total):
            return data
    finite = np.isfinite(data)
    if not finite.all():
        raise ValueError(f"{name}: labels must be finite float64 values, got {data[~finite].flat[0]}")
    if binary:
        bad = data[(data != 0) & (data != 1)]
        if bad.size:
            raise ValueError(
                f"{name}: BinaryLabels must be 0 or 1, got {bad.flat[0]}; use NumericLabels for graded labels"
            )
    elif lo < 0:
        raise ValueError(
            f"{name}: NumericLabels must be non-negative (0 = not relevant), got {lo}; "
            "shift or clip graded labels such as trec's -1 before use"
        )
    return data


class BinaryLabels(Labels):
    """Binary relevance labels: each item of a row is relevant (1) or not (0).

    Examples
    --------
    >>> from rankereval import BinaryLabels
    >>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
    >>> y_true.indices_to_list()
    [[0, 5], [1, 2, 3]]
    >>> BinaryLabels.from_matrix([[1, 0, 1], [0, 1, 0]]).indices_to_list()
    [[0, 2], [1]]
    """

    __slots__ = ()

    @classmethod
    def from_positive_indices(cls, indices):
        """Labels from the ids of the relevant items of each row.

        Parameters
        ----------
        indices : list of lists, list of ndarrays, ndarray or scipy sparse matrix/array
            One row of relevant item ids per ranking (ragged lists allowed). A flat list or 1-D
            array is a single row. A 2-D array lists the ids of each row. For a sparse matrix
            its non-zero pattern is used.

        Returns
        -------
        BinaryLabels

        Raises
        ------
        ValueError
            If an id is negative, not an integer, or repeated within a row, or the input has
            more than two dimensions or is a masked array.
        TypeError
            If the input is of an unsupported type.
        """
        name = "indices"
        if sp.issparse(indices):
            return cls._from_sparse_matrix(indices, name, binary=True, pattern=True)
        indptr, flat = _ragged_ids(indices, name)
        max_id = int(flat.max()) if flat.size else -1
        bad, is_sorted = _convert.ragged_duplicates(indptr, flat, max(max_id, 0), _n_threads(flat.size))
        _raise_duplicates(bad, indptr, flat, name)
        dt = _id_dtype(max(max_id + 1, flat.size))
        m = sp.csr_array(
            (np.ones(flat.size), np.array(flat, dtype=dt), indptr.astype(dt)),  # copies: sorted in place below
            shape=(indptr.size - 1, max_id + 1),
        )
        if not is_sorted:
            m.has_sorted_indices = False
            m.sort_indices()
        return cls._from_canonical(m.indptr, m.indices, None, max_id + 1)

    @classmethod
    def from_matrix(cls, labels):
        """Labels from a 0/1 matrix (dense lists, ndarray or any scipy sparse format).

        Ragged list rows are allowed; missing entries are 0. Zeros are not stored.

        Raises
        ------
        ValueError
            If a value is not 0 or 1 (or True/False), is not finite, or the input has more
            than two dimensions or is a masked array.
        TypeError
            If the input is of an unsupported type.
        """
        return cls._from_matrix(labels, binary=True)

    @classmethod
    def from_groups(cls, y, qid=None, *, group=None, relevance_level=1):
        """Labels from flat learning-to-rank arrays: one entry per (query, document) row.

        Parameters
        ----------
        y : array-like of shape (n_rows,)
            Relevance grade of each row; a row is relevant when its grade is at least
            ``relevance_level``.
        qid : array-like of shape (n_rows,), optional
            The query of each row: any 1-D array of comparable ids (integers, strings, ...),
            contiguous or not. The result has one row per distinct id, in ascending id order
            (``np.unique(qid)``). Sorted ids cost one linear pass; unsorted ids one stable
            sort of ``qid``.
        group : array-like of int, optional
            Instead of ``qid``: the number of consecutive rows of each query, as LightGBM's
            ``group`` (sizes >= 1 summing to the number of rows); one result row per group,
            in that order.
        relevance_level : number, default=1
            Grade from which a row counts as relevant.

        Returns
        -------
        BinaryLabels
            The item id of a row is its position among its query's rows (0, 1, ... in input
            order), as in :meth:`Rankings.from_groups` with the same ``qid``/``group``.

        Raises
        ------
        ValueError
            If ``qid`` and ``y`` differ in length, ``group`` does not sum to it, a grade is
            NaN or infinite, or a query id is NaN. TypeError for mixed query id types or no/both of ``qid``,
            ``group``.

        Examples
        --------
        >>> from rankereval import BinaryLabels
        >>> BinaryLabels.from_groups([0, 2, 1, 0, 1], qid=[7, 7, 7, 3, 3]).indices_to_list()
        [[1], [1, 2]]
        """
        from rankereval._groups import binary_labels_from_groups

        return binary_labels_from_groups(y, qid, group=group, relevance_level=relevance_level)


class NumericLabels(Labels):
    """Graded relevance labels (e.g. 0-3), for DCG and NDCG.

    Labels must be non-negative: 0 means not relevant and is not stored. Negative grades
    (trec's -1 for "spam") are rejected rather than guessed at; clip or shift them first.

    Examples
    --------
    >>> from rankereval import NumericLabels
    >>> y_true = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    >>> y_true.labels_to_list()
    [[1.0, 2.0, 3.0], [4.0, 5.0]]
    """

    __slots__ = ()

    @classmethod
    def from_matrix(cls, labels):
        """Labels from a matrix of graded labels (dense lists, ndarray or scipy sparse).

        Ragged list rows are allowed; missing entries are 0. Zeros are not stored.

        Raises
        ------
        ValueError
            If a label is negative or not finite, or the input has more than two dimensions
            or is a masked array.
        TypeError
            If the input is of an unsupported type.
        """
        return cls._from_matrix(labels, binary=False)

    @classmethod
    def from_groups(cls, y, qid=None, *, group=None):
        """Graded labels from flat learning-to-rank arrays, as
        :meth:`BinaryLabels.from_groups` (grades must be non-negative and finite).

        Examples
        --------
        >>> from rankereval import NumericLabels
        >>> NumericLabels.from_groups([0, 2, 1, 0, 3], group=[3, 2]).labels_to_list()
        [[2.0, 1.0], [3.0]]
        """
        from rankereval._groups import numeric_labels_from_groups

        return numeric_labels_from_groups(y, qid, group=group)


# ----------------------------------------------------------------------------------------
# rankings
# ----------------------------------------------------------------------------------------

def _filter_structure(items, n_rows, name):
    """(indptr, ids padded with a sentinel, mode) of a valid/invalid item filter."""
    if items is None:
        return np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64), 0
    if _is_canonical_pattern(items):
        # the common case of a training-interaction matrix: its structure is used as it is
        # (a BinaryLabels object would copy it once more, at 1M entries 10+ ms per call)
        indptr, indices = items.indptr, items.indices
    else:
        f = BinaryLabels.from_positive_indices(items) if not isinstance(items, BinaryLabels) else items
        indptr, indices = f.indptr, f.indices
    rows = indptr.shape[0] - 1
    if rows not in (1, n_rows):
        raise ValueError(f"{name} has {rows} rows, expected 1 (for all rankings) or {n_rows} (one per ranking)")
    ids = np.empty(indices.size + 1, dtype=np.int64)
    ids[:-1] = indices
    ids[-1] = -1
    return indptr.astype(np.int64), ids, (2 if rows == 1 and n_rows != 1 else 1)


def _is_canonical_pattern(x):
    """Whether ``x`` is a valid SciPy CSR matrix whose rows are sorted, without repeated or
    explicitly stored zero entries: then its indptr and indices are exactly the id rows
    that BinaryLabels.from_positive_indices would build."""
    if not (sp.issparse(x) and x.format == "csr" and x.ndim == 2):
        return False
    indptr, indices, data = x.indptr, x.indices, x.data
    if (
        indptr.dtype.kind != "i" or indices.dtype.kind != "i" or data.dtype.kind not in "biuf"
        or indptr.shape[0] != x.shape[0] + 1 or indptr[0] != 0 or indptr[-1] != indices.shape[0]
        or data.shape != indices.shape
    ):
        return False
    try:
        x.check_format(full_check=True)  # ids within [0, n_cols), indptr non-decreasing
    except ValueError:
        return False
    return bool(x.has_canonical_format) and np.count_nonzero(data) == data.shape[0]


def _warn_empty(lengths):
    n_empty = int(np.count_nonzero(lengths == 0))
    if n_empty:
        warnings.warn(
            f"{n_empty} of {lengths.size} rankings are empty; metrics treat them as defined in "
            "their edge cases",
            InvalidValuesWarning,
            stacklevel=3,
        )


class Rankings:
    """Rankings of item ids, one row per query or user, best item first.

    Stored as a padded integer array (pad value ``-1``) plus the length of each row.

    Examples
    --------
    >>> from rankereval import Rankings
    >>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
    >>> len(y_pred)
    2
    >>> y_pred.to_list()
    [[3, 2, 1], [1, 2]]
    >>> y_pred.indices
    array([[ 3,  2,  1],
           [ 1,  2, -1]], dtype=int32)
    >>> Rankings.from_scores([[0.1, 0.9, 0.5], [0.3, 0.3, 0.7]]).to_list()
    [[1, 2, 0], [2, 0, 1]]
    """

    __slots__ = ("_indices", "_lengths")

    def __init__(self, *args, **kwargs):
        raise TypeError("create Rankings with Rankings.from_ranked_indices(...) or Rankings.from_scores(...)")

    @classmethod
    def _from_padded(cls, indices, lengths, shared=False):
        """``shared``: the arrays are views of another object's frozen storage (no copy)."""
        freeze = _frozen_view if shared else _readonly
        self = object.__new__(cls)
        self._indices = freeze(indices)
        self._lengths = freeze(lengths)
        return self

    @property
    def indices(self):
        """Padded item ids, shape ``(n_rankings, max_length)``, pad value -1, read-only."""
        return self._indices.view()

    @property
    def lengths(self):
        """Number of items in each ranking, shape ``(n_rankings,)``, read-only."""
        return self._lengths.view()

    @property
    def n_rows(self):
        """Number of rankings."""
        return self._indices.shape[0]

    def __len__(self):
        return self._indices.shape[0]

    def to_list(self):
        """The rankings as a list of lists of item ids."""
        return [row[:n].tolist() for row, n in zip(self._indices, self._lengths.tolist())]

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        if not np.array_equal(self._lengths, other._lengths):
            return False
        w = int(self._lengths.max()) if self._lengths.size else 0
        return np.array_equal(self._indices[:, :w], other._indices[:, :w])

    __hash__ = None

    def __reduce__(self):
        return (_restore_rankings, (self._indices, self._lengths))

    def __repr__(self):
        return f"Rankings(n_rows={self.n_rows}, max_length={self._indices.shape[1]})"

    # -- batches -------------------------------------------------------------------------
    def __getitem__(self, key):
        """Rows ``key`` of the rankings, as :class:`Rankings`.

        ``key`` is a slice (``y_pred[1000:2000]``; shared, not copied, for a step of 1), a
        boolean mask with one entry per ranking, or integer row numbers (negative numbers
        count from the end, as in NumPy). A single integer is refused: write
        ``y_pred[i:i + 1]`` or ``y_pred[[i]]`` for one ranking.

        Examples
        --------
        >>> from rankereval import Rankings
        >>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2], [0]])
        >>> y_pred[1:].to_list()
        [[1, 2], [0]]
        >>> y_pred[[2, 0]].to_list()
        [[0], [3, 2, 1]]
        """
        step1, rows = _row_selection(key, self.n_rows, "Rankings")
        if step1 is not None:
            start, stop = step1
            return Rankings._from_padded(self._indices[start:stop], self._lengths[start:stop], shared=True)
        lengths = self._lengths[rows]
        width = int(lengths.max()) if lengths.size else 0
        return Rankings._from_padded(self._indices[rows, :width], lengths)

    @classmethod
    def concatenate(cls, rankings):
        """Stack the rankings of several :class:`Rankings` (e.g. user batches).

        Parameters
        ----------
        rankings : sequence of Rankings
            At least one.

        Returns
        -------
        Rankings
            The rows of ``rankings[0]``, then those of ``rankings[1]``, and so on; padded to
            the longest ranking.

        Raises
        ------
        TypeError
            If ``rankings`` is not a sequence of :class:`Rankings`.
        ValueError
            If ``rankings`` is empty.

        Examples
        --------
        >>> from rankereval import Rankings
        >>> a = Rankings.from_ranked_indices([[3, 2, 1]])
        >>> b = Rankings.from_ranked_indices([[5], [0, 4]])
        >>> Rankings.concatenate([a, b]).to_list()
        [[3, 2, 1], [5], [0, 4]]
        """
        parts = _batch_parts(rankings, Rankings, Rankings, "rankings")
        width = max((int(p._lengths.max()) if p._lengths.size else 0) for p in parts)
        dt = np.result_type(*[p._indices.dtype for p in parts])
        out = np.full((sum(p.n_rows for p in parts), width), -1, dtype=dt)
        row = 0
        for p in parts:
            w = min(width, p._indices.shape[1])
            out[row:row + p.n_rows, :w] = p._indices[:, :w]
            row += p.n_rows
        return Rankings._from_padded(out, np.concatenate([p._lengths for p in parts]))

    @classmethod
    def from_ranked_indices(cls, indices, valid_items=None, invalid_items=None, *, pad=None, lengths=None):
        """Rankings from item ids in ranked order (best first).

        Parameters
        ----------
        indices : list of lists, list of ndarrays or ndarray
            One ranking per row; rows may have different lengths. A flat list or 1-D array is
            a single ranking. 2-D integer arrays of any integer dtype, memory order or
            writeability are converted without a Python-level loop. Arrays of other
            libraries (e.g. PyTorch CPU tensors) are read through ``__dlpack__`` or
            ``__array__``.
        valid_items : optional
            The candidate set: only these items are kept in each ranking (order preserved).
            Anything :meth:`BinaryLabels.from_positive_indices` accepts, with one row per
            ranking or a single row for all rankings.
        invalid_items : optional
            Items removed from each ranking (e.g. a user's training interactions), in the
            same forms as ``valid_items``.
        pad : int, optional
            For a padded 2-D ``indices``: the value that fills each row after its last
            item, such as the ``-1`` of :attr:`indices` (so that
            ``Rankings.from_ranked_indices(r.indices, pad=-1) == r``). A row ends at its
            first ``pad``; only ``pad`` may follow it.
        lengths : array of int, optional
            For a 2-D ``indices``: the number of items of each row (the rest of the row is
            ignored), as in :attr:`lengths`. Give ``pad`` or ``lengths``, not both.

        Returns
        -------
        Rankings

        Raises
        ------
        ValueError
            If an id is negative, not an integer or repeated within a ranking, the input has
            more than two dimensions or is a masked array, a filter has the wrong number
            of rows, or ``pad``/``lengths`` do not fit ``indices``.
        TypeError
            If the input is of an unsupported type, for instance an array in GPU memory.

        Warns
        -----
        InvalidValuesWarning
            If a ranking is empty (after filtering).

        Examples
        --------
        >>> import numpy as np
        >>> from rankereval import Rankings
        >>> r = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
        >>> Rankings.from_ranked_indices(r.indices, pad=-1) == r
        True
        >>> Rankings.from_ranked_indices(np.array([[4, 0, 7], [2, 9, 9]]), lengths=[3, 1]).to_list()
        [[4, 0, 7], [2]]
        """
        name = "indices"
        indices = _host_array(indices, name)
        _reject_masked(indices, name)
        if pad is not None or lengths is not None:
            indptr, flat = _trimmed_rows(indices, pad, lengths, name)
            ranks, lengths = _ragged_rankings(indptr, flat, name)
        elif isinstance(indices, np.ndarray) and indices.ndim == 2 and indices.dtype.kind in "iu":
            ranks = _dense_rankings(indices, name)
            lengths = np.full(ranks.shape[0], ranks.shape[1], dtype=np.int64)
        else:
            if sp.issparse(indices):
                raise TypeError(
                    "indices: a sparse matrix has no order; pass ranked ids, or use "
                    "Rankings.from_scores for sparse scores"
                )
            ranks, lengths = _ragged_rankings(*_ragged_ids(indices, name), name)
        ranks, lengths = _apply_filters(ranks, lengths, valid_items, invalid_items)
        _warn_empty(lengths)
        return cls._from_padded(ranks, lengths)

    @classmethod
    def from_groups(cls, scores, qid=None, *, group=None, k=None):
        """Rankings from flat learning-to-rank arrays: each query's rows by descending score.

        Parameters
        ----------
        scores : array-like of shape (n_rows,)
            Model score of each row: finite real numbers (a NaN or infinite score is a
            ValueError, not dropped as in :meth:`from_scores`).
        qid, group : optional
            The query of each row, or LightGBM's group sizes, as in
            :meth:`BinaryLabels.from_groups` (one of them).
        k : int, optional
            Keep only the top ``k`` rows of each query.

        Returns
        -------
        Rankings
            Item ids are positions among the query's rows (0, 1, ... in input order), as in
            :meth:`BinaryLabels.from_groups`. Equal scores keep the earlier row first.

        Examples
        --------
        >>> from rankereval import Rankings
        >>> Rankings.from_groups([0.2, 0.9, 0.2, 0.5, 0.7], qid=[7, 7, 7, 3, 3]).to_list()
        [[1, 0], [1, 0, 2]]
        """
        from rankereval._groups import rankings_from_groups

        return rankings_from_groups(scores, qid, group=group, k=k)

    @classmethod
    def from_scores(cls, raw_scores, valid_items=None, invalid_items=None, k=None):
        """Rankings from item scores: items ordered by descending score.

        Parameters
        ----------
        raw_scores : ndarray, list of lists, scipy sparse matrix/array, or array-like
            ``raw_scores[i, j]`` is the score of item ``j`` for ranking ``i``. Rows of a list
            may differ in length. For sparse input only the stored entries are candidates.
            Any real dtype (float16, float32, float64, integers, booleans) is read as it is,
            without a converted copy; integer scores are compared exactly. Arrays of other
            libraries (PyTorch CPU tensors, JAX arrays, ...) are read through
            ``__dlpack__`` (sharing their memory) or ``__array__``.
        valid_items, invalid_items : optional
            Candidate filters, as in :meth:`from_ranked_indices`; applied before ``k``. A
            typical ``invalid_items`` is the training interactions, a SciPy CSR matrix with
            one row per ranking.
        k : int, optional
            Keep only the top ``k`` items of each row. The selection reads each score once
            and sorts only the winners, so a wide score matrix is never fully sorted.

        Returns
        -------
        Rankings

        Raises
        ------
        ValueError
            If the scores are not real numbers or have more than two dimensions, ``k`` is
            not a positive integer, or a filter has the wrong number of rows.
        TypeError
            If the input is of an unsupported type, complex, or an array in GPU memory.

        Warns
        -----
        InvalidValuesWarning
            If candidate scores are NaN or infinite (they are dropped), or a ranking is
            empty.

        See Also
        --------
        Rankings.concatenate : put rankings from batches of score rows together.

        Notes
        -----
        Items are ordered by descending score; ties are broken by the lower item id (a
        stable order, the same for any number of threads). Items outside ``valid_items``
        or in ``invalid_items`` are never ranked and take no place in the top ``k``. NaN and
        infinite scores of candidates are dropped with an :class:`InvalidValuesWarning`;
        those of excluded items are ignored. Rows are processed in parallel (see
        :doc:`/guide/from_scores` for how the selection works and how fast it is).

        Examples
        --------
        >>> import numpy as np
        >>> from rankereval import Rankings
        >>> scores = np.array([[0.1, 0.9, 0.5, 0.9],
        ...                    [0.3, 0.2, 0.7, 0.0]], dtype=np.float32)
        >>> Rankings.from_scores(scores, k=2).to_list()
        [[1, 3], [2, 0]]
        >>> Rankings.from_scores(scores, k=2, invalid_items=[[1], [2]]).to_list()
        [[3, 2], [0, 1]]
        >>> Rankings.from_scores(scores.astype(np.float16), valid_items=[0, 2]).to_list()
        [[2, 0], [2, 0]]
        """
        k = check_k(k, allow_none=True)
        name = "raw_scores"
        raw_scores = _host_array(raw_scores, name)
        _reject_masked(raw_scores, name)
        if sp.issparse(raw_scores):
            m = _canonical_sparse(raw_scores, name)
            data, half = _kernel_scores(_check_scores(m.data, name))
            n_rows, n_items = m.shape
            indptr = m.indptr.astype(np.int64)
            ids = m.indices.astype(np.int64)
            dense = None
        else:
            if isinstance(raw_scores, np.ndarray):
                arr = raw_scores
            elif isinstance(raw_scores, (list, tuple)):
                arr = _score_rows(raw_scores, name)
            else:
                raise TypeError(
                    f"{name}: expected a NumPy array (or an array exposing __dlpack__ or __array__), "
                    f"a list of score rows or a SciPy sparse matrix, got {type(raw_scores).__name__}"
                )
            if isinstance(arr, tuple):  # ragged rows as (indptr, data)
                indptr, data = arr
                data, half = _kernel_scores(data)
                n_rows = indptr.size - 1
                lengths = np.diff(indptr)
                n_items = int(lengths.max()) if n_rows else 0
                ids = np.arange(data.size, dtype=np.int64) - np.repeat(indptr[:-1], lengths)
                dense = None
            else:
                if arr.ndim == 0:
                    raise ValueError(f"{name}: expected one or two dimensions, got a 0-d array")
                if arr.ndim > 2:
                    raise ValueError(f"{name}: expected at most two dimensions, got shape {arr.shape}")
                if arr.ndim == 1:
                    arr = arr[None, :]
                dense, half = _kernel_scores(_check_scores(arr, name))
                if dense.shape[1] > 1 and dense.strides[1] != dense.itemsize:
                    dense = np.ascontiguousarray(dense)  # the kernel reads rows as contiguous runs
                n_rows, n_items = dense.shape
        vp, vi, vmode = _filter_structure(valid_items, n_rows, "valid_items")
        xp, xi, xmode = _filter_structure(invalid_items, n_rows, "invalid_items")
        # the most candidates a row can have: what the output and the selection buffer need
        most = n_items if dense is not None else (int(np.diff(indptr).max()) if n_rows else 0)
        if vmode:
            below = np.zeros(vi.size, dtype=np.int64)  # valid ids that are items of the scores
            np.cumsum(vi[:-1] < n_items, out=below[1:])
            most = min(most, int((below[vp[1:]] - below[vp[:-1]]).max()))
        kk = most if k is None else min(k, most)
        out = np.empty((n_rows, kk), dtype=_id_dtype(max(n_items - 1, 0)))  # the kernel writes every entry
        out_len = np.zeros(n_rows, dtype=np.int64)
        n_invalid = np.zeros(n_rows, dtype=np.int64)
        if kk > 0:
            # the buffer: the k best so far plus room for candidates above the threshold
            cap = _topk.buffer_size(kk, most, n_items if dense is not None and not vmode else 0)
            scores = dense if dense is not None else data
            code = 2 if half else _SCORE_CODES[scores.dtype.kind, scores.dtype.itemsize]
            _topk.topk(
                code, scores.dtype.itemsize,
                None if dense is None else dense.view(np.uint8), n_items,
                _EMPTY_I64 if dense is not None else indptr, _EMPTY_I64 if dense is not None else ids,
                None if dense is not None else data.view(np.uint8),
                kk, cap, vp, vi, vmode, xp, xi, xmode,
                out.view(np.uint8), out.dtype == np.int64, out_len, n_invalid, _n_threads(scores.size),
            )
        total_invalid = int(n_invalid.sum())
        if total_invalid:
            warnings.warn(
                f"dropped {total_invalid} candidate scores that are NaN or infinite, in "
                f"{int(np.count_nonzero(n_invalid))} rows",
                InvalidValuesWarning,
                stacklevel=2,
            )
        w = int(out_len.max()) if n_rows else 0
        if w < out.shape[1]:
            out = np.ascontiguousarray(out[:, :w])
        _warn_empty(out_len)
        return cls._from_padded(out, out_len)


def _restore_rankings(indices, lengths):
    return Rankings._from_padded(indices, lengths)


def _ragged_rankings(indptr, flat, name):
    """Padded rankings from ragged rows of checked ids: (ranks, lengths)."""
    max_id = int(flat.max()) if flat.size else 0
    bad, _ = _convert.ragged_duplicates(indptr, flat, max_id, _n_threads(flat.size))
    _raise_duplicates(bad, indptr, flat, name)
    lengths = np.diff(indptr)
    n = lengths.size
    width = int(lengths.max()) if n else 0
    ranks = np.full((n, width), -1, dtype=_id_dtype(max_id))
    rows = np.repeat(np.arange(n), lengths)
    ranks[rows, np.arange(flat.size) - indptr[rows]] = flat
    return ranks, lengths


def _trimmed_rows(indices, pad, lengths, name):
    """(indptr, checked ids) of the rows of a padded 2-D array cut at ``pad`` or ``lengths``."""
    if pad is not None and lengths is not None:
        raise ValueError("give pad or lengths, not both")
    if isinstance(indices, (list, tuple)):
        try:
            indices = np.asarray(indices)
        except ValueError:
            indices = None
    if not isinstance(indices, np.ndarray) or indices.ndim != 2:
        raise ValueError(
            f"{name}: pad and lengths need a 2-D array of rows of equal length (a padded array), "
            f"got {type(indices).__name__ if not isinstance(indices, np.ndarray) else f'shape {indices.shape}'}"
        )
    if indices.size == 0:
        indices = indices.astype(np.int64)  # e.g. [[]] (float64 to NumPy): no ids at all
    if indices.dtype.kind not in "iu":
        raise ValueError(f"{name}: item ids must be integers, got values of dtype {indices.dtype}")
    n, m = indices.shape
    if pad is not None:
        if isinstance(pad, (bool, np.bool_)) or not isinstance(pad, (Integral, np.integer)):
            raise TypeError(f"pad must be an integer (such as -1), got {pad!r}")
        is_pad = indices == pad
        has_pad = is_pad.any(axis=1)
        lens = np.where(has_pad, is_pad.argmax(axis=1), m).astype(np.int64) if m else np.zeros(n, dtype=np.int64)
        after = np.count_nonzero(is_pad, axis=1) != m - lens
        if after.any():
            r = int(np.flatnonzero(after)[0])
            raise ValueError(f"{name}: row {r} has an item after its first pad value {pad}")
        keep = ~is_pad
    else:
        lengths = _host_array(lengths, "lengths")
        lens = np.asarray(lengths)
        if lens.ndim != 1 or lens.shape[0] != n:
            raise ValueError(f"lengths must have one entry per row ({n}), got shape {lens.shape}")
        if lens.size and lens.dtype.kind not in "iu":
            raise ValueError(f"lengths must be integers, got values of dtype {lens.dtype}")
        lens = lens.astype(np.int64)
        if lens.size and (lens.min() < 0 or lens.max() > m):
            r = int(np.flatnonzero((lens < 0) | (lens > m))[0])
            raise ValueError(f"lengths[{r}] = {lens[r]} is outside [0, {m}] (the width of {name})")
        keep = np.arange(m) < lens[:, None]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lens, out=indptr[1:])
    return indptr, _check_int_ids(indices[keep], indptr, name)


def _dense_rankings(a, name):
    """Validate and convert a 2-D integer array in one typed pass."""
    n, m = a.shape
    if a.dtype.kind == "u" and a.dtype.itemsize == 8 and a.size and a.max() > _MAX_ID:
        raise ValueError(f"{name}: item ids must be below 2**63 - 1, got {a.max()}")
    if a.dtype not in (np.int32, np.int64) or not a.dtype.isnative:
        a = a.astype(np.int64)
    threads = _n_threads(a.size)
    out = np.empty((n, m), dtype=np.int32)
    if a.flags.c_contiguous:
        # the common case, in one pass: copy, range check and duplicate check per row
        fits, bad = _convert.copy_dense_ids(a, out, out.nbytes >= _STREAM_BYTES, threads)
        if fits:
            _raise_dense_duplicates(bad, out, name)
            return out
    # ids outside [0, 2**31) or a strided array: copy, then check
    lo, hi = _convert.copy_minmax(a, out, threads)
    if lo < 0:
        r = int(np.flatnonzero((a < 0).any(axis=1))[0])
        raise ValueError(f"{name}: item ids must be non-negative, got {a[r][a[r] < 0][0]} in row {r}")
    if hi > _MAX_ID:
        r = int(np.flatnonzero((a > _MAX_ID).any(axis=1))[0])
        raise ValueError(f"{name}: item id {hi} in row {r} is too large (item ids must be below 2**63 - 1)")
    if hi > _INT32_MAX:  # rare: ids beyond int32, redo the copy at full width
        out = np.empty((n, m), dtype=np.int64)
        _convert.copy_minmax(a, out, threads)
    # the duplicate check of ragged rows serves: a C-contiguous 2-D array is ragged rows of width m
    indptr = np.arange(0, (n + 1) * m, m, dtype=np.int64) if m else np.zeros(n + 1, dtype=np.int64)
    bad, _ = _convert.ragged_duplicates(indptr, out.reshape(-1), max(hi, 0), threads)
    _raise_dense_duplicates(bad, out, name)
    return out


def _raise_dense_duplicates(bad, out, name):
    """_raise_duplicates for a 2-D array, seen as ragged rows of equal width."""
    if bad.any():
        n, m = out.shape
        _raise_duplicates(bad, np.arange(0, (n + 1) * m, m, dtype=np.int64), out.reshape(-1), name)


def _apply_filters(ranks, lengths, valid_items, invalid_items):
    n = ranks.shape[0]
    for items, name, keep in ((valid_items, "valid_items", True), (invalid_items, "invalid_items", False)):
        if items is None:
            continue
        fp, fi, mode = _filter_structure(items, n, name)
        out = np.full_like(ranks, -1)
        out_len = np.empty(n, dtype=np.int64)
        _convert.filter_rankings(ranks, lengths, fp, fi, mode == 2, keep, out, out_len, _n_threads(ranks.size))
        w = int(out_len.max()) if n else 0
        ranks, lengths = np.ascontiguousarray(out[:, :w]), out_len
    return ranks, lengths


def _check_scores(arr, name):
    kind = arr.dtype.kind
    if kind == "c":
        raise TypeError(f"{name}: complex scores are not supported")
    if kind not in "biuf":
        raise ValueError(f"{name}: scores must be real numbers, got values of dtype {arr.dtype}")
    return arr


def _score_rows(rows, name):
    """A list of score rows as a 2-D array, or (indptr, data) when the rows are ragged. The
    rows keep their (common) dtype: integer scores are compared exactly."""
    arrs = []
    for a in _row_arrays(rows, name, "score rows", "single scores"):
        if a.size:
            arrs.append(_check_scores(a, name))
        else:
            arrs.append(a)
    filled = [a.dtype for a in arrs if a.size]
    dtype = np.result_type(*filled) if filled else np.dtype(np.float64)
    if dtype.kind == "O":  # e.g. int64 and uint64 rows
        dtype = np.dtype(np.float64)
    with np.errstate(over="ignore"):
        arrs = [a.astype(dtype, copy=False) for a in arrs]
    lengths = np.fromiter((a.size for a in arrs), dtype=np.int64, count=len(arrs))
    if lengths.size and (lengths == lengths[0]).all():
        return np.stack(arrs) if lengths[0] else np.zeros((len(arrs), 0))
    indptr = np.zeros(len(arrs) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    return indptr, np.concatenate(arrs)


# score types of the top-k kernel (re_score_code in _topk.h; 2 is float16, read as uint16)
_SCORE_CODES = {("f", 4): 0, ("f", 8): 1, ("i", 1): 3, ("i", 2): 4, ("i", 4): 5, ("i", 8): 6,
                ("u", 1): 7, ("u", 2): 8, ("u", 4): 9, ("u", 8): 10}
_EMPTY_I64 = np.zeros(0, dtype=np.int64)


def _kernel_scores(arr):
    """Scores as the top-k kernels read them, without a copy where the dtype allows:
    ``(array, is_float16)``. float16 is read as its bits (viewed as uint16), booleans as
    uint8; only a non-native byte order or a float wider than 64 bits is converted."""
    dt = arr.dtype
    if not dt.isnative:
        arr = arr.astype(dt.newbyteorder("="))
        dt = arr.dtype
    if dt.kind == "b":
        return arr.view(np.uint8), False
    if dt == np.float16:
        return arr.view(np.uint16), True
    if dt.kind == "f" and dt not in (np.float32, np.float64):
        with np.errstate(over="ignore"):  # beyond float64 becomes inf: dropped with a warning
            return arr.astype(np.float64), False
    return arr, False


# DLPack device types (dlpack.h) named in the error for arrays that are not in host memory
_DLPACK_DEVICES = {2: "CUDA", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm", 13: "CUDA managed",
                   14: "oneAPI"}
_DLPACK_HOST = (1, 3)  # CPU, CUDA pinned host memory


def _host_array(x, name):
    """An ndarray for an array object of another library (PyTorch, JAX, CuPy, ...) that
    exposes ``__dlpack__`` or ``__array__``; anything else is returned unchanged.

    DLPack shares the memory (no copy); an array in device memory is refused with a message
    saying to move it to the host.
    """
    if x is None or isinstance(x, (np.ndarray, list, tuple)) or sp.issparse(x):
        return x
    if hasattr(x, "__dlpack_device__"):
        try:
            device = int(x.__dlpack_device__()[0])
        except Exception:  # a broken protocol: let __dlpack__ / __array__ decide
            device = 1
        if device not in _DLPACK_HOST:
            raise TypeError(
                f"{name}: the {type(x).__name__} is in {_DLPACK_DEVICES.get(device, f'device type {device}')} "
                "memory; move it to the host first (e.g. tensor.cpu() in PyTorch, "
                "jax.device_get(x), cupy.asnumpy(x))"
            )
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (BufferError, TypeError, ValueError, RuntimeError) as exc:
            if not hasattr(x, "__array__"):
                raise TypeError(f"{name}: could not read the {type(x).__name__} through DLPack: {exc}") from None
    if hasattr(x, "__array__"):
        try:
            return np.asarray(x)
        except (TypeError, ValueError, RuntimeError) as exc:
            raise TypeError(f"{name}: could not read the {type(x).__name__} as a NumPy array: {exc}") from None
    return x
