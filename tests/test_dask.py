"""rankereval.dask on a real distributed.LocalCluster (2 worker processes, no mocks).

Every result is compared with the in-memory path (rankereval.io.from_dataframes +
rankereval.evaluate(..., resampling='poisson')) on the same queries, for every registered
metric and option, on several partitionings including uneven and empty partitions.
"""
import concurrent.futures
import os
import signal
import time
import warnings

import numpy as np
import pytest

dask = pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")
import dask.array as da  # noqa: E402
import dask.dataframe as dd  # noqa: E402

import rankereval  # noqa: E402
import rankereval.dask as rd  # noqa: E402
from rankereval.io import from_dataframes  # noqa: E402
from helpers import all_metrics, assert_same_evaluation, item_input_metrics  # noqa: E402

B = 200


@pytest.fixture(scope="module")
def client(dask_client):
    with dask.config.set({"dataframe.convert-string": False}):
        yield dask_client


METRICS = all_metrics(partitioned=True)  # (the catalogue metrics: see helpers.all_metrics)


@pytest.fixture(scope="module")
def frames():
    """Long-format labels and run: 40 queries; some without a relevant item, one only in the
    labels, one only in the run, ties in the scores."""
    rng = np.random.default_rng(12)
    lab, run = [], []
    for q in range(40):
        qid = f"q{q:02d}"
        items = rng.choice(30, size=12, replace=False)
        if q != 39:                                 # q39: labels only
            for i in items[: rng.integers(1, 12)]:
                run.append((qid, int(i), float(rng.integers(0, 6))))
        if q != 38:                                 # q38: run only
            for i in items[rng.integers(0, 4): rng.integers(5, 12)]:
                lab.append((qid, int(i), int(rng.integers(0, 4)) if q % 7 else 0))
    labels = pd.DataFrame(lab, columns=["query", "item", "label"])
    run = pd.DataFrame(run, columns=["query", "item", "score"])
    return labels, run


def partitioned(labels, run, assign, npartitions):
    """Dask frames whose partition assign(query) holds each query (empty ones allowed)."""
    meta_l, meta_r = labels.iloc[:0], run.iloc[:0]
    lp = [labels[labels["query"].map(assign) == p] for p in range(npartitions)]
    rp = [run[run["query"].map(assign) == p] for p in range(npartitions)]
    return (dd.from_delayed([dask.delayed(x) for x in lp], meta=meta_l, verify_meta=False),
            dd.from_delayed([dask.delayed(x) for x in rp], meta=meta_r, verify_meta=False))


def in_memory(labels, run, **options):
    data = from_dataframes(labels, run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        return rankereval.evaluate(data, METRICS, resampling="poisson", n_resamples=B, **options)


def assert_same(got, want, by_query=True):
    """Means, counts and intervals bit for bit (``helpers.assert_same_evaluation``); with
    ``by_query`` the per-query scores too (to 1e-12), matched by query id (partitions reorder
    queries)."""
    assert_same_evaluation(got, want, scores=False)
    if by_query and got.scores is not None:
        g = pd.DataFrame(np.asarray(got.scores), index=got.query_ids, columns=got.names).sort_index()
        w = pd.DataFrame(np.asarray(want.scores), index=want.query_ids, columns=want.names).sort_index()
        assert list(g.index) == list(w.index) and list(g.columns) == list(w.columns)
        # per query to 1e-12, not bit for bit: a metric's table of weights spans the widest
        # ranking of its partition, and NumPy 1.24's vectorised power (RBP's p ** i) can give
        # the last bit of an entry differently for another table length (the oldest
        # dependencies of .ci/run); the means above are bit for bit
        np.testing.assert_allclose(g.to_numpy(), w.to_numpy(), rtol=0, atol=1e-12)


def compute(lazy, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        return lazy.compute(**kw)


PARTITIONINGS = {
    "one": (lambda q: 0, 1),
    "uneven-with-empty": (lambda q: 0 if q < "q05" else (3 if q < "q30" else 2), 5),
    "scattered": (lambda q: int(q[1:]) * 7 % 6, 6),
}


@pytest.mark.parametrize("partitioning", list(PARTITIONINGS))
def test_dataframes_equal_in_memory(client, frames, partitioning):
    labels, run = frames
    assign, n = PARTITIONINGS[partitioning]
    dl, dr = partitioned(labels, run, assign, n)
    opts = dict(conf_interval=True, random_state=3, nan_handling="drop")
    got = compute(rd.evaluate(dl, dr, METRICS, n_resamples=B, **opts), scores=True)
    assert_same(got, in_memory(labels, run, **opts))


@pytest.mark.parametrize("opts", [
    dict(conf_interval=True, random_state=5, nan_handling="zerofill", relevance_level=2),
    dict(conf_interval=True, random_state=5, nan_handling="propagate"),
    dict(conf_interval=False, nan_handling="drop", relevance_level=3),
])
def test_options_equal_in_memory(client, frames, opts):
    labels, run = frames
    dl, dr = partitioned(labels, run, *PARTITIONINGS["uneven-with-empty"])
    got = compute(rd.evaluate(dl, dr, METRICS, n_resamples=B, **opts))
    assert got.scores is None
    with pytest.raises(ValueError, match="not kept: on a cluster"):
        got["ap"]
    assert_same(got, in_memory(labels, run, **opts))


def test_propagate_warns_as_in_memory(client, frames):
    labels, run = frames
    dl, dr = partitioned(labels, run, *PARTITIONINGS["scattered"])
    with pytest.warns(rankereval.UndefinedMetricWarning, match="ndcg@3 is undefined"):
        rd.evaluate(dl, dr, ["ndcg@3", "p@3"]).compute()


def test_repartition_by_query_and_distributed_scores(client, frames):
    labels, run = frames
    dl = dd.from_pandas(labels, npartitions=3, sort=False)
    dr = dd.from_pandas(run, npartitions=2, sort=False)
    with pytest.raises(ValueError, match="3 partitions but run has 2"):
        rd.evaluate(dl, dr, ["ap"])
    sl, sr = rd.repartition_by_query(dl, dr, npartitions=4)
    lazy = rd.evaluate(sl, sr, ["ap", "ndcg@10"], conf_interval=True, random_state=1,
                       n_resamples=B, nan_handling="drop")
    want = in_memory(labels, run, conf_interval=True, random_state=1, nan_handling="drop")
    got = compute(lazy)
    for name in ("ap", "ndcg@10"):
        assert got.means[name] == want.means[name]                  # exact sums: bit for bit
        assert got.conf_intervals[name] == want.conf_intervals[name]
    per_query = lazy.scores.compute().sort_index()
    ref = want.to_pandas()[["ap", "ndcg@10"]].sort_index()
    np.testing.assert_allclose(per_query.to_numpy(), ref.to_numpy(), rtol=0, atol=1e-12)
    assert list(per_query.index) == list(ref.index)


def test_arrays_equal_in_memory(client):
    rng = np.random.default_rng(4)
    n, k, m = 50, 12, 6
    ranks = np.array([rng.choice(40, size=k, replace=False) for _ in range(n)])
    ranks[rng.random((n, k)) < 0.1] = -1
    ranks = np.where(np.cumsum(ranks == -1, axis=1) > 0, -1, ranks)       # pads at the end
    ranks[:, 0] = np.abs(ranks[:, 0])
    lab = np.full((n, m), -1)
    grades = np.zeros((n, m))
    for i in range(n):
        c = rng.integers(0, m + 1)
        lab[i, :c] = rng.choice(40, size=c, replace=False)
        grades[i, :c] = rng.integers(1, 4, size=c)
    from rankereval import NumericLabels
    import scipy.sparse as sp

    rows = np.repeat(np.arange(n), (lab >= 0).sum(1))
    numeric = NumericLabels.from_matrix(sp.csr_matrix((grades[lab >= 0], (rows, lab[lab >= 0])), shape=(n, 40)))
    numeric = numeric.with_judged(numeric)  # from_arrays: every listed item is judged
    y_pred = rankereval.Rankings.from_ranked_indices(ranks, pad=-1)
    chunks = (7, 0, 20, 1, 22)
    for graded in (False, True):
        opts = dict(conf_interval=True, random_state=9, nan_handling="zerofill", n_resamples=B)
        if graded:
            data = rd.from_arrays(da.from_array(lab, chunks=(chunks, m)), da.from_array(ranks, chunks=(chunks, 4)),
                                  grades=da.from_array(grades, chunks=(chunks, m)))
            want = rankereval.evaluate(numeric, y_pred, METRICS, resampling="poisson", **opts)
        else:
            data = rd.from_arrays(da.from_array(lab, chunks=(chunks, m)), da.from_array(ranks, chunks=(chunks, k)))
            binary = rankereval.BinaryLabels.from_positive_indices([r[r >= 0] for r in lab])
            binary = binary.with_judged(binary)
            metrics = {k_: v for k_, v in METRICS.items() if v.info.labels == "binary"}
            want = rankereval.evaluate(binary, y_pred, metrics, resampling="poisson", **opts)
        got = compute(rd.evaluate(data, metrics=METRICS if graded else metrics, **opts), scores=True)
        assert_same(got, want)
        assert list(got.query_ids) == list(range(n))


def write_parquet(labels, run, tmp, nested, assign, n):
    import pyarrow as pa
    import pyarrow.parquet as pq

    for side in ("labels", "run"):
        os.makedirs(tmp / side)
    for p in range(n):
        lp = labels[labels["query"].map(assign) == p]
        rp = run[run["query"].map(assign) == p]
        if nested:
            rp = rp.sort_values(["query", "score", "item"], ascending=[True, False, True], kind="stable")
            rows_r = rp.groupby("query", sort=True)["item"].apply(list)
            rows_l = lp.groupby("query", sort=True).agg({"item": list, "label": list})
            pq.write_table(pa.table({"query": list(rows_r.index),
                                     "item": pa.array(list(rows_r), pa.list_(pa.int32()))}),
                           tmp / "run" / f"p{p}.parquet")
            pq.write_table(pa.table({"query": list(rows_l.index),
                                     "item": pa.array(list(rows_l["item"]), pa.list_(pa.int32())),
                                     "label": pa.array(list(rows_l["label"]), pa.list_(pa.float64()))}),
                           tmp / "labels" / f"p{p}.parquet")
        else:
            pq.write_table(pa.Table.from_pandas(lp, preserve_index=False), tmp / "labels" / f"p{p}.parquet")
            pq.write_table(pa.Table.from_pandas(rp, preserve_index=False), tmp / "run" / f"p{p}.parquet")


@pytest.mark.parametrize("nested", [False, True], ids=["long", "nested"])
def test_read_parquet_equals_in_memory(client, frames, tmp_path, nested):
    labels, run = frames
    write_parquet(labels, run, tmp_path, nested, *PARTITIONINGS["uneven-with-empty"])
    data = rd.read_parquet(tmp_path / "labels", tmp_path / "run")
    assert data.npartitions == 5
    opts = dict(conf_interval=True, random_state=6, nan_handling="drop")
    lazy = rd.evaluate(data, metrics=METRICS, n_resamples=B, **opts)
    got = compute(lazy, scores=True)
    # the one-task-per-partition graph (without scores) and the load -> score graph agree
    assert_same(compute(lazy), got, by_query=False)
    if nested:
        # the nested layout ranks by (score desc, item asc): tie_break="docid" on the long frames
        data_mem = from_dataframes(labels, run, tie_break="docid")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
            want = rankereval.evaluate(data_mem, METRICS, resampling="poisson", n_resamples=B, **opts)
        assert_same(got, want)
    else:
        assert_same(got, in_memory(labels, run, **opts))


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------

def test_query_split_across_partitions_is_named(client, frames):
    labels, run = frames
    dl, dr = partitioned(labels, run, lambda q: 2 if q == "q07" else 0, 3)
    dr = dd.from_delayed([dask.delayed(run[run["query"] != "q07"]),
                          dask.delayed(run[run["query"] == "q07"].iloc[:1]),
                          dask.delayed(run[run["query"] == "q07"].iloc[1:])], meta=run.iloc[:0])
    dl = dd.from_delayed([dask.delayed(labels[labels["query"] != "q07"]),
                          dask.delayed(labels[labels["query"] == "q07"]),
                          dask.delayed(labels[labels["query"] == "q07"])], meta=labels.iloc[:0])
    with pytest.raises(ValueError, match=r"query id 'q07'\) is in partitions 1 and 2"):
        rd.evaluate(dl, dr, ["ap"]).compute()


def test_duplicate_item_is_named_with_its_partition(client, frames):
    labels, run = frames
    bad = pd.concat([run, run[run["query"] == "q11"].iloc[:1]], ignore_index=True)
    dl, dr = partitioned(labels, bad, lambda q: 1 if q >= "q10" else 0, 2)
    with pytest.raises(ValueError, match=r"partition 1: .*duplicate"):
        rd.evaluate(dl, dr, ["ap"]).compute()


def test_mixed_id_types_are_refused(client, frames):
    labels, run = frames
    mixed = run.astype({"query": object}).copy()
    mixed.loc[mixed["query"] == "q12", "query"] = 12
    dl, dr = partitioned(labels, mixed, lambda q: 1 if str(q) >= "q10" or q == 12 else 0, 2)
    with pytest.raises(ValueError, match=r"partition 1: run query ids mix integers and strings"):
        rd.evaluate(dl, dr, ["ap"]).compute()
    # one type per partition, but not the same in all
    lab_i = labels[labels["query"] == "q03"].assign(query=3)
    run_i = run[run["query"] == "q03"].assign(query=3)
    lab_s, run_s = labels[labels["query"] == "q04"], run[run["query"] == "q04"]
    dl = dd.from_delayed([dask.delayed(lab_i), dask.delayed(lab_s)], meta=lab_s.iloc[:0], verify_meta=False)
    dr = dd.from_delayed([dask.delayed(run_i), dask.delayed(run_s)], meta=run_s.iloc[:0], verify_meta=False)
    with pytest.raises(ValueError, match=r"query ids are ints in partition 0 but strs in partition 1"):
        rd.evaluate(dl, dr, ["ap"]).compute()


def test_nested_parquet_errors_name_the_partition(client, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(root, run_parts, label_parts):
        for side, parts in (("run", run_parts), ("labels", label_parts)):
            os.makedirs(root / side)
            for p, (queries, items) in enumerate(parts):
                pq.write_table(pa.table({"query": queries, "item": pa.array(items, pa.list_(pa.int32()))}),
                               root / side / f"part-{p}.parquet")

    # query 5 in both file pairs
    write(tmp_path / "a", [([1, 5], [[1, 2], [3]]), ([5, 7], [[2], [4, 1]])],
          [([1, 5], [[1], [3]]), ([5, 7], [[2], [4]])])
    with pytest.raises(ValueError, match=r"query id 5\) is in partitions 0 and 1"):
        rd.evaluate(rd.read_parquet(tmp_path / "a" / "labels", tmp_path / "a" / "run"), ["ap"]).compute()
    # query 3 twice in one run file
    write(tmp_path / "b", [([3, 3], [[1], [2]])], [([3], [[1]])])
    with pytest.raises(ValueError, match=r"partition 0: query 3 has two rows in the run file"):
        rd.evaluate(rd.read_parquet(tmp_path / "b" / "labels", tmp_path / "b" / "run"), ["ap"]).compute()
    # a duplicate item within a query's labels
    write(tmp_path / "c", [([3], [[1, 2]])], [([3], [[2, 2]])])
    with pytest.raises(ValueError, match=r"partition 0 .*duplicate label item 2"):
        rd.evaluate(rd.read_parquet(tmp_path / "c" / "labels", tmp_path / "c" / "run"), ["ap"]).compute()
    with pytest.raises(ValueError, match="2 Parquet files but run_path has 1"):
        rd.read_parquet(tmp_path / "a" / "labels", tmp_path / "b" / "run")


def test_nested_parquet_binary_labels_sorted_or_not(client, tmp_path):
    """Label lists without grades: sorted ones take the one-pass copy, unsorted ones the
    general path; both give the in-memory numbers. The same files read with other options
    in the same graph are other tasks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(5)
    queries = np.arange(60, dtype=np.int64) * 3
    run = [list(rng.choice(40, size=int(rng.integers(1, 12)), replace=False)) for _ in queries]
    lab = [sorted(rng.choice(40, size=int(rng.integers(0, 6)), replace=False).tolist()) for _ in queries]
    shuffled = [list(rng.permutation(x)) for x in lab]
    for name, lists in (("sorted", lab), ("unsorted", shuffled)):
        for side, col in (("run", run), ("labels", lists)):
            os.makedirs(tmp_path / name / side)
            for p, rows in enumerate((slice(0, 25), slice(25, 60))):
                pq.write_table(pa.table({"query": queries[rows], "item": pa.array(col[rows], pa.list_(pa.int32()))}),
                               tmp_path / name / side / f"part-{p}.parquet")
    y_true = rankereval.BinaryLabels.from_positive_indices(lab)
    y_true = y_true.with_judged(y_true)
    metrics = {k: v for k, v in METRICS.items() if v.info.labels == "binary"}
    opts = dict(conf_interval=True, random_state=3, n_resamples=B, nan_handling="zerofill")
    want = rankereval.evaluate(y_true, rankereval.Rankings.from_ranked_indices(run), metrics,
                               resampling="poisson", query_ids=queries, **opts)
    lazy = {name: rd.evaluate(rd.read_parquet(tmp_path / name / "labels", tmp_path / name / "run"), metrics, **opts)
            for name in ("sorted", "unsorted")}
    for name, got in lazy.items():
        assert_same(compute(got), want, by_query=False)
        assert_same(compute(got, scores=True), want)
    # label_col names a column the files lack: all listed items relevant, as without it;
    # query_col names one they lack: an error naming the partition, not a stale result
    root = tmp_path / "sorted"
    other = rd.evaluate(rd.read_parquet(root / "labels", root / "run", label_col="grade"), metrics, **opts)
    missing = rd.evaluate(rd.read_parquet(root / "labels", root / "run", query_col="user"), metrics, **opts)
    assert other._root.key != lazy["sorted"]._root.key
    assert_same(compute(other), want, by_query=False)
    # (every partition lacks it: whichever fails first on the workers is named, with its files)
    with pytest.raises(ValueError, match=r"partition (\d+) \(.*part-\1\.parquet.*user"):
        compute(missing)


def test_bad_arguments(client, frames):
    labels, run = frames
    with pytest.raises(TypeError, match="labels must be a dask DataFrame"):
        rd.evaluate(labels, run, ["ap"])
    dl, dr = partitioned(labels, run, lambda q: 0, 1)
    with pytest.raises(ValueError, match="n_resamples must be"):
        rd.evaluate(dl, dr, ["ap"], conf_interval=True, n_resamples=1)
    with pytest.raises(ValueError, match="unknown metric|not a known|valid"):
        rd.evaluate(dl, dr, ["nope@3"])
    for name in ("coverageerror", "labelrankingloss@5"):  # the catalogue size: not shared by partitions
        with pytest.raises(ValueError, match="number of items of the catalogue, which the partitions of Dask"):
            rd.evaluate(dl, dr, [name])
    a = da.zeros((10, 3), chunks=(5, 3), dtype=int)
    with pytest.raises(ValueError, match="row chunks"):
        rd.from_arrays(a, da.zeros((10, 3), chunks=(4, 3), dtype=int))


def test_import_rankereval_does_not_import_dask():
    import subprocess
    import sys

    code = ("import sys, rankereval, rankereval.io, rankereval.bootstrap; "
            "rankereval.evaluate; bad = [m for m in ('dask', 'distributed', 'pandas', 'pyarrow') "
            "if m in sys.modules]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_benchmark_data_and_in_memory_path_agree_with_read_parquet(client, tmp_path):
    """benchmarks/make_dask_data.py writes what read_parquet reads, and bench_dask's
    in-memory path (public API on the same files) gives the same means and intervals."""
    import importlib.util

    bench = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
    if not os.path.exists(os.path.join(bench, "make_dask_data.py")):
        pytest.skip("benchmarks/ not shipped (tests run from outside the checkout)")
    mods = {}
    for name in ("make_dask_data", "bench_dask"):
        spec = importlib.util.spec_from_file_location(f"rankereval_{name}", os.path.join(bench, f"{name}.py"))
        mods[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mods[name])
    mods["make_dask_data"].write(str(tmp_path), n_users=700, n_items=5000, k=20, users_per_file=300, seed=1)
    mem = mods["bench_dask"].in_memory(str(tmp_path), None, 100)
    data = rd.read_parquet(tmp_path / "labels", tmp_path / "run")
    assert data.npartitions == 3
    got = rd.evaluate(data, metrics=mods["bench_dask"].METRICS, conf_interval=True, n_resamples=100,
                      random_state=0).compute()
    assert got.n_rankings == mem["n_users"] == 700
    for name in got.names:
        assert got.means[name] == pytest.approx(mem["means"][name], abs=1e-12)
        assert got.conf_intervals[name] == pytest.approx(tuple(mem["conf_intervals"][name]), abs=1e-12)


def test_worker_killed_mid_computation_does_not_change_the_result(client):
    rng = np.random.default_rng(2)
    n, k = 4000, 10
    ranks = np.argsort(rng.random((n, 50)), axis=1)[:, :k]
    lab = np.argsort(rng.random((n, 50)), axis=1)[:, :3]
    lab[rng.random(n) < 0.2] = -1
    opts = dict(conf_interval=True, random_state=1, n_resamples=3000, nan_handling="drop")
    metrics = ["ndcg@5", "ap", "rr"]
    want = rankereval.evaluate(rankereval.BinaryLabels.from_positive_indices([r[r >= 0] for r in lab]),
                               rankereval.Rankings.from_ranked_indices(ranks), metrics,
                               resampling="poisson", **opts)
    # 16 partitions: the first results are held by the workers long before the last are done
    lazy = rd.evaluate(da.from_array(lab, chunks=(250, 3)), da.from_array(ranks, chunks=(250, k)), metrics, **opts)
    pids = client.run(os.getpid)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        future = pool.submit(lazy.compute)
        victim, deadline = None, time.monotonic() + 60
        while victim is None and time.monotonic() < deadline:
            held = client.has_what()
            victim = next((w for w, keys in held.items() if any("partials" in str(key) for key in keys)), None)
            time.sleep(0.01)
        assert victim is not None and not future.done(), "the computation ended before a worker could be killed"
        os.kill(pids[victim], signal.SIGKILL)
        got = future.result(timeout=120)
    assert_same(got, want, by_query=False)


def test_ir_measures_names_and_adjusted_metrics_equal_in_memory(client, frames):
    # rel= and judged_only (Adjusted) are scored per partition as in memory, keyed as written
    labels, run = frames
    names = ["P(rel=2)@3", "AP(judged_only=True)", "nDCG(judged_only=True)@10", "AP@10", "p@3[rel=3]"]
    dl, dr = partitioned(labels, run, *PARTITIONINGS["scattered"])
    opts = dict(conf_interval=True, random_state=3, nan_handling="zerofill")
    got = compute(rd.evaluate(dl, dr, names, n_resamples=B, **opts), scores=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        want = rankereval.evaluate(from_dataframes(labels, run), names, resampling="poisson",
                                   n_resamples=B, **opts)
    assert want.names == names
    assert_same(got, want)


def test_ties_kept_equal_in_memory(client, frames):
    """ties='keep' when reading each partition and ties='expected' when scoring: the in-memory
    evaluation of the same frames, query by query."""
    from rankereval.metrics._ties import refusal

    labels, run = frames
    assign, n = PARTITIONINGS["scattered"]
    dl, dr = partitioned(labels, run, assign, n)
    metrics = {name: m for name, m in METRICS.items() if refusal(m) is None}
    data = rd.from_dataframes(dl, dr, ties="keep")
    got = compute(rd.evaluate(data, metrics, conf_interval=True, random_state=4, nan_handling="drop",
                              n_resamples=B, ties="expected"), scores=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        want = rankereval.evaluate(from_dataframes(labels, run, ties="keep"), metrics, resampling="poisson",
                                   n_resamples=B, conf_interval=True, random_state=4, nan_handling="drop",
                                   ties="expected")
    assert_same(got, want)
    assert want.tie_report.tied_positions > 0


def test_drop_warns_when_a_metric_is_undefined_everywhere(client, frames):
    # nothing left to average: a NaN mean, and the same warning as in memory (issue 44)
    labels, run = frames
    dl, dr = partitioned(labels, run, *PARTITIONINGS["scattered"])
    with pytest.warns(rankereval.UndefinedMetricWarning, match=r"p@3\[rel=99\] is undefined \(NaN\) for all"):
        ev = rd.evaluate(dl, dr, ["p@3[rel=99]", "p@3"], nan_handling="drop").compute()
    assert np.isnan(ev.means["p@3[rel=99]"]) and not np.isnan(ev.means["p@3"])


def test_item_inputs_follow_each_partitions_numbering(client, frames):
    """Novelty, ARP, TailShare and ILD read their inputs by the user's item ids: each
    partition of frames numbers its items apart, and the inputs follow it (as in memory, where
    a TrecData does too), bit for bit; the rankings of the user's ids give the same scores."""
    labels, run = frames
    metrics = item_input_metrics(30, seed=3)
    assign, n = PARTITIONINGS["scattered"]
    dl, dr = partitioned(labels, run, assign, n)
    opts = dict(conf_interval=True, random_state=4, nan_handling="drop")
    got = compute(rd.evaluate(dl, dr, metrics, n_resamples=B, **opts), scores=True)
    data = from_dataframes(labels, run)
    want = rankereval.evaluate(data, metrics, resampling="poisson", n_resamples=B, **opts)
    assert_same(got, want)
    doc = np.asarray(data.doc_ids)
    r = data.rankings
    direct = rankereval.Rankings.from_ranked_indices(
        [doc[r.indices[i, :r.lengths[i]]].tolist() for i in range(r.n_rows)])
    np.testing.assert_allclose(want.scores, np.column_stack([m.score(None, direct) for m in metrics.values()]),
                               rtol=0, atol=1e-15)
