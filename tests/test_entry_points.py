"""One question, one answer: the same means and intervals through every entry point.

Every registered metric (every option combination, ``helpers.all_metrics``) is asked for
its mean and bootstrap interval through ``Metric.mean``, :func:`rankereval.evaluate`, the
:class:`~rankereval.Accumulator` fed in batches, the scikit-learn-shaped functions (where one
mirrors a metric), :func:`rankereval.compare`'s per-run means, :mod:`rankereval.dask` on a
``distributed.LocalCluster`` with worker processes and :mod:`rankereval.spark` (where pyspark is
installed), for every ``nan_handling``, both resamplings and both interval methods, on data with
undefined (NaN) and infinite (MeanRanks, FirstRelevantRank) per-query values. The engine sums
exactly, so the answers are compared bit for bit.
"""
import math
import warnings

import numpy as np
import pytest

import rankereval
from rankereval import Accumulator, BinaryLabels, NumericLabels, Rankings
from helpers import all_metrics, quiet, same


METRICS = all_metrics()
#: what Dask and Spark take (they refuse the metrics that read the catalogue's size)
PARTITIONED = all_metrics(partitioned=True)
NAN_HANDLING = ("propagate", "drop", "zerofill", "onefill")
B = 64
SEED = 11
N, N_ITEMS, K = 36, 24, 10


def _data():
    """Dense grades and scores (no ties) of N queries: some without a relevant item (NaN for
    most metrics), some whose relevant items are all below the cutoff K of the rankings (+inf
    for MeanRanks and FirstRelevantRank)."""
    rng = np.random.default_rng(3)
    grades = rng.integers(0, 4, size=(N, N_ITEMS)) * (rng.random((N, N_ITEMS)) < 0.3)
    grades[[2, 9, 20]] = 0                                   # no relevant item: NaN
    scores = rng.permutation(N * N_ITEMS).reshape(N, N_ITEMS) / (N * N_ITEMS) + 0.001
    for q in (4, 15, 27):                                    # relevant items ranked below K: +inf
        grades[q] = 0
        low = np.argsort(scores[q])[:3]
        grades[q, low] = (1, 2, 3)
    return grades.astype(np.int64), scores


GRADES, SCORES = _data()
NUMERIC = NumericLabels.from_matrix(GRADES)
NUMERIC = NUMERIC.with_judged(NUMERIC)
BINARY = BinaryLabels.from_matrix(GRADES > 0)
BINARY = BINARY.with_judged(BINARY)
RANKINGS = Rankings.from_scores(SCORES, k=K)


def labels_of(metric):
    return NUMERIC if metric.info.labels == "graded" else BINARY


def outcome(fn, *args, **kwargs):
    """``('ok', value)`` or ``('error', type, message)``: refusals must agree too."""
    try:
        return ("ok", quiet(fn, *args, **kwargs))
    except (ValueError, TypeError) as exc:
        return ("error", type(exc), str(exc))


def test_the_data_has_undefined_and_infinite_values():
    scores = rankereval.evaluate(NUMERIC, RANKINGS, METRICS, nan_handling="drop").scores
    assert np.isnan(scores).any() and np.isposinf(scores).any()
    assert np.isposinf(METRICS["meanranks"].score(BINARY, RANKINGS)).sum() >= 3


@pytest.mark.parametrize("nan_handling", NAN_HANDLING)
def test_metric_mean_equals_evaluate(nan_handling):
    ev = quiet(rankereval.evaluate, NUMERIC, RANKINGS, METRICS, nan_handling=nan_handling)
    for name, m in METRICS.items():
        got = quiet(m.mean, labels_of(m), RANKINGS, nan_handling=nan_handling)
        assert same(got, ev.means[name]), (name, got, ev.means[name])


@pytest.mark.parametrize("resampling", ["multinomial", "poisson"])
@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("nan_handling", NAN_HANDLING)
def test_intervals_equal_in_metric_mean_bootstrap_and_evaluate(nan_handling, method, resampling):
    opts = dict(nan_handling=nan_handling, method=method, resampling=resampling, random_state=SEED)
    for name, m in METRICS.items():
        one = {name: m}
        ev = outcome(rankereval.evaluate, NUMERIC, RANKINGS, one, conf_interval=True,
                     n_resamples=B, **opts)
        mean = outcome(m.mean, labels_of(m), RANKINGS, conf_interval=True, n_resamples=B, **opts)
        boot = outcome(m.bootstrap, labels_of(m), RANKINGS, n_resamples=B, **opts)
        assert ev[0] == mean[0] == boot[0], (name, ev, mean, boot)
        if ev[0] == "error":      # BCa of an infinite mean: the same refusal everywhere
            assert ev[1:] == mean[1:] == boot[1:]
            continue
        want = (ev[1].means[name],) + tuple(ev[1].conf_intervals[name])
        got_mean = (mean[1]["score"],) + tuple(mean[1]["conf_interval"])
        got_boot = (boot[1].mean,) + tuple(boot[1].confidence_interval)
        for w, g1, g2 in zip(want, got_mean, got_boot):
            assert same(w, g1) and same(w, g2), (name, want, got_mean, got_boot)


def test_one_seed_for_every_metric_of_a_call():
    """An int random_state gives each metric of evaluate the interval of its own call."""
    ev = rankereval.evaluate(NUMERIC, RANKINGS, ["p@3", "ndcg@5", "rr@10"], nan_handling="drop",
                             conf_interval=True, n_resamples=B, random_state=SEED)
    for name in ev.names:
        m = rankereval.metrics.from_name(name)
        res = m.mean(labels_of(m), RANKINGS, "drop", True, B, 0.95, random_state=SEED)
        assert res["conf_interval"] == ev.conf_intervals[name]


@pytest.mark.parametrize("nan_handling", NAN_HANDLING)
def test_accumulator_in_batches_equals_evaluate(nan_handling):
    opts = dict(nan_handling=nan_handling, conf_interval=True, n_resamples=B, random_state=SEED)
    want = quiet(rankereval.evaluate, NUMERIC, RANKINGS, METRICS, resampling="poisson", **opts)
    acc = Accumulator(METRICS, **opts)
    for a, b in ((0, 7), (7, 8), (8, 30), (30, N)):
        labels = NumericLabels.from_matrix(GRADES[a:b])
        acc.update(labels.with_judged(labels), Rankings.from_scores(SCORES[a:b], k=K))
    got = quiet(acc.compute)
    assert got.n_used == want.n_used and got.n_undefined == want.n_undefined
    for name in want.names:
        assert same(got.means[name], want.means[name]), name
        for g, w in zip(got.conf_intervals[name], want.conf_intervals[name]):
            assert same(g, w), name


FUNCTIONAL = {  # scikit-learn-shaped function -> the metric it mirrors (no ties in SCORES)
    "map_score": (dict(k=5), "ap@5"),
    "precision_at_k": (dict(k=3), "p@3"),
    "recall_at_k": (dict(k=10), "r@10"),
    "mrr_score": (dict(k=10), "rr@10"),
    "ndcg_score": (dict(k=5), "ndcg@5"),
    "dcg_score": (dict(k=5, log_base="e"), "dcg@5"),
}


@pytest.mark.parametrize("nan_handling", NAN_HANDLING)
@pytest.mark.parametrize("function", list(FUNCTIONAL))
def test_functional_api_equals_metric_mean(function, nan_handling):
    kwargs, name = FUNCTIONAL[function]
    m = rankereval.metrics.from_name(name)
    got = quiet(getattr(rankereval, function), GRADES, SCORES, nan_handling=nan_handling, **kwargs)
    want = quiet(m.mean, labels_of(m), RANKINGS, nan_handling)
    if function in ("ndcg_score", "dcg_score"):
        # scikit-learn's shape: the discounts of tie-averaged gains are computed apart from the
        # kernel's (NumPy's log, whose last bit differs across NumPy releases, e.g. 1.24)
        assert got == pytest.approx(want, rel=1e-13, nan_ok=True), (function, got, want)
    else:
        assert same(got, want), (function, got, want)


@pytest.mark.parametrize("nan_handling", NAN_HANDLING)
def test_compare_run_means_equal_evaluate(nan_handling):
    """compare's per-run means are evaluate's, infinite values included (they are values, not
    undefined: both give an infinite MeanRanks mean under every nan_handling)."""
    other = Rankings.from_scores(-SCORES, k=K)
    runs = {"a": RANKINGS, "b": other}
    names = [n for n, m in METRICS.items() if m.info.labels != "none"]
    chosen = {n: METRICS[n] for n in names}
    cmp = quiet(rankereval.compare, NUMERIC, runs, chosen, nan_handling=nan_handling)
    evs = [quiet(rankereval.evaluate, NUMERIC, run, chosen, nan_handling=nan_handling) for run in runs.values()]
    checked = 0
    for r, ev in enumerate(evs):
        for j, name in enumerate(names):
            undefined_in_other = np.isnan(evs[1 - r].scores[:, j])
            if nan_handling == "drop" and (undefined_in_other & ~np.isnan(ev.scores[:, j])).any():
                continue  # compare drops a query undefined in any run, for every run
            checked += 1
            assert same(cmp.means[j, r], ev.means[name]), (name, r, cmp.means[j, r], ev.means[name])
    assert checked > len(names)
    if nan_handling != "propagate":
        assert np.isposinf(cmp.means[names.index("meanranks")]).all()


def test_infinite_values_are_values_everywhere():
    """The documented rule: only NaN is undefined; +inf enters every mean."""
    m = METRICS["meanranks"]
    for nan_handling in NAN_HANDLING:
        got = [quiet(m.mean, BINARY, RANKINGS, nan_handling),
               quiet(rankereval.evaluate, NUMERIC, RANKINGS, ["meanranks"], nan_handling=nan_handling).means["meanranks"]]
        if nan_handling != "propagate":
            assert got == [math.inf, math.inf]
        cmp = quiet(rankereval.compare, BINARY, {"a": RANKINGS, "b": RANKINGS}, ["meanranks"],
                    nan_handling=nan_handling)
        assert same(cmp.means[0, 0], got[1])


# -- Dask on a real cluster ------------------------------------------------------------------
def _dense_ids(labels):
    rows = labels.indices_to_list()
    width = max(1, max(len(r) for r in rows))
    out = np.full((len(rows), width), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def test_dask_on_a_cluster_equals_evaluate(dask_client):
    import dask.array as da
    import rankereval.dask as rd

    lab = _dense_ids(NUMERIC)
    grades = np.zeros(lab.shape)
    for i, vals in enumerate(NUMERIC.labels_to_list()):
        grades[i, :len(vals)] = vals
    ranks = np.asarray(RANKINGS.indices)
    chunks = ((10, 0, 20, 6),)
    data = rd.from_arrays(da.from_array(lab, chunks=chunks + (lab.shape[1],)),
                          da.from_array(ranks, chunks=chunks + (ranks.shape[1],)),
                          grades=da.from_array(grades, chunks=chunks + (lab.shape[1],)))
    for nan_handling in NAN_HANDLING:
        opts = dict(nan_handling=nan_handling, conf_interval=True, n_resamples=B, random_state=SEED)
        want = quiet(rankereval.evaluate, NUMERIC, RANKINGS, PARTITIONED, resampling="poisson", **opts)
        got = quiet(rd.evaluate(data, metrics=PARTITIONED, **opts).compute)
        assert got.n_used == want.n_used and got.n_undefined == want.n_undefined
        for name in want.names:
            assert same(got.means[name], want.means[name]), (nan_handling, name)
            for g, w in zip(got.conf_intervals[name], want.conf_intervals[name]):
                assert same(g, w), (nan_handling, name)


@pytest.mark.spark
def test_spark_equals_evaluate(spark):
    spark_mod = pytest.importorskip("rankereval.spark")
    pd = pytest.importorskip("pandas")
    lab = [(q, int(i), int(g)) for q in range(N) for i, g in enumerate(GRADES[q]) if g > 0]
    lab += [(q, 0, 0) for q in range(N) if not GRADES[q].any()]   # judged, nothing relevant
    run = [(q, int(i), float(SCORES[q, i])) for q in range(N) for i in np.asarray(RANKINGS.indices[q])]
    labels_df = spark.createDataFrame(pd.DataFrame(lab, columns=["query", "item", "label"]))
    run_df = spark.createDataFrame(pd.DataFrame(run, columns=["query", "item", "score"]))
    for nan_handling in NAN_HANDLING:
        opts = dict(nan_handling=nan_handling, conf_interval=True, n_resamples=B, random_state=SEED)
        from rankereval.io import from_dataframes

        data = from_dataframes(pd.DataFrame(lab, columns=["query", "item", "label"]),
                               pd.DataFrame(run, columns=["query", "item", "score"]))
        metrics = dict(PARTITIONED)
        want = quiet(rankereval.evaluate, data, metrics, resampling="poisson", **opts)
        got = quiet(spark_mod.evaluate, labels_df, run_df, metrics, **opts)
        for name in want.names:
            assert same(got.means[name], want.means[name]), (nan_handling, name)
            for g, w in zip(got.conf_intervals[name], want.conf_intervals[name]):
                assert same(g, w), (nan_handling, name)


# -- one vocabulary ----------------------------------------------------------------------------
def test_old_spellings_warn_and_give_the_same_answer():
    opts = dict(conf_interval=True, random_state=SEED, nan_handling="drop")
    want = rankereval.evaluate(NUMERIC, RANKINGS, ["p@3"], n_resamples=B, **opts)
    with pytest.warns(DeprecationWarning, match="use n_resamples="):
        old = rankereval.evaluate(NUMERIC, RANKINGS, ["p@3"], n_bootstrap_samples=B, **opts)
    assert old.conf_intervals == want.conf_intervals
    with pytest.raises(TypeError, match="n_resamples=10 and n_bootstrap_samples=20"):
        with pytest.warns(DeprecationWarning):
            rankereval.evaluate(NUMERIC, RANKINGS, ["p@3"], n_resamples=10, n_bootstrap_samples=20)
    with pytest.warns(DeprecationWarning, match="use n_resamples="):
        Accumulator(["p@3"], n_bootstrap_samples=B)
    # Metric.mean keeps the reference's words and takes the package's (no warning)
    m = rankereval.metrics.from_name("p@3")
    ref = m.mean(BINARY, RANKINGS, "drop", True, B, 0.9, random_state=SEED)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = m.mean(BINARY, RANKINGS, "drop", True, random_state=SEED, n_resamples=B, confidence_level=0.9)
    assert new == ref
    # option strings match case-insensitively, and messages name the argument as spelt
    assert m.mean(BINARY, RANKINGS, "Drop") == m.mean(BINARY, RANKINGS, "drop")
    with pytest.raises(ValueError, match="n_bootstrap_samples must be an integer > 1"):
        m.mean(BINARY, RANKINGS, conf_interval=True, n_bootstrap_samples=1)
    with pytest.raises(ValueError, match="^n_resamples must be an integer > 1"):
        rankereval.compare(BINARY, {"a": RANKINGS, "b": RANKINGS}, ["p@3"], n_resamples=1)


def test_swapped_accumulator_calls_never_give_a_number():
    acc = Accumulator(["ndcg@3"])
    with pytest.warns(DeprecationWarning, match=r"update\(y_true, y_pred\)"):
        acc.update(RANKINGS, NUMERIC)                     # the old order, told by the types
    want = rankereval.evaluate(NUMERIC, RANKINGS, ["ndcg@3"]).means
    assert same(quiet(acc.compute).means["ndcg@3"], want["ndcg@3"])
    with pytest.raises(TypeError, match="y_true and y_pred look swapped"):
        acc.update(SCORES, GRADES)                        # float scores first, grades second
    with pytest.raises(TypeError, match="y_true and y_pred look swapped"):
        acc.update(SCORES > 0.5, GRADES > 0)              # boolean y_pred
    with pytest.raises(TypeError, match="both Labels"):
        acc.update(BINARY, NUMERIC)


def test_cli_messages_name_flags():
    from rankereval.stats._engine import OptionError, cli_message

    flags = {"queries": "--queries", "n_bootstrap_samples": "--n-resamples", "missing": "-c/--missing"}
    assert cli_message(ValueError("pass queries='intersection' to compare the common queries"), flags) == \
        "pass --queries intersection to compare the common queries"
    exc = OptionError("n_bootstrap_samples", "n_bootstrap_samples must be an integer > 1, got 1")
    assert cli_message(exc, flags) == "--n-resamples must be an integer > 1, got 1"
    assert cli_message(ValueError("or missing='empty'"), flags) == "or -c/--missing empty"


def test_log_base_is_one_option_everywhere():
    """DCG, dcg_score and the name grammar take the base as the number or its string."""
    import math

    for base in (2, "2", math.e, "e", "E"):
        assert rankereval.DCG(5, log_base=base) == rankereval.DCG(5, log_base=str(base).lower()[:1]
                                                                   if isinstance(base, str) else
                                                                   ("2" if base == 2 else "e"))
    got = rankereval.dcg_score(GRADES, SCORES, k=5, log_base="2", nan_handling="zerofill")
    assert got == rankereval.dcg_score(GRADES, SCORES, k=5, log_base=2, nan_handling="zerofill")
    assert same(got, quiet(rankereval.DCG(5, log_base=2).mean, NUMERIC, RANKINGS, "zerofill"))
    # any other base > 1: the shortest string of its number, from the number or a string
    for base, text in ((10, "10"), (10.0, "10"), ("10", "10"), ("1e1", "10"), (1.5, "1.5"), (np.float32(4), "4")):
        assert rankereval.DCG(5, log_base=base).log_base == text
    from_name = rankereval.metrics.from_name
    assert from_name("dcg@5[log_base=10]") == rankereval.DCG(5, log_base=10)
    assert from_name(rankereval.NDCG(5, log_base=1.5).name) == rankereval.NDCG(5, log_base=1.5)
    assert rankereval.DCG(5, log_base=10).name == "dcg@5[log_base=10]"
    got = rankereval.dcg_score(GRADES, SCORES, k=5, log_base=10, nan_handling="zerofill")
    assert same(got, quiet(rankereval.DCG(5, log_base="10").mean, NUMERIC, RANKINGS, "zerofill"))
    for bad in (1, 0.5, 0, -2, float("inf"), float("nan"), "ten", True, None):
        with pytest.raises(ValueError, match="log_base must be '2', 'e' or a number > 1"):
            rankereval.DCG(5, log_base=bad)
    with pytest.raises(ValueError, match="metric 'dcg\\[log_base=1\\]': log_base must be '2', 'e' or a number > 1"):
        from_name("dcg[log_base=1]")
