"""Benchmark of the intent-aware diversity measures against pyndeval (ndeval's C, as ir_measures
runs it), on the same synthetic TREC Web-like data in one process.

The data: ``--queries`` queries of 3-8 intents, each intent with judged documents drawn from a
pool of ``--judged`` documents per query (a fifth of them relevant to it), and a run of
``--depth`` documents per query (relevant ones mixed with unjudged ones). Timed (median of
``--repeats``, calls alternating): rankereval's ``evaluate`` of ndeval's 21 default measures
(ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG, P-IA, S-recall @5/10/20, NRBP, nNRBP, MAP-IA) from
already-read labels and rankings, and pyndeval's ``RelevanceEvaluator.evaluate`` of the same
measures from its already-built evaluator (its qrels parsed once). The values are compared
(ndeval's 0 for a query without relevant judgement is our NaN).

Usage: ``python benchmarks/bench_diversity.py [--queries 2000] [--repeats 3]``; writes
``benchmarks/results/diversity.json``.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if any(f.startswith("_kernels") and f.endswith((".so", ".pyd")) for f in os.listdir(os.path.join(ROOT, "rankereval"))):
    sys.path.insert(0, ROOT)  # the in-place build of this checkout


def make(n_queries, judged, depth, seed=0):
    """{query: {intent: {doc: grade}}} and {query: {doc: score}}."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        pool = [f"q{q}d{i}" for i in range(judged)]
        by_intent = {}
        for s in range(int(rng.integers(3, 9))):
            chosen = rng.choice(judged, size=max(1, judged // 5), replace=False)
            by_intent[str(s + 1)] = {pool[i]: int(rng.integers(0, 3)) for i in chosen}
        qrels[f"q{q}"] = by_intent
        docs = pool[: depth // 2] + [f"q{q}u{i}" for i in range(depth - min(depth // 2, judged))]
        rng.shuffle(docs)
        run[f"q{q}"] = {d: float(depth - r) for r, d in enumerate(docs[:depth])}
    return qrels, run


MEASURES = [f"{m}@{k}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG") for k in (5, 10, 20)] + \
    ["NRBP", "nNRBP", "MAP-IA"] + [f"{m}@{k}" for m in ("P-IA", "strec") for k in (5, 10, 20)]
OURS = {"ERR-IA": "ERR_IA", "nERR-IA": "nERR_IA", "alpha-DCG": "alpha_DCG", "alpha-nDCG": "alpha_nDCG",
        "P-IA": "P_IA", "strec": "StRecall", "NRBP": "NRBP", "nNRBP": "nNRBP", "MAP-IA": "AP_IA"}


def ours(name):
    base, _, k = name.partition("@")
    return OURS[base] + (f"@{k}" if k else "")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--judged", type=int, default=200)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    args = parser.parse_args(argv)

    import rankereval as rk
    from rankereval.io import from_dicts

    qrels, run = make(args.queries, args.judged, args.depth)
    data = from_dicts(qrels, run, tie_break="docid")
    metrics = [ours(m) for m in MEASURES]
    result = {"queries": args.queries, "judged": args.judged, "depth": args.depth, "machine": platform.machine(),
              "rankereval": rk.__version__, "times": {}}

    def time_ours():
        return rk.evaluate(data, metrics, nan_handling="zerofill").scores

    timers = {"rankereval": time_ours}
    try:
        import pyndeval
    except ImportError:
        pyndeval = None
    if pyndeval is not None:
        qrel_tuples = [(q, s, d, g) for q, by in qrels.items() for s, docs in by.items() for d, g in docs.items()]
        run_tuples = [(q, d, sc) for q, docs in run.items() for d, sc in docs.items()]
        evaluator = pyndeval.RelevanceEvaluator(qrel_tuples, MEASURES)

        def time_pyndeval():
            return evaluator.evaluate(run_tuples)

        timers["pyndeval"] = time_pyndeval
    samples = {name: [] for name in timers}
    values = {}
    for _ in range(args.repeats):
        for name, fn in timers.items():
            t0 = time.perf_counter()
            values[name] = fn()
            samples[name].append(time.perf_counter() - t0)
    for name, ts in samples.items():
        result["times"][name] = statistics.median(ts)
        print(f"{name:>12}: {statistics.median(ts) * 1e3:9.1f} ms ({args.queries} queries, {len(MEASURES)} measures)")
    if pyndeval is not None:
        ratio = result["times"]["pyndeval"] / result["times"]["rankereval"]
        result["speedup"] = ratio
        print(f"rankereval is {ratio:.1f}x pyndeval")
        got = np.nan_to_num(values["rankereval"])
        want = np.array([[values["pyndeval"][str(q)][m] for m in MEASURES] for q in data.query_ids])
        diff = float(np.max(np.abs(got - np.nan_to_num(want)))) if got.size else 0.0
        result["max_abs_difference"] = diff
        print(f"largest difference from pyndeval: {diff:.2e}")
        if diff > 1e-9:
            print("values differ from pyndeval", file=sys.stderr)
            return 1
    os.makedirs(args.results_dir, exist_ok=True)
    with open(os.path.join(args.results_dir, "diversity.json"), "w") as fh:
        json.dump(result, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
