"""Tests for the label containers of ``rankereval.data``.

``BinaryLabels.from_positive_indices``, ``BinaryLabels.from_matrix`` and
``NumericLabels.from_matrix``: every accepted input form, the storage invariants of
the resulting CSR data, every documented error, input immutability, pickling and
hypothesis properties tying the constructors together.
"""
import copy
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rankereval
from rankereval.data import BinaryLabels, InvalidValuesWarning, NumericLabels
from helpers import quiet

# Whether label rows without any relevant item warn is not part of the contract;
# these tests do not care either way.
pytestmark = pytest.mark.filterwarnings("ignore::rankereval.data.InvalidValuesWarning")

SPARSE_FORMATS = ("coo", "csr", "csc", "bsr", "lil", "dok", "dia")
SPARSE_CTORS = [
    pytest.param(getattr(sp, f"{fmt}_{kind}"), id=f"{fmt}_{kind}")
    for fmt in SPARSE_FORMATS
    for kind in ("matrix", "array")
]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
REAL_DTYPES = INT_DTYPES + [np.float16, np.float32, np.float64, np.bool_]

# Keywords an informative error message is expected to contain.
MSG_NEGATIVE = r"(?i)negative"
MSG_DUPLICATE = r"(?i)duplicate"
MSG_INTEGER = r"(?i)integ"
MSG_FINITE = r"(?i)nan|finite|inf"
MSG_BINARY = r"(?i)binary|0 or 1|0/1|0 and 1|\{0, ?1\}"
MSG_NDIM = r"(?i)dim|2-?d|3-?d"
MSG_MASKED = r"(?i)mask"

UNSUPPORTED_TYPES = [
    pytest.param({0: [1, 2]}, id="dict"),
    pytest.param("abc", id="str"),
    pytest.param({1, 2}, id="set"),
    pytest.param(frozenset({1, 2}), id="frozenset"),
]


# --------------------------------------------------------------------------- helpers
def assert_label_invariants(labels):
    """Check every storage invariant promised by the contract."""
    csr = labels.csr
    assert isinstance(csr, sp.csr_array)
    n = labels.n_rows
    assert len(labels) == n
    assert csr.shape[0] == n
    indptr, indices, data = csr.indptr, csr.indices, csr.data
    assert len(indptr) == n + 1
    assert indptr[0] == 0
    assert indptr[-1] == len(indices) == len(data)
    assert np.all(np.diff(indptr) >= 0)
    # sorted, duplicate free rows; non-negative ids inside the matrix shape
    for i in range(n):
        row = indices[indptr[i]:indptr[i + 1]]
        assert np.all(np.diff(row.astype(np.int64)) > 0), f"row {i} not strictly sorted: {row}"
    if len(indices):
        assert indices.min() >= 0
        assert indices.max() < csr.shape[1]
    # no explicit zeros, only finite values
    assert np.all(data != 0)
    assert np.all(np.isfinite(data))
    # read-only storage
    for arr in (indptr, indices, data, labels.indptr, labels.indices, labels.values):
        assert isinstance(arr, np.ndarray)
        assert not arr.flags.writeable
    # the exposed arrays are the CSR arrays
    np.testing.assert_array_equal(labels.indptr, indptr)
    np.testing.assert_array_equal(labels.indices, indices)
    np.testing.assert_array_equal(labels.values, data)
    # list views agree with the CSR storage
    ids = labels.indices_to_list()
    vals = labels.labels_to_list()
    assert isinstance(ids, list) and isinstance(vals, list)
    assert len(ids) == len(vals) == n
    for i in range(n):
        a, b = int(indptr[i]), int(indptr[i + 1])
        assert isinstance(ids[i], list) and isinstance(vals[i], list)
        assert ids[i] == indices[a:b].tolist()
        assert vals[i] == data[a:b].tolist()
        assert ids[i] == sorted(ids[i])
        assert all(isinstance(v, int) for v in ids[i])
    if isinstance(labels, BinaryLabels):
        assert np.all(data == 1)
    else:
        assert np.all(data > 0)


def check(labels, expected_ids, expected_values=None):
    assert_label_invariants(labels)
    assert labels.indices_to_list() == expected_ids
    if expected_values is None:
        expected_values = [[1] * len(row) for row in expected_ids]
    assert labels.labels_to_list() == expected_values


def dense_from_rows(rows, width, value=1.0):
    dense = np.zeros((len(rows), width))
    for i, row in enumerate(rows):
        dense[i, row] = value
    return dense


# --------------------------------------------------------------------------- public names
def test_reexported_from_package():
    assert rankereval.BinaryLabels is BinaryLabels
    assert rankereval.NumericLabels is NumericLabels
    assert rankereval.InvalidValuesWarning is InvalidValuesWarning
    assert issubclass(InvalidValuesWarning, UserWarning)


# --------------------------------------------------------------------------- from_positive_indices
# Equal-length rows (so that a 2-D ndarray can hold them), unsorted.
POS = [[5, 0], [1, 3], [4, 2]]
POS_SORTED = [[0, 5], [1, 3], [2, 4]]
POS_WIDTH = 6
# Ragged rows with an empty row.
RAGGED = [[0, 5], [3, 1, 2], [], [7]]
RAGGED_SORTED = [[0, 5], [1, 2, 3], [], [7]]
RAGGED_WIDTH = 8


def test_from_positive_indices_ragged_list():
    labels = BinaryLabels.from_positive_indices(RAGGED)
    check(labels, RAGGED_SORTED)
    assert labels.n_rows == len(labels) == 4
    assert labels.csr.shape[1] >= RAGGED_WIDTH


def test_from_positive_indices_spec_example():
    labels = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
    check(labels, [[0, 5], [1, 2, 3]])


def test_from_positive_indices_flat_list_is_one_row():
    flat = BinaryLabels.from_positive_indices([3, 1])
    check(flat, [[1, 3]])
    assert flat.n_rows == 1
    assert flat == BinaryLabels.from_positive_indices([[3, 1]])


def test_from_positive_indices_single_empty_row():
    labels = BinaryLabels.from_positive_indices([[]])
    check(labels, [[]])
    assert labels.n_rows == 1


@pytest.mark.parametrize("dtype", INT_DTYPES + [np.intp])
def test_from_positive_indices_2d_ndarray(dtype):
    ref = BinaryLabels.from_positive_indices(POS)
    labels = BinaryLabels.from_positive_indices(np.array(POS, dtype=dtype))
    check(labels, POS_SORTED)
    assert labels == ref


def test_from_positive_indices_list_of_ndarrays():
    rows = [np.array(r, dtype=dt) for r, dt in zip(RAGGED, [np.int64, np.int32, np.int64, np.uint8])]
    labels = BinaryLabels.from_positive_indices(rows)
    check(labels, RAGGED_SORTED)
    assert labels == BinaryLabels.from_positive_indices(RAGGED)


def test_from_positive_indices_numpy_integer_scalars_in_lists():
    rows = [[np.int64(5), np.int32(0)], [np.uint8(3), 1]]
    labels = BinaryLabels.from_positive_indices(rows)
    check(labels, [[0, 5], [1, 3]])


@pytest.mark.parametrize("ctor", SPARSE_CTORS)
def test_from_positive_indices_sparse_equal_rows(ctor):
    # values other than 1 still only define the pattern
    mat = ctor(dense_from_rows(POS, POS_WIDTH, value=7.5))
    labels = BinaryLabels.from_positive_indices(mat)
    check(labels, POS_SORTED)
    assert labels == BinaryLabels.from_positive_indices(POS)


@pytest.mark.parametrize("ctor", SPARSE_CTORS)
def test_from_positive_indices_sparse_ragged(ctor):
    mat = ctor(dense_from_rows(RAGGED, RAGGED_WIDTH))
    labels = BinaryLabels.from_positive_indices(mat)
    check(labels, RAGGED_SORTED)
    assert labels == BinaryLabels.from_positive_indices(RAGGED)


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_from_positive_indices_sparse_explicit_zeros_dropped(fmt, kind):
    base = sp.csr_array(
        (np.array([1.0, 0.0, 2.0, 0.0]), np.array([0, 1, 3, 2]), np.array([0, 3, 4])), shape=(2, 4)
    )
    mat = getattr(sp, f"{fmt}_{kind}")(base)
    assert mat.nnz == 4  # explicit zeros really are stored in the input
    labels = BinaryLabels.from_positive_indices(mat)
    check(labels, [[0, 3], []])


def test_from_positive_indices_sparse_unsorted_indices():
    mat = sp.csr_array((np.ones(4), np.array([4, 0, 2, 1]), np.array([0, 3, 4])), shape=(2, 5))
    labels = BinaryLabels.from_positive_indices(mat)
    check(labels, [[0, 2, 4], [1]])


def test_from_positive_indices_large_ids_list():
    big = [[2**40, 5, 2**31], [2**33 + 1]]
    labels = BinaryLabels.from_positive_indices(big)
    check(labels, [[5, 2**31, 2**40], [2**33 + 1]])
    assert labels.csr.indices.dtype == np.int64
    assert labels.csr.shape[1] > 2**40


def test_from_positive_indices_large_ids_ndarray():
    arr = np.array([[2**40, 3], [1, 2**31]], dtype=np.int64)
    labels = BinaryLabels.from_positive_indices(arr)
    check(labels, [[3, 2**40], [1, 2**31]])
    arr_u = np.array([[2**40, 3], [1, 2**31]], dtype=np.uint64)
    assert BinaryLabels.from_positive_indices(arr_u) == labels


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", ["coo", "csr"])
def test_from_positive_indices_large_ids_sparse(fmt, kind):
    rows = np.array([0, 0, 1])
    cols = np.array([2**40, 2**31, 7], dtype=np.int64)
    coo = sp.coo_array((np.ones(3), (rows, cols)), shape=(2, 2**40 + 1))
    mat = getattr(sp, f"{fmt}_{kind}")(coo)
    labels = BinaryLabels.from_positive_indices(mat)
    check(labels, [[2**31, 2**40], [7]])


# --------------------------------------------------------------------------- from_matrix
BIN_DENSE = [[0, 1, 0, 1], [1, 0, 0, 0], [0, 0, 0, 0]]
BIN_IDS = [[1, 3], [0], []]
NUM_DENSE = [[0, 1, 0, 2], [3, 0, 0, 0], [0, 0, 0, 0]]
NUM_IDS = [[1, 3], [0], []]
NUM_VALUES = [[1, 2], [3], []]


def test_binary_from_matrix_list():
    labels = BinaryLabels.from_matrix(BIN_DENSE)
    check(labels, BIN_IDS)
    assert labels.n_rows == 3


def test_numeric_from_matrix_list():
    labels = NumericLabels.from_matrix(NUM_DENSE)
    check(labels, NUM_IDS, NUM_VALUES)
    assert labels.n_rows == 3


def test_numeric_from_matrix_ragged_spec_example():
    labels = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    check(labels, [[0, 1, 2], [0, 1]], [[1, 2, 3], [4, 5]])
    assert labels == NumericLabels.from_matrix(np.array([[1, 2, 3], [4, 5, 0]]))


def test_numeric_from_matrix_ragged_longer_later_row_and_empty_row():
    labels = NumericLabels.from_matrix([[0.5], [0, 0, 2], []])
    check(labels, [[0], [2], []], [[0.5], [2], []])
    assert labels == NumericLabels.from_matrix(np.array([[0.5, 0, 0], [0, 0, 2], [0, 0, 0]]))


def test_binary_from_matrix_ragged():
    labels = BinaryLabels.from_matrix([[1, 0, 1], [0, 1]])
    check(labels, [[0, 2], [1]])
    assert labels == BinaryLabels.from_matrix(np.array([[1, 0, 1], [0, 1, 0]]))


def test_binary_from_matrix_agrees_with_from_positive_indices():
    assert BinaryLabels.from_matrix([[1, 0, 1], [0, 1, 0]]) == BinaryLabels.from_positive_indices(
        [[0, 2], [1]]
    )


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_binary_from_matrix_dtypes(dtype):
    ref = BinaryLabels.from_matrix(BIN_DENSE)
    labels = BinaryLabels.from_matrix(np.array(BIN_DENSE, dtype=dtype))
    check(labels, BIN_IDS)
    assert labels == ref


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_numeric_from_matrix_dtypes(dtype):
    dense = np.array(NUM_DENSE, dtype=dtype)
    ref = NumericLabels.from_matrix(dense.astype(np.float64).tolist())
    labels = NumericLabels.from_matrix(dense)
    expected_values = [[1, 1], [1], []] if dtype is np.bool_ else NUM_VALUES
    check(labels, NUM_IDS, expected_values)
    assert labels == ref


def test_numeric_from_matrix_float_values_preserved():
    dense = np.array([[0.0, 0.25, 1e-300], [7.5, 0.0, 1e300]])
    labels = NumericLabels.from_matrix(dense)
    check(labels, [[1, 2], [0, 2]], [[0.25, 1e-300], [7.5, 1e300]])


@pytest.mark.parametrize("ctor", SPARSE_CTORS)
def test_binary_from_matrix_sparse_formats(ctor):
    labels = BinaryLabels.from_matrix(ctor(np.array(BIN_DENSE, dtype=np.float64)))
    check(labels, BIN_IDS)
    assert labels == BinaryLabels.from_matrix(BIN_DENSE)


@pytest.mark.parametrize("ctor", SPARSE_CTORS)
def test_numeric_from_matrix_sparse_formats(ctor):
    labels = NumericLabels.from_matrix(ctor(np.array(NUM_DENSE, dtype=np.float64)))
    check(labels, NUM_IDS, NUM_VALUES)
    assert labels == NumericLabels.from_matrix(NUM_DENSE)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.float32, np.bool_])
def test_from_matrix_sparse_dtypes(dtype):
    mat = sp.csr_array(np.array(BIN_DENSE, dtype=dtype))
    check(BinaryLabels.from_matrix(mat), BIN_IDS)
    check(NumericLabels.from_matrix(mat), BIN_IDS)


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
def test_from_matrix_sparse_explicit_zeros_dropped(fmt, kind):
    base = sp.csr_array(
        (np.array([3.0, 0.0, 2.0, 0.0]), np.array([0, 1, 3, 2]), np.array([0, 3, 4])), shape=(2, 4)
    )
    mat = getattr(sp, f"{fmt}_{kind}")(base)
    assert mat.nnz == 4
    check(NumericLabels.from_matrix(mat), [[0, 3], []], [[3, 2], []])
    binary = getattr(sp, f"{fmt}_{kind}")(
        sp.csr_array(
            (np.array([1.0, 0.0, 1.0, 0.0]), np.array([0, 1, 3, 2]), np.array([0, 3, 4])),
            shape=(2, 4),
        )
    )
    check(BinaryLabels.from_matrix(binary), [[0, 3], []])


def test_from_matrix_sparse_unsorted_indices():
    mat = sp.csr_array(
        (np.array([2.0, 1.0, 3.0, 4.0]), np.array([3, 0, 2, 1]), np.array([0, 3, 4])), shape=(2, 4)
    )
    check(NumericLabels.from_matrix(mat), [[0, 2, 3], [1]], [[1, 3, 2], [4]])
    binmat = sp.csr_array((np.ones(3), np.array([3, 0, 2]), np.array([0, 3])), shape=(1, 4))
    check(BinaryLabels.from_matrix(binmat), [[0, 2, 3]])
    cscmat = sp.csc_array(
        (np.array([5.0, 6.0]), np.array([1, 0]), np.array([0, 2, 2])), shape=(2, 2)
    )
    check(NumericLabels.from_matrix(cscmat), [[0], [0]], [[6], [5]])


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", ["coo", "csr"])
def test_from_matrix_large_ids_sparse(fmt, kind):
    rows = np.array([0, 0, 1])
    cols = np.array([2**40, 2**31, 7], dtype=np.int64)
    coo = sp.coo_array((np.array([2.0, 1.0, 1.0]), (rows, cols)), shape=(2, 2**40 + 1))
    mat = getattr(sp, f"{fmt}_{kind}")(coo)
    num = NumericLabels.from_matrix(mat)
    check(num, [[2**31, 2**40], [7]], [[1, 2], [1]])
    assert num.csr.indices.dtype == np.int64
    binary = getattr(sp, f"{fmt}_{kind}")(
        sp.coo_array((np.ones(3), (rows, cols)), shape=(2, 2**40 + 1))
    )
    check(BinaryLabels.from_matrix(binary), [[2**31, 2**40], [7]])


def test_from_matrix_all_zero():
    check(BinaryLabels.from_matrix([[0, 0], [0, 0]]), [[], []])
    check(NumericLabels.from_matrix(np.zeros((3, 5))), [[], [], []], [[], [], []])


# --------------------------------------------------------------------------- storage invariants
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: BinaryLabels.from_positive_indices(RAGGED), id="binary-indices"),
        pytest.param(lambda: BinaryLabels.from_matrix(BIN_DENSE), id="binary-matrix"),
        pytest.param(lambda: NumericLabels.from_matrix(NUM_DENSE), id="numeric-matrix"),
        pytest.param(
            lambda: NumericLabels.from_matrix(sp.csc_array(np.array(NUM_DENSE, float))),
            id="numeric-csc",
        ),
    ],
)
def test_storage_is_read_only(make):
    labels = make()
    assert_label_invariants(labels)
    with pytest.raises(ValueError):
        labels.indptr[0] = 1
    with pytest.raises(ValueError):
        labels.indices[0] = 1
    with pytest.raises(ValueError):
        labels.values[0] = 5
    csr = labels.csr
    with pytest.raises(ValueError):
        csr.data[0] = 5
    with pytest.raises(ValueError):
        csr.indices[0] = 1
    with pytest.raises(ValueError):
        csr.indptr[1] = 0
    # nothing changed
    assert_label_invariants(labels)
    assert labels == make()


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(NumericLabels.from_matrix, id="numeric"),
        pytest.param(BinaryLabels.from_matrix, id="binary"),
        pytest.param(BinaryLabels.from_positive_indices, id="positive_indices"),
    ],
)
def test_csr_read_only_for_wide_input_with_small_ids(make):
    # ids fit in int32 but the matrix is wider than 2**31 columns: the .csr view must still
    # expose read-only arrays (and the labels must keep the ids)
    mat = sp.csr_array((np.array([1.0, 1.0]), np.array([3, 0]), np.array([0, 1, 2])), shape=(2, 2**40))
    labels = make(mat)
    assert labels.indices_to_list() == [[3], [0]]
    assert_label_invariants(labels)


def test_len_and_n_rows():
    labels = BinaryLabels.from_positive_indices([[1], [], [2, 3], [0]])
    assert len(labels) == labels.n_rows == 4
    assert labels.csr.shape[0] == 4


# --------------------------------------------------------------------------- equality
def test_equality():
    a = NumericLabels.from_matrix([[1, 2, 0], [0, 0, 3]])
    assert a == NumericLabels.from_matrix([[1, 2, 0], [0, 0, 3]])
    assert a == NumericLabels.from_matrix(sp.coo_array(np.array([[1, 2, 0], [0, 0, 3]])))
    assert not (a == NumericLabels.from_matrix([[1, 3, 0], [0, 0, 3]]))  # other value
    assert not (a == NumericLabels.from_matrix([[1, 0, 2], [0, 0, 3]]))  # other pattern
    assert a != NumericLabels.from_matrix([[1, 3, 0], [0, 0, 3]])
    b = BinaryLabels.from_positive_indices([[1], [2]])
    assert b == BinaryLabels.from_positive_indices([[1], [2]])
    assert b != BinaryLabels.from_positive_indices([[1], [3]])
    assert b != BinaryLabels.from_positive_indices([[1], [2], []])  # other row count
    assert b != BinaryLabels.from_positive_indices([[1]])


def test_equality_with_other_objects_is_false():
    b = BinaryLabels.from_positive_indices([[1], [2]])
    assert not (b == 5)
    assert not (b == "labels")
    assert not (b == [[1], [2]])


# --------------------------------------------------------------------------- pickling
@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: BinaryLabels.from_positive_indices(RAGGED), id="binary"),
        pytest.param(lambda: BinaryLabels.from_positive_indices([[2**40, 1], []]), id="binary-big"),
        pytest.param(lambda: NumericLabels.from_matrix([[1, 2.5, 3], [4, 5]]), id="numeric"),
        pytest.param(lambda: NumericLabels.from_matrix(np.zeros((2, 3))), id="numeric-empty"),
    ],
)
@pytest.mark.parametrize("protocol", [2, pickle.DEFAULT_PROTOCOL, pickle.HIGHEST_PROTOCOL])
def test_pickle_round_trip(make, protocol):
    labels = make()
    clone = pickle.loads(pickle.dumps(labels, protocol=protocol))
    assert type(clone) is type(labels)
    assert clone == labels
    assert clone.indices_to_list() == labels.indices_to_list()
    assert clone.labels_to_list() == labels.labels_to_list()
    assert_label_invariants(clone)  # still read-only after unpickling


def test_deepcopy_and_copy():
    labels = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    assert copy.deepcopy(labels) == labels
    assert copy.copy(labels) == labels


# --------------------------------------------------------------------------- inputs not modified
def _snapshot(arr):
    return arr.copy(), arr.flags.writeable, arr.dtype


def _assert_same(arr, snap):
    ref, writeable, dtype = snap
    assert arr.dtype == dtype
    assert arr.flags.writeable == writeable
    assert arr.tobytes() == ref.tobytes()


def _sparse_snapshot(mat):
    if mat.format == "coo":
        return [_snapshot(a) for a in (mat.data, mat.row, mat.col)]  # .coords: SciPy >= 1.13
    return [_snapshot(a) for a in (mat.data, mat.indices, mat.indptr)]


def _assert_sparse_same(mat, snaps):
    arrs = (mat.data, mat.row, mat.col) if mat.format == "coo" else (mat.data, mat.indices, mat.indptr)
    for arr, snap in zip(arrs, snaps):
        _assert_same(arr, snap)


def test_ndarray_input_not_modified_positive_indices():
    arr = np.array([[5, 0], [3, 1]], dtype=np.int64)
    snap = _snapshot(arr)
    labels = BinaryLabels.from_positive_indices(arr)
    _assert_same(arr, snap)
    arr[0, 0] = 4  # later changes of the input do not leak into the labels
    assert labels.indices_to_list() == [[0, 5], [1, 3]]


def test_list_input_not_modified():
    rows = [[5, 0], [3, 1, 2], []]
    before = copy.deepcopy(rows)
    BinaryLabels.from_positive_indices(rows)
    assert rows == before
    mat = [[1, 2, 3], [4, 5]]
    before = copy.deepcopy(mat)
    NumericLabels.from_matrix(mat)
    assert mat == before


@pytest.mark.parametrize("cls", [BinaryLabels, NumericLabels])
def test_dense_input_not_modified_from_matrix(cls):
    arr = np.array(BIN_DENSE, dtype=np.float64)
    snap = _snapshot(arr)
    labels = cls.from_matrix(arr)
    _assert_same(arr, snap)
    arr[2, 2] = 1
    assert labels.indices_to_list() == BIN_IDS


@pytest.mark.parametrize("kind", ["matrix", "array"])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("method", ["positive_indices", "binary", "numeric"])
def test_sparse_input_not_modified(fmt, kind, method):
    # unsorted indices and an explicit zero: an in-place sort_indices()/eliminate_zeros()
    # would show up here
    base = sp.csr_array(
        (np.array([1.0, 0.0, 1.0, 1.0]), np.array([3, 1, 0, 2]), np.array([0, 3, 4])), shape=(2, 4)
    )
    mat = getattr(sp, f"{fmt}_{kind}")(base, copy=True)
    if fmt != "coo":
        mat.has_sorted_indices = False
    snaps = _sparse_snapshot(mat)
    fn = {
        "positive_indices": BinaryLabels.from_positive_indices,
        "binary": BinaryLabels.from_matrix,
        "numeric": NumericLabels.from_matrix,
    }[method]
    labels = fn(mat)
    _assert_sparse_same(mat, snaps)
    assert labels.indices_to_list() == [[0, 3], [2]]
    mat.data[...] = 0  # later changes of the input do not leak into the labels
    assert labels.indices_to_list() == [[0, 3], [2]]


def test_canonical_csr_input_not_aliased():
    # a canonical csr input could be adopted as-is; it must not be frozen or shared
    mat = sp.csr_array(np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 0.0]]))
    snaps = _sparse_snapshot(mat)
    labels = NumericLabels.from_matrix(mat)
    _assert_sparse_same(mat, snaps)
    mat.data[0] = 9.0
    assert labels.labels_to_list() == [[2, 1], [1]]


# --------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([[1, -1]], id="list"),
        pytest.param([-3], id="flat"),
        pytest.param([np.array([2, -1])], id="list-of-arrays"),
        pytest.param(np.array([[0, -5]]), id="ndarray"),
    ],
)
def test_positive_indices_negative_ids(bad):
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        BinaryLabels.from_positive_indices(bad)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([[1.5]], id="float"),
        pytest.param([[1, 2.5]], id="mixed-float"),
        pytest.param([["a"]], id="str"),
        pytest.param([[None]], id="None"),
        pytest.param([[1, None]], id="mixed-None"),
        pytest.param([1.5, 2], id="flat-float"),
        pytest.param(np.array([[1.5, 2.0]]), id="float-ndarray"),
        pytest.param([np.array([0.5])], id="float-array-row"),
    ],
)
def test_positive_indices_non_integer_ids(bad):
    with pytest.raises(ValueError, match=MSG_INTEGER):
        BinaryLabels.from_positive_indices(bad)


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param([[1, 2, 1]], id="list"),
        pytest.param([[0], [4, 4]], id="second-row"),
        pytest.param([3, 3], id="flat"),
        pytest.param(np.array([[3, 3], [1, 2]]), id="ndarray"),
        pytest.param([np.array([7, 2, 7])], id="list-of-arrays"),
        pytest.param([[2**40, 2**40]], id="large"),
    ],
)
def test_positive_indices_duplicate_ids(bad):
    with pytest.raises(ValueError, match=MSG_DUPLICATE):
        BinaryLabels.from_positive_indices(bad)


def test_positive_indices_duplicates_across_rows_are_fine():
    check(BinaryLabels.from_positive_indices([[1, 2], [2, 1]]), [[1, 2], [1, 2]])


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(BinaryLabels.from_positive_indices, id="positive_indices"),
        pytest.param(BinaryLabels.from_matrix, id="binary"),
        pytest.param(NumericLabels.from_matrix, id="numeric"),
    ],
)
def test_more_than_two_dimensions(fn):
    with pytest.raises(ValueError, match=MSG_NDIM):
        fn(np.ones((2, 2, 2), dtype=np.int64))
    with pytest.raises(ValueError):
        fn(np.ones((1, 1, 1, 1), dtype=np.int64))


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(BinaryLabels.from_positive_indices, id="positive_indices"),
        pytest.param(BinaryLabels.from_matrix, id="binary"),
        pytest.param(NumericLabels.from_matrix, id="numeric"),
    ],
)
def test_masked_arrays_rejected(fn):
    with pytest.raises(ValueError, match=MSG_MASKED):
        fn(np.ma.array([[0, 1], [1, 0]], mask=[[0, 1], [0, 0]]))
    with pytest.raises(ValueError, match=MSG_MASKED):
        fn(np.ma.array([[0, 1], [1, 0]]))  # masked array type, nothing masked


@pytest.mark.parametrize("bad", UNSUPPORTED_TYPES)
@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(BinaryLabels.from_positive_indices, id="positive_indices"),
        pytest.param(BinaryLabels.from_matrix, id="binary"),
        pytest.param(NumericLabels.from_matrix, id="numeric"),
    ],
)
def test_unsupported_types(fn, bad):
    with pytest.raises(TypeError):
        fn(bad)


@pytest.mark.parametrize("bad_value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("cls", [BinaryLabels, NumericLabels])
def test_from_matrix_non_finite(cls, bad_value):
    # for BinaryLabels a "not 0/1" message is informative too
    msg = MSG_FINITE if cls is NumericLabels else MSG_FINITE + "|" + MSG_BINARY[4:]
    with pytest.raises(ValueError, match=msg):
        cls.from_matrix([[1, 0, bad_value]])
    with pytest.raises(ValueError, match=msg):
        cls.from_matrix(np.array([[1.0, 0.0], [bad_value, 0.0]]))
    with pytest.raises(ValueError, match=msg):
        cls.from_matrix(sp.csr_array(np.array([[1.0, 0.0], [bad_value, 0.0]])))
    with pytest.raises(ValueError, match=msg):
        cls.from_matrix(np.array([[1.0, 0.0], [bad_value, 0.0]], dtype=np.float32))


@pytest.mark.parametrize("bad_value", [2, 0.5, -1, 1.0000001, 255])
def test_binary_from_matrix_non_binary(bad_value):
    with pytest.raises(ValueError, match=MSG_BINARY):
        BinaryLabels.from_matrix([[1, 0, bad_value]])
    with pytest.raises(ValueError, match=MSG_BINARY):
        BinaryLabels.from_matrix(np.array([[1, 0, bad_value]], dtype=np.float64))
    for ctor in (sp.csr_array, sp.coo_matrix, sp.csc_array):
        with pytest.raises(ValueError, match=MSG_BINARY):
            BinaryLabels.from_matrix(ctor(np.array([[1, 0, bad_value]], dtype=np.float64)))


def test_binary_from_matrix_non_binary_integer_dtypes():
    with pytest.raises(ValueError, match=MSG_BINARY):
        BinaryLabels.from_matrix(np.array([[0, 1, 2]], dtype=np.uint8))
    with pytest.raises(ValueError, match=MSG_BINARY):
        BinaryLabels.from_matrix(np.array([[0, 1, -1]], dtype=np.int8))


@pytest.mark.parametrize("bad_value", [-1, -0.5, -1e-12])
def test_numeric_from_matrix_negative(bad_value):
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        NumericLabels.from_matrix([[1, 0, bad_value]])
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        NumericLabels.from_matrix([[1, 2, 3], [bad_value]])
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        NumericLabels.from_matrix(np.array([[1, 0, bad_value]]))
    for ctor in (sp.csr_array, sp.coo_matrix, sp.csc_array, sp.lil_array):
        with pytest.raises(ValueError, match=MSG_NEGATIVE):
            NumericLabels.from_matrix(ctor(np.array([[1, 0, bad_value]], dtype=np.float64)))


def test_numeric_from_matrix_negative_integer_dtype():
    with pytest.raises(ValueError, match=MSG_NEGATIVE):
        NumericLabels.from_matrix(np.array([[0, 3, -2]], dtype=np.int8))


# --------------------------------------------------------------------------- properties
label_rows = st.lists(
    st.lists(st.integers(0, 40), unique=True, max_size=8), min_size=1, max_size=6
)


@given(label_rows)
def test_prop_positive_indices_sorted_rows(rows):
    labels = quiet(BinaryLabels.from_positive_indices, rows)
    assert labels.indices_to_list() == [sorted(r) for r in rows]
    assert labels.n_rows == len(rows)
    assert_label_invariants(labels)


@given(label_rows)
def test_prop_positive_indices_equals_from_matrix(rows):
    labels = quiet(BinaryLabels.from_positive_indices, rows)
    expected = [sorted(r) for r in rows]
    ids = [i for r in rows for i in r]
    width = max(ids) + 1 if ids else 1
    dense = dense_from_rows(rows, width).astype(np.int64)
    from_dense = quiet(BinaryLabels.from_matrix, dense)
    from_dense_list = quiet(BinaryLabels.from_matrix, dense.tolist())
    r_idx = np.repeat(np.arange(len(rows)), [len(r) for r in rows])
    c_idx = np.array(ids, dtype=np.int64)
    from_coo = quiet(
        BinaryLabels.from_matrix, sp.coo_array((np.ones(len(ids)), (r_idx, c_idx)), shape=dense.shape)
    )
    from_csr = quiet(BinaryLabels.from_matrix, sp.csr_matrix(dense))
    pattern = quiet(BinaryLabels.from_positive_indices, sp.csr_array(dense))
    for other in (from_dense, from_dense_list, from_coo, from_csr, pattern):
        assert other.indices_to_list() == expected
        if ids:  # same shape (max id + 1 columns): the objects compare equal
            assert other == labels


@given(
    hnp.arrays(
        np.float64,
        shape=st.tuples(st.integers(1, 5), st.integers(1, 7)),
        elements=st.sampled_from([0.0, 0.0, 0.0, 1.0, 2.5, 3.0, 1e-3]),
    )
)
def test_prop_numeric_dense_equals_sparse(dense):
    labels = quiet(NumericLabels.from_matrix, dense)
    rows_ids = [np.flatnonzero(row).tolist() for row in dense]
    rows_vals = [row[row != 0].tolist() for row in dense]
    assert labels.indices_to_list() == rows_ids
    assert labels.labels_to_list() == rows_vals
    assert_label_invariants(labels)
    for ctor in (sp.csr_array, sp.csc_matrix, sp.coo_array):
        assert quiet(NumericLabels.from_matrix, ctor(dense)) == labels
    assert quiet(NumericLabels.from_matrix, dense.tolist()) == labels
    binary = quiet(BinaryLabels.from_matrix, (dense != 0).astype(np.int8))
    assert binary.indices_to_list() == rows_ids


# --------------------------------------------------------------------------- larger inputs
def test_large_inputs_multithreaded_path():
    # large enough for the kernels' parallel code path
    rng = np.random.default_rng(7)
    n, m = 300, 400
    rows = [rng.choice(m, size=rng.integers(0, 200), replace=False) for _ in range(n)]
    labels = quiet(BinaryLabels.from_positive_indices, rows)
    assert labels.indices_to_list() == [sorted(r.tolist()) for r in rows]
    assert_label_invariants(labels)
    dense = dense_from_rows(rows, m)
    assert quiet(BinaryLabels.from_matrix, dense).indices_to_list() == labels.indices_to_list()
    graded = dense * rng.integers(1, 5, size=dense.shape)
    num = quiet(NumericLabels.from_matrix, sp.csc_array(graded))
    assert num.labels_to_list() == [row[row != 0].tolist() for row in graded]
    bad = [r.tolist() for r in rows]
    bad[-1] = bad[-1] + [bad[-1][0]] if bad[-1] else [1, 1]
    with pytest.raises(ValueError, match=MSG_DUPLICATE):
        BinaryLabels.from_positive_indices(bad)
