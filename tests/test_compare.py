"""Tests of rankereval.compare: paired tests, corrections, alignment, reports and plots.

The statistics are checked against independent references: scipy's ``ttest_rel`` and
``permutation_test``, exact enumeration of all sign flips (and of all within-query
permutations for Tukey's HSD), statsmodels' ``multipletests``, and naive NumPy bootstraps;
their operating characteristics (interval coverage, type-I error) by simulation.
"""
import importlib
import itertools
import json
import inspect
import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.stats as st

from rankereval import AP, BinaryLabels, FirstRelevantRank, MeanRanks, NDCG, NumericLabels, Precision, Rankings, ReciprocalRank
from rankereval.stats import _bootstrap, _compare
from rankereval.stats._comparison import Comparison
from rankereval.stats._corrections import adjust_pvalues
from rankereval.stats._compare_runs import compare

# the module (``rankereval.compare`` may also be the re-exported function)
compare_module = importlib.import_module("rankereval.stats._paired_tests")

ALTERNATIVES = ("two-sided", "greater", "less")


def _signs(seed, b, n):
    """Signs the sign-flip kernel uses for resample b: bit i % 64 of output i // 64."""
    raw = _bootstrap.raw_outputs(seed, b, (n + 63) // 64)
    bits = np.array([(int(raw[i // 64]) >> (i % 64)) & 1 for i in range(n)])
    return np.where(bits == 1, -1.0, 1.0)


# ------------------------------------------------------------------------------------------
# kernels
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 7, 8, 63, 64, 65, 130, 1000])
def test_sign_flip_sums_equal_the_streams_signs(n):
    rng = np.random.default_rng(n)
    d = rng.normal(size=(n, 3))
    seed = 2 ** 63 + 12345
    sums = _compare.sign_flip_sums(d, 20, seed, 1)
    expected = np.array([_signs(seed, b, n) @ d for b in range(20)])
    np.testing.assert_allclose(sums, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(d).sum()))


@pytest.mark.parametrize("n_cols", [1, 2, 17, 40])
def test_kernels_bit_identical_for_any_thread_count(n_cols):
    rng = np.random.default_rng(n_cols)
    d = rng.normal(size=(1500, n_cols))
    ref = _compare.sign_flip_sums(d, 101, 9, 1)
    boot = _compare.bootstrap_sums(d, 53, 9, 1)
    s = rng.random((300, 2 * 3))
    tukey = _compare.tukey_ranges(s, 2, 3, 37, 9, 1)
    for threads in (2, 3, 8):
        assert np.array_equal(_compare.sign_flip_sums(d, 101, 9, threads), ref)
        assert np.array_equal(_compare.bootstrap_sums(d, 53, 9, threads), boot)
        assert np.array_equal(_compare.tukey_ranges(s, 2, 3, 37, 9, threads), tukey)


def test_bootstrap_sums_draw_what_the_bootstrap_draws():
    """One engine: a one-column paired bootstrap is the bootstrap of the mean, draw for draw."""
    rng = np.random.default_rng(5)
    for n in (1, 33, 512, 5000):
        x = rng.random(n)
        for block in (0, 64, 10 ** 6):
            means = _bootstrap.resample_means(x, 40, 77, 1, block)
            sums = _compare.bootstrap_sums(np.ascontiguousarray(x[:, None]), 40, 77, 1, block)
            np.testing.assert_allclose(sums[:, 0] / n, means, rtol=1e-12, atol=0)


def test_bootstrap_sums_use_the_same_rows_for_every_column():
    rng = np.random.default_rng(1)
    x = rng.random(700)
    d = np.ascontiguousarray(np.column_stack([x, 2 * x, -x]))
    sums = _compare.bootstrap_sums(d, 30, 3, 2)
    np.testing.assert_allclose(sums[:, 1], 2 * sums[:, 0], rtol=1e-13)
    np.testing.assert_allclose(sums[:, 2], -sums[:, 0], rtol=1e-13)


def test_tukey_ranges_two_runs_are_sign_flips_of_the_difference():
    """With two runs a within-query permutation swaps the pair or not: range = |flipped sum|."""
    rng = np.random.default_rng(2)
    s = rng.random((200, 2))
    ranges = _compare.tukey_ranges(np.ascontiguousarray(s), 1, 2, 4000, 11, 2)[:, 0]
    d = s[:, 0] - s[:, 1]
    flips = _compare.sign_flip_sums(np.ascontiguousarray(d[:, None]), 4000, 12, 2)[:, 0]
    # same law: compare quantiles (two independent samples of 4000)
    qs = np.linspace(0.05, 0.95, 19)
    np.testing.assert_allclose(np.quantile(ranges, qs), np.quantile(np.abs(flips), qs),
                               atol=0.12 * np.abs(flips).std() + 1e-12, rtol=0.06)


def test_kernel_argument_errors():
    d = np.zeros((3, 2))
    with pytest.raises(ValueError, match="n_resamples"):
        _compare.sign_flip_sums(d, -1, 0)
    with pytest.raises(ValueError, match="at least one row"):
        _compare.bootstrap_sums(np.zeros((0, 2)), 3, 0)
    with pytest.raises(ValueError, match="n_metrics"):
        _compare.tukey_ranges(d, 1, 3, 3, 0)
    assert _compare.sign_flip_sums(np.zeros((0, 2)), 4, 0).shape == (4, 2)


# ------------------------------------------------------------------------------------------
# paired t-test
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_t_test_equals_scipy_ttest_rel(alternative):
    rng = np.random.default_rng(3)
    x = rng.random((40, 6))
    y = x + rng.normal(0.02, 0.1, size=(40, 6))
    y[:, 5] = x[:, 5] + rng.normal(0, 1e-3, size=40)
    p, low, high = compare_module._t_test(y - x, alternative, 0.1)
    for c in range(6):
        ref = st.ttest_rel(y[:, c], x[:, c], alternative=alternative)
        assert abs(p[c] - ref.pvalue) <= 1e-12
        if not hasattr(ref, "confidence_interval"):  # scipy < 1.10 (the oldest supported)
            continue
        ci = ref.confidence_interval(confidence_level=0.9)
        for mine, theirs in ((low[c], ci.low), (high[c], ci.high)):
            assert mine == theirs if math.isinf(theirs) else abs(mine - theirs) <= 1e-12


def test_t_test_through_compare_equals_scipy_on_metric_scores():
    rng = np.random.default_rng(4)
    n, items = 60, 30
    y_true = BinaryLabels.from_matrix((rng.random((n, items)) < 0.2).astype(int))
    runs = {name: Rankings.from_scores(rng.random((n, items)) + bias * (y_true.csr.toarray() > 0))
            for name, bias in (("a", 0.0), ("b", 0.3), ("c", 0.5))}
    metrics = [Precision(5), NDCG(10)]
    cmp = compare(y_true, runs, metrics, baseline="a", alpha=0.05, nan_handling="zerofill")
    df = cmp.summary()
    for _, row in df.iterrows():
        m = metrics[list(cmp.metrics).index(row["metric"])]
        sr = np.nan_to_num(m.score(y_true, runs[row["run"]]))
        sb = np.nan_to_num(m.score(y_true, runs[row["baseline"]]))
        ref = st.ttest_rel(sr, sb)
        assert abs(row["p_value"] - ref.pvalue) <= 1e-12
        if hasattr(ref, "confidence_interval"):  # scipy >= 1.10
            ci = ref.confidence_interval(0.95)
            assert abs(row["ci_low"] - ci.low) <= 1e-12 and abs(row["ci_high"] - ci.high) <= 1e-12
        assert row["diff"] == pytest.approx(np.mean(sr - sb), abs=1e-14)
        assert row["mean"] == pytest.approx(sr.mean(), abs=1e-14)
        assert row["effect_size"] == pytest.approx(np.mean(sr - sb) / np.std(sr - sb, ddof=1), rel=1e-12)
        assert (row["wins"], row["ties"], row["losses"]) == (
            int((sr > sb).sum()), int((sr == sb).sum()), int((sr < sb).sum()))
    # Holm over the two comparisons of each metric
    for metric in cmp.metrics:
        sub = df[df.metric == metric]
        np.testing.assert_allclose(sub.p_corrected, adjust_pvalues(sub.p_value.to_numpy(), "holm"))


def test_metric_names_as_given():
    # issue 33: a list of names keys the comparison by the strings given, as evaluate does
    y_true = BinaryLabels.from_positive_indices([[0], [1, 2], [2]])
    runs = {"a": Rankings.from_ranked_indices([[0, 1], [2, 1], [0, 2]]),
            "b": Rankings.from_ranked_indices([[1, 0], [1, 2], [2, 0]])}
    cmp = compare(y_true, runs, ["MAP", "mrr@2", Precision(1)], n_resamples=99, random_state=0)
    assert cmp.metrics == ("MAP", "mrr@2", "p@1")
    assert list(cmp.summary().metric.unique()) == ["MAP", "mrr@2", "p@1"]
    np.testing.assert_array_equal(cmp.means[0], [AP().mean(y_true, r) for r in runs.values()])


def test_identical_runs_have_p_one():
    y_true = BinaryLabels.from_positive_indices([[0], [1], [2]])
    run = Rankings.from_ranked_indices([[0, 1], [2, 1], [0, 2]])
    for test in ("t", "permutation", "bootstrap", "tukey"):
        cmp = compare(y_true, {"a": run, "b": run}, [Precision(1)], test=test, n_resamples=99,
                      random_state=0)
        row = cmp.rows()[0]
        assert row["p_value"] == 1.0 and not row["significant"] and row["diff"] == 0.0
        assert (row["wins"], row["ties"], row["losses"]) == (0, 3, 0)


# ------------------------------------------------------------------------------------------
# permutation test
# ------------------------------------------------------------------------------------------

def _exact_sign_flip_p(d, alternative):
    """p-value over all 2**n sign vectors (the exact randomization distribution)."""
    n = d.size
    signs = 1.0 - 2.0 * ((np.arange(2 ** n)[:, None] >> np.arange(n)) & 1)
    sums = signs @ d
    obs = d.sum()
    tol = 1e-9 * np.abs(d).sum()
    if alternative == "two-sided":
        return np.mean(np.abs(sums) >= abs(obs) - tol)
    if alternative == "greater":
        return np.mean(sums >= obs - tol)
    return np.mean(sums <= obs + tol)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_permutation_p_values_agree_with_exact_enumeration(alternative):
    rng = np.random.default_rng(6)
    B = 20_000
    sizes = [6, 9, 12, 14, 16, 16]
    d = np.full((16, len(sizes)), np.nan)          # shorter data sets: NaN = not compared
    for c, n in enumerate(sizes):
        d[:n, c] = rng.normal(0.25 * (c % 3), 1.0, size=n).round(1)   # rounded: ties occur
    p = compare_module._permutation_test(d, alternative, B, seed=123)
    for c, n in enumerate(sizes):
        exact = _exact_sign_flip_p(d[:n, c], alternative)
        se = math.sqrt(max(exact * (1 - exact), 1.0 / B) / B)
        assert abs(p[c] - exact) <= 3 * se + 1.0 / (B + 1), (c, p[c], exact)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_permutation_agrees_with_scipy_permutation_test(alternative):
    rng = np.random.default_rng(7)
    n, B = 24, 20_000
    x = rng.random(n)
    y = x + rng.normal(0.08, 0.25, size=n)
    # scipy >= 1.15 calls the generator `rng`, older releases `random_state`
    seed_kw = "rng" if "rng" in inspect.signature(st.permutation_test).parameters else "random_state"
    ref = st.permutation_test((y, x), lambda a, b, axis: np.mean(a - b, axis=axis), vectorized=True,
                              permutation_type="samples", n_resamples=B, alternative=alternative,
                              **{seed_kw: np.random.default_rng(8)})
    p = compare_module._permutation_test((y - x)[:, None], alternative, B, seed=9)[0]
    se = math.sqrt(2 * ref.pvalue * (1 - ref.pvalue) / B) + 1.0 / B
    assert abs(p - ref.pvalue) <= 3 * se + 2.0 / B, (p, ref.pvalue)


def test_permutation_p_value_is_never_zero():
    d = np.linspace(1, 2, 40)[:, None]             # every flip lowers the sum
    p = compare_module._permutation_test(d, "two-sided", 999, seed=1)
    assert p[0] == 1 / 1000


# ------------------------------------------------------------------------------------------
# bootstrap test
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_bootstrap_test_agrees_with_a_naive_numpy_bootstrap(alternative):
    """Bootstrap-t test and percentile interval vs the textbook O(n B) NumPy version."""
    rng = np.random.default_rng(10)
    n, B = 30, 20_000
    d = rng.normal(0.12, 0.5, size=n)
    means, t_null = compare_module._bootstrap_means(d[:, None], B, np.random.default_rng(11),
                                                    studentized=True)
    p = compare_module._bootstrap_test(t_null, d[:, None], alternative)[0]
    z = d - d.mean()                                     # the null: centred differences
    resampled = z[np.random.default_rng(12).integers(0, n, size=(B, n))]
    t_naive = resampled.mean(axis=1) / (resampled.std(axis=1, ddof=1) / math.sqrt(n))
    t_obs = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    if alternative == "two-sided":
        ref = np.mean(np.abs(t_naive) >= abs(t_obs))
    elif alternative == "greater":
        ref = np.mean(t_naive >= t_obs)
    else:
        ref = np.mean(t_naive <= t_obs)
    se = math.sqrt(2 * max(ref * (1 - ref), 1 / B) / B)
    assert abs(p - ref) <= 3 * se + 2.0 / B, (p, ref)
    naive = d.mean() + resampled.mean(axis=1)            # resampled means of the data
    qs = np.linspace(0.05, 0.95, 19)
    np.testing.assert_allclose(np.quantile(means[:, 0], qs), np.quantile(naive, qs),
                               atol=0.05 * naive.std())
    low, high = compare_module._percentile_ci(means, alternative, 0.05)
    q = {"two-sided": (0.025, 0.975), "greater": (0.05, None), "less": (None, 0.95)}[alternative]
    sd = naive.std()
    if q[0] is None:
        assert low[0] == -np.inf
    else:
        assert abs(low[0] - np.quantile(naive, q[0])) <= 0.05 * sd
    if q[1] is None:
        assert high[0] == np.inf
    else:
        assert abs(high[0] - np.quantile(naive, q[1])) <= 0.05 * sd


def test_bootstrap_groups_columns_by_their_queries():
    """Columns with dropped queries are resampled over their own queries only."""
    rng = np.random.default_rng(13)
    d = rng.normal(size=(50, 2))
    d[:20, 1] = np.nan
    means = compare_module._bootstrap_means(d, 4000, np.random.default_rng(0))[0]
    sub = compare_module._bootstrap_means(np.ascontiguousarray(d[20:, 1:]), 4000,
                                          np.random.default_rng(1))[0]
    # same law as resampling the 30 kept values: compare mean and spread
    assert abs(means[:, 1].mean() - np.nanmean(d[:, 1])) < 4 * means[:, 1].std() / math.sqrt(4000)
    assert means[:, 1].std() == pytest.approx(sub[:, 0].std(), rel=0.06)
    assert means[:, 1].std() == pytest.approx(np.std(d[20:, 1]) / math.sqrt(30), rel=0.06)


# ------------------------------------------------------------------------------------------
# Tukey HSD
# ------------------------------------------------------------------------------------------

def test_tukey_hsd_on_a_worked_example():
    """4 queries x 3 runs: the exact HSD p-values by enumerating all 6**4 permutations."""
    scores = np.array([[0.2, 0.5, 0.9],
                       [0.1, 0.4, 0.3],
                       [0.3, 0.6, 0.8],
                       [0.0, 0.1, 0.7]])
    perms = list(itertools.permutations(range(3)))
    means = scores.mean(axis=0)
    max_ranges = []
    for choice in itertools.product(perms, repeat=4):
        permuted = np.array([scores[i, list(p)] for i, p in enumerate(choice)])
        m = permuted.mean(axis=0)
        max_ranges.append(m.max() - m.min())
    max_ranges = np.array(max_ranges)
    B = 30_000
    cmp = _compare_from_scores({"a": scores[:, 0], "b": scores[:, 1], "c": scores[:, 2]},
                               test="tukey", n_resamples=B, random_state=1)
    for row in cmp.rows():
        r, b = "abc".index(row["run"]), "abc".index(row["baseline"])
        observed = abs(means[r] - means[b])
        exact = np.mean(max_ranges >= observed - 1e-12)
        se = math.sqrt(exact * (1 - exact) / B)
        assert abs(row["p_value"] - exact) <= 3 * se + 1.0 / B, (row, exact)
        assert row["p_corrected"] == row["p_value"]
    assert cmp.correction == "tukey"


def test_tukey_rejects_baseline_and_one_sided():
    y, runs = _tiny_runs()
    with pytest.raises(ValueError, match="baseline=None"):
        compare(y, runs, [Precision(1)], test="tukey", baseline="a")
    with pytest.raises(ValueError, match="two-sided"):
        compare(y, runs, [Precision(1)], test="tukey", alternative="less")


# ------------------------------------------------------------------------------------------
# corrections
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method,sm", [("holm", "holm"), ("bonferroni", "bonferroni"),
                                       ("bh", "fdr_bh"), ("fdr_bh", "fdr_bh"), ("none", None)])
def test_corrections_equal_statsmodels(method, sm):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    rng = np.random.default_rng(14)
    for m in (1, 2, 5, 17, 100):
        p = rng.random(m) ** 3
        p[: m // 3] = p[0]                          # ties
        adj = adjust_pvalues(p, method)
        if sm is None:
            np.testing.assert_array_equal(adj, p)
            continue
        reject, ref, _, _ = multitest.multipletests(p, alpha=0.05, method=sm)
        np.testing.assert_allclose(adj, ref, rtol=1e-15, atol=0)
        np.testing.assert_array_equal(adj <= 0.05, reject)


def test_corrections_leave_nan_out_of_the_family():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.01, np.nan, 0.04, 0.03])
    adj = adjust_pvalues(p, "holm")
    assert np.isnan(adj[1])
    np.testing.assert_allclose(adj[[0, 2, 3]], multitest.multipletests(p[[0, 2, 3]], method="holm")[1])
    assert adjust_pvalues([], "bh").shape == (0,)
    with pytest.raises(ValueError, match="correction"):
        adjust_pvalues([0.1], "hs")
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        adjust_pvalues([1.5], "holm")


# ------------------------------------------------------------------------------------------
# operating characteristics, by simulation (vectorised: one column per simulated data set)
# ------------------------------------------------------------------------------------------

def _null_sets(rng, n, sets, runs=2):
    """Per-query scores of exchangeable runs: a query difficulty plus i.i.d. noise, in [0, 1]."""
    base = rng.beta(2, 3, size=(n, sets, 1))
    return np.clip(base + rng.normal(0, 0.15, size=(n, sets, runs)), 0, 1)


@pytest.mark.parametrize("test", ["t", "permutation", "bootstrap"])
def test_type_one_error_at_alpha(test):
    rng = np.random.default_rng(15)
    s = _null_sets(rng, 50, 1000)
    d = s[:, :, 1] - s[:, :, 0]
    if test == "t":
        p = compare_module._t_test(d, "two-sided", 0.05)[0]
    elif test == "permutation":
        p = compare_module._permutation_test(d, "two-sided", 999, seed=16)
    else:
        t_null = compare_module._bootstrap_means(d, 999, np.random.default_rng(16), studentized=True)[1]
        p = compare_module._bootstrap_test(t_null, d, "two-sided")
    rate = np.mean(p <= 0.05)
    assert 0.035 <= rate <= 0.065, rate


def test_type_one_error_of_tukey_is_family_wise():
    rng = np.random.default_rng(17)
    s = _null_sets(rng, 50, 1000, runs=3)               # 1000 "metrics" of 3 runs
    valid = np.ones(s.shape[:2], dtype=bool)
    p = compare_module._tukey_test(s, valid, [(1, 0), (2, 0), (2, 1)], 999, seed=18)
    rate = np.mean(p.min(axis=1) <= 0.05)               # any pair significant
    assert 0.035 <= rate <= 0.065, rate


@pytest.mark.parametrize("test", ["t", "bootstrap"])
def test_interval_coverage(test):
    rng = np.random.default_rng(0)
    mu, n = 0.05, 50
    # skewed differences with a known mean
    d = mu + 0.6 * (rng.beta(2, 5, size=(n, 200)) - 2 / 7)
    if test == "t":
        _, low, high = compare_module._t_test(d, "two-sided", 0.05)
    else:
        means = compare_module._bootstrap_means(d, 2000, np.random.default_rng(1))[0]
        low, high = compare_module._percentile_ci(means, "two-sided", 0.05)
    coverage = np.mean((low <= mu) & (mu <= high))
    assert 0.93 <= coverage <= 0.97, coverage


# ------------------------------------------------------------------------------------------
# compare(): arguments, NaN handling, directions, determinism
# ------------------------------------------------------------------------------------------

def _tiny_runs():
    y = BinaryLabels.from_positive_indices([[0], [1], [2], [0, 1]] * 3)
    runs = {"a": Rankings.from_ranked_indices([[0, 1], [2, 1], [0, 2], [1, 0]] * 3),
            "b": Rankings.from_ranked_indices([[1, 0], [1, 2], [2, 0], [2, 1]] * 3),
            "c": Rankings.from_ranked_indices([[2, 0], [0, 1], [2, 1], [0, 2]] * 3)}
    return y, runs


def _compare_from_scores(columns, **kwargs):
    """compare() on runs whose per-query Precision@10 equals the given scores.

    Scores are multiples of 0.1: every query has items 0-9 relevant, and a run with score s
    ranks round(10 s) of them first, then irrelevant items.
    """
    names = list(columns)
    n = len(columns[names[0]])
    y = BinaryLabels.from_positive_indices([list(range(10))] * n)
    runs = {}
    for name in names:
        rows = []
        for s in columns[name]:
            hits = int(round(10 * s))
            rows.append(list(range(hits)) + list(range(100, 100 + 10 - hits)))
        runs[name] = Rankings.from_ranked_indices(rows)
    return compare(y, runs, {"P@10": Precision(10)}, **kwargs)


@pytest.mark.parametrize("kwargs,match", [
    (dict(test="wilcoxon"), "test must be one of"),
    (dict(correction="hs"), "correction must be one of"),
    (dict(alternative="two_sided"), "alternative must be one of"),
    (dict(alpha=0), "alpha"), (dict(alpha=1.5), "alpha"), (dict(alpha=True), "alpha"),
    (dict(n_resamples=0), "n_resamples"), (dict(n_resamples=1.5), "n_resamples"),
    (dict(nan_handling="omit"), "nan_handling"), (dict(queries="all"), "queries"),
    (dict(baseline="zzz"), "baseline must be one of"),
    (dict(relevance_level="1"), "relevance_level"),
])
def test_argument_errors_name_the_argument(kwargs, match):
    y, runs = _tiny_runs()
    with pytest.raises(ValueError, match=match):
        compare(y, runs, [Precision(1)], **kwargs)


def test_input_errors():
    y, runs = _tiny_runs()
    with pytest.raises(TypeError, match="runs must be a dict"):
        compare(y, list(runs.values()), [Precision(1)])
    with pytest.raises(ValueError, match="at least two runs"):
        compare(y, {"a": runs["a"]}, [Precision(1)])
    with pytest.raises(TypeError, match=r"runs\['b'\] must be Rankings"):
        compare(y, {"a": runs["a"], "b": [[0, 1]]}, [Precision(1)])
    with pytest.raises(ValueError, match="different numbers of rankings"):
        compare(y, {"a": runs["a"], "b": Rankings.from_ranked_indices([[0]])}, [Precision(1)])
    with pytest.raises(ValueError, match="metrics is empty"):
        compare(y, runs, [])
    with pytest.raises(TypeError, match="Metric"):
        compare(y, runs, [42])
    with pytest.raises(ValueError, match="column name"):
        compare(y, runs, [Precision(1), Precision(1)])
    with pytest.raises(TypeError, match="y_true"):
        compare(42, {"a": "x.txt", "b": "y.txt"}, [Precision(1)])


def test_metric_names_resolve_through_from_name_when_the_registry_exists():
    import rankereval.metrics as metrics_module

    y, runs = _tiny_runs()
    if hasattr(metrics_module, "from_name"):
        cmp = compare(y, runs, ["p@1"])
        assert cmp.metrics == ("p@1",)
        assert cmp.rows()[0]["mean"] == pytest.approx(Precision(1).score(y, runs["b"]).mean())
    else:
        with pytest.raises(TypeError, match="from_name"):
            compare(y, runs, ["p@1"])


def test_all_pairs_order_and_baseline_pairs():
    y, runs = _tiny_runs()
    cmp = compare(y, runs, [Precision(1)])
    assert [(r["run"], r["baseline"]) for r in cmp.rows()] == [("b", "a"), ("c", "a"), ("c", "b")]
    cmp = compare(y, runs, [Precision(1)], baseline="b")
    assert [(r["run"], r["baseline"]) for r in cmp.rows()] == [("a", "b"), ("c", "b")]


def test_nan_handling():
    # query 1 has no relevant item: AP is NaN there for every run
    y = BinaryLabels.from_positive_indices([[0], [], [2], [1], [0], [2]])
    runs = {"a": Rankings.from_ranked_indices([[0, 1], [2, 1], [0, 2], [1, 0], [2, 0], [2, 1]]),
            "b": Rankings.from_ranked_indices([[1, 0], [1, 2], [2, 0], [2, 1], [0, 1], [0, 2]])}
    sa, sb = AP(2).score(y, runs["a"]), AP(2).score(y, runs["b"])
    assert np.isnan(sa[1])
    keep = ~np.isnan(sa)
    drop = compare(y, runs, [AP(2)], nan_handling="drop")
    row = drop.rows()[0]
    assert drop.n_queries.tolist() == [5] and drop.report["n_undefined"] == {AP(2).name: 1}
    assert row["mean"] == pytest.approx(sb[keep].mean())
    assert row["p_value"] == pytest.approx(st.ttest_rel(sb[keep], sa[keep]).pvalue, abs=1e-12)
    zero = compare(y, runs, [AP(2)], nan_handling="zerofill")
    assert zero.n_queries.tolist() == [6]
    assert zero.rows()[0]["mean"] == pytest.approx(np.nan_to_num(sb).mean())
    # issue 42: an infinite score is a value, not undefined (as in evaluate). FirstRelevantRank
    # is infinite where the relevant item is not ranked (query 0 of run b): run b's mean is
    # infinite under every nan_handling, and only the paired test leaves that query out
    y2 = BinaryLabels.from_positive_indices([[0], [1], [2], [1]])
    runs2 = {"a": Rankings.from_ranked_indices([[0, 1], [1, 2], [2, 0], [0, 1]]),
             "b": Rankings.from_ranked_indices([[1, 2], [1, 0], [0, 2], [1, 0]])}
    assert np.isinf(FirstRelevantRank().score(y2, runs2["b"])[0])
    fr = [FirstRelevantRank().score(y2, runs2[r]) for r in ("a", "b")]
    for nan_handling in ("propagate", "drop", "zerofill"):
        cmp2 = compare(y2, runs2, [FirstRelevantRank(), Precision(1)], nan_handling=nan_handling)
        rows = cmp2.rows()
        assert rows[0]["mean"] == math.inf and rows[0]["baseline_mean"] == fr[0].mean()
        assert cmp2.n_queries.tolist() == [4, 4]
        assert cmp2.report["n_undefined"] == {FirstRelevantRank().name: 0, Precision(1).name: 0}
        assert rows[0]["p_value"] == pytest.approx(st.ttest_rel(fr[1][1:], fr[0][1:]).pvalue, abs=1e-12)
        assert not math.isnan(rows[1]["p_value"])
    # a NaN still propagates: AP@2 of run a is undefined on query 1
    prop = compare(y, runs, [AP(2)], nan_handling="propagate")
    assert math.isnan(prop.rows()[0]["p_value"]) and math.isnan(prop.rows()[0]["mean"])
    assert not prop.rows()[0]["significant"]


def test_lower_is_better_metrics_count_wins_the_other_way():
    y = BinaryLabels.from_positive_indices([[0], [1], [2], [0]])
    runs = {"a": Rankings.from_ranked_indices([[1, 2, 0], [0, 2, 1], [0, 1, 2], [1, 0, 2]]),
            "b": Rankings.from_ranked_indices([[0, 1, 2], [1, 0, 2], [0, 2, 1], [1, 2, 0]])}
    # ranks of the relevant item, a: 3, 3, 3, 2; b: 1, 1, 2, 3 -> b wins 3 queries, loses 1
    cmp = compare(y, runs, [MeanRanks()], baseline="a")
    row = cmp.rows()[0]
    assert row["diff"] < 0                       # b ranks the relevant item higher
    assert (row["wins"], row["losses"]) == (3, 1)
    assert cmp.higher_is_better == (False,)
    assert "\\textbf{" + f"{row['mean']:.4f}" + "}" in cmp.to_latex()


def test_graded_labels_are_thresholded_for_binary_metrics():
    grades = NumericLabels.from_matrix([[0, 2, 1], [3, 0, 1], [1, 1, 2], [2, 0, 0]])
    runs = {"a": Rankings.from_ranked_indices([[1, 0], [0, 1], [2, 0], [0, 1]]),
            "b": Rankings.from_ranked_indices([[2, 0], [2, 1], [0, 1], [1, 2]])}
    cmp = compare(grades, runs, [Precision(1), NDCG(2)], relevance_level=2)
    binary = BinaryLabels.from_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]]))
    assert cmp.means[0].tolist() == pytest.approx([Precision(1).score(binary, runs[r]).mean() for r in "ab"])
    assert cmp.means[1].tolist() == pytest.approx([NDCG(2).score(grades, runs[r]).mean() for r in "ab"])


def test_results_are_reproducible_and_independent_of_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(19)
    n = 3000
    y = BinaryLabels.from_matrix((rng.random((n, 20)) < 0.2).astype(int))
    runs = {k: Rankings.from_scores(rng.random((n, 20))) for k in "abc"}
    for test in ("permutation", "bootstrap", "tukey"):
        kw = dict(test=test, n_resamples=300, random_state=5, nan_handling="drop")
        ref = compare(y, runs, [Precision(5), ReciprocalRank(10)], **kw)
        with threadpoolctl.threadpool_limits(1, user_api="openmp"):
            one = compare(y, runs, [Precision(5), ReciprocalRank(10)], **kw)
        for key in ("p_value", "ci_low", "ci_high"):
            np.testing.assert_array_equal(ref.results[key], one.results[key])


def test_result_arrays_are_read_only():
    y, runs = _tiny_runs()
    cmp = compare(y, runs, [Precision(1)])
    with pytest.raises(ValueError):
        cmp.results["p_value"][0] = 0.0
    with pytest.raises(ValueError):
        cmp.scores[0, 0, 0] = 1.0


# ------------------------------------------------------------------------------------------
# alignment of TREC runs by query id
# ------------------------------------------------------------------------------------------

QRELS = """q1 0 d1 1
q1 0 d2 0
q2 0 d3 2
q2 0 d4 1
q3 0 d5 1
q4 0 d6 1
q4 0 d7 1
q5 0 d8 1
"""


def _write_ranked_run(path, rows):
    with open(path, "w") as fh:
        for q, docs in rows.items():
            for rank, doc in enumerate(docs, 1):
                fh.write(f"{q} Q0 {doc} {rank} {100 - rank} tag\n")
    return str(path)


@pytest.fixture
def trec(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text(QRELS)
    # run a lacks q2, run b lacks q4; both rank q1, q3, q5
    a = _write_ranked_run(tmp_path / "a.run", {"q1": ["d1", "d2"], "q3": ["d9", "d5"], "q4": ["d6"], "q5": ["d8"]})
    b = _write_ranked_run(tmp_path / "b.run", {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d5"], "q5": ["d0", "d8"]})
    return str(qrels), a, b


def test_runs_over_different_queries_are_refused(trec):
    qrels, a, b = trec
    with pytest.raises(ValueError, match=r"'a' lacks q2.*'b' lacks q4|'b' lacks q4.*'a' lacks q2"):
        compare(qrels, {"a": a, "b": b}, [AP(10)])


def test_intersection_aligns_by_query_id(trec):
    from rankereval.io import read_trec

    qrels, a, b = trec
    cmp = compare(qrels, {"a": a, "b": b}, [AP(10), ReciprocalRank(10)], queries="intersection")
    assert list(cmp.query_ids) == ["q1", "q3", "q5"]
    assert cmp.report["n_dropped"] == 2 and cmp.report["missing"] == {"a": ["q2"], "b": ["q4"]}
    # the scores of each query, read one run at a time and looked up by id
    for j, path in enumerate((a, b)):
        data = read_trec(qrels, path)
        by_id = dict(zip(data.query_ids, data.score(AP(10))))
        assert cmp.scores[:, 0, j].tolist() == [by_id[q] for q in cmp.query_ids]
    # AP@10, b - a: q1 d2,d1 vs d1,d2: 1/2 - 1; q3 d5 vs d9,d5: 1 - 1/2; q5 d0,d8 vs d8: 1/2 - 1
    expected = {"q1": 0.5 - 1.0, "q3": 1.0 - 0.5, "q5": 0.5 - 1.0}
    d = cmp.scores[:, 0, 1] - cmp.scores[:, 0, 0]
    assert d.tolist() == pytest.approx([expected[q] for q in cmp.query_ids])


def test_union_scores_missing_queries_as_empty_rankings(trec):
    qrels, a, b = trec
    cmp = compare(qrels, {"a": a, "b": b}, [AP(10)], queries="union")
    assert list(cmp.query_ids) == ["q1", "q2", "q3", "q4", "q5"]
    assert cmp.report["n_filled"] == {"a": 1, "b": 1}
    q = list(cmp.query_ids)
    # q2 has 2 relevant documents: a (empty ranking) 0; b ranks d3 first: AP@10 = 1/2
    assert cmp.scores[q.index("q2"), 0, 0] == 0.0 and cmp.scores[q.index("q2"), 0, 1] == 0.5
    assert cmp.scores[q.index("q4"), 0, 1] == 0.0 and cmp.scores[q.index("q4"), 0, 0] == 0.5


def test_trecdata_runs(trec, tmp_path):
    from rankereval.io import read_trec

    qrels, a, b = trec
    datas = {"a": read_trec(qrels, a, missing="empty"), "b": read_trec(qrels, b, missing="empty")}
    ref = compare(qrels, {"a": a, "b": b}, [AP(10)], queries="union")
    got = compare(None, datas, [AP(10)], queries="union")
    np.testing.assert_array_equal(got.scores, ref.scores)
    dropped = {"a": read_trec(qrels, a), "b": read_trec(qrels, b)}
    with pytest.raises(ValueError, match="missing='empty'"):
        compare(None, dropped, [AP(10)], queries="union")
    assert list(compare(None, dropped, [AP(10)], queries="intersection").query_ids) == ["q1", "q3", "q5"]
    other = tmp_path / "other_qrels.txt"
    other.write_text(QRELS + "q6 0 d1 1\n")
    mixed = {"a": read_trec(qrels, a), "b": read_trec(str(other), b)}
    with pytest.raises(ValueError, match="different qrels"):
        compare(None, mixed, [AP(10)], queries="intersection")
    with pytest.raises(TypeError, match="qrels path"):
        compare(None, {"a": a, "b": b}, [AP(10)])


# ------------------------------------------------------------------------------------------
# reports
# ------------------------------------------------------------------------------------------

@pytest.fixture
def three_runs():
    """c is much better than a and b; b and a are equal on every query."""
    rng = np.random.default_rng(20)
    a = rng.integers(0, 6, size=40) / 10
    c = np.minimum(a + rng.choice([0.2, 0.3, 0.4], size=40), 1.0)
    return _compare_from_scores({"a": a, "b_x": a.copy(), "c": c}, random_state=0)


def test_to_pandas_long_format(three_runs):
    df = three_runs.summary()
    assert list(df.columns) == ["metric", "run", "baseline", "mean", "baseline_mean", "diff", "ci_low",
                                "ci_high", "effect_size", "p_value", "p_corrected", "significant", "wins",
                                "ties", "losses"]
    assert len(df) == 3
    assert df.significant.tolist() == [False, True, True]
    np.testing.assert_allclose(df["diff"], df["mean"] - df["baseline_mean"], atol=1e-15)


def test_table_marks_significant_wins(three_runs):
    table = three_runs.table()
    assert list(table.columns) == ["key", "P@10"] and table["key"].tolist() == ["a", "b", "c"]
    mean_c = three_runs.means[0, 2]
    assert table.loc["c", "P@10"] == f"{mean_c:.4f}ᵃᵇ"
    assert table.loc["a", "P@10"] == f"{three_runs.means[0, 0]:.4f}"
    assert "paired t-test" in table.attrs["caption"]


def test_to_latex(three_runs):
    tex = three_runs.to_latex()
    assert "\\toprule" in tex and "\\midrule" in tex and "\\bottomrule" in tex
    mean_a, mean_c = three_runs.means[0, 0], three_runs.means[0, 2]
    assert f"c & c & \\textbf{{{mean_c:.4f}}}$^{{ab}}$ \\\\" in tex
    assert f"a & a & {mean_a:.4f}\\hphantom{{$^{{ab}}$}} \\\\" in tex
    assert "b & b\\_x &" in tex                 # escaped
    caption = tex[tex.index("\\caption{"):].split("\n")[0]
    for word in ("paired t-test", "Holm", "alpha = 0.05", "40 queries"):
        assert word in caption
    resampled = _compare_from_scores({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.5]}, test="permutation",
                                     n_resamples=999, random_state=0)
    assert "B = 999 resamples" in resampled.to_latex()
    assert "\\label{tab:x}" in three_runs.to_latex(label="tab:x")


def test_to_markdown_and_json(three_runs):
    md = three_runs.to_markdown()
    assert "| c | c | **" in md and "<sup>a,b</sup>" in md and "b_x" in md
    doc = json.loads(three_runs.to_json())
    assert {"comparisons", "test", "correction", "alpha", "n_resamples"} <= set(doc)
    assert doc["test"] == "t" and doc["correction"] == "holm" and doc["alpha"] == 0.05
    assert doc["comparisons"] == json.loads(json.dumps(three_runs.rows()).replace("NaN", "null"))
    assert [c["significant"] for c in doc["comparisons"]] == [False, True, True]


def test_repr_is_readable(three_runs):
    text = repr(three_runs)
    assert text.startswith("Comparison(test='t', correction='holm'")
    assert "^a,b" in text and "2 of 3 comparisons significant" in text


# ------------------------------------------------------------------------------------------
# plots
# ------------------------------------------------------------------------------------------

@pytest.fixture
def pyplot(monkeypatch):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def no_show(*args, **kwargs):
        raise AssertionError("plot() must not call show()")

    monkeypatch.setattr(plt, "show", no_show)
    yield plt
    plt.close("all")


def test_forest_plot_draws_differences_and_intervals(three_runs, pyplot):
    from matplotlib.figure import Figure

    fig = three_runs.plot("forest")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    rows = three_runs.rows()
    points = ax.collections[1].get_offsets()
    y = np.arange(3)[::-1]
    np.testing.assert_allclose(points[:, 0], [r["diff"] for r in rows])
    np.testing.assert_allclose(points[:, 1], y)
    segments = ax.collections[0].get_segments()
    np.testing.assert_allclose([s[0][0] for s in segments], [r["ci_low"] for r in rows])
    np.testing.assert_allclose([s[1][0] for s in segments], [r["ci_high"] for r in rows])
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b_x − a", "c − a", "c − b_x"]
    # significant comparisons are filled
    faces = ax.collections[1].get_facecolors()
    assert [bool(f[:3].sum() < 2.9) for f in faces] == [r["significant"] for r in rows]


def test_forest_plot_into_given_axes(three_runs, pyplot):
    fig, ax = pyplot.subplots()
    assert three_runs.plot("forest", metric="P@10", ax=ax) is fig
    with pytest.raises(ValueError, match="metric must be one of"):
        three_runs.plot("forest", metric="nope")
    with pytest.raises(ValueError, match="kind"):
        three_runs.plot("violin")


def test_per_query_plot_draws_sorted_differences(three_runs, pyplot):
    fig = three_runs.plot("per-query", run="c", baseline="a")
    ax = fig.axes[0]
    s = three_runs.scores
    expected = np.sort(s[:, 0, 2] - s[:, 0, 0])[::-1]
    np.testing.assert_allclose(ax.lines[0].get_ydata(), expected)
    mean_line = ax.lines[-1].get_ydata()
    assert mean_line[0] == pytest.approx(expected.mean())
    with pytest.raises(ValueError, match="no comparison"):
        three_runs.plot("per-query", run="a", baseline="c")


def test_one_sided_interval_is_drawn_to_the_panel_edge(pyplot):
    cmp = _compare_from_scores({"a": [0.1, 0.2, 0.3, 0.1], "b": [0.3, 0.2, 0.6, 0.4]}, alternative="greater")
    assert cmp.rows()[0]["ci_high"] == np.inf
    fig = cmp.plot("forest")
    seg = fig.axes[0].collections[0].get_segments()[0]
    assert np.isfinite(seg).all() and seg[1][0] > cmp.rows()[0]["diff"]


# ------------------------------------------------------------------------------------------
# packaging
# ------------------------------------------------------------------------------------------

def test_import_stays_light():
    code = ("import sys, rankereval, rankereval.stats, rankereval.bootstrap; rankereval.compare; "
            "heavy = [m for m in ('pandas', 'matplotlib', 'scipy.stats', 'dask', 'distributed', 'pyarrow') "
            "if m in sys.modules]; "
            "print(heavy); sys.exit(1 if heavy else 0)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_comparison_is_immutable(three_runs):
    assert isinstance(three_runs, Comparison)
    with pytest.raises(AttributeError):
        three_runs.alpha = 0.1


def test_more_than_25_runs_get_two_letter_keys():
    rng = np.random.default_rng(21)
    base = rng.integers(0, 5, size=12) / 10
    columns = {f"r{i}": base.copy() for i in range(26)}
    columns["best"] = np.minimum(base + 0.5, 1.0)
    cmp = _compare_from_scores(columns, baseline="r0", correction="none")
    # aa, ab, ..., ay (25 letters without q), ba, bb
    assert cmp.keys[:2] == ("aa", "ab") and cmp.keys[25:] == ("ba", "bb") and len(set(cmp.keys)) == 27
    # "best" beats the baseline r0 (key "aa") on every query; the copies of r0 tie with it
    assert cmp.table().loc["best", "P@10"].endswith("ᵃᵃ")
    assert f"bb & best & \\textbf{{{cmp.means[0, 26]:.4f}}}$^{{aa}}$ \\\\" in cmp.to_latex()
    # "best" - r0 is 0.5 on every query, up to rounding: no spread, no effect size
    row = [r for r in cmp.rows() if r["run"] == "best"][0]
    assert row["ci_low"] == row["ci_high"] == row["diff"] and math.isnan(row["effect_size"])
