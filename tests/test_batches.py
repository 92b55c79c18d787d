"""Batches: row selection and concatenation of Labels and Rankings, and reading padded
rankings back with ``from_ranked_indices(pad=..., lengths=...)``.

Each operation is compared with the same operation on plain Python lists; storage
invariants (read-only, sharing for slices, dtypes) and every documented error are checked.
"""
import contextlib
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from rankereval import NDCG, BinaryLabels, InvalidValuesWarning, NumericLabels, Precision, Rankings

id_rows = st.lists(st.lists(st.integers(0, 30), unique=True, min_size=1, max_size=8), min_size=1, max_size=8)


def selections(n):
    """Row selections of n rows and the row numbers they pick."""
    return st.one_of(
        st.tuples(st.integers(-n - 2, n + 2) | st.none(), st.integers(-n - 2, n + 2) | st.none(),
                  st.sampled_from([None, 1, 2, -1, -3])).map(lambda t: (slice(*t), list(range(n))[slice(*t)])),
        st.lists(st.booleans(), min_size=n, max_size=n).map(
            lambda m: (np.array(m, dtype=bool), [i for i in range(n) if m[i]])),
        st.lists(st.integers(-n, n - 1), max_size=2 * n).map(lambda r: (r, [i % n for i in r])),
        st.lists(st.integers(0, n - 1), max_size=2 * n).map(lambda r: (np.array(r, dtype=np.uint16), r)),
    )


@given(rows=id_rows, data=st.data())
def test_rankings_selection_matches_lists(rows, data):
    r = Rankings.from_ranked_indices(rows)
    key, picked = data.draw(selections(len(rows)))
    s = r[key]
    assert type(s) is Rankings
    assert s.to_list() == [rows[i] for i in picked]
    assert not s.indices.flags.writeable and not s.lengths.flags.writeable
    assert s.indices.flags.c_contiguous


@given(rows=id_rows, data=st.data())
def test_labels_selection_matches_lists(rows, data):
    y = BinaryLabels.from_positive_indices(rows)
    key, picked = data.draw(selections(len(rows)))
    s = y[key]
    assert type(s) is BinaryLabels and s.n_items == y.n_items
    assert s.indices_to_list() == [sorted(rows[i]) for i in picked]
    assert s.indptr.dtype == s.indices.dtype
    assert not s.indptr.flags.writeable and not s.indices.flags.writeable
    grades = [[float(1 + (j % 3)) for j in r] for r in rows]
    dense = np.zeros((len(rows), 31))
    for i, (r, g) in enumerate(zip(rows, grades)):
        dense[i, r] = g
    z = NumericLabels.from_matrix(dense)
    zs = z[key]
    assert type(zs) is NumericLabels
    assert zs.labels_to_list() == [z.labels_to_list()[i] for i in picked]
    assert zs.indices_to_list() == [z.indices_to_list()[i] for i in picked]


@given(rows=id_rows, cut=st.integers(0, 8), data=st.data())
def test_concatenate_inverts_slicing(rows, cut, data):
    r = Rankings.from_ranked_indices(rows)
    y = BinaryLabels.from_positive_indices(rows)
    cut = min(cut, len(rows))
    assert Rankings.concatenate([r[:cut], r[cut:]]) == r
    assert Rankings.concatenate([r[:cut], r[cut:]]).to_list() == rows
    joined = BinaryLabels.concatenate([y[:cut], y[cut:]])
    assert joined == y and joined.n_items == y.n_items
    # batches built separately: the result has as many items as the widest part
    parts = [BinaryLabels.from_positive_indices(rows[:cut] or [[]]), BinaryLabels.from_positive_indices(rows[cut:] or [[]])]
    both = BinaryLabels.concatenate(parts)
    assert both.n_items == max(p.n_items for p in parts)
    assert both.indices_to_list() == [sorted(x) for x in (rows[:cut] or [[]]) + (rows[cut:] or [[]])]


def test_slices_share_storage_and_stay_frozen():
    r = Rankings.from_ranked_indices(np.arange(40).reshape(8, 5))
    s = r[2:6]
    assert np.shares_memory(s.indices, r.indices)
    with pytest.raises(ValueError):
        s.indices.flags.writeable = True
    with pytest.raises(ValueError):
        s._indices.flags.writeable = True
    y = NumericLabels.from_matrix(np.arange(40.0).reshape(8, 5))
    t = y[3:]
    assert np.shares_memory(t.indices, y.indices) and np.shares_memory(t.values, y.values)
    with pytest.raises(ValueError):
        t.values.flags.writeable = True
    # a copy after pickling, equal to the slice
    assert pickle.loads(pickle.dumps(s)) == s
    assert pickle.loads(pickle.dumps(t)) == t


def test_metrics_on_selected_and_concatenated_rows():
    rng = np.random.default_rng(0)
    scores = rng.random((50, 30))
    y_true = BinaryLabels.from_matrix(rng.random((50, 30)) < 0.2)
    y_pred = Rankings.from_scores(scores, k=10)
    full = NDCG(10).score(y_true, y_pred)
    np.testing.assert_array_equal(NDCG(10).score(y_true[10:20], y_pred[10:20]), full[10:20])
    mask = full > 0.5
    np.testing.assert_array_equal(Precision(5).score(y_true[mask], y_pred[mask]),
                                  Precision(5).score(y_true, y_pred)[mask])
    batches = [Rankings.from_scores(scores[i:i + 16], k=10) for i in range(0, 50, 16)]
    assert Rankings.concatenate(batches) == y_pred
    np.testing.assert_array_equal(NDCG(10).score(y_true, Rankings.concatenate(batches)), full)


def test_concatenate_mixed_id_widths_and_lengths():
    a = Rankings.from_ranked_indices([[1, 2, 3, 4]])
    b = Rankings.from_ranked_indices([[2**40]])
    c = Rankings.concatenate([a, b, a[:0]])
    assert c.indices.dtype == np.int64
    assert c.to_list() == [[1, 2, 3, 4], [2**40]]
    assert c.indices.shape == (2, 4)
    x = BinaryLabels.from_positive_indices([[2**33]])
    y = BinaryLabels.from_positive_indices([[1]])
    z = BinaryLabels.concatenate([y, x])
    assert z.indices_to_list() == [[1], [2**33]] and z.indices.dtype == np.int64


@pytest.mark.parametrize("call, exc, match", [
    (lambda: Rankings.concatenate([]), ValueError, "rankings: need at least one"),
    (lambda: Rankings.concatenate(Rankings.from_ranked_indices([[1]])), TypeError, "rankings: expected a sequence"),
    (lambda: Rankings.concatenate([Rankings.from_ranked_indices([[1]]), [[2]]]), TypeError,
     r"rankings\[1\]: expected Rankings, got list"),
    (lambda: BinaryLabels.concatenate([NumericLabels.from_matrix([[1]])]), TypeError,
     r"labels\[0\]: expected BinaryLabels, got NumericLabels"),
    (lambda: NumericLabels.concatenate([]), ValueError, "labels: need at least one"),
    (lambda: BinaryLabels.concatenate([BinaryLabels.from_positive_indices([[9]])], n_items=5), ValueError,
     r"labels\[0\] has 10 items, more than n_items=5"),
    (lambda: BinaryLabels.concatenate([BinaryLabels.from_positive_indices([[9]])], n_items=-1), ValueError,
     "n_items must be"),
])
def test_concatenate_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_labels_base_class_concatenate_keeps_the_class():
    a = NumericLabels.from_matrix([[0, 2]])
    out = type(a).__mro__[1].concatenate([a, a])
    assert type(out) is NumericLabels and out.labels_to_list() == [[2.0], [2.0]]
    assert BinaryLabels.concatenate([BinaryLabels.from_positive_indices([[1]])], n_items=7).n_items == 7


@pytest.mark.parametrize("key, exc, match", [
    (0, TypeError, r"for row 0 write \[0:0 \+ 1\] or \[\[0\]\]"),
    (np.int64(1), TypeError, "for row 1"),
    ([0.5], IndexError, "row numbers must be integers"),
    (np.array([True, False]), IndexError, "boolean row mask has 2 entries, expected one per row"),
    ([3], IndexError, "row 3 is out of range for 3 rows"),
    ([-4], IndexError, "row -4 is out of range"),
    (np.zeros((1, 1), dtype=int), IndexError, "one-dimensional"),
    ("a", TypeError, "rows are selected with"),
])
def test_selection_errors(key, exc, match):
    r = Rankings.from_ranked_indices([[1], [2], [3]])
    y = BinaryLabels.from_positive_indices([[1], [2], [3]])
    for obj in (r, y):
        with pytest.raises(exc, match=match):
            obj[key]


def test_empty_selection():
    r = Rankings.from_ranked_indices([[1], [2]])
    assert r[[]].to_list() == [] and r[5:].to_list() == [] and r[np.zeros(2, dtype=bool)].n_rows == 0
    y = BinaryLabels.from_positive_indices([[1], [2]])
    assert y[[]].indices_to_list() == [] and y[2:1].n_rows == 0


# ---------------------------------------------------------------------------------------
# pad and lengths
# ---------------------------------------------------------------------------------------

@given(rows=st.lists(st.lists(st.integers(0, 2**33), unique=True, max_size=6), min_size=1, max_size=6))
def test_padded_indices_read_back(rows):
    with pytest.warns(InvalidValuesWarning) if any(len(x) == 0 for x in rows) else contextlib.nullcontext():
        r = Rankings.from_ranked_indices([np.array(x, dtype=np.int64) for x in rows])
    with pytest.warns(InvalidValuesWarning) if any(len(x) == 0 for x in rows) else contextlib.nullcontext():
        assert Rankings.from_ranked_indices(r.indices, pad=-1) == r
        assert Rankings.from_ranked_indices(r.indices, lengths=r.lengths) == r
        assert Rankings.from_ranked_indices(r.indices.tolist(), pad=-1).to_list() == rows


def test_pad_and_lengths_with_filters_and_other_pads():
    a = np.array([[5, 3, 0, 0], [1, 0, 0, 0]])
    with pytest.warns(InvalidValuesWarning):  # row 1 has nothing left
        r = Rankings.from_ranked_indices(a, pad=0, invalid_items=[1])
    assert r.to_list() == [[5, 3], []]
    assert Rankings.from_ranked_indices(a, lengths=np.array([3, 1], dtype=np.uint8)).to_list() == [[5, 3, 0], [1]]
    assert Rankings.from_ranked_indices(a, lengths=[2, 1]).to_list() == [[5, 3], [1]]


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(pad=-1, lengths=[1, 1]), ValueError, "give pad or lengths, not both"),
    (dict(pad=1.5), TypeError, "pad must be an integer"),
    (dict(pad=True), TypeError, "pad must be an integer"),
    (dict(lengths=[1]), ValueError, r"lengths must have one entry per row \(2\)"),
    (dict(lengths=[1, 5]), ValueError, r"lengths\[1\] = 5 is outside \[0, 3\]"),
    (dict(lengths=[1.0, 2.0]), ValueError, "lengths must be integers"),
    (dict(lengths=[3, 3]), ValueError, "indices: duplicate item id -1|indices: item ids must be non-negative"),
])
def test_pad_lengths_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Rankings.from_ranked_indices(np.array([[4, 2, -1], [7, -1, -1]]), **kwargs)


def test_pad_errors_on_input():
    with pytest.raises(ValueError, match="indices: row 0 has an item after its first pad value -1"):
        Rankings.from_ranked_indices(np.array([[4, -1, 2]]), pad=-1)
    with pytest.raises(ValueError, match="indices: pad and lengths need a 2-D array"):
        Rankings.from_ranked_indices([[1, 2], [3]], pad=-1)
    with pytest.raises(ValueError, match="indices: pad and lengths need a 2-D array"):
        Rankings.from_ranked_indices(np.array([1, 2]), pad=-1)
    with pytest.raises(ValueError, match="indices: item ids must be integers"):
        Rankings.from_ranked_indices(np.array([[1.0, -1.0]]), pad=-1)
    with pytest.raises(ValueError, match="indices: duplicate item id 4 in row 0"):
        Rankings.from_ranked_indices(np.array([[4, 4, -1]]), pad=-1)
