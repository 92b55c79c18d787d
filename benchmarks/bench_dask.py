"""Scale benchmark of ``rankereval.dask``: NDCG@10, Recall@100 and AP@100 with Poisson CIs.

On the data set of ``make_dask_data.py`` (nested Parquet, one file pair per 250k users):

1. **in memory**, on a slice of the first files (2M users by default), one thread: Parquet
   read (timed alone), conversion to ``BinaryLabels``/``Rankings`` and
   ``rankereval.evaluate(..., conf_interval=True, resampling="poisson")``;
2. **Parquet I/O on the cluster**: a graph that only reads the slice's file pairs with pyarrow;
3. **Dask**, on a 2-worker ``LocalCluster`` (one thread per worker, ``--memory-limit`` per
   worker, processes): ``rankereval.dask.evaluate(read_parquet(...))`` on the slice (its
   means and intervals must equal the in-memory ones) and on the whole data set.

Steps 1-3 on the slice run ``--repeat`` times, interleaved, and the run of median CPU time
is reported (all are kept in the JSON); the whole data set runs once.

Reported: wall time, CPU time (in memory: the process; Dask: the sum over the worker
processes, scheduler and client excluded), peak resident memory of each worker (``VmHWM``;
each run gets a fresh cluster) and throughput per core two ways: users per wall second per
core (in memory: conversion + evaluate on one thread; Dask: wall time x 2 workers) and users
per CPU second, which a busy shared machine disturbs less (a process that waits for a core
is not charged). Writes
``benchmarks/results/dask.json``; ``--table FILE`` prints the docs' table from it.

Usage::

    python benchmarks/make_dask_data.py --out /work/data-dask
    nice python benchmarks/bench_dask.py --data /work/data-dask               # slice (x3) + full
    nice python benchmarks/bench_dask.py --data /work/data-dask --skip-full   # the slice only
    python benchmarks/bench_dask.py --data /tmp/small --slice-files 2 --repeat 1  # quick check
    python benchmarks/bench_dask.py --table benchmarks/results/dask.json      # the docs' table
"""
import argparse
import json
import os
import platform
import sys
import time

import numpy as np

METRICS = ["ndcg@10", "recall@100", "ap@100"]


def files(data, side, n=None):
    out = sorted(os.path.join(data, side, f) for f in os.listdir(os.path.join(data, side))
                 if f.endswith(".parquet"))
    return out[:n] if n else out


def read_nested(paths):
    """(query ids, list offsets, item ids) of nested Parquet files, concatenated."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pa.concat_tables([pq.read_table(p, columns=["query", "item"]) for p in paths])
    col = t.column("item").combine_chunks()
    offsets = np.asarray(col.offsets, dtype=np.int64)
    return np.asarray(t.column("query").combine_chunks()), offsets, np.asarray(col.flatten())


def in_memory(data, n_files, n_boot):
    import scipy.sparse as sp
    from threadpoolctl import threadpool_limits

    import rankereval

    t0 = time.perf_counter()
    lq, loff, litems = read_nested(files(data, "labels", n_files))
    rq, roff, ritems = read_nested(files(data, "run", n_files))
    t_read = time.perf_counter() - t0
    assert np.array_equal(lq, rq)
    with threadpool_limits(1, user_api="openmp"):
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        n, k = rq.shape[0], int(roff[1] - roff[0])
        y_pred = rankereval.Rankings.from_ranked_indices(ritems.reshape(n, k))
        n_items = int(max(litems.max(), ritems.max())) + 1
        y_true = rankereval.BinaryLabels.from_matrix(
            sp.csr_matrix((np.ones(litems.shape[0]), litems, loff), shape=(n, n_items)))
        t_convert = time.perf_counter() - t0
        t0 = time.perf_counter()
        ev = rankereval.evaluate(y_true, y_pred, METRICS, conf_interval=True, n_resamples=n_boot,
                                 random_state=0, resampling="poisson", query_ids=rq)
        t_eval = time.perf_counter() - t0
        cpu = time.process_time() - cpu0
    return {"n_users": int(n), "read_s": t_read, "convert_s": t_convert, "evaluate_s": t_eval,
            "cpu_s": cpu, "threads": 1, "users_per_s_per_core": n / (t_convert + t_eval),
            "users_per_cpu_s": n / cpu,
            "means": ev.means, "conf_intervals": {c: list(v) for c, v in ev.conf_intervals.items()}}


def _peak_rss():
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return -1


def _warm_up():
    import pyarrow.parquet  # noqa: F401

    import rankereval.dask  # noqa: F401


def _cpu_seconds():
    t = os.times()
    return t.user + t.system


def _task_cpu_seconds(dask_worker):
    """CPU seconds of the threads that ran this worker's tasks, inside the tasks (Dask's
    own metric): the rest of the worker process's CPU is Dask's (event loop, heartbeats,
    profiler, transfers)."""
    return sum(v for k, v in getattr(dask_worker, "digests_total", {}).items()
               if isinstance(k, tuple) and k[0] == "execute" and k[-2:] == ("thread-cpu", "seconds"))


def _read_pair(labels_file, run_file):
    """The Parquet I/O of one partition of ``rankereval.dask.read_parquet``, alone: the same
    call that its partition task makes before converting what it read."""
    from rankereval.dask._core import _read_pair as read

    lab, run, _ = read(labels_file, run_file, dict(query_col="query", item_col="item", label_col="label",
                                                    score_col=None, rank_col=None))
    return lab.num_rows + run.num_rows


def on_cluster(data, n_files, n_boot, memory_limit, io_only=False):
    import dask
    from distributed import Client, LocalCluster

    import rankereval.dask as rd

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        lab, run = files(data, "labels", n_files), files(data, "run", n_files)
        t0 = time.perf_counter()
        client.run(_warm_up)           # imports in the worker processes, timed apart
        warm_up = time.perf_counter() - t0
        cpu0, task0 = client.run(_cpu_seconds), client.run(_task_cpu_seconds)
        t0 = time.perf_counter()
        if io_only:
            rows = dask.compute(*[dask.delayed(_read_pair)(a, b) for a, b in zip(lab, run)])
            out = {"rows_read": int(sum(rows))}
        else:
            if n_files:
                import tempfile

                # a slice: a directory of links to the first files of each side
                tmp = tempfile.mkdtemp(prefix="rankereval-dask-slice-")
                for side, fs in (("labels", lab), ("run", run)):
                    os.makedirs(os.path.join(tmp, side))
                    for f in fs:
                        os.symlink(f, os.path.join(tmp, side, os.path.basename(f)))
                root = tmp
            else:
                root = data
            parts = rd.read_parquet(os.path.join(root, "labels"), os.path.join(root, "run"))
            ev = rd.evaluate(parts, metrics=METRICS, conf_interval=True, n_resamples=n_boot,
                             random_state=0).compute()
            out = {"n_users": ev.n_rankings, "means": ev.means,
                   "conf_intervals": {c: list(v) for c, v in ev.conf_intervals.items()}}
        out["wall_s"] = time.perf_counter() - t0
        cpu1, task1 = client.run(_cpu_seconds), client.run(_task_cpu_seconds)
        out["cpu_s"] = sum(cpu1[w] - cpu0[w] for w in cpu1 if w in cpu0)
        out["task_cpu_s"] = sum(task1[w] - task0[w] for w in task1 if w in task0)
        out["worker_imports_s"] = warm_up
        peaks = client.run(_peak_rss)
        out["peak_rss_bytes"] = sorted(peaks.values())
        out["n_files"] = len(lab)
        out["workers"] = 2
        out["memory_limit"] = memory_limit
    if "n_users" in out:
        out["users_per_s_per_core"] = out["n_users"] / (out["wall_s"] * 2)
        out["users_per_cpu_s"] = out["n_users"] / out["cpu_s"]
    return out


def table(path):
    """Print the docs' table (docs/guide/performance.rst) from a results file."""
    with open(path) as fh:
        r = json.load(fh)
    mem = r["in_memory"]
    rows = [("in memory, 1 thread (conversion + ``evaluate``)", f"{mem['n_users']:,}",
             f"{mem['convert_s'] + mem['evaluate_s']:.1f}", f"{mem['cpu_s']:.1f}", "",
             f"{mem['users_per_cpu_s']:,.0f}", "1.00")]
    io = r.get("dask_io")
    for key in ("dask_slice", "dask_full"):
        if key in r:
            d = r[key]
            rows.append(("Dask, 2 workers x 1 thread (Parquet read included)", f"{d['n_users']:,}",
                         f"{d['wall_s']:.1f}", f"{d['cpu_s']:.1f}",
                         " / ".join(f"{b / 2**30:.2f}" for b in d["peak_rss_bytes"]),
                         f"{d['users_per_cpu_s']:,.0f}", f"{d['users_per_cpu_s'] / mem['users_per_cpu_s']:.2f}"))
            if key == "dask_slice" and io and d["cpu_s"] > io["cpu_s"]:
                # the same slice less the CPU of a graph that only reads its files
                per_cpu = d["n_users"] / (d["cpu_s"] - io["cpu_s"])
                rows.append(("Dask, the same, Parquet read (measured alone) subtracted", f"{d['n_users']:,}", "",
                             f"{d['cpu_s'] - io['cpu_s']:.1f}", "", f"{per_cpu:,.0f}",
                             f"{per_cpu / mem['users_per_cpu_s']:.2f}"))
    print(".. list-table:: NDCG@10 + Recall@100 + AP@100 with 95% Poisson intervals "
          f"(B = {r['n_bootstrap_samples']}) (``results/dask.json``)")
    print("   :header-rows: 1\n   :widths: 28 12 10 10 16 12 12\n")
    head = ("", "users", "wall (s)", "CPU (s)", "peak RSS per worker (GiB)", "users per CPU s",
            "vs in memory (per CPU s)")
    for row in [head] + rows:
        print("   * -" + "".join(f"\n     - {c}" if c else "\n     -" for c in row[1:]).join(
            [f" {row[0]}" if row[0] else "", ""]))
    print(f"\nParquet read alone: {mem['read_s']:.1f} s for {mem['n_users']:,} users in memory (one process)"
          + (f"; {io['wall_s']:.1f} s wall, {io['cpu_s']:.1f} s CPU for the same {io['n_files']} file pairs "
             "on the cluster" if io else "")
          + (f" (median of {len(r['in_memory_runs'])} interleaved runs of each)" if "in_memory_runs" in r else "") + ".")
    d = r.get("dask_slice", {})
    if "task_cpu_s" in d:
        print(f"Of the {d['cpu_s']:.1f} CPU s of the Dask slice, {d['task_cpu_s']:.1f} s ran inside the tasks "
              f"and {d['cpu_s'] - d['task_cpu_s']:.1f} s in the worker processes' own threads (event loop, "
              "heartbeats, profiler, transfers).")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/work/data-dask")
    p.add_argument("--slice-files", type=int, default=8, help="files of the in-memory slice (250k users each)")
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--memory-limit", default="3GB")
    p.add_argument("--skip-full", action="store_true", help="only the slice (and its Parquet I/O)")
    p.add_argument("--repeat", type=int, default=3,
                   help="runs of the slice, in memory and on Dask (interleaved); the median is reported")
    p.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                   "dask.json"))
    p.add_argument("--table", metavar="JSON", help="print the docs' table from a results file and exit")
    a = p.parse_args(argv)
    if a.table:
        table(a.table)
        return
    import dask
    import distributed

    import rankereval

    meta = os.path.join(a.data, "dataset.json")
    dataset = {"n_files": len(files(a.data, "run"))}
    if os.path.exists(meta):             # written by make_dask_data.py once every file is
        with open(meta) as fh:
            dataset.update(json.load(fh))
    res = {"dataset": dataset, "n_bootstrap_samples": a.n_boot, "metrics": METRICS,
           "versions": {"rankereval": rankereval.__version__, "dask": dask.__version__,
                        "distributed": distributed.__version__, "numpy": np.__version__,
                        "python": platform.python_version()},
           "machine": {"cpus": os.cpu_count(), "load_before": os.getloadavg()}}
    runs = {"in_memory": [], "dask_slice": [], "dask_io": []}
    for r in range(a.repeat):          # interleaved, so that a change of load hits all three
        print(f"in memory ({r + 1}/{a.repeat}) ...", flush=True)
        runs["in_memory"].append(in_memory(a.data, a.slice_files, a.n_boot))
        print(json.dumps(runs["in_memory"][-1], indent=1), flush=True)
        print(f"dask, slice ({r + 1}/{a.repeat}) ...", flush=True)
        runs["dask_slice"].append(on_cluster(a.data, a.slice_files, a.n_boot, a.memory_limit))
        print(json.dumps(runs["dask_slice"][-1], indent=1), flush=True)
        # equal up to the order of floating-point sums over 2M queries (the tests check 1e-12
        # on small data)
        for col in METRICS:
            m, d = runs["in_memory"][-1], runs["dask_slice"][-1]
            assert np.allclose(m["means"][col], d["means"][col], rtol=1e-10, atol=0), col
            assert np.allclose(m["conf_intervals"][col], d["conf_intervals"][col], rtol=1e-10, atol=0), col
        print(f"dask, Parquet I/O of the slice only ({r + 1}/{a.repeat}) ...", flush=True)
        runs["dask_io"].append(on_cluster(a.data, a.slice_files, a.n_boot, a.memory_limit, io_only=True))
        print(json.dumps(runs["dask_io"][-1], indent=1), flush=True)
    for key, rs in runs.items():
        # the run of median CPU time stands for all (its fields belong together); all are kept
        res[key] = sorted(rs, key=lambda x: x["cpu_s"])[(len(rs) - 1) // 2]
        res[key + "_runs"] = rs
    if not a.skip_full:
        print("dask, full ...", flush=True)
        res["dask_full"] = on_cluster(a.data, None, a.n_boot, a.memory_limit)
        print(json.dumps(res["dask_full"], indent=1), flush=True)
    res["machine"]["load_after"] = os.getloadavg()
    os.makedirs(os.path.dirname(a.results), exist_ok=True)
    with open(a.results, "w") as fh:
        json.dump(res, fh, indent=2)
    table(a.results)


if __name__ == "__main__":
    sys.exit(main())
