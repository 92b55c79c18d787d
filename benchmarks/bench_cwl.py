"""Benchmark of the C/W/L family and Compat (rankereval.metrics._cwl) next to NDCG@10, and
against cwl_eval's and ir_measures' own code on the same queries.

Per query, median of ``--repeats``: rankereval's ``score`` of each measure over ``--queries``
rankings of ``--depth`` items (grades 0-3, scaled by max_grade=3), NDCG@10 on the same arrays
as the reference point; cwl_eval's Python API (``Ranking`` + its measure classes, what its
command line runs per topic) on the first ``--peer-queries`` of them; ir_measures' ``Compat``
likewise. The values of both are checked equal (1e-9) on the shared queries.

Usage: ``python benchmarks/bench_cwl.py [--queries 20000] [--depth 100] [--repeats 3]``.
"""
import argparse
import logging
import statistics
import time

import numpy as np


def _time(fn, repeats):
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=20000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--peer-queries", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    import rankereval as rk

    rng = np.random.default_rng(0)
    n, d, n_items = args.queries, args.depth, 1000
    grades = np.where(rng.random((n, n_items)) < 0.05, rng.integers(1, 4, size=(n, n_items)), 0).astype(float)
    ranks = np.argsort(-(grades + rng.normal(0, 1.0, size=grades.shape)), axis=1)[:, :d]
    y_true = rk.NumericLabels.from_matrix(grades)
    y_pred = rk.Rankings.from_ranked_indices(ranks)
    measures = [rk.SDCG(10, max_grade=3), rk.INST(max_grade=3), rk.INSQ(max_grade=3), rk.BPM(10, max_grade=3),
                rk.NERR8(10, max_grade=3), rk.NERR9(10, max_grade=3), rk.NERR10(max_grade=3),
                rk.NERR11(max_grade=3), rk.Compat()]
    base = _time(lambda: rk.NDCG(10).score(y_true, y_pred), args.repeats)
    print(f"{n} queries x {d} ranked; per query (microseconds)")
    print(f"{'NDCG@10 (reference)':28s} {1e6 * base / n:9.2f}")
    ours = {}
    for m in measures:
        ours[m] = _time(lambda m=m: m.score(y_true, y_pred), args.repeats) / n
        print(f"{m.name:28s} {1e6 * ours[m]:9.2f}  ({ours[m] * n / base:.1f}x NDCG@10)")

    try:
        from cwl.ruler.ranking import Ranking
        from cwl.ruler.measures.cwl_bpm import BPMCWLMetric
        from cwl.ruler.measures.cwl_dcg import NDCGCWLMetric
        from cwl.ruler.measures.cwl_insq import INSQCWLMetric
        from cwl.ruler.measures.cwl_inst import INSTCWLMetric
        from cwl.ruler.measures.cwl_nerr import NERReq8CWLMetric, NERReq9CWLMetric, NERReq10CWLMetric, NERReq11CWLMetric
    except ImportError:
        print("cwl_eval not installed: no peer timings")
        return
    logging.getLogger("cwl").disabled = True
    peers = [NDCGCWLMetric(10), INSTCWLMetric(1.0), INSQCWLMetric(1.0), BPMCWLMetric(1.0, 10), NERReq8CWLMetric(10),
             NERReq9CWLMetric(10), NERReq10CWLMetric(0.9), NERReq11CWLMetric(1.0)]
    q = min(args.peer_queries, n)
    y_true_q, y_pred_q = rk.NumericLabels.from_matrix(grades[:q]), rk.Rankings.from_ranked_indices(ranks[:q])
    rankings = [Ranking(str(i), list(grades[i, ranks[i]] / 3.0), [1.0] * d) for i in range(q)]
    print(f"\ncwl_eval's Python API on the first {q} queries, per query (microseconds)")
    for m, peer in zip(measures, peers):
        values = []
        t = time.perf_counter()
        for r in rankings:
            values.append(peer.measure(r))
        per = (time.perf_counter() - t) / q
        got = m.score(y_true_q, y_pred_q)
        assert np.allclose(got, values, rtol=1e-9, atol=1e-9), m.name
        print(f"{m.name:28s} {1e6 * per:9.2f}  (rankereval {per / ours[m]:.0f}x faster; values equal)")
    try:
        from ir_measures.providers.compat_provider import compatibility
    except ImportError:
        return
    runs = [{f"d{j}": float(d - r) for r, j in enumerate(ranks[i])} for i in range(q)]
    qrels = [{f"d{j}": int(grades[i, j]) for j in np.nonzero(grades[i])[0]} for i in range(q)]
    t = time.perf_counter()
    values = [compatibility(qrels[i], runs[i], 0.95, True) for i in range(q)]
    per = (time.perf_counter() - t) / q
    got = measures[-1].score(y_true_q, y_pred_q)
    assert np.allclose(np.nan_to_num(got), values, rtol=1e-9, atol=1e-9)
    print(f"{'compat (ir_measures)':28s} {1e6 * per:9.2f}  (rankereval {per / ours[measures[-1]]:.0f}x faster; "
          "values equal)")


if __name__ == "__main__":
    main()
