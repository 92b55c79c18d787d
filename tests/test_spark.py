"""rankereval.spark on a real local SparkSession (local[2]; Python workers, no mocks).

Every result is compared with the in-memory path (rankereval.io.from_dataframes +
rankereval.evaluate(..., resampling='poisson')) on the same queries, for every registered
metric, on several partitionings (numbers of shuffle partitions, some of them empty).
Deselect with ``-m "not spark"``.
"""
import math
import os
import sys
import warnings

import numpy as np
import pytest

pyspark = pytest.importorskip("pyspark")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

import rankereval  # noqa: E402
from rankereval.io import from_dataframes  # noqa: E402
from helpers import all_metrics, assert_same_evaluation, item_input_metrics  # noqa: E402

pytestmark = pytest.mark.spark

B = 200


METRICS = all_metrics(partitioned=True)  # (the catalogue metrics: see helpers.all_metrics)


def make_frames(kind="str", seed=12, n=40):
    """Long-format labels and run (pandas): some queries without a relevant item, one only in
    the labels, one only in the run, ties in the scores."""
    rng = np.random.default_rng(seed)
    lab, run = [], []
    for q in range(n):
        qid = f"q{q:02d}" if kind == "str" else q * 1000 + 7
        items = rng.choice(30, size=12, replace=False)
        if q != n - 1:                                  # the last: labels only
            for i in items[: rng.integers(1, 12)]:
                run.append((qid, int(i), float(rng.integers(0, 6))))
        if q != n - 2:                                  # the one before: run only
            for i in items[rng.integers(0, 4): rng.integers(5, 12)]:
                lab.append((qid, int(i), int(rng.integers(0, 4)) if q % 7 else 0))
    return (pd.DataFrame(lab, columns=["query", "item", "label"]),
            pd.DataFrame(run, columns=["query", "item", "score"]))


def to_spark(spark, frame):
    """A Spark DataFrame of a pandas frame, through a Python list (no pandas conversion)."""
    from pyspark.sql import types as T

    kinds = {"i": T.LongType(), "f": T.DoubleType(), "O": T.StringType()}
    schema = T.StructType([T.StructField(c, kinds[frame[c].dtype.kind]) for c in frame.columns])
    rows = [tuple(v.item() if hasattr(v, "item") else v for v in row)
            for row in frame.itertuples(index=False, name=None)]
    return spark.createDataFrame(rows, schema)


def in_memory(labels, run, metrics=METRICS, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        return rankereval.evaluate(from_dataframes(labels, run), metrics, resampling="poisson",
                                   n_resamples=B, **options)


def on_spark(*args, **options):
    import rankereval.spark as rs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        return rs.evaluate(*args, n_resamples=B, **options)


def assert_same(got, want):
    """Means, counts and intervals bit for bit (``helpers.assert_same_evaluation``); the
    scores stay on the cluster."""
    assert got.scores is None
    assert_same_evaluation(got, want, scores=False)


@pytest.fixture(scope="module")
def frames(spark):
    labels, run = make_frames()
    return labels, run, to_spark(spark, labels), to_spark(spark, run)


@pytest.mark.parametrize("npartitions", [1, 3, 16])
def test_every_metric_as_in_memory(frames, npartitions):
    labels, run, sl, sr = frames
    want = in_memory(labels, run, conf_interval=True, random_state=5)
    got = on_spark(sl, sr, METRICS, conf_interval=True, random_state=5, npartitions=npartitions)
    assert_same(got, want)


@pytest.mark.parametrize("nan_handling", ["drop", "zerofill"])
def test_nan_handling_and_relevance_level(frames, nan_handling):
    labels, run, sl, sr = frames
    opts = dict(nan_handling=nan_handling, relevance_level=2, conf_interval=True, random_state=3)
    assert_same(on_spark(sl, sr, METRICS, npartitions=5, **opts), in_memory(labels, run, **opts))


def test_without_intervals_and_per_query_scores(frames):
    labels, run, sl, sr = frames
    names = ["ndcg@10", "ap", "p@3", "rr"]
    want = in_memory(labels, run, names)
    got = on_spark(sl, sr, names, npartitions=3)
    assert isinstance(got, rankereval.Evaluation)
    assert_same(got, want)
    table = got.cluster_scores.toPandas().set_index("query").sort_index()
    assert table.columns.tolist() == names
    ref = want.to_pandas().sort_index()
    assert table.index.tolist() == ref.index.tolist()
    np.testing.assert_allclose(table.to_numpy(), ref.to_numpy(), rtol=0, atol=1e-12)
    # the deprecated tuple form: the same Evaluation and the same scores, with a warning
    with pytest.warns(DeprecationWarning, match="Evaluation.cluster_scores") as record:
        old, scores = on_spark(sl, sr, names, return_scores=True, npartitions=3)
    assert record[0].filename == __file__
    assert_same(old, want)
    assert scores is old.cluster_scores


def test_integer_ids_ranks_and_binary_labels(spark):
    labels, run = make_frames("int", seed=4, n=30)
    run["rank"] = run.groupby("query")["score"].rank(method="first", ascending=False).astype(np.int64)
    run = run.drop(columns="score")
    names = ["ndcg@3", "r@10", "ap@10", "f1@3"]
    want = in_memory(labels, run, names, conf_interval=True, random_state=8)
    got = on_spark(to_spark(spark, labels), to_spark(spark, run), names, rank_col="rank",
                   conf_interval=True, random_state=8, npartitions=2)
    assert_same(got, want)
    # without a grade column every labels row is relevant
    binary = labels[labels["label"] > 0][["query", "item"]]
    want = in_memory(binary.assign(label=1), run, names)
    got = on_spark(to_spark(spark, binary), to_spark(spark, run), names, label_col=None, npartitions=3)
    assert_same(got, want)
    # grade_col, the former name of label_col: the same result, with a warning naming label_col
    with pytest.warns(DeprecationWarning, match="use label_col=") as record:
        old = on_spark(to_spark(spark, binary), to_spark(spark, run), names, grade_col=None,
                       npartitions=3)
    assert record[0].filename == __file__
    assert_same(old, want)


def test_nested_layout(spark, tmp_path):
    """One row per query with arrays (as MLlib reads them): the same numbers as long rows."""
    from pyspark.sql import types as T

    labels, run = make_frames("int", seed=9, n=50)
    run = run.sort_values(["query", "score", "item"], ascending=[True, False, False])
    want = in_memory(labels, run, METRICS, conf_interval=True, random_state=2)
    lab_rows = [(int(q), [int(i) for i in g["item"]], [float(x) for x in g["label"]])
                for q, g in labels.groupby("query")]
    # as trec_eval: ties in score by item id, descending
    run_rows = [(int(q), [int(i) for i in g["item"]]) for q, g in run.groupby("query")]
    sl = spark.createDataFrame(lab_rows, T.StructType([
        T.StructField("query", T.LongType()), T.StructField("item", T.ArrayType(T.LongType())),
        T.StructField("label", T.ArrayType(T.DoubleType()))]))
    sr = spark.createDataFrame(run_rows, T.StructType([
        T.StructField("query", T.LongType()), T.StructField("item", T.ArrayType(T.IntegerType()))]))
    # 64-bit label ids with 32-bit run ids, then 32-bit ids on both sides (shuffled as such)
    narrow = sl.withColumn("item", sl["item"].cast("array<int>"))
    for npartitions, labels_df in ((1, sl), (4, narrow)):
        got = on_spark(labels_df, sr, METRICS, conf_interval=True, random_state=2, npartitions=npartitions)
        assert_same(got, want)


def test_retried_task_gives_the_same_result(frames, tmp_path, monkeypatch):
    """The first attempt of every task kills its Python worker; Spark reruns the tasks."""
    import rankereval.spark._core as core

    labels, run, sl, sr = frames
    names = ["ndcg@10", "ap", "r@3"]
    want = in_memory(labels, run, names, conf_interval=True, random_state=11)
    monkeypatch.setattr(core, "_TEST_FAIL_ONCE", str(tmp_path))
    got = on_spark(sl, sr, names, conf_interval=True, random_state=11, npartitions=3)
    assert len(os.listdir(tmp_path)) == 3           # every partition failed once
    assert_same(got, want)


def test_empty_inputs(spark):
    labels, run = make_frames()
    sl, sr = to_spark(spark, labels), to_spark(spark, run)
    got = on_spark(sl.limit(0), sr, ["ap", "p@3"], conf_interval=True, random_state=0)
    assert got.n_rankings == 0 and math.isnan(got.means["ap"])


# -- bad input: a clear error naming the column ------------------------------------------------

def test_duplicate_items_null_grades_and_mixed_ids(spark):
    import rankereval.spark as rs

    labels, run = make_frames()
    dup = pd.concat([run, run.iloc[[3]]])
    with pytest.raises(rs.SparkInputError, match=r"duplicate item \d+ for query"):
        rs.evaluate(to_spark(spark, labels), to_spark(spark, dup), ["ap"], npartitions=2)
    dup = pd.concat([labels, labels.iloc[[0]]])
    with pytest.raises(ValueError, match=r"duplicate judgement for query"):
        rs.evaluate(to_spark(spark, dup), to_spark(spark, run), ["ap"], npartitions=2)
    nulls = labels.astype({"label": float})
    nulls.loc[5, "label"] = np.nan
    sl = to_spark(spark, nulls).replace(float("nan"), None)
    with pytest.raises(ValueError, match=r"labels_df column 'label' \(label_col\) has a null grade \(query 'q"):
        rs.evaluate(sl, to_spark(spark, run), ["ap"])
    ints = labels.assign(query=labels["query"].str[1:].astype(np.int64))
    with pytest.raises(TypeError, match=r"query column 'query' holds ints in labels_df .* strs in run_df"):
        rs.evaluate(to_spark(spark, ints), to_spark(spark, run), ["ap"])
    with pytest.raises(TypeError, match=r"labels_df column 'item' has type double"):
        rs.evaluate(to_spark(spark, labels.astype({"item": float})), to_spark(spark, run), ["ap"])
    with pytest.raises(ValueError, match=r"run_df has no column 'score'"):
        rs.evaluate(to_spark(spark, labels), to_spark(spark, run).drop("score"), ["ap"], score_col="score")


def test_nested_bad_input(spark):
    import rankereval.spark as rs
    from pyspark.sql import types as T

    lab_schema = T.StructType([T.StructField("query", T.LongType()),
                               T.StructField("item", T.ArrayType(T.LongType())),
                               T.StructField("label", T.ArrayType(T.DoubleType()))])
    run_schema = T.StructType([T.StructField("query", T.LongType()),
                               T.StructField("item", T.ArrayType(T.LongType()))])
    run = spark.createDataFrame([(1, [3, 2, 1]), (2, [4, 5])], run_schema)
    lab = spark.createDataFrame([(1, [1, 2], [1.0, None]), (2, [5], [2.0])], lab_schema)
    with pytest.raises(ValueError, match=r"labels_df column 'label' has a null grade \(query 1\)"):
        rs.evaluate(lab, run, ["ndcg@3"])
    lab = spark.createDataFrame([(1, [1, 2], [1.0, 1.0]), (1, [5], [2.0])], lab_schema)
    with pytest.raises(ValueError, match=r"labels_df column 'query': query 1 has two rows"):
        rs.evaluate(lab, run, ["ndcg@3"])
    lab = spark.createDataFrame([(1, [1, 1], [1.0, 1.0])], lab_schema)
    with pytest.raises(ValueError, match=r"duplicate label item 1"):
        rs.evaluate(lab, run, ["ndcg@3"])


def test_not_imported_by_rankereval():
    import subprocess

    code = "import sys, rankereval; print('pyspark' in sys.modules, 'rankereval.spark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- compare ----------------------------------------------------------------------------------

CMP_METRICS = ["ap", "ndcg@10", "p@3", "rr@10", "gmap", "gauc"]   # gauc: a weighted mean


@pytest.fixture(scope="module")
def three_runs(spark):
    labels, run = make_frames(seed=21, n=50)
    rng = np.random.default_rng(1)
    runs = {"a": run}
    for name in ("b", "c"):
        other = run.copy()
        other["score"] = rng.permutation(other["score"].to_numpy()) + rng.integers(0, 2, len(other))
        runs[name] = other
    return labels, runs, to_spark(spark, labels), {k: to_spark(spark, v) for k, v in runs.items()}


def in_memory_compare(labels, runs, **kw):
    from rankereval import compare

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        kw.setdefault("nan_handling", "drop")   # explicit: no FutureWarning of the default
        return compare(None, {k: from_dataframes(labels, v) for k, v in runs.items()}, CMP_METRICS, **kw)


def spark_compare(sl, sruns, **kw):
    import rankereval.spark as rs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        kw.setdefault("nan_handling", "drop")   # explicit: no FutureWarning of the default
        return rs.compare(sl, sruns, CMP_METRICS, **kw)


def assert_same_comparison(got, want):
    g, w = got.summary(), want.summary()
    for col in ("mean", "baseline_mean", "diff", "ci_low", "ci_high", "effect_size", "p_value", "p_corrected"):
        np.testing.assert_allclose(g[col], w[col], rtol=1e-10, atol=1e-13, err_msg=col)
    for col in ("metric", "run", "baseline", "significant", "wins", "ties", "losses"):
        assert g[col].tolist() == w[col].tolist(), col
    assert got.n_queries.tolist() == want.n_queries.tolist()


@pytest.mark.parametrize("baseline,npartitions,nan_handling", [("a", 1, "drop"), (None, 5, "zerofill"),
                                                               ("b", 3, "propagate")])
def test_compare_t_test_as_in_memory(three_runs, baseline, npartitions, nan_handling):
    labels, runs, sl, sruns = three_runs
    want = in_memory_compare(labels, runs, baseline=baseline, nan_handling=nan_handling)
    got = spark_compare(sl, sruns, baseline=baseline, npartitions=npartitions, nan_handling=nan_handling)
    assert_same_comparison(got, want)
    assert got.scores is None and got.report["n_queries"] == want.report["n_queries"]


def test_compare_grade_col_is_the_old_spelling_of_label_col(three_runs):
    labels, runs, sl, sruns = three_runs
    want = spark_compare(sl, sruns, baseline="a", npartitions=2, label_col="label")
    with pytest.warns(DeprecationWarning, match="use label_col=") as record:
        got = spark_compare(sl, sruns, baseline="a", npartitions=2, grade_col="label")
    assert record[0].filename == __file__
    assert_same_comparison(got, want)


@pytest.mark.parametrize("test", ["permutation", "bootstrap"])
def test_compare_resampling_tests_as_the_sums_of_one_block(three_runs, test):
    """Spark's partitions merge to the sums of all queries at once (keyed by query id), which
    tests/test_paired_sums.py checks against literal references."""
    from rankereval.stats import _paired_sums
    from rankereval.stats._compare_runs import _finish
    from rankereval.stats._alignment import _resolve_metrics

    labels, runs, sl, sruns = three_runs
    B = 500
    got = spark_compare(sl, sruns, baseline="a", test=test, n_resamples=B, random_state=4, npartitions=4)
    names, objs = _resolve_metrics(CMP_METRICS)
    evs = [in_memory(labels, r, CMP_METRICS) for r in runs.values()]
    ids = evs[0].query_ids
    assert all(list(e.query_ids) == list(ids) for e in evs)
    evaluated = [rankereval.evaluate(from_dataframes(labels, r), CMP_METRICS, nan_handling="drop")
                 for r in runs.values()]
    scores = np.stack([np.asarray(e.scores) for e in evaluated], axis=2)
    rng = np.random.default_rng(4)
    seeds = tuple(int(rng.integers(0, 2 ** 64, dtype=np.uint64)) for _ in range(2))
    ci_b = B if test == "bootstrap" else min(B, 1000)
    total = _paired_sums.partials(scores, np.asarray(ids), "drop", objs, list(runs), "a", test, seeds, B, ci_b,
                                  weights=evaluated[0]._weights)   # GAUC's query weights, from the labels
    weighted = np.array([n == "gauc" for n in names])
    _, mean, sd, p, low, high = _paired_sums.summarise(total, test, "two-sided", 0.05, B, np.repeat(weighted, 2))
    means = _paired_sums.weighted_run_means(total, total["score_sums"].to_float() / total["counts"][:, None],
                                            weighted)
    want = _finish(names, objs, list(runs), "a", [(1, 0), (2, 0)], test, "holm", 0.05, B, "two-sided", "drop",
                   ci_b, np.zeros(len(names), bool), np.array([n == "gmap" for n in names]),
                   means, total["counts"], mean, sd, low, high, p,
                   (total["better"], total["worse"], total["ties"]), None, None, None, {})
    assert_same_comparison(got, want)


def test_compare_refuses_tukey_and_names_missing_queries(three_runs):
    import rankereval.spark as rs

    labels, runs, sl, sruns = three_runs
    with pytest.raises(ValueError, match="test='tukey' is not available on Spark"):
        rs.compare(sl, sruns, ["ap"], test="tukey")
    short = dict(sruns, c=sruns["c"].filter("query != 'q03'"))
    with pytest.raises(ValueError, match=r"'c' lacks q03"):
        rs.compare(sl, short, ["ap"])
    got = spark_compare(sl, short, queries="intersection", npartitions=2)
    want = in_memory_compare(labels, dict(runs, c=runs["c"][runs["c"]["query"] != "q03"]), queries="intersection")
    assert_same_comparison(got, want)


def test_ties_as_in_memory(frames):
    """ties='expected' on the long layout: each task reads its run with ties kept, as
    rankereval.evaluate does on the whole run."""
    from rankereval.metrics._ties import refusal

    labels, run, sl, sr = frames
    metrics = {name: m for name, m in METRICS.items() if refusal(m) is None}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        want = rankereval.evaluate(from_dataframes(labels, run, ties="keep"), metrics, resampling="poisson",
                                   n_resamples=B, conf_interval=True, random_state=2, ties="expected")
    assert want.tie_report.tied_positions > 0  # the frames hold ties
    assert_same(on_spark(sl, sr, metrics, conf_interval=True, random_state=2, npartitions=3, ties="expected"), want)


def test_no_pandas_future_warning_from_our_calls(spark):
    # mapInArrow goes through pyspark's pandas_udf, whose pandas version check warns under
    # pandas 3 although the tasks use no pandas (issue 44): silenced in rankereval.spark
    import rankereval.spark as rs

    labels, run = make_frames(n=6)
    sl, sr = to_spark(spark, labels), to_spark(spark, run)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        rs.evaluate(sl, sr, ["ndcg@3"], nan_handling="zerofill")
        rs.compare(sl, {"a": sr, "b": sr}, ["ndcg@3"], nan_handling="zerofill")
    pandas_notes = [str(w.message) for w in rec if "support pandas" in str(w.message)]
    assert not pandas_notes, pandas_notes


def test_local_master_whose_workers_cannot_import_rankereval(spark, monkeypatch):
    # a virtual environment with PYSPARK_PYTHON unset: Spark's python3 is another Python
    import rankereval.spark as rs
    from rankereval.spark import _core

    labels, run = make_frames(n=4)
    sl, sr = to_spark(spark, labels), to_spark(spark, run)
    monkeypatch.setattr(spark.sparkContext, "pythonExec", os.path.join(os.sep, "no", "such", "python3"))
    monkeypatch.setattr(_core, "_WORKER_PYTHONS", {})
    with pytest.raises(RuntimeError, match="starts its Python workers with .*cannot import rankereval.*"
                                           "Set PYSPARK_PYTHON"):
        rs.evaluate(sl, sr, ["ndcg@3"])


def test_item_inputs_follow_each_partitions_numbering(frames):
    """Each Spark partition of the long layout numbers its items apart; the item-indexed
    inputs of Novelty, ARP, TailShare and ILD follow it, as in memory (bit for bit)."""
    labels, run, sl, sr = frames
    metrics = item_input_metrics(30, seed=5)
    opts = dict(conf_interval=True, random_state=6, nan_handling="drop")
    assert_same(on_spark(sl, sr, metrics, npartitions=4, **opts), in_memory(labels, run, metrics, **opts))
