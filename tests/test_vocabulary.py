"""One meaning per name (docs/guide/vocabulary.rst): result objects' methods, and the old
spellings of renamed arguments, which warn naming the new word and give the same result."""
import warnings

import numpy as np
import pytest

import rankereval
from rankereval import BinaryLabels, Rankings
from helpers import quiet

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    y = BinaryLabels.from_matrix((rng.random((12, 8)) < 0.3).astype(np.int64))
    a = Rankings.from_scores(rng.random((12, 8)))
    b = Rankings.from_scores(rng.random((12, 8)))
    return y, {"a": a, "b": b}


def test_to_pandas_means_per_query_scores_on_both_results(data):
    y, runs = data
    names = ["ap", "ndcg@5"]
    ev = quiet(rankereval.evaluate, y, runs["a"], names, nan_handling="drop")
    cmp = quiet(rankereval.compare, y, runs, names, nan_handling="drop", n_resamples=99,
                 random_state=0)
    per_ranking = ev.to_pandas()
    assert per_ranking.equals(ev.to_pandas(per_query=True))
    per_query = cmp.to_pandas(per_query=True)
    assert per_query.shape == (12, 4)
    assert list(per_query.columns) == [(m, r) for m in names for r in ("a", "b")]
    # the same per-query scores as the Evaluation of run a
    for name in names:
        np.testing.assert_array_equal(per_query[(name, "a")].to_numpy(),
                                      per_ranking[name].to_numpy())
    # summary: the table of statistics on both (one row per metric / per metric and comparison)
    assert list(ev.summary().index) == names
    assert list(cmp.summary()["metric"]) == names
    assert set(cmp.summary().columns) >= {"mean", "ci_low", "ci_high"}
    assert set(ev.summary().columns) >= {"mean", "n_used"}
    # to_json: the summary's statistics as JSON text on both
    assert set(__import__("json").loads(ev.to_json())["metrics"]) == set(names)
    assert [row["metric"] for row in __import__("json").loads(cmp.to_json())["comparisons"]] == names
    with pytest.raises(ValueError, match="summary"):
        ev.to_pandas(per_query=False)
    from dataclasses import replace

    with pytest.raises(ValueError, match="stayed on the cluster"):   # as rankereval.spark.compare's
        replace(cmp, scores=None, valid=None, query_ids=None).to_pandas(per_query=True)


def test_comparison_to_pandas_old_meaning_warns_naming_summary(data):
    y, runs = data
    cmp = quiet(rankereval.compare, y, runs, ["ap"], nan_handling="drop", n_resamples=99,
                 random_state=0)
    with pytest.warns(DeprecationWarning, match=r"Comparison\.summary\(\)") as record:
        old = cmp.to_pandas()
    assert record[0].filename == __file__
    assert old.equals(cmp.summary())


def test_mean_and_bootstrap_take_random_state_method_resampling_by_keyword(data):
    import inspect

    from rankereval import AP

    y, runs = data
    metric = AP(5)
    for method in (metric.mean, metric.bootstrap):
        params = inspect.signature(method).parameters
        for name in ("random_state", "method", "resampling"):
            assert params[name].kind is inspect.Parameter.KEYWORD_ONLY, (method, name)
    # the reference's signature stays: mean(y_true, y_pred, nan_handling, conf_interval,
    # n_bootstrap_samples, confidence), positional
    assert list(inspect.signature(metric.mean).parameters)[:6] == [
        "y_true", "y_pred", "nan_handling", "conf_interval", "n_bootstrap_samples", "confidence"]
    want = metric.mean(y, runs["a"], "drop", True, 200, 0.9, random_state=4, method="bca",
                       resampling="poisson")
    with pytest.warns(DeprecationWarning, match="random_state=, method=, resampling= by keyword") as rec:
        old = metric.mean(y, runs["a"], "drop", True, 200, 0.9, 4, "bca", "poisson")
    assert rec[0].filename == __file__
    assert old == want
    boot = metric.bootstrap(y, runs["a"], "drop", 200, 0.9, method="bca", random_state=4,
                            resampling="poisson")
    with pytest.warns(DeprecationWarning, match="method=, random_state= by keyword") as rec:
        old = metric.bootstrap(y, runs["a"], "drop", 200, 0.9, "bca", 4, resampling="poisson")
    assert rec[0].filename == __file__
    assert old.confidence_interval == boot.confidence_interval == want["conf_interval"]
    with pytest.raises(TypeError, match="random_state by position and by keyword"), \
            pytest.warns(DeprecationWarning):
        metric.mean(y, runs["a"], "drop", True, 200, 0.9, 4, random_state=5)
    with pytest.raises(TypeError, match="positional arguments"):
        metric.bootstrap(y, runs["a"], "drop", 200, 0.9, "bca", 4, "poisson", "extra")


def test_compare_default_nan_handling_warns_of_its_change_only_when_it_matters(data):
    y, runs = data
    assert (y.n_positives == 0).any()   # queries without a relevant item: AP undefined
    explicit = rankereval.compare(y, runs, ["ap", "ndcg@5"], nan_handling="drop")
    with pytest.warns(FutureWarning, match=r"from 'drop' to 'propagate'.*ap \(\d+\)") as rec:
        default = rankereval.compare(y, runs, ["ap", "ndcg@5"])
    assert rec[0].filename == __file__
    assert default.nan_handling == "drop"
    pd.testing.assert_frame_equal(default.summary(), explicit.summary())
    # nothing undefined: the default and 'propagate' agree, and nothing is said
    keep = y.n_positives > 0
    y_def = BinaryLabels.from_positive_indices([r for r, k in zip(y.indices_to_list(), keep) if k])
    runs_def = {k: Rankings.from_ranked_indices([r for r, q in zip(v.to_list(), keep) if q])
                for k, v in runs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        quiet = rankereval.compare(y_def, runs_def, ["ap"])
    np.testing.assert_array_equal(
        quiet.means, rankereval.compare(y_def, runs_def, ["ap"], nan_handling="propagate").means)
