"""Spark benchmark: ``rankereval.spark.evaluate`` against MLlib's ``RankingMetrics`` in one run.

Data: the nested Parquet data set of ``make_dask_data.py`` (one row per user: ``query``
int64, ``item`` list<int32>, ranked / relevant items), the first ``--files`` file pairs
(250k users each). Both tools start from the same two DataFrames
(``spark.read.parquet(labels)``, ``spark.read.parquet(run)``) on a ``local[2]`` session:

* **rankereval**: ``rankereval.spark.evaluate(labels, run, ["ndcg@10", "recall@100",
  "ap@100"], grade_col=None, conf_interval=True, n_resamples=B)`` -- means and
  Poisson intervals (one shuffle by query, one ``mapInArrow`` task per partition);
* **MLlib RankingMetrics**: the two frames joined on ``query``, as an RDD of
  ``(predicted items, relevant items)``, ``RankingMetrics(rdd)`` and ``ndcgAt(10)``,
  ``recallAt(100)``, ``meanAveragePrecisionAt(100)`` (as documented: each call is a job
  over the RDD; no intervals);
* **MLlib RankingEvaluator** (the DataFrame API, JVM only): the joined frame with
  ``array<double>`` columns, one ``evaluate`` per metric.

The means are compared where the definitions coincide (every user here has relevant items
and fewer than 100 of them: MLlib's NDCG@10 with binary gains, Recall@100 and MAP@100 equal
rankereval's ndcg@10, recall@100 and ap@100). Reported: wall time of each (from the
DataFrames to the numbers on the driver), and the peak resident memory of the Spark
processes (the JVM plus its Python workers, sampled every 0.2 s) during each.

``--mode apply`` instead measures the per-query alternative of the design, ``groupBy(query)
.applyInPandas`` calling the same reader and kernels once per query, against the
``mapInArrow`` path, on ``--users`` users.

Usage::

    python benchmarks/make_dask_data.py --out /work/data-spark --users 2000000
    nice python benchmarks/bench_spark.py --data /work/data-spark --files 8     # 2M users
    python benchmarks/bench_spark.py --data /work/data-spark --mode apply --users 20000
    python benchmarks/bench_spark.py --table benchmarks/results/spark.json      # the docs' table
"""
import argparse
import json
import os
import platform
import sys
import threading
import time

import numpy as np

METRICS = ["ndcg@10", "recall@100", "ap@100"]


def files(data, side, n):
    out = sorted(os.path.join(data, side, f) for f in os.listdir(os.path.join(data, side))
                 if f.endswith(".parquet"))
    return out[:n]


class PeakMemory:
    """Peak of the summed resident memory of a process and its descendants, and the CPU
    time they used meanwhile (each process's last sample; the machine is shared, so CPU
    time is the fairer comparison), sampled."""

    def __init__(self, pid, interval=0.2):
        import psutil

        self._proc, self._interval = psutil.Process(pid), interval
        self.peak = 0
        self._cpu = {}          # pid -> (cpu seconds at the first sample, at the last)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def cpu_seconds(self):
        return sum(last - first for first, last in self._cpu.values())

    def _sample(self):
        total = 0
        for p in [self._proc] + self._proc.children(recursive=True):
            try:
                total += p.memory_info().rss
                t = p.cpu_times()
                cpu = t.user + t.system
            except Exception:  # a Python worker that just ended
                continue
            # a process born during the measurement counts from 0
            first = self._cpu.get(p.pid, (0.0 if self._started else cpu,))[0]
            self._cpu[p.pid] = (first, cpu)
        self.peak = max(self.peak, total)

    def _run(self):
        while not self._stop.is_set():
            self._sample()
            self._stop.wait(self._interval)

    def __enter__(self):
        self._started = False
        self._sample()          # the processes alive before: CPU time counted from here
        self._started = True
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()


def session(driver_memory, shuffle_partitions):
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, root)  # this checkout's rankereval, on the driver and (below) the workers
    os.environ["PYTHONPATH"] = root + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    s = (SparkSession.builder.master("local[2]").appName("bench_spark")
         .config("spark.ui.enabled", "false").config("spark.driver.memory", driver_memory)
         .config("spark.sql.shuffle.partitions", str(shuffle_partitions)).getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    return s


def timed(spark, fn):
    """(result, wall seconds, peak resident bytes and CPU seconds of the JVM and its Python
    workers; the driver's own Python process excluded)."""
    pid = spark.sparkContext._gateway.proc.pid
    with PeakMemory(pid) as mem:
        t = time.perf_counter()
        out = fn()
        wall = time.perf_counter() - t
    return out, wall, mem.peak, mem.cpu_seconds


def run_rankereval(labels, run, n_boot, npartitions):
    import rankereval.spark as rs

    ev = rs.evaluate(labels, run, METRICS, grade_col=None, conf_interval=True, n_resamples=n_boot,
                     random_state=0, npartitions=npartitions)
    return {"n_users": ev.n_rankings, "means": ev.means,
            "conf_intervals": {k: list(v) for k, v in ev.conf_intervals.items()}}


def joined(labels, run):
    from pyspark.sql import functions as F

    return run.select("query", F.col("item").alias("pred")).join(
        labels.select("query", F.col("item").alias("rel")), "query")


def run_mllib(labels, run):
    from pyspark.mllib.evaluation import RankingMetrics

    rdd = joined(labels, run).rdd.map(lambda r: (r.pred, r.rel))
    m = RankingMetrics(rdd)
    return {"means": {"ndcg@10": m.ndcgAt(10), "recall@100": m.recallAt(100),
                      "ap@100": m.meanAveragePrecisionAt(100)}}


def run_evaluator(labels, run):
    from pyspark.ml.evaluation import RankingEvaluator
    from pyspark.sql import functions as F

    df = joined(labels, run).select(F.col("pred").cast("array<double>").alias("prediction"),
                                    F.col("rel").cast("array<double>").alias("label"))
    out = {}
    for name, metric, k in (("ndcg@10", "ndcgAtK", 10), ("recall@100", "recallAtK", 100),
                            ("ap@100", "meanAveragePrecisionAtK", 100)):
        out[name] = RankingEvaluator(metricName=metric, k=k).evaluate(df)
    return {"means": out}


def apply_in_pandas(labels, run):
    """The per-query design: groupBy(query).applyInPandas, the same reader and kernels per group."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from rankereval.evaluation._evaluate import _metric_columns
    import rankereval.spark._core as core

    union, spec = core._union(labels, run, "query", "item", None, None, None)
    spec.update(columns=_metric_columns(METRICS), relevance_level=1, fail_once=None)
    schema = T.StructType([T.StructField("q", T.LongType())] + [T.StructField(m, T.DoubleType()) for m in METRICS])

    def per_query(pdf):
        import pandas as pd

        res = core._partition_scores(pa.Table.from_pandas(pdf, preserve_index=False).to_batches(), spec)
        ids, scores = res
        return pd.DataFrame({"q": ids, **{m: scores[:, j] for j, m in enumerate(METRICS)}})

    frame = union.groupBy("q").applyInPandas(per_query, schema)
    row = frame.agg(*[F.mean(m).alias(m) for m in METRICS], F.count("q").alias("n")).collect()[0]
    return {"n_users": row["n"], "means": {m: row[m] for m in METRICS}}


def map_in_arrow_scores(labels, run):
    """The chosen design, the per-query scores only (the same output as apply_in_pandas)."""
    from pyspark.sql import functions as F

    import rankereval.spark as rs

    _, frame = rs.evaluate(labels, run, METRICS, grade_col=None, return_scores=True)
    row = frame.agg(*[F.mean(m).alias(m) for m in METRICS], F.count("query").alias("n")).collect()[0]
    return {"n_users": row["n"], "means": {m: row[m] for m in METRICS}}


def write(path, res):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(res, fh, indent=2)
    print("wrote", path, flush=True)


def table(path):
    with open(path) as fh:
        r = json.load(fh)
    for size in r["sizes"]:
        print(f"\n{size['n_users']:,} users x top-100 of 1M items, local[2], B = {r['n_bootstrap_samples']}")
        print(f"{'':34s} {'wall s':>8s} {'CPU s':>8s} {'peak GiB':>9s} {'wall vs re':>11s} {'CPU vs re':>10s}")
        base, base_cpu = size["rankereval"]["wall_s"], size["rankereval"].get("cpu_s")
        for key, label in (("rankereval", "rankereval.spark (with 95% CIs)"),
                           ("mllib_ranking_metrics", "MLlib RankingMetrics"),
                           ("mllib_ranking_evaluator", "MLlib RankingEvaluator")):
            if key in size:
                s = size[key]
                cpu = s.get("cpu_s")
                print(f"{label:34s} {s['wall_s']:8.1f} {cpu if cpu is not None else float('nan'):8.1f} "
                      f"{s['peak_rss_bytes'] / 2**30:9.2f} {s['wall_s'] / base:10.1f}x "
                      f"{cpu / base_cpu if cpu and base_cpu else float('nan'):9.1f}x")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="/work/data-spark")
    p.add_argument("--files", type=int, nargs="+", default=[8], help="file pairs (250k users each), per size")
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--partitions", type=int, default=16, help="partitions of the shuffle by query")
    p.add_argument("--mode", choices=["peers", "apply"], default="peers")
    p.add_argument("--users", type=int, default=20000, help="--mode apply: users of the first file")
    p.add_argument("--skip", nargs="*", default=[], help="peers to leave out: mllib_ranking_metrics, "
                   "mllib_ranking_evaluator")
    p.add_argument("--results", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                   "spark.json"))
    p.add_argument("--table", metavar="JSON", help="print the docs' table from a results file and exit")
    a = p.parse_args()
    if a.table:
        table(a.table)
        return
    import pyspark

    spark = session(a.driver_memory, a.partitions)
    res = {"machine": platform.machine(), "cpus": os.cpu_count(), "python": platform.python_version(),
           "pyspark": pyspark.__version__, "n_bootstrap_samples": a.n_boot, "shuffle_partitions": a.partitions,
           "driver_memory": a.driver_memory, "command": " ".join(sys.argv), "sizes": []}
    if a.mode == "apply":
        labels = spark.read.parquet(files(a.data, "labels", 1)[0]).limit(a.users)
        run = spark.read.parquet(files(a.data, "run", 1)[0]).limit(a.users)
        out = {}
        for name, fn in (("map_in_arrow", map_in_arrow_scores), ("apply_in_pandas", apply_in_pandas),
                         ("map_in_arrow_again", map_in_arrow_scores)):
            r, wall, peak, cpu = timed(spark, lambda: fn(labels, run))
            out[name] = dict(r, wall_s=wall, cpu_s=cpu, peak_rss_bytes=peak)
            print(name, json.dumps(out[name]), flush=True)
        res["apply"] = out
        path = a.results.replace(".json", "-apply.json")
    else:
        # warm up (JVM code paths, Python workers, imports) on 2,000 users of each tool, untimed
        small_l = spark.read.parquet(files(a.data, "labels", 1)[0]).limit(2000)
        small_r = spark.read.parquet(files(a.data, "run", 1)[0]).limit(2000)
        run_rankereval(small_l, small_r, 10, 2)
        run_mllib(small_l, small_r)
        run_evaluator(small_l, small_r)
        for n in a.files:
            labels = spark.read.parquet(*files(a.data, "labels", n))
            run = spark.read.parquet(*files(a.data, "run", n))
            size = {"files": n}
            for name, fn in (("rankereval", lambda: run_rankereval(labels, run, a.n_boot, a.partitions)),
                             ("mllib_ranking_metrics", lambda: run_mllib(labels, run)),
                             ("mllib_ranking_evaluator", lambda: run_evaluator(labels, run))):
                if name in a.skip:
                    continue
                r, wall, peak, cpu = timed(spark, fn)
                size[name] = dict(r, wall_s=wall, cpu_s=cpu, peak_rss_bytes=peak, load_avg=os.getloadavg())
                print(n, name, json.dumps(size[name]), flush=True)
            size["n_users"] = size["rankereval"]["n_users"]
            for name in ("mllib_ranking_metrics", "mllib_ranking_evaluator"):
                if name in size:
                    size[name]["max_abs_diff_of_means"] = max(
                        abs(size[name]["means"][m] - size["rankereval"]["means"][m]) for m in METRICS)
            res["sizes"].append(size)
            write(a.results, res)          # after each size: a partial run keeps what it measured
        path = a.results
    spark.stop()
    write(path, res)
    if a.mode == "peers":
        table(path)


if __name__ == "__main__":
    main()
