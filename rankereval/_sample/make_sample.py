"""Generate the sample TREC pair shipped with rankereval (``qrels.txt`` and ``run.txt``).

How the sample was made: it is synthetic, written by this script and nothing else (no
real collection, no downloaded data). Running ``python rankereval/_sample/make_sample.py``
rewrites both files byte for byte; the only randomness is Python's ``random.Random(20240601)``
Mersenne Twister, of which only ``random()`` is used (its output is the same on every
Python version and platform).

The simulation, per query ``q01`` ... ``q20``:

* a pool of 80 distinct documents is drawn from a collection of 5000 ids ``d0001`` ...
  ``d5000``;
* each pooled document gets a hidden relevance grade: 0 (85%), 1 (8%), 2 (4.5%) or 3 (2.5%);
  every query has at least one document with grade >= 1;
* a retrieval system scores each pooled document as ``0.3 * grade`` plus noise (the sum of
  three uniform variables), rounded to 4 decimals, so that the ranking is good but not
  perfect and occasional ties occur;
* the run lists the 50 best-scored documents (``query Q0 docid rank score sample``);
* the qrels judge, as TREC pooling does, the top 20 documents of the run plus every pooled
  document with grade >= 1 (``query 0 docid grade``), so some relevant documents are not
  retrieved and the judgements contain graded and non-relevant entries.

``rankereval example`` evaluates this pair.
"""
import os
import random

SEED = 20240601
N_QUERIES = 20
POOL = 80
COLLECTION = 5000
RUN_DEPTH = 50
JUDGE_DEPTH = 20
GRADES = ((0.85, 0), (0.93, 1), (0.975, 2), (1.0, 3))  # cumulative probability, grade


def make(rng):
    """Return (qrels lines, run lines) as lists of str."""
    qrels, run = [], []
    for qn in range(1, N_QUERIES + 1):
        qid = f"q{qn:02d}"
        pool, seen = [], set()
        while len(pool) < POOL:
            d = 1 + int(rng.random() * COLLECTION)
            if d not in seen:
                seen.add(d)
                pool.append(f"d{d:04d}")
        grades = {}
        for doc in pool:
            u = rng.random()
            grades[doc] = next(g for p, g in GRADES if u < p)
        if not any(grades.values()):
            grades[pool[0]] = 1
        scores = {doc: round(0.3 * grades[doc] + rng.random() + rng.random() + rng.random(), 4)
                  for doc in pool}
        # best first; equal scores keep the pool order (the run file is what counts)
        ranked = sorted(pool, key=lambda doc: -scores[doc])[:RUN_DEPTH]
        for rank, doc in enumerate(ranked, 1):
            run.append(f"{qid} Q0 {doc} {rank} {scores[doc]:.4f} sample\n")
        judged = set(ranked[:JUDGE_DEPTH]) | {doc for doc in pool if grades[doc] > 0}
        for doc in sorted(judged):
            qrels.append(f"{qid} 0 {doc} {grades[doc]}\n")
    return qrels, run


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    qrels, run = make(random.Random(SEED))
    with open(os.path.join(here, "qrels.txt"), "w", newline="\n") as fh:
        fh.writelines(qrels)
    with open(os.path.join(here, "run.txt"), "w", newline="\n") as fh:
        fh.writelines(run)
    print(f"wrote {len(qrels)} judgements and {len(run)} run lines to {here}")


if __name__ == "__main__":
    main()
