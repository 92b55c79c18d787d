"""The peers' per-query metrics that rankereval adds: AUROC (scikit-learn's roc_auc_score per
query, torchmetrics' RetrievalAUROC) and FallOut (torchmetrics' RetrievalFallOut), each
against the peer that defines it, where installed."""
import numpy as np
import pytest

from rankereval import AUROC, BinaryLabels, FallOut, Rankings


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
    for ours, theirs in ((FallOut(k), tm.RetrievalFallOut(top_k=k)), (AUROC(k), tm.RetrievalAUROC(top_k=k))):
        want = float(theirs(preds, target, indexes=idx))
        assert abs(ours.mean(yt, yp) - want) < 1e-6, ours


def test_fallout_by_hand():
    y_true = BinaryLabels.from_positive_indices([[1], [1, 2]])
    y_pred = Rankings.from_ranked_indices([[9, 1, 8, 7], [1, 2]])
    # row 0: 3 non-relevant, 1 of them in the top 2; row 1: no non-relevant item
    np.testing.assert_array_equal(FallOut(2).score(y_true, y_pred), [1 / 3, np.nan])
    assert not FallOut.info.higher_is_better
