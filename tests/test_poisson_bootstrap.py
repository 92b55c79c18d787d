"""The Poisson bootstrap (resampling='poisson') in memory.

The counter-based weights are checked against a pure-Python transcription of their
definition (SplitMix64 finaliser, the key hashes, inversion of the Poisson(1) distribution
function), against the Poisson(1) law, and for independence from order, partitioning and
threads; the resampled means against a literal NumPy reference; the intervals against the
multinomial bootstrap within Monte-Carlo error.
"""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import rankereval
from rankereval import AP, NDCG, BinaryLabels, Precision, Rankings, ReciprocalRank
from rankereval.stats import _bootstrap
from rankereval.stats._exact import poisson_sums
from rankereval.stats._engine import merge_partials as _merge_partials, partials as _partials
from rankereval.stats._resampling import _seed, bootstrap_mean, query_key_hashes
from helpers import GOLDEN, M64, mix64



# ------------------------------------------------------------------------------------------
# a literal reference of the generator, in Python integers
# ------------------------------------------------------------------------------------------

def ref_int_hash(i):
    return mix64(mix64((i & M64) ^ 0x696E74206B657973) + GOLDEN)


def ref_str_hash(s):
    h = 0x737472206B657973
    for ch in s:
        h = (mix64(h ^ ord(ch)) + GOLDEN) & M64
    return mix64(h ^ len(s))


def ref_cdf_thresholds():
    """2**64 * P(Poisson(1) <= k), from exact rationals of a 60-digit e**-1."""
    from fractions import Fraction
    import decimal

    ctx = decimal.Context(prec=60)
    e_inv = Fraction(ctx.exp(decimal.Decimal(-1)))
    total, out = Fraction(0), []
    for k in range(20):
        total += e_inv / math.factorial(k)
        out.append(int(total * 2 ** 64))
    return out


def ref_weight(seed, key_hash, b):
    r = mix64(key_hash ^ mix64(seed + (b + 1) * GOLDEN))
    return sum(r >= t for t in ref_cdf_thresholds())


def test_cdf_table_is_the_poisson_distribution_function():
    table = [int(t) for t in _bootstrap.POISSON_CDF]
    assert table == ref_cdf_thresholds()
    cdf = stats.poisson.cdf(np.arange(20), 1.0)
    np.testing.assert_allclose(np.array(table, dtype=float) / 2.0 ** 64, cdf, rtol=1e-14)


def test_key_hashes_follow_their_definition():
    ints = [0, 1, 7, -1, -(2 ** 63), 2 ** 63 - 1, 123456789012]
    assert query_key_hashes(ints).tolist() == [ref_int_hash(i) for i in ints]
    strs = ["q1", "", "é", "a longer query id", "\U0001F600x"]
    assert query_key_hashes(strs).tolist() == [ref_str_hash(s) for s in strs]
    assert query_key_hashes(None, 4).tolist() == [ref_int_hash(i) for i in range(4)]


def test_key_hashes_by_value_not_by_type():
    a = query_key_hashes(np.array([3, 5], dtype=np.int32))
    for keys in ([3, 5], np.array([3, 5], dtype=np.uint64), np.array([3, 5], dtype=object)):
        assert np.array_equal(query_key_hashes(keys), a)
    s = query_key_hashes(np.array(["a", "bc"]))
    assert np.array_equal(query_key_hashes(np.array(["a", "bc"], dtype=object)), s)
    assert np.array_equal(query_key_hashes(np.array(["a", "bc"], dtype="<U40")), s)


@pytest.mark.parametrize("keys, error, match", [
    ([1, "a"], TypeError, "mix integers and strings"),
    ([1.5, 2.0], TypeError, "integers or strings"),
    (np.array([True, False]), TypeError, "integers or strings"),
    (np.array([1, None], dtype=object), TypeError, "None"),
    (np.array([2 ** 64 - 1], dtype=np.uint64), ValueError, "int64"),
    ([[1, 2]], ValueError, "1-D"),
])
def test_bad_keys_are_refused(keys, error, match):
    with pytest.raises(error, match=match):
        query_key_hashes(keys)


def test_weights_follow_their_definition():
    keys = np.concatenate([query_key_hashes([0, 1, 99]), query_key_hashes(["q"])])
    w = _bootstrap.poisson_weights(keys, 12345, 6)
    assert w.tolist() == [[ref_weight(12345, int(k), b) for b in range(6)] for k in keys]


def test_weights_are_poisson_one_and_independent():
    w = _bootstrap.poisson_weights(query_key_hashes(None, 20000), 7, 50).ravel()
    counts = np.bincount(w, minlength=8)[:8]
    expected = stats.poisson.pmf(np.arange(8), 1.0)
    expected[-1] += stats.poisson.sf(7, 1.0)
    counts[-1] += (w > 7).sum()
    assert stats.chisquare(counts, expected * w.size).pvalue > 1e-4
    # neighbouring keys and resamples are uncorrelated
    ww = w.reshape(20000, 50).astype(float)
    assert abs(np.corrcoef(ww[:-1].ravel(), ww[1:].ravel())[0, 1]) < 0.01
    assert abs(np.corrcoef(ww[:, :-1].ravel(), ww[:, 1:].ravel())[0, 1]) < 0.01


def poisson_sums_reference(x, keys, seed, n_resamples):
    """sum_i w_ib x_ij and sum_i w_ib over the non-NaN x_ij, from the weights, in NumPy."""
    w = _bootstrap.poisson_weights(keys, seed, n_resamples).astype(float)   # (n, B)
    ok = ~np.isnan(x)
    with np.errstate(invalid="ignore"):          # 0 * inf, masked out
        contrib = np.where(ok[:, :, None] & (w[:, None, :] > 0), x[:, :, None] * w[:, None, :], 0.0)
    return contrib.sum(axis=0), (ok[:, :, None] * w[:, None, :]).sum(axis=0)


@given(st.lists(st.lists(st.one_of(st.floats(0, 1), st.just(np.nan), st.just(np.inf)),
                         min_size=3, max_size=3), min_size=0, max_size=40),
       st.integers(0, 2 ** 64 - 1))
def test_sums_match_the_reference(rows, seed):
    x = np.array(rows, dtype=float).reshape(-1, 3)
    keys = query_key_hashes(None, x.shape[0])
    sums, weights = poisson_sums(x, keys, seed, 17)
    ref_sums, ref_weights = poisson_sums_reference(x, keys, seed, 17)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(weights, ref_weights)


def test_sums_do_not_depend_on_threads_order_or_partitioning():
    rng = np.random.default_rng(3)
    x = rng.random((3000, 2))
    x[rng.random(x.shape) < 0.05] = np.nan
    keys = query_key_hashes(rng.permutation(10 ** 6)[:3000])
    one = poisson_sums(x, keys, 99, 300, n_threads=1)
    two = poisson_sums(x, keys, 99, 300, n_threads=2)
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a, b)
    perm = rng.permutation(3000)
    cuts = [0, 1, 1, 700, 2999, 3000]
    parts = [poisson_sums(np.ascontiguousarray(x[perm[a:b]]), keys[perm[a:b]], 99, 300)
             for a, b in zip(cuts[:-1], cuts[1:])]
    merged = [sum(p[i] for p in parts) for i in range(2)]
    np.testing.assert_allclose(merged[0], one[0], rtol=1e-12)
    np.testing.assert_array_equal(merged[1], one[1])


def test_bootstrap_mean_poisson_is_the_literal_weighted_mean():
    rng = np.random.default_rng(5)
    x = rng.random(50)
    ids = rng.permutation(1000)[:50]
    res = bootstrap_mean(x, 400, random_state=11, resampling="poisson", keys=ids)
    w = _bootstrap.poisson_weights(query_key_hashes(ids), _seed(11), 400).astype(float)
    ref = (w * x[:, None]).sum(0) / w.sum(0)
    np.testing.assert_allclose(res.bootstrap_distribution, ref, rtol=1e-12)
    assert res.confidence_interval == pytest.approx(tuple(np.quantile(ref, [0.025, 0.975])), rel=1e-12)
    # the same keys in another order: the same distribution
    perm = rng.permutation(50)
    again = bootstrap_mean(x[perm], 400, random_state=11, resampling="poisson", keys=ids[perm])
    np.testing.assert_allclose(again.bootstrap_distribution, res.bootstrap_distribution, rtol=1e-12)


def test_empty_resample_is_the_sample_mean_and_constant_scores_are_exact():
    res = bootstrap_mean([0.25], 200, random_state=0, resampling="poisson")
    assert res.confidence_interval == (0.25, 0.25)
    assert set(res.bootstrap_distribution.tolist()) == {0.25}
    res = bootstrap_mean([0.1] * 30, 50, random_state=0, resampling="poisson")
    assert res.confidence_interval == (0.1, 0.1) and res.standard_error == 0.0
    # two scores: a resample without either (probability e**-2) is the sample mean 0.5
    res = bootstrap_mean([0.0, 1.0], 2000, random_state=0, resampling="poisson")
    w = _bootstrap.poisson_weights(query_key_hashes(None, 2), _seed(0), 2000)
    empty = w.sum(axis=0) == 0
    assert empty.any() and (res.bootstrap_distribution[empty] == 0.5).all()


def test_infinite_scores():
    res = bootstrap_mean([1.0, np.inf, 2.0], 300, random_state=1, resampling="poisson")
    d = res.bootstrap_distribution
    assert not np.isnan(d).any() and np.isinf(d).any() and np.isfinite(d).any()


def test_poisson_and_multinomial_agree_within_monte_carlo_error():
    rng = np.random.default_rng(8)
    x = rng.beta(0.5, 2.0, size=2000)
    B = 4000
    mult = bootstrap_mean(x, B, random_state=1)
    pois = bootstrap_mean(x, B, random_state=1, resampling="poisson")
    se = x.std(ddof=1) / math.sqrt(x.size)
    # the standard error of a bootstrap standard error with B resamples is ~ se / sqrt(2 B)
    assert pois.standard_error == pytest.approx(mult.standard_error, rel=5 * math.sqrt(2 / B) + 0.02)
    assert pois.standard_error == pytest.approx(se, rel=0.1)
    for a, b in zip(pois.confidence_interval, mult.confidence_interval):
        assert abs(a - b) < 0.15 * se
    assert abs(pois.bootstrap_distribution.mean() - x.mean()) < 5 * se / math.sqrt(B)


def test_resampling_is_checked():
    with pytest.raises(ValueError, match="resampling must be one of"):
        bootstrap_mean([1.0, 2.0], resampling="jackknife")
    with pytest.raises(ValueError, match="keys are only used"):
        bootstrap_mean([1.0, 2.0], keys=[1, 2])
    y_true = BinaryLabels.from_positive_indices([[0], [1]])
    y_pred = Rankings.from_ranked_indices([[0, 1], [0, 1]])
    with pytest.raises(ValueError, match="resampling"):
        Precision(1).mean(y_true, y_pred, conf_interval=True, resampling="Poison")
    # issue 42: evaluate gives the Poisson BCa interval Metric.mean gives (it was refused)
    ev = rankereval.evaluate(y_true, y_pred, ["p@1"], conf_interval=True, resampling="poisson", method="BCa",
                             random_state=1)
    assert ev.conf_intervals["p@1"] == Precision(1).mean(y_true, y_pred, conf_interval=True, resampling="poisson",
                                                         method="bca", random_state=1)["conf_interval"]


# ------------------------------------------------------------------------------------------
# through Metric.mean / Metric.bootstrap / evaluate
# ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(17)
    n, n_items = 300, 60
    labels = [rng.choice(n_items, size=rng.integers(0, 5), replace=False) for _ in range(n)]
    ranks = [rng.choice(n_items, size=rng.integers(1, 15), replace=False) for _ in range(n)]
    return BinaryLabels.from_positive_indices(labels), Rankings.from_ranked_indices(ranks)


@pytest.mark.parametrize("nan_handling", ["drop", "zerofill", "propagate"])
def test_metric_and_evaluate_give_the_same_poisson_intervals(data, nan_handling):
    y_true, y_pred = data
    metrics = [NDCG(5), AP(), ReciprocalRank(10), Precision(3)]
    kwargs = dict(nan_handling=nan_handling, conf_interval=True, random_state=4, resampling="poisson",
                  n_resamples=300)
    if nan_handling == "propagate":  # rows without relevant items: the means are undefined
        with pytest.warns(rankereval.UndefinedMetricWarning, match="is undefined"):
            ev = rankereval.evaluate(y_true, y_pred, metrics, **kwargs)
    else:
        ev = rankereval.evaluate(y_true, y_pred, metrics, **kwargs)
    for m in metrics:
        if nan_handling == "propagate" and np.isnan(m.score(y_true, y_pred)).any():
            with pytest.warns(rankereval.UndefinedMetricWarning):
                res = m.mean(y_true, y_pred, nan_handling, conf_interval=True, random_state=4,
                             resampling="poisson", n_resamples=300)
            assert all(math.isnan(v) for v in res["conf_interval"] + ev.conf_intervals[m.name])
            continue
        res = m.bootstrap(y_true, y_pred, nan_handling, n_resamples=300, random_state=4,
                          resampling="poisson")
        assert ev.conf_intervals[m.name] == pytest.approx(res.confidence_interval, rel=1e-12, abs=1e-15)
        # the literal weighted means, keyed by row number, NaN rows without weight
        s = m.score(y_true, y_pred)
        keep = ~np.isnan(s) if nan_handling == "drop" else np.ones(s.size, bool)
        s = np.where(np.isnan(s), 0.0, s)
        w = _bootstrap.poisson_weights(query_key_hashes(None, s.size), _seed(4), 300)[keep]
        ref = (w * s[keep, None]).sum(0) / w.sum(0)
        np.testing.assert_allclose(np.sort(res.bootstrap_distribution), np.sort(ref), rtol=1e-12)


def test_evaluate_keys_by_query_ids(data):
    y_true, y_pred = data
    ids = np.array([f"u{i:04d}" for i in range(y_pred.n_rows)])
    ev = rankereval.evaluate(y_true, y_pred, ["ndcg@5"], conf_interval=True, random_state=2,
                             resampling="poisson", nan_handling="drop", query_ids=ids)
    s = NDCG(5).score(y_true, y_pred)
    ok = ~np.isnan(s)
    res = bootstrap_mean(s[ok], 1000, random_state=2, resampling="poisson", keys=ids[ok])
    assert ev.conf_intervals["ndcg@5"] == pytest.approx(res.confidence_interval, rel=1e-12)
    assert list(ev.query_ids) == list(ids)
    with pytest.raises(ValueError, match="one id per ranking"):
        rankereval.evaluate(y_true, y_pred, ["ndcg@5"], query_ids=ids[:3])


def test_partials_merge_to_the_whole(data):
    y_true, y_pred = data
    scores = rankereval.evaluate(y_true, y_pred, ["ap", "p@3"], nan_handling="drop").scores
    hashes = query_key_hashes(None, scores.shape[0])
    whole = _partials(scores, "drop", hashes, 5, 100)
    cut = 123
    merged = _merge_partials(_partials(scores[cut:], "drop", hashes[cut:], 5, 100),
                             _partials(scores[:cut], "drop", hashes[:cut], 5, 100))
    for key in whole:   # exactly: the sums are exact (ExactSum), so no rounding in merging
        value = (lambda v: v.to_float()) if key in ("sum", "sums") else (lambda v: v)
        np.testing.assert_array_equal(value(merged[key]), value(whole[key]))
