"""Grouped learning-to-rank arrays: ``*.from_groups`` against a slow per-query reference."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rankereval import BinaryLabels, NumericLabels, Rankings


# ---- slow literal reference: one Python loop per query -------------------------------------

def ref_queries(qid=None, group=None):
    """[(query id, [row numbers in input order])] in result order."""
    if group is not None:
        out, start = [], 0
        for i, size in enumerate(group):
            out.append((i, list(range(start, start + size))))
            start += size
        return out
    return [(q, [i for i in range(len(qid)) if qid[i] == q]) for q in sorted(set(qid))]


def ref_rankings(scores, k=None, **layout):
    out = []
    for _, rows in ref_queries(**layout):
        order = sorted(range(len(rows)), key=lambda j: (-scores[rows[j]], j))  # ties: earlier row
        out.append(order[:k] if k is not None else order)
    return out


def ref_binary(y, level, **layout):
    return [[j for j, i in enumerate(rows) if y[i] >= level] for _, rows in ref_queries(**layout)]


def ref_numeric(y, **layout):
    return [[float(y[i]) for i in rows if y[i] != 0] for _, rows in ref_queries(**layout)]


@st.composite
def grouped(draw, max_rows=40):
    n = draw(st.integers(1, max_rows))
    n_q = draw(st.integers(1, min(n, 8)))
    qid = draw(st.lists(st.integers(-3, n_q), min_size=n, max_size=n))
    # few distinct values: ties within a query are common
    scores = draw(st.lists(st.sampled_from([-1.5, 0.0, 0.25, 0.5, 2.0, 1e9]), min_size=n, max_size=n))
    y = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    return np.array(qid), np.array(scores), np.array(y)


@given(grouped(), st.one_of(st.none(), st.integers(1, 5)), st.sampled_from(["int", "str", "sorted"]))
def test_from_groups_qid_matches_reference(data, k, form):
    qid, scores, y = data
    if form == "str":
        qid = np.array([f"q{v:+d}" for v in qid])
    elif form == "sorted":  # contiguous, ascending (XGBoost's layout): no reordering at all
        order = np.argsort(qid, kind="stable")
        qid, scores, y = qid[order], scores[order], y[order]
    assert Rankings.from_groups(scores, qid, k=k).to_list() == ref_rankings(scores, k, qid=list(qid))
    assert BinaryLabels.from_groups(y, qid, relevance_level=2).indices_to_list() == ref_binary(y, 2, qid=list(qid))
    assert NumericLabels.from_groups(y, qid).labels_to_list() == ref_numeric(y, qid=list(qid))


@given(st.lists(st.integers(1, 6), min_size=1, max_size=6), st.data())
def test_from_groups_group_sizes_match_reference(sizes, data):
    n = sum(sizes)
    scores = np.array(data.draw(st.lists(st.sampled_from([0.0, 1.0, 3.0]), min_size=n, max_size=n)))
    y = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    assert Rankings.from_groups(scores, group=sizes).to_list() == ref_rankings(scores, group=sizes)
    assert BinaryLabels.from_groups(y, group=sizes).indices_to_list() == ref_binary(y, 1, group=sizes)
    assert NumericLabels.from_groups(y, group=sizes).labels_to_list() == ref_numeric(y, group=sizes)
    # the same layout given as qid
    qid = np.repeat(np.arange(len(sizes)), sizes)
    assert Rankings.from_groups(scores, qid) == Rankings.from_groups(scores, group=sizes)


def test_contiguous_unsorted_blocks_and_wide_ids():
    # contiguous queries in descending order: blocks reordered without a sort of the rows
    qid = np.array([9, 9, 5, 5, 5, 1])
    s = np.array([0.1, 0.2, 3.0, 1.0, 2.0, 7.0])
    assert Rankings.from_groups(s, qid).to_list() == [[0], [0, 2, 1], [1, 0]]
    # integer ids too far apart for the composite key fall back to a stable argsort
    wide = np.array([2**62, -2**62, 2**62, -2**62], dtype=np.int64)
    s = np.array([1.0, 2.0, 3.0, 2.0])
    assert Rankings.from_groups(s, wide).to_list() == ref_rankings(s, qid=list(wide))


def test_large_shuffled_qid_matches_lexsort():
    rng = np.random.default_rng(3)
    n, nq = 200_000, 3_000
    qid = rng.integers(0, nq, n)
    s = rng.integers(0, 50, n).astype(np.float32)  # many ties
    r = Rankings.from_groups(s, qid)
    order = np.lexsort((np.arange(n), -s, qid))  # by query, score descending, then row
    qs = qid[order]
    starts = np.flatnonzero(np.r_[True, qs[1:] != qs[:-1]])
    pos = np.empty(n, dtype=np.int64)  # each row's position within its query
    by_q = np.argsort(qid, kind="stable")
    qb = qid[by_q]
    sb = np.flatnonzero(np.r_[True, qb[1:] != qb[:-1]])
    pos[by_q] = np.arange(n) - np.repeat(sb, np.diff(np.r_[sb, n]))
    flat = pos[order]
    lens = np.diff(np.r_[starts, n])
    assert np.array_equal(r.lengths, lens)
    got = r.indices[r.indices >= 0]
    assert np.array_equal(got, flat)


def test_inputs_of_other_types():
    assert Rankings.from_groups([1, 3, 2], ["b", "b", "a"]).to_list() == [[0], [1, 0]]
    assert Rankings.from_groups(np.array([True, False]), group=[2]).to_list() == [[0, 1]]
    assert Rankings.from_groups(np.array([1, 5, 5], dtype=np.int8), group=np.array([3.0])).to_list() == [[1, 2, 0]]


@pytest.mark.parametrize("call, exc, match", [
    (lambda: Rankings.from_groups([1.0, 2.0], [0, 0, 1]), ValueError, "qid has 3 rows, expected 2"),
    (lambda: Rankings.from_groups([1.0, np.nan], [0, 0]), ValueError, r"scores\[1\] is nan"),
    (lambda: Rankings.from_groups([1.0, np.inf], [0, 0]), ValueError, r"scores\[1\] is inf"),
    (lambda: BinaryLabels.from_groups([1.0, np.nan], [0, 0]), ValueError, r"y\[1\] is nan"),
    (lambda: NumericLabels.from_groups([1.0, -1.0], [1, 0]), ValueError, r"y\[1\] = -1.0: grades must be non"),
    (lambda: Rankings.from_groups([1.0, 2.0], [0.0, np.nan]), ValueError, r"qid\[1\] is NaN"),
    (lambda: Rankings.from_groups([1.0, 2.0], np.array(["a", 1], dtype=object)), TypeError,
     "qid holds ids of different types"),
    (lambda: Rankings.from_groups([1.0, 2.0, 3.0], group=[1, 1]), ValueError, "group sizes sum to 2, but the data has 3"),
    (lambda: Rankings.from_groups([1.0, 2.0], group=[2, 0]), ValueError, r"group\[1\] = 0"),
    (lambda: Rankings.from_groups([1.0, 2.0], group=[1.5, 0.5]), ValueError, "group: sizes must be integers"),
    (lambda: Rankings.from_groups([1.0, 2.0]), TypeError, "give the query of each row as qid="),
    (lambda: Rankings.from_groups([1.0, 2.0], [0, 0], group=[2]), TypeError, "not both"),
    (lambda: Rankings.from_groups([[1.0, 2.0]], [0, 0]), ValueError, "scores: expected a 1-D array"),
    (lambda: Rankings.from_groups(["x", "y"], [0, 0]), ValueError, "scores: scores must be real numbers"),
    (lambda: Rankings.from_groups([1.0, 2.0], [0, 0], k=0), ValueError, "k must be an integer > 0"),
    (lambda: BinaryLabels.from_groups([1, 2], [0, 0], relevance_level="x"), ValueError, "relevance_level"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
