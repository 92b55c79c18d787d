"""Checks of user input for the labels and rankings: each function raises a clear error
(or warns) and otherwise returns its input, or a verdict. Nothing here converts or stores."""
from numbers import Integral
import sys
import warnings

import numpy as np

from rankereval._stack import user_stacklevel
from rankereval._validation import _INT64_MAX, MAX_ID as _MAX_ID
from rankereval.exceptions import InvalidValuesWarning


def _issparse(x):
    """``scipy.sparse.issparse(x)``, without importing SciPy: an object is a SciPy sparse
    array or matrix only if ``scipy.sparse`` is loaded (its classes live there), so ``import
    rankereval`` and inputs that are not sparse never pay SciPy's import."""
    sp = sys.modules.get("scipy.sparse")
    return sp is not None and sp.issparse(x)


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


def _raise_dense_duplicates(bad, out, name):
    """_raise_duplicates for a 2-D array, seen as ragged rows of equal width."""
    if bad.any():
        n, m = out.shape
        _raise_duplicates(bad, np.arange(0, (n + 1) * m, m, dtype=np.int64), out.reshape(-1), name)


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


def _check_scores(arr, name):
    kind = arr.dtype.kind
    if kind == "c":
        raise TypeError(f"{name}: complex scores are not supported")
    if kind not in "biuf":
        raise ValueError(f"{name}: scores must be real numbers, got values of dtype {arr.dtype}")
    return arr


def _is_canonical_pattern(x):
    """Whether ``x`` is a valid SciPy CSR matrix whose rows are sorted, without repeated or
    explicitly stored zero entries: then its indptr and indices are exactly the id rows
    that BinaryLabels.from_positive_indices would build."""
    if not (_issparse(x) and x.format == "csr" and x.ndim == 2):
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
            stacklevel=user_stacklevel(),
        )


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
