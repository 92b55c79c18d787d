#!/usr/bin/env python
"""Speed of ``rankereval.compare`` (paired randomization test) next to ranx and scipy.

    python benchmarks/bench_compare.py                      # the sizes of benchmarks/README.md
    python benchmarks/bench_compare.py --size tiny --peers none

Workloads (``workloads.py``, fixed seeds): (i) IR, 5,000 queries x 1,000 retrieved documents,
graded labels; (ii) recommendation, 100,000 users x top-100. Each gets 3 runs: the workload's
rankings and two copies whose positions are locally shuffled (run-specific seeds), so the runs
differ on some queries and agree on others. 5 metrics per workload.

Measured, side by side in one process:

* ``rankereval``: ``compare(labels, {3 runs}, 5 metrics, test="permutation",
  n_resamples=B)`` end to end from ``BinaryLabels``/``NumericLabels`` and ``Rankings``
  (per-query scores, all 3 pairs x 5 metrics tested in one pass per resample, bootstrap
  intervals, Holm correction, the result object); and the issue's target, 2 runs (one pair)
  x 5 metrics on (ii).
* ``ranx``: ``compare(qrels, runs, metrics, stat_test="fisher", n_permutations=B)`` from
  its ``Qrels``/``Run`` objects (their construction from dicts is not timed). ranx's
  randomization test loops over queries for every permutation, so it is timed at two small
  B, extrapolated linearly in B (the intercept is its metric evaluation), and on at most
  ``--ranx-rows`` queries, extrapolated linearly in queries; the JSON keeps the measured times.
* ``scipy``: ``scipy.stats.permutation_test((run, baseline), mean difference,
  permutation_type="samples", vectorized=True)`` on rankereval's per-query scores, once per
  (pair, metric), timed at two small B and extrapolated linearly (the per-query scores are
  not part of its time).

Times are medians of ``--repeats`` wall-clock runs, after a warm-up (numba compilation for
ranx); rankereval's CPU time (all threads) is recorded too, since on a busy shared machine
CPU time / threads estimates the wall time on an idle one. The JSON (``benchmarks/results/compare-<size>.json``) holds every time, the
extrapolation inputs, versions, thread counts and the machine load.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import workloads as W  # noqa: E402

RESULTS_DIR = os.path.join(HERE, "results")
SIZES = {
    "tiny": dict(ir=dict(n_queries=200, collection=50_000), recsys=dict(n_users=2_000, n_items=10_000)),
    "small": dict(ir=dict(n_queries=1_000), recsys=dict(n_users=20_000)),
    "full": dict(ir=dict(n_queries=5_000), recsys=dict(n_users=100_000)),
}


def metrics_for(name):
    """5 metrics per workload: (label, rankereval metric, graded?, ranx name)."""
    from rankereval import AP, NDCG, Precision, Recall, ReciprocalRank

    if name == "ir":
        return [("NDCG@10", NDCG(10, log_base="2"), True, "ndcg@10"),
                ("AP@100", AP(100), False, "map@100"),
                ("P@10", Precision(10), False, "precision@10"),
                ("Recall@100", Recall(100), False, "recall@100"),
                ("RR@100", ReciprocalRank(100), False, "mrr@100")]
    return [("NDCG@10", NDCG(10, log_base="2"), False, "ndcg@10"),
            ("P@10", Precision(10), False, "precision@10"),
            ("RR@10", ReciprocalRank(10), False, "mrr@10"),
            ("Recall@100", Recall(100), False, "recall@100"),
            ("AP@100", AP(100), False, "map@100")]


def make_runs(w, n_runs=3, seed=7):
    """The workload's rankings and ``n_runs - 1`` locally shuffled copies (int64 arrays)."""
    rng = np.random.default_rng(seed)
    n, length = w.rankings.shape
    runs = [w.rankings]
    for k in range(1, n_runs):
        keys = np.arange(length)[None, :] + rng.normal(0.0, 2.0 + 2.0 * k, size=(n, length))
        runs.append(np.take_along_axis(w.rankings, np.argsort(keys, axis=1), axis=1))
    return runs


def timed(func, repeats, cpu=None):
    """``(median wall seconds, wall times, last result)``; CPU times (all threads) are
    appended to the list ``cpu`` if given: on a busy machine CPU time / threads estimates
    the wall time on an idle one."""
    times, out = [], None
    for _ in range(repeats):
        out = None
        t0, c0 = time.perf_counter(), time.process_time()
        out = func()
        times.append(time.perf_counter() - t0)
        if cpu is not None:
            cpu.append(time.process_time() - c0)
    return statistics.median(times), times, out


def linear(b1, t1, b2, t2, b):
    """Time at B = b from times at b1 < b2 (a line through both points).

    On a busy machine t2 can come out below t1; the slope is then taken as 0, i.e. the peer
    is credited with the time of its smaller B (an underestimate: it favours the peer).
    """
    slope = max((t2 - t1) / (b2 - b1), 0.0)
    return t1 + slope * (b - b1), slope, t1 - slope * b1


# ------------------------------------------------------------------------------------------
# libraries
# ------------------------------------------------------------------------------------------

def rankereval_inputs(w, runs, mets):
    from rankereval import BinaryLabels, NumericLabels, Rankings

    labels = BinaryLabels.from_positive_indices(w.labels)
    graded = NumericLabels.from_matrix(w.labels) if w.graded else None
    rankings = {f"run{i}": Rankings.from_ranked_indices(r) for i, r in enumerate(runs)}
    # graded workload: NDCG on the grades, binary metrics on grade >= 1 (relevance_level=1)
    y_true = graded if graded is not None else labels
    return y_true, rankings, {label: m for label, m, _, _ in mets}


def bench_rankereval(y_true, rankings, metric_dict, B, repeats):
    from rankereval import compare

    def run():
        return compare(y_true, rankings, metric_dict, test="permutation", n_resamples=B, random_state=0,
                       nan_handling="drop")

    run()                                         # warm-up (thread pool start, imports)
    cpu = []
    med, times, cmp = timed(run, repeats, cpu)
    return med, times, cmp, cpu


def ranx_objects(w, runs, rows):
    from ranx import Qrels, Run

    from peers import query_ids

    m = w.labels
    qids = query_ids(rows)
    docs = m.indices.astype(str).tolist()
    grades = m.data.astype(np.int64).tolist()
    qrels = Qrels.from_dict({q: dict(zip(docs[m.indptr[r]:m.indptr[r + 1]], grades[m.indptr[r]:m.indptr[r + 1]]))
                             for q, r in zip(qids, rows)})
    length = runs[0].shape[1]
    scores = np.arange(length, 0, -1, dtype=np.float64).tolist()
    out = []
    for i, r in enumerate(runs):
        ranked = r[rows].astype(str).tolist()
        run = Run.from_dict({q: dict(zip(d, scores)) for q, d in zip(qids, ranked)})
        run.name = f"run{i}"
        out.append(run)
    return qrels, out


def bench_ranx(w, runs, mets, b_points, max_rows, repeats, n_total):
    import ranx

    rows = np.flatnonzero(np.diff(w.labels.indptr) > 0)   # ranx cannot take queries without judgements
    n_rel = rows.size
    rows = rows[:max_rows]
    t0 = time.perf_counter()
    qrels, rruns = ranx_objects(w, runs, rows)
    convert_s = time.perf_counter() - t0
    names = [r for _, _, _, r in mets]
    small_q, small_r = ranx_objects(w, runs, rows[:50])
    t0 = time.perf_counter()
    ranx.compare(small_q, small_r, names, stat_test="fisher", n_permutations=10)   # numba compiles
    warmup_s = time.perf_counter() - t0
    measured = {}
    for b in b_points:
        med, times, _ = timed(lambda: ranx.compare(qrels, rruns, names, stat_test="fisher", n_permutations=b),
                              repeats)
        measured[b] = (med, times)
    (b1, (t1, _)), (b2, (t2, _)) = sorted(measured.items())
    return {"rows_timed": int(rows.size), "rows_with_judgements": int(n_rel), "convert_s": convert_s,
            "warmup_s": warmup_s, "measured": {str(b): {"median_s": m, "times_s": t} for b, (m, t) in measured.items()},
            "extrapolate": lambda B: linear(b1, t1, b2, t2, B)[0] * n_total / rows.size,
            "extrapolation": f"linear in B through B={b1} and B={b2}, then x {n_total}/{rows.size} queries"}


def bench_scipy(cmp, b_points, repeats, B_target):
    from scipy.stats import permutation_test

    def stat(x, y, axis):
        return np.mean(x - y, axis=axis)

    pairs = []
    for m in range(len(cmp.metrics)):
        rows = cmp.valid[:, m]
        for r, b in cmp.pairs:
            pairs.append((np.ascontiguousarray(cmp.scores[rows, m, r]), np.ascontiguousarray(cmp.scores[rows, m, b])))
    n = pairs[0][0].size
    batch = max(1, min(1000, (1 << 25) // max(n, 1)))     # <= 256 MB of permuted data at a time

    def run(b):
        return [permutation_test((x, y), stat, permutation_type="samples", vectorized=True, n_resamples=b,
                                 batch=batch, rng=np.random.default_rng(1)).pvalue for x, y in pairs]

    run(b_points[0])
    measured = {}
    pvalues = None
    for b in b_points:
        med, times, out = timed(lambda: run(b), repeats)
        measured[b] = (med, times)
        pvalues = out
    (b1, (t1, _)), (b2, (t2, _)) = sorted(measured.items())
    return {"comparisons": len(pairs), "batch": batch,
            "measured": {str(b): {"median_s": m, "times_s": t} for b, (m, t) in measured.items()},
            "extrapolated_s": linear(b1, t1, b2, t2, B_target)[0],
            "extrapolation": f"linear in B through B={b1} and B={b2}",
            "pvalues_at_B": {"B": b2, "pvalues": pvalues}}


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------

def environment():
    import scipy

    import rankereval

    env = {"python": sys.version.split()[0], "numpy": np.__version__, "scipy": scipy.__version__,
           "rankereval": rankereval.__version__,
           "rankereval_path": os.path.dirname(os.path.abspath(rankereval.__file__)),
           "cpu_count": os.cpu_count(), "loadavg_start": os.getloadavg()}
    try:
        import ranx

        env["ranx"] = getattr(ranx, "__version__", "installed")
        import numba

        env["numba_threads"] = int(numba.config.NUMBA_NUM_THREADS)
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_info

        env["openmp_threads"] = [i.get("num_threads") for i in threadpool_info() if i.get("user_api") == "openmp"]
    except Exception:  # pragma: no cover
        pass
    return env


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--size", choices=sorted(SIZES), default="full")
    p.add_argument("--resamples", type=int, default=10_000, help="B (default 10,000)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--peers", default="ranx,scipy", help="comma-separated subset of ranx,scipy, or none")
    p.add_argument("--workloads", default="ir,recsys")
    p.add_argument("--ranx-rows", type=int, default=20_000, help="queries ranx is timed on (default 20,000)")
    p.add_argument("--ranx-b", default="100,300", help="the two B ranx is timed at")
    p.add_argument("--scipy-b", default="100,300", help="the two B scipy is timed at")
    p.add_argument("--name", default=None)
    p.add_argument("--results-dir", default=RESULTS_DIR)
    p.add_argument("--quiet", action="store_true")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    peers = [] if args.peers == "none" else [p for p in args.peers.split(",") if p]
    B = args.resamples
    res = {"size": args.size, "resamples": B, "repeats": args.repeats, "peers": peers,
           "environment": environment(), "workloads": {}}
    for name in args.workloads.split(","):
        w = (W.ir if name == "ir" else W.recsys)(**SIZES[args.size][name])
        runs = make_runs(w)
        mets = metrics_for(name)
        y_true, rankings, metric_dict = rankereval_inputs(w, runs, mets)
        n = w.n_rows
        log(f"\n{w.description}: 3 runs x {len(mets)} metrics, B = {B:,}")
        entry = {"description": w.description, "n_rows": n, "metrics": [m[0] for m in mets], "libraries": {}}

        threads = res["environment"].get("openmp_threads") or [1]
        med, times, cmp, cpu = bench_rankereval(y_true, rankings, metric_dict, B, args.repeats)
        entry["libraries"]["rankereval"] = {"median_s": med, "times_s": times, "cpu_s": cpu,
                                            "comparisons": len(cmp.results["metric"])}
        log(f"  rankereval   3 runs (3 pairs) x {len(mets)} metrics: {med:8.3f} s "
            f"(CPU {statistics.median(cpu):.3f} s on {threads[0]} threads)")
        two = {k: rankings[k] for k in ("run0", "run1")}
        med2, times2, _, cpu2 = bench_rankereval(y_true, two, metric_dict, B, args.repeats)
        entry["libraries"]["rankereval_2runs"] = {"median_s": med2, "times_s": times2, "cpu_s": cpu2,
                                                  "comparisons": len(mets)}
        log(f"  rankereval   2 runs (1 pair)  x {len(mets)} metrics: {med2:8.3f} s "
            f"(CPU {statistics.median(cpu2):.3f} s on {threads[0]} threads)")

        if "scipy" in peers:
            bp = [int(b) for b in args.scipy_b.split(",")]
            sc = bench_scipy(cmp, bp, args.repeats, B)
            pv = np.asarray(sc["pvalues_at_B"]["pvalues"])
            ours = np.asarray(cmp.results["p_value"])
            b_s = sc["pvalues_at_B"]["B"]
            se = np.sqrt(np.maximum(pv * (1 - pv), 1.0 / b_s) / b_s) + np.sqrt(np.maximum(ours * (1 - ours), 1.0 / B) / B)
            sc["pvalues_agree"] = bool(np.all(np.abs(pv - ours) <= 4 * se + 2.0 / b_s))
            entry["libraries"]["scipy"] = sc
            log(f"  scipy        {sc['comparisons']} permutation_test calls: {sc['extrapolated_s']:8.3f} s "
                f"(extrapolated, {sc['extrapolation']}); p-values agree: {sc['pvalues_agree']}")
        if "ranx" in peers:
            bp = [int(b) for b in args.ranx_b.split(",")]
            rx = bench_ranx(w, runs, mets, bp, args.ranx_rows, args.repeats, int(np.count_nonzero(np.diff(w.labels.indptr) > 0)))
            est = rx.pop("extrapolate")(B)
            rx["extrapolated_s"] = est
            entry["libraries"]["ranx"] = rx
            log(f"  ranx         compare(stat_test='fisher'):   {est:8.3f} s (extrapolated, {rx['extrapolation']}; "
                f"Qrels/Run conversion {rx['convert_s']:.1f} s not included)")
        entry["speedup"] = {lib: v["extrapolated_s"] / med for lib, v in entry["libraries"].items()
                            if "extrapolated_s" in v}
        for lib, s in entry["speedup"].items():
            log(f"  rankereval is {s:,.0f}x faster than {lib}")
        res["workloads"][name] = entry
    res["environment"]["loadavg_end"] = os.getloadavg()
    os.makedirs(args.results_dir, exist_ok=True)
    path = os.path.join(args.results_dir, f"{args.name or 'compare-' + args.size}.json")
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    log(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
