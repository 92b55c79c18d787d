"""Turning user input into the arrays the labels and rankings store: arrays of other
libraries read as NumPy arrays, ragged rows as (indptr, flat ids), padded 2-D id arrays,
score rows, row selections; the storage helpers (read-only arrays, the narrowest id dtype)."""
from itertools import chain
from numbers import Integral

import numpy as np

import rankereval.data._convert as _convert
from rankereval._threads import effective_n_threads as _n_threads
from rankereval._validation import _INT32_MAX, MAX_ID as _MAX_ID
from rankereval.data._checks import (_check_int_ids, _check_scores, _check_sparse_structure, _is_sequence,
                                     _issparse, _raise_dense_duplicates, _raise_duplicates, _reject_masked)


# a converted ranking array at least this large is written around the caches (streaming
# stores): it would not stay in them anyway, and an ordinary store first reads each line
_STREAM_BYTES = 16 << 20


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
    if x is None or isinstance(x, (np.ndarray, list, tuple)) or _issparse(x):
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


def _rows(x, name, rows_are, items_are):
    """The rows of a list input: a flat list is one row; each row one-dimensional.

    The one place the list forms of ids, labels and scores are told apart; the callers turn
    the rows into their own arrays.
    """
    if len(x) == 0:
        return []  # no rows: from_positive_indices([]) has zero rows, not one empty row
    if not any(_is_sequence(r) for r in x):
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


def _canonical_sparse(x, name):
    """Copy any scipy sparse input to canonical CSR (sorted, summed duplicates)."""
    if x.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D sparse matrix, got {x.ndim} dimensions")
    _check_sparse_structure(x, name)
    import scipy.sparse as sp

    m = sp.csr_array(x, copy=True)
    m.sum_duplicates()
    return m


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


def _dense_label_rows(rows, name):
    """A (possibly ragged) list of label rows as a 2-D float array, missing entries 0."""
    if len(rows) == 0:
        return np.zeros((0, 0))  # no rows (from_matrix([]) has zero rows)
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
    if not lengths.size:
        return np.zeros((0, 0))  # no rows (from_scores([]) has zero rows)
    if (lengths == lengths[0]).all():
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
