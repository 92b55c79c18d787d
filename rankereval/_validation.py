"""Argument checks shared by every layer: one message per rule, one place per limit.

Each size limit is named once, with how it was derived: here, or in ``_limits.h`` for the
ones the kernels share.
"""
from numbers import Integral, Real

import numpy as np

from rankereval import _convert

_INT32_MAX = np.iinfo(np.int32).max
_INT64_MAX = np.iinfo(np.int64).max
#: largest item id: the number of items (id + 1) must itself fit an int64 shape
MAX_ID = _INT64_MAX - 1
#: largest cutoff accepted: the kernels index with signed 64-bit integers and add small
#: offsets to k, so a margin of 2**62 keeps every such sum in range
MAX_K = 2**62

NAN_HANDLING = ("propagate", "drop", "zerofill")


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


def check_choice(value, choices, name):
    """``value`` if it is one of ``choices``; ValueError listing them otherwise."""
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, got {value!r}")
    return value


def check_nan_handling(value):
    return check_choice(value, NAN_HANDLING, "nan_handling")


def check_real(value, name):
    """A finite real number (not a bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.floating, np.integer)) \
            or not np.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


def bitset_fits(n_items, n_ranked_ids):
    """Whether the metric kernel may use a per-thread bitset over ``n_items`` ids (the
    limits are in ``rankereval/_limits.h``, shared with the conversions)."""
    return bool(_convert.bitset_fits(min(n_items, 2**62), n_ranked_ids))
