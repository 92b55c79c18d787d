"""Benchmark of the metrics over tied scores (``Metric.score(..., ties=...)``) on workload (a).

Each ranking of workload (a) gets scores that fall by rank, rounded so that about a third of
the positions share their score with a neighbour; the scores are a sparse matrix (one row per
user, the ranked items stored). From the same matrix, in one run and alternating call by call:

* the tie-breaking path: ``Rankings.from_scores(scores)`` (equal scores by item id), then
  ``metric.score(y, rankings)``;
* the tie-aware path: ``Rankings.from_scores(scores, ties="keep")``, then
  ``metric.score(y, rankings, ties="expected")`` (and the optimistic and pessimistic orders),

for NDCG@10, AP@100 and RR@10. Target: the expected value costs at most 2x the
tie-breaking score. Writes ``benchmarks/results/ties.json``.
Usage: ``python benchmarks/bench_ties.py [--size tiny|small|full] [--repeats 5]``.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402

METRICS = ["ndcg@10", "ap@100", "rr@10"]
MODES = ("expected", "optimistic", "pessimistic")


def tied_scores(rankings, n_items, fraction=1 / 3, seed=0):
    """Sparse scores of the ranked items, falling by rank, with runs of equal scores: each
    position ties the one before it with probability ``t``, chosen so that the share of
    positions in a tied group, ``1 - (1 - t)^2`` away from the ends, is ``fraction``."""
    n_rows, length = rankings.shape
    t = 1.0 - (1.0 - fraction) ** 0.5
    rng = np.random.default_rng(seed)
    tie = rng.random((n_rows, length)) < t
    tie[:, 0] = False
    # the score of a position: the number of distinct scores below it (rounded levels)
    steps = np.cumsum(~tie, axis=1)
    scores = (steps[:, -1:] - steps + 1).astype(np.float64)
    rows = np.repeat(np.arange(n_rows), length)
    return sp.csr_array((scores.ravel(), (rows, rankings.ravel())), shape=(n_rows, n_items))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=("tiny", "small", "full"), default="full")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--results-dir", default=os.path.join(os.path.dirname(__file__), "results"))
    p.add_argument("--name", default="ties")
    args = p.parse_args(argv)

    import rankereval as rk
    from rankereval.metrics import from_name

    w = workloads.make("recsys", args.size)
    n_items = w.labels.shape[1]
    y = rk.BinaryLabels.from_matrix(w.labels)
    scores = tied_scores(w.rankings, n_items)
    metrics = [from_name(m) for m in METRICS]

    broken = rk.Rankings.from_scores(scores)
    kept = rk.Rankings.from_scores(scores, ties="keep")
    assert broken.to_list()[:50] == kept.to_list()[:50]  # the same order: only the ties are recorded
    lengths = kept.lengths
    tied = kept.ties
    in_group = tied.copy()
    in_group[:, 1:] |= tied[:, :-1]
    tied_share = float(in_group.sum() / lengths.sum())

    build = {"break": [], "keep": []}
    times = {m.name: {"break": [], **{mode: [] for mode in MODES}} for m in metrics}
    for _ in range(args.repeats):
        for how in ("break", "keep"):
            t0 = time.perf_counter()
            rk.Rankings.from_scores(scores, ties=how)
            build[how].append(time.perf_counter() - t0)
        for m in metrics:
            m.score(y, broken)  # warm-up of this metric's code paths
            t0 = time.perf_counter()
            m.score(y, broken)
            times[m.name]["break"].append(time.perf_counter() - t0)
            for mode in MODES:
                t0 = time.perf_counter()
                m.score(y, kept, ties=mode)
                times[m.name][mode].append(time.perf_counter() - t0)

    med = {name: {k: statistics.median(v) for k, v in t.items()} for name, t in times.items()}
    values = {m.name: {"break": float(np.nanmean(m.score(y, broken))),
                       **{mode: float(np.nanmean(m.score(y, kept, ties=mode))) for mode in MODES}}
              for m in metrics}
    result = {
        "name": "ties", "workload": w.name, "size": args.size, "n_rows": w.n_rows,
        "tied_positions_share": tied_share, "metrics": METRICS, "repeats": args.repeats,
        "environment": {"python": platform.python_version(), "numpy": np.__version__,
                        "rankereval": rk.__version__, "cpus": os.cpu_count()},
        "rankings_s": {k: statistics.median(v) for k, v in build.items()},
        "score_s": med,
        "ratio_expected_to_break": {n: t["expected"] / t["break"] for n, t in med.items()},
        "ratio_optimistic_to_break": {n: t["optimistic"] / t["break"] for n, t in med.items()},
        "means": values,
        "times": {"rankings": build, "score": times},
    }
    print(f"workload {w.name}: {w.n_rows:,} rankings, {tied_share:.1%} of the positions tied")
    print(f"  Rankings.from_scores  break {result['rankings_s']['break'] * 1e3:8.1f} ms   "
          f"keep {result['rankings_s']['keep'] * 1e3:8.1f} ms")
    for name, t in med.items():
        print(f"  {name:8s} break {t['break'] * 1e3:7.1f} ms  expected {t['expected'] * 1e3:7.1f} ms "
              f"({t['expected'] / t['break']:.2f}x)  optimistic {t['optimistic'] * 1e3:7.1f} ms  "
              f"pessimistic {t['pessimistic'] * 1e3:7.1f} ms")
    os.makedirs(args.results_dir, exist_ok=True)
    with open(os.path.join(args.results_dir, f"{args.name}.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
