"""The one-pass construction paths agree with the general ones.

``Rankings.from_ranked_indices`` converts a C-contiguous 2-D array in one pass (per row:
copy and range check, written with streaming stores for a large output, then a duplicate
check with per-thread stamps for ids < 2**22, a bitset for ids < 2**26, both growing with
the ids, or a hash table beyond); ``BinaryLabels/NumericLabels.from_matrix`` take canonical
float CSR input through two typed passes. Everything else goes the general way. These tests
pit the two against each other, and check that every error still names the problem.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import rankereval.data._conversion
from rankereval import BinaryLabels, NumericLabels, Rankings
from rankereval.data import _convert


class _OnePass:
    """What the one-pass conversions of a test did: ``(fits, large)`` per call."""

    def __init__(self, streamed):
        self.streamed = streamed
        self.calls = []

    def took_it(self):
        """The last conversion took the one-pass path, with the stores of this test's mode."""
        return bool(self.calls) and self.calls[-1] == (True, self.streamed)


@pytest.fixture(params=["cached", "streamed"])
def store(request, monkeypatch):
    """Run a test with ordinary stores and with streaming stores (any size streams), and
    record each one-pass conversion: an equality with the general path proves nothing if
    the one-pass path was never taken."""
    streamed = request.param == "streamed"
    if streamed:
        monkeypatch.setattr(rankereval.data._conversion, "_STREAM_BYTES", 0)
    seen = _OnePass(streamed)
    real = _convert.copy_dense_ids

    def spy(a, out, large, n_threads):
        fits, bad = real(a, out, large, n_threads)
        seen.calls.append((fits, large))
        return fits, bad

    monkeypatch.setattr(_convert, "copy_dense_ids", spy)
    return seen


def _distinct_rows(rng, n, m, max_id):
    """n rows of m distinct ids in [0, max_id], the largest id present in the first row."""
    rows = np.sort(rng.integers(0, max_id - m + 2, size=(n, m)), axis=1) + np.arange(m)
    rows[0, -1] = max_id
    return rows


@pytest.mark.parametrize("max_id", [150, 5_000, 300_000, 2**24, 2**27, 2**31 - 1])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_dense_rankings_duplicates_found_at_any_id_range(max_id, dtype, store):
    # 6000 x 100 = 600k ids: above the threading threshold, several bitset growths per thread
    rng = np.random.default_rng(max_id % 997)
    a = _distinct_rows(rng, 6000, 100, max_id).astype(dtype)
    a = rng.permuted(a, axis=1)
    r = Rankings.from_ranked_indices(a)
    assert store.took_it()
    assert r.indices.dtype == np.int32
    np.testing.assert_array_equal(r.indices, a)
    # the general path (a strided view) gives the same storage
    f = np.asfortranarray(a)
    assert not f.flags.c_contiguous
    assert Rankings.from_ranked_indices(f) == r
    for row in (0, 2999, 5999):
        bad = a.copy()
        bad[row, 77] = bad[row, 3]
        with pytest.raises(ValueError, match=rf"duplicate item id {bad[row, 3]} in row {row}\b"):
            Rankings.from_ranked_indices(bad)
        assert store.took_it()
        with pytest.raises(ValueError, match=rf"in row {row}\b"):
            Rankings.from_ranked_indices(np.asfortranarray(bad))


def test_dense_rankings_counts_every_row_with_duplicates(store):
    a = np.tile(np.arange(100, dtype=np.int64), (6000, 1))
    a[[5, 4000, 4001], 1] = 0
    with pytest.raises(ValueError, match=r"duplicate item id 0 in row 5 \(and 2 more rows with duplicates\)"):
        Rankings.from_ranked_indices(a)
    assert store.took_it()


@pytest.mark.parametrize("value", [-1, 2**31, 2**40])
def test_dense_rankings_out_of_int31_take_the_general_path(value, store):
    a = np.tile(np.arange(100, dtype=np.int64), (6000, 1))
    a[4321, 50] = value
    if value < 0:
        with pytest.raises(ValueError, match="non-negative"):
            Rankings.from_ranked_indices(a)
    else:
        r = Rankings.from_ranked_indices(a)
        assert r.indices.dtype == np.int64
        np.testing.assert_array_equal(r.indices, a)
    assert [fits for fits, _ in store.calls] == [False]  # seen by the one pass, then handed on


def _random_csr(rng, n_rows, n_cols, dtype, graded):
    # sp.random (not random_array, SciPy >= 1.12): the suite also runs on the oldest SciPy supported
    m = sp.csr_array(sp.random(n_rows, n_cols, density=0.01, format="csr", dtype=np.float64, random_state=rng))
    m.data[:] = rng.integers(1, 4, m.nnz) if graded else 1
    m.sort_indices()
    return sp.csr_array((m.data.astype(dtype), m.indices, m.indptr), shape=m.shape)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cls", [BinaryLabels, NumericLabels])
def test_csr_labels_fast_path_matches_general_path(cls, dtype):
    rng = np.random.default_rng(7)
    m = _random_csr(rng, 3000, 2000, dtype, graded=cls is NumericLabels)
    fast = cls.from_matrix(m)
    assert cls._from_csr_fast(m) == fast  # the typed passes took it (None would mean not)
    general = cls.from_matrix(m.toarray())  # the dense path: no typed CSR check
    assert fast == general
    np.testing.assert_array_equal(fast.indptr, m.indptr)
    np.testing.assert_array_equal(fast.indices, m.indices)
    np.testing.assert_array_equal(fast.values, m.data.astype(np.float64))
    assert fast.values.dtype == np.float64 and not fast.values.flags.writeable
    assert fast.indices.dtype == np.int32


def test_ragged_labels_fast_path_mixed_id_dtypes():
    """Ragged rows as Arrow list columns give them (int64 offsets, int32 ids): the one-pass
    copy takes canonical rows and hands everything else to the general path (None)."""
    rng = np.random.default_rng(9)
    m = _random_csr(rng, 500, 300, np.float64, graded=False)
    indptr, indices = m.indptr.astype(np.int64), m.indices.astype(np.int32)
    fast = BinaryLabels._from_ragged_fast(indptr, indices, None, 300)
    assert fast == BinaryLabels.from_matrix(m) and fast.indices.dtype == np.int32
    assert not np.shares_memory(fast.indices, indices)
    assert NumericLabels._from_ragged_fast(indptr, indices, None, 300) is None  # grades needed
    unsorted = indices.copy()
    row = int(np.flatnonzero(np.diff(indptr) >= 2)[0])
    unsorted[indptr[row]], unsorted[indptr[row] + 1] = unsorted[indptr[row] + 1], unsorted[indptr[row]]
    assert BinaryLabels._from_ragged_fast(indptr, unsorted, None, 300) is None
    # offsets that would wrap to a valid-looking int32 sequence are not cast
    ids = np.array([0, 1, 2], dtype=np.int32)
    assert BinaryLabels._from_ragged_fast(np.array([0, 2**32 + 1, 3]), ids, None, 3) is None
    assert BinaryLabels._from_ragged_fast(np.array([0, 1, 3]), ids, None, 3).indices_to_list() == [[0], [1, 2]]


def test_csr_labels_fast_path_leaves_input_alone():
    rng = np.random.default_rng(8)
    m = _random_csr(rng, 100, 50, np.float32, graded=False)
    before = (m.data.copy(), m.indices.copy(), m.indptr.copy())
    y = BinaryLabels.from_matrix(m)
    for a, b in zip(before, (m.data, m.indices, m.indptr)):
        np.testing.assert_array_equal(a, b)
    assert not np.shares_memory(y.indices, m.indices) and not np.shares_memory(y.indptr, m.indptr)


def test_binary_values_made_on_demand_are_ones_and_frozen():
    y = BinaryLabels.from_matrix(sp.csr_array(np.array([[0, 1, 1], [1, 0, 0]], dtype=np.float32)))
    np.testing.assert_array_equal(y.values, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError):
        y.values[0] = 5
    assert y.labels_to_list() == [[1.0, 1.0], [1.0]]
    assert y.csr.toarray().tolist() == [[0, 1, 1], [1, 0, 0]]


@pytest.mark.parametrize(
    "edit, message",
    [
        ("explicit_zero", None),
        ("unsorted", None),
        ("duplicate", None),
        ("nan", "finite"),
        ("two", "must be 0 or 1"),
        ("negative", "must be 0 or 1"),
        ("column_out_of_range", "invalid sparse csr structure"),
        ("decreasing_indptr", "invalid sparse csr structure"),
    ],
)
def test_csr_labels_that_leave_the_fast_path(edit, message):
    dense = np.array([[1, 0, 1, 1], [0, 1, 0, 0], [1, 1, 0, 1]], dtype=np.float64)
    m = sp.csr_array(dense)
    data, indices, indptr = m.data.copy(), m.indices.copy(), m.indptr.copy()
    expected = dense.copy()
    if edit == "explicit_zero":
        data[1] = 0
        expected[0, 2] = 0
    elif edit == "unsorted":
        indices[0], indices[1] = indices[1], indices[0]
    elif edit == "duplicate":  # scipy sums duplicates: 1 + 1 = 2 is not binary
        indices[1] = indices[0]
    elif edit == "nan":
        data[2] = np.nan
    elif edit == "two":
        data[2] = 2
    elif edit == "negative":
        data[2] = -1
    elif edit == "column_out_of_range":
        indices[-1] = 9
    elif edit == "decreasing_indptr":
        indptr[1], indptr[2] = indptr[2], indptr[1]
    x = sp.csr_array((data, indices, indptr), shape=m.shape)
    if edit == "duplicate":
        with pytest.raises(ValueError, match="must be 0 or 1"):
            BinaryLabels.from_matrix(x)
        assert NumericLabels.from_matrix(x).labels_to_list()[0] == [2.0, 1.0]
    elif message is None:
        assert BinaryLabels.from_matrix(x) == BinaryLabels.from_matrix(expected)
    else:
        with pytest.raises(ValueError, match=message):
            BinaryLabels.from_matrix(x)



def test_dense_rankings_stamps_survive_the_wrap_around(store):
    # Stamps are 16-bit: a thread's 65 536th row gets stamp 1 again, the stamp of its first
    # row, so the stamps must be cleared then. Row 0 holds ids 1000-1003, used nowhere else
    # until row 65 535 (the first thread's 65 536th row) takes id 1000 again: without the
    # clearing it would look repeated there.
    rng = np.random.default_rng(11)
    a = np.ascontiguousarray(np.argsort(rng.random((140_000, 100)), axis=1)[:, :4])
    a[0] = [1000, 1001, 1002, 1003]
    a[65_535] = [1000, 5, 6, 7]
    r = Rankings.from_ranked_indices(a)
    assert store.took_it()
    np.testing.assert_array_equal(r.indices, a)
    for row in (65_534, 65_535, 65_536, 131_072, 139_999):
        bad = a.copy()
        bad[row, 3] = bad[row, 0]
        with pytest.raises(ValueError, match=rf"duplicate item id {bad[row, 0]} in row {row}\b"):
            Rankings.from_ranked_indices(bad)


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 7, 8, 13, 33])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_dense_rankings_any_width_and_position(width, dtype, store):
    # Streaming stores write 4 ids at a time from the first 16-byte aligned slot of a row, so
    # rows of these widths start at every alignment and end with every tail length: each id
    # must arrive, and an id out of range must be seen at every position of a row.
    rng = np.random.default_rng(width)
    n = 64
    a = np.argsort(rng.random((n, 50)), axis=1)[:, :width].astype(dtype)
    r = Rankings.from_ranked_indices(a)
    assert store.took_it()
    np.testing.assert_array_equal(r.indices, a)
    assert r.indices.dtype == np.int32
    for j in range(width):
        row = (7 * j) % n
        for value in (-1, 2**31 - 1 if dtype == np.int32 else 2**31):
            bad = a.copy()
            bad[row, j] = value
            if value < 0:
                with pytest.raises(ValueError, match=rf"non-negative, got -1 in row {row}\b"):
                    Rankings.from_ranked_indices(bad)
            else:
                out = Rankings.from_ranked_indices(bad).indices
                np.testing.assert_array_equal(out, bad)
            # the one pass saw the id as out of range, except 2**31 - 1, which fits
            assert store.calls[-1][0] == (value == 2**31 - 1)
        if width > 1:
            bad = a.copy()
            bad[row, j] = bad[row, (j + 1) % width]
            with pytest.raises(ValueError, match=rf"duplicate item id {bad[row, j]} in row {row}\b"):
                Rankings.from_ranked_indices(bad)


def _csr_status_reference(indptr, indices, n_cols):
    """copy_csr_structure's verdict, literally: 2 invalid, 1 a row not strictly increasing,
    0 canonical."""
    if len(indptr) < 1 or indptr[0] != 0 or indptr[-1] > len(indices) or np.any(np.diff(indptr) < 0):
        return 2
    rows = [indices[indptr[i]:indptr[i + 1]] for i in range(len(indptr) - 1)]
    if any(v < 0 or v >= n_cols for r in rows for v in r):
        return 2
    return 1 if any(np.any(np.diff(r) <= 0) for r in rows) else 0


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_copy_csr_structure_verdict_and_copy(seed, dtype):
    """The flat passes of copy_csr_structure (a count of neighbours that do not increase,
    less those at row boundaries) give the verdict of a row-by-row check, with empty rows,
    rows that go down across a boundary, unsorted rows, repeats and ids out of range."""
    rng = np.random.default_rng(seed)
    n_rows, n_cols = int(rng.integers(0, 12)), int(rng.integers(1, 30))
    lengths = rng.integers(0, 6, n_rows) * (rng.random(n_rows) < 0.7)
    rows = [np.sort(rng.choice(n_cols, min(int(k), n_cols), replace=False)) for k in lengths]
    fault = rng.integers(0, 5)
    nonempty = [i for i, r in enumerate(rows) if r.size > 1]
    if fault == 1 and nonempty:  # unsorted row
        r = rows[nonempty[0]]
        r[[0, -1]] = r[[-1, 0]]
    elif fault == 2 and nonempty:  # a repeat
        rows[nonempty[-1]][-1] = rows[nonempty[-1]][0]
    elif fault == 3 and rows and any(r.size for r in rows):  # out of range
        next(r for r in rows if r.size)[-1] = n_cols + int(rng.integers(0, 3))
    indptr = np.concatenate(([0], np.cumsum([r.size for r in rows]))).astype(dtype)
    indices = (np.concatenate(rows) if rows else np.zeros(0)).astype(dtype)
    out_indptr = np.empty(indptr.size, dtype=np.int32)
    out_indices = np.empty(indices.size, dtype=np.int32)
    expected = _csr_status_reference(indptr, indices, n_cols)
    for threads in (1, 2):
        got = _convert.copy_csr_structure(indptr, indices, n_cols, out_indptr, out_indices, threads)
        assert got == expected
        if got == 0:
            assert np.array_equal(out_indptr, indptr) and np.array_equal(out_indices, indices)


@pytest.mark.parametrize("binary", [True, False])
def test_check_label_data_counts(binary):
    values = np.array([0.0, 1.0, -0.0, 1.0, 0.0], dtype=np.float64)
    assert _convert.check_label_data(values, binary, 1) == (3, True)
    for bad in (np.nan, np.inf, -1.0) + ((2.0, 0.5) if binary else ()):
        v = values.copy()
        v[3] = bad
        for threads in (1, 2):
            assert _convert.check_label_data(v.astype(np.float32), binary, threads) == (3, False)
    if not binary:
        assert _convert.check_label_data(np.array([2.5, 0.0, 3.0]), False, 2) == (1, True)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_copy_csr_structure_across_chunks(dtype):
    """The flat passes take the ids in chunks of 65,536: a pair of neighbours across a
    chunk's border counts (inside a row) or not (at a row boundary), an id out of range or
    negative in a later chunk is seen, and 32-bit ids are in range of any larger n_cols."""
    chunk = 1 << 16
    n = 3 * chunk + 123
    indices = np.arange(n, dtype=dtype)

    def verdict(indptr, ids, n_cols):
        out_indptr = np.empty(len(indptr), dtype=np.int64)
        out_indices = np.empty(len(ids), dtype=np.int64)
        got = [_convert.copy_csr_structure(np.asarray(indptr, dtype=dtype), ids, n_cols, out_indptr, out_indices, t)
               for t in (1, 2)]
        assert got[0] == got[1] == _csr_status_reference(np.asarray(indptr), ids, n_cols)
        if got[0] == 0:
            assert np.array_equal(out_indices, ids)
        return got[0]

    one_row = [0, n]
    assert verdict(one_row, indices, n) == 0
    down = indices.copy()
    down[2 * chunk] = down[2 * chunk - 1]  # a repeat across the border of chunks 1 and 2
    assert verdict(one_row, down, n) == 1
    restart = indices.copy()
    restart[2 * chunk:] -= 2 * chunk  # a second row starts at the border, from 0 again
    assert verdict([0, 2 * chunk, n], restart, n) == 0
    assert verdict(one_row, restart, n) == 1
    for bad in (-1, n):
        wrong = indices.copy()
        wrong[-1] = bad
        assert verdict(one_row, wrong, n) == 2
    if dtype == np.int32:  # ids up to 2**31 - 1 and n_cols beyond what 32 bits hold
        big = np.array([0, 5, 2**31 - 1], dtype=np.int32)
        assert verdict([0, 3], big, 2**33) == 0
        assert verdict([0, 3], np.array([-1, 5, 7], dtype=np.int32), 2**33) == 2


@pytest.mark.parametrize("binary", [True, False])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_check_label_data_across_chunks(binary, dtype):
    """Counts over several chunks of 65,536 values, and a bad value in the last one."""
    rng = np.random.default_rng(1)
    values = (rng.random(3 * (1 << 16) + 77) < 0.3).astype(dtype)
    zeros = int(np.count_nonzero(values == 0))
    for threads in (1, 2):
        assert _convert.check_label_data(values, binary, threads) == (zeros, True)
        v = values.copy()
        v[-1] = np.nan
        assert _convert.check_label_data(v, binary, threads) == (zeros - (values[-1] == 0), False)
