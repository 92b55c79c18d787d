"""Tests of the bootstrap engine (rankereval.bootstrap and its kernel rankereval.stats._bootstrap).

The kernel's two random stages (block counts by binomials, uniform positions inside a block)
are checked against exact laws; the resampled means against a naive NumPy bootstrap, against
each other (multinomial shortcut vs general loop, blocked vs direct) and by the coverage of the
intervals over simulated data sets.
"""
import dataclasses
import itertools
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy import stats

from rankereval.stats import _bootstrap
from rankereval.stats._resampling import _SHORTCUT_RATIO, BootstrapResult, _validate, bootstrap_mean


def chi2_pvalue(observed, expected_probabilities):
    """Pearson chi-square p-value, pooling cells whose expected count is below 5."""
    observed = np.asarray(observed, dtype=float)
    expected = np.asarray(expected_probabilities, dtype=float)
    expected = expected / expected.sum() * observed.sum()     # truncated supports
    small = expected < 5
    if small.any():
        observed = np.r_[observed[~small], observed[small].sum()]
        expected = np.r_[expected[~small], expected[small].sum()]
    return stats.chisquare(observed, expected).pvalue


def takes_shortcut(x):
    """Whether bootstrap_mean draws multinomial counts (few distinct values) for x."""
    support = _bootstrap.small_support(np.asarray(x, dtype=float), max(1, len(x) // _SHORTCUT_RATIO))
    return support is not None and support[0].size > 1


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# ---------------------------------------------------------------------------------------------
# Degenerate inputs
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("scores", [
    [0.1] * 7,                 # np.mean of these is not exactly 0.1
    [0.1] * 5000,              # large enough for the shortcut threshold
    [2.5],                     # n == 1
    [0.0, -0.0, 0.0],          # both zeros are one value
    [np.inf, np.inf],          # MeanRanks of rankings without any relevant item
])
def test_all_equal_scores_give_zero_width_interval(scores, method, no_warnings):
    value = scores[0]
    res = bootstrap_mean(np.array(scores), n_resamples=50, method=method, random_state=0)
    assert res.mean == value
    assert res.confidence_interval == (value, value)
    assert np.all(res.bootstrap_distribution == value)
    assert res.bootstrap_distribution.shape == (50,)
    assert res.standard_error == 0.0


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_empty_scores_give_nan(method, no_warnings):
    res = bootstrap_mean(np.array([]), n_resamples=20, method=method, random_state=0)
    assert np.isnan(res.mean)
    assert np.isnan(res.confidence_interval[0]) and np.isnan(res.confidence_interval[1])
    assert res.bootstrap_distribution.shape == (20,)
    assert np.isnan(res.bootstrap_distribution).all()
    assert np.isnan(res.standard_error)
    assert res.n_resamples == 20 and res.method == method


def test_bca_degenerate_spreads(no_warnings):
    # squared deviations underflow to 0 / overflow to inf: no acceleration, still an interval
    for x in ([0.0, 5e-324, 0.0, 5e-324], [1e200, -1e200, 3e200, 0.0]):
        low, high = bootstrap_mean(x, n_resamples=200, method="bca",
                                   random_state=0).confidence_interval
        assert min(x) <= low <= high <= max(x)


def test_undefined_result():
    res = BootstrapResult.undefined(np.int64(30), 0.9, "BCa")
    assert np.isnan(res.mean) and np.isnan(res.standard_error)
    assert all(np.isnan(res.confidence_interval))
    assert res.bootstrap_distribution.shape == (30,) and not res.bootstrap_distribution.flags.writeable
    assert (res.n_resamples, res.confidence_level, res.method) == (30, 0.9, "bca")
    with pytest.raises(ValueError, match="n_resamples"):
        BootstrapResult.undefined(1)


def test_two_scores_bca_is_finite(no_warnings):
    for seed in range(20):
        res = bootstrap_mean([0.0, 1.0], n_resamples=30, method="bca", random_state=seed)
        low, high = res.confidence_interval
        assert 0.0 <= low <= 0.5 <= high <= 1.0


@pytest.mark.parametrize("n", [30, 3000])   # general loop, multinomial shortcut
def test_infinite_scores_with_percentile(n, no_warnings):
    x = np.tile(np.r_[np.arange(9.0), np.inf], n // 10)
    assert takes_shortcut(x) == (n == 3000)
    res = bootstrap_mean(x, n_resamples=200, random_state=0)
    assert res.mean == np.inf
    assert not np.isnan(res.bootstrap_distribution).any()
    assert res.confidence_interval[1] == np.inf
    x = np.r_[np.arange(n - 1) % 9.0, np.inf]     # one +inf: ~1/e of resamples miss it
    res = bootstrap_mean(x, n_resamples=400, random_state=1)
    dist = res.bootstrap_distribution
    assert np.isfinite(dist).any() and np.isinf(dist).any() and not np.isnan(dist).any()
    assert np.isfinite(res.confidence_interval[0])


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, 1, -5, 2.5, 100.0, True, "100", None, [10], 10 ** 8 + 1,
                                   2 ** 50, 10 ** 30, np.uint64(2 ** 63)])
def test_invalid_n_resamples(value):
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_mean([1.0, 2.0], n_resamples=value)
    with pytest.raises(ValueError, match="n_bootstrap_samples"):
        _validate(value, 0.95, "percentile", n_name="n_bootstrap_samples", conf_name="confidence")


@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, -0.1, 1.5, 95, float("nan"), True, False,
                                   "0.95", None, np.int64(0)])
def test_invalid_confidence_level(value):
    with pytest.raises(ValueError, match="confidence_level"):
        bootstrap_mean([1.0, 2.0], confidence_level=value)
    with pytest.raises(ValueError, match="confidence"):
        _validate(1000, value, "percentile", n_name="n_bootstrap_samples", conf_name="confidence")


@pytest.mark.parametrize("value", ["foo", "basic", "", None, 1])
def test_invalid_method(value):
    with pytest.raises(ValueError, match="method"):
        bootstrap_mean([1.0, 2.0], method=value)


def test_valid_option_types_are_normalised():
    assert _validate(np.int64(10), np.float32(0.9), "BCa") == (10, pytest.approx(0.9), "bca")
    res = bootstrap_mean([1.0, 2.0, 4.0], n_resamples=np.int32(5), confidence_level=0.5,
                         method="BCa", random_state=0)
    assert res.n_resamples == 5 and type(res.n_resamples) is int
    assert res.method == "bca" and res.confidence_level == 0.5


@pytest.mark.parametrize("value", ["seed", 1.5, True, -1, object()])
def test_invalid_random_state(value):
    with pytest.raises(ValueError, match="random_state"):
        bootstrap_mean([1.0, 2.0], random_state=value)


def test_invalid_scores():
    with pytest.raises(ValueError, match="NaN"):
        bootstrap_mean([1.0, np.nan])
    with pytest.raises(ValueError, match="1-D"):
        bootstrap_mean(np.ones((3, 2)))
    with pytest.raises(ValueError, match="inf"):
        bootstrap_mean([1.0, np.inf, -np.inf])
    with pytest.raises(ValueError, match="bca"):
        bootstrap_mean([1.0, np.inf, 2.0], method="bca")


# ---------------------------------------------------------------------------------------------
# Result object
# ---------------------------------------------------------------------------------------------

def test_result_fields():
    x = np.random.default_rng(0).exponential(size=40)
    res = bootstrap_mean(x, n_resamples=300, confidence_level=0.9, random_state=1)
    assert isinstance(res, BootstrapResult)
    assert type(res.mean) is float and res.mean == pytest.approx(x.mean(), rel=1e-15)
    low, high = res.confidence_interval
    assert type(low) is float and type(high) is float and low < res.mean < high
    dist = res.bootstrap_distribution
    assert dist.shape == (300,) and dist.dtype == np.float64
    assert res.standard_error == pytest.approx(np.std(dist, ddof=1), rel=1e-12)
    # the percentile interval is numpy's linear-interpolation percentile of the distribution
    np.testing.assert_allclose(res.confidence_interval, np.percentile(dist, [5, 95]), rtol=1e-14)
    assert (res.method, res.confidence_level, res.n_resamples) == ("percentile", 0.9, 300)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.mean = 0.0
    with pytest.raises(ValueError):
        dist[0] = 1.0
    assert "bootstrap_distribution" not in repr(res)


def test_read_only_and_list_inputs():
    x = np.random.default_rng(0).random(100)
    x.setflags(write=False)
    a = bootstrap_mean(x, n_resamples=50, random_state=3)
    b = bootstrap_mean(list(x), n_resamples=50, random_state=3)
    c = bootstrap_mean(np.asfortranarray(np.c_[x, x])[:, 0], n_resamples=50, random_state=3)
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    np.testing.assert_array_equal(a.bootstrap_distribution, c.bootstrap_distribution)


# ---------------------------------------------------------------------------------------------
# Reproducibility
# ---------------------------------------------------------------------------------------------

DATA = {
    "continuous": np.random.default_rng(10).exponential(size=500),
    "few distinct (shortcut)": np.random.default_rng(11).integers(0, 3, size=1000) / 2.0,
    "large (blocked loop)": np.random.default_rng(12).random(40_000),
}


@pytest.mark.parametrize("name", list(DATA))
@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_reproducible_and_global_rng_untouched(name, method):
    x = DATA[name]
    assert takes_shortcut(x) == ("shortcut" in name)
    before = np.random.get_state()
    a = bootstrap_mean(x, n_resamples=100, method=method, random_state=42)
    b = bootstrap_mean(x, n_resamples=100, method=method, random_state=42)
    c = bootstrap_mean(x, n_resamples=100, method=method, random_state=43)
    g = bootstrap_mean(x, n_resamples=100, method=method,
                       random_state=np.random.default_rng(42))
    bootstrap_mean(x, n_resamples=100, method=method)               # fresh entropy
    after = np.random.get_state()
    assert before[0] == after[0] and np.array_equal(before[1], after[1])
    assert before[2:] == after[2:]
    np.testing.assert_array_equal(a.bootstrap_distribution, b.bootstrap_distribution)
    assert a.confidence_interval == b.confidence_interval
    np.testing.assert_array_equal(a.bootstrap_distribution, g.bootstrap_distribution)
    assert not np.array_equal(a.bootstrap_distribution, c.bootstrap_distribution)


def test_generator_state_advances():
    rng = np.random.default_rng(5)
    x = DATA["continuous"]
    a = bootstrap_mean(x, n_resamples=50, random_state=rng)
    b = bootstrap_mean(x, n_resamples=50, random_state=rng)
    assert not np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


def test_none_random_state_differs_between_calls():
    x = DATA["continuous"]
    a = bootstrap_mean(x, n_resamples=50)
    b = bootstrap_mean(x, n_resamples=50)
    assert not np.array_equal(a.bootstrap_distribution, b.bootstrap_distribution)


@pytest.mark.parametrize("n", [1, 7, 1000, 40_000])
def test_kernel_independent_of_thread_count(n):
    x = np.random.default_rng(n).random(n)
    ref = _bootstrap.resample_means(x, 37, 2 ** 63 + 12345, n_threads=1)
    for n_threads in (2, 3, 8):
        np.testing.assert_array_equal(_bootstrap.resample_means(x, 37, 2 ** 63 + 12345,
                                                                n_threads=n_threads), ref)
    # resample b depends on (seed, b) only: fewer resamples are a prefix
    np.testing.assert_array_equal(_bootstrap.resample_means(x, 5, 2 ** 63 + 12345), ref[:5])


def test_streams_differ():
    outputs = [_bootstrap.raw_outputs(seed, stream, 4)
               for seed, stream in itertools.product([0, 1, 2 ** 64 - 1], [0, 1, 2])]
    assert len({o.tobytes() for o in outputs}) == len(outputs)
    np.testing.assert_array_equal(_bootstrap.raw_outputs(7, 3, 10), _bootstrap.raw_outputs(7, 3, 10))


# ---------------------------------------------------------------------------------------------
# The random stages of the kernel, against exact laws
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("m", [1, 2, 7, 512, 1000, 3 * 2 ** 30])
def test_bounded_integers_are_uniform(m):
    draws = _bootstrap.bounded_samples(m, 100_000, seed=m)
    assert draws.min() >= 0 and draws.max() < m
    if m == 1:
        assert (draws == 0).all()
        return
    # 3 * 2**30 rejects a quarter of the 32-bit words: exercises the rejection path
    bins = min(m, 50)
    observed = np.bincount(draws * bins // m, minlength=bins)
    expected = np.diff(np.ceil(np.arange(bins + 1) * m / bins)) / m
    assert chi2_pvalue(observed, expected) > 1e-4


@pytest.mark.parametrize("n, p", [
    (5, 0.3), (100, 0.02), (19, 0.5),            # inversion (n p < 10)
    (1000, 0.5), (10 ** 6, 1 / 1954), (60, 0.3),  # BTRS
    (50, 0.95), (10 ** 6, 0.7),                   # p > 1/2, by symmetry
])
def test_binomial_matches_exact_law(n, p):
    draws = _bootstrap.binomial_samples(n, p, 100_000, seed=int(n * 1000 + p * 100))
    assert draws.min() >= 0 and draws.max() <= n
    mean, sd = n * p, np.sqrt(n * p * (1 - p))
    support = np.arange(max(0, int(mean - 7 * sd)), min(n, int(mean + 7 * sd) + 1) + 1)
    observed = np.bincount(draws - support[0], minlength=support.size)
    assert observed.size == support.size
    assert chi2_pvalue(observed, stats.binom.pmf(support, n, p)) > 1e-4


def test_binomial_edge_parameters():
    assert (_bootstrap.binomial_samples(0, 0.5, 10, seed=1) == 0).all()
    assert (_bootstrap.binomial_samples(20, 0.0, 10, seed=1) == 0).all()
    assert (_bootstrap.binomial_samples(20, 1.0, 10, seed=1) == 20).all()
    huge = _bootstrap.binomial_samples(2 ** 40, 1e-3, 20_000, seed=1)
    assert abs(huge.mean() / (2 ** 40 * 1e-3) - 1) < 1e-5


@pytest.mark.parametrize("block", [1, 2, 3])
def test_blocked_resampling_is_exact(block):
    # x = (0, 1, 5): the 27 equally likely index triples give the exact law of the mean
    x = np.array([0.0, 1.0, 5.0])
    exact = {}
    for triple in itertools.product(x, repeat=3):
        key = round(sum(triple) / 3, 12)
        exact[key] = exact.get(key, 0) + 1 / 27
    means = np.round(_bootstrap.resample_means(x, 60_000, seed=block, block=block), 12)
    keys = sorted(exact)
    assert set(np.unique(means)) <= set(keys)
    observed = [np.count_nonzero(means == k) for k in keys]
    assert chi2_pvalue(observed, [exact[k] for k in keys]) > 1e-4


# ---------------------------------------------------------------------------------------------
# The resampled means: shortcut, blocked and direct loops, naive NumPy bootstrap
# ---------------------------------------------------------------------------------------------

def naive_means(x, n_resamples, seed):
    """The textbook bootstrap, ``x[rng.integers(n, size=(B, n))].mean(axis=1)``, by chunks."""
    rng = np.random.default_rng(seed)
    chunks = [x[rng.integers(0, x.size, size=(min(200, n_resamples - start), x.size))].mean(axis=1)
              for start in range(0, n_resamples, 200)]
    return np.concatenate(chunks)


def assert_same_bootstrap_law(a, b, x):
    """Two bootstrap distributions of the mean of x agree (moments within ~5 sigma)."""
    se = x.std() / np.sqrt(x.size)           # the exact bootstrap standard error
    for dist in (a, b):
        # both centre on the sample mean
        assert abs(dist.mean() - x.mean()) < 5 * se / np.sqrt(dist.size)
        assert abs(dist.std(ddof=1) / se - 1) < 5 / np.sqrt(2 * dist.size)
    assert abs(a.mean() - b.mean()) < 5 * se * np.sqrt(1 / a.size + 1 / b.size)
    assert stats.ks_2samp(a, b).pvalue > 1e-4


def reciprocal_ranks(n, seed):
    rng = np.random.default_rng(seed)
    ranks = rng.geometric(0.3, size=n)
    return np.where(ranks <= 10, 1.0 / ranks, 0.0)      # ReciprocalRank@10: 11 values


def test_shortcut_and_general_loop_agree():
    x = reciprocal_ranks(5000, 0)
    values, counts = _bootstrap.small_support(x, 200)
    assert values.size <= 11 and takes_shortcut(x)
    shortcut = bootstrap_mean(x, n_resamples=4000, random_state=1).bootstrap_distribution
    general = _bootstrap.resample_means(x, 4000, seed=2)
    assert_same_bootstrap_law(shortcut, general, x)
    assert_same_bootstrap_law(general, naive_means(x, 2000, 3), x)


def test_shortcut_binary_scores():
    x = (np.random.default_rng(3).random(5000) < 0.1).astype(float)    # HitRate-like
    assert takes_shortcut(x)
    res = bootstrap_mean(x, n_resamples=4000, random_state=6)
    # the law is exact here: Binomial(n, mean) / n
    assert_same_bootstrap_law(res.bootstrap_distribution,
                              np.random.default_rng(7).binomial(x.size, x.mean(), 4000) / x.size,
                              x)


@pytest.mark.parametrize("n", [1000, 20_000])
def test_blocked_and_direct_loops_agree(n):
    x = np.random.default_rng(8).lognormal(size=n)
    blocked = _bootstrap.resample_means(x, 2000, seed=9)               # 512-score blocks
    direct = _bootstrap.resample_means(x, 2000, seed=10, block=x.size)
    odd = _bootstrap.resample_means(x, 2000, seed=11, block=777)      # uneven last block
    assert_same_bootstrap_law(blocked, direct, x)
    assert_same_bootstrap_law(odd, direct, x)
    assert_same_bootstrap_law(blocked, naive_means(x, 2000, 12), x)


def test_small_support_matches_unique():
    rng = np.random.default_rng(12)
    x = rng.integers(-3, 4, size=10_000) / 4.0
    x[:10] = [-0.0, 0.0, np.inf, np.inf, 1e300, -1e-300, 5e-324, 0.0, -0.0, 2.0]
    values, counts = _bootstrap.small_support(x, 20)
    ref_values, ref_counts = np.unique(x, return_counts=True)
    np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(counts, ref_counts)
    assert _bootstrap.small_support(x, values.size) is not None
    assert _bootstrap.small_support(x, values.size - 1) is None
    assert _bootstrap.small_support(rng.random(100_000), 1000) is None
    v, c = _bootstrap.small_support(np.sort(x), 20)       # runs of equal values
    np.testing.assert_array_equal(c, ref_counts)


# ---------------------------------------------------------------------------------------------
# Statistical validity
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("distribution", ["exponential", "bernoulli", "bernoulli-shortcut"])
def test_coverage_of_the_true_mean(method, distribution):
    rng = np.random.default_rng(2024)
    n, true_mean = {"exponential": (50, 1.0), "bernoulli": (50, 0.3),
                    "bernoulli-shortcut": (400, 0.3)}[distribution]
    covered = 0
    for _ in range(200):
        if distribution == "exponential":
            x = rng.exponential(true_mean, size=n)
        else:
            x = (rng.random(n) < true_mean).astype(float)
        low, high = bootstrap_mean(x, n_resamples=1000, method=method,
                                   random_state=rng).confidence_interval
        covered += low <= true_mean <= high
        assert takes_shortcut(x) == (distribution == "bernoulli-shortcut")
    assert 0.88 <= covered / 200 <= 0.99


def test_bca_matches_scipy():
    x = np.random.default_rng(13).exponential(size=50)
    ours = bootstrap_mean(x, n_resamples=20_000, method="bca", random_state=1)
    ref = stats.bootstrap((x,), np.mean, n_resamples=20_000, method="BCa",
                          random_state=np.random.default_rng(2))
    se = x.std() / np.sqrt(x.size)
    np.testing.assert_allclose(ours.confidence_interval, tuple(ref.confidence_interval),
                               atol=0.15 * se)
    # right-skewed data: BCa moves the interval right of the percentile one
    perc = bootstrap_mean(x, n_resamples=20_000, random_state=1)
    assert ours.confidence_interval[1] > perc.confidence_interval[1]


# ---------------------------------------------------------------------------------------------
# Memory: never an n x B matrix
# ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_memory_is_linear(method):
    x = np.random.default_rng(14).random(200_000)
    tracemalloc.start()
    try:
        bootstrap_mean(x, n_resamples=200, method=method, random_state=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * x.size + 2_000_000          # the naive approach: 8 * n * B = 320 MB
