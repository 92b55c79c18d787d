"""GAUC (RecBole's grouped AUC): AUROC per query, averaged weighted by each query's number of
relevant items, through the one engine.

Against RecBole's own expected values (tests/metrics/test_rank_metrics.py) and its formula
(``GAUC.metric_info``: the installed recbole's where it imports, else its arithmetic
transcribed below), against the literal reference of ``tests/reference.py`` with hypothesis,
and the weighted bootstrap and paired tests against slow literal ones on the same resamples.
The equality of every entry point (Metric.mean, evaluate, compare, the Accumulator, Dask, Spark)
is tests/test_entry_points.py's (GAUC is in the registry, so in ``helpers.all_metrics``).
"""
import functools
import itertools
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankereval
from rankereval import AUROC, GAUC, Accumulator, BinaryLabels, Rankings
import reference as ref


def _matrix_case(case):
    """RecBole's test cases (``MetricsTestCases``) as labels and rankings: user ``u`` ranks
    ``user_len[u]`` items, its positives at the descending ranks whose sum is
    ``pos_rank_sum[u]`` (ranks 1, 3, 5, ... as the sums allow)."""
    if case == 0:   # user_len [2, 3, 5], pos_len [1, 2, 3], pos_rank_sum [1, 4, 9]
        positives = [[0], [0, 2], [0, 2, 4]]
        lengths = [2, 3, 5]
    else:           # user_len [3, 6, 4], pos_len [1, 0, 4] (no positive; no negative)
        positives = [[2], [], [0, 1, 2, 3]]
        lengths = [3, 6, 4]
    return (BinaryLabels.from_positive_indices(positives),
            Rankings.from_ranked_indices([list(range(n)) for n in lengths]))


def test_recboles_expected_values():
    """The values RecBole's tests assert for its GAUC (test_rank_metrics.py, test_gauc)."""
    want0 = (1 * ((2 - (1 - 1) / 2 - 1 / 1) / (2 - 1))
             + 2 * ((3 - (2 - 1) / 2 - 4 / 2) / (3 - 2))
             + 3 * ((5 - (3 - 1) / 2 - 9 / 3) / (5 - 3))) / (1 + 2 + 3)
    want1 = (3 - 0 - 3 / 1) / (3 - 1)
    for case, want in ((0, want0), (1, want1)):
        y, r = _matrix_case(case)
        # RecBole leaves the users without a positive or a negative out: nan_handling='drop'
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert GAUC().mean(y, r, nan_handling="drop") == pytest.approx(want, rel=1e-15, abs=1e-15)
            assert rankereval.evaluate(y, r, ["GAUC"], nan_handling="drop").means["GAUC"] == \
                pytest.approx(want, rel=1e-15, abs=1e-15)
    # the weights: 1, 2, 3 positives, not the plain mean of the users' AUCs (1, 0.5, 0.5)
    y, r = _matrix_case(0)
    np.testing.assert_array_equal(GAUC().score(y, r), [1.0, 0.5, 0.5])
    assert GAUC().mean(y, r) != pytest.approx(AUROC().mean(y, r))


@functools.lru_cache(maxsize=None)
def _recbole_metric_info():
    """RecBole's ``GAUC.metric_info`` (pos_rank_sum, user_len_list, pos_len_list): the
    installed recbole's where it imports; else its arithmetic transcribed from
    recbole/evaluator/metrics.py (RecBole 1.2.1), whose import needs torch's tensorboard."""
    try:
        from recbole.evaluator.metrics import GAUC as RecBoleGAUC

        return lambda *args: RecBoleGAUC.metric_info(None, *args)
    except Exception:  # (not installed, or its logger/tensorboard imports fail)
        pass

    def metric_info(pos_rank_sum, user_len_list, pos_len_list):
        neg_len_list = user_len_list - pos_len_list
        keep = (pos_len_list != 0) & (neg_len_list != 0)
        user_len_list, neg_len_list, pos_len_list, pos_rank_sum = (
            user_len_list[keep], neg_len_list[keep], pos_len_list[keep], pos_rank_sum[keep])
        pair_num = (user_len_list + 1) * pos_len_list - pos_len_list * (pos_len_list + 1) / 2 \
            - np.squeeze(pos_rank_sum)
        user_auc = pair_num / (neg_len_list * pos_len_list)
        return (user_auc * pos_len_list).sum() / pos_len_list.sum()

    return metric_info


def _recbole_inputs(positive, scores):
    """RecBole's collector (``rec.meanrank``) on a score matrix: the sum of the positives'
    descending average ranks, the number of items, the number of positives, per user."""
    from scipy.stats import rankdata

    ranks = rankdata(-scores, method="average", axis=1)   # descending, ties averaged
    pos_rank_sum = np.where(positive, ranks, 0.0).sum(axis=1, keepdims=True)
    return pos_rank_sum, np.full(len(scores), scores.shape[1]), positive.sum(axis=1)


@st.composite
def _users(draw, ties=False):
    n = draw(st.integers(1, 8))
    m = draw(st.integers(2, 9))
    positive = np.array(draw(st.lists(st.lists(st.booleans(), min_size=m, max_size=m), min_size=n, max_size=n)))
    if ties:
        scores = np.array(draw(st.lists(st.lists(st.integers(0, 3), min_size=m, max_size=m),
                                        min_size=n, max_size=n)), dtype=float)
    else:
        scores = np.array([draw(st.permutations(range(m))) for _ in range(n)], dtype=float)
    return positive, scores


@settings(max_examples=40, deadline=None)
@given(_users())
def test_equals_recboles_formula_and_the_reference(users):
    positive, scores = users
    y, r = BinaryLabels.from_matrix(positive), Rankings.from_scores(scores)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = GAUC().mean(y, r, nan_handling="drop")
        recbole = _recbole_metric_info()(*_recbole_inputs(positive, scores))
    want = ref.ref_gauc(positive, scores)
    if math.isnan(want):  # no user with both kinds: RecBole divides 0 by 0
        assert math.isnan(got)
        return
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert got == pytest.approx(float(recbole), rel=1e-12, abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(_users(ties=True))
def test_ties_expected_is_recboles_average_ranks(users):
    """RecBole averages the ranks of tied scores (a tie is half a pair), as the reference does:
    GAUC with ties='expected' (the mean over every order of each tied group) equals both;
    'optimistic'/'pessimistic' bound it."""
    positive, scores = users
    y, r = BinaryLabels.from_matrix(positive), Rankings.from_scores(scores, ties="keep")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        recbole = _recbole_metric_info()(*_recbole_inputs(positive, scores))
        got = GAUC().mean(y, r, nan_handling="drop", ties="expected")
        low = GAUC().mean(y, r, nan_handling="drop", ties="pessimistic")
        high = GAUC().mean(y, r, nan_handling="drop", ties="optimistic")
    want = ref.ref_gauc(positive, scores)
    if math.isnan(want):
        assert math.isnan(got) and math.isnan(recbole)
        return
    assert got == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert got == pytest.approx(float(recbole), rel=1e-12, abs=1e-15)
    assert low - 1e-12 <= got <= high + 1e-12
    per_query = [ref.ref_gauc_user(p, s) for p, s in zip(positive, scores)]
    np.testing.assert_allclose(AUROC().score(y, r, ties="expected"), per_query, rtol=1e-12, atol=0)


def test_ties_with_a_cutoff_are_refused_with_the_reason():
    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_scores([[0.5, 0.5, 0.1]], ties="keep")
    with pytest.raises(ValueError, match="whole ranking only"):
        GAUC(2).score(y, r, ties="expected")
    assert GAUC(2).score(y, r)[0] == 1.0  # the recorded order


def test_the_weight_is_the_labels_relevant_count_not_the_rankings():
    """A relevant item outside the ranking still weighs (the weight belongs to the query, so
    two runs weigh it alike); one label row serves every ranking."""
    y = BinaryLabels.from_positive_indices([[0, 5, 6], [1]])
    r = Rankings.from_ranked_indices([[0, 1, 2], [0, 1, 2]])        # items 5 and 6 not ranked
    s = GAUC().score(y, r)
    np.testing.assert_array_equal(s, [1.0, 0.5])
    assert GAUC().mean(y, r) == pytest.approx((3 * 1.0 + 1 * 0.5) / 4, rel=1e-15)
    one = BinaryLabels.from_positive_indices([[1, 2]])
    r2 = Rankings.from_ranked_indices([[1, 0, 2], [0, 1, 2]])
    assert GAUC().mean(one, r2) == pytest.approx(np.mean(GAUC().score(one, r2)), rel=1e-15)


def test_nan_policies_and_zero_total_weight():
    # row 0: no relevant item (weight 0, NaN); row 1: no non-relevant ranked (weight 2, NaN)
    y = BinaryLabels.from_positive_indices([[], [0, 1], [0], [1]])
    r = Rankings.from_ranked_indices([[0, 1], [0, 1], [0, 1], [0, 1]])
    np.testing.assert_array_equal(GAUC().score(y, r)[2:], [1.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert math.isnan(GAUC().mean(y, r))                                          # propagate
        assert GAUC().mean(y, r, nan_handling="drop") == 0.5                         # (1 + 0) / 2
        assert GAUC().mean(y, r, nan_handling="zerofill") == pytest.approx(1 / 4)     # (2*0 + 1) / 4
        assert GAUC().mean(y, r, nan_handling="onefill") == pytest.approx(3 / 4)      # (2*1 + 1) / 4
        # every kept query weighs 0: the mean is NaN, under every policy
        none = BinaryLabels.from_positive_indices([[], []])
        for policy in ("drop", "zerofill", "onefill"):
            assert math.isnan(GAUC().mean(none, r[:2], nan_handling=policy))
            assert math.isnan(rankereval.evaluate(none, r[:2], ["gauc"], nan_handling=policy).means["gauc"])
        res = GAUC().bootstrap(none, r[:2], nan_handling="zerofill", n_resamples=10)
        assert math.isnan(res.mean) and all(math.isnan(b) for b in res.confidence_interval)


def test_names():
    assert rankereval.metrics.from_name("GAUC") == GAUC()
    assert rankereval.metrics.from_name("gauc@10") == GAUC(10)
    assert GAUC(5).name == "gauc@5" and GAUC.info.aggregate == "weighted"
    assert rankereval.metrics.from_name("GAUC@10").score is not None


# -- the bootstrap of the ratio against a literal one on the same resamples -------------------
def _weighted_data(seed, n=40):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    w = rng.integers(0, 6, n).astype(float)
    w[0] = 3.0
    return x, w


def _literal_interval(x, w, counts, confidence):
    """Percentile interval of the resampled ratios sum(c w x) / sum(c w), one resample at a time
    (a resample drawing weight 0 counts as the sample's ratio)."""
    mean = sum(wi * xi for wi, xi in zip(w, x)) / sum(w)
    ratios = []
    for c in counts:                       # one resample: how often each query is drawn
        num = sum(ci * wi * xi for ci, wi, xi in zip(c, w, x))
        den = sum(ci * wi for ci, wi in zip(c, w))
        ratios.append(num / den if den > 0 else mean)
    lo, hi = np.quantile(ratios, [(1 - confidence) / 2, (1 + confidence) / 2])
    return mean, np.array(ratios), (lo, hi)


@pytest.mark.parametrize("resampling", ["multinomial", "poisson"])
def test_bootstrap_of_the_ratio_equals_a_literal_resampling(resampling):
    import rankereval.stats._compare as _compare
    from rankereval.stats._exact import poisson_sums
    from rankereval.stats._random import rng, stream_key
    from rankereval.stats._resampling import bootstrap_ratio, query_key_hashes

    x, w = _weighted_data(1)
    n, b = x.shape[0], 300
    res = bootstrap_ratio(x, w, n_resamples=b, random_state=5, resampling=resampling,
                          keys=np.arange(n) if resampling == "poisson" else None)
    # the draws of each query in each resample, from the same random streams: summed over the
    # identity matrix, each column is one query's count
    eye = np.eye(n)
    if resampling == "poisson":
        counts = poisson_sums(eye, query_key_hashes(np.arange(n)), stream_key(rng(5)), b)[0].T
    else:
        seed = int(rng(5).integers(0, 2 ** 64, dtype=np.uint64))
        counts = _compare.bootstrap_sums(eye, b, seed)
    mean, ratios, (lo, hi) = _literal_interval(x, w, counts, 0.95)
    assert res.mean == pytest.approx(mean, rel=1e-14)
    np.testing.assert_allclose(res.bootstrap_distribution, ratios, rtol=1e-12)
    assert res.confidence_interval == pytest.approx((lo, hi), rel=1e-12)
    # not the fixed-denominator shortcut (mean of c w x / sum(w)), whose spread differs
    fixed = counts @ (w * x) / w.sum()
    assert not np.allclose(res.bootstrap_distribution, fixed)


def test_metric_bootstrap_and_evaluate_resample_the_ratio():
    rng = np.random.default_rng(4)
    grades = (rng.random((30, 12)) < 0.3)
    grades[:, 0] = True
    scores = rng.random((30, 12))
    y, r = BinaryLabels.from_matrix(grades), Rankings.from_scores(scores)
    s, w = GAUC().score(y, r), grades.sum(axis=1).astype(float)
    from rankereval.stats._resampling import bootstrap_ratio

    for resampling in ("multinomial", "poisson"):
        for method in ("percentile", "bca"):
            want = bootstrap_ratio(s, w, n_resamples=200, random_state=3, resampling=resampling, method=method,
                                   keys=np.arange(30) if resampling == "poisson" else None)
            got = GAUC().bootstrap(y, r, n_resamples=200, random_state=3, resampling=resampling, method=method)
            assert got.confidence_interval == want.confidence_interval and got.mean == want.mean
            ev = rankereval.evaluate(y, r, ["gauc"], conf_interval=True, n_resamples=200, random_state=3,
                                     resampling=resampling, method=method)
            assert ev.conf_intervals["gauc"] == want.confidence_interval


def test_bca_of_the_ratio_uses_the_influence_values():
    """BCa's acceleration of a ratio: the skewness of its empirical influence values
    (w_i / mean(w)) (x_i - R), which for equal weights are the jackknife's of a mean."""
    from rankereval.bootstrap import bootstrap_mean
    from rankereval.stats._resampling import bootstrap_ratio

    x, _ = _weighted_data(2)
    ones = np.ones_like(x)
    a = bootstrap_ratio(x, ones, n_resamples=500, random_state=1, method="bca", resampling="poisson",
                        keys=np.arange(x.size))
    b = bootstrap_mean(x, n_resamples=500, random_state=1, method="bca", resampling="poisson",
                       keys=np.arange(x.size))
    assert a.confidence_interval == pytest.approx(b.confidence_interval, rel=1e-12)


# -- the paired tests on the difference of weighted means, against literal ones -------------
def _two_runs(seed=0, n=24, m=10):
    rng = np.random.default_rng(seed)
    grades = rng.random((n, m)) < 0.35
    grades[:, 0] = True
    grades[:, -1] = False
    y = BinaryLabels.from_matrix(grades)
    a = Rankings.from_scores(rng.random((n, m)))
    b = Rankings.from_scores(rng.random((n, m)) + 0.3 * grades)
    xa, xb = GAUC().score(y, a), GAUC().score(y, b)
    return y, a, b, xb - xa, grades.sum(axis=1).astype(float)


def _ratio(d, w):
    return math.fsum(wi * di for wi, di in zip(w, d)) / math.fsum(w)


def test_t_test_is_the_delta_method_on_the_linearised_values():
    from scipy.stats import t as t_dist

    y, a, b, d, w = _two_runs()
    cmp = rankereval.compare(y, {"a": a, "b": b}, ["gauc"], baseline="a", test="t", nan_handling="drop")
    n = d.size
    dd = _ratio(d, w)
    z = [wi / (sum(w) / n) * (di - dd) for wi, di in zip(w, d)]          # influence values
    se = math.sqrt(sum(zi * zi for zi in z) / (n - 1) / n)
    t = dd / se
    p = 2 * t_dist.sf(abs(t), n - 1)
    half = t_dist.ppf(0.975, n - 1) * se
    row = cmp.results
    assert row["diff"][0] == pytest.approx(dd, rel=1e-12)
    assert row["p_value"][0] == pytest.approx(p, rel=1e-9)
    assert (row["ci_low"][0], row["ci_high"][0]) == pytest.approx((dd - half, dd + half), rel=1e-9)
    # the run means are the weighted means
    assert cmp.means[0, 1] == pytest.approx(_ratio(GAUC().score(y, b), w), rel=1e-14)
    assert cmp.means[0, 1] - cmp.means[0, 0] == pytest.approx(dd, rel=1e-12)


def test_randomization_test_flips_the_weighted_differences():
    """Against the exact sign-flip distribution (every one of the 2^n sign patterns) of
    sum(s w d) / sum(w): the Monte Carlo p-value of compare is within its sampling error."""
    y, a, b, d, w = _two_runs(1, n=12)
    cmp = rankereval.compare(y, {"a": a, "b": b}, ["gauc"], baseline="a", test="permutation",
                             n_resamples=20_000, random_state=0, nan_handling="drop")
    observed = abs(_ratio(d, w))
    wd = w * d
    hits = sum(1 for signs in itertools.product((1.0, -1.0), repeat=d.size)
               if abs(np.dot(signs, wd)) / w.sum() >= observed - 1e-12)
    exact = hits / 2 ** d.size
    assert cmp.results["p_value"][0] == pytest.approx(exact, abs=0.02)
    # and exactly, on the same sign flips (the flips of the identity matrix are each
    # resample's signs): the count of |sum(s w d)| / sum(w) >= |D|
    import rankereval.stats._compare as _compare

    seed = int(np.random.default_rng(0).integers(0, 2 ** 64, dtype=np.uint64))   # compare's first draw
    signs = _compare.sign_flip_sums(np.eye(d.size), 2000, seed)
    cmp = rankereval.compare(y, {"a": a, "b": b}, ["gauc"], baseline="a", test="permutation",
                             n_resamples=2000, random_state=0, nan_handling="drop")
    count = sum(1 for s in signs if abs(float(np.dot(s, wd))) / w.sum() >= observed * (1 - 1e-9))
    assert cmp.results["p_value"][0] == (count + 1) / 2001


def test_bootstrap_test_resamples_the_ratio():
    """compare(test='bootstrap'): the percentile interval of the resampled difference of
    weighted means and the bootstrap-t p-value with the delta-method standard error, against
    a literal computation on the same resamples."""
    import rankereval.stats._compare as _compare

    y, a, b, d, w = _two_runs(2)
    n, big_b = d.size, 500
    cmp = rankereval.compare(y, {"a": a, "b": b}, ["gauc"], baseline="a", test="bootstrap",
                             n_resamples=big_b, random_state=9, nan_handling="drop")
    gen = np.random.default_rng(9)
    gen.integers(0, 2 ** 64, dtype=np.uint64)                 # compare's first draw: the flips' key
    seed = int(gen.integers(0, 2 ** 64, dtype=np.uint64))     # then the bootstrap's
    counts = _compare.bootstrap_sums(np.eye(n), big_b, seed)
    dd = _ratio(d, w)
    wbar = sum(w) / n
    se = math.sqrt(sum((wi / wbar * (di - dd)) ** 2 for wi, di in zip(w, d)) / (n - 1) / n)
    diffs, ts = [], []
    for c in counts:
        den = float(np.dot(c, w))
        r = float(np.dot(c, w * d)) / den
        diffs.append(r)
        var = n * float(np.dot(c, w * w * (d - r) ** 2)) / ((n - 1) * den * den)
        ts.append((r - dd) / math.sqrt(var))
    lo, hi = np.quantile(diffs, [0.025, 0.975])
    assert (cmp.results["ci_low"][0], cmp.results["ci_high"][0]) == pytest.approx((lo, hi), rel=1e-9)
    t_obs = dd / se
    p = (sum(1 for t in ts if abs(t) >= abs(t_obs) * (1 - 1e-9)) + 1) / (big_b + 1)
    assert cmp.results["p_value"][0] == pytest.approx(p, abs=1.5 / (big_b + 1))


def test_tukey_and_the_refusals():
    y, a, b, d, w = _two_runs(3)
    c = Rankings.from_scores(np.random.default_rng(0).random((d.size, 10)))
    cmp = rankereval.compare(y, {"a": a, "b": b, "c": c}, ["gauc", "auroc"], test="tukey", n_resamples=300,
                             random_state=0, nan_handling="drop")
    assert np.isfinite(cmp.results["p_value"]).all()
    row = [i for i in range(len(cmp.results["metric"])) if cmp.results["metric"][i] == "gauc"
           and cmp.results["run"][i] == "b" and cmp.results["baseline"][i] == "a"][0]
    assert cmp.results["diff"][row] == pytest.approx(_ratio(d, w), rel=1e-12)



def test_leaderboard_resamples_the_ratio():
    """The leaderboard of GAUC: the weighted means, and the interval of each system's mean
    from the ratio of its resampled sums, against a literal one on the same resamples."""
    import rankereval.stats._compare as _compare

    y, a, b, d, w = _two_runs(4)
    c = Rankings.from_scores(np.random.default_rng(1).random((d.size, 10)))
    runs = {"a": a, "b": b, "c": c}
    cmp = rankereval.compare(y, runs, ["gauc", "auroc"], nan_handling="drop")
    lb = cmp.leaderboard("gauc", n_resamples=400, random_state=8)
    x = np.column_stack([GAUC().score(y, r) for r in runs.values()])
    key = int(np.random.default_rng(8).integers(0, 2 ** 64, dtype=np.uint64))   # its first draw
    counts = _compare.bootstrap_sums(np.eye(d.size), 400, key)
    boot = np.array([[float(np.dot(cb, w * x[:, r])) / float(np.dot(cb, w)) for r in range(3)] for cb in counts])
    lo, hi = np.quantile(boot, [cmp.alpha / 2, 1 - cmp.alpha / 2], axis=0)
    np.testing.assert_allclose(lb.columns["mean"], [_ratio(x[:, r], w) for r in range(3)], rtol=1e-14)
    np.testing.assert_allclose(lb.columns["mean_low"], lo, rtol=1e-12)
    np.testing.assert_allclose(lb.columns["mean_high"], hi, rtol=1e-12)
    np.testing.assert_array_equal(cmp.leaderboard("auroc").columns["mean"], cmp.means[1])
    # several runs per system: the seeds' weighted means, resampled with the queries
    seeds = rankereval.compare(y, {"ab": [a, b], "c": [c]}, ["gauc"], nan_handling="drop")
    got = seeds.leaderboard("gauc", n_resamples=200, random_state=1).columns["mean"]
    np.testing.assert_allclose(got, [(_ratio(x[:, 0], w) + _ratio(x[:, 1], w)) / 2, _ratio(x[:, 2], w)],
                               rtol=1e-13)


# -- the command line and the Accumulator's state ----------------------------------------------
def test_cli_gauc_equals_the_api(tmp_path, capsys):
    from rankereval.cli import main
    from rankereval.io import read_trec

    rng = np.random.default_rng(5)
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"q{q} 0 d{d} {int(rng.random() < 0.3 or d == q % 7)}\n"
                             for q in range(15) for d in range(7)))
    run.write_text("".join(f"q{q} Q0 d{d} {i + 1} {7 - i + rng.random() / 2} t\n"
                           for q in range(15) for i, d in enumerate(rng.permutation(7))))
    data = read_trec(str(qrels), str(run))
    assert main(["evaluate", str(qrels), str(run), "-m", "gauc", "GAUC@3", "-f", "json",
                 "--nan-handling", "drop"]) == 0
    got = json.loads(capsys.readouterr()[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert got["gauc"]["mean"] == data.mean(GAUC(), nan_handling="drop")
        assert got["GAUC@3"]["mean"] == data.mean(GAUC(3), nan_handling="drop")
    assert got["gauc"]["mean"] != data.mean(AUROC(), nan_handling="drop")


def test_accumulator_state_dict_round_trip():
    rng = np.random.default_rng(6)
    grades = rng.random((20, 9)) < 0.3
    scores = rng.random((20, 9))
    ids = np.arange(100, 120)
    want = rankereval.evaluate(BinaryLabels.from_matrix(grades), Rankings.from_scores(scores), ["gauc", "p@3"],
                               nan_handling="drop", conf_interval=True, resampling="poisson", n_resamples=50,
                               random_state=2, query_ids=ids)
    opts = dict(nan_handling="drop", conf_interval=True, n_resamples=50, random_state=2)
    first, second = Accumulator(["gauc", "p@3"], **opts), Accumulator(["gauc", "p@3"], **opts)
    first.update(BinaryLabels.from_matrix(grades[:7]), scores[:7], query_ids=ids[:7])
    second.update(BinaryLabels.from_matrix(grades[7:]), scores[7:], query_ids=ids[7:])
    restored = Accumulator(["gauc", "p@3"], **opts)
    restored.load_state_dict(first.state_dict())
    restored.merge(second.state_dict())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = restored.compute()
    assert got.means == want.means and got.conf_intervals == want.conf_intervals
    state = first.state_dict()
    del state["wsum.limbs"]
    with pytest.raises(ValueError, match="wsum.limbs"):
        restored.load_state_dict(state)


def _split_sums(y, runs, test, seeds, b, n_blocks, seed=0):
    """rankereval.stats._paired_sums over a random split of the queries (what each Spark
    partition sends), with the query weights of GAUC; merged."""
    from rankereval.stats import _paired_sums
    from rankereval.stats._alignment import _resolve_metrics

    names, objs = _resolve_metrics(["gauc", "auroc"])
    evs = [rankereval.evaluate(y, r, names, nan_handling="drop") for r in runs.values()]
    scores = np.stack([e.scores for e in evs], axis=2)
    weights = evs[0]._weights
    rows = np.random.default_rng(seed).permutation(scores.shape[0])
    total = None
    for block in np.array_split(rows, n_blocks):
        part = _paired_sums.partials(scores[block], block, "drop", objs, list(runs), "a", test, seeds, b,
                                     b, weights=weights[block])
        total = part if total is None else _paired_sums.merge(total, part)
    means = _paired_sums.weighted_run_means(total, total["score_sums"].to_float() / total["counts"][:, None],
                                            [True, False])
    return _paired_sums.summarise(total, test, "two-sided", 0.05, b, np.array([True, False])), means, scores


def test_paired_sums_of_any_split_give_compares_weighted_t_test():
    """What rankereval.spark.compare adds up per partition: the weighted t-test and run means
    of any split equal compare's in memory."""
    y, a, b, d, w = _two_runs(5)
    want = rankereval.compare(y, {"a": a, "b": b}, ["gauc", "auroc"], baseline="a", nan_handling="drop")
    for n_blocks, seed in ((1, 0), (4, 1), (9, 2)):
        (n, mean, sd, p, low, high), means, _ = _split_sums(y, {"a": a, "b": b}, "t", (0, 0), 0, n_blocks, seed)
        np.testing.assert_allclose(mean, want.results["diff"], rtol=1e-12)
        np.testing.assert_allclose(p, want.results["p_value"], rtol=1e-10)
        np.testing.assert_allclose(low, want.results["ci_low"], rtol=1e-10)
        np.testing.assert_allclose(high, want.results["ci_high"], rtol=1e-10)
        np.testing.assert_allclose(means, want.means, rtol=1e-14)


def test_paired_sums_resample_the_weighted_differences_literally():
    """The Poisson bootstrap (percentile interval of the resampled ratio, bootstrap-t with the
    resample's delta-method standard error) and the keyed sign flips of w d, against literal
    computations with the same Poisson weights and signs."""
    from rankereval.stats import _bootstrap
    from rankereval.stats._resampling import query_key_hashes

    y, a, b, d, w = _two_runs(6)
    big_b, seeds = 300, (21, 22)
    keys = query_key_hashes(np.arange(d.size))
    pw = _bootstrap.poisson_weights(keys, seeds[1], big_b).astype(float)            # (n, B)
    signs = _bootstrap.keyed_sign_sums(np.eye(d.size), keys, seeds[0], big_b)       # (B, n)
    dd = _ratio(d, w)
    se = math.sqrt(sum((wi / (sum(w) / d.size) * (di - dd)) ** 2 for wi, di in zip(w, d)) / (d.size - 1) / d.size)
    ratios = [float(np.dot(pw[:, k], w * d) / np.dot(pw[:, k], w)) for k in range(big_b)]
    lo, hi = np.quantile(ratios, [0.025, 0.975])
    for test in ("permutation", "bootstrap"):
        (n, mean, sd, p, low, high), _, _ = _split_sums(y, {"a": a, "b": b}, test, seeds, big_b, 3)
        assert mean[0] == pytest.approx(dd, rel=1e-12)
        assert (low[0], high[0]) == pytest.approx((lo, hi), rel=1e-12)
        if test == "permutation":
            null = [abs(float(np.dot(sg, w * d))) for sg in signs]
            want = (sum(1 for v in null if v >= abs(float(np.dot(w, d))) * (1 - 1e-9)) + 1) / (big_b + 1)
        else:
            ts = []
            for k in range(big_b):
                c, r = pw[:, k], ratios[k]
                den = float(np.dot(c, w))
                var = c.sum() * float(np.dot(c, w * w * (d - r) ** 2)) / ((c.sum() - 1) * den * den)
                ts.append((r - dd) / math.sqrt(var))
            want = (sum(1 for t in ts if abs(t) >= abs(dd / se) * (1 - 1e-9)) + 1) / (big_b + 1)
        assert p[0] == pytest.approx(want, abs=1e-12), test


def test_cli_compare_gauc_equals_the_api(trec_files):
    import argparse
    import io

    from rankereval.cli._compare import add_compare_subparser, run_compare
    from rankereval.io import read_trec

    qrels, runs = trec_files
    parser = argparse.ArgumentParser(prog="rankereval")
    add_compare_subparser(parser.add_subparsers(dest="command"))
    out, err = io.StringIO(), io.StringIO()
    args = parser.parse_args(["compare", qrels, *runs, "-m", "gauc", "--baseline", "0", "-f", "json",
                              "--nan-handling", "drop"])
    assert run_compare(args, out, err) == 0, err.getvalue()
    datas = {f"sys{i}": read_trec(qrels, r, missing="empty") for i, r in enumerate(runs)}
    ref = rankereval.compare(None, datas, ["gauc"], baseline="sys0", nan_handling="drop")
    assert json.loads(out.getvalue())["comparisons"] == json.loads(ref.to_json())["comparisons"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert ref.means[0, 1] == datas["sys1"].mean(GAUC(), nan_handling="drop")


def test_a_constant_score_gives_the_mean_as_interval_everywhere():
    # AUROC 1/3 for both queries, weights 1 and 2: w * x rounds, the interval is the mean's bits
    y = BinaryLabels.from_positive_indices([[2], [1, 4]])
    r = Rankings.from_ranked_indices([[0, 1, 2, 3], [0, 1, 2, 3, 4]])
    np.testing.assert_array_equal(GAUC().score(y, r), [1 / 3, 1 / 3])
    mean = GAUC().mean(y, r)
    for resampling in ("multinomial", "poisson"):
        res = GAUC().bootstrap(y, r, resampling=resampling, n_resamples=20)
        ev = rankereval.evaluate(y, r, ["gauc"], conf_interval=True, resampling=resampling, n_resamples=20)
        assert res.confidence_interval == ev.conf_intervals["gauc"] == (mean, mean) and res.mean == mean
