"""Cross-checks against independent implementations: trec_eval and scikit-learn.

Where the definitions coincide, rankereval must agree with

* ``pytrec_eval`` (the trec_eval C code, package ``pytrec-eval-terrier``):
  ``P_k``, ``recall_k``, ``ndcg_cut_k``, ``map_cut_k`` and ``recip_rank``;
* scikit-learn: ``ndcg_score``, ``dcg_score`` and ``average_precision_score``.

Differences in definitions, and how each test steers around them, are stated
next to each test.  Values must agree to 1e-12.
"""
import warnings

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

import rankereval
from rankereval import (
    AP,
    DCG,
    NDCG,
    BinaryLabels,
    NumericLabels,
    Precision,
    Recall,
    ReciprocalRank,
    Success,
)
from helpers import ranked, trec_eval, trec_queries

pytrec_eval = pytest.importorskip("pytrec_eval")
sklearn_metrics = pytest.importorskip("sklearn.metrics")

RTOL = 1e-12
ATOL = 1e-12
CUTOFFS = [1, 2, 3, 5, 10]


def _score(metric, y_true, y_pred):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        return metric.score(y_true, y_pred)


# --------------------------------------------------------------------------- #
# trec_eval
# --------------------------------------------------------------------------- #
@given(data=trec_queries())
def test_against_trec_eval(data):
    qrels, rankings = data
    note((qrels, rankings))
    cut = ",".join(str(k) for k in CUTOFFS)
    results = trec_eval(
        qrels, rankings, ["P." + cut, "recall." + cut, "ndcg_cut." + cut, "map_cut." + cut, "recip_rank",
                          "success." + cut, "map"]
    )
    # trec_eval counts a doc as relevant when its level >= 1 (relevance_level 1)
    y_binary = BinaryLabels.from_positive_indices(
        [sorted(item for item, level in rels.items() if level > 0) for rels in qrels]
    )
    width = 15
    dense = np.zeros((len(qrels), width))
    for q, rels in enumerate(qrels):
        for item, level in rels.items():
            dense[q, item] = level
    y_graded = NumericLabels.from_matrix(dense)
    y_pred = ranked(rankings)
    n_rel = np.array([sum(1 for level in rels.values() if level > 0) for rels in qrels])

    # Queries without any relevant doc: trec_eval reports 0 for them (or skips a
    # query that has no judgement at all); rankereval deliberately returns NaN
    # ("ill-specified").  Compare on the other queries, and check the NaN here.
    valid = n_rel > 0
    compared = [q for q in range(len(qrels)) if valid[q] and "q%d" % q in results]

    def check(ours, measure, queries):
        assert np.all(np.isnan(ours[~valid]))
        if not queries:
            return
        theirs = np.array([results["q%d" % q][measure] for q in queries])
        np.testing.assert_allclose(
            ours[queries], theirs, rtol=RTOL, atol=ATOL, err_msg=measure
        )

    for k in CUTOFFS:
        # P_k: trec_eval divides by k even when fewer than k docs are retrieved,
        # which is rankereval's default (truncated=False).
        check(_score(Precision(k), y_binary, y_pred), "P_%d" % k, compared)
        # recall_k: relevant retrieved in the top k / number of relevant docs,
        # which is rankereval's default (truncated=False).
        check(_score(Recall(k), y_binary, y_pred), "recall_%d" % k, compared)
        # ndcg_cut_k: gain = relevance level (identity), discount log2(rank + 1),
        # ideal DCG from all judged levels sorted descending and cut at k.
        check(_score(NDCG(k, log_base="2"), y_graded, y_pred), "ndcg_cut_%d" % k, compared)
        # map_cut_k: trec_eval divides the summed precisions by the number of
        # relevant docs, rankereval by min(k, n_rel).  They coincide only when
        # n_rel <= k, so compare only those queries.
        check(
            _score(AP(k), y_binary, y_pred),
            "map_cut_%d" % k,
            [q for q in compared if n_rel[q] <= k],
        )
        # success_k: any relevant doc in the top k
        check(_score(Success(k), y_binary, y_pred), "success_%d" % k, compared)
    # map: no cutoff, the summed precisions divided by the number of relevant docs: AP(None)
    check(_score(AP(), y_binary, y_pred), "map", compared)
    # recip_rank: trec_eval has no cutoff, so use k = the whole ranking.
    k_all = max(1, max(len(r) for r in rankings))
    check(_score(ReciprocalRank(k_all), y_binary, y_pred), "recip_rank", compared)


def test_trec_eval_hand_case():
    """One worked example, so a failure of the property test is easy to read.

    qrels: d1 level 1, d2 level 0 (judged non-relevant), d3 level 2.
    ranking: d1, d2, d4.
    ndcg_cut_3 (log2): DCG = 1/log2(2) = 1; IDCG = 2/1 + 1/log2(3).
    """
    qrels = [{1: 1, 2: 0, 3: 2}]
    rankings = [[1, 2, 4]]
    results = trec_eval(qrels, rankings, ["ndcg_cut.3", "P.3", "recall.3"])["q0"]
    expected_ndcg = 1 / (2 + 1 / np.log2(3))
    assert results["ndcg_cut_3"] == pytest.approx(expected_ndcg, rel=1e-12)
    y_graded = NumericLabels.from_matrix([[0, 1, 0, 2]])
    y_pred = ranked(rankings)
    np.testing.assert_allclose(
        _score(NDCG(3, log_base="2"), y_graded, y_pred), [expected_ndcg], rtol=1e-12
    )
    y_binary = BinaryLabels.from_positive_indices([[1, 3]])
    np.testing.assert_allclose(_score(Precision(3), y_binary, y_pred), [results["P_3"]], rtol=1e-12)
    np.testing.assert_allclose(_score(Recall(3), y_binary, y_pred), [results["recall_3"]], rtol=1e-12)


# --------------------------------------------------------------------------- #
# scikit-learn
# --------------------------------------------------------------------------- #
@st.composite
def dense_problems(draw):
    """Dense graded y_true (n_rows, n_items) and one full permutation per row.

    scikit-learn scores *all* columns sorted by y_score, so rankings must be full
    permutations of the items; y_score = n_items - rank gives distinct scores
    (scikit-learn averages the gains of tied scores, rankereval has no ties).
    """
    n_rows = draw(st.integers(1, 5))
    n_items = draw(st.integers(2, 10))  # sklearn's ndcg needs > 1 document
    level = st.one_of(
        st.just(0), st.just(0), st.integers(1, 4), st.floats(0.1, 5.0, allow_nan=False)
    )
    y_true = np.array(
        [[draw(level) for _ in range(n_items)] for _ in range(n_rows)], dtype=np.float64
    )
    rankings = [draw(st.permutations(range(n_items))) for _ in range(n_rows)]
    y_score = np.zeros((n_rows, n_items))
    for i, ranking in enumerate(rankings):
        for rank, item in enumerate(ranking):
            y_score[i, item] = n_items - rank
    return y_true, rankings, y_score


def _per_row(fn, y_true, y_score, **kwargs):
    """Per-row values of a scikit-learn score that averages over rows.

    Uses scikit-learn's own per-sample helpers when they exist (same code the
    public function averages), otherwise calls the public function row by row.
    """
    private = _PER_SAMPLE.get(fn.__name__)
    if private is not None:
        return np.asarray(private(y_true, y_score, **kwargs), dtype=np.float64)
    return np.array(
        [fn(y_true[i : i + 1], y_score[i : i + 1], **kwargs) for i in range(len(y_true))]
    )


try:  # private, but present since scikit-learn 0.22; fall back if it moves
    from sklearn.metrics._ranking import _dcg_sample_scores, _ndcg_sample_scores

    _PER_SAMPLE = {"dcg_score": _dcg_sample_scores, "ndcg_score": _ndcg_sample_scores}
except ImportError:  # pragma: no cover
    _PER_SAMPLE = {}


@given(problem=dense_problems(), k=st.sampled_from([None, 1, 2, 3, 5, 10]))
def test_against_sklearn_dcg_ndcg(problem, k):
    y_true, rankings, y_score = problem
    note((y_true.tolist(), rankings))
    y_pred = ranked(rankings)
    # A row whose labels are all 0: scikit-learn's dcg is 0 and its ndcg is 0,
    # rankereval returns NaN (ill-specified).  Compare the other rows only.
    valid = (y_true > 0).any(axis=1)

    for scaling in ("identity", "power"):
        # 'power' has no switch in scikit-learn: feed it the transformed gains
        # 2**rel - 1 (0 stays 0), which is exactly what 'power' means.
        gains = y_true if scaling == "identity" else np.exp2(y_true) - 1
        labels = NumericLabels.from_matrix(y_true)

        # dcg_score: discount log_base(rank + 1), sum over the top k by score.
        for base_name, base in (("2", 2), ("e", np.e)):
            ours = _score(DCG(k, relevance_scaling=scaling, log_base=base_name), labels, y_pred)
            assert np.all(np.isnan(ours[~valid]))
            theirs = _per_row(sklearn_metrics.dcg_score, gains, y_score, k=k, log_base=base)
            np.testing.assert_allclose(
                ours[valid], theirs[valid], rtol=RTOL, atol=ATOL, err_msg="DCG %s %s" % (scaling, base_name)
            )

        # ndcg_score uses log2; NDCG does not depend on the base anyway (the
        # factor 1/ln(b) cancels), so compare both of ours with it.
        theirs = _per_row(sklearn_metrics.ndcg_score, gains, y_score, k=k)
        for base_name in ("2", "e"):
            ours = _score(NDCG(k, relevance_scaling=scaling, log_base=base_name), labels, y_pred)
            assert np.all(np.isnan(ours[~valid]))
            np.testing.assert_allclose(
                ours[valid], theirs[valid], rtol=RTOL, atol=ATOL, err_msg="NDCG %s %s" % (scaling, base_name)
            )

    # Binary labels through BinaryLabels must give the same DCG/NDCG as the
    # 0/1 matrix in scikit-learn.
    binary = (y_true > 0).astype(np.float64)
    y_binary = BinaryLabels.from_matrix(binary.astype(np.int64))
    ours = _score(NDCG(k, log_base="2"), y_binary, y_pred)
    theirs = _per_row(sklearn_metrics.ndcg_score, binary, y_score, k=k)
    np.testing.assert_allclose(ours[valid], theirs[valid], rtol=RTOL, atol=ATOL)


@given(problem=dense_problems())
def test_against_sklearn_average_precision(problem):
    """scikit-learn's average_precision_score over ALL items with distinct scores
    is sum over relevant ranks of Precision@rank / n_rel.  rankereval's AP with
    k = n_items on a full permutation divides by min(k, n_rel) = n_rel: the same.
    Rows without a positive are undefined in scikit-learn (warning, result not
    meaningful) and NaN in rankereval: skipped."""
    y_true, rankings, y_score = problem
    n_items = y_true.shape[1]
    binary = (y_true > 0).astype(np.int64)
    valid = binary.any(axis=1)
    ours = _score(AP(n_items), BinaryLabels.from_matrix(binary), ranked(rankings))
    assert np.all(np.isnan(ours[~valid]))
    theirs = np.array(
        [
            sklearn_metrics.average_precision_score(binary[i], y_score[i]) if valid[i] else np.nan
            for i in range(len(binary))
        ]
    )
    np.testing.assert_allclose(ours[valid], theirs[valid], rtol=RTOL, atol=ATOL)


def test_sklearn_hand_case():
    """sklearn's documented ndcg example: y_true [[10, 0, 0, 1, 5]],
    scores [[.1, .2, .3, 4, 70]] -> ranking [4, 3, 2, 1, 0].
    DCG (log2) = 5/1 + 1/log2(3) + 0 + 0 + 10/log2(6);
    IDCG = 10/1 + 5/log2(3) + 1/2."""
    y_true = np.array([[10, 0, 0, 1, 5]], dtype=float)
    y_score = np.array([[0.1, 0.2, 0.3, 4, 70]])
    expected = (5 + 1 / np.log2(3) + 10 / np.log2(6)) / (10 + 5 / np.log2(3) + 0.5)
    assert sklearn_metrics.ndcg_score(y_true, y_score) == pytest.approx(expected, rel=1e-12)
    ours = _score(NDCG(log_base="2"), NumericLabels.from_matrix(y_true), ranked([[4, 3, 2, 1, 0]]))
    np.testing.assert_allclose(ours, [expected], rtol=1e-12)
