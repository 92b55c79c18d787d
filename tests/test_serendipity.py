"""Serendipity (Microsoft Recommenders' user_serendipity) and its similarities: the kernel
against the literal references of ``reference_beyond`` on hypothesis inputs, against
Recommenders' published test values and its functions themselves, and every entry point.
"""
import math
import pickle

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import rankereval
import reference_beyond as ref
from rankereval import (Accumulator, BinaryLabels, NumericLabels, Rankings, Serendipity, cooccurrence_similarity,
                        evaluate, feature_similarity)
from rankereval.metrics import from_name
from helpers import close, ranked

N_ITEMS = 10


# Recommenders' fixture (tests/unit/recommenders/evaluation/conftest.py::diversity_data), users
# 1, 2, 3 as rows 0, 1, 2 and item ids as they are (item 0 unused)
TRAIN = [[1, 2, 4], [3, 4], [3, 4, 5]]
RECO = [[3, 5], [2, 5], [1, 2]]
RELEVANCE = [[1, 0], [1, 1], [1, 0]]
FEATURES = [[0, 1, 1, 0, 0], [0, 1, 0, 1, 0], [0, 0, 1, 1, 0], [0, 0, 1, 0, 1], [0, 0, 0, 1, 1]]


def _fixture():
    train = BinaryLabels.from_positive_indices(TRAIN)
    rel = np.zeros((3, 6))
    for u, (items, grades) in enumerate(zip(RECO, RELEVANCE)):
        rel[u, items] = grades
    # item 0 is in no table of the fixture: any non-zero vector (it is never read)
    features = np.array([[1.0, 1.0, 1.0, 1.0, 1.0]] + FEATURES, dtype=float)
    return train, NumericLabels.from_matrix(rel), ranked(RECO), features


# ---------------------------------------------------------------------------------------- #
# against the literal references
# ---------------------------------------------------------------------------------------- #
rankings_st = st.lists(st.lists(st.integers(0, N_ITEMS - 1), max_size=6, unique=True), min_size=1, max_size=6)
item_sets = st.lists(st.sets(st.integers(0, N_ITEMS - 1), max_size=6), min_size=1, max_size=6)
sims_st = st.lists(st.lists(st.one_of(st.just(0.0), st.floats(-1, 1)), min_size=N_ITEMS, max_size=N_ITEMS),
                   min_size=N_ITEMS, max_size=N_ITEMS)


@settings(max_examples=60, deadline=None)
@given(rows=rankings_st, k=st.integers(1, 7), hist=item_sets, sim=sims_st, sparse=st.booleans(),
       one_history=st.booleans(), relevance=st.sampled_from(["ones", "binary", "graded", "one_row"]),
       grades=st.lists(st.integers(0, 3), min_size=N_ITEMS, max_size=N_ITEMS), data=st.data())
def test_serendipity_matches_reference(rows, k, hist, sim, sparse, one_history, relevance, grades, data):
    n = len(rows)
    hist = hist[:1] if one_history else (hist * n)[:n]
    history = BinaryLabels.from_positive_indices([sorted(h) for h in hist])
    matrix = sp.csr_matrix(np.array(sim)) if sparse else np.array(sim)
    y_pred = ranked(rows)
    if relevance == "ones":
        y_true, rel = None, [None] * n
    else:
        n_rows = 1 if relevance == "one_row" else n
        g = np.array([data.draw(st.permutations(grades)) for _ in range(n_rows)], dtype=float)
        if relevance == "binary":
            g = g > 0
        y_true = (BinaryLabels if relevance == "binary" else NumericLabels).from_matrix(g)
        rel = [{i: float(v) for i, v in enumerate(g[min(u, n_rows - 1)]) if v} for u in range(n)]
    metric = Serendipity(k, history, matrix, relevance="ones" if relevance == "ones" else "labels")
    expected = [ref.serendipity(r, k, sorted(hist[min(u, len(hist) - 1)]), sim, rel[u]) for u, r in enumerate(rows)]
    close(metric.score(y_true, y_pred), expected)


@settings(max_examples=40, deadline=None)
@given(users=item_sets, extra=st.integers(0, 3))
def test_cooccurrence_similarity_matches_reference(users, extra):
    n_items = max((max(u) for u in users if u), default=0) + 1 + extra
    train = BinaryLabels.from_positive_indices([sorted(u) for u in users])
    got = cooccurrence_similarity(train, n_items=n_items)
    assert got.shape == (n_items, n_items)
    close(got.toarray(), ref.cooccurrence_similarity(users, n_items))
    dense = np.zeros((len(users), n_items))
    for u, items in enumerate(users):
        dense[u, sorted(items)] = 2.5  # a rating: an interaction whatever its value
    close(cooccurrence_similarity(dense).toarray(), got.toarray())


@settings(max_examples=40, deadline=None)
@given(features=st.lists(st.lists(st.floats(-3, 3), min_size=3, max_size=3).filter(lambda v: any(v)),
                         min_size=1, max_size=6),
       sparse=st.booleans())
def test_feature_similarity_matches_reference(features, sparse):
    x = np.array(features)
    if (np.einsum("ij,ij->i", x, x) < 1e-200).any():
        return  # a norm that underflows: refused, tested below
    got = feature_similarity(sp.csr_matrix(x) if sparse else x)
    close(got.toarray() if sparse else got, ref.feature_similarity(features), tol=1e-10)


# ---------------------------------------------------------------------------------------- #
# Microsoft Recommenders
# ---------------------------------------------------------------------------------------- #
def test_recommenders_published_values():
    """The expected values of Recommenders' own tests (tests/unit/recommenders/evaluation/
    test_python_evaluation.py: test_user_serendipity, test_serendipity and their
    item_feature_vector versions), on its fixture."""
    train, rel, reco, features = _fixture()
    cooc = Serendipity(2, train, cooccurrence_similarity(train, n_items=6))
    close(cooc.score(rel, reco), [0.363915, 0.53455, 0.403775], tol=1e-5)
    assert cooc.mean(rel, reco) == pytest.approx(0.43408, abs=1e-5)
    vec = Serendipity(2, train, feature_similarity(features))
    close(vec.score(rel, reco), [0.2500, 0.625, 0.3333], tol=1e-4)
    assert vec.mean(rel, reco) == pytest.approx(0.4028, abs=1e-4)
    # test_user_item_serendipity: each item alone (k = 1 over one-item rankings)
    items = ranked([[i] for r in RECO for i in r])
    rows = [0, 0, 1, 1, 2, 2]
    per_item = Serendipity(1, train[rows], cooccurrence_similarity(train, n_items=6)).score(rel[rows], items)
    close(per_item, [0.72783, 0.0, 0.71132, 0.35777, 0.80755, 0.0], tol=1e-5)


def _recommenders():
    """Recommenders' python_evaluation, or a skip with the reason (a failure in the CI step that
    installs it, which sets RANKEREVAL_REQUIRE_RECOMMENDERS)."""
    import os

    import pandas as pd

    skip = pytest.fail if os.environ.get("RANKEREVAL_REQUIRE_RECOMMENDERS") else pytest.skip
    try:
        import recommenders.evaluation.python_evaluation as pe
    except ImportError as exc:
        skip(f"Microsoft Recommenders is not installed (pip install --no-deps recommenders==1.2.1): {exc}")
    if int(pd.__version__.split(".")[0]) >= 3:
        skip(f"Microsoft Recommenders 1.2.1 requires pandas < 3 (pandas {pd.__version__} is installed): "
                    "under pandas 3's copy-on-write its fillna(inplace=True) leaves a missing pair NaN "
                    "instead of 0 and serendipity() raises KeyError")
    return pe


def _frames(train_rows, reco_rows, relevance, features=None):
    import pandas as pd

    train = pd.DataFrame([(u, i) for u, items in enumerate(train_rows) for i in items], columns=["UserId", "ItemId"])
    reco = pd.DataFrame([(u, i, float(g)) for u, (items, grades) in enumerate(zip(reco_rows, relevance))
                         for i, g in zip(items, grades)], columns=["UserId", "ItemId", "Relevance"])
    feats = None if features is None else pd.DataFrame(
        {"ItemId": list(range(len(features))), "features": [np.array(f, dtype=float) for f in features]})
    return train, reco, feats


def _ours(train_rows, reco_rows, relevance, n_items, measure, features, use_relevance):
    train = BinaryLabels.from_positive_indices(train_rows)
    sim = cooccurrence_similarity(train, n_items=n_items) if measure == "item_cooccurrence_count" \
        else feature_similarity(np.array(features, dtype=float))
    rel = np.zeros((len(reco_rows), n_items))
    for u, (items, grades) in enumerate(zip(reco_rows, relevance)):
        rel[u, items] = grades
    k = max(len(r) for r in reco_rows)
    metric = Serendipity(k, train, sim, relevance="labels" if use_relevance else "ones")
    return metric, NumericLabels.from_matrix(rel), ranked(reco_rows)


def _compare_with_recommenders(pe, train_rows, reco_rows, relevance, n_items, measure, features, use_relevance):
    train_df, reco_df, feats = _frames(train_rows, reco_rows, relevance, features)
    kw = dict(item_feature_df=feats, item_sim_measure=measure, col_user="UserId", col_item="ItemId", col_sim="sim",
              col_relevance="Relevance" if use_relevance else None)
    metric, y_true, y_pred = _ours(train_rows, reco_rows, relevance, n_items, measure, features, use_relevance)
    scores = metric.score(y_true, y_pred)
    theirs = pe.user_serendipity(train_df, reco_df, **kw)
    users = theirs["UserId"].to_numpy()
    # Recommenders keeps the users with a history and a recommendation; the others are NaN here
    assert set(users) == {u for u in range(len(reco_rows)) if train_rows[u] and reco_rows[u]}
    close(scores[users], theirs["user_serendipity"].to_numpy())
    assert np.isnan(np.delete(scores, users)).all()
    assert metric.mean(y_true, y_pred, nan_handling="drop") == pytest.approx(pe.serendipity(train_df, reco_df, **kw),
                                                                             rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("measure", ["item_cooccurrence_count", "item_feature_vector"])
@pytest.mark.parametrize("use_relevance", [True, False])
def test_recommenders_functions_on_their_fixture(measure, use_relevance):
    pe = _recommenders()
    features = [[1, 1, 1, 1, 1]] + FEATURES
    _compare_with_recommenders(pe, TRAIN, RECO, RELEVANCE, 6, measure, features, use_relevance)


@pytest.mark.parametrize("seed", range(6))
def test_recommenders_functions_on_generated_cases(seed):
    pe = _recommenders()
    rng = np.random.default_rng(seed)
    n_users, n_items = int(rng.integers(3, 9)), int(rng.integers(5, 12))
    train_rows, reco_rows, relevance = [], [], []
    for u in range(n_users):
        items = rng.permutation(n_items)
        n_train = int(rng.integers(0, 5)) if u else int(rng.integers(1, 5))  # some user has a history
        n_reco = int(rng.integers(1 if u == 0 else 0, min(5, n_items - n_train) + 1))
        train_rows.append(sorted(items[:n_train].tolist()))
        reco_rows.append(items[n_train:n_train + n_reco].tolist())  # never a training item (Recommenders refuses one)
        relevance.append(rng.integers(0, 4, size=n_reco).tolist())  # grades float16 holds exactly
    if not any(t and r for t, r in zip(train_rows, reco_rows)):
        reco_rows[0] = [i for i in range(n_items) if i not in train_rows[0]][:2]
        relevance[0] = [1, 2][:len(reco_rows[0])]
    features = rng.integers(0, 3, size=(n_items, 4)).astype(float)
    features[~features.any(axis=1), 0] = 1.0
    for measure in ("item_cooccurrence_count", "item_feature_vector"):
        for use_relevance in (True, False):
            _compare_with_recommenders(pe, train_rows, reco_rows, relevance, n_items, measure, features.tolist(),
                                       use_relevance)


# ---------------------------------------------------------------------------------------- #
# edge cases and bad inputs
# ---------------------------------------------------------------------------------------- #
def test_empty_ranking_and_empty_history_are_nan():
    history = BinaryLabels.from_positive_indices([[2], [], [2]])
    sim = np.eye(4)
    scores = Serendipity(3, history, sim, relevance="ones").score(None, ranked([[0, 2], [0], []]))
    assert scores[0] == pytest.approx(0.5) and np.isnan(scores[1:]).all()
    with pytest.warns(rankereval.UndefinedMetricWarning, match="history is empty"):
        assert math.isnan(Serendipity(3, history, sim, relevance="ones").mean(None, ranked([[0, 2], [0], []])))


def test_an_item_of_the_history_reads_its_own_similarity():
    train = BinaryLabels.from_positive_indices([[0, 1], [0]])
    sim = cooccurrence_similarity(train)
    # item 0 in user 1's history: sim(0, 0) = 2 / (sqrt(2) sqrt(2)) = 1 - 2**-53, so about 0
    # (Recommenders refuses a recommended item of the history)
    score = Serendipity(1, train[[1]], sim, relevance="ones").score(None, ranked([[0]]))[0]
    assert score == pytest.approx(0, abs=1e-15)


@pytest.mark.parametrize("make, error, match", [
    (lambda: Serendipity(2, [[0, 1]], np.eye(3)), TypeError, "history must be"),
    (lambda: Serendipity(2, np.array([[0, 1, 0, 0, 1]]), np.eye(3)), ValueError, "outside the similarity"),
    (lambda: Serendipity(2, np.zeros((0, 3)), np.eye(3)), ValueError, "history has no rows"),
    (lambda: Serendipity(2, np.eye(3), np.ones((3, 2))), ValueError, "similarity must be a square"),
    (lambda: Serendipity(2, np.eye(3), np.full((3, 3), np.nan)), ValueError, "similarity must be finite"),
    (lambda: Serendipity(2, np.eye(3), np.array([["a"] * 3] * 3)), TypeError, "similarity must hold real numbers"),
    (lambda: Serendipity(2, np.eye(3), np.eye(3), relevance="grades"), ValueError, "relevance"),
    (lambda: Serendipity(0, np.eye(3), np.eye(3)), ValueError, "k"),
    (lambda: cooccurrence_similarity(np.eye(3), n_items=2), ValueError, "n_items"),
    (lambda: feature_similarity(np.array([[1.0, 0.0], [0.0, 0.0]])), ValueError, "zero feature vector"),
])
def test_bad_inputs_raise_naming_the_argument(make, error, match):
    with pytest.raises(error, match=match):
        make()


def test_bad_scoring_inputs():
    m = Serendipity(2, np.eye(3), np.eye(3))
    with pytest.raises(TypeError, match="relevance='ones'"):
        m.score(None, ranked([[0], [1], [2]]))
    with pytest.raises(ValueError, match="history has 3 rows but y_pred has 2 rankings"):
        m.score(BinaryLabels.from_positive_indices([[0]]), ranked([[0], [1]]))
    with pytest.raises(ValueError, match="item id 3 is outside the similarity"):
        m.score(BinaryLabels.from_positive_indices([[0]]), ranked([[0], [3], [1]]))
    with pytest.raises(ValueError, match="no value over tied orders|tie-aware"):
        m.score(BinaryLabels.from_positive_indices([[0]]), Rankings.from_scores([[1.0, 1.0, 0.0]] * 3, ties="keep"),
                ties="expected")


def test_many_rankings_on_threads_match_the_reference():
    rng = np.random.default_rng(3)
    n, n_items = 3000, 300
    hist = [sorted(rng.choice(n_items, size=int(rng.integers(0, 8)), replace=False).tolist()) for _ in range(n)]
    rows = [rng.choice(n_items, size=int(rng.integers(0, 12)), replace=False).tolist() for _ in range(n)]
    sim = sp.random(n_items, n_items, density=0.05, random_state=4, format="csr")
    dense = sim.toarray().tolist()
    scores = Serendipity(10, BinaryLabels.from_positive_indices(hist), sim, relevance="ones").score(None, ranked(rows))
    close(scores, [ref.serendipity(r, 10, h, dense) for r, h in zip(rows, hist)])


# ---------------------------------------------------------------------------------------- #
# entry points
# ---------------------------------------------------------------------------------------- #
def test_names_equality_pickling_and_repr():
    train, rel, reco, _ = _fixture()
    sim = cooccurrence_similarity(train, n_items=6)
    inputs = {"history": train, "similarity": sim}
    m = from_name("serendipity@2", defaults=inputs)
    assert m == Serendipity(2, train, sim) and m.name == "serendipity@2"
    ones = Serendipity(2, train, sim, relevance="ones")
    assert ones.name == "serendipity@2[relevance=ones]" and from_name(ones.name, defaults=inputs) == ones
    assert m != ones and m != Serendipity(2, train, sim.toarray() * 0.5) and m != Serendipity(2, train[[0]], sim)
    assert Serendipity(2, train, sim.toarray()) == Serendipity(2, train, sim.toarray())
    back = pickle.loads(pickle.dumps(m))
    assert back == m and hash(back) == hash(m) and m.__module__ == "rankereval.metrics"
    close(back.score(rel, reco), m.score(rel, reco))
    assert "array(" not in repr(m) and "<BinaryLabels 3x6>" in repr(m)
    with pytest.raises(ValueError, match="Serendipity needs history"):
        from_name("serendipity@10")


def test_evaluate_compare_mean_and_bootstrap():
    train, rel, reco, _ = _fixture()
    m = Serendipity(2, train, cooccurrence_similarity(train, n_items=6))
    ev = evaluate(rel, reco, {"ser": m, "ndcg": "ndcg@2"})
    close(ev["ser"], m.score(rel, reco))
    close(ev["ndcg"], rankereval.NDCG(2).score(rel, reco))
    other = ranked([[0, 3], [1, 0], [5, 0]])
    cmp = rankereval.compare(rel, {"a": reco, "b": other}, [m], random_state=0, n_resamples=200)
    np.testing.assert_array_equal(cmp.scores[:, 0, 0], m.score(rel, reco))
    np.testing.assert_array_equal(cmp.scores[:, 0, 1], m.score(rel, other))
    assert m.mean(rel, reco) == pytest.approx(np.mean(m.score(rel, reco)))
    res = m.bootstrap(rel, reco, random_state=0, n_resamples=200)
    assert res.confidence_interval[0] <= res.mean <= res.confidence_interval[1]


def test_accumulator_takes_each_batchs_history_rows():
    rng = np.random.default_rng(0)
    n, n_items = 40, 15
    hist = BinaryLabels.from_positive_indices(
        [rng.choice(n_items, size=int(rng.integers(1, 5)), replace=False) for _ in range(n)])
    y_true = NumericLabels.from_matrix(rng.integers(0, 3, size=(n, n_items)).astype(float))
    scores = rng.random((n, n_items))
    m = Serendipity(5, hist, cooccurrence_similarity(hist))
    whole = evaluate(y_true, Rankings.from_scores(scores, k=5), [m]).scores[:, 0]
    by_stream = Accumulator([m], keep_scores=True)
    for lo in range(0, n, 13):
        by_stream.update(y_true[lo:lo + 13], scores[lo:lo + 13])
    np.testing.assert_array_equal(by_stream.compute().scores[:, 0], whole)
    by_id = Accumulator([m], keep_scores=True)
    order = rng.permutation(n)
    for chunk in np.array_split(order, 3):  # query id q is history row q, whatever the order
        by_id.update(y_true[chunk], scores[chunk], query_ids=chunk)
    got = by_id.compute()
    np.testing.assert_array_equal(got.scores[np.argsort(np.concatenate(np.array_split(order, 3))), 0], whole)
    with pytest.raises(ValueError, match="not all rows of its history"):
        Accumulator([m]).update(y_true[:2], scores[:2], query_ids=[0, n])


def test_dask_and_spark_refuse_serendipity_with_the_reason():
    from rankereval.evaluation._columns import refuse_catalogue_metrics

    train, _, _, _ = _fixture()
    sim = cooccurrence_similarity(train, n_items=6)
    for where in ("Dask", "Spark"):
        for history in (train, train[[0]]):  # one row for all: the partitions renumber the items still
            with pytest.raises(ValueError, match=f"one row per ranking.*partitions of {where}.*number their items"):
                refuse_catalogue_metrics([("s", Serendipity(2, history, sim))], where)
    dd = pytest.importorskip("dask.array")
    from rankereval import dask as rdask

    labels = dd.from_array(np.array([[1, 2], [3, 4], [1, 3]]), chunks=2)
    run = dd.from_array(np.array([[3, 5], [2, 5], [1, 2]]), chunks=2)
    with pytest.raises(ValueError, match="partitions of Dask"):
        rdask.evaluate(labels, run, [Serendipity(2, train, sim)])
