"""The machinery of the input fuzzing (``test_fuzz.py``), shared with ``test_reliability.py``:
literal oracles of the constructors written from the documented contract, the hypothesis
strategies of arbitrary input (every dtype, layout, ragged and sparse form), the storage
invariants of labels and rankings, and the metrics' judge (``metric_outcome``: the right answer
from ``tests/reference.py`` or the documented error, values in range, NaN only where
documented). A test module imports this one, never another test module.
"""
import inspect
import math
import os
import sys
import warnings
from numbers import Integral

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import event, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, os.path.dirname(__file__))
import reference as ref  # noqa: E402
from helpers import needs_judged  # noqa: E402

from rankereval.metrics._base import _registered  # noqa: E402
from rankereval import (  # noqa: E402
    ERR,
    NDCG,
    BinaryLabels,
    InvalidValuesWarning,
    Metric,
    NumericLabels,
    Rankings,
)

INT64_MAX = 2**63 - 1

MAX_ID = INT64_MAX - 1  # the number of items (largest id + 1) must fit an int64
MAX_K = 2**62

# Reported bugs that are still open, tolerated by the fuzz properties below in exactly their
# failure mode. Each has a strict-xfail regression test at the end of test_fuzz.py; when a fix
# lands that test XPASSes (the suite fails): drop its xfail mark and the tolerance here.
KNOWN_BUGS = {}  # all bugs found so far are fixed; see the regression tests at the end of test_fuzz.py

# every registered metric (a new one is fuzzed without editing this file)
ALL_METRIC_CLASSES = _registered()
BOUNDED = {c.__name__ for c in ALL_METRIC_CLASSES if c.info.value_range == (0.0, 1.0)}
RANKS = {c.__name__ for c in ALL_METRIC_CLASSES if c.info.value_range == (1.0, math.inf)}


# =========================================================================================
# running a call and judging its outcome
# =========================================================================================

class Outcome:
    def __init__(self, value=None, exc=None, warns=()):
        self.value, self.exc, self.warns = value, exc, list(warns)

    def __repr__(self):
        return f"Outcome(value={self.value!r}, exc={self.exc!r})"


def run(fn, *args, **kwargs):
    """Call ``fn`` recording its result or exception and its warnings."""
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            value = fn(*args, **kwargs)
        except Exception as exc:  # judged by the caller
            return Outcome(exc=exc, warns=w)
    return Outcome(value=value, warns=w)


def _arrays_in(x):
    if isinstance(x, np.ndarray):
        return [x]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in _arrays_in(v)]
    return []


def check_warnings(outcome, *inputs):
    """Only InvalidValuesWarning may be emitted (numpy noise from our own casts is a bug)."""
    arrays = [a for x in inputs for a in _arrays_in(x)]
    for w in outcome.warns:
        if issubclass(w.category, InvalidValuesWarning):
            continue
        raise AssertionError(f"unexpected {w.category.__name__}: {w.message}")


def assert_clean_error(exc):
    """``exc`` is a ValueError/TypeError (not also an IndexError etc.) with a message."""
    bad = (IndexError, KeyError, OverflowError, MemoryError, SystemError, ZeroDivisionError,
           AttributeError, RecursionError, AssertionError)
    if isinstance(exc, bad) or not isinstance(exc, (ValueError, TypeError)):
        raise AssertionError(f"unexpected {type(exc).__name__}: {exc}") from exc
    assert str(exc).strip(), f"{type(exc).__name__} without a message"


class Reject(Exception):
    """Raised by an oracle: the input must be rejected with ValueError or TypeError."""


UNDECIDED = object()  # the contract does not fix the answer: only invariants are checked


def expect(outcome, expected, tolerate=None):
    """Judge ``outcome`` against the oracle's ``expected`` (a value, ``Reject`` or UNDECIDED).

    ``tolerate(exc)`` may name a known bug that explains a rejected valid input.
    Returns True when the call returned a value that should be compared further.
    """
    event("rejected" if outcome.exc is not None else "accepted")
    if outcome.exc is not None:
        if isinstance(expected, Reject) or expected is UNDECIDED:
            assert_clean_error(outcome.exc)
            return False
        bug = tolerate(outcome.exc) if tolerate else None
        if bug:
            note(f"tolerated known bug {bug!r}: {outcome.exc!r}")
            return False
        raise AssertionError(f"valid input rejected: {outcome.exc!r}") from outcome.exc
    if isinstance(expected, Reject):
        raise AssertionError(f"invalid input accepted ({expected}): returned {outcome.value!r}")
    return expected is not UNDECIDED


def oracle(fn, *args):
    """Run an oracle function: its result, or the Reject it raised."""
    try:
        return fn(*args)
    except Reject as r:
        return r


# =========================================================================================
# oracles: what the documented contract says each input means
# =========================================================================================

def _is_seq(x):
    return isinstance(x, (list, tuple, np.ndarray))


def _as_id(v):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise Reject(f"item ids must be integers, got {v!r}")
    v = int(v)
    if not 0 <= v <= MAX_ID:
        raise Reject(f"item id {v} out of range")
    return v


def _canonical(x):
    """scipy's own meaning of a sparse input: CSR, duplicates summed (scipy semantics)."""
    c = sp.csr_array(x, copy=True)
    c.sum_duplicates()
    return c


def oracle_id_rows(x, sparse_ok=True):
    """Rows of item ids (list of lists of int) denoted by ``x``; Reject if invalid."""
    if isinstance(x, np.ma.MaskedArray):
        raise Reject("masked")
    if sp.issparse(x):
        if not sparse_ok or x.ndim != 2:
            raise Reject("sparse")
        c = _canonical(x)
        return [
            [int(j) for j, v in zip(c.indices[c.indptr[i]:c.indptr[i + 1]], c.data[c.indptr[i]:c.indptr[i + 1]]) if v != 0]
            for i in range(c.shape[0])
        ]
    if isinstance(x, np.ndarray):
        x = np.asarray(x)  # np.matrix -> ndarray
        if x.ndim not in (1, 2):
            raise Reject("ndim")
        rows = [x] if x.ndim == 1 else list(x)
        if x.size == 0:
            return [[] for _ in rows]
        if x.dtype.kind not in "iuO":
            raise Reject("dtype")
        return [[_as_id(v) for v in r.tolist()] for r in rows]
    if not isinstance(x, (list, tuple)):
        raise Reject("type")
    if len(x) == 0:
        rows = []  # an empty list: zero rows
    elif not any(_is_seq(r) for r in x):
        rows = [x]
    elif all(_is_seq(r) for r in x):
        rows = list(x)
    else:
        raise Reject("mixed rows and scalars")
    out = []
    for r in rows:
        if isinstance(r, np.ma.MaskedArray):
            raise Reject("masked row")
        if isinstance(r, np.ndarray):
            if r.ndim != 1:
                raise Reject("row ndim")
            if r.size and r.dtype.kind not in "iuO":
                raise Reject("row dtype")
            vals = list(r)
        else:
            vals = list(r)
        out.append([_as_id(v) for v in vals])
    return out


def _no_duplicates(rows):
    for i, r in enumerate(rows):
        if len(set(r)) != len(r):
            raise Reject(f"duplicate id in row {i}")
    return rows


def oracle_positive_indices(x):
    """(sorted id rows, n_items) of BinaryLabels.from_positive_indices(x)."""
    rows = oracle_id_rows(x)
    if sp.issparse(x):
        return rows, x.shape[1]
    rows = _no_duplicates(rows)
    ids = [v for r in rows for v in r]
    return [sorted(r) for r in rows], (max(ids) + 1 if ids else 0)


def _real_row(r):
    """A list/array row as a 1-D array of a real dtype, or Reject."""
    if isinstance(r, np.ma.MaskedArray):
        raise Reject("masked row")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = np.asarray(r)
    except (ValueError, TypeError, OverflowError):
        raise Reject("not an array row") from None
    if a.ndim != 1:
        raise Reject("row ndim")
    if a.size and a.dtype.kind not in "biuf":
        raise Reject("row dtype")
    return a


def _to_f64(a):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(a).astype(np.float64)


def _label_row(a, binary):
    """(id, value) pairs of one label row; the checks apply to the stored float64 values."""
    v = _to_f64(a)
    if not np.isfinite(v).all():
        raise Reject("non-finite label (or beyond float64)")
    if binary and a.dtype.kind != "b" and not np.all((v == 0) | (v == 1)):
        raise Reject("non-binary label")
    if not binary and v.size and v.min() < 0:
        raise Reject("negative label")
    return v


def oracle_label_matrix(x, binary):
    """(rows of (id, float value) with value != 0, n_items) of *Labels.from_matrix(x)."""
    if isinstance(x, np.ma.MaskedArray):
        raise Reject("masked")
    if sp.issparse(x):
        if x.ndim != 2:
            raise Reject("ndim")
        c = _canonical(x)
        if c.dtype.kind not in "biuf":
            raise Reject("dtype")
        out = []
        for i in range(c.shape[0]):
            sl = slice(c.indptr[i], c.indptr[i + 1])
            v = _label_row(c.data[sl], binary)
            out.append([(int(j), float(w)) for j, w in zip(c.indices[sl], v) if w != 0])
        return out, x.shape[1]
    if isinstance(x, np.ndarray):
        x = np.asarray(x)
        if x.ndim not in (1, 2) or x.dtype.kind not in "biuf":
            raise Reject("ndim/dtype")
        raw_rows = [x] if x.ndim == 1 else list(x)
        n_items = x.shape[-1]
    elif isinstance(x, (list, tuple)):
        if len(x) == 0:
            return [], 0  # an empty list: zero rows
        if not any(_is_seq(r) for r in x):
            rows = [x]
        elif all(_is_seq(r) for r in x):
            rows = list(x)
        else:
            raise Reject("mixed rows and scalars")
        raw_rows = [_real_row(r) for r in rows]
        n_items = max(a.shape[0] for a in raw_rows)
    else:
        raise Reject("type")
    out = []
    for a in raw_rows:
        if a.dtype.kind not in "biuf":
            return UNDECIDED  # an empty row of e.g. str dtype: nothing in the contract
        v = _label_row(a, binary)
        out.append([(j, float(v[j])) for j in np.flatnonzero(v)])
    return out, n_items


def _score_rows_of(x):
    """Rows of (item id, float64 score) candidates of Rankings.from_scores(x)."""
    if isinstance(x, np.ma.MaskedArray):
        raise Reject("masked")
    if sp.issparse(x):
        if x.ndim != 2:
            raise Reject("ndim")
        c = _canonical(x)
        if c.dtype.kind not in "biuf":
            raise Reject("dtype")
        return [
            list(zip(c.indices[c.indptr[i]:c.indptr[i + 1]].tolist(), _to_f64(c.data[c.indptr[i]:c.indptr[i + 1]]).tolist()))
            for i in range(c.shape[0])
        ], c.shape[1]
    if isinstance(x, np.ndarray):
        x = np.asarray(x)
        if x.ndim not in (1, 2) or x.dtype.kind not in "biuf":
            raise Reject("ndim/dtype")
        rows = [x] if x.ndim == 1 else list(x)
        return [list(enumerate(_to_f64(r).tolist())) for r in rows], x.shape[-1]
    if isinstance(x, (list, tuple)):
        if len(x) == 0:
            rows = []  # an empty list: zero rows
        elif not any(_is_seq(r) for r in x):
            rows = [x]
        elif all(_is_seq(r) for r in x):
            rows = list(x)
        else:
            raise Reject("mixed rows and scalars")
        arrs = [_real_row(r) for r in rows]
        return [list(enumerate(_to_f64(a).tolist())) for a in arrs], max((a.size for a in arrs), default=0)
    raise Reject("type")


def _check_k(k):
    if k is None:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or k <= 0 or k > MAX_K:
        raise Reject(f"bad k {k!r}")
    return int(k)


def _filter_rows(items, n):
    """Per-ranking sets of filter ids (list of n sets), or None."""
    if items is None:
        return None
    if isinstance(items, BinaryLabels):
        rows = items.indices_to_list()
    elif isinstance(items, NumericLabels):
        raise Reject("NumericLabels as a filter")
    else:
        # an empty list is one row of no ids for every ranking (as labels, it is zero rows)
        rows, _ = oracle_positive_indices([[]] if isinstance(items, (list, tuple)) and not len(items) else items)
    if len(rows) not in (1, n):
        raise Reject("filter row count")
    if len(rows) == 1:
        rows = rows * n
    return [set(r) for r in rows]


def _apply_filters(rows, valid, invalid):
    n = len(rows)
    v = _filter_rows(valid, n)
    x = _filter_rows(invalid, n)
    out = []
    for i, r in enumerate(rows):
        out.append([j for j in r if (v is None or j in v[i]) and (x is None or j not in x[i])])
    return out


def oracle_from_scores(x, valid=None, invalid=None, k=None):
    k = _check_k(k)
    rows, _ = _score_rows_of(x)
    n = len(rows)
    v = _filter_rows(valid, n)
    xx = _filter_rows(invalid, n)
    out = []
    for i, cands in enumerate(rows):
        c = [(s, j) for j, s in cands if math.isfinite(s)
             and (v is None or j in v[i]) and (xx is None or j not in xx[i])]
        c.sort(key=lambda t: (-t[0], t[1]))
        out.append([j for _, j in c][:k])
    return out


def oracle_from_ranked_indices(x, valid=None, invalid=None):
    if sp.issparse(x):
        raise Reject("sparse has no order")
    rows = _no_duplicates(oracle_id_rows(x, sparse_ok=False))
    return _apply_filters(rows, valid, invalid)


# -- known-bug predicates ------------------------------------------------------------------

def _is_empty_wide_sparse_matrix(x):
    return sp.issparse(x) and x.ndim == 2 and x.shape[0] == 0 and x.shape[1] > 2**31 - 1


def id_bug_tolerance(*inputs):
    """Known bugs that can make a constructor reject valid input."""
    def tolerate(exc):
        return None  # none open
    return tolerate


# =========================================================================================
# invariants of returned objects
# =========================================================================================

def check_labels(y, cls):
    assert type(y) is cls
    indptr, ind, val = y.indptr, y.indices, y.values
    for a in (indptr, ind, val):
        assert isinstance(a, np.ndarray) and a.ndim == 1 and not a.flags.writeable
    assert indptr.dtype == ind.dtype and indptr.dtype in (np.int32, np.int64)
    assert val.dtype == np.float64
    n = y.n_rows
    assert len(y) == n >= 0 and indptr.shape == (n + 1,)
    assert indptr[0] == 0 and indptr[-1] == ind.size == val.size
    assert np.all(np.diff(indptr) >= 0)
    if ind.size:
        assert ind.min() >= 0 and int(ind.max()) < y.n_items
        inner = np.ones(ind.size - 1, dtype=bool) if ind.size > 1 else np.zeros(0, dtype=bool)
        inner[(indptr[1:-1] - 1)[(indptr[1:-1] > 0) & (indptr[1:-1] < ind.size)]] = False
        assert np.all(np.diff(ind.astype(np.int64))[inner] > 0), "CSR indices not strictly increasing"
    assert np.all(val != 0), "explicit zero stored"
    assert np.isfinite(val).all(), "non-finite label stored"
    if cls is BinaryLabels:
        assert np.all(val == 1.0)
    else:
        assert np.all(val > 0)
    assert y == y
    csr = y.csr
    assert csr.shape == (n, y.n_items) and csr.has_sorted_indices
    lists = y.indices_to_list()
    assert len(lists) == n and all(r == sorted(set(r)) for r in lists)
    assert [len(r) for r in y.labels_to_list()] == [len(r) for r in lists]


def check_rankings(r):
    assert type(r) is Rankings
    ind, lens = r.indices, r.lengths
    assert not ind.flags.writeable and not lens.flags.writeable
    assert ind.ndim == 2 and ind.dtype in (np.int32, np.int64) and ind.flags.c_contiguous
    assert lens.dtype == np.int64 and lens.shape == (ind.shape[0],) == (len(r),) == (r.n_rows,)
    assert np.all(lens >= 0) and np.all(lens <= ind.shape[1])
    mask = np.arange(ind.shape[1]) < lens[:, None]
    assert np.all(ind[mask] >= 0) and np.all(ind[~mask] == -1)
    rows = r.to_list()
    assert all(len(set(row)) == len(row) for row in rows), "duplicate id in a ranking"
    assert r == r


def snapshot(x):
    """Byte-level snapshot of every array reachable from an input."""
    if isinstance(x, np.ndarray):
        return ("nd", type(x), x.dtype.str, x.shape, x.strides, x.flags.writeable,
                x.tobytes() if x.dtype.kind != "O" else repr(x.tolist()))
    if sp.issparse(x):
        parts = [type(x).__name__, x.shape, x.format]
        for attr in ("data", "indices", "indptr", "row", "col", "offsets"):
            if hasattr(x, attr) and isinstance(getattr(x, attr), np.ndarray):
                parts.append(snapshot(getattr(x, attr)))
        if x.format == "coo":
            parts.extend(snapshot(c) for c in getattr(x, "coords", ()))  # SciPy >= 1.13
        if x.format in ("lil",):
            parts.append(repr(x.rows.tolist()) + repr(x.data.tolist()))
        if x.format == "dok":
            parts.append(sorted(x.items(), key=repr))
        return tuple(parts)
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(snapshot(v) for v in x))
    return ("obj", type(x).__name__, repr(x))


def check_unmodified(before, *inputs):
    assert [snapshot(x) for x in inputs] == before, "an input was modified"


# =========================================================================================
# strategies
# =========================================================================================

INT_DTYPES = hnp.integer_dtypes(endianness="?") | hnp.unsigned_integer_dtypes(endianness="?")
FLOAT_DTYPES = hnp.floating_dtypes(endianness="?", sizes=(16, 32, 64, 128))
ANY_DTYPES = st.one_of(
    INT_DTYPES,
    FLOAT_DTYPES,
    hnp.complex_number_dtypes(endianness="?"),
    hnp.boolean_dtypes(),
    hnp.datetime64_dtypes(endianness="?"),
    hnp.timedelta64_dtypes(endianness="?"),
    hnp.byte_string_dtypes(max_len=3),
    hnp.unicode_string_dtypes(max_len=3),
    st.just(np.dtype(object)),
)
SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=5)
SHAPES_2D = hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=6)

BOUNDARY_IDS = [0, 1, 2**31 - 1, 2**31, 2**32, 2**53 + 1, 2**62, INT64_MAX - 1, INT64_MAX,
                2**63, 2**64 - 1, 2**64, -1, -(2**63)]

# anything that might appear where an item id is expected
ID_LIKE = st.one_of(
    st.integers(0, 12),
    st.sampled_from(BOUNDARY_IDS),
    st.integers(-(2**70), 2**70),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just(3.0),
    st.text(max_size=2),
    st.binary(max_size=2),
    st.complex_numbers(max_magnitude=10),
    st.tuples(st.integers(0, 3), st.integers(0, 3)).map(
        lambda t: np.dtype(["int8", "uint8", "int32", "uint32", "int64", "uint64", "int16", ">i8"][t[0] * 2 % 8 + t[1] % 2]).type(t[0] + t[1])),
)
# anything that might appear where a label or score is expected
VALUE_LIKE = st.one_of(
    st.integers(0, 1),
    st.integers(-3, 5),
    st.sampled_from([0.0, -0.0, 1.0, 0.5, 1e308, -1e308, 5e-324, float("nan"), float("inf"), float("-inf"),
                     2**63, 2**64 - 1, 2**64, -(2**63) - 1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.text(max_size=2),
    st.complex_numbers(max_magnitude=10),
    st.sampled_from([np.float32(0.1), np.float16(2.0), np.int8(-1), np.uint64(2**64 - 1), np.bool_(True),
                     np.longdouble(1), np.float64(np.nan)]),
)


@st.composite
def object_arrays(draw, elements):
    shape = draw(SHAPES)
    flat = draw(st.lists(elements, min_size=int(np.prod(shape)), max_size=int(np.prod(shape))))
    a = np.empty(len(flat), dtype=object)
    a[:] = flat if flat else []
    return a.reshape(shape)


@st.composite
def layout(draw, a):
    """The same values in an arbitrary memory layout (or an equivalent view)."""
    for op in draw(st.lists(st.sampled_from(
            ["asis", "fortran", "strided", "reversed", "transposed", "readonly", "swapped", "broadcast", "matrix"]),
            max_size=3)):
        if op == "fortran":
            a = np.asfortranarray(a)
        elif op == "strided" and a.ndim:
            big = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), dtype=a.dtype)
            big[..., ::2] = a
            a = big[..., ::2]
        elif op == "reversed" and a.ndim:
            a = a[::-1]
        elif op == "transposed":
            a = a.T
        elif op == "readonly":
            a = a.view()
            a.flags.writeable = False
        elif op == "swapped" and a.dtype.kind not in "O" and a.dtype.byteorder != "|":
            a = a.astype(a.dtype.newbyteorder())
        elif op == "broadcast" and a.ndim == 2 and a.shape[0]:
            a = np.broadcast_to(a[:1], a.shape)
        elif op == "matrix" and a.ndim == 2:
            a = np.asmatrix(a)
    return a


@st.composite
def arbitrary_arrays(draw):
    """An array of any dtype, 0-d to 3-d, in any layout."""
    dtype = draw(ANY_DTYPES)
    if dtype.kind == "O":
        a = draw(object_arrays(st.one_of(ID_LIKE, VALUE_LIKE)))
    elif dtype.kind in "iu" and draw(st.booleans()):
        info = np.iinfo(dtype)
        a = draw(hnp.arrays(dtype, SHAPES, elements=st.integers(max(info.min, -2), min(info.max, 12))))
    elif dtype.kind == "f" and draw(st.booleans()):
        a = draw(hnp.arrays(dtype, SHAPES, elements=st.sampled_from([0.0, 1.0, 2.0, 0.5, -1.0, np.nan, np.inf])))
    else:
        a = draw(hnp.arrays(dtype, SHAPES))
    return draw(layout(a))


@st.composite
def valid_id_arrays(draw):
    """1-D/2-D integer arrays of non-negative ids, usually without duplicates in a row."""
    dtype = draw(INT_DTYPES)
    hi = min(int(np.iinfo(dtype).max), draw(st.sampled_from([15, 200, INT64_MAX])))
    big = draw(st.sampled_from([0, hi]))
    a = draw(hnp.arrays(dtype, SHAPES_2D, elements=st.integers(max(0, big - 20), hi) | st.integers(0, min(hi, 15)),
                        unique=draw(st.booleans())))
    return draw(layout(a))


@st.composite
def ragged_ids(draw, valid_bias=True):
    """Lists of id rows: lists, tuples and arrays of any integer dtype, mixed element types."""
    def row():
        elems = st.integers(0, 40) if valid_bias else ID_LIKE
        return st.one_of(
            st.lists(elems, max_size=6, unique=valid_bias),
            st.lists(elems, max_size=6, unique=valid_bias).map(tuple),
            st.tuples(INT_DTYPES, st.lists(st.integers(0, 100), max_size=6, unique=True)).map(
                lambda t: np.array(t[1], dtype=np.int64).astype(t[0])),
            st.just(np.array([])),  # float64, empty
            st.lists(st.lists(st.integers(0, 3), max_size=2), max_size=2) if not valid_bias else st.nothing(),
        )
    array_row = st.one_of(
        st.tuples(INT_DTYPES, st.lists(st.integers(0, 100), max_size=6, unique=True)).map(
            lambda t: np.array(t[1], dtype=np.int64).astype(t[0])),
        st.just(np.array([])),  # float64, empty
    )
    form = draw(st.integers(0, 9))
    if form == 0:
        return draw(st.lists(ID_LIKE if not valid_bias else st.integers(0, 50), max_size=6, unique=valid_bias))
    if form <= 3:  # a list of arrays, the documented fast form
        return draw(st.lists(array_row, max_size=5))
    rows = draw(st.lists(row(), max_size=5))
    if not valid_bias and rows and draw(st.integers(0, 4)) == 0:
        rows[draw(st.integers(0, len(rows) - 1))] = draw(ID_LIKE)  # a scalar among rows
    return tuple(rows) if draw(st.integers(0, 5)) == 0 else rows


@st.composite
def ragged_values(draw):
    """Lists of label/score rows of mixed element types and lengths."""
    if draw(st.integers(0, 9)) == 0:
        return draw(st.lists(VALUE_LIKE, max_size=6))
    row = st.one_of(
        st.lists(st.integers(0, 1), max_size=6),
        st.lists(st.floats(-2, 5) | st.integers(0, 3), max_size=6),
        st.lists(VALUE_LIKE, max_size=6),
        hnp.arrays(st.one_of(INT_DTYPES, FLOAT_DTYPES, hnp.boolean_dtypes()), st.integers(0, 6),
                   elements=st.integers(0, 1) if draw(st.booleans()) else None),
        st.just(np.array([])),
    )
    return draw(st.lists(row, max_size=5))


SPARSE_FORMATS = ["csr", "csc", "coo", "lil", "dok", "bsr", "dia"]
SPARSE_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint64, np.float32, np.float64,
                 np.longdouble, np.bool_, np.complex128]


@st.composite
def sparse_inputs(draw, values="any"):
    """A scipy sparse matrix/array with explicit zeros, duplicates and unsorted indices."""
    n = draw(st.integers(0, 5))
    m = draw(st.sampled_from([0, 1, 3, 6, 2**31 + 3]))
    nnz = draw(st.integers(0, 12)) if n and m else 0
    rows = draw(st.lists(st.integers(0, n - 1), min_size=nnz, max_size=nnz)) if nnz else []
    cols = draw(st.lists(st.integers(0, m - 1) | st.integers(max(0, m - 2), m - 1), min_size=nnz, max_size=nnz)) if nnz else []
    if values == "binary":
        dtype = np.dtype(draw(st.sampled_from([np.float64, np.int8, np.bool_])))
        elems = st.integers(0, 1)
    elif values == "numeric":
        dtype = np.dtype(draw(st.sampled_from([np.float64, np.float32, np.int64, np.uint8])))
        elems = st.integers(0, 4)
    else:
        dtype = np.dtype(draw(st.sampled_from(SPARSE_DTYPES)))
        elems = None
    if dtype.kind == "f" and elems is None:
        # the extremes of the dtype itself (1e308 or 5e-324 are not float32 values, and
        # hypothesis refuses elements that change when stored)
        fi = np.finfo(dtype)
        elems = st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, float(fi.max), np.nan, np.inf, -np.inf,
                                           float(fi.smallest_subnormal)]),
                          st.floats(width=min(64, dtype.itemsize * 8)))
    data = draw(hnp.arrays(dtype, nnz, elements=elems))
    fmt = draw(st.sampled_from(SPARSE_FORMATS))
    kind = draw(st.sampled_from(["array", "matrix"]))
    if m > 1000 and fmt in ("csc", "lil", "dok", "bsr", "dia"):  # O(m) memory formats
        fmt = "coo"
    coo = sp.coo_array((data, (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64))), shape=(n, m))
    if fmt in ("csr", "csc"):
        # built directly so that duplicates and the drawn (unsorted) order survive
        major, minor = (coo.row, coo.col) if fmt == "csr" else (coo.col, coo.row)
        order = np.argsort(major, kind="stable")
        ptr = np.zeros((n if fmt == "csr" else m) + 1, dtype=np.int64)
        np.add.at(ptr, major + 1, 1)
        ptr = np.cumsum(ptr)
        ctor = getattr(sp, f"{fmt}_{kind}")
        x = ctor((coo.data[order], minor[order], ptr), shape=(n, m))
    else:
        x = getattr(sp, f"{fmt}_{kind}")(coo) if fmt == "coo" else getattr(sp, f"{fmt}_{kind}")(coo.asformat(fmt))
    return x


def any_input():
    """Arbitrary input, about half of it valid for the constructor it is given to."""
    return st.one_of(
        arbitrary_arrays(),
        valid_id_arrays(),
        ragged_ids(valid_bias=True),
        ragged_ids(valid_bias=False),
        ragged_values(),
        hnp.arrays(st.one_of(INT_DTYPES, FLOAT_DTYPES, hnp.boolean_dtypes()), SHAPES_2D,
                   elements=st.integers(0, 1)).flatmap(layout),
        sparse_inputs(),
        sparse_inputs(values="binary"),
        sparse_inputs(values="numeric"),
        st.sampled_from([None, 3, 2.5, "abc", b"12", {1: 2}, {1, 2}, range(3), object()]),
        hnp.arrays(np.float64, (2, 2)).map(lambda a: np.ma.masked_array(a, mask=[[0, 1], [0, 0]])),
    )


FILTERS = st.one_of(
    st.none(),
    st.lists(st.integers(0, 45), max_size=8, unique=True),
    st.lists(st.lists(st.integers(0, 45), max_size=8, unique=True), min_size=1, max_size=5),
    valid_id_arrays(),
    sparse_inputs(values="binary"),
    ragged_ids(valid_bias=False),
    st.sampled_from([BinaryLabels.from_positive_indices([[1, 3, 40]]),
                     BinaryLabels.from_matrix(np.ones((3, 4))),
                     NumericLabels.from_matrix([[1, 2]])]),  # NumericLabels: TypeError
)
K_VALUES = st.one_of(st.none(), st.integers(-2, 8), st.sampled_from([1, 2**31, MAX_K, MAX_K + 1, 2**63, 2**70, np.int64(3),
                                                                     np.uint8(2), np.uint64(2**64 - 1), True, 2.0, "3", 0]))


# =========================================================================================
# metrics
# =========================================================================================

def _metric_params(cls):
    """Strategy of constructor kwargs of a metric class (valid ones), from its registry
    entry: every option combination, with k drawn from small and huge cutoffs."""
    ks = st.integers(1, 8) | st.sampled_from([2**31, MAX_K])
    space = cls._param_space(cutoffs=(1,))
    base = st.sampled_from(space)
    if "k" not in space[0]:
        return base
    return base.flatmap(lambda p: st.just(p) if p["k"] is None else ks.map(lambda k: dict(p, k=k)))


_METRIC_PARAMS = {cls: _metric_params(cls) for cls in ALL_METRIC_CLASSES}


def some_metric(cls, k):
    """The first option combination of a metric class from its registry entry, cutoff k."""
    return cls(**cls._param_space(cutoffs=(k,))[0])


def metric_params(cls):
    return _METRIC_PARAMS[cls]


#: the registry's metrics that are never NaN (counts, trec_eval's always-defined measures,
#: the C/W/L family: 0 without gain)
NEVER_NAN = {c.__name__ for c in ALL_METRIC_CLASSES if c.info.undefined is None}


def _documented_nan(name, params, n_rel, length, n_judged=0):
    if name in NEVER_NAN:
        return False
    if name in ("SetP", "SetRelativeP", "SetAP") and length == 0:
        return True
    if name in ("FallOut", "AUROC", "GAUC", "LabelRankingLoss"):  # (NaN depends on the ranking or the
        return None  # catalogue: checked against the reference)
    if name == "Judged":
        return n_judged == 0 or length == 0
    if n_rel == 0:
        return True
    if name == "HitRate" and n_rel != 1:
        return True
    return name == "Precision" and params.get("truncated") and length == 0


def _ideal_dcg_overflows(labels, params):
    """Whether NDCG's ideal DCG of this label row is (about) beyond float64."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            idcg = ref.ideal_dcg(labels, params.get("k"), params["relevance_scaling"], params["log_base"])
    except OverflowError:
        return True
    return not math.isfinite(idcg) or idcg > 1e307


def metric_outcome(metric, y_true, y_pred):
    """Score, judging the result or the documented error; the scores or None."""
    out = run(metric.score, y_true, y_pred)
    if isinstance(metric, Metric) and metric.info.labels == "binary" and isinstance(y_true, NumericLabels):
        assert isinstance(out.exc, TypeError), out
        assert_clean_error(out.exc)
        return None
    if y_true.n_rows not in (1, y_pred.n_rows):
        assert isinstance(out.exc, ValueError), out
        assert str(y_true.n_rows) in str(out.exc) and str(y_pred.n_rows) in str(out.exc)
        return None
    if isinstance(metric, Metric) and needs_judged(metric) and y_true.judged is None:
        assert isinstance(out.exc, ValueError) and "no judgments" in str(out.exc), out
        return None
    if isinstance(metric, ERR) and isinstance(y_true, NumericLabels) and y_true.values.size \
            and y_true.values.max() > metric.max_grade:
        assert isinstance(out.exc, ValueError) and "exceeds max_grade" in str(out.exc), out
        return None
    if out.exc is not None:
        if type(metric).__name__ == "NormalizedGain" and isinstance(out.exc, ValueError) \
                and "overflows" in str(out.exc):  # documented: a sum of the grades overflows
            assert any(not math.isfinite(sum(v)) for v in y_true.labels_to_list()), out.exc
            return None
        if isinstance(metric, NDCG) and isinstance(out.exc, ValueError) and "overflow" in str(out.exc):
            # documented: NDCG is undefined when the ideal DCG overflows float64
            params = metric._params()
            rows = [dict(zip(i, v)) for i, v in zip(y_true.indices_to_list(), y_true.labels_to_list())]
            assert any(_ideal_dcg_overflows(r, params) for r in rows), out.exc
            return None
        raise AssertionError(f"{metric!r}.score failed: {out.exc!r}") from out.exc
    check_scores(metric, y_true, y_pred, out.value)
    return out.value


def check_scores(metric, y_true, y_pred, out):
    """Compare with tests/reference.py and check the metric's range."""
    name = type(metric).__name__
    params = metric._params()
    assert isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (y_pred.n_rows,)
    assert not np.any((out == 0) & np.signbit(out)), f"{name} returned -0.0"
    label_rows = [dict(zip(i, v)) for i, v in zip(y_true.indices_to_list(), y_true.labels_to_list())]
    judged_rows = [set(r) for r in y_true.judged.indices_to_list()] if y_true.judged is not None else None
    rankings = y_pred.to_list()
    if len(label_rows) == 1:
        label_rows = label_rows * len(rankings)
        judged_rows = None if judged_rows is None else judged_rows * len(rankings)
    ref_fn = ref.REFERENCE[name]
    takes_judged = "judged" in inspect.signature(ref_fn).parameters
    takes_n_items = "n_items" in inspect.signature(ref_fn).parameters
    for i, (labels, ranking) in enumerate(zip(label_rows, rankings)):
        v = float(out[i])
        # (RNDCG: relevant from its relevance_level on)
        n_rel = sum(1 for x in labels.values() if x > 0 and x >= params.get("relevance_level", 0))
        n_judged = 0 if judged_rows is None else len(judged_rows[i])
        extra = {"judged": None if judged_rows is None else judged_rows[i]} if takes_judged else {}
        if takes_n_items:
            extra["n_items"] = y_true.n_items
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected = float(ref_fn(labels, ranking, **extra, **params))
        except (OverflowError, ZeroDivisionError):
            expected = None
        documented = _documented_nan(name, params, n_rel, len(ranking), n_judged)
        if documented is None:  # NaN as the reference says (it depends on the ranking)
            documented = expected is not None and math.isnan(expected)
        if math.isnan(v):
            assert documented, f"{name}{params} row {i}: undocumented NaN"
            continue
        assert not documented, f"{name} row {i}: {v}, expected NaN"
        if name in BOUNDED:
            assert 0.0 <= v <= 1.0, f"{name}{params} row {i} = {v!r} outside [0, 1]"
        elif name in RANKS:
            assert v >= 1.0, f"{name} row {i} = {v!r} < 1"
        elif name == "Utility":  # relevant minus non-relevant retrieved
            assert abs(v) <= len(ranking), f"{name} row {i} = {v!r} beyond the ranking's length"
        else:
            assert v >= 0.0, f"{name} row {i} = {v!r} < 0"
        if expected is None or (name == "DCG" and (math.isinf(v) or math.isinf(expected))):
            continue  # DCG beyond float64 is +inf
        if name == "NDCG" and _ideal_dcg_overflows(labels, params):
            continue  # at the overflow boundary the reference and the kernel may round differently
        assert v == pytest.approx(expected, rel=1e-9, abs=1e-12, nan_ok=True), (name, params, i, labels, ranking)


def score_all_metrics(y_true, y_pred, data):
    """Every metric with drawn parameters on (y_true, y_pred): right answer or clean error."""
    for cls in ALL_METRIC_CLASSES:
        params = data.draw(metric_params(cls), label=cls.__name__)
        metric = cls(**params)
        scores = metric_outcome(metric, y_true, y_pred)
        if scores is None:
            continue
        nan_handling = data.draw(st.sampled_from(["propagate", "drop", "zerofill"]))
        mean = run(metric.mean, y_true, y_pred, nan_handling=nan_handling)
        if mean.exc is not None:
            raise AssertionError(f"{metric!r}.mean failed: {mean.exc!r}") from mean.exc
        s = scores
        s = {"propagate": s, "drop": s[~np.isnan(s)], "zerofill": np.nan_to_num(s, nan=0.0, posinf=np.inf)}[nan_handling]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if metric.info.aggregate == "weighted":  # GAUC: weighted by each query's relevant items
                n_rel = np.diff(y_true.indptr).astype(float)
                w = np.broadcast_to(n_rel, scores.shape) if n_rel.size == 1 else n_rel
                w = w[~np.isnan(scores)] if nan_handling == "drop" else w
                want = ref.weighted_mean(s, w)
            elif metric.info.aggregate == "geometric":
                want = ref.geometric_mean(s) if s.size and not np.isnan(s).any() else float("nan")
            else:
                want = float(np.mean(s)) if s.size else float("nan")
        assert isinstance(mean.value, float)
        assert mean.value == pytest.approx(want, nan_ok=True, rel=1e-9, abs=1e-12)


def score_everything(y_true, ranking_lists):
    """Score every metric of a freshly built label object against a few rankings."""
    for rows in ranking_lists:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", InvalidValuesWarning)
            y_pred = Rankings.from_ranked_indices(rows) if rows else Rankings.from_ranked_indices(np.zeros((0, 0), int))
        for cls in ALL_METRIC_CLASSES:
            metric_outcome(some_metric(cls, 3), y_true, y_pred)


def score_everything_rankings(y_pred, ids):
    """Score every metric of a freshly built Rankings against labels made of its own ids."""
    ids = [i for i in ids if i <= MAX_ID] or [0]
    for label_rows in ([ids[: 1 + len(ids) // 2]], [[i] for i in ids[: y_pred.n_rows]] or [[]]):
        y_true = BinaryLabels.from_positive_indices(label_rows)
        if y_true.n_rows not in (1, y_pred.n_rows):
            continue
        for cls in ALL_METRIC_CLASSES:
            metric_outcome(some_metric(cls, 2), y_true, y_pred)


POOL_HI = st.sampled_from([6, 40, 2**31 + 10, 2**62, MAX_ID])


@st.composite
def scoring_inputs(draw):
    """(y_true, y_pred) built through every constructor, with shared item ids."""
    hi = draw(POOL_HI)
    pool = draw(st.lists(st.integers(0, hi) | st.integers(max(0, hi - 3), hi), min_size=1, max_size=10, unique=True))
    n = draw(st.integers(0, 6))
    n_lab = draw(st.sampled_from([1, 1, n, n, n + 1]))
    ranking_rows = [draw(st.permutations(pool).flatmap(lambda p: st.integers(0, len(p)).map(lambda j: p[:j])))
                    for _ in range(n)]
    label_ids = [sorted(draw(st.sets(st.sampled_from(pool), max_size=len(pool)))) for _ in range(n_lab)]
    numeric = draw(st.booleans())
    values = st.one_of(st.integers(1, 4).map(float), st.floats(min_value=1e-3, max_value=1e3),
                       st.sampled_from([5e-324, 1e-300, 1e300, 1.7e308, 0.1, 1e-17]))
    n_items = max(pool) + 1
    coo_rows = [i for i, r in enumerate(label_ids) for _ in r]
    coo_cols = [j for r in label_ids for j in r]
    if numeric:
        vals = [draw(values) for _ in coo_cols]
        m = sp.csr_array((np.array(vals, dtype=np.float64), (np.array(coo_rows, dtype=np.int64), np.array(coo_cols, dtype=np.int64))),
                         shape=(n_lab, n_items))
        out = run(NumericLabels.from_matrix, m)
        check_warnings(out, m.data)
        y_true = out.value
    else:
        how = draw(st.sampled_from(["indices", "matrix", "sparse-pattern"]))
        if how == "indices":
            y_true = BinaryLabels.from_positive_indices(label_ids)
        else:
            m = sp.coo_array((np.ones(len(coo_cols)), (np.array(coo_rows, dtype=np.int64), np.array(coo_cols, dtype=np.int64))),
                             shape=(n_lab, n_items))
            y_true = (BinaryLabels.from_matrix if how == "matrix" else BinaryLabels.from_positive_indices)(m)
    how = draw(st.sampled_from(["ranked", "padded", "scores"]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InvalidValuesWarning)
        if how == "padded" and n and len({len(r) for r in ranking_rows}) == 1:
            y_pred = Rankings.from_ranked_indices(np.array(ranking_rows, dtype=np.int64).reshape(n, -1))
        elif how == "scores":
            scores = sp.csr_array(
                (np.concatenate([np.arange(len(r), 0, -1, dtype=np.float64) for r in ranking_rows]) if n else np.zeros(0),
                 (np.repeat(np.arange(n), [len(r) for r in ranking_rows]).astype(np.int64),
                  np.array([j for r in ranking_rows for j in r], dtype=np.int64))),
                shape=(n, n_items))
            y_pred = Rankings.from_scores(scores)
        else:
            y_pred = Rankings.from_ranked_indices(ranking_rows if n else np.zeros((0, 0), dtype=int))
    assert y_pred.to_list() == ranking_rows
    return y_true, y_pred
