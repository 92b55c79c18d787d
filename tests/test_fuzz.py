"""Property-based fuzzing: no input can crash rankereval.

Every public constructor (``BinaryLabels.from_positive_indices``, ``BinaryLabels.from_matrix``,
``NumericLabels.from_matrix``, ``Rankings.from_ranked_indices`` with and without
``valid_items`` / ``invalid_items``, ``Rankings.from_scores`` with and without ``k``) and
every metric is fed arbitrary input:

* arrays from :mod:`hypothesis.extra.numpy` of every dtype (signed/unsigned integers, floats
  up to ``longdouble``, complex, bool, datetime/timedelta, bytes, str, object), 0-d to 3-d,
  empty shapes such as ``(0, 5)`` and ``(5, 0)``, in C, Fortran, strided, reversed,
  broadcast (zero-stride), read-only, byte-swapped and ``np.matrix`` layouts;
* ragged lists / tuples / lists of arrays with mixed element types (ints near the int64
  limit, bools, floats, NaN, None, str, bytes, complex, numpy scalars, nested lists);
* scipy sparse matrices and arrays of every format with explicit zeros, duplicate entries,
  unsorted indices and negative, huge or non-finite values.

The call must either return *the right answer* -- computed here by a literal oracle from the
documented contract (``/work/api-contract.md``), and for metrics by ``tests/reference.py`` --
or raise ``ValueError`` / ``TypeError`` with a non-empty message. Anything else (a crash, a
hang, ``IndexError``, ``OverflowError``, ``MemoryError``, ``SystemError``, ...) fails. Returned
objects must satisfy the storage invariants (sorted CSR indices, no explicit zeros,
non-negative ids, rankings without duplicates, read-only arrays) and metric values must lie in
each metric's range, with NaN only where documented and never ``-0.0``.

Known bugs that are reported but not fixed yet are listed in ``KNOWN_BUGS``; each has a strict
``xfail`` regression test at the end of this file (or in ``test_reliability.py``), and the fuzz
properties tolerate exactly that failure mode. Fixed bugs keep a plain regression test. When a fix lands its regression test XPASSes (strict: the suite fails), which
is the reminder to delete the test's ``xfail`` mark and the tolerance here.

Run longer with ``HYPOTHESIS_PROFILE=long python -m pytest tests/test_fuzz.py``.
"""
import functools
import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

sys.path.insert(0, os.path.dirname(__file__))
from rankereval import (  # noqa: E402
    AP,
    DCG,
    NDCG,
    BinaryLabels,
    InvalidValuesWarning,
    NumericLabels,
    Precision,
    Rankings,
    Recall,
)
from fuzzing import (  # noqa: E402  (oracles, strategies and invariant checks)
    ALL_METRIC_CLASSES, FILTERS, INT64_MAX, K_VALUES, MAX_ID, MAX_K, UNDECIDED, any_input,
    assert_clean_error, check_labels, check_rankings, check_unmodified, check_warnings, expect,
    id_bug_tolerance, metric_outcome, oracle, oracle_from_ranked_indices, oracle_from_scores,
    oracle_id_rows, oracle_label_matrix, oracle_positive_indices, run, score_all_metrics,
    score_everything, score_everything_rankings, scoring_inputs, snapshot, some_metric,
    sparse_inputs,
)

pytestmark = [
    # noise of the test's own input generation (np.matrix layouts, hypothesis casts)
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
    pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning"),
]


# =========================================================================================
# constructors
# =========================================================================================

@given(x=any_input())
def test_from_positive_indices(x):
    before = [snapshot(x)]
    out = run(BinaryLabels.from_positive_indices, x)
    check_warnings(out, x)
    check_unmodified(before, x)
    expected = oracle(oracle_positive_indices, x)
    note(f"expected={expected!r} outcome={out!r}")
    if expect(out, expected, id_bug_tolerance(x)):
        check_labels(out.value, BinaryLabels)
        rows, n_items = expected
        assert out.value.indices_to_list() == rows
        assert out.value.n_items == n_items
        score_everything(out.value, [rows[::-1], [r[::-1] for r in rows]])


@pytest.mark.parametrize("cls", [BinaryLabels, NumericLabels])
@given(x=any_input())
def test_from_matrix(cls, x):
    before = [snapshot(x)]
    out = run(cls.from_matrix, x)
    check_warnings(out, x)
    check_unmodified(before, x)
    expected = oracle(oracle_label_matrix, x, cls is BinaryLabels)
    note(f"expected={expected!r} outcome={out!r}")
    if out.exc is None and expected is UNDECIDED:
        check_labels(out.value, cls)
    if expect(out, expected):
        y = out.value
        check_labels(y, cls)
        rows, n_items = expected
        assert y.indices_to_list() == [[j for j, _ in r] for r in rows]
        assert y.labels_to_list() == [[v for _, v in r] for r in rows]
        assert y.n_items == n_items
        ids = [[j for j, _ in r] for r in rows]
        score_everything(y, [ids, [r[::-1] for r in ids]])


def _given(**kwargs):
    """The keyword arguments that were drawn (None: leave the default)."""
    return {k: v for k, v in kwargs.items() if v is not None}


@given(x=any_input(), valid=FILTERS, invalid=FILTERS)
def test_from_ranked_indices(x, valid, invalid):
    before = [snapshot(v) for v in (x, valid, invalid)]
    out = run(Rankings.from_ranked_indices, x, **_given(valid_items=valid, invalid_items=invalid))
    check_warnings(out, x, valid, invalid)
    check_unmodified(before, x, valid, invalid)
    expected = oracle(oracle_from_ranked_indices, x, valid, invalid)
    note(f"expected={expected!r} outcome={out!r}")
    if expect(out, expected, id_bug_tolerance(x, valid, invalid)):
        check_rankings(out.value)
        assert out.value.to_list() == expected
        if any(len(r) == 0 for r in expected):
            assert any(issubclass(w.category, InvalidValuesWarning) for w in out.warns)
        ids = sorted({v for r in expected for v in r})
        score_everything_rankings(out.value, ids)


@given(x=any_input(), valid=FILTERS, invalid=FILTERS, k=K_VALUES)
def test_from_scores(x, valid, invalid, k):
    before = [snapshot(v) for v in (x, valid, invalid)]
    out = run(Rankings.from_scores, x, **_given(valid_items=valid, invalid_items=invalid, k=k))
    check_warnings(out, x, valid, invalid)
    check_unmodified(before, x, valid, invalid)
    expected = oracle(oracle_from_scores, x, valid, invalid, k)
    note(f"expected={expected!r} outcome={out!r}")
    if expect(out, expected, id_bug_tolerance(valid, invalid)):
        check_rankings(out.value)
        assert out.value.to_list() == expected
        ids = sorted({v for r in expected for v in r})
        score_everything_rankings(out.value, ids)


# =========================================================================================
# metrics
# =========================================================================================

@given(inputs=scoring_inputs(), data=st.data())
def test_metrics_match_reference(inputs, data):
    y_true, y_pred = inputs
    before = [snapshot(a) for a in (y_true.indptr, y_true.indices, y_true.values, y_pred.indices, y_pred.lengths)]
    score_all_metrics(y_true, y_pred, data)
    check_unmodified(before, y_true.indptr, y_true.indices, y_true.values, y_pred.indices, y_pred.lengths)


ARBITRARY_OBJECTS = st.one_of(
    st.none(), st.integers(), st.text(max_size=3), st.lists(st.integers(0, 3), max_size=3),
    hnp.arrays(np.int64, (2, 2)), sparse_inputs(),
    st.just(BinaryLabels.from_positive_indices([[0]])), st.just(NumericLabels.from_matrix([[1, 2]])),
    st.just(Rankings.from_ranked_indices([[0, 1]])), st.just(Precision(1)),
)


@given(cls=st.sampled_from(ALL_METRIC_CLASSES), y_true=ARBITRARY_OBJECTS, y_pred=ARBITRARY_OBJECTS)
def test_metric_arguments_of_the_wrong_type(cls, y_true, y_pred):
    metric = some_metric(cls, 1)
    for fn in (metric.score, metric.mean, metric.bootstrap):
        out = run(fn, y_true, y_pred)
        if out.exc is None:
            assert isinstance(y_true, BinaryLabels) or (isinstance(y_true, NumericLabels) and cls.info.labels == "graded")
            assert isinstance(y_pred, Rankings)
        else:
            assert_clean_error(out.exc)


PARAM_LIKE = st.one_of(
    st.integers(-3, 10), st.sampled_from([2**31, MAX_K, MAX_K + 1, 2**63, 2**70, np.int64(4), np.uint8(3),
                                         np.uint64(2**64 - 1), True, False, np.bool_(True)]),
    st.none(), st.floats(allow_nan=True), st.text(max_size=3),
    st.sampled_from(["identity", "power", "e", "2", "E", 2, np.e, "propagate", "drop", "zerofill", "percentile", "bca"]),
    st.lists(st.integers(), max_size=2),
)


@given(cls=st.sampled_from(ALL_METRIC_CLASSES), args=st.lists(PARAM_LIKE, max_size=4),
       kwargs=st.dictionaries(st.sampled_from(["k", "truncated", "relevance_scaling", "log_base", "other"]), PARAM_LIKE,
                              max_size=3))
def test_metric_constructor_arguments(cls, args, kwargs):
    out = run(cls, *args, **kwargs)
    if out.exc is not None:
        assert_clean_error(out.exc)
        return
    metric = out.value
    assert metric == metric and hash(metric) == hash(metric) and repr(metric)
    y_true = (NumericLabels.from_matrix([[0, 1, 2, 0, 3]]) if cls.info.labels == "graded"
              else BinaryLabels.from_positive_indices([[0, 2]]))
    y_pred = Rankings.from_ranked_indices([[2, 1, 0], [4, 3], [0]])
    metric_outcome(metric, y_true, y_pred)


@given(cls=st.sampled_from(ALL_METRIC_CLASSES),
       kwargs=st.dictionaries(
           st.sampled_from(["nan_handling", "conf_interval", "n_bootstrap_samples", "confidence", "random_state",
                            "method"]),
           st.one_of(PARAM_LIKE, st.integers(2, 30), st.floats(0.01, 0.99), st.booleans()), max_size=5))
def test_mean_arguments(cls, kwargs):
    n = kwargs.get("n_bootstrap_samples", 1000)
    if kwargs.get("conf_interval") and isinstance(n, (int, np.integer)):
        assume(n <= 5000)  # huge n: see test_huge_n_bootstrap_samples
    metric = some_metric(cls, 2)
    y_true = BinaryLabels.from_positive_indices([[0, 2], [1], []]).with_judged([[0, 2, 5], [1, 3], [4]])
    y_pred = Rankings.from_ranked_indices([[2, 1, 0], [4, 3], [0]])
    out = run(metric.mean, y_true, y_pred, **kwargs)
    if out.exc is not None:
        assert_clean_error(out.exc)
        return
    v = out.value
    if kwargs.get("conf_interval"):
        assert set(v) == {"score", "conf_interval"}
        lo, hi = v["conf_interval"]
        assert (math.isnan(lo) and math.isnan(hi)) or lo <= hi
    else:
        assert isinstance(v, float)


# =========================================================================================
# regression tests for the bugs found by the fuzzing above (fixed ones pinned; open ones as
# strict xfail until fixed)
# =========================================================================================

@pytest.mark.parametrize("build", [
    lambda: BinaryLabels.from_positive_indices([[2**63 - 1]]),
    lambda: BinaryLabels.from_positive_indices(np.array([[INT64_MAX, 0]], dtype=np.int64)),
    lambda: Rankings.from_ranked_indices([[0, 1]], valid_items=[INT64_MAX]),
    lambda: Rankings.from_scores([[1.0, 2.0]], invalid_items=[[INT64_MAX]]),
    lambda: Rankings.from_ranked_indices([[INT64_MAX, 0]]),
    lambda: Rankings.from_ranked_indices([np.array([INT64_MAX], dtype=np.uint64)]),
], ids=["labels-list", "labels-array", "valid_items", "invalid_items", "rankings-list", "rankings-uint64-row"])
def test_id_int64_max_is_rejected(build):
    """Fixed (was OverflowError for labels): ids must be below 2**63 - 1 so that n_items fits int64."""
    with pytest.raises(ValueError, match="too large"):
        build()


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_rankings_2d_id_int64_max_is_rejected(dtype):
    """Fixed (the 2-D integer array fast path accepted the id 2**63 - 1)."""
    out = run(Rankings.from_ranked_indices, np.array([[INT64_MAX, 0]], dtype=dtype))
    assert isinstance(out.exc, ValueError), out


def test_ids_near_the_int64_limit_are_accepted():
    big = MAX_ID
    y = BinaryLabels.from_positive_indices([[big, 0], [big - 1]])
    assert y.indices_to_list() == [[0, big], [big - 1]] and y.n_items == big + 1
    for r in (Rankings.from_ranked_indices([[big, 3, big - 1]]),
              Rankings.from_ranked_indices(np.array([[big, 3, big - 1]], dtype=np.uint64)),
              Rankings.from_ranked_indices([[big, 3, big - 1]], valid_items=[[big, big - 1]])):
        check_rankings(r)
        assert r.to_list()[0][0] == big
        assert Precision(1).score(y, Rankings.from_ranked_indices([[big, 0], [big - 1]])).tolist() == [1.0, 1.0]


@pytest.mark.parametrize("x", [
    [np.array([1, 2]), np.array([])],                                 # np.array([]) is float64
    [np.array([5], dtype=np.uint64), np.array([3], dtype=np.int64)],  # uint64 + int64 -> float64
    [np.uint64(5), np.int64(3)],
    [[np.uint64(5)], [np.int32(3)]],
    [np.array([], dtype=np.complex64), np.array([2], dtype=np.int8)],
], ids=["empty-float-row", "uint64+int64-arrays", "uint64+int64-scalars", "mixed-scalar-rows", "empty-complex-row"])
def test_integer_ids_of_mixed_dtypes_stay_integers(x):
    """Fixed (was ValueError 'got float64 values'): numpy's promotion must not reject valid ids."""
    assert BinaryLabels.from_positive_indices(x).indices_to_list() == [sorted(r) for r in oracle_id_rows(x)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InvalidValuesWarning)
        assert Rankings.from_ranked_indices(x).to_list() == oracle_id_rows(x)


@pytest.mark.parametrize("call", [
    lambda y, r: Precision(2**63).score(y, r),
    lambda y, r: Recall(np.uint64(2**64 - 1)).score(y, r),
    lambda y, r: NDCG(2**63).score(y, r),
    lambda y, r: AP(10**30).score(y, r),
    lambda y, r: DCG(MAX_K + 1).score(y, r),
    lambda y, r: Rankings.from_scores([[1.0, 2.0]], k=2**63),
    lambda y, r: Rankings.from_scores(sp.csr_array([[1.0, 2.0]]), k=2**70),
], ids=["precision", "recall-uint64", "ndcg", "ap", "dcg-2**62+1", "from_scores", "from_scores-sparse"])
def test_huge_k_is_rejected(call):
    """Fixed (was OverflowError from the kernels' Py_ssize_t): k is at most 2**62."""
    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_ranked_indices([[0, 1]])
    with pytest.raises(ValueError, match="k"):
        call(y, r)


def test_largest_k_is_accepted():
    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_ranked_indices([[0, 1]])
    assert Precision(MAX_K).score(y, r)[0] == 1 / MAX_K
    assert NDCG(MAX_K).score(y, r)[0] == 1.0
    assert Rankings.from_scores([[1.0, 2.0]], k=MAX_K).to_list() == [[1, 0]]


@pytest.mark.filterwarnings("ignore:overflow encountered in reduce:RuntimeWarning")  # label-sum-overflow-warning
@pytest.mark.parametrize("labels, scaling", [
    ([[1e308, 1e308]], "identity"),  # the ideal DCG overflows
    ([[2000.0]], "power"),           # 2**2000 - 1 overflows
], ids=["huge-identity", "huge-power"])
def test_ndcg_with_overflowing_ideal_dcg_is_rejected(labels, scaling):
    """Fixed (was NaN = inf/inf): documented ValueError."""
    y = NumericLabels.from_matrix(labels)
    r = Rankings.from_ranked_indices([[0, 1], [1, 0], [2]])
    with pytest.raises(ValueError, match="overflow"):
        NDCG(relevance_scaling=scaling).score(y, r)


@pytest.mark.parametrize("label", [1e-300, 5e-324, 1e-17])
def test_ndcg_power_scaling_of_tiny_labels(label):
    """Fixed (was NaN = 0/0, since exp2(v) - 1 == 0): the power gain 2**v - 1 uses expm1, so for
    tiny labels it is proportional to the label and NDCG equals the identity-scaled NDCG."""
    y = NumericLabels.from_matrix([[label, 0, max(label / 2, 5e-324)]])
    r = Rankings.from_ranked_indices([[0, 2, 1], [2, 0], [1]])
    s = NDCG(relevance_scaling="power").score(y, r)
    assert s[0] == 1.0 and s[2] == 0.0 and 0.0 < s[1] <= 1.0, s
    if label > 1e-300:
        np.testing.assert_allclose(s, NDCG().score(y, r), rtol=1e-12)
    assert np.all(DCG(relevance_scaling="power").score(y, r)[:2] > 0)


def test_longdouble_labels_beyond_float64_are_rejected():
    """Fixed (was stored as inf): labels are checked after the float64 conversion."""
    big = np.array([[np.longdouble("1e4000"), 1]], dtype=np.longdouble)
    for cls in (NumericLabels, BinaryLabels):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(ValueError, match="finite"):
                cls.from_matrix(big)


def test_longdouble_scores_beyond_float64_warn_only_once():
    """Fixed (numpy's 'overflow encountered in cast' leaked out of Rankings.from_scores)."""
    big = np.array([[np.longdouble("1e4000"), 1]], dtype=np.longdouble)
    out = run(Rankings.from_scores, big)
    assert out.exc is None and out.value.to_list() == [[1]]
    assert [w.category for w in out.warns] == [InvalidValuesWarning], [str(w.message) for w in out.warns]


@pytest.mark.parametrize("labels", [[[1e308, 1e308]], sp.csr_array([[1e308, 0.0, 1.7e308]])], ids=["dense", "sparse"])
def test_huge_finite_labels_do_not_warn(labels):
    """Fixed (the fast label check's sum leaked numpy's overflow RuntimeWarning)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert NumericLabels.from_matrix(labels).n_rows == 1


@pytest.mark.parametrize("build", [BinaryLabels.from_positive_indices, Rankings.from_ranked_indices])
def test_no_complex_warning_for_empty_input(build):
    """Fixed (numpy's ComplexWarning leaked from the cast of an empty complex id array)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", InvalidValuesWarning)
        build(np.array([], dtype=np.complex64))


_EMPTY_WIDE_BUILDERS = {
    "from_positive_indices": BinaryLabels.from_positive_indices,
    "valid_items": lambda m: Rankings.from_ranked_indices(np.zeros((0, 2), int), valid_items=m),
    "binary-from_matrix": BinaryLabels.from_matrix,
    "numeric-from_matrix": NumericLabels.from_matrix,
    "from_scores": Rankings.from_scores,
}


@pytest.mark.parametrize("case", list(_EMPTY_WIDE_BUILDERS))
def test_empty_wide_sparse_matrix(case):
    """Fixed (scipy's eliminate_zeros failed on a 0-row matrix wider than 2**31 - 1 columns)."""
    m = sp.csr_matrix((0, 2**31 + 3), dtype=np.int8)
    out = _EMPTY_WIDE_BUILDERS[case](m)
    assert len(out) == 0


# Malformed scipy structures (mutated after construction) reach the kernels unchecked and can
# corrupt memory, so they run in a child process that forks once per case.
_MALFORMED = {
    "negative-index-labels": ("m.indices[0] = -100000", "BinaryLabels.from_positive_indices(m)"),
    "index-beyond-shape-labels": ("m.indices[1] = 10**9", "NumericLabels.from_matrix(m)"),
    "negative-index-scores": ("m.indices[0] = -1", "Rankings.from_scores(m)"),
    "index-beyond-shape-scores": ("m.indices[1] = 10**9", "Rankings.from_scores(m)"),
    "bad-indptr": ("m.indptr[1] = 50", "BinaryLabels.from_matrix(m)"),
    "decreasing-indptr": ("m.indptr[1] = 3; m.indptr[2] = 1", "Rankings.from_scores(m)"),
    "coo-negative-row": ("m = m.tocoo(); m.row[0] = -1", "BinaryLabels.from_matrix(m)"),
    "coo-col-beyond-shape": ("m = m.tocoo(); m.col[1] = 7", "Rankings.from_scores(m)"),
    "csc-index-beyond-shape": ("m = m.tocsc(); m.indices[0] = 99", "NumericLabels.from_matrix(m)"),
    "filter-negative-index": ("m.indices[0] = -7", "Rankings.from_ranked_indices([[0, 1]] * 2, valid_items=m)"),
    "filter-index-beyond-shape": ("m.indices[1] = 10**6", "Rankings.from_scores([[1.0, 2.0, 3.0]] * 2, invalid_items=m)"),
}
_MALFORMED_CHILD = """
import json, os, sys
import numpy as np, scipy.sparse as sp
from rankereval import *
cases = json.loads(sys.argv[1])
results = {}
for name, (mutation, call) in cases.items():
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            m = sp.csr_array((np.array([1.0, 1.0]), np.array([0, 1]), np.array([0, 2, 2])), shape=(2, 3))
            exec(mutation)
            try:
                obj = eval(call)
            except (ValueError, TypeError) as exc:
                msg = "REJECTED " + type(exc).__name__
            else:  # accepted: scoring it must not corrupt memory either
                if isinstance(obj, Rankings):
                    Precision(2).score(BinaryLabels.from_positive_indices([[0]]), obj)
                elif isinstance(obj, BinaryLabels):
                    Precision(2).score(obj, Rankings.from_ranked_indices([[0, 1, 2], [2, 1]]))
                else:
                    DCG().score(obj, Rankings.from_ranked_indices([[0, 1, 2], [2, 1]]))
                msg = "ACCEPTED"
        except BaseException as exc:
            msg = "RAISED " + repr(exc)
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    out = os.read(r, 4096).decode()
    _, status = os.waitpid(pid, 0)
    results[name] = out if status == 0 else f"CRASHED (wait status {status}) after {out!r}"
print(json.dumps(results))
"""


@functools.lru_cache(maxsize=None)
def _malformed_results():
    import json

    proc = subprocess.run([sys.executable, "-c", _MALFORMED_CHILD, json.dumps(_MALFORMED)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.parametrize("case", list(_MALFORMED))
def test_malformed_sparse_is_rejected(case):
    """Fixed (was accepted, then out-of-bounds reads/writes in the kernels: segfault)."""
    assert _malformed_results()[case].startswith("REJECTED"), _malformed_results()[case]
