"""rankereval.evaluate: the same numbers as the separate score/mean calls, every metric and
option (parametrised from the registry), names, tables, query ids and the NaN warning."""
import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankereval as rk
from rankereval import BinaryLabels, NumericLabels, Rankings, UndefinedMetricWarning, evaluate
from rankereval.metrics._base import _registered
from helpers import quiet

ALL = [cls(**p) for cls in _registered() for p in cls._param_space(cutoffs=(1, 3))]


def _data(seed=0, n=60, n_items=30, width=12):
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 4, size=(n, n_items)) * (rng.random((n, n_items)) < 0.2)
    grades[:3] = 0  # rankings without any relevant item: NaN for every metric
    grades[3, :] = 0
    grades[3, 5] = 1  # exactly one relevant item (HitRate is defined there)
    ranks = np.argsort(rng.random((n, n_items)), axis=1)[:, :width]
    # judged: the graded items and about a fifth of the others (judged not relevant)
    judged = (grades > 0) | (rng.random((n, n_items)) < 0.2)
    y_num = NumericLabels.from_matrix(grades).with_judged(BinaryLabels.from_matrix(judged))
    return y_num, Rankings.from_ranked_indices(ranks), grades


def _binary(grades, level, y_num):
    """What evaluate thresholds y_num to: relevant = grade >= level, the same judgments."""
    return BinaryLabels.from_matrix(grades >= level).with_judged(y_num.judged)


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize("nan_handling", ["propagate", "drop", "zerofill"])
def test_evaluate_equals_separate_calls_for_every_metric_and_option(level, nan_handling):
    y_num, r, grades = _data()
    y_bin = _binary(grades, level, y_num)
    ev = quiet(evaluate, y_num, r, ALL, relevance_level=level, nan_handling=nan_handling,
                conf_interval=True, n_resamples=200, random_state=7)
    assert ev.names == [m.name for m in ALL] and ev.metrics == ALL
    assert ev.scores.shape == (r.n_rows, len(ALL)) and not ev.scores.flags.writeable
    for j, m in enumerate(ALL):
        labels = y_num if m.info.labels == "graded" else y_bin
        np.testing.assert_array_equal(ev.scores[:, j], m.score(labels, r))
        expected = quiet(m.mean, labels, r, nan_handling=nan_handling, conf_interval=True,
                          n_resamples=200, random_state=7)
        # evaluate's means are sums over the defined scores (the partial sums that Dask merges),
        # Metric.mean's a nanmean: the same numbers, summed in an order that differs by NumPy
        # version (a last-bit difference with NumPy 1.24)
        np.testing.assert_allclose(ev.means[m.name], expected["score"], rtol=1e-14, atol=0)
        np.testing.assert_equal(ev.conf_intervals[m.name], expected["conf_interval"])
        assert ev.mean(m.name) == ev.means[m.name] or np.isnan(ev.means[m.name])
        n_nan = int(np.isnan(ev.scores[:, j]).sum())
        assert ev.n_undefined[m.name] == n_nan
        assert ev.n_used[m.name] == (r.n_rows - n_nan if nan_handling == "drop" else r.n_rows)


@settings(max_examples=30)
@given(seed=st.integers(0, 10**6), level=st.sampled_from([1, 2, 3, 0.5]), k=st.integers(1, 15))
def test_thresholding_is_trec_eval_l(seed, level, k):
    y_num, r, grades = _data(seed, n=20)
    ev = quiet(evaluate, y_num, r, [rk.Precision(k), rk.Recall(k), rk.NDCG(k)], relevance_level=level)
    y_bin = BinaryLabels.from_matrix(grades >= level)
    np.testing.assert_array_equal(ev.scores[:, 0], rk.Precision(k).score(y_bin, r))
    np.testing.assert_array_equal(ev.scores[:, 1], rk.Recall(k).score(y_bin, r))
    np.testing.assert_array_equal(ev.scores[:, 2], rk.NDCG(k).score(y_num, r))


def test_metric_names_dicts_and_columns():
    y_num, r, _ = _data()
    ev = quiet(evaluate, y_num, r, {"nDCG@10": "ndcg@10", "P@5": rk.Precision(5), "MAP": "map"})
    assert ev.names == ["nDCG@10", "P@5", "MAP"]
    assert ev.metrics == [rk.NDCG(10), rk.Precision(5), rk.AP()]
    np.testing.assert_array_equal(ev["P@5"], ev.scores[:, 1])
    ev = quiet(evaluate, y_num, r, ["ndcg@10", rk.Precision(5), "mrr@10"])
    assert ev.names == ["ndcg@10", "p@5", "mrr@10"]  # a name as given, an object by its .name
    with pytest.raises(KeyError, match="no metric column 'x'"):
        ev.mean("x")


def test_names_as_given_everywhere():
    # issue 33: a list names each column by the string the user passed (ranx keys so)
    y_num, r, _ = _data()
    given = ["map@50", "MRR@10", "nDCG@10", "P@5"]
    ev = evaluate(y_num, r, given, nan_handling="drop", conf_interval=True, n_resamples=50,
                  random_state=0)
    assert ev.names == given
    assert list(ev.means) == given and list(ev.conf_intervals) == given
    assert list(ev.n_used) == given and list(ev.n_undefined) == given
    canonical = evaluate(y_num, r, ["ap@50", "rr@10", "ndcg@10", "p@5"], nan_handling="drop",
                         conf_interval=True, n_resamples=50, random_state=0)
    for mine, theirs in zip(given, canonical.names):
        assert ev.mean(mine) == canonical.mean(theirs)
        assert ev.conf_intervals[mine] == canonical.conf_intervals[theirs]
        np.testing.assert_array_equal(ev[mine], canonical[theirs])
    assert list(ev.to_dict()["metrics"]) == given
    assert list(ev.to_pandas().columns) == given
    assert list(ev.summary().index) == given
    assert repr(ev).splitlines()[3].split()[0] == "map@50"


@pytest.mark.parametrize("metrics, exc, match", [
    (["ndgc@10"], ValueError, "unknown metric 'ndgc@10'; did you mean 'ndcg@10'"),
    (["p@10", rk.Precision(10)], ValueError, "two metrics have the column name 'p@10'"),
    (["map@10", "map@10"], ValueError, "two metrics have the column name 'map@10'"),
    (["MAP", "map"], None, None),  # two spellings, two columns
    ({"a": "p@1", "b": "p@1"}, None, None),
    ([], ValueError, "metrics is empty"),
    ([3], TypeError, "expected a Metric or a metric name"),
    (42, TypeError, "metrics must be a list"),
    ({1: "p@1"}, TypeError, "column names must be str"),
])
def test_bad_metrics(metrics, exc, match):
    y_num, r, _ = _data()
    if exc is None:
        assert quiet(evaluate, y_num, r, metrics).names == list(metrics)
        return
    with pytest.raises(exc, match=match):
        evaluate(y_num, r, metrics)


def test_bad_inputs():
    y_num, r, _ = _data()
    with pytest.raises(TypeError, match="y_true must be"):
        evaluate([[1]], r, ["p@1"])
    with pytest.raises(TypeError, match="needs metrics"):
        evaluate(y_num, r)
    with pytest.raises(ValueError, match="relevance_level must be a finite number > 0"):
        evaluate(y_num, r, ["p@1"], relevance_level=0)
    with pytest.raises(ValueError, match="nan_handling must be one of"):
        evaluate(y_num, r, ["p@1"], nan_handling="ignore")
    with pytest.raises(ValueError, match="n_resamples must be"):
        evaluate(y_num, r, ["p@1"], conf_interval=True, n_resamples=1)
    with pytest.raises(ValueError, match="label rows"):
        evaluate(y_num, Rankings.from_ranked_indices([[1], [2]]), ["ndcg@3"])


def test_undefined_warning_fires_exactly_when_it_should():
    y_num, r, _ = _data()
    with pytest.warns(UndefinedMetricWarning) as rec:
        evaluate(y_num, r, ["ndcg@10", "p@3", "hitrate@3"])
    assert len(rec) == 1  # once per call
    lines = str(rec[0].message).splitlines()
    assert [ln.split()[0] for ln in lines] == ["ndcg@10", "p@3", "hitrate@3"]
    assert "for 4 of 60 rankings" in lines[0]
    assert "exactly one relevant item" in lines[2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        evaluate(y_num, r, ["ndcg@10", "p@3"], nan_handling="drop")
        evaluate(y_num, r, ["ndcg@10", "p@3"], nan_handling="zerofill")
        # every ranking defined: no warning
        evaluate(NumericLabels.from_matrix([[0, 2, 1], [1, 0, 0]]),
                 Rankings.from_ranked_indices([[1, 2], [2, 0]]), ["p@3", "ndcg@2", "map"])


def test_trec_data_keeps_query_ids_and_tables(tmp_path):
    pytest.importorskip("pandas")
    from rankereval.io import read_trec

    qrels = tmp_path / "qrels"
    run = tmp_path / "run"
    qrels.write_text("q2 0 a 2\nq2 0 b 1\nq10 0 c 1\nq7 0 z 0\n")
    run.write_text("q2 Q0 b 1 3.0 t\nq2 Q0 a 2 2.0 t\nq10 Q0 a 1 1.0 t\nq10 Q0 c 2 0.5 t\nq7 Q0 a 1 1 t\n")
    data = read_trec(str(qrels), str(run), progress=False)
    ev = quiet(evaluate, data, ["ndcg@2", "p@1"], relevance_level=2)
    assert list(ev.query_ids) == list(data.query_ids)
    df = ev.to_pandas()
    assert df.index.name == "query" and list(df.index) == list(data.query_ids)
    np.testing.assert_array_equal(df["p@1"].to_numpy(), rk.Precision(1).score(
        BinaryLabels.from_matrix(data.numeric_labels.csr >= 2), data.rankings))
    summary = ev.summary()
    assert list(summary.index) == ["ndcg@2", "p@1"]
    assert summary.loc["p@1", "n_undefined"] == int(np.isnan(ev["p@1"]).sum())
    obj = json.loads(ev.to_json(per_query=True))
    assert obj["query_ids"] == [str(q) for q in data.query_ids]
    nan_rows = np.isnan(ev["p@1"])
    assert [v is None for v in obj["metrics"]["p@1"]["scores"]] == list(nan_rows)
    assert "Evaluation of 3 rankings" in repr(ev) and "undefined" in repr(ev)
    out = tmp_path / "ev.json"
    ev.to_json(out)
    assert json.loads(out.read_text())["metrics"]["ndcg@2"]["n_used"] == 3


@pytest.mark.parametrize("lookup", ["auto", "bitset", "search", "scan"])
def test_one_kernel_pass_for_all_metrics_matches_each_metric_alone(lookup):
    """evaluate looks each ranking up once for all metrics over the same labels (up to the
    largest cutoff) and reduces per metric: the same numbers as one metric per pass."""
    from rankereval.metrics._base import _forced_lookup

    y_num, r, grades = _data(3, n=200, n_items=40, width=25)
    y_bin = _binary(grades, 1, y_num)
    with _forced_lookup(lookup):
        ev = quiet(evaluate, y_num, r, ALL)
        for j, m in enumerate(ALL):
            np.testing.assert_array_equal(ev.scores[:, j], m.score(y_num if m.info.labels == "graded" else y_bin, r))
