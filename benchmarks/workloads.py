"""Deterministic synthetic workloads for the benchmark suite (see ``benchmarks/README.md``).

Every workload is a pair ``(labels, rankings)`` in the form a rankereval user starts from:

* ``labels``: a ``scipy.sparse.csr_array`` of shape ``(n_rows, n_items)``; a stored entry is a
  relevant item (binary: 1, graded: 1, 2 or 3); everything not stored is not relevant.
* ``rankings``: an ``int64`` array of shape ``(n_rows, length)``, item ids best first.

The generators are vectorised and seeded, so one seed gives the same arrays on every run
and machine (NumPy's ``PCG64`` stream is stable across platforms).
"""
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp


@dataclass
class Workload:
    """One benchmark workload: labels, rankings and a few facts about them."""

    name: str
    description: str
    labels: sp.csr_array          # binary (recsys) or graded 1..3 (ir); zeros are not stored
    rankings: np.ndarray          # int64, (n_rows, length)
    graded: bool
    params: dict = field(default_factory=dict)

    @property
    def n_rows(self):
        return self.rankings.shape[0]

    @property
    def input_nbytes(self):
        """Bytes of the input arrays (CSR data + indices + indptr, and the rankings)."""
        m = self.labels
        return int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes + self.rankings.nbytes)

    def n_relevant(self):
        """Relevant items per row (all stored entries are relevant)."""
        return np.diff(self.labels.indptr).astype(np.int64)

    def head(self, n):
        """The first ``n`` rows (rows are i.i.d., so this is a random subsample)."""
        if n >= self.n_rows:
            return self
        return Workload(
            self.name, self.description, self.labels[:n], self.rankings[:n], self.graded, dict(self.params)
        )

    def arrays(self):
        """Plain arrays, for saving with ``numpy.savez``."""
        m = self.labels
        return {
            "data": m.data, "indices": m.indices, "indptr": m.indptr,
            "shape": np.asarray(m.shape, dtype=np.int64), "rankings": self.rankings,
        }

    @classmethod
    def from_arrays(cls, name, graded, arrays):
        shape = tuple(int(s) for s in arrays["shape"])
        labels = sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
        return cls(name, "", labels, arrays["rankings"], bool(graded))


def _distinct_rows(rng, n_rows, length, n_items):
    """``n_rows`` rows of ``length`` distinct ids in ``[0, n_items)``, in random order.

    Sorted draws from ``[0, n_items - length]`` plus ``0, 1, ..., length - 1`` are strictly
    increasing, hence distinct; each row is then shuffled independently.
    """
    draws = rng.integers(0, n_items - length + 1, size=(n_rows, length), dtype=np.int64)
    draws.sort(axis=1)
    draws += np.arange(length, dtype=np.int64)
    return rng.permuted(draws, axis=1, out=draws)


def _hit_positions(rng, size, length, power):
    """Rank positions in ``[0, length)`` biased to the top (a ranker better than random)."""
    return np.minimum((length * rng.random(size) ** power).astype(np.int64), length - 1)


def _csr_from_pairs(rows, items, values, shape):
    """CSR with sorted indices; of duplicate (row, item) pairs the first one is kept."""
    keys = rows * np.int64(shape[1]) + items
    keys, first = np.unique(keys, return_index=True)
    rows, items = np.divmod(keys, np.int64(shape[1]))
    indptr = np.zeros(shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=shape[0]), out=indptr[1:])
    idx_dtype = np.int32 if max(shape[1], keys.size) < 2 ** 31 else np.int64
    return sp.csr_array((values[first], items.astype(idx_dtype), indptr.astype(idx_dtype)), shape=shape)


def recsys(n_users=200_000, n_items=100_000, length=100, min_pos=1, max_pos=20, p_hit=0.3, seed=0):
    """Workload (a), top-N recommendation.

    Every user gets a top-``length`` list of distinct items and ``min_pos..max_pos`` held-out
    positives (uniform). Each positive is, with probability ``p_hit``, one of the user's
    recommended items (at a position biased to the top), otherwise a uniformly random item.
    Labels are binary (``float32`` ones, as in implicit-feedback matrices).
    """
    rng = np.random.default_rng(seed)
    rankings = _distinct_rows(rng, n_users, length, n_items)
    n_pos = rng.integers(min_pos, max_pos + 1, size=n_users)
    rows = np.repeat(np.arange(n_users, dtype=np.int64), n_pos)
    hit = rng.random(rows.size) < p_hit
    items = rng.integers(0, n_items, size=rows.size, dtype=np.int64)
    items[hit] = rankings[rows[hit], _hit_positions(rng, int(hit.sum()), length, 2.0)]
    labels = _csr_from_pairs(rows, items, np.ones(rows.size, dtype=np.float32), (n_users, n_items))
    desc = f"recommendation: {n_users:,} users x top-{length} of {n_items:,} items, {min_pos}-{max_pos} positives"
    params = dict(n_users=n_users, n_items=n_items, length=length, min_pos=min_pos, max_pos=max_pos,
                  p_hit=p_hit, seed=seed)
    return Workload("recsys", desc, labels, rankings, graded=False, params=params)


def ir(n_queries=5_000, n_docs=1_000, collection=500_000, min_judged=10, max_judged=200,
       p_many=0.05, max_judged_many=600, p_no_rel=0.02, p_retrieved=0.8, seed=1):
    """Workload (b), ad-hoc retrieval with graded judgements 0-3.

    Every query retrieves ``n_docs`` distinct documents from a ``collection``. It has
    ``min_judged..max_judged`` judged documents (``p_many`` of the queries have up to
    ``max_judged_many``, so some have more than 100 relevant ones), a fraction
    ``p_retrieved`` of them among the retrieved documents (biased to the top), the rest
    unretrieved. Grades are 0 (p=.45), 1 (.30), 2 (.15), 3 (.10); a fraction ``p_no_rel``
    of the queries has only grade-0 judgements, i.e. no relevant document. Grade 0 is
    "not relevant" and, as everywhere in a CSR label matrix, not stored.
    """
    rng = np.random.default_rng(seed)
    rankings = _distinct_rows(rng, n_queries, n_docs, collection)
    n_judged = rng.integers(min_judged, max_judged + 1, size=n_queries)
    many = rng.random(n_queries) < p_many
    n_judged[many] = rng.integers(max_judged, max_judged_many + 1, size=int(many.sum()))
    rows = np.repeat(np.arange(n_queries, dtype=np.int64), n_judged)
    retrieved = rng.random(rows.size) < p_retrieved
    docs = rng.integers(0, collection, size=rows.size, dtype=np.int64)
    docs[retrieved] = rankings[rows[retrieved], _hit_positions(rng, int(retrieved.sum()), n_docs, 1.5)]
    grades = rng.choice(np.array([0, 1, 2, 3], dtype=np.float64), size=rows.size, p=[0.45, 0.30, 0.15, 0.10])
    no_rel = rng.random(n_queries) < p_no_rel
    grades[no_rel[rows]] = 0.0
    keep = grades > 0
    labels = _csr_from_pairs(rows[keep], docs[keep], grades[keep], (n_queries, collection))
    desc = (f"IR: {n_queries:,} queries x {n_docs:,} retrieved docs (collection {collection:,}), "
            f"graded 0-3")
    params = dict(n_queries=n_queries, n_docs=n_docs, collection=collection, min_judged=min_judged,
                  max_judged=max_judged, p_many=p_many, max_judged_many=max_judged_many, p_no_rel=p_no_rel,
                  p_retrieved=p_retrieved, seed=seed)
    return Workload("ir", desc, labels, rankings, graded=True, params=params)


# --size presets: full = the sizes of the issue; thread scaling runs Recall@100 on a bigger (a)
SIZES = {
    "tiny": dict(recsys=dict(n_users=1_000, n_items=10_000), ir=dict(n_queries=100, collection=50_000),
                 scaling_users=20_000, latency_queries=100),
    "small": dict(recsys=dict(n_users=20_000, n_items=100_000), ir=dict(n_queries=1_000),
                  scaling_users=200_000, latency_queries=100),
    "full": dict(recsys=dict(n_users=200_000, n_items=100_000), ir=dict(n_queries=5_000),
                 scaling_users=1_000_000, latency_queries=100),
}


def make(name, size):
    """The workload ``name`` ('recsys' or 'ir') at preset ``size``."""
    kwargs = SIZES[size][name]
    return recsys(**kwargs) if name == "recsys" else ir(**kwargs)
