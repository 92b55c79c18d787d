"""Helpers shared by the test modules (one copy each; a test module never imports another).

Import them by name (``from helpers import quiet, rankings``): pytest puts ``tests/`` first on
``sys.path`` (``rootdir``/``conftest.py`` insertion), also when CI runs a copy of ``tests/``
outside the checkout. Fixtures shared by several modules live in ``conftest.py``.
"""
import warnings

import numpy as np
import pytest
from hypothesis import strategies as st

import rankereval
from rankereval import Rankings


# -- calls ---------------------------------------------------------------------------------
def quiet(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` with rankereval's data warnings silenced: InvalidValuesWarning
    (empty rows, NaN scores dropped) and UndefinedMetricWarning (a metric undefined on some
    rankings). Other warnings still show (and fail where the suite turns them into errors)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        warnings.simplefilter("ignore", rankereval.UndefinedMetricWarning)
        return fn(*args, **kwargs)


def ranked(rows):
    """``Rankings.from_ranked_indices`` of rows of item ids (lists, tuples, ranges); an empty
    ranking may be among them (its InvalidValuesWarning is silenced)."""
    return quiet(Rankings.from_ranked_indices, [list(r) for r in rows])


def all_metrics(cutoffs=(1, 3, 10), partitioned=False):
    """{name: metric} of every registered metric with every combination of its options
    (cutoffs as given): the set the engines' equality tests (Dask, Spark, the entry points,
    ties) run over, so that a new metric or option is covered by all of them.
    ``partitioned``: leave out the metrics that read the size of the catalogue (the kernel
    trait CATALOGUE: CoverageError, LabelRankingLoss), which Dask and Spark refuse."""
    from rankereval.metrics._base import _registered
    from rankereval.metrics._metric_ids import METRIC_IDS, ids_with

    out = {}
    for cls in _registered():
        if partitioned and METRIC_IDS.get(cls.info.kernel) in ids_with("catalogue"):
            continue
        for params in cls._param_space(cutoffs=cutoffs):
            m = cls(**params)
            out[m.name] = m
    return out


def item_input_metrics(n_items, seed=0):
    """{column: metric} of every beyond-accuracy metric whose inputs are indexed by item id
    (popularity, long-tail items as ids and as a mask, dense and sparse item features), over
    item ids ``0 .. n_items - 1``: the metrics whose inputs must follow data that number
    their items apart (``TrecData.doc_ids``, Dask and Spark partitions)."""
    import scipy.sparse as sp

    from rankereval import AveragePopularity, IntraListDiversity, Novelty, TailShare

    rng = np.random.default_rng(seed)
    popularity = rng.uniform(0.01, 1.0, n_items)
    features = rng.normal(size=(n_items, 5))
    tail = rng.choice(n_items, size=n_items // 3, replace=False)
    mask = np.zeros(n_items, dtype=bool)
    mask[tail] = True
    return {"novelty@3": Novelty(3, popularity), "epc@3": Novelty(3, popularity, "complement"),
            "arp@5": AveragePopularity(5, popularity * 100), "tail_ids@3": TailShare(3, tail),
            "tail_mask@3": TailShare(3, mask), "ild@4": IntraListDiversity(4, features),
            "ild_sparse@4": IntraListDiversity(4, sp.csr_matrix(features * (rng.random(features.shape) < 0.7)
                                                                + np.eye(n_items, 5)))}


def needs_judged(metric):
    """Whether a metric object needs labels with judgments (its registry entry says so, or
    RBP's residual, which counts the unjudged items)."""
    return metric.info.judged or getattr(metric, "residual", False)


# -- trec_eval (pytrec_eval, package pytrec-eval-terrier) ----------------------------------
def trec_eval(qrels, rankings, measures):
    """pytrec_eval's per-query results ``{"q0": {measure: value}}`` of graded qrels (one
    ``{item: grade}`` dict a query, grade 0 = judged non-relevant) and rankings (lists of item
    ids). Each item is scored ``n - rank``, so trec_eval's sort by descending score is our
    order. A query with an empty ranking is left out (a run file cannot hold one, and
    pytrec_eval 0.5.11 crashes on it with some measures); skipped where pytrec_eval is missing."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    trec_qrels = {f"q{q}": {f"d{i}": int(g) for i, g in rels.items()} for q, rels in enumerate(qrels)}
    run = {f"q{q}": {f"d{i}": float(len(r) - rank) for rank, i in enumerate(r)}
           for q, r in enumerate(rankings) if r}
    return pytrec_eval.RelevanceEvaluator(trec_qrels, set(measures)).evaluate(run)


@st.composite
def trec_queries(draw):
    """Queries as trec_eval sees them: graded qrels (levels 0..4 of items 0..14, 0 = judged
    non-relevant) and rankings of up to 12 items, some not judged; 1 to 6 queries."""
    n_queries = draw(st.integers(1, 6))
    qrels, ranked = [], []
    for _ in range(n_queries):
        judged = draw(st.lists(st.integers(0, 14), max_size=8, unique=True))
        levels = [draw(st.integers(0, 4)) for _ in judged]
        qrels.append(dict(zip(judged, levels)))
        ranked.append(draw(st.lists(st.integers(0, 14), max_size=12, unique=True)))
    return qrels, ranked


def close(a, b, tol=1e-12):
    """Assert two arrays of scores of one shape are NaN at the same places and equal elsewhere
    to ``tol`` (absolute and relative): a kernel against its slow reference."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert a.shape == b.shape
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=tol, atol=tol)


# -- equal results across entry points (Dask, Spark, Accumulator vs in-memory evaluate) -----
def same(a, b):
    """Equal bit for bit (arrays or scalars, of the same shape), NaN equal to NaN. The
    engines' sums are exact (``rankereval._exact``), rounded once: any partitioning, order or
    entry point gives the same bits, so no tolerance is needed, and one would hide a merge that
    lost its exactness."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    return np.array_equal(np.where(np.isnan(a), 0.0, a).view(np.int64),
                          np.where(np.isnan(b), 0.0, b).view(np.int64))


def assert_same_evaluation(got, want, scores=True):
    """Two Evaluations equal: names, counts, means and confidence intervals bit for bit (see
    :func:`same`), and with ``scores`` the per-ranking scores in the same order."""
    assert got.names == want.names
    assert got.n_rankings == want.n_rankings
    for name in want.names:
        assert same(got.means[name], want.means[name]), (name, got.means[name], want.means[name])
        assert got.n_used[name] == want.n_used[name], name
        assert got.n_undefined[name] == want.n_undefined[name], name
        if want.conf_intervals is None:
            assert got.conf_intervals is None
        else:
            assert same(got.conf_intervals[name], want.conf_intervals[name]), \
                (name, got.conf_intervals[name], want.conf_intervals[name])
    assert got.confidence == want.confidence
    if scores:
        assert same(got.scores, want.scores)


# -- TREC files for the command line ------------------------------------------------------
CLI_QRELS = "".join(f"q{q} 0 d{d} {int((q + d) % 3 == 0)}\n" for q in range(1, 13) for d in range(8))
"""Qrels of 12 queries (q1..q12) of 8 documents each (d0..d7), d relevant where q + d is a
multiple of 3: what the command-line tests compare systems on."""


def write_run(path, shift, skip=(), n_docs=8):
    """A TREC run of ``CLI_QRELS``'s queries less ``skip``: for query q the documents
    ``(d + shift q) mod 8`` for d < ``n_docs``, in that order (scores 10 - rank); its path."""
    with open(path, "w") as fh:
        for q in range(1, 13):
            if q in skip:
                continue
            for rank, d in enumerate([(d + shift * q) % 8 for d in range(n_docs)], 1):
                fh.write(f"q{q} Q0 d{d} {rank} {10 - rank} tag\n")
    return str(path)


# -- the literal reference of the kernels' hash --------------------------------------------
M64 = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15


def mix64(z):
    """SplitMix64's finaliser on Python ints (the reference of the kernels' hash)."""
    z &= M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)

