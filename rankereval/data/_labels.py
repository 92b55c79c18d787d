"""Ground-truth labels: :class:`Labels`, :class:`BinaryLabels`, :class:`NumericLabels`
(public as ``rankereval.data.BinaryLabels``, ...; pickled under that name)."""
from numbers import Integral

import numpy as np

import rankereval.data._convert as _convert
from rankereval._threads import effective_n_threads as _n_threads
from rankereval._validation import _INT32_MAX
from rankereval.data._checks import (_batch_parts, _check_label_values, _check_sparse_structure, _issparse,
                                     _raise_duplicates, _reject_masked)
from rankereval.data._groups import _Groups, _flat
from rankereval.data._conversion import (_canonical_sparse, _dense_label_rows, _frozen_view, _host_array,
                                         _id_dtype, _ragged_ids, _readonly, _row_selection)


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
        # the judgments of the judged items, when given, are the pool (see rankereval.io): kept
        pool = judged._judged if isinstance(judged, Labels) else None
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
        if pool is not None and pool._n_items <= n_items:
            out._judged._judged = BinaryLabels._from_canonical(pool._indptr.astype(dt, copy=False),
                                                               pool._indices.astype(dt, copy=False), None,
                                                               n_items, shared=True)
        return out

    def _check_judged(self, judged, width):
        """ValueError unless every stored item of a row is among ``judged``'s items of that
        row (skipped when both hold the same items: every read of binary labels whose
        listed items are all relevant)."""
        n_rows, n_items = width
        rows = np.arange(n_rows, dtype=np.int64)
        mine_rows = np.repeat(rows, np.diff(self._indptr))
        if n_rows * max(n_items, 1) < 2**62:  # (row, item) pairs as one sortable int64 key
            mine = mine_rows * n_items + self._indices
            theirs = np.repeat(rows, np.diff(judged._indptr)) * n_items + judged._indices
            missing = np.flatnonzero(~np.isin(mine, theirs, assume_unique=True))
            if missing.size:  # stored items are in (row, item) order: the first row's smallest
                row, item = int(mine_rows[missing[0]]), int(self._indices[missing[0]])
        else:  # the keys would overflow: SciPy compares the rows
            import scipy.sparse as sp

            a = sp.csr_array((np.ones(self._indices.shape[0]), self._indices, self._indptr), shape=width)
            b = sp.csr_array((np.ones(judged._indices.shape[0]), judged._indices, judged._indptr), shape=width)
            m = (a - a.multiply(b)).tocoo()
            m.eliminate_zeros()
            missing = np.lexsort((m.col, m.row))
            if missing.size:
                row, item = int(m.row[missing[0]]), int(m.col[missing[0]])
        if missing.size:
            raise ValueError(f"judged: item {item} of label row {row} is relevant but not judged; "
                             "the judged items of a row include its relevant ones")

    @property
    def n_positives(self):
        """Number of relevant (non-zero) items in each row, shape ``(n_rows,)``."""
        return np.diff(self._indptr).astype(np.int64)

    @property
    def csr(self):
        """The labels as a :class:`scipy.sparse.csr_array` sharing the read-only storage."""
        import scipy.sparse as sp

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
        >>> import numpy as np
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
        import scipy.sparse as sp

        name = "labels"
        labels = _host_array(labels, name)
        _reject_masked(labels, name)
        if _issparse(labels):
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
        import scipy.sparse as sp

        name = "indices"
        if _issparse(indices):
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
            NaN or infinite, or a query id is NaN. TypeError for mixed query id types or
            no/both of ``qid``, ``group``.

        Examples
        --------
        >>> from rankereval import BinaryLabels
        >>> BinaryLabels.from_groups([0, 2, 1, 0, 1], qid=[7, 7, 7, 3, 3]).indices_to_list()
        [[1], [1, 2]]
        """
        y = _flat(y, "y")
        return cls.from_matrix(_Groups(y.size, qid, group).binary_matrix(y, relevance_level))


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
        y = _flat(y, "y")
        groups = _Groups(y.size, qid, group)
        return cls.from_matrix(groups.graded_matrix(groups.grades(y)))
