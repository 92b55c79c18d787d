"""Rankings: :class:`Rankings` from ranked ids or from scores (the top-k selection), and the
candidate filters (public as ``rankereval.data.Rankings``; pickled under that name)."""
import warnings

import numpy as np

import rankereval.data._convert as _convert
import rankereval.data._topk as _topk
from rankereval._stack import user_stacklevel
from rankereval._threads import effective_n_threads as _n_threads
from rankereval._validation import check_k
from rankereval.exceptions import InvalidValuesWarning
from rankereval.data._checks import (_batch_parts, _check_scores, _is_canonical_pattern, _issparse,
                                     _reject_masked, _warn_empty)
from rankereval.data._groups import _Groups, _flat
from rankereval.data._conversion import (_canonical_sparse, _dense_rankings, _EMPTY_I64, _frozen_view,
                                         _host_array, _id_dtype, _kernel_scores, _ragged_ids,
                                         _ragged_rankings, _readonly, _row_selection, _SCORE_CODES,
                                         _score_rows, _trimmed_rows)
from rankereval.data._labels import BinaryLabels


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

    __slots__ = ("_indices", "_lengths", "_ties")

    def __init__(self, *args, **kwargs):
        raise TypeError("create Rankings with Rankings.from_ranked_indices(...) or Rankings.from_scores(...)")

    @classmethod
    def _from_padded(cls, indices, lengths, shared=False, ties=None):
        """``shared``: the arrays are views of another object's frozen storage (no copy).
        ``ties``: None, or the tie flags (see :attr:`ties`), a bool array shaped like
        ``indices``."""
        freeze = _frozen_view if shared else _readonly
        self = object.__new__(cls)
        self._indices = freeze(indices)
        self._lengths = freeze(lengths)
        self._ties = None if ties is None else freeze(ties)
        return self

    @property
    def ties(self):
        """Where the scores tie, or None when ties were not kept.

        A read-only bool array shaped like :attr:`indices`: ``ties[i, j]`` is True when
        position ``j`` of ranking ``i`` holds the same score as position ``j + 1``, so the
        runs of True (plus the position after each run) are the tied groups. Set by
        ``ties="keep"`` in :meth:`from_scores`, :meth:`from_groups` and the readers of
        :mod:`rankereval.io`; read by ``Metric.score(..., ties=...)``.

        Examples
        --------
        >>> from rankereval import Rankings
        >>> r = Rankings.from_scores([[0.5, 0.9, 0.5, 0.1]], ties="keep")
        >>> r.to_list()
        [[1, 0, 2, 3]]
        >>> r.ties
        array([[False,  True, False, False]])
        >>> Rankings.from_scores([[0.5, 0.9, 0.5, 0.1]]).ties is None
        True
        """
        return None if self._ties is None else self._ties.view()

    @property
    def has_ties(self):
        """Whether some ranking holds tied scores (recorded with ``ties="keep"``)."""
        return self._ties is not None and bool(self._ties.any())

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
        if (self._ties is None) != (other._ties is None) or (
                self._ties is not None and not np.array_equal(self._ties[:, :w], other._ties[:, :w])):
            return False
        return np.array_equal(self._indices[:, :w], other._indices[:, :w])

    __hash__ = None

    def __reduce__(self):
        if self._ties is None:  # the stream of rankings without ties stays what it always was
            return (_restore_rankings, (self._indices, self._lengths))
        return (_restore_rankings, (self._indices, self._lengths, self._ties))

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
            return Rankings._from_padded(self._indices[start:stop], self._lengths[start:stop], shared=True,
                                         ties=None if self._ties is None else self._ties[start:stop])
        lengths = self._lengths[rows]
        width = int(lengths.max()) if lengths.size else 0
        return Rankings._from_padded(self._indices[rows, :width], lengths,
                                     ties=None if self._ties is None else self._ties[rows, :width])

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
        # ties kept by any part are kept (the other parts' rankings have none)
        ties = np.zeros(out.shape, dtype=bool) if any(p._ties is not None for p in parts) else None
        row = 0
        for p in parts:
            w = min(width, p._indices.shape[1])
            out[row:row + p.n_rows, :w] = p._indices[:, :w]
            if p._ties is not None:
                ties[row:row + p.n_rows, :w] = p._ties[:, :w]
            row += p.n_rows
        return Rankings._from_padded(out, np.concatenate([p._lengths for p in parts]), ties=ties)

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
            if _issparse(indices):
                raise TypeError(
                    "indices: a sparse matrix has no order; pass ranked ids, or use "
                    "Rankings.from_scores for sparse scores"
                )
            ranks, lengths = _ragged_rankings(*_ragged_ids(indices, name), name)
        ranks, lengths = _apply_filters(ranks, lengths, valid_items, invalid_items)
        _warn_empty(lengths)
        return cls._from_padded(ranks, lengths)

    @classmethod
    def from_groups(cls, scores, qid=None, *, group=None, k=None, ties="break"):
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
        ties : {'break', 'keep'}, default='break'
            As in :meth:`from_scores`: 'keep' records the tied groups (:attr:`ties`).

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
        s = _flat(scores, "scores")
        return cls.from_scores(_Groups(s.size, qid, group).score_matrix(s), k=k, ties=ties)

    @classmethod
    def from_scores(cls, raw_scores, valid_items=None, invalid_items=None, k=None, *, ties="break"):
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
        ties : {'break', 'keep'}, default='break'
            'break': equal scores are ordered by item id and nothing more is recorded.
            'keep': the same order, and the groups of equal scores are recorded
            (:attr:`ties`), so that metrics can average over every order of each group
            (``Metric.score(..., ties="expected")``); a group that crosses the cutoff ``k``
            is kept whole (the ranking is then longer than ``k``), so that the expected
            value at ``k`` is exact.

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
        keep = check_ties_keep(ties)
        name = "raw_scores"
        raw_scores = _host_array(raw_scores, name)
        _reject_masked(raw_scores, name)
        if _issparse(raw_scores):
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
                data = indptr = ids = None
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
        scores = dense if dense is not None else data

        def select(kk):
            out = np.empty((n_rows, kk), dtype=_id_dtype(max(n_items - 1, 0)))  # the kernel writes every entry
            out_len = np.zeros(n_rows, dtype=np.int64)
            n_invalid = np.zeros(n_rows, dtype=np.int64)
            if kk > 0:
                # the buffer: the k best so far plus room for candidates above the threshold
                cap = _topk.buffer_size(kk, most, n_items if dense is not None and not vmode else 0)
                code = 2 if half else _SCORE_CODES[scores.dtype.kind, scores.dtype.itemsize]
                _topk.topk(
                    code, scores.dtype.itemsize,
                    None if dense is None else dense.view(np.uint8), n_items,
                    _EMPTY_I64 if dense is not None else indptr, _EMPTY_I64 if dense is not None else ids,
                    None if dense is not None else data.view(np.uint8),
                    kk, cap, vp, vi, vmode, xp, xi, xmode,
                    out.view(np.uint8), out.dtype == np.int64, out_len, n_invalid, _n_threads(scores.size),
                )
            return out, out_len, n_invalid

        out, out_len, n_invalid = select(kk)
        tie_flags = None
        if keep:
            ranked_scores = _ranked_scores(out, out_len, dense, data, indptr, ids, n_items, half)
            if 0 < kk < most:
                # a tied group may cross the cutoff: select more until every row's group at
                # the cutoff ends before the end of the selection, then keep it whole
                more = kk
                while True:
                    more = min(2 * more + 1, most)
                    out2, len2, _ = select(more)
                    s2 = _ranked_scores(out2, len2, dense, data, indptr, ids, n_items, half)
                    open_ = (len2 == more) & (out_len == kk) & (s2[:, more - 1] == ranked_scores[:, kk - 1])
                    if more >= most or not open_.any():
                        break
                at_cut = ranked_scores[:, kk - 1]
                extra = (s2[:, kk:] == at_cut[:, None]) & (np.arange(kk, more) < len2[:, None])
                extra = np.cumprod(extra, axis=1, dtype=bool).sum(axis=1) * (out_len == kk)
                out_len = np.where(out_len == kk, kk + extra, out_len)
                w = int(out_len.max()) if n_rows else 0
                out = np.ascontiguousarray(out2[:, :w])
                ranked_scores = s2[:, :w]
            w = out.shape[1]
            tie_flags = np.zeros((n_rows, w), dtype=bool)
            if w > 1:
                tie_flags[:, :-1] = (ranked_scores[:, :-1] == ranked_scores[:, 1:]) \
                    & (np.arange(1, w) < out_len[:, None])
        total_invalid = int(n_invalid.sum())
        if total_invalid:
            warnings.warn(
                f"dropped {total_invalid} candidate scores that are NaN or infinite, in "
                f"{int(np.count_nonzero(n_invalid))} rows",
                InvalidValuesWarning,
                stacklevel=user_stacklevel(),
            )
        w = int(out_len.max()) if n_rows else 0
        if w < out.shape[1]:
            out = np.ascontiguousarray(out[:, :w])
            if tie_flags is not None:
                tie_flags = np.ascontiguousarray(tie_flags[:, :w])
        _warn_empty(out_len)
        return cls._from_padded(out, out_len, ties=tie_flags)


def check_ties_keep(ties, name="ties"):
    """Whether ``ties`` ('break' or 'keep', the one spelling of every reader) asks to keep
    the tied groups."""
    if not isinstance(ties, str) or ties not in ("break", "keep"):
        raise ValueError(f"{name} must be 'break' (order equal scores by item id) or 'keep' (record "
                         f"the tied groups), got {ties!r}")
    return ties == "keep"


def _ranked_scores(out, out_len, dense, data, indptr, ids, n_items, half):
    """The score of every ranked item (padding: anything; float16 decoded, so that -0 and 0
    tie), in the scores' own dtype, for telling tied neighbours apart exactly."""
    n_rows, w = out.shape
    if dense is not None:
        col = np.where(np.arange(w) < out_len[:, None], out, 0).astype(np.int64)
        got = np.take_along_axis(dense, col, axis=1) if w else np.empty((n_rows, 0), dense.dtype)
    else:
        # canonical rows have sorted ids: find each ranked id among its row's stored ids
        import rankereval.metrics._ties_fast as _tk

        pos = np.empty((n_rows, w), dtype=np.int64)
        _tk.stored_positions(np.asarray(indptr, dtype=np.int64), ids, np.ascontiguousarray(out), out_len, pos,
                             _n_threads(out.size))
        got = data[pos] if data.size else np.zeros((n_rows, w), data.dtype)
    return got.view(np.float16) if half else got


def _restore_rankings(indices, lengths, ties=None):
    return Rankings._from_padded(indices, lengths, ties=ties)


def _filter_structure(items, n_rows, name):
    """(indptr, ids padded with a sentinel, mode) of a valid/invalid item filter."""
    if items is None:
        return np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64), 0
    if _is_canonical_pattern(items):
        # the common case of a training-interaction matrix: its structure is used as it is
        # (a BinaryLabels object would copy it once more, at 1M entries 10+ ms per call)
        indptr, indices = items.indptr, items.indices
    else:
        if isinstance(items, (list, tuple)) and len(items) == 0:
            items = [[]]  # a flat list of ids for every ranking, here none (as labels [] is no rows)
        try:
            f = BinaryLabels.from_positive_indices(items) if not isinstance(items, BinaryLabels) else items
        except (TypeError, ValueError) as exc:  # its messages name its own argument, 'indices'
            reason = str(exc)
            reason = reason[len("indices: "):] if reason.startswith("indices: ") else reason
            raise type(exc)(f"{name}: {reason}") from None
        indptr, indices = f.indptr, f.indices
    rows = indptr.shape[0] - 1
    if rows not in (1, n_rows):
        raise ValueError(f"{name} has {rows} rows, expected 1 (for all rankings) or {n_rows} (one per ranking)")
    ids = np.empty(indices.size + 1, dtype=np.int64)
    ids[:-1] = indices
    ids[-1] = -1
    return indptr.astype(np.int64), ids, (2 if rows == 1 and n_rows != 1 else 1)


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


#: the rankings' filters, applied by the metrics of judged items only (metrics._adjusted)
apply_filters = _apply_filters
