"""Speed of reading a large TREC run + qrels and scoring NDCG@10 (rankereval.io).

The target: a 10M-line run (10,000 queries x 1,000 documents) and its qrels, read and scored
with NDCG@10 in under 10 seconds.

    python benchmarks/bench_io.py                       # 10k x 1000, files cached in a temp dir
    python benchmarks/bench_io.py --queries 1000        # smaller
    python benchmarks/bench_io.py --shuffle --gzip      # lines in random order, gzip files
    python benchmarks/bench_io.py --parser pandas       # without pyarrow

The generated files are synthetic and deterministic (numpy seed 0): query ids ``100000`` ...,
document ids ``D<n>`` drawn from a 2M-document collection, scores with 6 decimals, each
query's lines together and best first (as TREC runs are written; ``--shuffle`` shuffles all
lines), 20 graded judgements per query. They are written once to ``--dir`` and reused.

Prints wall-clock and CPU seconds of each step and the total; ``--repeat`` runs it again.
"""
import argparse
import gzip
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def generate(directory, n_queries, n_docs, shuffle, gz, collection=2_000_000):
    suffix = f"{n_queries}x{n_docs}{'-shuffled' if shuffle else ''}.txt{'.gz' if gz else ''}"
    run_path = os.path.join(directory, f"run-{suffix}")
    qrels_path = os.path.join(directory, f"qrels-{suffix}")
    if os.path.exists(run_path) and os.path.exists(qrels_path):
        return qrels_path, run_path
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    run_lines, qrels_lines = [], []
    ranks = np.arange(1, n_docs + 1)
    for q in range(n_queries):
        qid = str(100000 + q)
        docs = np.unique(rng.integers(0, collection, size=n_docs + n_docs // 2))
        docs = rng.permutation(docs)[:n_docs]
        scores = np.sort(rng.random(docs.size) * 20)[::-1]
        run_lines.extend(f"{qid} Q0 D{d} {r} {s:.6f} bench\n" for d, r, s in zip(docs.tolist(), ranks.tolist(),
                                                                                   scores.tolist()))
        judged = np.unique(np.concatenate([rng.choice(docs[:100], 10, replace=False), rng.integers(0, collection, 10)]))
        grades = rng.integers(0, 4, judged.size)
        qrels_lines.extend(f"{qid} 0 D{d} {g}\n" for d, g in zip(judged.tolist(), grades.tolist()))
    if shuffle:
        order = rng.permutation(len(run_lines))
        run_lines = [run_lines[i] for i in order]
    opener = (lambda p: gzip.open(p, "wt", compresslevel=1)) if gz else (lambda p: open(p, "w"))
    for path, lines in ((run_path, run_lines), (qrels_path, qrels_lines)):
        with opener(path + ".part") as fh:
            fh.writelines(lines)
        os.replace(path + ".part", path)
    print(f"generated {len(run_lines):,} run lines and {len(qrels_lines):,} judgements in "
          f"{time.perf_counter() - t0:.1f} s -> {directory}")
    return qrels_path, run_path


class Timer:
    def __init__(self):
        self.rows = []

    def __call__(self, label, fn):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        self.rows.append((label, time.perf_counter() - w0, time.process_time() - c0))
        return out

    def report(self):
        for label, wall, cpu in self.rows:
            print(f"  {label:<28} wall {wall:7.2f} s   cpu {cpu:7.2f} s")
        print(f"  {'total':<28} wall {sum(r[1] for r in self.rows):7.2f} s   cpu {sum(r[2] for r in self.rows):7.2f} s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs", type=int, default=1000, help="documents per query")
    p.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "rankereval-bench-io"))
    p.add_argument("--shuffle", action="store_true", help="shuffle the run lines")
    p.add_argument("--gzip", action="store_true", help="gzip the files")
    p.add_argument("--parser", choices=("auto", "pandas"), default="auto",
                   help="auto: pyarrow when installed; pandas: force the pandas C parser")
    p.add_argument("--tie-break", default="trec_eval")
    p.add_argument("--repeat", type=int, default=1)
    args = p.parse_args(argv)

    os.makedirs(args.dir, exist_ok=True)
    qrels_path, run_path = generate(args.dir, args.queries, args.docs, args.shuffle, args.gzip)

    import rankereval
    from rankereval import NDCG
    from rankereval import io as rio
    from rankereval.io._source import _PARSER, _pandas, _pyarrow

    if args.parser == "pandas":
        _PARSER.set("pandas")  # for the rest of this script
    print(f"rankereval {rankereval.__version__}, numpy {np.__version__}, parser "
          f"{'pyarrow' if _pyarrow() is not None else 'pandas'}, {os.cpu_count()} CPUs, "
          f"run {os.path.getsize(run_path) / 1e6:.0f} MB")
    for i in range(args.repeat):
        t = Timer()
        t("import pandas/pyarrow", lambda: (_pandas(), _pyarrow()))
        data = t("read_trec", lambda: rio.read_trec(qrels_path, run_path, tie_break=args.tie_break, progress=False))
        mean = t("NDCG@10 (score + mean)", lambda: data.mean(NDCG(10)))
        print(f"run {i + 1}: {data.n_queries} queries, {data.report.n_run_lines:,} run lines, "
              f"{len(data.doc_ids):,} documents, NDCG@10 = {mean:.4f}")
        t.report()


if __name__ == "__main__":
    main()
