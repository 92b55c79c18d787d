"""Argument checks shared by every layer: one message per rule, one place per limit.

Each size limit is named once, with how it was derived: here, or in ``_limits.h`` for the
ones the kernels share.
"""
from numbers import Integral, Real

import numpy as np

import rankereval._utils._runtime as _runtime
from rankereval._utils._choices import NAN_HANDLING  # noqa: F401  (the option's values)

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
#: largest item id: the number of items (id + 1) must itself fit an int64 shape
MAX_ID = _INT64_MAX - 1
#: largest cutoff accepted: the kernels index with signed 64-bit integers and add small
#: offsets to k, so a margin of 2**62 keeps every such sum in range
MAX_K = 2**62


def check_k(k, name="k", allow_none=False):
    """``k`` as an int in ``[1, MAX_K]`` (or None when allowed); ValueError naming ``name``."""
    if k is None and allow_none:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k <= 0:
        raise ValueError(f"{name} must be an integer > 0{' or None' if allow_none else ''}, got {k!r}")
    if k > MAX_K:
        raise ValueError(f"{name} must be at most 2**62, got {k!r}")
    return int(k)


def check_flag(value, name):
    """``value`` as a bool; TypeError naming ``name`` for anything but a bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


class OptionError(ValueError):
    """A ValueError about one option; ``argument`` is its name in the caller's signature (the
    command line names its flag instead: ``rankereval.stats._engine.cli_message``)."""

    def __init__(self, argument, message):
        super().__init__(message)
        self.argument = argument


def check_choice(value, choices, name):
    """The one of ``choices`` that ``value`` names, matched case-insensitively (every option
    string of the package is matched this way); ValueError listing them otherwise."""
    if isinstance(value, str):
        if value in choices:
            return value
        for c in choices:
            if c.lower() == value.lower():
                return c
    raise OptionError(name, f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")


def check_log_base(value, name="log_base"):
    """The base of a DCG discount as its option string: ``'2'`` or ``'e'`` (from those
    strings or the numbers 2 and ``math.e``), or any other base b > 1, as the
    shortest string of its float (``'10'``, ``'1.5'``), from a number or such a string: one
    spelling for ``DCG``, ``dcg_score``, names (``dcg@10[log_base=10]``) and ``--log-base``."""
    from rankereval._utils._choices import DCG_LOG_BASES

    if isinstance(value, str):
        try:
            return check_choice(value, DCG_LOG_BASES, name)
        except ValueError:
            pass
        try:
            number = float(value)
        except ValueError:
            number = None
    elif not isinstance(value, (bool, np.bool_)) and isinstance(value, (Real, np.number)):
        number = float(value)
    else:
        number = None
    if number is not None and np.isfinite(number) and number > 1:
        if number == 2:
            return "2"
        if number == np.e:
            return "e"
        text = repr(number)
        return text[:-2] if text.endswith(".0") else text
    raise OptionError(name, f"{name} must be '2', 'e' or a number > 1 (the base of the logarithm; a "
                            f"base below 1 would make the discounts negative), got {value!r}")


def check_nan_handling(value, name="nan_handling"):
    return check_choice(value, NAN_HANDLING, name)


#: the largest bootstrap: the distribution is returned, 8 bytes per resample (10**8: 800 MB,
#: far beyond any use; the Monte Carlo error of a 95% bound is then ~3e-4 standard errors)
MAX_RESAMPLES = 10 ** 8


def check_n_resamples(value, name="n_resamples"):
    """An int in ``[2, MAX_RESAMPLES]`` (bools refused): a bootstrap needs two resamples."""
    if (isinstance(value, (bool, np.bool_)) or not isinstance(value, (Integral, np.integer))
            or not 1 < value <= MAX_RESAMPLES):
        raise OptionError(name, f"{name} must be an integer > 1 and <= {MAX_RESAMPLES:_} (the "
                                f"bootstrap distribution is kept in memory), got {value!r}")
    return int(value)


def check_confidence(value, name="confidence"):
    """A float strictly between 0 and 1 (integers, including 0 and 1, refused)."""
    if (isinstance(value, (bool, np.bool_, Integral, np.integer))
            or not isinstance(value, (Real, np.floating)) or not 0.0 < float(value) < 1.0):
        raise OptionError(name, f"{name} must be a float strictly between 0 and 1, got {value!r}")
    return float(value)


def check_bca_finite(x, name="method"):
    """BCa's acceleration needs finite scores: OptionError naming ``name`` otherwise."""
    if not np.isfinite(x).all():
        raise OptionError(name, f"{name}='bca' requires finite scores (the acceleration of a mean "
                                f"with infinite values is undefined); use {name}='percentile'")


def check_real(value, name):
    """A finite real number (not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating, np.integer)) \
            or not np.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def bitset_fits(n_items, n_ranked_ids):
    """Whether the metric kernel may use a per-thread bitset over ``n_items`` ids (the
    limits are in ``rankereval/_utils/_limits.h``, shared with the conversions)."""
    return bool(_runtime.bitset_fits(min(n_items, 2**62), n_ranked_ids))


def check_item_values(values, name, high=None):
    """A 1-D C-contiguous float64 copy of per-item numbers (index = item id): real, finite,
    ``>= 0`` and, when given, ``<= high``. Bools, complex numbers, strings and objects are
    refused, not converted; so are empty arrays and arrays of another dimension."""
    arr = np.asarray(values)
    if arr.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be an array of real numbers indexed by item id, got dtype {arr.dtype}")
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array indexed by item id, got shape {arr.shape}")
    out = np.array(arr, dtype=np.float64, order="C")
    bad = ~np.isfinite(out) | (out < 0) | (out > high if high is not None else False)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        bound = f"in [0, {high:g}]" if high is not None else ">= 0"
        raise ValueError(f"{name} must be finite and {bound}; item {i} has {float(out[i])!r}"
                         + (f" (and {int(bad.sum()) - 1} more items)" if bad.sum() > 1 else ""))
    out.setflags(write=False)
    return out


def check_item_set(items, name):
    """``(mask, beyond_ok)`` for a set of item ids: a bool mask over the catalogue (ids past
    its end are an error), or integer ids (a set without a catalogue: ids past the largest
    are outside the set). Negative ids and other dtypes are refused."""
    arr = np.asarray(items)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D bool mask over item ids or a 1-D array of item ids, "
                         f"got shape {arr.shape}")
    if arr.dtype == np.bool_:
        if arr.size == 0:
            raise ValueError(f"{name}: an empty bool mask covers no item")
        return np.ascontiguousarray(arr, dtype=np.float64), False
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
        raise TypeError(f"{name} must be a bool mask or integer item ids, got dtype {arr.dtype}")
    ids = arr.astype(np.int64)
    if ids.size and ids.min() < 0:
        raise ValueError(f"{name}: item ids must be >= 0, got {int(ids.min())}")
    if ids.size and ids.max() > MAX_ID - 1:
        raise ValueError(f"{name}: item id {int(ids.max())} is too large")
    mask = np.zeros(int(ids.max()) + 1 if ids.size else 0, dtype=np.float64)
    mask[ids] = 1.0
    return mask, True


def check_item_features(features, name="item_features"):
    """Item features (one row per item id) as float64: a C-contiguous 2-D array, or a
    canonical CSR matrix for scipy sparse input. Refuses non-real dtypes, NaN or infinite
    values, and rows of zero norm (whose cosine similarity is 0/0)."""
    import scipy.sparse as sp

    if sp.issparse(features):
        if features.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {features.dtype}")
        if features.ndim != 2:
            raise ValueError(f"{name} must be 2-D (items x features), got shape {features.shape}")
        m = sp.csr_matrix(features, dtype=np.float64, copy=True)
        m.sum_duplicates()
        m.eliminate_zeros()
        if not np.isfinite(m.data).all():
            row = int(np.searchsorted(m.indptr, int(np.flatnonzero(~np.isfinite(m.data))[0]), side="right") - 1)
            raise ValueError(f"{name}: item {row} has a NaN or infinite feature")
        sq = np.asarray(m.multiply(m).sum(axis=1)).ravel()
    else:
        arr = np.asarray(features)
        if arr.dtype.kind not in "biuf":
            raise TypeError(f"{name} must be an array of real numbers (items x features) or a scipy "
                            f"sparse matrix, got dtype {arr.dtype}")
        if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
            raise ValueError(f"{name} must be a non-empty 2-D array (items x features), got shape {arr.shape}")
        m = np.array(arr, dtype=np.float64, order="C")
        finite = np.isfinite(m).all(axis=1)
        if not finite.all():
            raise ValueError(f"{name}: item {int(np.flatnonzero(~finite)[0])} has a NaN or infinite feature")
        sq = np.einsum("ij,ij->i", m, m)
    if m.shape[0] == 0:
        raise ValueError(f"{name} has no items")
    zero = ~(sq > 0)
    if zero.any():
        rows = np.flatnonzero(zero)
        raise ValueError(
            f"{name}: item {int(rows[0])}"
            + (f" (and {rows.size - 1} more items)" if rows.size > 1 else "")
            + " has a zero feature vector; cosine similarity is 0/0 (undefined) for it. Give every "
            "item a non-zero feature vector, or remove those items (scikit-learn's "
            "cosine_similarity would silently count them as dissimilar to everything)")
    if not np.isfinite(sq).all():
        raise ValueError(f"{name}: the squared norm of item {int(np.flatnonzero(~np.isfinite(sq))[0])} "
                         "overflows float64; rescale the features")
    return m, sq
