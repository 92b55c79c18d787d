"""Instruction counts of the metric kernel's dispatch, this build against another (main's).

The metric kernel dispatches on the reduction id (``rankereval/metrics/_metric_ids.pxd``); this
counts the instructions of ``Metric.score`` and ``Metric.mean`` on workload (a)
(``workloads.recsys``, the ``--size`` preset) under ``valgrind --tool=callgrind``, one
thread (``OMP_NUM_THREADS=1``), for each Python given, and subtracts a baseline run that
imports rankereval, builds the same inputs and makes one first call (which imports what
scoring needs) without the repeated calls. Instruction counts do not
depend on the machine's load, unlike timings.

    python benchmarks/bench_kernel_ids.py --python /work/venv/bin/python --python .venv/bin/python=.

Each Python imports the rankereval it has installed, or with ``PYTHON=DIR`` the one of the
source tree ``DIR`` (an in-place build, ``python setup.py build_ext --inplace``).
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

#: the metrics timed on (a) by the benchmark suite (benchmarks/README.md), and the five together
CASES = ["NDCG(10)", "Precision(10)", "ReciprocalRank(10)", "HitRate(10)", "Recall(100)", "together"]

SCRIPT = """
import sys
sys.path.insert(0, {here!r})
import numpy as np
import rankereval
from rankereval import BinaryLabels, Rankings, NDCG, Precision, ReciprocalRank, HitRate, Recall
from rankereval import evaluate
import workloads
w = workloads.make("recsys", {size!r})
y_true = BinaryLabels.from_matrix(w.labels)
y_pred = Rankings.from_ranked_indices(w.rankings)
case = {case!r}
if case == "together":
    metrics = [NDCG(10), Precision(10), ReciprocalRank(10), HitRate(10), Recall(100)]
    run = lambda: evaluate(y_true, y_pred, metrics)
elif case != "baseline":
    m = eval(case)
    def run():
        m.score(y_true, y_pred)
        m.mean(y_true, y_pred)
if case != "baseline":
    run()  # the first call imports what scoring needs: counted in the case's baseline too
    for _ in range({repeat}):
        run()
"""


def instructions(python, case, size, repeat, tool=True):
    """Instructions (callgrind's Ir) of the whole process running ``case`` (``tool=False``:
    run it without valgrind, count nothing)."""
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    python, _, src = python.partition("=")
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "cg.out")
        code = SCRIPT.format(here=HERE, size=size, case=case, repeat=repeat)
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] if tool else []
        proc = subprocess.run(valgrind + [python, "-c", code], cwd=tmp, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{python} {case}: {proc.stderr[-2000:]}")
        if not tool:
            return None
        found = re.search(r"Collected : (\d+)", proc.stderr)
        return int(found.group(1))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", action="append", required=True,
                    help="a Python with a rankereval installed (give two: the reference first)")
    ap.add_argument("--size", default="tiny", choices=["tiny", "small", "full"])
    ap.add_argument("--repeat", type=int, default=3, help="score + mean calls per case")
    ap.add_argument("--cases", default=",".join(CASES))
    args = ap.parse_args(argv)
    cases = args.cases.split(",")
    for py in args.python:  # a first run writes the bytecode caches, which later runs read
        instructions(py, "together", "tiny", 1, tool=False)
    print(f"workload (a) at size {args.size!r}, {args.repeat} x (score + mean), OMP_NUM_THREADS=1; "
          "instructions beyond import, generation and a first call (its baseline, run apart)")
    print(f"{'case':<22}" + "".join(f"{os.path.basename(os.path.dirname(os.path.dirname(py.partition('=')[0]))):>16}"
                                    for py in args.python) + ("   ratio" if len(args.python) == 2 else ""))
    for case in cases:
        counts = [instructions(py, case, args.size, args.repeat) - instructions(py, case, args.size, 0)
                  for py in args.python]
        line = f"{case:<22}" + "".join(f"{c / 1e6:>15.2f}M" for c in counts)
        if len(counts) == 2:
            line += f"   {counts[1] / counts[0]:.4f}"
        print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
