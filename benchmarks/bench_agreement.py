#!/usr/bin/env python
"""Speed of ``rankereval.agreement.rbo`` and ``jaccard`` next to NDCG@10 and the ``rbo`` package.

    python benchmarks/bench_agreement.py                 # workload (a) at full size
    python benchmarks/bench_agreement.py --size tiny

Workload (a) (``workloads.py``, fixed seed): recommendation, 200,000 users x top-100. Its two
runs are the workload's rankings and a locally shuffled copy (``bench_compare.make_runs``), so
the two lists of a user share their items in another order (the heaviest case for RBO: every
item of one list is found in the other).

Measured side by side in one process (the calls take turns, ``--repeats`` rounds), from
``Rankings`` and ``BinaryLabels`` built once:

* ``NDCG@10``: ``NDCG(10).score(labels, run)`` on one run (the issue's yardstick: RBO of the
  two runs at most 3 times it);
* ``rbo@k``: ``rbo(run_a, run_b, p=0.9, k=k)`` for k = 10 (the prefixes NDCG@10 reads), 100
  and the whole rankings (also 100 here): RBO_ext, RBO_min and RBO_res from one pass per
  user; at full depth 20 times the items NDCG@10 reads;
* ``jaccard@k``: ``jaccard(run_a, run_b, k)``, the same pass without RBO's sums and bounds
  (the overlap only): the floor of what RBO can cost;
* ``rbo ties='a'``: the tie-aware RBO (its typed kernel, O(s l) per tied pair) on
  ``--tie-rows`` users whose items are tied in pairs of positions in both runs,
  extrapolated linearly to all;
* the ``rbo`` package (PyPI ``rbo``, pure Python), if installed: ``RankingSimilarity(a,
  b).rbo_ext(p=0.9)`` per user on ``--peer-rows`` users, extrapolated linearly to all; its
  values are checked against rankereval's.

Times are medians of ``--repeats`` wall-clock rounds after a warm-up; the JSON
(``benchmarks/results/agreement-<size>.json``) keeps every time and the ratios. The table of
docs/guide/performance.rst is printed from a run's JSON by

    python benchmarks/bench_agreement.py --table benchmarks/published/agreement.json
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
ROOT = os.path.dirname(HERE)
# a checkout with an in-place build is benchmarked as it is (as benchmarks/run.py does)
if glob.glob(os.path.join(ROOT, "rankereval", "_agreement*.so")) + glob.glob(os.path.join(ROOT, "rankereval", "_agreement*.pyd")):
    sys.path.insert(0, ROOT)

import workloads as W  # noqa: E402
from bench_compare import make_runs  # noqa: E402

RESULTS_DIR = os.path.join(HERE, "results")


def timed(func, repeats):
    func()                                   # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def table(res):
    """The reStructuredText table of docs/guide/performance.rst."""
    rows = [("``ndcg@10`` (one run)", "ndcg@10")]
    for k in ("10", "100", "full"):
        rows.append((f"``rbo@{k}`` (ext, min, max, res)", f"rbo@{k}"))
        rows.append((f"``jaccard@{k}`` (overlap only)", f"jaccard@{k}"))
    lines = [f".. list-table:: RBO of workload (a)'s two runs, {res['n_rows']:,} users x top-100, p = 0.9 "
             f"(``published/agreement.json``, {res['threads']} threads, median of {res['repeats']})",
             "   :header-rows: 1", "   :widths: 50 15 15", "",
             "   * - call", "     - ms", "     - x NDCG\\@10"]
    for label, key in rows:
        lines += [f"   * - {label}", f"     - {res[key]['median_s'] * 1e3:.1f}",
                  f"     - {res[key]['median_s'] / res['ndcg@10']['median_s']:.2f}"]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(W.SIZES), default="full")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--peer-rows", type=int, default=2_000)
    parser.add_argument("--tie-rows", type=int, default=2_000)
    parser.add_argument("--results-dir", default=RESULTS_DIR)
    parser.add_argument("--table", metavar="JSON", help="print the docs' table from a run's JSON and exit")
    args = parser.parse_args(argv)
    if args.table:
        with open(args.table) as fh:
            print(table(json.load(fh)))
        return 0

    from rankereval import NDCG, BinaryLabels, Rankings
    from rankereval._threads import effective_n_threads
    from rankereval.agreement import jaccard, rbo

    w = W.make("recsys", args.size)
    run_a, run_b = make_runs(w, n_runs=2)
    labels = BinaryLabels.from_positive_indices(w.labels)
    ra, rb = Rankings.from_ranked_indices(run_a), Rankings.from_ranked_indices(run_b)
    ndcg = NDCG(10)
    out = {"size": args.size, "workload": w.description, "n_rows": w.n_rows, "repeats": args.repeats,
           "threads": effective_n_threads()}
    cases = {"ndcg@10": lambda: ndcg.score(labels, ra)}
    for k in (10, 100, None):
        name = "full" if k is None else str(k)
        cases[f"rbo@{name}"] = (lambda k=k: rbo(ra, rb, p=0.9, k=k))
        cases[f"jaccard@{name}"] = (lambda k=k: jaccard(ra, rb, ra.indices.shape[1] if k is None else k))
    times = {name: [] for name in cases}
    for f in cases.values():
        f()                                      # warm-up
    for _ in range(args.repeats):                # the calls take turns: the load hits all alike
        for name, f in cases.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    t_ndcg = statistics.median(times["ndcg@10"])
    print(f"{w.description}")
    for name, ts in times.items():
        med = statistics.median(ts)
        out[name] = {"median_s": med, "times": ts, "ratio_to_ndcg@10": med / t_ndcg}
        print(f"  {name:14s} {med:8.4f} s   {med / t_ndcg:5.2f}x NDCG@10")
    t_rbo = out["rbo@full"]["median_s"]
    # the tie-aware kernel on --tie-rows users whose items are tied in
    # pairs of positions in both runs, extrapolated linearly to all
    rows = min(args.tie_rows, w.n_rows)
    a_rows = np.asarray(run_a[:rows])
    b_rows = np.asarray(run_b[:rows])
    width = a_rows.shape[1]
    # local item ids: an item's position in run a; its score: minus half its position
    scores_a = np.tile(-(np.arange(width) // 2).astype(np.float64), (rows, 1))
    scores_b = np.empty((rows, width))
    for i in range(rows):
        where = {int(item): j for j, item in enumerate(a_rows[i])}
        for j, item in enumerate(b_rows[i]):
            scores_b[i, where[int(item)]] = -(j // 2)
    ta = Rankings.from_scores(scores_a, ties="keep")
    tb = Rankings.from_scores(scores_b, ties="keep")
    t_tied, times = timed(lambda: rbo(ta, tb, p=0.9, ties="a"), max(1, args.repeats // 2))
    t_tied_all = t_tied * w.n_rows / rows
    out["rbo_ties_a"] = {"rows_timed": rows, "median_s": t_tied, "times": times,
                         "extrapolated_s": t_tied_all, "ratio_to_ndcg@10": t_tied_all / t_ndcg}
    print(f"  rbo ties='a'   {t_tied_all:8.3f} s   {t_tied_all / t_ndcg:5.1f}x NDCG@10 "
          f"(extrapolated from {rows:,} users tied in pairs)")
    try:
        from rbo import RankingSimilarity
    except ImportError:
        out["rbo_package"] = None
    else:
        rows = min(args.peer_rows, w.n_rows)
        a_list, b_list = run_a[:rows].tolist(), run_b[:rows].tolist()
        t0 = time.perf_counter()
        theirs = [RankingSimilarity(x, y).rbo_ext(p=0.9) for x, y in zip(a_list, b_list)]
        t_peer = (time.perf_counter() - t0) * w.n_rows / rows
        ours = rbo(ra[:rows], rb[:rows], p=0.9).ext
        max_diff = float(np.max(np.abs(np.asarray(theirs) - ours)))
        out["rbo_package"] = {"rows_timed": rows, "extrapolated_s": t_peer, "max_abs_diff": max_diff,
                              "speedup": t_peer / t_rbo}
        print(f"  rbo package (ext)   {t_peer:8.1f} s   (extrapolated from {rows:,} users; "
              f"rankereval {t_peer / t_rbo:,.0f}x faster; max |diff| {max_diff:.1e})")
    os.makedirs(args.results_dir, exist_ok=True)
    with open(os.path.join(args.results_dir, f"agreement-{args.size}.json"), "w") as fh:
        json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
