"""Grouped learning-to-rank arrays: ``Rankings.from_groups`` / ``*Labels.from_groups``.

Run from the repository root after building the extensions::

    python benchmarks/bench_groups.py                        # 10M rows, 100k queries
    python benchmarks/bench_groups.py --rows 1000000 --queries 10000 --repeats 3

The workload is what a LightGBM / XGBoost user holds after predicting a validation set:
``--rows`` flat rows, ``--queries`` queries of random sizes (at least 1 row each,
multinomial, NumPy ``PCG64`` seed 0), float64 scores (standard normal) and grades 0-4.
Side by side in one run, the cases taking turns call by call (median of ``--repeats``):

* ``np.argsort(scores)``: one sort of the scores, the yardstick (the issue's goal: at most
  2x of it for 10M rows / 100k queries);
* ``np.lexsort((-scores, qid))``: what one writes by hand (a full stable sort by query,
  then score);
* ``Rankings.from_groups`` with a sorted ``qid`` (XGBoost's layout), with ``group=`` sizes
  (LightGBM's), and with the rows shuffled (a ``qid`` in no order: one stable sort of the
  ids), each for ``k=None`` (whole rankings) and ``k=10``;
* ``BinaryLabels.from_groups`` and ``NumericLabels.from_groups`` (sorted ``qid``);
* ``rankereval.ndcg_score(k=10, qid=...)`` on the scores rounded to one decimal (many
  ties), with ``ignore_ties=True`` (top-10 selection) and by default (ties averaged as
  scikit-learn does: whole rankings and one more pass): the cost of the averaging.

Numbers go to ``--json`` (default ``benchmarks/results/groups.json``) with the load average,
since this is a shared machine: compare the ratios of one run, not times across runs.
"""
import argparse
import glob
import json
import os
import platform
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
if glob.glob(os.path.join(ROOT, "rankereval", "data", "_topk*.so")) + glob.glob(os.path.join(ROOT, "rankereval", "data", "_topk*.pyd")):
    sys.path.insert(0, ROOT)
elif sys.path and os.path.abspath(sys.path[0] or ".") == os.path.abspath(ROOT):
    sys.path.pop(0)

import numpy as np  # noqa: E402

import rankereval  # noqa: E402
from rankereval import BinaryLabels, NumericLabels, Rankings, ndcg_score  # noqa: E402


def workload(n_rows, n_queries, seed=0):
    rng = np.random.default_rng(seed)
    sizes = rng.multinomial(n_rows - n_queries, np.full(n_queries, 1.0 / n_queries)) + 1
    qid = np.repeat(np.arange(n_queries, dtype=np.int64), sizes)
    scores = rng.standard_normal(n_rows)
    grades = rng.integers(0, 5, n_rows).astype(np.float64)
    shuffle = rng.permutation(n_rows)
    return sizes, qid, scores, grades, qid[shuffle], scores[shuffle]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=os.path.join(ROOT, "benchmarks", "results", "groups.json"))
    args = ap.parse_args(argv)

    sizes, qid, scores, grades, qid_shuffled, scores_shuffled = workload(args.rows, args.queries)
    scores_1dp = np.round(scores, 1)  # scores with ties, for the cost of averaging over them
    cases = {
        "np.argsort(scores)": lambda: np.argsort(scores),
        "np.lexsort((-scores, qid))": lambda: np.lexsort((-scores, qid)),
        "from_groups qid sorted, k=None": lambda: Rankings.from_groups(scores, qid),
        "from_groups qid sorted, k=10": lambda: Rankings.from_groups(scores, qid, k=10),
        "from_groups group=, k=None": lambda: Rankings.from_groups(scores, group=sizes),
        "from_groups group=, k=10": lambda: Rankings.from_groups(scores, group=sizes, k=10),
        "from_groups qid shuffled, k=None": lambda: Rankings.from_groups(scores_shuffled, qid_shuffled),
        "from_groups qid shuffled, k=10": lambda: Rankings.from_groups(scores_shuffled, qid_shuffled, k=10),
        "BinaryLabels.from_groups": lambda: BinaryLabels.from_groups(grades, qid, relevance_level=2),
        "NumericLabels.from_groups": lambda: NumericLabels.from_groups(grades, qid),
        "ndcg_score k=10, ignore_ties": lambda: ndcg_score(grades, scores_1dp, k=10, qid=qid, ignore_ties=True),
        "ndcg_score k=10, ties averaged": lambda: ndcg_score(grades, scores_1dp, k=10, qid=qid),
    }
    times = {name: [] for name in cases}
    for name, f in cases.items():  # warm-up: first-touch page faults and imports
        f()
    for _ in range(args.repeats):
        for name, f in cases.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    base = float(np.median(times["np.argsort(scores)"]))
    print(f"{args.rows:,} rows, {args.queries:,} queries, float64 scores; median of {args.repeats} "
          f"(load average {os.getloadavg()[0]:.1f})")
    print(f"{'case':40s} {'seconds':>9s} {'x argsort':>10s}")
    for name, ts in times.items():
        med = float(np.median(ts))
        print(f"{name:40s} {med:9.3f} {med / base:10.2f}")
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"rows": args.rows, "queries": args.queries, "repeats": args.repeats, "times": times,
                   "numpy": np.__version__, "rankereval": rankereval.__version__,
                   "rankereval_path": os.path.dirname(rankereval.__file__),
                   "machine": platform.machine(), "cpu_count": os.cpu_count(),
                   "loadavg": os.getloadavg()}, f, indent=1)


if __name__ == "__main__":
    main()
