"""API tests for the metric classes: argument validation, input types, row
counts and broadcasting, return type, and each documented decision of the
API contract (written out as one small test per decision)."""
import math
import re
import warnings

import numpy as np
import pytest

import rankereval
from rankereval import (
    AP,
    DCG,
    F1,
    NDCG,
    BinaryLabels,
    FirstRelevantRank,
    HitRate,
    MeanRanks,
    NumericLabels,
    Precision,
    Rankings,
    Recall,
    ReciprocalRank,
)
from rankereval.metrics import Metric
from rankereval.metrics._base import _registered
from helpers import needs_judged

# derived from the registry: a new metric is covered without editing this file
REGISTRY = _registered()
REQUIRED_K = [c for c in REGISTRY if c.info.cutoff == "required"]
OPTIONAL_K = [c for c in REGISTRY if c.info.cutoff == "optional"]
K_METRICS = REQUIRED_K + OPTIONAL_K
TRUNCATABLE = [c for c in REGISTRY if "truncated" in c._param_space()[0]]
DCG_FAMILY = [c for c in REGISTRY if c.info.choices.keys() >= {"relevance_scaling", "log_base"}]
NO_K = [c for c in REGISTRY if c.info.cutoff == "none"]
# ranks of relevant items, +inf when one is not found (CoverageError's is the catalogue's size)
RANK_POSITIONS = [c for c in REGISTRY if c.info.value_range == (1.0, math.inf) and c.__name__ != "CoverageError"]
BINARY_ONLY = [c for c in REGISTRY if c.info.labels == "binary"]


def one_of_each():
    """One instance of each metric (with a k where it takes one)."""
    return [cls(**cls._param_space(cutoffs=(3,))[0]) for cls in K_METRICS + NO_K]


def metric_id(metric):
    return type(metric).__name__


ALL = one_of_each()


def rankings(rows):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        return Rankings.from_ranked_indices(rows)


def score(metric, y_true, y_pred):
    """metric.score; a metric that needs judgments gets the relevant items as the judged ones
    (labels without them are refused: test_judged_metrics_refuse_labels_without_judgments)."""
    if needs_judged(metric) and y_true.judged is None:
        y_true = y_true.with_judged(y_true)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        return metric.score(y_true, y_pred)


def _mean(metric, values, weights=None):
    """The mean as the registry entry says: arithmetic, geometric with trec_eval's floor, or
    weighted by ``weights`` (each query's number of relevant items, for GAUC)."""
    if metric.info.aggregate == "weighted":
        return float(np.sum(weights * values) / np.sum(weights)) if np.sum(weights) else math.nan
    if metric.info.aggregate == "geometric":
        return math.exp(np.mean(np.log(np.maximum(values, 1e-5))))
    return float(np.mean(values))


@pytest.mark.parametrize("metric", [m for m in ALL if needs_judged(m)], ids=metric_id)
def test_judged_metrics_refuse_labels_without_judgments(metric):
    y_true = BinaryLabels.from_positive_indices([[0, 2]])
    with pytest.raises(ValueError, match="y_true has no judgments: build it with y_true.with_judged"):
        metric.score(y_true, rankings([[0, 1, 2]]))


# --------------------------------------------------------------------------- #
# constructor validation
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("cls", K_METRICS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad_k", [None, 2.5, True, False, 0, -1], ids=repr)
def test_invalid_k_raises(cls, bad_k):
    if bad_k is None and cls in OPTIONAL_K:  # None: the whole ranking
        assert cls(None).k is None
        return
    with pytest.raises(ValueError):
        cls(bad_k)


@pytest.mark.parametrize("cls", TRUNCATABLE, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad_k", [None, 2.5, True, 0, -1])
def test_invalid_k_raises_with_truncated(cls, bad_k):
    with pytest.raises(ValueError):
        cls(bad_k, truncated=True)


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad_k", [2.5, True, False, 0, -1], ids=repr)
def test_dcg_invalid_k_raises(cls, bad_k):
    with pytest.raises(ValueError):
        cls(bad_k)


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
def test_dcg_accepts_k_none(cls):
    y_true = BinaryLabels.from_positive_indices([[0, 1]])
    y_pred = rankings([[1, 5, 0]])
    for metric in (cls(), cls(None), cls(k=None)):
        np.testing.assert_allclose(score(metric, y_true, y_pred), score(cls(3), y_true, y_pred), rtol=1e-15)


@pytest.mark.parametrize("cls", K_METRICS + DCG_FAMILY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("k", [1, 7, 10**9])
def test_valid_k_accepted(cls, k):
    metric = cls(k)
    assert isinstance(metric, Metric)


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", ["cubic", "exponential", "", "identity "])
def test_dcg_invalid_relevance_scaling(cls, bad):
    with pytest.raises(ValueError):
        cls(3, relevance_scaling=bad)


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("bad", ["1", "0.5", "-10", "inf", "ten", "", "ln", "e2"])
def test_dcg_invalid_log_base(cls, bad):
    with pytest.raises(ValueError):
        cls(3, log_base=bad)


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
@pytest.mark.parametrize("scaling", ["identity", "power"])
@pytest.mark.parametrize("base", ["e", "2"])
def test_dcg_valid_options_accepted(cls, scaling, base):
    assert isinstance(cls(None, relevance_scaling=scaling, log_base=base), Metric)
    assert isinstance(cls(4, relevance_scaling=scaling, log_base=base), Metric)


@pytest.mark.parametrize("cls", [c for c in NO_K if c.info.at == "k"], ids=lambda c: c.__name__)
def test_no_k_metrics_construct_without_arguments(cls):
    assert isinstance(cls(), Metric)


# --------------------------------------------------------------------------- #
# input types
# --------------------------------------------------------------------------- #
Y_TRUE = BinaryLabels.from_positive_indices([[0, 1], [2]])
Y_PRED = Rankings.from_ranked_indices([[1, 2], [2, 0]])


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
@pytest.mark.parametrize(
    "bad_true",
    [[[0, 1], [2]], np.array([[1, 1, 0], [0, 0, 1]]), None, Y_PRED],
    ids=["list", "ndarray", "None", "Rankings"],
)
def test_wrong_y_true_type_raises_type_error(metric, bad_true):
    with pytest.raises(TypeError):
        metric.score(bad_true, Y_PRED)


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
@pytest.mark.parametrize(
    "bad_pred",
    [[[1, 2], [2, 0]], np.array([[1, 2], [2, 0]]), None, Y_TRUE],
    ids=["list", "ndarray", "None", "BinaryLabels"],
)
def test_wrong_y_pred_type_raises_type_error(metric, bad_pred):
    with pytest.raises(TypeError):
        metric.score(Y_TRUE, bad_pred)


@pytest.mark.parametrize("metric", [m for m in ALL if type(m) in BINARY_ONLY], ids=metric_id)
@pytest.mark.parametrize(
    "numeric",
    [[[1, 1, 0], [0, 0, 1]], [[1, 2.5, 0], [0, 0, 3]]],
    ids=["0/1-values", "graded-values"],
)
def test_numeric_labels_rejected_by_binary_metrics(metric, numeric):
    # the check is on the type: even 0/1 NumericLabels are rejected
    with pytest.raises(TypeError):
        metric.score(NumericLabels.from_matrix(numeric), Y_PRED)


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
def test_dcg_family_accepts_numeric_and_binary_labels(cls):
    numeric = NumericLabels.from_matrix([[1, 1, 0], [0, 0, 1]])
    np.testing.assert_allclose(
        score(cls(3), numeric, Y_PRED), score(cls(3), Y_TRUE, Y_PRED), rtol=1e-15
    )


# --------------------------------------------------------------------------- #
# row counts and broadcasting
# --------------------------------------------------------------------------- #
def _names_both_counts(message, a, b):
    numbers = re.findall(r"\d+", message)
    return str(a) in numbers and str(b) in numbers


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
@pytest.mark.parametrize("n_labels, n_rankings", [(4, 7), (7, 4), (3, 1), (2, 5)])
def test_row_count_mismatch_names_both_counts(metric, n_labels, n_rankings):
    y_true = BinaryLabels.from_positive_indices([[i] for i in range(n_labels)])
    y_pred = rankings([[i, i + 1] for i in range(n_rankings)])
    with pytest.raises(ValueError) as info:
        metric.score(y_true, y_pred)
    assert _names_both_counts(str(info.value), n_labels, n_rankings), str(info.value)


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
def test_one_label_row_broadcasts_to_all_rankings(metric):
    rows = [[3, 1, 2], [0, 9], [], [2], [5, 4, 3, 2, 1, 0]]
    y_pred = rankings(rows)
    single = BinaryLabels.from_positive_indices([[1, 2, 4]])
    repeated = BinaryLabels.from_positive_indices([[1, 2, 4]] * len(rows))
    got = score(metric, single, y_pred)
    assert got.shape == (len(rows),)
    np.testing.assert_array_equal(got, score(metric, repeated, y_pred))
    # and each row equals that ranking scored alone
    for i, row in enumerate(rows):
        np.testing.assert_array_equal(got[i : i + 1], score(metric, single, rankings([row])))


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
def test_one_numeric_label_row_broadcasts(cls):
    y_pred = rankings([[3, 1, 2], [0, 9], [2, 4]])
    single = NumericLabels.from_matrix([[0, 2, 1.5, 0, 4]])
    repeated = NumericLabels.from_matrix([[0, 2, 1.5, 0, 4]] * 3)
    for metric in (cls(), cls(2, relevance_scaling="power", log_base="2")):
        np.testing.assert_array_equal(score(metric, single, y_pred), score(metric, repeated, y_pred))


# --------------------------------------------------------------------------- #
# return type
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("metric", ALL, ids=metric_id)
@pytest.mark.parametrize("n", [1, 2, 6])
def test_score_returns_float64_vector(metric, n):
    y_true = BinaryLabels.from_positive_indices([[0, 2]] * n)
    y_pred = rankings([[0, 1, 2]] * n)
    got = score(metric, y_true, y_pred)
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float64
    assert got.shape == (n,)


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
def test_score_does_not_modify_inputs(metric):
    y_true = BinaryLabels.from_positive_indices([[0, 2], [1]])
    y_pred = rankings([[0, 1, 2], [2, 1]])
    before_true = y_true.indices_to_list()
    before_pred = y_pred.to_list()
    score(metric, y_true, y_pred)
    assert y_true.indices_to_list() == before_true
    assert y_pred.to_list() == before_pred


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
def test_mean_nan_handling(metric):
    # row 3 has no positive: NaN for every metric but the counts (never NaN)
    y_true = BinaryLabels.from_positive_indices([[0], [1], []])
    if needs_judged(metric):
        y_true = y_true.with_judged(y_true)
    y_pred = rankings([[0, 1, 2], [0, 1, 2], [0, 1]])
    values = score(metric, y_true, y_pred)
    if metric.info.undefined is None or type(metric).__name__ in DEFINED_WITHOUT_RELEVANT:
        assert np.isfinite(values).all()
        assert metric.mean(y_true, y_pred) == pytest.approx(values.mean(), rel=1e-12)
        return
    assert np.isnan(values[2]) and np.isfinite(values[:2]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(metric.mean(y_true, y_pred))
        assert math.isnan(metric.mean(y_true, y_pred, nan_handling="propagate"))
        n_rel = np.array([1.0, 1.0, 0.0])  # the weights of a weighted mean (GAUC)
        assert metric.mean(y_true, y_pred, nan_handling="drop") == pytest.approx(
            _mean(metric, values[:2], n_rel[:2]), rel=1e-12)
        assert metric.mean(y_true, y_pred, nan_handling="zerofill") == pytest.approx(
            _mean(metric, np.append(values[:2], 0.0), n_rel), rel=1e-12
        )
        with pytest.raises(ValueError):
            metric.mean(y_true, y_pred, nan_handling="ignore")


# --------------------------------------------------------------------------- #
# the contract's decisions, one by one
# --------------------------------------------------------------------------- #
def test_decision_recall_truncated_divides_by_min_of_n_rel_and_k():
    # 5 relevant items, 2 of them in the top 2 -> truncated: 2 / min(5, 2) = 1;
    # not truncated: 2 / 5.  (The reference's prose says "max"; the contract
    # decided "min", so that truncated recall can reach 1.)
    y_true = BinaryLabels.from_positive_indices([[0, 1, 2, 3, 4]])
    y_pred = rankings([[0, 1, 9]])
    np.testing.assert_allclose(score(Recall(2, truncated=True), y_true, y_pred), [1.0], rtol=1e-15)
    np.testing.assert_allclose(score(Recall(2), y_true, y_pred), [0.4], rtol=1e-15)
    # n_rel < k: min(n_rel, k) = n_rel, both agree
    y_true = BinaryLabels.from_positive_indices([[0]])
    np.testing.assert_allclose(score(Recall(3, truncated=True), y_true, y_pred), [1.0], rtol=1e-15)


def test_decision_power_scaling_is_two_to_the_rel_minus_one():
    y_true = NumericLabels.from_matrix([[3, 0, 1.5]])
    y_pred = rankings([[0, 2]])
    # rank 1: 2**3 - 1 = 7 over log2(2) = 1; rank 2: 2**1.5 - 1 over log2(3)
    expected = 7 + (2**1.5 - 1) / math.log2(3)
    np.testing.assert_allclose(
        score(DCG(relevance_scaling="power", log_base="2"), y_true, y_pred), [expected], rtol=1e-14
    )
    # natural log: 7/ln 2 + (2**1.5 - 1)/ln 3
    expected_e = 7 / math.log(2) + (2**1.5 - 1) / math.log(3)
    np.testing.assert_allclose(score(DCG(relevance_scaling="power"), y_true, y_pred), [expected_e], rtol=1e-14)
    # identity: 3 + 1.5 / log2(3)
    np.testing.assert_allclose(
        score(DCG(log_base="2"), y_true, y_pred), [3 + 1.5 / math.log2(3)], rtol=1e-14
    )
    # binary labels: 2**1 - 1 = 1, power equals identity
    y_bin = BinaryLabels.from_positive_indices([[0, 2]])
    np.testing.assert_allclose(
        score(DCG(relevance_scaling="power"), y_bin, y_pred), score(DCG(), y_bin, y_pred), rtol=1e-15
    )


@pytest.mark.parametrize("cls", RANK_POSITIONS, ids=lambda c: c.__name__)
def test_decision_rank_metrics_inf_when_not_found_nan_without_positive(cls):
    y_true = BinaryLabels.from_positive_indices([[7], [7], [], [1]])
    y_pred = rankings([[1, 2, 3], [], [1, 2], [0, 1]])
    got = score(cls(), y_true, y_pred)
    # relevant item not in the ranking (also: empty ranking) -> +inf;
    # no relevant item in the labels -> NaN; found at rank 2 -> 2
    assert got[0] == np.inf and got[1] == np.inf
    assert np.isnan(got[2])
    assert got[3] == 2.0


def test_decision_precision_on_empty_ranking():
    y_true = BinaryLabels.from_positive_indices([[1, 2]])
    y_pred = rankings([[]])
    # not truncated: 0 hits / k = 0; truncated: k' = min(k, 0) = 0 -> NaN
    np.testing.assert_array_equal(score(Precision(3), y_true, y_pred), [0.0])
    assert np.isnan(score(Precision(3, truncated=True), y_true, y_pred)).all()


def test_decision_precision_truncated_clips_k_at_ranking_length():
    y_true = BinaryLabels.from_positive_indices([[1, 2]])
    y_pred = rankings([[2, 5]])
    np.testing.assert_allclose(score(Precision(10), y_true, y_pred), [0.1], rtol=1e-15)
    np.testing.assert_allclose(score(Precision(10, truncated=True), y_true, y_pred), [0.5], rtol=1e-15)


@pytest.mark.parametrize("truncated", [False, True])
def test_decision_hitrate_nan_unless_exactly_one_positive(truncated):
    y_true = BinaryLabels.from_positive_indices([[], [4], [4], [4, 5], [4, 5, 6]])
    y_pred = rankings([[4], [1, 4], [1, 2, 4], [4, 5], [4]])
    got = score(HitRate(2, truncated=truncated), y_true, y_pred)
    assert np.isnan(got[0])
    assert got[1] == 1.0 and got[2] == 0.0
    assert np.isnan(got[3]) and np.isnan(got[4])


def test_decision_hitrate_truncated_has_no_effect():
    y_true = BinaryLabels.from_positive_indices([[4]])
    y_pred = rankings([[4], [1, 4], [1, 2, 4], [], [3]])
    np.testing.assert_array_equal(
        score(HitRate(2, truncated=True), y_true, y_pred), score(HitRate(2), y_true, y_pred)
    )


#: NaN when the ranking has no non-relevant item, defined without relevant ones (torchmetrics')
DEFINED_WITHOUT_RELEVANT = {"FallOut"}


@pytest.mark.parametrize("metric", ALL, ids=metric_id)
def test_decision_nan_when_label_row_has_no_positive(metric):
    y_true = BinaryLabels.from_positive_indices([[]])
    y_pred = rankings([[0, 1, 2], [5], []])
    if metric.info.undefined is None:  # counts: 0 relevant items, the ranking's length, 0 found
        assert np.isfinite(score(metric, y_true, y_pred)).all()
        return
    if type(metric).__name__ in DEFINED_WITHOUT_RELEVANT:  # NaN for an empty ranking only
        np.testing.assert_array_equal(np.isnan(score(metric, y_true, y_pred)), [False, False, True])
        return
    assert np.isnan(score(metric, y_true, y_pred)).all()


@pytest.mark.parametrize("cls", DCG_FAMILY, ids=lambda c: c.__name__)
def test_decision_numeric_row_of_zeros_is_nan(cls):
    y_true = NumericLabels.from_matrix([[0, 0, 0], [0, 2, 0]])
    y_pred = rankings([[0, 1, 2], [0, 1, 2]])
    got = score(cls(), y_true, y_pred)
    assert np.isnan(got[0]) and np.isfinite(got[1])


def test_decision_ap_denominator_is_min_k_n_rel():
    # 4 relevant, top 2 both relevant: (1 + 1) / min(2, 4) = 1 (not 2/4)
    y_true = BinaryLabels.from_positive_indices([[0, 1, 2, 3]])
    y_pred = rankings([[0, 1, 7, 8]])
    np.testing.assert_allclose(score(AP(2), y_true, y_pred), [1.0], rtol=1e-15)
    # k=4: (1 + 1) / min(4, 4) = 1/2; relevant items that were never ranked count in Z
    np.testing.assert_allclose(score(AP(4), y_true, y_pred), [0.5], rtol=1e-15)


def test_decision_ndcg_ideal_uses_all_labels_not_the_ranking():
    # only one of three relevant items is ranked, at the top: DCG@None = 1,
    # IDCG over all three labels = 1 + 1/log2(3) + 1/2 (log2) -> NDCG < 1
    y_true = BinaryLabels.from_positive_indices([[0, 1, 2]])
    y_pred = rankings([[0]])
    expected = 1 / (1 + 1 / math.log2(3) + 0.5)
    np.testing.assert_allclose(score(NDCG(log_base="2"), y_true, y_pred), [expected], rtol=1e-14)
    # cut at k=1 the ideal is 1: NDCG@1 = 1
    np.testing.assert_allclose(score(NDCG(1), y_true, y_pred), [1.0], rtol=1e-15)


def test_decision_f1_zero_when_no_hit():
    y_true = BinaryLabels.from_positive_indices([[1]])
    y_pred = rankings([[5, 6], [6, 7, 1]])
    for truncated in (False, True):
        np.testing.assert_array_equal(score(F1(2, truncated=truncated), y_true, y_pred), [0.0, 0.0])


def test_huge_k_is_not_truncated_to_a_small_integer_type():
    # k far above any ranking length (and above 2**31): k' = |y| for the sums,
    # Precision still divides by k, AP by min(k, n_rel) = n_rel.
    k = 2**40
    y_true = BinaryLabels.from_positive_indices([[1, 2]])
    y_pred = rankings([[2, 5, 1]])
    np.testing.assert_allclose(score(Precision(k), y_true, y_pred), [2 / k], rtol=1e-15)
    np.testing.assert_allclose(score(Recall(k), y_true, y_pred), [1.0], rtol=1e-15)
    # relevant at ranks 1 and 3: (1/1 + 2/3) / 2
    np.testing.assert_allclose(score(AP(k), y_true, y_pred), [(1 + 2 / 3) / 2], rtol=1e-15)
    np.testing.assert_allclose(score(DCG(k), y_true, y_pred), score(DCG(), y_true, y_pred), rtol=1e-15)
    np.testing.assert_allclose(score(NDCG(k), y_true, y_pred), score(NDCG(), y_true, y_pred), rtol=1e-15)
