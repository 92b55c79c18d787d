"""Tests for ``rankereval.data.Rankings``.

``Rankings.from_ranked_indices`` and ``Rankings.from_scores``: every accepted input
form, the padded storage, valid/invalid item filters, score ordering and ties,
NaN/Inf handling, top-k, empty rows, every documented error, input immutability,
pickling and hypothesis properties (round trips and a slow top-k reference).
"""
import copy
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rankereval
from rankereval.data import InvalidValuesWarning, Rankings
from helpers import quiet

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
SCORE_SPARSE_CTORS = [
    pytest.param(getattr(sp, f"{fmt}_{kind}"), id=f"{fmt}_{kind}")
    for fmt in ("coo", "csr", "csc", "lil", "dok")
    for kind in ("matrix", "array")
]
PATTERN_SPARSE_CTORS = [
    pytest.param(getattr(sp, f"{fmt}_{kind}"), id=f"{fmt}_{kind}")
    for fmt in ("coo", "csr", "csc")
    for kind in ("matrix", "array")
]

MSG_NEGATIVE = r"(?i)negative"
MSG_DUPLICATE = r"(?i)duplicate"
MSG_INTEGER = r"(?i)integ"
MSG_NDIM = r"(?i)dim|2-?d|3-?d"
MSG_MASKED = r"(?i)mask"

UNSUPPORTED_TYPES = [
    pytest.param({0: [1, 2]}, id="dict"),
    pytest.param("abc", id="str"),
    pytest.param({1, 2}, id="set"),
    pytest.param(frozenset({1, 2}), id="frozenset"),
]


# --------------------------------------------------------------------------- helpers
def no_warning(fn, *args, **kwargs):
    """Call fn and assert that it emits no InvalidValuesWarning."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    bad = [w for w in rec if issubclass(w.category, InvalidValuesWarning)]
    assert not bad, [str(w.message) for w in bad]
    return out


def n_invalid_warnings(fn, *args, **kwargs):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    return out, sum(issubclass(w.category, InvalidValuesWarning) for w in rec)


def assert_rankings_invariants(r):
    lst = r.to_list()
    assert isinstance(lst, list)
    n = len(lst)
    assert len(r) == r.n_rows == n
    lengths = [len(row) for row in lst]
    assert isinstance(r.lengths, np.ndarray)
    assert r.lengths.dtype == np.int64
    np.testing.assert_array_equal(r.lengths, lengths)
    assert isinstance(r.indices, np.ndarray)
    assert r.indices.dtype.kind == "i"
    assert r.indices.shape == (n, max(lengths, default=0))
    padded = np.full(r.indices.shape, -1, dtype=np.int64)
    for i, row in enumerate(lst):
        assert isinstance(row, list)
        assert all(isinstance(v, int) for v in row)
        assert all(v >= 0 for v in row)
        assert len(set(row)) == len(row)
        padded[i, : len(row)] = row
    np.testing.assert_array_equal(r.indices, padded)
    assert not r.indices.flags.writeable
    assert not r.lengths.flags.writeable


def check(r, expected):
    assert_rankings_invariants(r)
    assert r.to_list() == expected


def slow_topk(scores, k=None):
    """Reference: finite entries only, descending score, ties -> lower item id."""
    cand = [i for i in range(len(scores)) if np.isfinite(scores[i])]
    order = sorted(cand, key=lambda i: (-scores[i], i))
    return order if k is None else order[:k]


def test_reexported_from_package():
    assert rankereval.Rankings is Rankings
    assert rankereval.InvalidValuesWarning is InvalidValuesWarning
    assert issubclass(InvalidValuesWarning, UserWarning)


# --------------------------------------------------------------------------- from_ranked_indices
RANKS = [[3, 1, 2], [0], [7, 5]]
RECT = [[3, 1, 2], [0, 5, 4]]


def test_from_ranked_indices_ragged_list():
    r = no_warning(Rankings.from_ranked_indices, RANKS)
    check(r, RANKS)
    np.testing.assert_array_equal(r.indices, [[3, 1, 2], [0, -1, -1], [7, 5, -1]])
    np.testing.assert_array_equal(r.lengths, [3, 1, 2])
    assert len(r) == r.n_rows == 3


def test_from_ranked_indices_spec_example():
    check(Rankings.from_ranked_indices([[3, 2, 1], [1, 2]]), [[3, 2, 1], [1, 2]])


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.intp])
def test_from_ranked_indices_ndarray_dtypes(dtype):
    r = no_warning(Rankings.from_ranked_indices, np.array(RECT, dtype=dtype))
    check(r, RECT)
    assert r == Rankings.from_ranked_indices(RECT)


def test_from_ranked_indices_list_of_arrays():
    rows = [np.array([3, 1, 2], dtype=np.int32), np.array([0], dtype=np.uint8),
            np.array([7, 5], dtype=np.int64)]
    r = Rankings.from_ranked_indices(rows)
    check(r, RANKS)
    assert r == Rankings.from_ranked_indices(RANKS)


def test_from_ranked_indices_numpy_integer_scalars():
    check(Rankings.from_ranked_indices([[np.int64(3), np.uint16(1)], [np.int8(2)]]), [[3, 1], [2]])


def _base_matrix():
    return np.arange(24, dtype=np.int64).reshape(4, 6)[:, [5, 0, 3, 1, 4, 2]] + 0


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(lambda a: a[:, ::2], id="column-stride"),
        pytest.param(lambda a: a[::2], id="row-stride"),
        pytest.param(lambda a: a.T, id="transpose"),
        pytest.param(lambda a: a[:, ::-1], id="reversed"),
        pytest.param(np.asfortranarray, id="fortran"),
        pytest.param(lambda a: a.astype(np.int32)[1:, 1:5], id="int32-slice"),
        pytest.param(lambda a: np.broadcast_to(a[0], (3, 6)), id="broadcast"),
    ],
)
def test_from_ranked_indices_non_contiguous(transform):
    arr = transform(_base_matrix())
    expected = np.array(arr).tolist()
    check(Rankings.from_ranked_indices(arr), expected)


def test_from_ranked_indices_read_only_array():
    arr = np.array(RECT, dtype=np.int64)
    arr.flags.writeable = False
    check(Rankings.from_ranked_indices(arr), RECT)
    arr32 = np.array(RECT, dtype=np.int32)[:, ::2]
    arr32.flags.writeable = False
    check(Rankings.from_ranked_indices(arr32), [[3, 2], [0, 4]])


def test_from_ranked_indices_large_ids():
    big = [[2**40, 2**31, 3], [2**33 + 1], [2**62]]
    r = Rankings.from_ranked_indices(big)
    check(r, big)
    assert r.indices.dtype == np.int64
    arr = np.array([[2**40, 2**31], [0, 2**32]], dtype=np.int64)
    check(Rankings.from_ranked_indices(arr), arr.tolist())
    check(Rankings.from_ranked_indices(arr.astype(np.uint64)), arr.tolist())


# --------------------------------------------------------------------------- empty rankings
def test_empty_rows_allowed_and_warn():
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_ranked_indices([[1, 2], []])
    check(r, [[1, 2], []])
    np.testing.assert_array_equal(r.indices, [[1, 2], [-1, -1]])
    np.testing.assert_array_equal(r.lengths, [2, 0])


def test_empty_rows_warn_once():
    r, n = n_invalid_warnings(Rankings.from_ranked_indices, [[], [4], [], []])
    assert n == 1
    check(r, [[], [4], [], []])


def test_all_rows_empty():
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_ranked_indices([[], []])
    check(r, [[], []])
    assert r.indices.shape == (2, 0)
    with pytest.warns(InvalidValuesWarning):
        r2 = Rankings.from_ranked_indices(np.empty((2, 0), dtype=np.int64))
    check(r2, [[], []])
    assert r2 == r


def test_invalid_values_warning_is_user_warning():
    with pytest.warns(UserWarning):
        Rankings.from_ranked_indices([[]])


# --------------------------------------------------------------------------- valid / invalid items
R = [[5, 3, 1, 4], [2, 0, 4]]


def _pattern(rows, width=6):
    dense = np.zeros((len(rows), width))
    for i, row in enumerate(rows):
        dense[i, row] = 1.0
    return dense


@pytest.mark.parametrize(
    "valid",
    [
        pytest.param([[1, 3, 4], [4, 2]], id="list"),
        pytest.param([np.array([1, 3, 4]), np.array([4, 2])], id="list-of-arrays"),
    ]
    + [
        pytest.param(ctor.values[0](_pattern([[1, 3, 4], [4, 2]])), id=ctor.id)
        for ctor in PATTERN_SPARSE_CTORS
    ],
)
def test_valid_items_per_row(valid):
    r = no_warning(Rankings.from_ranked_indices, R, valid_items=valid)
    check(r, [[3, 1, 4], [2, 4]])


@pytest.mark.parametrize(
    "valid",
    [
        pytest.param([1, 3, 4], id="flat"),
        pytest.param([[1, 3, 4]], id="one-row"),
        pytest.param(np.array([[4, 1, 3]]), id="ndarray"),
    ]
    + [
        pytest.param(ctor.values[0](_pattern([[1, 3, 4]])), id=ctor.id)
        for ctor in PATTERN_SPARSE_CTORS
    ],
)
def test_valid_items_single_row_for_all(valid):
    r = Rankings.from_ranked_indices(R, valid_items=valid)
    check(r, [[3, 1, 4], [4]])


def test_valid_items_2d_ndarray_per_row():
    r = Rankings.from_ranked_indices(R, valid_items=np.array([[1, 3], [0, 4]]))
    check(r, [[3, 1], [0, 4]])


@pytest.mark.parametrize(
    "invalid",
    [
        pytest.param([[5], [0, 2]], id="list"),
        pytest.param(np.array([[5, 0], [0, 2]]), id="ndarray"),
    ]
    + [
        pytest.param(ctor.values[0](_pattern([[5], [0, 2]])), id=ctor.id)
        for ctor in PATTERN_SPARSE_CTORS
    ],
)
def test_invalid_items_per_row(invalid):
    r = Rankings.from_ranked_indices(R, invalid_items=invalid)
    check(r, [[3, 1, 4], [4]])


@pytest.mark.parametrize(
    "invalid",
    [
        pytest.param([3], id="flat"),
        pytest.param([[3]], id="one-row"),
    ]
    + [
        pytest.param(ctor.values[0](_pattern([[3]])), id=ctor.id)
        for ctor in PATTERN_SPARSE_CTORS
    ],
)
def test_invalid_items_single_row_for_all(invalid):
    r = Rankings.from_ranked_indices(R, invalid_items=invalid)
    check(r, [[5, 1, 4], [2, 0, 4]])


def test_valid_and_invalid_together():
    r = Rankings.from_ranked_indices(R, valid_items=[1, 3, 4, 5], invalid_items=[3])
    check(r, [[5, 1, 4], [4]])
    r = Rankings.from_ranked_indices(R, valid_items=[[1, 3, 4, 5], [0, 2, 4]],
                                     invalid_items=sp.csr_array(_pattern([[3]])))
    check(r, [[5, 1, 4], [2, 0, 4]])
    r = Rankings.from_ranked_indices(R, valid_items=sp.coo_matrix(_pattern([[1, 3, 4, 5], [0, 2]])),
                                     invalid_items=[[4], [0]])
    check(r, [[5, 3, 1], [2]])


def test_filters_with_items_outside_ranking_or_matrix():
    # listed items that do not occur in the ranking change nothing
    check(Rankings.from_ranked_indices(R, valid_items=[0, 1, 2, 3, 4, 5, 100]), R)
    check(Rankings.from_ranked_indices(R, invalid_items=[[100], [99]]), R)
    # a sparse filter narrower than the largest ranked id: ids beyond its width are not listed
    narrow = sp.csr_array(np.array([[1.0, 1.0, 1.0, 1.0]]))  # items 0..3
    check(Rankings.from_ranked_indices(R, valid_items=narrow), [[3, 1], [2, 0]])
    check(Rankings.from_ranked_indices(R, invalid_items=narrow), [[5, 4], [4]])
    # large ids
    big = [[2**40, 2**31, 3]]
    check(Rankings.from_ranked_indices(big, invalid_items=[2**31]), [[2**40, 3]])
    check(Rankings.from_ranked_indices(big, valid_items=[[2**31, 3, 2**50]]), [[2**31, 3]])


def test_filter_producing_empty_row_warns():
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_ranked_indices(R, valid_items=[[1], [7]])
    check(r, [[1], []])
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_ranked_indices(R, invalid_items=[[5, 3, 1, 4], []])
    check(r, [[], [2, 0, 4]])


def test_filter_row_count_mismatch():
    with pytest.raises(ValueError):
        Rankings.from_ranked_indices(R, valid_items=[[1], [2], [3]])
    with pytest.raises(ValueError):
        Rankings.from_ranked_indices(R, invalid_items=sp.csr_array(_pattern([[1], [2], [3]])))


def test_filter_bad_content():
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        Rankings.from_ranked_indices(R, valid_items=[[1, -2], [3]])
    with pytest.raises(ValueError, match=MSG_DUPLICATE):
        Rankings.from_ranked_indices(R, invalid_items=[[1, 1], [3]])
    with pytest.raises(TypeError):
        Rankings.from_ranked_indices(R, valid_items={1: 2})


# --------------------------------------------------------------------------- from_scores
SC = [[1, 5, 3, 2], [4, -1, 3, 2]]
SC_RANK = [[1, 2, 3, 0], [0, 2, 3, 1]]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int16, np.int32, np.int64])
def test_from_scores_dense_dtypes(dtype):
    r = no_warning(Rankings.from_scores, np.array(SC, dtype=dtype))
    check(r, SC_RANK)


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_from_scores_dense_unsigned(dtype):
    check(Rankings.from_scores(np.array([[1, 5, 3, 0], [4, 200, 3, 2]], dtype=dtype)),
          [[1, 2, 0, 3], [1, 0, 2, 3]])


def test_from_scores_dense_list_and_float_scores():
    check(Rankings.from_scores([[0.1, 0.5, 0.3, 0.2], [4.0, 1.0, 3.0, 2.0]]),
          [[1, 2, 3, 0], [0, 2, 3, 1]])
    check(Rankings.from_scores(np.array([[1e-300, -1e300, 1e300, 0.0]])), [[2, 0, 3, 1]])


def test_from_scores_ragged_lists():
    check(Rankings.from_scores([[0.1, 0.5, 0.3], [2.0, 1.0]]), [[1, 2, 0], [0, 1]])
    check(Rankings.from_scores([[1], [3, 1, 2], [0, 0]]), [[0], [0, 2, 1], [0, 1]])


@pytest.mark.parametrize(
    "transform",
    [
        pytest.param(lambda a: a[:, ::2], id="column-stride"),
        pytest.param(lambda a: a.T, id="transpose"),
        pytest.param(lambda a: a[:, ::-1], id="reversed"),
        pytest.param(np.asfortranarray, id="fortran"),
        pytest.param(lambda a: np.broadcast_to(a[0], (3, a.shape[1])), id="broadcast"),
    ],
)
def test_from_scores_non_contiguous(transform):
    rng = np.random.default_rng(0)
    base = rng.permutation(24).reshape(4, 6).astype(np.float64)
    arr = transform(base)
    expected = [slow_topk(row) for row in np.array(arr)]
    check(Rankings.from_scores(arr), expected)


def test_from_scores_read_only():
    arr = np.array(SC, dtype=np.float64)
    arr.flags.writeable = False
    check(Rankings.from_scores(arr), SC_RANK)


@pytest.mark.parametrize("ctor", SCORE_SPARSE_CTORS)
def test_from_scores_sparse_stored_entries_are_candidates(ctor):
    dense = np.array([[0.0, 0.5, 0.0, 0.2, 0.0], [0.1, 0.0, 0.0, 0.0, 0.0], [0.0, -1.0, 0.0, -2.0, 0.0]])
    # the unstored items 0, 2, 4 of row 2 have no score although 0 > -1 > -2
    r = no_warning(Rankings.from_scores, ctor(dense))
    check(r, [[1, 3], [0], [1, 3]])


def test_from_scores_sparse_explicit_zero_is_a_candidate():
    # stored entries are the candidates, including an explicitly stored 0.0
    mat = sp.csr_array((np.array([0.0, -1.0, 2.0]), np.array([2, 1, 4]), np.array([0, 3])), shape=(1, 6))
    check(Rankings.from_scores(mat), [[4, 2, 1]])


def test_from_scores_sparse_empty_row_warns():
    mat = sp.csr_array(np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores(mat)
    check(r, [[1], []])


def test_from_scores_sparse_unsorted_indices():
    mat = sp.csr_array((np.array([1.0, 3.0, 2.0, 5.0]), np.array([4, 0, 2, 1]), np.array([0, 3, 4])),
                       shape=(2, 5))
    check(Rankings.from_scores(mat), [[0, 2, 4], [1]])


def test_from_scores_sparse_large_ids():
    rows = np.array([0, 0, 0, 1])
    cols = np.array([2**40, 2**31, 3, 2**33], dtype=np.int64)
    data = np.array([1.0, 3.0, 2.0, 1.0])
    for ctor in (sp.coo_array, sp.csr_array, sp.csr_matrix):
        mat = ctor(sp.coo_array((data, (rows, cols)), shape=(2, 2**40 + 1)))
        r = Rankings.from_scores(mat)
        check(r, [[2**31, 3, 2**40], [2**33]])
        assert r.indices.dtype == np.int64


# ties
def test_from_scores_ties_lower_id_first():
    check(Rankings.from_scores(np.array([[1, 3, 3, 1, 2]])), [[1, 2, 4, 0, 3]])
    check(Rankings.from_scores([[2.0, 2.0, 2.0], [1.0]]), [[0, 1, 2], [0]])
    check(Rankings.from_scores(np.zeros((2, 4))), [[0, 1, 2, 3], [0, 1, 2, 3]])
    mat = sp.csr_array((np.array([7.0, 7.0, 7.0, 9.0]), np.array([4, 1, 2, 0]), np.array([0, 4])), shape=(1, 5))
    check(Rankings.from_scores(mat), [[0, 1, 2, 4]])


def test_from_scores_signed_zero_is_a_tie():
    check(Rankings.from_scores(np.array([[0.0, -0.0, 1.0, -0.0]])), [[2, 0, 1, 3]])
    check(Rankings.from_scores(np.array([[-0.0, 0.0]])), [[0, 1]])


# NaN / Inf
def test_from_scores_non_finite_dropped_with_warning():
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores(np.array([[1, np.nan, 3, np.inf, -np.inf, 2]]))
    check(r, [[2, 5, 0]])
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores([[np.nan, 1.0], [2.0, float("inf"), 1.0]])
    check(r, [[1], [0, 2]])
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores(np.array([[np.nan, 1.0, np.inf]], dtype=np.float32))
    check(r, [[1]])


def test_from_scores_non_finite_sparse():
    mat = sp.csr_array((np.array([np.nan, 2.0, -np.inf]), np.array([0, 3, 1]), np.array([0, 3])), shape=(1, 4))
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores(mat)
    check(r, [[3]])


def test_from_scores_all_non_finite_row():
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores(np.array([[np.nan, np.nan], [1.0, 2.0]]))
    check(r, [[], [1, 0]])


def test_from_scores_finite_no_warning():
    no_warning(Rankings.from_scores, np.array([[1.0, -2.0, 3.0]]))
    no_warning(Rankings.from_scores, [[1.0], [2.0, 5.0]])


# k
def test_from_scores_k():
    arr = np.array([[1, 5, 3, 2], [4, -1, 3, 2]], dtype=np.float64)
    check(Rankings.from_scores(arr, k=2), [[1, 2], [0, 2]])
    check(Rankings.from_scores(arr, k=1), [[1], [0]])
    check(Rankings.from_scores(arr, k=4), SC_RANK)
    check(Rankings.from_scores(arr, k=100), SC_RANK)
    check(Rankings.from_scores(arr, k=None), SC_RANK)
    check(Rankings.from_scores(arr, k=np.int64(3)), [[1, 2, 3], [0, 2, 3]])
    check(Rankings.from_scores([[0.5, 0.1, 0.9], [0.2]], k=2), [[2, 0], [0]])
    assert Rankings.from_scores(arr, k=2).indices.shape == (2, 2)


def test_from_scores_k_with_ties_and_sparse():
    check(Rankings.from_scores(np.array([[1, 3, 3, 1, 3]]), k=2), [[1, 2]])
    mat = sp.csr_array(np.array([[0.0, 2.0, 0.0, 2.0, 1.0], [0.0, 0.0, 0.0, 0.0, 3.0]]))
    check(Rankings.from_scores(mat, k=2), [[1, 3], [4]])


def test_from_scores_k_after_dropping_non_finite():
    with pytest.warns(InvalidValuesWarning):
        r = Rankings.from_scores(np.array([[np.nan, 1.0, np.inf, 0.5, 0.2]]), k=2)
    check(r, [[1, 3]])


def test_from_scores_k_against_slow_reference():
    rng = np.random.default_rng(1234)
    scores = rng.integers(-3, 4, size=(30, 17)).astype(np.float64)  # many ties
    scores[rng.random(scores.shape) < 0.05] = np.nan
    for k in (1, 2, 5, 17, 40, None):
        with pytest.warns(InvalidValuesWarning):
            r = Rankings.from_scores(scores, k=k)
        expected = [slow_topk(row, k) for row in scores]
        check(r, expected)


@pytest.mark.parametrize("bad_k", [0, -1, 2.5, True, False])
def test_from_scores_k_invalid(bad_k):
    with pytest.raises(ValueError):
        Rankings.from_scores(np.array([[1.0, 2.0]]), k=bad_k)


@pytest.mark.parametrize("bad_k", ["3", [2]])
def test_from_scores_k_wrong_type(bad_k):
    with pytest.raises((TypeError, ValueError)):
        Rankings.from_scores(np.array([[1.0, 2.0]]), k=bad_k)


# valid / invalid with scores
SC2 = np.array([[5.0, 4.0, 3.0, 2.0, 1.0], [1.0, 2.0, 3.0, 4.0, 5.0]])


def test_from_scores_valid_items():
    check(Rankings.from_scores(SC2, valid_items=[[0, 2, 4], [0, 1]]), [[0, 2, 4], [1, 0]])
    check(Rankings.from_scores(SC2, valid_items=[4, 1]), [[1, 4], [4, 1]])
    check(Rankings.from_scores(SC2, valid_items=sp.csr_array(_pattern([[4, 1]], width=5))),
          [[1, 4], [4, 1]])
    check(Rankings.from_scores(SC2, valid_items=sp.coo_matrix(_pattern([[0, 2, 4], [0, 1]], width=5))),
          [[0, 2, 4], [1, 0]])


def test_from_scores_invalid_items():
    check(Rankings.from_scores(SC2, invalid_items=[0]), [[1, 2, 3, 4], [4, 3, 2, 1]])
    check(Rankings.from_scores(SC2, invalid_items=[[0, 1], [4]]), [[2, 3, 4], [3, 2, 1, 0]])
    check(Rankings.from_scores(SC2, invalid_items=sp.csc_array(_pattern([[0, 1], [4]], width=5))),
          [[2, 3, 4], [3, 2, 1, 0]])


def test_from_scores_valid_and_invalid_and_k():
    r = Rankings.from_scores(SC2, valid_items=[0, 1, 2, 3], invalid_items=[[1], [3]], k=2)
    check(r, [[0, 2], [2, 1]])
    # k is applied after filtering
    check(Rankings.from_scores(SC2, invalid_items=[0], k=2), [[1, 2], [4, 3]])
    check(Rankings.from_scores(SC2, valid_items=[[3, 4], [0]], k=1), [[3], [0]])


def test_from_scores_valid_items_beyond_columns_ignored():
    check(Rankings.from_scores(SC2, valid_items=[1, 3, 50]), [[1, 3], [3, 1]])


def test_from_scores_sparse_with_filters():
    mat = sp.csr_array(np.array([[0.0, 2.0, 0.0, 3.0, 1.0], [4.0, 0.0, 0.0, 0.0, 3.0]]))
    check(Rankings.from_scores(mat, valid_items=[1, 2, 4]), [[1, 4], [4]])
    check(Rankings.from_scores(mat, invalid_items=[[3], [0]]), [[1, 4], [4]])


def test_from_scores_filter_row_count_mismatch():
    with pytest.raises(ValueError):
        Rankings.from_scores(SC2, valid_items=[[0], [1], [2]])


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([[1, -1]], id="list"),
        pytest.param([[0], [-3, 2]], id="second-row"),
        pytest.param([np.array([2, -1])], id="list-of-arrays"),
        pytest.param(np.array([[0, -5]]), id="ndarray"),
        pytest.param(np.array([[3, -2]], dtype=np.int8), id="int8"),
    ],
)
def test_ranked_indices_negative_ids(bad):
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        Rankings.from_ranked_indices(bad)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([[1.5]], id="float"),
        pytest.param([[1, 2.5]], id="mixed-float"),
        pytest.param([["a"]], id="str"),
        pytest.param([[1, "b"]], id="mixed-str"),
        pytest.param([[None]], id="None"),
        pytest.param([[1, None]], id="mixed-None"),
        pytest.param(np.array([[1.5, 2.0]]), id="float-ndarray"),
        pytest.param([np.array([0.5])], id="float-array-row"),
    ],
)
def test_ranked_indices_non_integer_ids(bad):
    with pytest.raises(ValueError, match=MSG_INTEGER):
        Rankings.from_ranked_indices(bad)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([[1, 2, 1]], id="list"),
        pytest.param([[0], [4, 4]], id="second-row"),
        pytest.param(np.array([[3, 3], [1, 2]]), id="ndarray"),
        pytest.param(np.array([[3, 1, 3]], dtype=np.uint8), id="uint8"),
        pytest.param([np.array([7, 2, 7])], id="list-of-arrays"),
        pytest.param([[2**40, 5, 2**40]], id="large"),
    ],
)
def test_ranked_indices_duplicate_ids(bad):
    with pytest.raises(ValueError, match=MSG_DUPLICATE):
        Rankings.from_ranked_indices(bad)


def test_duplicates_across_rows_are_fine():
    check(Rankings.from_ranked_indices([[1, 2], [2, 1]]), [[1, 2], [2, 1]])


@pytest.mark.parametrize(
    "fn", [pytest.param(Rankings.from_ranked_indices, id="ranked"),
           pytest.param(Rankings.from_scores, id="scores")]
)
def test_more_than_two_dimensions(fn):
    with pytest.raises(ValueError, match=MSG_NDIM):
        fn(np.ones((2, 2, 2), dtype=np.int64))
    with pytest.raises(ValueError):
        fn(np.ones((1, 2, 1, 1)))


@pytest.mark.parametrize(
    "fn", [pytest.param(Rankings.from_ranked_indices, id="ranked"),
           pytest.param(Rankings.from_scores, id="scores")]
)
def test_masked_arrays_rejected(fn):
    with pytest.raises(ValueError, match=MSG_MASKED):
        fn(np.ma.array([[0, 1], [1, 0]], mask=[[0, 1], [0, 0]]))
    with pytest.raises(ValueError, match=MSG_MASKED):
        fn(np.ma.array([[0, 1], [1, 0]]))


@pytest.mark.parametrize("bad", UNSUPPORTED_TYPES)
@pytest.mark.parametrize(
    "fn", [pytest.param(Rankings.from_ranked_indices, id="ranked"),
           pytest.param(Rankings.from_scores, id="scores")]
)
def test_unsupported_types(fn, bad):
    with pytest.raises(TypeError):
        fn(bad)


# --------------------------------------------------------------------------- storage, equality, pickling
def test_storage_read_only():
    r = Rankings.from_ranked_indices(RANKS)
    with pytest.raises(ValueError):
        r.indices[0, 0] = 9
    with pytest.raises(ValueError):
        r.indices[1, 2] = 9  # padding too
    with pytest.raises(ValueError):
        r.lengths[0] = 1
    check(r, RANKS)


def test_equality():
    a = Rankings.from_ranked_indices(RANKS)
    assert a == Rankings.from_ranked_indices([np.array(x) for x in RANKS])
    assert a != Rankings.from_ranked_indices([[3, 1, 2], [0], [5, 7]])  # order matters
    assert a != Rankings.from_ranked_indices([[3, 1, 2], [0], [7]])
    assert a != Rankings.from_ranked_indices(RANKS + [[1]])
    assert not (a == 5)
    assert not (a == RANKS)
    assert Rankings.from_scores(np.array(SC)) == Rankings.from_ranked_indices(SC_RANK)


def test_from_scores_equals_from_ranked_indices_with_filters():
    assert Rankings.from_scores(SC2, valid_items=[4, 1]) == Rankings.from_ranked_indices(
        [[0, 1, 2, 3, 4], [4, 3, 2, 1, 0]], valid_items=[4, 1]
    )


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: Rankings.from_ranked_indices(RANKS), id="ragged"),
        pytest.param(lambda: Rankings.from_ranked_indices([[2**40, 1], [2**31]]), id="large"),
        pytest.param(lambda: quiet(Rankings.from_ranked_indices, [[], [1, 2], []]), id="empty-rows"),
        pytest.param(lambda: Rankings.from_scores(np.array(SC), k=3), id="scores"),
    ],
)
@pytest.mark.parametrize("protocol", [2, pickle.DEFAULT_PROTOCOL, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(make, protocol):
    r = make()
    clone = pickle.loads(pickle.dumps(r, protocol=protocol))
    assert type(clone) is type(r)
    assert clone == r
    assert clone.to_list() == r.to_list()
    assert_rankings_invariants(clone)  # still read-only after unpickling


def test_deepcopy():
    r = Rankings.from_ranked_indices(RANKS)
    assert copy.deepcopy(r) == r
    assert copy.copy(r) == r


# --------------------------------------------------------------------------- inputs not modified
def _snap(arr):
    return arr.copy(), arr.flags.writeable, arr.dtype, arr.strides


def _assert_unchanged(arr, snap):
    ref, writeable, dtype, strides = snap
    assert arr.dtype == dtype
    assert arr.strides == strides
    assert arr.flags.writeable == writeable
    assert arr.tobytes() == ref.tobytes()


def test_ranked_indices_ndarray_not_modified_nor_aliased():
    arr = np.array(RECT, dtype=np.int64)
    snap = _snap(arr)
    r = Rankings.from_ranked_indices(arr)
    _assert_unchanged(arr, snap)
    arr[0, 0] = 9
    assert r.to_list() == RECT


def test_ranked_indices_lists_not_modified():
    rows = [[3, 1, 2], [0], [7, 5]]
    valid = [[1, 2, 7], [0], [5]]
    before = copy.deepcopy((rows, valid))
    Rankings.from_ranked_indices(rows, valid_items=valid, invalid_items=[2])
    assert (rows, valid) == before


def test_filters_not_modified():
    valid = sp.csr_array((np.ones(3), np.array([4, 1, 3]), np.array([0, 3])), shape=(1, 6))
    valid.has_sorted_indices = False
    invalid = np.array([[5, 3], [2, 0]])
    snaps = [_snap(a) for a in (valid.data, valid.indices, valid.indptr)]
    isnap = _snap(invalid)
    Rankings.from_ranked_indices(R, valid_items=valid, invalid_items=invalid)
    Rankings.from_scores(SC2, valid_items=valid, invalid_items=invalid)
    for a, s in zip((valid.data, valid.indices, valid.indptr), snaps):
        _assert_unchanged(a, s)
    _assert_unchanged(invalid, isnap)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_scores_dense_not_modified_nor_aliased(dtype):
    arr = np.array([[1, 5, 3, 2], [4, -1, 3, 2]], dtype=dtype)
    snap = _snap(arr)
    r = Rankings.from_scores(arr, k=3)
    _assert_unchanged(arr, snap)
    arr[...] = 0
    assert r.to_list() == [[1, 2, 3], [0, 2, 3]]


def test_scores_with_nan_not_modified():
    arr = np.array([[1.0, np.nan, 3.0, np.inf]])
    snap = _snap(arr)
    with pytest.warns(InvalidValuesWarning):
        Rankings.from_scores(arr)
    _assert_unchanged(arr, snap)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_scores_sparse_not_modified(fmt):
    base = sp.csr_array((np.array([1.0, 3.0, 2.0, 5.0]), np.array([4, 0, 2, 1]), np.array([0, 3, 4])),
                        shape=(2, 5))
    mat = getattr(sp, f"{fmt}_array")(base, copy=True)
    arrays = (mat.data, mat.row, mat.col) if fmt == "coo" else (mat.data, mat.indices, mat.indptr)
    if fmt != "coo":
        mat.has_sorted_indices = False
    snaps = [_snap(a) for a in arrays]
    r = Rankings.from_scores(mat)
    for a, s in zip(arrays, snaps):
        _assert_unchanged(a, s)
    check(r, [[0, 2, 4], [1]])


def test_scores_lists_not_modified():
    rows = [[0.5, 0.1, float("nan")], [2.0]]
    before = repr(rows)
    with pytest.warns(InvalidValuesWarning):
        Rankings.from_scores(rows)
    assert repr(rows) == before


# --------------------------------------------------------------------------- properties
ranking_rows = st.lists(
    st.lists(st.one_of(st.integers(0, 30), st.integers(0, 2**62)), unique=True, max_size=10),
    min_size=1,
    max_size=8,
)


@given(ranking_rows)
def test_prop_round_trip(rows):
    r = quiet(Rankings.from_ranked_indices, rows)
    assert r.to_list() == rows
    assert_rankings_invariants(r)
    arrays = [np.array(x, dtype=np.int64) for x in rows]
    assert quiet(Rankings.from_ranked_indices, arrays) == r


@given(st.integers(1, 8).flatmap(
    lambda n: st.lists(st.permutations(list(range(n))), min_size=1, max_size=5)
))
def test_prop_round_trip_2d_array(rows):
    arr = np.array(rows, dtype=np.int32)
    assert Rankings.from_ranked_indices(arr).to_list() == rows
    assert Rankings.from_ranked_indices(np.asfortranarray(arr)).to_list() == rows


distinct_scores = st.floats(allow_nan=False, allow_infinity=False, width=64)


@st.composite
def dense_rankings_with_scores(draw):
    n = draw(st.integers(1, 8))
    rows = draw(st.lists(st.permutations(list(range(n))), min_size=1, max_size=5))
    vals = draw(st.lists(distinct_scores, min_size=n, max_size=n, unique=True))
    vals = sorted(vals, reverse=True)
    scores = np.empty((len(rows), n))
    for i, row in enumerate(rows):
        scores[i, row] = vals
    return rows, scores


@given(dense_rankings_with_scores())
def test_prop_from_scores_reproduces_ranking_dense(data):
    rows, scores = data
    assert no_warning(Rankings.from_scores, scores).to_list() == rows
    assert Rankings.from_scores(scores.tolist()).to_list() == rows
    assert Rankings.from_scores(scores.astype(np.float64, order="F")).to_list() == rows


@st.composite
def sparse_rankings_with_scores(draw):
    rows = draw(st.lists(st.lists(st.integers(0, 40), unique=True, max_size=8), min_size=1, max_size=5))
    longest = max(len(r) for r in rows)
    vals = draw(st.lists(distinct_scores.filter(lambda x: x != 0), min_size=longest,
                         max_size=longest, unique=True))
    vals = sorted(vals, reverse=True)
    r_idx = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    c_idx = np.array([c for r in rows for c in r], dtype=np.int64)
    data = np.array([vals[j] for r in rows for j in range(len(r))], dtype=np.float64)
    mat = sp.coo_array((data, (r_idx, c_idx)), shape=(len(rows), 41))
    return rows, mat


@given(sparse_rankings_with_scores())
def test_prop_from_scores_reproduces_ranking_sparse(data):
    rows, mat = data
    assert quiet(Rankings.from_scores, mat).to_list() == rows
    assert quiet(Rankings.from_scores, sp.csc_matrix(mat)).to_list() == rows


@given(
    hnp.arrays(
        np.float64,
        shape=st.tuples(st.integers(1, 5), st.integers(1, 10)),
        elements=st.sampled_from([-2.0, -1.0, 0.0, 1.0, 1.5, 3.0]),
    ),
    st.one_of(st.none(), st.integers(1, 12)),
)
def test_prop_from_scores_topk_matches_slow_reference(scores, k):
    expected = [slow_topk(row, k) for row in scores]
    assert Rankings.from_scores(scores, k=k).to_list() == expected
    assert Rankings.from_scores(scores.tolist(), k=k).to_list() == expected


@given(
    hnp.arrays(
        np.float64,
        shape=st.tuples(st.integers(1, 5), st.integers(1, 10)),
        elements=st.sampled_from([-2.0, -1.0, 1.0, 1.5, 3.0]),
    ),
    hnp.arrays(np.bool_, shape=(5, 10)),
    st.one_of(st.none(), st.integers(1, 12)),
)
def test_prop_from_scores_sparse_topk_matches_slow_reference(scores, stored, k):
    mask = stored[: scores.shape[0], : scores.shape[1]]
    r_idx, c_idx = np.nonzero(mask)
    mat = sp.coo_array((scores[r_idx, c_idx], (r_idx, c_idx)), shape=scores.shape)
    expected = [slow_topk(np.where(m, row, np.nan), k) for row, m in zip(scores, mask)]
    assert quiet(Rankings.from_scores, mat, k=k).to_list() == expected


# --------------------------------------------------------------------------- larger inputs
def _fast_ref(row, k=None):
    fin = np.flatnonzero(np.isfinite(row))
    order = fin[np.lexsort((fin, -row[fin]))]
    return order.tolist() if k is None else order[:k].tolist()


def test_large_inputs_multithreaded_path():
    # large enough for the kernels' parallel code path
    rng = np.random.default_rng(11)
    n, m = 300, 400
    scores = rng.integers(-5, 6, size=(n, m)).astype(np.float64)
    scores[rng.random(scores.shape) < 0.01] = np.nan
    valid = [rng.choice(m, size=150, replace=False) for _ in range(n)]
    invalid = [rng.choice(m, size=50, replace=False) for _ in range(n)]
    for k in (None, 1, 7):
        expected = [_fast_ref(row, k) for row in scores]
        with pytest.warns(InvalidValuesWarning):
            assert Rankings.from_scores(scores, k=k).to_list() == expected
        with pytest.warns(InvalidValuesWarning):
            assert Rankings.from_scores(scores.tolist(), k=k).to_list() == expected
    stored = rng.random(scores.shape) < 0.5
    filled = np.where(stored, np.nan_to_num(scores, nan=7.0) + 0.5, 0.0)
    mask_scores = np.where(stored, filled, np.nan)
    expected = [_fast_ref(row, 5) for row in mask_scores]
    assert quiet(Rankings.from_scores, sp.csr_array(filled), k=5).to_list() == expected
    # filters
    filt = np.full(scores.shape, np.nan)
    for i in range(n):
        keep = np.setdiff1d(valid[i], invalid[i])
        filt[i, keep] = scores[i, keep]
    expected = [_fast_ref(row, 20) for row in filt]
    r = quiet(Rankings.from_scores, scores, valid_items=valid, invalid_items=invalid, k=20)
    assert r.to_list() == expected
    perms = np.array([rng.permutation(m) for _ in range(n)])
    r = Rankings.from_ranked_indices(perms, valid_items=valid, invalid_items=invalid)
    keep_sets = [set(np.setdiff1d(v, b).tolist()) for v, b in zip(valid, invalid)]
    expected = [[x for x in p if x in keep] for p, keep in zip(perms.tolist(), keep_sets)]
    assert r.to_list() == expected
    assert_rankings_invariants(r)
    # duplicates far into a large input are found
    bad = perms.copy()
    bad[250, -1] = bad[250, 0]
    with pytest.raises(ValueError, match=MSG_DUPLICATE):
        Rankings.from_ranked_indices(bad)
    bad_rows = perms.tolist()
    bad_rows[-1].append(bad_rows[-1][3])
    with pytest.raises(ValueError, match=MSG_DUPLICATE):
        Rankings.from_ranked_indices(bad_rows)
