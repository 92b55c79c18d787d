"""The paired tests from mergeable sums (rankereval.stats._paired_sums, what rankereval.spark.compare
merges): any split of the queries gives rankereval.compare's t-test, and the keyed
randomization and Poisson bootstrap-t tests equal literal references written from their
definitions (signs and weights from the hash formula, not from the kernels)."""
import numpy as np
import pytest

from rankereval import BinaryLabels, Rankings, evaluate
from rankereval.stats import _bootstrap, _paired_sums
from rankereval.bootstrap import query_key_hashes
from rankereval.stats._paired_tests import CI_RESAMPLES
from rankereval.stats._compare_runs import _finish, compare
from rankereval.stats._alignment import _resolve_metrics
from helpers import GOLDEN, M64, mix64



def signs(hashes, seed, n_resamples):
    """s[i, b] = +1 or -1 from the top bit of mix64(key_i ^ mix64(seed + (b + 1) golden))."""
    t = [mix64((seed + (b + 1) * GOLDEN) & M64) for b in range(n_resamples)]
    return np.array([[1.0 - 2.0 * (mix64(int(k) ^ tb) >> 63) for tb in t] for k in hashes])


def test_keyed_sign_sums_literal():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(37, 3))
    keys = query_key_hashes(rng.integers(0, 10**9, size=37))
    s = signs(keys, 123, 50)
    want = s.T @ x
    for threads in (1, 3):
        got = _bootstrap.keyed_sign_sums(x, keys, 123, 50, threads)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    # blocks of rows add up (the sign of a row depends on its key only)
    a = _bootstrap.keyed_sign_sums(x[:20], keys[:20], 123, 50)
    b = _bootstrap.keyed_sign_sums(x[20:], keys[20:], 123, 50)
    np.testing.assert_allclose(a + b, want, rtol=0, atol=1e-12)


METRICS = ["ap@5", "ndcg@5", "p@3", "rr"]


@pytest.fixture(scope="module")
def experiment():
    """Labels and three runs over 60 queries; some queries without relevant items (NaN)."""
    rng = np.random.default_rng(7)
    n = 60
    labels = [list(rng.choice(20, size=rng.integers(0, 4), replace=False)) for _ in range(n)]
    runs = {name: Rankings.from_ranked_indices([list(rng.permutation(20)[:6]) for _ in range(n)])
            for name in ("a", "b", "c")}
    return BinaryLabels.from_positive_indices(labels), runs


def split_sums(y_true, runs, test, baseline, seeds, n_resamples, ci_resamples, nan_handling="drop",
               n_blocks=5, seed=0):
    """The merged sums of a random split of the queries (row numbers as query keys)."""
    names, objs = _resolve_metrics(METRICS)
    scores = np.stack([evaluate(y_true, r, METRICS, nan_handling="drop").scores for r in runs.values()], axis=2)
    rows = np.random.default_rng(seed).permutation(scores.shape[0])
    blocks = np.array_split(rows, n_blocks)
    parts = [_paired_sums.partials(scores[b], b, nan_handling, objs, list(runs), baseline, test, seeds,
                                   n_resamples, ci_resamples) for b in blocks]
    total = parts[0]
    for p in parts[1:]:
        total = _paired_sums.merge(total, p)
    return total, scores


def finish(total, runs, test, baseline, n_resamples, ci_resamples, nan_handling="drop"):
    names, objs = _resolve_metrics(METRICS)
    run_names = list(runs)
    b = None if baseline is None else run_names.index(baseline)
    pairs = ([(r, b) for r in range(len(run_names)) if r != b] if b is not None else
             [(j, i) for i in range(len(run_names)) for j in range(i + 1, len(run_names))])
    counts = total["counts"]
    means = total["score_sums"].to_float() / counts[:, None]
    _, mean, sd, p, low, high = _paired_sums.summarise(total, test, "two-sided", 0.05, n_resamples)
    return _finish(names, objs, run_names, baseline, pairs, test, "holm", 0.05, n_resamples, "two-sided",
                   nan_handling, ci_resamples, np.zeros(len(names), bool), np.zeros(len(names), bool), means,
                   counts, mean, sd, low, high, p, (total["better"], total["worse"], total["ties"]),
                   None, None, None, {})


@pytest.mark.parametrize("baseline", [None, "a"])
@pytest.mark.parametrize("nan_handling", ["drop", "zerofill"])
def test_t_test_from_any_split_is_compare(experiment, baseline, nan_handling):
    y_true, runs = experiment
    want = compare(y_true, runs, METRICS, baseline=baseline, nan_handling=nan_handling).summary()
    for seed, n_blocks in ((0, 1), (1, 4), (2, 13)):
        total, _ = split_sums(y_true, runs, "t", baseline, (0, 0), 0, 0, nan_handling, n_blocks, seed)
        got = finish(total, runs, "t", baseline, 10_000, 0, nan_handling).summary()
        for col in ("mean", "baseline_mean", "diff", "ci_low", "ci_high", "effect_size", "p_value",
                    "p_corrected"):
            np.testing.assert_allclose(got[col], want[col], rtol=1e-10, atol=1e-13, err_msg=col)
        for col in ("metric", "run", "baseline", "significant", "wins", "ties", "losses"):
            assert got[col].tolist() == want[col].tolist(), col


def literal_differences(scores, baseline_index=0):
    """Differences of runs 1.. against run 0, rows where both are defined (per column)."""
    d = scores[:, :, 1:] - scores[:, :, [baseline_index]]
    return d.reshape(scores.shape[0], -1)


def test_permutation_and_bootstrap_literal(experiment):
    y_true, runs = experiment
    runs = {k: runs[k] for k in ("a", "b")}
    B, seeds = 300, (11, 12)
    for test in ("permutation", "bootstrap"):
        ci_b = min(B, CI_RESAMPLES) if test == "permutation" else B
        total, scores = split_sums(y_true, runs, test, "a", seeds, B, ci_b, n_blocks=4, seed=3)
        got = _paired_sums.summarise(total, test, "two-sided", 0.05, B)
        d = literal_differences(scores)
        keys = query_key_hashes(np.arange(scores.shape[0]))
        w = _bootstrap.poisson_weights(keys, seeds[1], ci_b).astype(float)       # (n, B)
        for c in range(d.shape[1]):
            ok = ~np.isnan(d[:, c])
            dc, kc, wc = d[ok, c], keys[ok], w[ok]
            mean = dc.mean()
            sd = dc.std(ddof=1)
            boot = (wc * dc[:, None]).sum(0) / wc.sum(0)
            lo, hi = np.quantile(boot, [0.025, 0.975])
            assert abs(got[4][c] - lo) < 1e-12 and abs(got[5][c] - hi) < 1e-12
            if test == "permutation":
                null = (signs(kc, seeds[0], B) * dc[:, None]).sum(0)
                tol = 4.0 * len(dc) * np.finfo(float).eps * np.abs(dc).sum()
                p = ((np.abs(null) >= abs(dc.sum()) - tol).sum() + 1) / (B + 1)
            else:
                W = wc.sum(0)
                mb = (wc * dc[:, None]).sum(0) / W
                var = ((wc * (dc[:, None] - mb) ** 2).sum(0)) / (W - 1)
                t_null = (mb - mean) / np.sqrt(var / W)
                t_obs = mean / (sd / np.sqrt(len(dc)))
                p = ((np.abs(t_null) >= abs(t_obs) - 1e-9 * abs(t_obs)).sum() + 1) / (B + 1)
            assert got[3][c] == pytest.approx(p, abs=1e-12), (test, c)


def test_merge_order_does_not_matter(experiment):
    y_true, runs = experiment
    a, _ = split_sums(y_true, runs, "bootstrap", None, (1, 2), 50, 50, n_blocks=3, seed=4)
    b, _ = split_sums(y_true, runs, "bootstrap", None, (1, 2), 50, 50, n_blocks=7, seed=5)
    # the Poisson sums are exact: the same bits whatever the blocks; the others to rounding
    np.testing.assert_array_equal(a["p_sums"].to_float(), b["p_sums"].to_float())
    # so are the run means' sums (issue 42: compare's means are the engine's exact sums)
    np.testing.assert_array_equal(a["score_sums"].to_float(), b["score_sums"].to_float())
    for key in a:
        if key not in ("p_sums", "score_sums"):
            np.testing.assert_allclose(np.asarray(a[key], float), np.asarray(b[key], float), rtol=1e-12, atol=1e-12)
