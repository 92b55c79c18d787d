"""Reliability of rankereval beyond single calls: inputs, threads, memory, pickling, numerics.

* Inputs are never modified: every array (and sparse structure, and list) passed to a
  constructor, a filter or a metric is byte-identical afterwards.
* Concurrency: 8 Python threads constructing and scoring the same and different inputs at
  once (the kernels release the GIL and may start OpenMP teams) give the serial results.
* Memory: 10,000 repeated constructions and scorings (every typed kernel, error paths
  included) grow the resident set by less than 10 MB.
* Pickling: labels, rankings and metric objects round-trip to equal objects at every
  protocol, stay read-only and score identically.
* Numerics: float32 and float64 scores rank alike where distinct at float32; ties go to the
  lower id; metric values lie in their ranges (NaN only where documented, never -0.0).

The input fuzzing itself lives in ``test_fuzz.py``; its oracles, strategies and invariant checks
(``fuzzing.py``) are reused here.

Beyond CI's checked build (``RANKEREVAL_DEBUG=1``, which checks memoryview indexing only), the
raw-pointer code can be checked with AddressSanitizer on a copy of the checkout::

    CPPFLAGS="-fsanitize=address -fno-omit-frame-pointer" LDFLAGS=-fsanitize=address \
        RANKEREVAL_DEBUG=1 python setup.py build_ext --inplace -q
    LD_PRELOAD=$(gcc -print-file-name=libasan.so) \
        ASAN_OPTIONS=detect_leaks=0:alloc_dealloc_mismatch=0:log_path=/tmp/asan \
        python -m pytest -q -p no:cacheprovider tests

(``alloc_dealloc_mismatch=0`` because pytrec_eval trips a new[]/free mismatch of its own;
``log_path`` because pytest swallows ASan's stderr.) Run on 2026-11-29: no report.
"""
import copy
import gc
import os
import pickle
import sys
import threading
import time
import warnings

import subprocess

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, os.path.dirname(__file__))
import fuzzing as fz  # noqa: E402  (oracles, strategies and invariant checks)
from helpers import needs_judged, quiet  # noqa: E402

from rankereval.metrics._base import _registered  # noqa: E402
from rankereval import (  # noqa: E402
    AP,
    F1,
    NDCG,
    BinaryLabels,
    FirstRelevantRank,
    HitRate,
    InvalidValuesWarning,
    MeanRanks,
    NumericLabels,
    Precision,
    Rankings,
    Recall,
    ReciprocalRank,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),  # np.matrix layouts of the inputs
    pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning"),
]

# every registered metric with every option combination (from the registry)
ALL_METRICS = [cls(**params) for cls in _registered() for params in cls._param_space(cutoffs=(3,))]
GRADED_METRICS = [m for m in ALL_METRICS if m.info.labels == "graded"]


def _score_all(y_true, y_pred):
    metrics = GRADED_METRICS if isinstance(y_true, NumericLabels) else ALL_METRICS
    return [m.score(y_true, y_pred) for m in metrics]


# =========================================================================================
# inputs are never modified
# =========================================================================================

@st.composite
def unsorted_csr(draw):
    """A CSR matrix with unsorted indices, duplicates and explicit zeros, all positive data."""
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 8))
    per_row = [draw(st.lists(st.integers(0, m - 1), max_size=6)) for _ in range(n)]
    data = [float(draw(st.sampled_from([0.0, 1.0, 2.0, 0.5]))) for r in per_row for _ in r]
    indptr = np.cumsum([0] + [len(r) for r in per_row])
    ctor = draw(st.sampled_from([sp.csr_array, sp.csr_matrix]))
    x = ctor((np.array(data), np.array([j for r in per_row for j in r], dtype=np.int32), indptr), shape=(n, m))
    x.has_sorted_indices  # noqa: B018  (let scipy compute and cache its flags before the snapshot)
    x.has_canonical_format  # noqa: B018
    return x


@given(
    ids=st.one_of(fz.valid_id_arrays(), fz.ragged_ids(valid_bias=True)),
    scores=st.one_of(hnp.arrays(st.sampled_from([np.float32, np.float64, np.int64, ">f8"]), (3, 6),
                                elements=st.integers(-5, 5)).flatmap(fz.layout),
                     unsorted_csr()),
    labels=st.one_of(unsorted_csr(), hnp.arrays(st.sampled_from([np.int8, np.float64, ">f4", np.bool_]), (3, 6),
                                                 elements=st.integers(0, 1)).flatmap(fz.layout)),
    valid=st.one_of(st.none(), st.just(np.array([[0, 1, 2, 3, 4, 5, 6, 7]])), unsorted_csr()),
    invalid=st.one_of(st.none(), st.just([[5, 3], [1], [2]]), st.just((np.array([4, 0]),))),
)
def test_inputs_are_never_modified(ids, scores, labels, valid, invalid):
    inputs = [ids, scores, labels, valid, invalid]
    before = [fz.snapshot(x) for x in inputs]
    flags = [(x.has_sorted_indices, x.has_canonical_format) for x in inputs if isinstance(x, (sp.csr_matrix, sp.csr_array))]
    built = []
    for fn, args, kwargs in [
        (BinaryLabels.from_positive_indices, (ids,), {}),
        (BinaryLabels.from_positive_indices, (labels,), {}),
        (BinaryLabels.from_matrix, (labels,), {}),
        (NumericLabels.from_matrix, (labels,), {}),
        (NumericLabels.from_matrix, (scores,), {}),
        (Rankings.from_ranked_indices, (ids,), {"valid_items": valid, "invalid_items": invalid}),
        (Rankings.from_scores, (scores,), {"valid_items": valid, "invalid_items": invalid, "k": 4}),
        (Rankings.from_scores, (scores,), {}),
    ]:
        out = fz.run(fn, *args, **kwargs)
        if out.exc is None:
            built.append(out.value)
        elif not fz.id_bug_tolerance(*args, *kwargs.values())(out.exc):
            fz.assert_clean_error(out.exc)
    labels_objs = [b for b in built if isinstance(b, (BinaryLabels, NumericLabels))]
    rankings_objs = [b for b in built if isinstance(b, Rankings)]
    storage = [fz.snapshot(a) for b in labels_objs for a in (b.indptr, b.indices, b.values)]
    storage += [fz.snapshot(a) for b in rankings_objs for a in (b.indices, b.lengths)]
    for y in labels_objs:
        for r in rankings_objs:
            if y.n_rows in (1, r.n_rows):
                for m in ALL_METRICS:  # judged: the stored items (Bpref, Judged, RBP's residual)
                    res = fz.run(m.score, y.with_judged(y) if needs_judged(m) else y, r)
                    if res.exc is not None:  # binary metrics refuse graded labels; ERR, grades above its scale
                        assert (isinstance(res.exc, TypeError) or "exceeds max_grade" in str(res.exc)) \
                            and isinstance(y, NumericLabels)
    fz.check_unmodified(before, *inputs)
    assert flags == [(x.has_sorted_indices, x.has_canonical_format) for x in inputs
                     if isinstance(x, (sp.csr_matrix, sp.csr_array))]
    assert storage == [fz.snapshot(a) for b in labels_objs for a in (b.indptr, b.indices, b.values)] + \
        [fz.snapshot(a) for b in rankings_objs for a in (b.indices, b.lengths)]


def test_unsorted_sparse_input_is_not_sorted_in_place():
    x = sp.csr_array((np.array([3.0, 1.0, 2.0, 0.0]), np.array([5, 0, 2, 2]), np.array([0, 3, 4])), shape=(2, 6))
    assert not x.has_sorted_indices
    before = fz.snapshot(x)
    assert quiet(Rankings.from_scores, x).to_list() == [[5, 2, 0], [2]]
    assert BinaryLabels.from_positive_indices(x).indices_to_list() == [[0, 2, 5], []]
    assert NumericLabels.from_matrix(x).labels_to_list() == [[1.0, 2.0, 3.0], []]
    assert fz.snapshot(x) == before and not x.has_sorted_indices


def test_storage_cannot_be_modified_through_public_views():
    y = NumericLabels.from_matrix([[0, 1, 2], [3, 0, 4]])
    r = Rankings.from_ranked_indices([[2, 0], [1]])
    before = (fz.snapshot(y.indptr), fz.snapshot(y.indices), fz.snapshot(y.values), r.to_list())
    for arr in (y.indptr, y.indices, y.values, r.indices, r.lengths, y.csr.data, y.csr.indices):
        with pytest.raises(ValueError):
            arr[0] = 7
    c = y.csr
    for op in (lambda: c.data.__setitem__(0, 5.0), lambda: c.__setitem__((0, 1), 9.0), c.eliminate_zeros):
        with pytest.raises(ValueError):
            op()
    c.sort_indices()
    c.sum_duplicates()
    assert (fz.snapshot(y.indptr), fz.snapshot(y.indices), fz.snapshot(y.values), r.to_list()) == before


@pytest.mark.parametrize("view", ["indptr", "indices", "values", "csr.indices", "r.indices", "r.lengths"])
def test_storage_cannot_be_made_writeable_again(view):
    """Fixed (the storage arrays owned their memory: `flags.writeable = True` succeeded, and edited
    ids reached the kernels unchecked -- a segfault)."""
    y = BinaryLabels.from_positive_indices([[0, 1]])
    r = Rankings.from_ranked_indices([[0, 1, 2]])
    arr = eval(view, {"r": r, "csr": y.csr}) if "." in view else getattr(y, view)
    with pytest.raises(ValueError):
        arr.flags.writeable = True


_CORRUPT_CHILD = r"""
import sys
import traceback
import numpy as np
from rankereval import *
from rankereval.metrics._base import _registered

def unfreeze(a):
    while isinstance(a.base, np.ndarray):
        a = a.base
    a.flags.writeable = True  # the storage arrays own their memory: numpy lets this through
    return a

metrics = [cls(**p) for cls in _registered() for p in cls._param_space(cutoffs=(3,))
           if not any(p.get(o, False) for o in ("truncated",))]
edits = {
    "label id huge": lambda y, r: unfreeze(y.indices).__setitem__(0, 10**9),
    "label id negative": lambda y, r: unfreeze(y.indices).__setitem__(0, -5),
    "indptr beyond nnz": lambda y, r: unfreeze(y.indptr).__setitem__(-1, 10**6),
    "indptr negative": lambda y, r: unfreeze(y.indptr).__setitem__(1, -7),
    "ranked id negative": lambda y, r: unfreeze(r.indices).__setitem__((0, 0), -(2**30)),
    "ranked id huge": lambda y, r: unfreeze(r.indices).__setitem__((0, 0), 2**31 - 1),
    "length beyond width": lambda y, r: unfreeze(r.lengths).__setitem__(0, 10**6),
    "length negative": lambda y, r: unfreeze(r.lengths).__setitem__(1, -3),
}
for name, edit in edits.items():
    y = NumericLabels.from_matrix([[0, 1, 2, 3], [3, 0, 1, 0], [1, 1, 1, 1]])
    r = Rankings.from_ranked_indices([[0, 1, 2], [3, 2, 1], [1, 0, 2]])
    edit(y, r)
    for m in metrics:
        graded = m.info.labels == "graded"
        yy = y if graded else BinaryLabels.from_matrix(np.ones((3, 4)))
        if not graded:
            edit(yy, r)
        try:
            m.score(yy, r)
        except (ValueError, TypeError):
            pass
        except IndexError as exc:
            # NumPy's own bounds check in a metric's Python layer (np.add.reduceat over the row
            # pointers: RNDCG, NDCGRel) stays in bounds too; a kernel's (a .pyx frame: the
            # checked build's bounds check) fails the test
            if not traceback.extract_tb(exc.__traceback__)[-1].filename.endswith(".py"):
                raise
print("survived", len(edits) * len(metrics))
"""


def test_corrupted_storage_never_crashes_the_kernels():
    """Storage is validated and frozen at construction, but its owning arrays can be forced
    writeable (``arr.base.flags.writeable = True``). Whatever is then written into ids, row
    pointers or lengths, the kernels stay in bounds: a result or a clean error, never a crash.
    Runs in a child process so that a crash fails this test instead of the whole run."""
    proc = subprocess.run([sys.executable, "-c", _CORRUPT_CHILD], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "survived" in proc.stdout


# =========================================================================================
# concurrency
# =========================================================================================

def _workload(seed, big=True):
    """Tasks (name -> callable) covering every kernel; ``big`` inputs start OpenMP teams."""
    rng = np.random.default_rng(seed)
    n, width, n_items = (600, 100, 1500) if big else (40, 8, 60)  # big: 60,000 ranked ids
    pos = [rng.choice(n_items, size=rng.integers(0, 25), replace=False) for _ in range(n)]
    ranked = np.argsort(rng.random((n, n_items)), axis=1)[:, :width]
    huge_ids = ranked.astype(np.int64) * (2**40 + 7)
    scores = rng.standard_normal((n, width)).astype(np.float32)
    scores[rng.random(scores.shape) < 0.01] = np.nan
    # sp.random (not random_array, SciPy >= 1.12): the suite also runs on the oldest SciPy supported
    sparse_scores = sp.csr_array(sp.random(n, n_items, density=0.05, random_state=seed, format="csr"))
    grades = sp.csr_array(sp.random(n, n_items, density=0.01, random_state=seed + 1, format="csr"))
    grades.data = np.ceil(grades.data * 4)

    # judgments (Bpref, Judged, RBP's residual): the relevant items and every third ranked one
    judged = [np.union1d(p, ranked[i, ::3]) for i, p in enumerate(pos)]
    y_bin = BinaryLabels.from_positive_indices(pos).with_judged(judged)
    y_huge = BinaryLabels.from_positive_indices([p.astype(np.int64) * (2**40 + 7) for p in pos]).with_judged(
        [j.astype(np.int64) * (2**40 + 7) for j in judged])
    y_num = NumericLabels.from_matrix(grades)
    y_num = y_num.with_judged(y_num)
    y_one = BinaryLabels.from_positive_indices([sorted(set(pos[0].tolist()) | {1, 2, 3})])
    y_one = y_one.with_judged(y_one)
    r = Rankings.from_ranked_indices(ranked)
    r_huge = Rankings.from_ranked_indices(huge_ids)
    tasks = {
        "labels": lambda: BinaryLabels.from_positive_indices(pos),
        "labels-huge": lambda: BinaryLabels.from_positive_indices([p.astype(np.int64) * (2**40 + 7) for p in pos]),
        "numeric": lambda: NumericLabels.from_matrix(grades),
        "ranked": lambda: Rankings.from_ranked_indices(ranked),
        "ranked-huge": lambda: Rankings.from_ranked_indices(huge_ids),
        "ranked-filtered": lambda: Rankings.from_ranked_indices(ranked, valid_items=np.arange(0, n_items, 2)[None],
                                                                invalid_items=pos),
        "scores-k": lambda: Rankings.from_scores(scores, k=10),
        "scores-sparse": lambda: Rankings.from_scores(sparse_scores, invalid_items=pos),
        "duplicates": lambda: fz.run(Rankings.from_ranked_indices, np.tile(ranked[:, :1], (1, 3))).exc.args,
        "bootstrap": lambda: Precision(5).mean(y_bin, r, nan_handling="drop", conf_interval=True,
                                               n_resamples=200, random_state=seed),
    }
    for i, m in enumerate(ALL_METRICS):
        tasks[f"score-{i}"] = (lambda m=m: m.score(y_num if m.info.labels == "graded" else y_bin, r))
        if i % 3 == 0:
            tasks[f"score-huge-{i}"] = (lambda m=m: m.score(y_huge, r_huge))
        if i % 3 == 1:
            tasks[f"score-broadcast-{i}"] = (lambda m=m: m.score(y_one, r))
    return tasks


def _equal_results(a, b):
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_equal_results(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_equal_results(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and np.isnan(a):
        return isinstance(b, float) and np.isnan(b)
    return a == b


@pytest.fixture
def parallel_kernels(monkeypatch):
    """Make every kernel call start an OpenMP team (the data layer's size threshold set to 0)."""
    import rankereval._threads

    monkeypatch.setattr(rankereval._threads, "PARALLEL_MIN_WORK", 0)
    return rankereval._threads


def test_threads_give_serial_results(parallel_kernels):
    """8 threads run every task of a shared and of their own workload, in shuffled orders, while
    every kernel call also starts an OpenMP team (nested Python threads x OpenMP threads)."""
    shared = quiet(_workload, 0)
    own = [quiet(_workload, 100 + t, big=(t == 0)) for t in range(8)]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parallel_kernels, "PARALLEL_MIN_WORK", 2**62)  # the serial reference
        expected_shared = {k: quiet(f) for k, f in shared.items()}
        expected_own = [{k: quiet(f) for k, f in w.items()} for w in own]
    n_threads, rounds = 8, 1
    barrier = threading.Barrier(n_threads)
    failures = []

    def worker(t):
        rng = np.random.default_rng(t)
        try:
            barrier.wait()
            for _ in range(rounds):
                jobs = [("shared", k) for k in shared] + [("own", k) for k in own[t]]
                for where, k in (jobs[i] for i in rng.permutation(len(jobs))):
                    fn, want = (shared[k], expected_shared[k]) if where == "shared" else (own[t][k], expected_own[t][k])
                    got = fn()  # warnings are filtered around the threads: catch_warnings is not thread-safe
                    if not _equal_results(got, want):
                        failures.append((t, where, k))
        except BaseException as exc:  # reported below, not swallowed
            failures.append((t, "exception", repr(exc)))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(n_threads)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InvalidValuesWarning)
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout=300)
    assert not any(th.is_alive() for th in threads), "a worker hung"
    assert not failures, failures[:10]


def test_parallel_kernels_match_serial(parallel_kernels):
    """Every kernel gives the same result with an OpenMP team as on one thread."""
    tasks = quiet(_workload, 7)
    parallel = {k: quiet(f) for k, f in tasks.items()}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parallel_kernels, "PARALLEL_MIN_WORK", 2**62)
        serial = {k: quiet(f) for k, f in tasks.items()}
    assert [k for k in tasks if not _equal_results(parallel[k], serial[k])] == []


def test_large_inputs_match_small_chunks():
    """Inputs above the real parallel threshold give the results of small (one-thread) chunks."""
    import rankereval._threads

    rng = np.random.default_rng(7)
    n, width = 5000, 120  # 600,000 ranked ids
    assert n * width >= rankereval._threads.PARALLEL_MIN_WORK
    labels = [rng.choice(4000, size=i % 20, replace=False).tolist() for i in range(n)]
    rows = np.argsort(rng.random((n, 4000)), axis=1)[:, :width]
    y_bin = BinaryLabels.from_positive_indices(labels)
    r = Rankings.from_ranked_indices(rows)
    chunks = range(0, n, 500)
    for m in (Precision(3), AP(50), MeanRanks(), NDCG(20)):
        whole = m.score(y_bin, r)
        parts = [m.score(BinaryLabels.from_positive_indices(labels[i:i + 500]),
                         Rankings.from_ranked_indices(rows[i:i + 500])) for i in chunks]
        assert _equal_results(whole, np.concatenate(parts)), m


# =========================================================================================
# memory
# =========================================================================================

def _memory():
    """(resident, virtual) bytes of this process."""
    with open("/proc/self/statm") as fh:
        size, resident = (int(v) for v in fh.read().split()[:2])
    return resident * os.sysconf("SC_PAGE_SIZE"), size * os.sysconf("SC_PAGE_SIZE")


def _rejected(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except (ValueError, TypeError):
        return
    raise AssertionError("expected a ValueError or TypeError")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm (Linux)")
def test_no_memory_leak_in_repeated_construction_and_scoring():
    """10,000 constructions and 10,000 scorings, every typed kernel and error path included."""
    rng = np.random.default_rng(0)
    pos = [rng.choice(3000, size=5, replace=False) for _ in range(20)]
    big_pos = [[2**40 + 3, 7], [2**62], [5, 1]] * 2
    ranked = np.argsort(rng.random((20, 3000)), axis=1)[:, :30]
    ranked_huge = ranked * (2**40)
    ranked_ragged = [row[: 5 + i] for i, row in enumerate(ranked)]
    keep = np.arange(0, 3000, 3)[None]
    scores = rng.standard_normal((20, 300))
    scores[0, :5] = np.nan
    sparse_scores = sp.csr_array(sp.random(20, 3000, density=0.01, random_state=0, format="csr"))
    sparse_binary = sparse_scores > 0.5
    grades = np.round(rng.random((20, 300)) * 3)
    steps = [
        lambda: BinaryLabels.from_positive_indices(pos),                            # ragged_duplicates, bitset
        lambda: BinaryLabels.from_positive_indices(big_pos),                        # ragged_duplicates, hash table
        lambda: NumericLabels.from_matrix(grades),
        lambda: BinaryLabels.from_matrix(sparse_binary),
        lambda: Rankings.from_ranked_indices(ranked),                               # minmax_2d, dense_to_rankings
        lambda: Rankings.from_ranked_indices(ranked_huge),                          # dense_to_rankings, hash table
        lambda: Rankings.from_ranked_indices(ranked_ragged, valid_items=keep, invalid_items=pos),  # filter_rankings
        lambda: Rankings.from_scores(scores, k=7, invalid_items=[[1, 2]]),          # rank_dense_scores
        lambda: Rankings.from_scores(sparse_scores),                                # rank_csr_scores
        lambda: _rejected(Rankings.from_ranked_indices, [[1, 2, 1]]),               # error paths
        lambda: _rejected(Rankings.from_ranked_indices, np.array([[4, 4]])),
        lambda: _rejected(BinaryLabels.from_matrix, [[0, 2]]),
    ]
    y_bin = BinaryLabels.from_positive_indices(pos)
    y_bin = y_bin.with_judged(y_bin)  # (Bpref, Judged, RBP's residual)
    y_big = BinaryLabels.from_positive_indices(pos[:19] + [[2**41]])  # binary-search lookups
    y_big = y_big.with_judged(y_big)
    y_num = NumericLabels.from_matrix(grades)
    y_num = y_num.with_judged(y_num)
    r = Rankings.from_ranked_indices(ranked)
    r_small = Rankings.from_ranked_indices(np.argsort(rng.random((20, 300)), axis=1)[:, :30])
    r_three = Rankings.from_ranked_indices([[1]] * 3)
    scorings = [lambda m=m: m.score(y_bin, r) for m in ALL_METRICS] + \
               [lambda m=m: m.score(y_big, r) for m in ALL_METRICS[:4]] + \
               [lambda m=m: m.score(y_num, r_small) for m in GRADED_METRICS] + \
               [lambda: _rejected(Precision(2).score, y_num, r),                    # TypeError path
                lambda: _rejected(Precision(2).score, y_bin, r_three)]              # ValueError path

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InvalidValuesWarning)
        for i in range(500):  # warm-up: allocator pools, caches, lazily imported modules
            steps[i % len(steps)]()
            scorings[i % len(scorings)]()
        gc.collect()
        (rss0, vm0), start = _memory(), time.perf_counter()
        for i in range(10_000):
            steps[i % len(steps)]()
            scorings[i % len(scorings)]()
        gc.collect()
        rss1, vm1 = _memory()
    print(f"10,000 iterations in {time.perf_counter() - start:.1f} s: RSS {(rss1 - rss0) / 2**20:+.2f} MB, "
          f"virtual {(vm1 - vm0) / 2**20:+.2f} MB")
    assert rss1 - rss0 < 10 * 2**20, f"resident memory grew by {(rss1 - rss0) / 2**20:.1f} MB"
    # a leaked large calloc is mmap-ed and never touched: it shows in the virtual size only
    assert vm1 - vm0 < 64 * 2**20, f"virtual memory grew by {(vm1 - vm0) / 2**20:.1f} MB"


# =========================================================================================
# pickling
# =========================================================================================

METRIC_OBJECTS = st.sampled_from(fz.ALL_METRIC_CLASSES).flatmap(
    lambda cls: fz.metric_params(cls).map(lambda p: cls(**p)))


@given(inputs=fz.scoring_inputs(), metric=METRIC_OBJECTS, protocol=st.integers(0, pickle.HIGHEST_PROTOCOL))
def test_pickle_round_trip(inputs, metric, protocol):
    y_true, y_pred = inputs
    for obj in (y_true, y_pred, metric):
        for clone in (pickle.loads(pickle.dumps(obj, protocol=protocol)), copy.deepcopy(obj), copy.copy(obj)):
            assert type(clone) is type(obj)
            assert clone == obj and not (clone != obj)
            assert repr(clone) == repr(obj)
    y2 = pickle.loads(pickle.dumps(y_true, protocol=protocol))
    r2 = pickle.loads(pickle.dumps(y_pred, protocol=protocol))
    m2 = pickle.loads(pickle.dumps(metric, protocol=protocol))
    fz.check_labels(y2, type(y_true))
    fz.check_rankings(r2)
    for a, b in ((y2.indptr, y_true.indptr), (y2.indices, y_true.indices), (y2.values, y_true.values),
                 (r2.indices, y_pred.indices), (r2.lengths, y_pred.lengths)):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert y2.n_items == y_true.n_items
    assert hash(m2) == hash(metric) and m2._params() == metric._params()
    before = fz.run(metric.score, y_true, y_pred)
    after = fz.run(m2.score, y2, r2)
    assert type(before.exc) is type(after.exc)
    if before.exc is None:
        assert _equal_results(before.value, after.value)


def test_pickle_edge_cases():
    objs = [
        BinaryLabels.from_positive_indices(np.zeros((0, 3), dtype=int)),
        BinaryLabels.from_positive_indices([[]]),
        BinaryLabels.from_positive_indices([[2**62, 3]]),
        NumericLabels.from_matrix(sp.csr_array((1, 2**31 + 5))),
        quiet(Rankings.from_ranked_indices, np.zeros((0, 5), dtype=int)),
        quiet(Rankings.from_ranked_indices, [[], [fz.MAX_ID]]),
        quiet(Rankings.from_scores, [[np.nan, np.nan]]),
    ]
    for obj in objs:
        for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
            clone = pickle.loads(pickle.dumps(obj, protocol=protocol))
            assert clone == obj
            if isinstance(obj, Rankings):
                fz.check_rankings(clone)
                assert clone.to_list() == obj.to_list()
            else:
                fz.check_labels(clone, type(obj))
                assert clone.indices_to_list() == obj.indices_to_list() and clone.n_items == obj.n_items


# =========================================================================================
# numerics
# =========================================================================================

@given(
    s64=hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, min_side=0, max_side=12),
                   elements=st.floats(-3e38, 3e38, allow_nan=False) | st.sampled_from([np.nan, np.inf, -np.inf])),
    k=st.none() | st.integers(1, 5),
    sparse=st.booleans(),
)
def test_float32_and_float64_scores_rank_alike(s64, k, sparse):
    conv = (lambda a: sp.csr_array(np.where(a == 0, 1e-30, a))) if sparse else (lambda a: a)
    if sparse:
        # a sparse matrix does not store zeros: every score that is 0 at float32 (including a
        # float64 score that underflows there, e.g. 4e-182) is 1e-30 in both precisions
        s64 = np.where(s64.astype(np.float32) == 0, 1e-30, s64)
    s32 = s64.astype(np.float32)
    finite = [r[np.isfinite(r)] for r in s32]
    distinct = all(np.unique(r).size == r.size for r in finite)
    note(f"distinct at float32: {distinct}")
    r32 = quiet(Rankings.from_scores, conv(s32), k=k)
    r32_as64 = quiet(Rankings.from_scores, conv(s32.astype(np.float64)), k=k)
    assert r32 == r32_as64  # float32 -> float64 is exact: always the same ranking
    if distinct:
        assert r32 == quiet(Rankings.from_scores, conv(s64), k=k)


@given(n=st.integers(1, 30), k=st.none() | st.integers(1, 40), value=st.floats(allow_nan=False, allow_infinity=False))
def test_ties_go_to_the_lower_item_id(n, k, value):
    for dtype in (np.float32, np.float64):
        with np.errstate(over="ignore"):
            representable = np.isfinite(dtype(value))
        if not representable:
            continue  # beyond float32: inf, dropped
        r = quiet(Rankings.from_scores, np.full((2, n), value, dtype=dtype), k=k)
        assert r.to_list() == [list(range(n))[:k]] * 2
    r = quiet(Rankings.from_scores, sp.csr_array((np.full(n, value), (np.zeros(n, int), np.arange(n)[::-1])),
                                                 shape=(1, n)), k=k)
    assert r.to_list() == [list(range(n))[:k]]


@given(inputs=fz.scoring_inputs(), data=st.data())
def test_metric_values_in_range(inputs, data):
    """Range, NaN-only-where-documented and no -0.0 (also checked against the reference)."""
    y_true, y_pred = inputs
    if y_true.n_rows not in (1, y_pred.n_rows):
        return
    for cls in fz.ALL_METRIC_CLASSES:
        if isinstance(y_true, NumericLabels) and cls.info.labels != "graded":
            continue  # (a binary metric refuses them: test_fuzz.py checks the TypeError)
        fz.metric_outcome(cls(**data.draw(fz.metric_params(cls))), y_true, y_pred)


@given(base=st.floats(1e-3, 1e3), steps=st.lists(st.integers(0, 3), min_size=2, max_size=6),
       perm_seed=st.integers(0, 2**32 - 1), scaling=st.sampled_from(["identity", "power"]),
       log_base=st.sampled_from(["e", "2"]), k=st.none() | st.integers(1, 6))
def test_ndcg_of_near_equal_labels_stays_in_range(base, steps, perm_seed, scaling, log_base, k):
    """Labels a few ulps apart: DCG <= IDCG must survive rounding."""
    labels = np.array([base + s * np.spacing(base) for s in steps])
    y = NumericLabels.from_matrix([labels])
    perms = [np.random.default_rng(perm_seed + i).permutation(len(steps)) for i in range(5)]
    s = NDCG(k, scaling, log_base).score(y, Rankings.from_ranked_indices(perms))
    assert np.all(s >= 0)
    assert np.all(s <= 1.0), s


@pytest.mark.parametrize("labels, ranking", [
    ([0.245592419157156, 0.24559241915715604, 0.24559241915715596, 0.245592419157156, 0.245592419157156],
     [4, 0, 2, 1, 3]),
    ([5.208830450418033, 5.208830450418032, 5.208830450418032, 5.2088304504180325], [0, 1, 3, 2]),
])
def test_ndcg_never_above_one(labels, ranking):
    """Fixed (was 1.0000000000000002 / 1.0000000000000004: DCG and IDCG sum differently rounded
    products for near-equal labels)."""
    s = NDCG().score(NumericLabels.from_matrix([labels]), Rankings.from_ranked_indices([ranking]))
    assert s[0] <= 1.0, repr(s[0])


def test_no_negative_zero_and_documented_nan_and_inf():
    y = BinaryLabels.from_positive_indices([[0, 1], [], [5], [7]])
    y = y.with_judged(y)  # (Bpref, Judged, RBP's residual)
    r = quiet(Rankings.from_ranked_indices, [[2, 3], [0], [], [7, 8]])
    for m in ALL_METRICS:
        s = m.score(y, r)
        assert not np.any((s == 0) & np.signbit(s)), m
        # no relevant item: NaN for every metric but the counts (Judged: nor a judged one;
        # FallOut: defined, NaN without a non-relevant item)
        assert np.isnan(s[1]) == (m.info.undefined is not None and type(m).__name__ != "FallOut"), m
    assert MeanRanks().score(y, r)[[0, 2]].tolist() == [np.inf, np.inf]
    assert FirstRelevantRank().score(y, r)[[0, 3]].tolist() == [np.inf, 1.0]
    assert np.isnan(Precision(3, truncated=True).score(y, r)[2])
    assert Precision(3).score(y, r)[2] == 0.0 and F1(3, truncated=True).score(y, r)[2] == 0.0
    assert np.isnan(HitRate(2).score(y, r)[0])  # two relevant items
