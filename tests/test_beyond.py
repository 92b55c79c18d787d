"""Beyond-accuracy metrics: kernels against the literal references, properties, inputs.

The per-ranking metrics (Novelty, AveragePopularity, TailShare, IntraListDiversity) and the
system-level ones (CatalogCoverage, DistributionalCoverage, GiniIndex) need data a name
cannot carry, so the generic registry tests leave them out (``MetricInfo.inputs``); this file
covers them the same way: every kernel against ``reference_beyond`` on hypothesis inputs.
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
from rankereval import (AveragePopularity, BinaryLabels, CatalogCoverage, DistributionalCoverage, GiniIndex,
                        IntraListDiversity, Novelty, NumericLabels, Rankings, TailShare, evaluate,
                        long_tail_items, popularity_from)
from rankereval.metrics import SystemMetric, from_name, metric_names
from rankereval.metrics._base import _registered
from helpers import close, item_input_metrics, ranked

N_ITEMS = 12


rankings_st = st.lists(st.lists(st.integers(0, N_ITEMS - 1), max_size=8, unique=True), min_size=1, max_size=8)
cutoffs = st.integers(1, 10)
probabilities = st.lists(st.one_of(st.just(0.0), st.just(1.0), st.floats(1e-6, 1.0)),
                         min_size=N_ITEMS, max_size=N_ITEMS)


# ---------------------------------------------------------------------------------------- #
# per-ranking metrics against the references
# ---------------------------------------------------------------------------------------- #
@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, pop=probabilities, method=st.sampled_from(["self_information", "complement"]))
def test_novelty_matches_reference(rows, k, pop, method):
    got = Novelty(k, np.array(pop), method=method).score(None, ranked(rows))
    close(got, [ref.novelty(r, k, pop, method) for r in rows])


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, pop=st.lists(st.integers(0, 1000), min_size=N_ITEMS, max_size=N_ITEMS))
def test_average_popularity_matches_reference(rows, k, pop):
    got = AveragePopularity(k, np.array(pop)).score(None, ranked(rows))
    close(got, [ref.average_popularity(r, k, pop) for r in rows])


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, tail=st.sets(st.integers(0, 2 * N_ITEMS)), as_mask=st.booleans())
def test_tail_share_matches_reference(rows, k, tail, as_mask):
    if as_mask:
        given_tail = np.isin(np.arange(N_ITEMS), sorted(tail))
    else:
        given_tail = np.array(sorted(tail), dtype=np.int64)
    got = TailShare(k, given_tail).score(None, ranked(rows))
    close(got, [ref.tail_share(r, k, tail) for r in rows])


features_st = st.lists(
    st.lists(st.one_of(st.integers(-3, 3).map(float), st.floats(-10, 10, allow_subnormal=False)), min_size=4, max_size=4)
    .filter(lambda v: sum(x * x for x in v) > 1e-6),
    min_size=N_ITEMS, max_size=N_ITEMS)


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, features=features_st, sparse=st.booleans())
def test_intra_list_diversity_matches_reference(rows, k, features, sparse):
    x = np.array(features)
    got = IntraListDiversity(k, sp.csr_matrix(x) if sparse else x).score(None, ranked(rows))
    close(got, [ref.intra_list_diversity(r, k, features) for r in rows], tol=1e-9)


# ---------------------------------------------------------------------------------------- #
# system-level metrics against the references
# ---------------------------------------------------------------------------------------- #
@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, extra=st.integers(0, 5))
def test_catalog_coverage_matches_reference(rows, k, extra):
    n_items = N_ITEMS + extra
    assert CatalogCoverage(k, n_items).compute(ranked(rows)) == pytest.approx(
        ref.catalog_coverage(rows, k, n_items), abs=1e-15)


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, normalize=st.booleans())
def test_distributional_coverage_matches_reference(rows, k, normalize):
    metric = DistributionalCoverage(k, n_items=N_ITEMS, normalize=normalize)
    close([metric.compute(ranked(rows))], [ref.distributional_coverage(rows, k, N_ITEMS, normalize)])


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, discount=st.sampled_from(["none", "log2"]))
def test_gini_matches_reference(rows, k, discount):
    got = GiniIndex(k, N_ITEMS, discount=discount).compute(ranked(rows))
    close([got], [ref.gini_index(rows, k, N_ITEMS, discount)])


# ---------------------------------------------------------------------------------------- #
# properties
# ---------------------------------------------------------------------------------------- #
@settings(max_examples=50)
@given(rows=rankings_st, k=st.integers(1, 9))
def test_coverage_is_monotone_in_k(rows, k):
    r = ranked(rows)
    assert CatalogCoverage(k, N_ITEMS).compute(r) <= CatalogCoverage(k + 1, N_ITEMS).compute(r)


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, discount=st.sampled_from(["none", "log2"]), extra=st.integers(0, 100))
def test_gini_lies_in_0_1(rows, k, discount, extra):
    g = GiniIndex(k, N_ITEMS + extra, discount=discount).compute(ranked(rows))
    assert math.isnan(g) or 0.0 <= g <= (N_ITEMS + extra - 1) / (N_ITEMS + extra) + 1e-12
    assert math.isnan(g) == all(len(r) == 0 for r in rows)


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, direction=st.lists(st.floats(-5, 5), min_size=3, max_size=3)
       .filter(lambda v: sum(x * x for x in v) > 1e-3), scales=st.lists(st.floats(0.01, 100), min_size=N_ITEMS,
                                                                       max_size=N_ITEMS))
def test_diversity_of_items_with_one_direction_is_zero(rows, k, direction, scales):
    features = np.array(scales)[:, None] * np.array(direction)[None, :]
    got = IntraListDiversity(k, features).score(None, ranked(rows))
    lengths = np.array([min(k, len(r)) for r in rows])
    assert np.isnan(got[lengths < 2]).all()
    np.testing.assert_allclose(got[lengths >= 2], 0.0, atol=1e-12)


@settings(max_examples=50)
@given(rows=rankings_st, k=cutoffs, pop=probabilities, seed=st.integers(0, 2**32 - 1))
def test_novelty_does_not_depend_on_the_order_inside_the_top_k(rows, k, pop, seed):
    rng = np.random.default_rng(seed)
    shuffled = [list(rng.permutation(r[:k])) + list(r[k:]) for r in rows]
    for method in ("self_information", "complement"):
        m = Novelty(k, np.array(pop), method=method)
        close(m.score(None, ranked(shuffled)), m.score(None, ranked(rows)), tol=1e-12)


def test_entropy_and_gini_of_even_and_concentrated_exposure():
    even = ranked([[0, 1], [2, 3], [1, 0], [3, 2]])
    assert DistributionalCoverage(2).compute(even) == 2.0
    assert DistributionalCoverage(2, n_items=4, normalize=True).compute(even) == 1.0
    assert GiniIndex(2, 4).compute(even) == 0.0
    for m in (GiniIndex(2, 4), GiniIndex(2, 4, "log2"), CatalogCoverage(2, 4), DistributionalCoverage(2)):
        assert type(m.compute(even)) is float
    one = ranked([[5], [5], [5]])
    assert DistributionalCoverage(1).compute(one) == 0.0
    assert GiniIndex(1, 10).compute(one) == pytest.approx(0.9)  # (n - 1) / n
    assert CatalogCoverage(1, 10).compute(one) == 0.1


def test_empty_rankings():
    r = ranked([[], [1, 2]])
    close(Novelty(3, np.full(5, 0.5)).score(None, r), [np.nan, 1.0])
    close(IntraListDiversity(3, np.eye(5)).score(None, r), [np.nan, 1.0])
    # more rankings than the kernels prefetch ahead, all empty (width 0): nothing to read
    many_empty = ranked([[]] * 20)
    assert np.isnan(Novelty(3, np.full(5, 0.5)).score(None, many_empty)).all()
    assert np.isnan(IntraListDiversity(3, np.eye(5)).score(None, many_empty)).all()
    assert np.isnan(IntraListDiversity(3, sp.csr_matrix(np.eye(5))).score(None, many_empty)).all()
    assert CatalogCoverage(3, 5).compute(many_empty) == 0.0
    nothing = ranked([[], []])
    assert math.isnan(GiniIndex(3, 5).compute(nothing))
    assert math.isnan(DistributionalCoverage(3).compute(nothing))
    assert CatalogCoverage(3, 5).compute(nothing) == 0.0


# ---------------------------------------------------------------------------------------- #
# independent hand-derived cases (Microsoft Recommenders' published formulas)
# ---------------------------------------------------------------------------------------- #
def test_hand_derived_recommenders_style_example():
    # train: 4 users; item 0 seen by 4, item 1 by 2, item 2 by 1, item 3 by 0 users.
    train = BinaryLabels.from_positive_indices([[0, 1, 2], [0, 1], [0], [0]])
    pop = popularity_from(train, n_items=5)
    np.testing.assert_array_equal(pop, [1.0, 0.5, 0.25, 0.0, 0.0])
    reco = ranked([[0, 1], [1, 2]])
    # novelty per user: user 0: (-log2 1 - log2 1/2) / 2 = 0.5; user 1: (1 + 2) / 2 = 1.5
    np.testing.assert_array_equal(Novelty(2, pop).score(None, reco), [0.5, 1.5])
    # Recommenders' catalog_coverage: distinct recommended / distinct training items = 3 / 3
    assert CatalogCoverage(2, n_items=3).compute(reco) == 1.0
    # distributional_coverage: p = (1/4, 2/4, 1/4): H = 2 * (1/4 * 2) + 1/2 * 1 = 1.5 bits
    assert DistributionalCoverage(2).compute(reco) == 1.5
    # Gini over 5 catalogue items, exposure sorted (0, 0, 1, 1, 2), total 4:
    # sum (2j - 6) c_j = (0)*1 + (2)*1 + (4)*2 = 10 -> 10 / (5 * 4) = 0.5
    assert GiniIndex(2, 5).compute(reco) == 0.5
    # ARP with counts (Elliot/RecBole): user 0: (4 + 2) / 2 = 3; user 1: (2 + 1) / 2 = 1.5
    np.testing.assert_array_equal(
        AveragePopularity(2, popularity_from(train, scale="count")).score(None, reco), [3.0, 1.5])


def test_hand_derived_recommenders_novelty_and_diversity():
    # Recommenders' novelty (choice model): p(i) = interactions with i / all interactions;
    # novelty = sum over all recommendations of -log2 p(i) / number of recommendations.
    # train interactions: item 0 x4, item 1 x2, item 2 x2 (8 in all): p = 1/2, 1/4, 1/4.
    train = BinaryLabels.from_positive_indices([[0, 1, 2], [0, 1], [0, 2], [0]])
    p = popularity_from(train, scale="interactions")
    np.testing.assert_array_equal(p, [0.5, 0.25, 0.25])
    reco = ranked([[0, 1], [1, 2]])
    # all recommendations: 0, 1, 1, 2 -> (1 + 2 + 2 + 2) / 4 = 1.75 = mean of the per-user
    # values (1.5, 2.0), since both users have k' = 2 items
    per_user = Novelty(2, p).score(None, reco)
    np.testing.assert_array_equal(per_user, [1.5, 2.0])
    assert per_user.mean() == 1.75
    # Recommenders' diversity with item_feature_vector similarity: per user, 1 - mean cosine
    # over the pairs i1 < i2 of its list, then the mean over users with a pair.
    # features 0: (1, 0), 1: (1, 1), 2: (0, 1): cos(0, 1) = cos(1, 2) = 1/sqrt(2)
    # user 0 and user 1 both: 1 - 1/sqrt(2)
    features = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    ild = IntraListDiversity(2, features).score(None, ranked([[0, 1], [1, 2], [2]]))
    close(ild, [1 - 2 ** -0.5, 1 - 2 ** -0.5, np.nan])
    # three items: cos(0, 2) = 0 joins: 1 - (2/sqrt(2) + 0) / 3
    assert IntraListDiversity(3, features).score(None, ranked([[0, 1, 2]]))[0] == pytest.approx(
        1 - 2 ** 0.5 / 3, abs=1e-15)


def test_long_tail_split():
    np.testing.assert_array_equal(long_tail_items([50, 5, 30, 10, 5], head_share=0.5), [0, 1, 1, 1, 1])
    np.testing.assert_array_equal(long_tail_items([50, 5, 30, 10, 5], head_share=0.6), [0, 1, 0, 1, 1])
    with pytest.raises(ValueError, match="head_share"):
        long_tail_items([1, 2], head_share=1.0)
    with pytest.raises(ValueError, match="no short head"):
        long_tail_items([0, 0])


def test_popularity_from_matrices_and_errors():
    m = np.array([[1, 0, 2], [0, 0, 1]])
    np.testing.assert_array_equal(popularity_from(m), [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(popularity_from(sp.csr_matrix(m), scale="count", n_items=4), [1, 0, 2, 0])
    np.testing.assert_array_equal(popularity_from(NumericLabels.from_matrix(m)), [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(popularity_from(m, scale="interactions"), [1 / 3, 0.0, 2 / 3])
    with pytest.raises(ValueError, match="scale must be one of"):
        popularity_from(m, scale="probability")
    with pytest.raises(ValueError, match="n_items must be an integer >= the 3 items"):
        popularity_from(m, n_items=2)
    with pytest.raises(TypeError, match="train must be"):
        popularity_from([[1, 0]])
    with pytest.raises(ValueError, match="no users"):
        popularity_from(np.zeros((0, 3)))


# ---------------------------------------------------------------------------------------- #
# inputs: clear errors, never an out-of-bounds read
# ---------------------------------------------------------------------------------------- #
@pytest.mark.parametrize("make, match", [
    (lambda: Novelty(3, [0.5, 1.5]), r"in \[0, 1\]; item 1 has 1.5"),
    (lambda: Novelty(3, [0.5, np.nan]), "finite"),
    (lambda: Novelty(3, [[0.5]]), "1-D"),
    (lambda: Novelty(3, []), "non-empty"),
    (lambda: Novelty(0, [0.5]), "k must be an integer > 0"),
    (lambda: Novelty(3, [0.5], method="epc"), "method must be one of"),
    (lambda: AveragePopularity(3, [-1.0, 2.0]), ">= 0; item 0"),
    (lambda: TailShare(3, [[True]]), "1-D"),
    (lambda: TailShare(3, [-1, 2]), ">= 0"),
    (lambda: IntraListDiversity(3, np.ones(3)), "2-D"),
    (lambda: IntraListDiversity(3, np.array([[1.0, np.nan]])), "item 0 has a NaN"),
    (lambda: IntraListDiversity(3, sp.csr_matrix(np.array([[1.0, np.inf]]))), "item 0 has a NaN or infinite"),
    (lambda: IntraListDiversity(3, np.array([[1.0, 0.0], [0.0, 0.0]])), "item 1 has a zero feature vector; cosine"),
    (lambda: IntraListDiversity(3, sp.csr_matrix((3, 2))), r"item 0 \(and 2 more items\) has a zero"),
    (lambda: IntraListDiversity(3, np.eye(2), similarity="jaccard"), "similarity must be one of"),
    (lambda: CatalogCoverage(3, 0), "n_items must be an integer > 0"),
    (lambda: GiniIndex(3, 5, discount="log"), "discount must be one of"),
    (lambda: DistributionalCoverage(3, normalize=True), "needs n_items"),
])
def test_bad_inputs_raise_naming_the_argument(make, match):
    with pytest.raises(ValueError, match=match):
        make()


@pytest.mark.parametrize("make", [
    lambda: Novelty(3, np.array(["a"])), lambda: Novelty(3, np.array([True])),
    lambda: Novelty(3, np.array([0.5j])), lambda: TailShare(3, np.array([0.5])),
    lambda: IntraListDiversity(3, np.array([["a"]])),
])
def test_bad_dtypes_raise_type_error(make):
    with pytest.raises(TypeError):
        make()


@pytest.mark.parametrize("metric", [
    Novelty(3, np.full(4, 0.5)), AveragePopularity(3, np.ones(4)), TailShare(3, np.zeros(4, dtype=bool)),
    IntraListDiversity(3, np.eye(4)), IntraListDiversity(3, sp.csr_matrix(np.eye(4))),
], ids=repr)
def test_ids_outside_the_inputs_raise(metric):
    with pytest.raises(ValueError, match="item id 4 is outside the"):
        metric.score(None, ranked([[0, 1], [2, 4]]))
    assert np.isfinite(metric.score(None, ranked([[0, 1], [2, 3]]))).all()


@pytest.mark.parametrize("metric", [CatalogCoverage(3, 4), GiniIndex(3, 4), DistributionalCoverage(3, 4, True)], ids=repr)
def test_ids_outside_the_catalogue_raise(metric):
    with pytest.raises(ValueError, match="item id 4 is outside the catalogue"):
        metric.compute(ranked([[0, 1], [2, 4]]))


def test_type_errors():
    m = Novelty(3, np.full(4, 0.5))
    with pytest.raises(TypeError, match="y_pred must be Rankings"):
        m.score(None, [[0, 1]])
    with pytest.raises(TypeError, match="y_true must be None or labels"):
        m.score([[0]], ranked([[0]]))
    with pytest.raises(TypeError, match="y_pred must be Rankings"):
        GiniIndex(3, 4).compute([[0, 1]])


# ---------------------------------------------------------------------------------------- #
# the registry, names, equality, pickling, evaluate and compare
# ---------------------------------------------------------------------------------------- #
POP = np.array([0.5, 0.25, 1.0, 0.125])
INPUTS = {"popularity": POP, "tail_items": np.array([True, False, False, True]),
          "item_features": np.eye(4) + 0.5, "n_items": 4}
BEYOND = [c for c in _registered(everything=True) if c.info.labels == "none"]


def test_registry_lists_beyond_metrics_apart():
    names = {c.__name__ for c in BEYOND}
    assert names == {"Novelty", "AveragePopularity", "TailShare", "IntraListDiversity", "CatalogCoverage",
                     "DistributionalCoverage", "GiniIndex"}
    assert not names & {c.__name__ for c in _registered()}
    assert {c.info.name for c in BEYOND} <= set(metric_names())


@pytest.mark.parametrize("cls", BEYOND, ids=lambda c: c.__name__)
def test_names_round_trip_with_inputs_from_defaults(cls):
    for params in [{"k": 3}, *({"k": 2, p: v} for p, vals in cls.info.choices.items() for v in vals)]:
        m = from_name(cls.info.name + f"@{params['k']}", defaults=INPUTS)
        m = type(m)(**{**m._params(), **params})
        assert from_name(m.name, defaults=INPUTS) == m
        assert pickle.loads(pickle.dumps(m)) == m
        assert hash(pickle.loads(pickle.dumps(m))) == hash(m)
        assert m.__module__ == "rankereval.metrics"
        assert "array(" not in repr(m)


@pytest.mark.parametrize("text, match", [
    ("novelty@10", "Novelty needs popularity"), ("ild@5", "IntraListDiversity needs item_features"),
    ("coverage@10", "CatalogCoverage needs n_items"), ("gini@10", "GiniIndex needs n_items"),
    ("novelty@10[popularity=3]", "popularity is data"), ("novelty", "needs a cutoff"),
])
def test_from_name_says_what_is_missing(text, match):
    with pytest.raises(ValueError, match=match):
        from_name(text)


def test_from_name_options_and_equality():
    assert from_name("novelty@5[epc]", defaults=INPUTS) == Novelty(5, POP, method="complement")
    assert from_name("gini@5[log2]", defaults=INPUTS) == GiniIndex(5, 4, discount="log2")
    assert from_name("entropy@5") == DistributionalCoverage(5)
    assert from_name("entropy@5[normalize]", defaults=INPUTS).name == "entropy@5[normalize]"
    assert Novelty(5, POP) != Novelty(5, POP / 2)
    assert Novelty(5, POP) != Novelty(6, POP)
    assert IntraListDiversity(2, sp.csr_matrix(np.eye(3))) == IntraListDiversity(2, sp.csr_matrix(np.eye(3)))
    assert isinstance(from_name("coverage@3", defaults=INPUTS), SystemMetric)


def test_evaluate_mixes_label_metrics_and_rankings_only_metrics():
    y = NumericLabels.from_matrix([[0, 2, 1, 0], [1, 0, 0, 0]])
    r = ranked([[1, 2, 3], [0, 3]])
    metrics = {"nov": Novelty(2, POP), "ndcg": "ndcg@2", "ild": IntraListDiversity(3, INPUTS["item_features"])}
    ev = evaluate(y, r, metrics)
    np.testing.assert_array_equal(ev["nov"], Novelty(2, POP).score(None, r))
    np.testing.assert_array_equal(ev["nov"], Novelty(2, POP).score(y, r))  # labels are not read
    np.testing.assert_array_equal(ev["ndcg"], rankereval.NDCG(2).score(y, r))
    assert ev.mean("ild") == pytest.approx(np.mean(IntraListDiversity(3, INPUTS["item_features"]).score(None, r)))
    with pytest.raises(TypeError, match="system-level metric.*compute"):
        evaluate(y, r, [GiniIndex(3, 4)])


def test_mean_and_bootstrap_of_a_per_ranking_metric():
    r = ranked([[0, 1], [2, 3], [1, 3], [3]])
    m = Novelty(2, POP)
    assert m.mean(None, r) == pytest.approx(np.mean(m.score(None, r)))
    res = m.bootstrap(None, r, random_state=0, n_resamples=200)
    assert res.confidence_interval[0] <= res.mean <= res.confidence_interval[1]
    with pytest.warns(rankereval.UndefinedMetricWarning, match="popularity 0"):
        assert math.isnan(Novelty(2, np.array([0.5, 0.0, 1.0, 1.0])).mean(None, r))


def test_compare_works_for_beyond_metrics():
    y = BinaryLabels.from_positive_indices([[0], [1], [2], [3], [0], [1]])
    a = ranked([[0, 1], [2, 3], [1, 3], [3, 0], [0, 2], [1, 2]])
    b = ranked([[2, 1], [2, 0], [1, 0], [3, 1], [0, 1], [1, 0]])
    m = Novelty(2, POP)
    cmp = rankereval.compare(y, {"a": a, "b": b}, [m], random_state=0, n_resamples=200)
    np.testing.assert_allclose(np.asarray(cmp.means)[0], [m.mean(None, a), m.mean(None, b)], rtol=1e-15)
    np.testing.assert_array_equal(cmp.scores[:, 0, 0], m.score(None, a))  # (queries, metrics, runs)
    np.testing.assert_array_equal(cmp.scores[:, 0, 1], m.score(None, b))


def test_system_bootstrap():
    rng = np.random.default_rng(1)
    rows = [list(rng.choice(30, size=5, replace=False)) for _ in range(60)]
    r = ranked(rows)
    for m in (GiniIndex(5, 30), DistributionalCoverage(5, 30, normalize=True)):
        res = m.bootstrap(r, n_resamples=50, random_state=3)
        assert res.mean == m.compute(r)
        assert res.bootstrap_distribution.shape == (50,)
        assert res.confidence_interval[0] <= res.confidence_interval[1]
        again = m.bootstrap(r, n_resamples=50, random_state=3)
        np.testing.assert_array_equal(res.bootstrap_distribution, again.bootstrap_distribution)
        # one resample by hand: weights are how often each ranking was drawn
        from rankereval.stats import _bootstrap
        from rankereval.stats._resampling import _seed

        w = np.bincount(_bootstrap.bounded_samples(60, 60, _seed(3), 0), minlength=60)
        drawn = [row for row, c in zip(rows, w) for _ in range(c)]
        expected = (ref.gini_index(drawn, 5, 30) if isinstance(m, GiniIndex)
                    else ref.distributional_coverage(drawn, 5, 30, True))
        assert res.bootstrap_distribution[0] == pytest.approx(expected, rel=1e-12)
    with pytest.raises(TypeError, match="only lose items"):
        CatalogCoverage(5, 30).bootstrap(r)


def test_large_ids_and_threads_agree():
    # enough work for several threads: the per-thread histograms must add up
    rng = np.random.default_rng(0)
    n, width, n_items = 3000, 200, 5000
    # distinct ids per row: a random start, then steps of 7 (coprime with n_items)
    ranks = (rng.integers(0, n_items, size=(n, 1)) + 7 * np.arange(width)) % n_items
    r = Rankings.from_ranked_indices(ranks)
    counts = np.bincount(ranks[:, :100].ravel(), minlength=n_items)
    assert CatalogCoverage(100, n_items).compute(r) == np.count_nonzero(counts) / n_items
    sorted_c = np.sort(counts).astype(float)
    j = np.arange(1, n_items + 1)
    assert GiniIndex(100, n_items).compute(r) == pytest.approx(
        np.sum((2 * j - n_items - 1) * sorted_c) / (n_items * sorted_c.sum()), rel=1e-12)


# ---------------------------------------------------------------------------------------- #
# command line: the system-level metrics need only the run
# ---------------------------------------------------------------------------------------- #
def test_cli_system_level_metrics(capsys):
    import json

    pytest.importorskip("pandas")
    from rankereval.cli import main
    from rankereval.io import read_trec, sample_paths

    qrels, run = sample_paths()
    data = read_trec(qrels, run)
    n_items = len(data.doc_ids)
    assert main(["evaluate", qrels, run, "-m", "ndcg@10", "coverage@10", "gini@10[log2]", "entropy@10",
                 "-f", "json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["coverage@10"]["mean"] == pytest.approx(CatalogCoverage(10, n_items).compute(data.rankings))
    assert out["gini@10[log2]"]["mean"] == pytest.approx(GiniIndex(10, n_items, "log2").compute(data.rankings))
    assert out["entropy@10"]["system_level"] and "ndcg@10" in out
    assert main(["evaluate", qrels, run, "-m", "coverage@10", "--n-items", "100000", "--quiet"]) == 0
    text = capsys.readouterr().out
    expected = CatalogCoverage(10, 100000).compute(data.rankings)
    assert "system metric" in text and f"{expected:.4f}" in text
    assert main(["evaluate", qrels, run, "-m", "coverage@10", "--n-items", "2", "--quiet"]) == 1
    assert "outside the catalogue" in capsys.readouterr().err
    assert main(["evaluate", qrels, run, "-m", "novelty@10"]) == 2
    assert "Novelty needs popularity" in capsys.readouterr().err
    assert main(["metrics"]) == 0
    listing = capsys.readouterr().out
    assert "coverage@k" in listing and "needs popularity: Python API only" in listing


# -- item-indexed inputs over data read from frames or files (TrecData numbers its items) --
def _frames(kind=int):
    """Labels and run whose item ids are the user's (ints 0..12, or the same as strings)."""
    import pandas as pd

    item = kind
    qrels = pd.DataFrame({"query": ["a", "a", "b", "c", "c"], "item": [item(7), item(3), item(5), item(12), item(1)],
                          "label": [1, 1, 1, 1, 1]})
    run = pd.DataFrame({"query": ["a", "a", "a", "a", "b", "b", "c"],
                        "item": [item(7), item(9), item(2), item(0), item(5), item(3), item(12)],
                        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0, 1.0]})
    order = {"a": [7, 9, 2, 0], "b": [5, 3], "c": [12]}
    return qrels, run, order


def test_item_inputs_follow_the_numbering_of_data_read_from_frames():
    """Novelty, ARP, TailShare and ILD on a TrecData equal the same metrics on rankings of the
    user's own item ids: their inputs are indexed by those ids, whatever numbering the reader
    gives its items (an item only in the labels may be outside an input)."""
    from rankereval.io import from_dataframes

    qrels, run, order = _frames()
    data = from_dataframes(qrels, run)
    assert list(data.doc_ids) != list(range(len(data.doc_ids)))  # the reader renumbers
    metrics = item_input_metrics(13)
    got = evaluate(data, metrics, nan_handling="drop").scores
    direct = Rankings.from_ranked_indices([order[q] for q in data.query_ids])
    want = np.column_stack([m.score(None, direct) for m in metrics.values()])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    # compare: each run read on its own numbers its items apart
    other = run.assign(score=-run["score"])
    cmp = rankereval.compare(None, {"A": data, "B": from_dataframes(qrels, other)}, metrics)
    flipped = Rankings.from_ranked_indices([order[q][::-1] for q in data.query_ids])
    rows = [list(data.query_ids).index(q) for q in cmp.query_ids]
    np.testing.assert_allclose(cmp.scores[:, :, 1], np.column_stack(
        [m.score(None, flipped) for m in metrics.values()])[rows], rtol=0, atol=1e-15)


def test_item_inputs_over_renumbered_data_refuse_what_cannot_follow():
    from rankereval import Serendipity
    from rankereval.io import from_dataframes

    qrels, run, _ = _frames()
    data = from_dataframes(qrels, run)
    # item 12 is ranked: outside a popularity of 10 items, as a ranking of it would be
    with pytest.raises(ValueError, match="item id 12 is outside the popularity of Novelty"):
        evaluate(data, [Novelty(2, np.full(10, 0.5))])
    # only in the labels: never looked up
    short = run[run["item"] != 12]
    ev = evaluate(from_dataframes(qrels, short, missing="empty"), [Novelty(2, np.full(12, 0.5))],
                  nan_handling="drop")
    assert ev.means["novelty@2"] == 1.0
    s_qrels, s_run, _ = _frames(kind=lambda i: f"d{i}")
    with pytest.raises(ValueError, match="item ids are not integers.*data.doc_ids"):
        evaluate(from_dataframes(s_qrels, s_run), [Novelty(2, np.full(13, 0.5))])
    with pytest.raises(ValueError, match="item id 12 is outside the similarity of Serendipity"):
        evaluate(data, [Serendipity(2, BinaryLabels.from_positive_indices([[1]]), np.eye(10), relevance="ones")])


@pytest.mark.parametrize("relevance", ["labels", "ones"])
@pytest.mark.parametrize("sparse", [False, True])
def test_serendipity_follows_the_numbering_of_data_read_from_frames(relevance, sparse):
    """Serendipity on a TrecData equals Serendipity on the user's own ids: the similarity and
    the histories (rows in the data's query order) are relabelled, and history items that no
    ranking or label holds still count in the mean over the history."""
    from rankereval import Serendipity
    from rankereval.io import from_dataframes

    qrels, run, order = _frames()
    data = from_dataframes(qrels, run)
    rng = np.random.default_rng(1)
    sim = rng.random((13, 13)) * (rng.random((13, 13)) < 0.6)
    sim = (sim + sim.T) / 2
    history_of = {"a": [1, 4, 11], "b": [6], "c": [0, 8, 10, 12]}  # 4, 6, 8, 10, 11: in no ranking
    history = BinaryLabels.from_positive_indices([history_of[q] for q in data.query_ids])
    metric = Serendipity(3, history, sp.csr_matrix(sim) if sparse else sim, relevance=relevance)
    got = evaluate(data, [metric], nan_handling="drop").scores[:, 0]
    labels = BinaryLabels.from_positive_indices(
        [sorted(qrels.loc[qrels["query"] == q, "item"]) for q in data.query_ids])
    want = metric.score(labels, Rankings.from_ranked_indices([order[q] for q in data.query_ids]))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-15)
    assert np.isfinite(want).all()
