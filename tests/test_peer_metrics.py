"""The peers' per-query metrics that rankereval adds: AUROC (scikit-learn's roc_auc_score per
query, torchmetrics' RetrievalAUROC), FallOut (torchmetrics' RetrievalFallOut), CoverageError
and LabelRankingLoss (scikit-learn's coverage_error and label_ranking_loss), normalised RBP
(LensKit's RBP(normalize=True)), each against the peer that defines it, where installed."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankereval import (AUROC, RBP, BinaryLabels, CoverageError, FallOut, LabelRankingLoss, NumericLabels,
                        Rankings)
from rankereval.metrics import from_name


def _data(seed, n=40, m=25):
    rng = np.random.default_rng(seed)
    scores = rng.random((n, m))
    y = rng.random((n, m)) < 0.3
    y[:, 0], y[:, 1] = True, False  # every row has both kinds
    return y, scores


@pytest.mark.parametrize("seed", range(3))
def test_auroc_is_scikit_learns_per_query(seed):
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is the peer of AUROC")
    y, scores = _data(seed)
    got = AUROC().score(BinaryLabels.from_matrix(y), Rankings.from_scores(scores))
    want = np.array([metrics.roc_auc_score(y[i], scores[i]) for i in range(len(y))])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [None, 3, 10])
def test_auroc_and_fallout_against_torchmetrics(k):
    torch = pytest.importorskip("torch", reason="torchmetrics (CPU) is the peer of FallOut and AUROC")
    tm = pytest.importorskip("torchmetrics.retrieval", reason="torchmetrics is the peer of FallOut and AUROC")
    y, scores = _data(7)
    yt, yp = BinaryLabels.from_matrix(y), Rankings.from_scores(scores)
    idx = torch.arange(y.shape[0]).repeat_interleave(y.shape[1])
    preds, target = torch.tensor(scores.ravel()), torch.tensor(y.ravel())
    # torchmetrics' retrieval_auroc returns 0 for a top k with one kind of document only
    # (its empty_target_action is for queries without a relevant document at all): AUROC is
    # NaN there, and nan_handling='zerofill' gives torchmetrics' mean; every row here has both
    # kinds, so FallOut is defined everywhere
    for ours, theirs in ((FallOut(k), tm.RetrievalFallOut(top_k=k)), (AUROC(k), tm.RetrievalAUROC(top_k=k))):
        want = float(theirs(preds, target, indexes=idx))
        assert abs(ours.mean(yt, yp, nan_handling="zerofill") - want) < 1e-6, ours
    if k is not None:
        assert np.isnan(AUROC(k).score(yt, yp)).any()  # (the case above is met)


def test_fallout_by_hand():
    y_true = BinaryLabels.from_positive_indices([[1], [1, 2]])
    y_pred = Rankings.from_ranked_indices([[9, 1, 8, 7], [1, 2]])
    # row 0: 3 non-relevant, 1 of them in the top 2; row 1: no non-relevant item
    np.testing.assert_array_equal(FallOut(2).score(y_true, y_pred), [1 / 3, np.nan])
    assert not FallOut.info.higher_is_better


def _with_empty_queries(seed, n=30, m=12):
    """Queries as torchmetrics takes them (every candidate scored, no ties), a third of them
    without a relevant document."""
    rng = np.random.default_rng(seed)
    scores = rng.permutation(n * m).reshape(n, m) / (n * m)
    y = rng.random((n, m)) < 0.25
    y[rng.random(n) < 0.35] = False
    y[0] = False   # at least one empty query
    y[1, 0] = True  # and one that is not
    return y, scores


@pytest.mark.parametrize("seed", range(2))
def test_nan_policies_are_torchmetrics_empty_target_actions(seed):
    """torchmetrics' empty_target_action: 'pos' counts a query without a relevant document
    as 1 (nan_handling='onefill'), 'neg' as 0 ('zerofill'), 'skip' leaves it out ('drop')."""
    torch = pytest.importorskip("torch", reason="torchmetrics (CPU) is the peer of the fill policies")
    tm = pytest.importorskip("torchmetrics.retrieval", reason="torchmetrics is the peer of the fill policies")
    from rankereval import AP, NDCG, Precision, Recall, ReciprocalRank
    from rankereval.metrics import from_name

    y, scores = _with_empty_queries(seed)
    yt, yp = BinaryLabels.from_matrix(y), Rankings.from_scores(scores)
    idx = torch.arange(y.shape[0]).repeat_interleave(y.shape[1])
    preds, target = torch.tensor(scores.ravel()), torch.tensor(y.ravel())
    pairs = [(ReciprocalRank(), tm.RetrievalMRR), (AP(), tm.RetrievalMAP),
             (Precision(5), lambda **kw: tm.RetrievalPrecision(top_k=5, **kw)),
             (Recall(5), lambda **kw: tm.RetrievalRecall(top_k=5, **kw)),
             (NDCG(5, log_base=2), lambda **kw: tm.RetrievalNormalizedDCG(top_k=5, **kw)),
             (from_name("success@3"), lambda **kw: tm.RetrievalHitRate(top_k=3, **kw))]
    for action, policy in (("pos", "onefill"), ("neg", "zerofill"), ("skip", "drop")):
        for ours, theirs in pairs:
            want = float(theirs(empty_target_action=action)(preds, target, indexes=idx))
            got = ours.mean(yt, yp, nan_handling=policy)
            assert abs(got - want) < 1e-6, (ours, action, got, want)


def test_onefill_is_the_mean_with_undefined_scores_as_one():
    from rankereval import ReciprocalRank, evaluate

    y, scores = _with_empty_queries(5)
    yt, yp = BinaryLabels.from_matrix(y), Rankings.from_scores(scores)
    raw = ReciprocalRank(4).score(yt, yp)
    assert np.isnan(raw).any()
    want = float(np.mean(np.where(np.isnan(raw), 1.0, raw)))
    assert ReciprocalRank(4).mean(yt, yp, nan_handling="onefill") == pytest.approx(want, rel=1e-15)
    ev = evaluate(yt, yp, ["rr@4"], nan_handling="onefill")
    assert ev.means["rr@4"] == pytest.approx(want, rel=1e-15)
    assert ev.n_used["rr@4"] == len(raw) and ev.n_undefined["rr@4"] == int(np.isnan(raw).sum())
    np.testing.assert_array_equal(ev["rr@4"], raw)  # the per-query scores keep their NaN


# ---- scikit-learn's multilabel ranking metrics (CoverageError, LabelRankingLoss), per ranking:
# scikit-learn scores every item; a ranking is the scores whose order it is (the item at
# rank i scores width - i, every item outside the top k, or outside the ranking, scores 0)

def _scores_of(y_pred, k, n_items):
    out = np.zeros((y_pred.n_rows, n_items))
    for i, row in enumerate(y_pred.to_list()):
        top = row if k is None else row[:k]
        out[i, top] = len(top) - np.arange(len(top))
    return out


@st.composite
def _multilabel(draw):
    n_items = draw(st.integers(2, 9))  # (scikit-learn reads one column as binary, not multilabel)
    n = draw(st.integers(1, 6))
    y = np.array(draw(st.lists(st.lists(st.booleans(), min_size=n_items, max_size=n_items), min_size=n, max_size=n)))
    rankings = [draw(st.permutations(range(n_items)))[:draw(st.integers(0, n_items))] for _ in range(n)]
    return y, rankings, draw(st.one_of(st.none(), st.integers(1, n_items + 1)))


@settings(max_examples=60, deadline=None)
@given(data=_multilabel())
def test_coverage_error_and_label_ranking_loss_are_scikit_learns(data):
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn defines coverage_error, label_ranking_loss")
    y, rankings, k = data
    y_true, y_pred = BinaryLabels.from_matrix(y), Rankings.from_ranked_indices(rankings)
    scores = _scores_of(y_pred, k, y.shape[1])
    n_rel = y.sum(axis=1)
    for ours, theirs, undefined in (
            (CoverageError(k), metrics.coverage_error, n_rel == 0),
            (LabelRankingLoss(k), metrics.label_ranking_loss, (n_rel == 0) | (n_rel == y.shape[1]))):
        got = ours.score(y_true, y_pred)
        np.testing.assert_array_equal(np.isnan(got), undefined)  # scikit-learn gives 0 there
        want = np.array([theirs(y[i:i + 1], scores[i:i + 1]) for i in range(len(y))])
        np.testing.assert_allclose(got[~undefined], want[~undefined], rtol=1e-12, atol=0)


def test_coverage_error_and_label_ranking_loss_from_scores_match_scikit_learn():
    """Full rankings from continuous scores (no ties): the two metrics read the scores'
    order as scikit-learn does, and their means are scikit-learn's."""
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn defines coverage_error, label_ranking_loss")
    y, scores = _data(3)
    y_true, y_pred = BinaryLabels.from_matrix(y), Rankings.from_scores(scores)
    assert CoverageError().mean(y_true, y_pred) == pytest.approx(metrics.coverage_error(y, scores), rel=1e-12)
    assert LabelRankingLoss().mean(y_true, y_pred) == pytest.approx(metrics.label_ranking_loss(y, scores),
                                                                    rel=1e-12)


def _lenskit():
    pytest.importorskip("lenskit", reason="LensKit is the peer of RBP(normalize=True)")
    from lenskit.data import ItemList
    from lenskit.metrics.ranking import RBP as LensKitRBP

    return ItemList, LensKitRBP


@settings(max_examples=60, deadline=None)
@given(data=st.data(), k=st.one_of(st.none(), st.integers(1, 12)),
       p=st.sampled_from([0.5, 0.85, 0.95]), normalize=st.booleans())
def test_rbp_is_lenskits(data, k, p, normalize):
    """RBP and RBP(normalize=True) against LensKit's RBP on rankings of at least min(k, n_rel)
    items, where the two ideals coincide (see the next test for the shorter ones)."""
    ItemList, LensKitRBP = _lenskit()
    relevant = data.draw(st.sets(st.integers(0, 30), min_size=1, max_size=12))
    need = len(relevant) if k is None else min(k, len(relevant))
    ranking = data.draw(st.lists(st.integers(0, 40), unique=True, min_size=max(need, 1), max_size=25))
    ours = RBP(k, p=p, normalize=normalize).score(BinaryLabels.from_positive_indices([sorted(relevant)]),
                                                 Rankings.from_ranked_indices([ranking]))[0]
    theirs = LensKitRBP(k, patience=p, normalize=normalize).measure_list(
        ItemList(item_ids=ranking, ordered=True), ItemList(item_ids=sorted(relevant)))
    assert abs(ours - theirs) < 1e-12


def test_normalised_rbp_of_a_short_ranking_is_not_lenskits():
    """The documented difference: LensKit's ideal is as long as the ranking, rankereval's (as
    NDCG's) as the cutoff, so that a short ranking does not reach 1 by being short."""
    ItemList, LensKitRBP = _lenskit()
    y_true, y_pred = BinaryLabels.from_positive_indices([[1, 2, 3]]), Rankings.from_ranked_indices([[1]])
    theirs = LensKitRBP(10, patience=0.5, normalize=True).measure_list(
        ItemList(item_ids=[1], ordered=True), ItemList(item_ids=[1, 2, 3]))
    assert theirs == 1.0
    # rankereval: 0.5 / (0.5 * (1 + 0.5 + 0.25)), the ideal of three relevant items
    assert RBP(10, p=0.5, normalize=True).score(y_true, y_pred)[0] == pytest.approx(1 / 1.75, abs=1e-15)


def test_normalised_rbp_by_hand():
    y_true = NumericLabels.from_matrix([[1, 0, 3, 0, 0, 2], [0, 0, 0, 0, 1, 0], [0, 0, 0, 0, 0, 0]])
    y_pred = Rankings.from_ranked_indices([[2, 0, 5], [], [1, 2]])
    got = RBP(2, p=0.5, normalize=True).score(y_true, y_pred)
    # row 0: RBP@2 = 0.5 * (3 + 1 * 0.5) = 1.75; ideal (3, 2) = 0.5 * (3 + 2 * 0.5) = 2
    # row 1: an empty ranking scores 0; row 2: no relevant item, NaN
    np.testing.assert_allclose(got, [1.75 / 2, 0.0, np.nan], rtol=0, atol=1e-15)
    assert from_name("rbp@2[p=0.5,normalize]") == RBP(2, p=0.5, normalize=True)
    assert RBP(2, p=0.5, normalize=True).name == "rbp@2[p=0.5,normalize]"
    with pytest.raises(ValueError, match="residual and normalize cannot both be true"):
        RBP(residual=True, normalize=True)
    with pytest.raises(ValueError, match="residual and normalize"):
        from_name("rbp[residual,normalize]")
    assert not any(m.residual and m.normalize for m in (RBP(**p) for p in RBP._param_space()))
