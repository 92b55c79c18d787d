"""Benchmark of ``rankereval.evaluate`` (ten metrics in one call) on workload (a).

Compares, in one run and from the same arrays:

* ``evaluate`` with ten metrics, against the sum of the ten separate ``Metric.score`` calls
  (target: no more than that sum, and at most 80 ms on 200k rankings x top-100);
* ``evaluate(..., conf_interval=True)`` (target: CIs for all ten add at most 30 ms);
* ranx ``evaluate`` with the metrics it shares, end to end from the same arrays, its
  conversion (building ``Qrels``/``Run``) timed separately, when ranx is installed.

Writes ``benchmarks/results/evaluate.json``; the docs' performance page renders its table
from that file. Usage: ``python benchmarks/bench_evaluate.py [--size small|full] [--repeats 5]``.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

METRICS = ["ndcg@10", "p@10", "recall@100", "ap@100", "rr@10", "f1@10", "dcg@10", "hitrate@10",
           "meanranks", "firstrelevantrank"]
# ranx's names for the metrics it shares (same definitions where they coincide)
RANX = {"ndcg@10": "ndcg@10", "p@10": "precision@10", "recall@100": "recall@100",
        "rr@10": "mrr@10", "f1@10": "f1@10"}


def timed(func, repeats):
    times, out = [], None
    for _ in range(repeats):
        out = None
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def ranx_inputs(labels, rankings):
    from ranx import Qrels, Run

    q, r = {}, {}
    for i in range(rankings.shape[0]):
        lo, hi = labels.indptr[i], labels.indptr[i + 1]
        if hi > lo:
            q[f"q{i}"] = {f"d{j}": 1 for j in labels.indices[lo:hi]}
        row = rankings[i]
        r[f"q{i}"] = {f"d{j}": float(len(row) - p) for p, j in enumerate(row)}
    return Qrels(q), Run(r)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=("small", "full"), default="full")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--ranx-rows", type=int, default=20_000,
                   help="rows for the ranx comparison (its conversion is slow; scaled to per-row)")
    p.add_argument("--results-dir", default=os.path.join(os.path.dirname(__file__), "results"))
    args = p.parse_args(argv)

    import rankereval as rk
    from rankereval.metrics import from_name

    w = workloads.make("recsys", args.size)
    y = rk.BinaryLabels.from_matrix(w.labels)
    r = rk.Rankings.from_ranked_indices(w.rankings)
    metrics = [from_name(m) for m in METRICS]
    warnings.simplefilter("ignore", rk.UndefinedMetricWarning)

    # warm up, then alternate the two ways call by call (a slow spell of the machine falls on both)
    rk.evaluate(y, r, metrics)
    sep_t, ev_t, ci_t = [], [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        separate = [m.score(y, r) for m in metrics]
        sep_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ev = rk.evaluate(y, r, metrics)
        ev_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rk.evaluate(y, r, metrics, conf_interval=True, random_state=0)
        ci_t.append(time.perf_counter() - t0)
    for j, s in enumerate(separate):
        np.testing.assert_array_equal(ev.scores[:, j], s)
    per_metric = {}
    for m in metrics:
        per_metric[m.name], _, _ = timed(lambda m=m: m.score(y, r), args.repeats)
    result = {
        "name": "evaluate",
        "workload": w.name, "n_rows": w.n_rows, "metrics": METRICS,
        "environment": {"python": platform.python_version(), "numpy": np.__version__,
                        "rankereval": rk.__version__, "cpus": os.cpu_count()},
        "separate_scores_s": statistics.median(sep_t), "evaluate_s": statistics.median(ev_t),
        "evaluate_ci_s": statistics.median(ci_t), "per_metric_score_s": per_metric,
        "times": {"separate": sep_t, "evaluate": ev_t, "evaluate_ci": ci_t},
    }
    try:
        import ranx
    except ImportError:
        ranx = None
    if ranx is not None:
        n = min(args.ranx_rows, w.n_rows)
        wh = w.head(n)
        t0 = time.perf_counter()
        qrels, run = ranx_inputs(wh.labels, wh.rankings)
        conv = time.perf_counter() - t0
        names = list(RANX.values())
        ranx.evaluate(qrels, run, names)  # numba compilation, not timed
        rx, _, _ = timed(lambda: ranx.evaluate(qrels, run, names), min(args.repeats, 3))
        ours_shared, _, _ = timed(lambda: rk.evaluate(rk.BinaryLabels.from_matrix(wh.labels),
                                                      rk.Rankings.from_ranked_indices(wh.rankings),
                                                      list(RANX)), args.repeats)
        result["ranx"] = {"version": ranx.__version__ if hasattr(ranx, "__version__") else "?",
                          "rows": n, "metrics": names, "convert_s": conv, "evaluate_s": rx,
                          "rankereval_end_to_end_s": ours_shared}
    print(f"workload {w.name}: {w.n_rows:,} rankings, ten metrics")
    print(f"  sum of ten separate score calls  {result['separate_scores_s'] * 1e3:8.1f} ms")
    print(f"  evaluate (ten metrics)           {result['evaluate_s'] * 1e3:8.1f} ms")
    print(f"  evaluate with ten 95% CIs        {result['evaluate_ci_s'] * 1e3:8.1f} ms")
    if "ranx" in result:
        rx = result["ranx"]
        print(f"  on {rx['rows']:,} rows, the {len(rx['metrics'])} shared metrics: ranx evaluate "
              f"{rx['evaluate_s'] * 1e3:.1f} ms (+ {rx['convert_s'] * 1e3:.0f} ms building Qrels/Run); "
              f"rankereval from the arrays {rx['rankereval_end_to_end_s'] * 1e3:.1f} ms")
    os.makedirs(args.results_dir, exist_ok=True)
    with open(os.path.join(args.results_dir, "evaluate.json"), "w") as fh:
        json.dump(result, fh, indent=1)


if __name__ == "__main__":
    main()
