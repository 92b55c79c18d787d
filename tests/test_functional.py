"""The scikit-learn-shaped functions (``rankereval.ndcg_score`` ...): against scikit-learn where
the definitions coincide, against slow per-query references elsewhere, and inside a real
scikit-learn cross-validation with the query ids routed to the scorer."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import rankereval
from rankereval import (UndefinedMetricWarning, dcg_score, map_score, mrr_score, ndcg_score, precision_at_k,
                        recall_at_k)

sklearn_metrics = pytest.importorskip("sklearn.metrics")


@st.composite
def dense(draw, distinct=False):
    n_q = draw(st.integers(1, 6))
    m = draw(st.integers(2, 8))
    y = draw(hnp.arrays(np.int64, (n_q, m), elements=st.integers(0, 3)))
    if distinct:
        s = np.stack([draw(st.permutations(range(m))) for _ in range(n_q)]).astype(np.float64)
    else:  # few values: many ties
        s = draw(hnp.arrays(np.float64, (n_q, m), elements=st.sampled_from([0.0, 0.5, 1.0, 2.0])))
    return y, s


def flat(y, s, rng):
    """The dense rows as shuffled flat rows with a qid per row (qid = row number)."""
    n_q, m = y.shape
    qid = np.repeat(np.arange(n_q), m)
    order = rng.permutation(n_q * m)
    # a shuffle keeps each query's rows in their column order (ties: the earlier column first)
    order = order[np.argsort(np.arange(n_q * m)[order] % m, kind="stable")]
    return y.reshape(-1)[order], s.reshape(-1)[order], qid[order]


@given(dense(), st.one_of(st.none(), st.integers(1, 9)))
def test_ndcg_and_dcg_equal_sklearn_with_ties(data, k):
    y, s = data
    assert ndcg_score(y, s, k=k) == pytest.approx(sklearn_metrics.ndcg_score(y, s, k=k), rel=1e-12, abs=1e-12)
    assert dcg_score(y, s, k=k) == pytest.approx(sklearn_metrics.dcg_score(y, s, k=k), rel=1e-12, abs=1e-12)
    assert dcg_score(y, s, k=k, log_base="e") == pytest.approx(
        sklearn_metrics.dcg_score(y, s, k=k, log_base=np.e), rel=1e-12, abs=1e-12)
    for base in (10, 1.5, 3):  # any base, scikit-learn's log_base
        assert dcg_score(y, s, k=k, log_base=base) == pytest.approx(
            sklearn_metrics.dcg_score(y, s, k=k, log_base=base), rel=1e-12, abs=1e-12)
    # the same numbers from flat, shuffled rows with a qid
    yf, sf, qid = flat(y, s, np.random.default_rng(0))
    assert ndcg_score(yf, sf, k=k, qid=qid) == pytest.approx(ndcg_score(y, s, k=k), rel=1e-12, abs=1e-12)


@given(dense(distinct=True), st.one_of(st.none(), st.integers(1, 9)))
def test_ignore_ties_equals_sklearn_without_ties(data, k):
    y, s = data
    assert ndcg_score(y, s, k=k, ignore_ties=True) == pytest.approx(
        sklearn_metrics.ndcg_score(y, s, k=k, ignore_ties=True), rel=1e-12, abs=1e-12)
    assert ndcg_score(y, s, k=k, ignore_ties=True) == pytest.approx(ndcg_score(y, s, k=k), rel=1e-12, abs=1e-12)


def test_sample_weight_equals_sklearn():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, (20, 7))
    s = rng.integers(0, 3, (20, 7)).astype(float)
    w = rng.random(20)
    assert ndcg_score(y, s, k=3, sample_weight=w) == pytest.approx(
        sklearn_metrics.ndcg_score(y, s, k=3, sample_weight=w), rel=1e-12)
    assert dcg_score(y, s, sample_weight=w) == pytest.approx(sklearn_metrics.dcg_score(y, s, sample_weight=w),
                                                             rel=1e-12)


@given(dense(distinct=True))
def test_map_equals_sklearn_lrap_when_defined(data):
    y, s = data
    keep = (y >= 1).any(axis=1)  # LRAP calls a row without relevant labels 1.0; AP: undefined
    if not keep.any():
        return
    y, s = (y[keep] >= 1).astype(int), s[keep]
    assert map_score(y, s) == pytest.approx(sklearn_metrics.label_ranking_average_precision_score(y, s), rel=1e-12)


# ---- slow literal references for the binary metrics -----------------------------------------

def ref_per_query(y, s, qid, level, f):
    out = []
    for q in sorted(set(qid.tolist())):
        rows = np.flatnonzero(qid == q)
        order = sorted(range(rows.size), key=lambda j: (-s[rows[j]], j))
        rel = [1 if y[rows[j]] >= level else 0 for j in order]
        out.append(f(rel) if sum(rel) else np.nan)
    return np.array(out)


def ref_precision(k):
    return lambda rel: sum(rel[:k]) / k


def ref_recall(k):
    return lambda rel: sum(rel[:k]) / sum(rel)


def ref_rr(k):
    return lambda rel: next((1.0 / (i + 1) for i, r in enumerate(rel[:k]) if r), 0.0)


def ref_ap(k):
    def ap(rel):
        top = rel[:k]
        hits = [sum(top[: i + 1]) / (i + 1) for i, r in enumerate(top) if r]
        return sum(hits) / min(k, sum(rel))
    return ap


@st.composite
def flat_rows(draw):
    n = draw(st.integers(1, 30))
    qid = np.array(draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)))
    y = np.array(draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    s = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.5, 3.0]), min_size=n, max_size=n)))
    return y, s, qid


@given(flat_rows(), st.integers(1, 6), st.sampled_from([1, 2]))
def test_binary_functions_match_reference(data, k, level):
    y, s, qid = data
    cases = [(precision_at_k, ref_precision(k), {"k": k}), (recall_at_k, ref_recall(k), {"k": k}),
             (mrr_score, ref_rr(k), {"k": k}), (map_score, ref_ap(k), {"k": k}),
             (mrr_score, ref_rr(None), {}), (map_score, ref_ap(10**9), {})]
    for func, ref, kw in cases:
        expected = ref_per_query(y, s, qid, level, ref)
        got = func(y, s, qid=qid, relevance_level=level, nan_handling="drop", **kw)
        want = np.nanmean(expected) if not np.isnan(expected).all() else np.nan
        assert got == pytest.approx(want, rel=1e-12, nan_ok=True), func.__name__
        assert func(y, s, qid=qid, relevance_level=level, nan_handling="zerofill", **kw) == pytest.approx(
            np.nan_to_num(expected).mean(), rel=1e-12)


def test_propagate_warns_and_group_equals_qid():
    y = np.array([0, 0, 1, 0, 1])
    s = np.array([0.3, 0.2, 0.1, 0.5, 0.4])
    with pytest.warns(UndefinedMetricWarning):
        assert np.isnan(mrr_score([0, 0, 1, 0, 0], s, group=[3, 2]))
    assert mrr_score(y, s, group=[3, 2]) == mrr_score(y, s, qid=["a", "a", "a", "b", "b"]) == pytest.approx(
        (1 / 3 + 1 / 2) / 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ndcg_score([0, 0, 0], [1, 2, 3], group=[3]) == 0.0  # as scikit-learn: no relevant, 0


def test_exported_under_the_package():
    for f in (ndcg_score, dcg_score, map_score, precision_at_k, recall_at_k, mrr_score):
        assert getattr(rankereval, f.__name__) is f and f.__module__ == "rankereval"


@pytest.mark.parametrize("call, exc, match", [
    (lambda: ndcg_score([1, 0, 1], [0.1, 0.2, 0.3]), ValueError, "give 2-D arrays"),
    (lambda: ndcg_score([[1, 0]], [[0.1, 0.2, 0.3]]), ValueError, "same shape"),
    (lambda: ndcg_score([1, 0], [0.1, 0.2, 0.3], qid=[0, 0, 0]), ValueError, "y_true has 2 rows, expected 3"),
    (lambda: ndcg_score([1, 0, 1], [0.1, 0.2, 0.3], qid=[0, 0]), ValueError, "qid has 2 rows, expected 3"),
    (lambda: ndcg_score([1, 0, 1], [0.1, np.nan, 0.3], qid=[0, 0, 0]), ValueError, r"y_score\[1\] is nan"),
    (lambda: ndcg_score([1, -1, 1], [0.1, 0.2, 0.3], qid=[0, 0, 0]), ValueError, r"y_true\[1\] = -1.0"),
    (lambda: dcg_score([[1, 0]], [[0.1, 0.2]], log_base=1), ValueError, "log_base must be '2', 'e' or a number > 1"),
    (lambda: ndcg_score([[1, 0]], [[0.1, 0.2]], ignore_ties=1), TypeError, "ignore_ties must be True or False"),
    (lambda: ndcg_score([[1, 0]], [[0.1, 0.2]], k=0), ValueError, "k must be an integer > 0"),
    (lambda: ndcg_score([[1, 0]], [[0.1, 0.2]], sample_weight=[1, 2]), ValueError, "sample_weight has 2"),
    (lambda: ndcg_score([[1, 0]], [[0.1, 0.2]], nan_handling="x"), ValueError, "nan_handling"),
    (lambda: precision_at_k([1, 0], [0.1, 0.2], group=[3], k=1), ValueError, "group sizes sum to 3"),
    (lambda: precision_at_k([1, 0], [0.1, 0.2], group=[2]), TypeError, "k"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---- a real scikit-learn cross-validation ----------------------------------------------------

def test_make_scorer_routes_qid_in_cross_validation():
    """The pattern of the guide: a pointwise model, query ids routed to the scorer with
    scikit-learn's metadata routing, folds that keep each query whole (GroupKFold)."""
    sklearn = pytest.importorskip("sklearn")
    from sklearn.linear_model import Ridge
    from sklearn.model_selection import GroupKFold, cross_validate

    rng = np.random.default_rng(0)
    n_q, per = 30, 10
    qid = rng.permutation(np.repeat(np.arange(100, 100 + n_q), per))  # rows of a query scattered
    X = rng.standard_normal((n_q * per, 4))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.standard_normal(n_q * per)), 0, 3)
    with sklearn.config_context(enable_metadata_routing=True):
        scorer = sklearn_metrics.make_scorer(ndcg_score, k=5).set_score_request(qid=True)
        cv = GroupKFold(n_splits=3)
        res = cross_validate(Ridge(), X, y, scoring=scorer, cv=cv, params={"qid": qid, "groups": qid})
    # the same folds by hand, scored by scikit-learn on dense (query x document) matrices
    expected = []
    for train, test in cv.split(X, y, groups=qid):
        pred = Ridge().fit(X[train], y[train]).predict(X[test])
        order = np.argsort(qid[test], kind="stable")
        yt, pt = y[test][order].reshape(-1, per), pred[order].reshape(-1, per)
        expected.append(sklearn_metrics.ndcg_score(yt, pt, k=5))
    assert np.allclose(res["test_score"], expected, rtol=1e-12)
