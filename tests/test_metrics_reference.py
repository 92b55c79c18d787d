"""Property tests: every metric and every option against the literal reference.

The reference implementation lives in ``tests/reference.py`` (pure Python, one
function per metric, written from the definitions of the API contract).  Here
hypothesis generates inputs covering:

* empty rankings, rankings shorter and longer than k;
* label rows with 0, 1 and many positives;
* broadcast labels (one label row for many rankings);
* graded (NumericLabels) labels for DCG / NDCG, including explicit zeros;
* rankings given as lists, lists of int32 / int64 arrays and 2-D int32 / int64
  arrays;
* item ids above 2**31 (and 2**53 + 1, which float64 cannot represent);
* labels given as lists, arrays, 2-D arrays, dense matrices and scipy sparse
  arrays (``from_positive_indices`` and ``from_matrix``);

and each metric is evaluated for all its options (several k, truncated,
relevance_scaling, log_base, k=None) on every example.  Values must agree to
1e-12 (relative and absolute); NaN must match NaN and +inf must match +inf.

At the end, a few hand-computed exact cases per metric (derived in comments,
not copied from program output) check both the reference and the package.
"""
import math
import os
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as ref  # noqa: E402

import rankereval  # noqa: E402
from rankereval._validation import bitset_fits  # noqa: E402
from rankereval.metrics._base import _forced_lookup, _registered  # noqa: E402
from rankereval import (  # noqa: E402
    AP,
    DCG,
    F1,
    NDCG,
    BinaryLabels,
    FirstRelevantRank,
    HitRate,
    MeanRanks,
    NumericLabels,
    Precision,
    Rankings,
    Recall,
    ReciprocalRank,
)

RTOL = 1e-12
ATOL = 1e-12
# lookup strategies of the metric kernel (forced with rankereval.metrics._base._forced_lookup)
LOOKUPS = ("auto", "bitset", "search", "scan")
METRIC_CLASSES = _registered()

SMALL_IDS = list(range(12))
# ids that do not fit in int32, one that float64 cannot represent exactly
BIG_IDS = [2**31 - 1, 2**31, 2**31 + 1, 2**32 + 5, 2**40 + 3, 2**53 + 1]

# cutoffs evaluated on every example (rankings have length 0..10, so these are
# below, around and above the ranking lengths); one more k is drawn per example
FIXED_KS = [1, 2, 3, 5, 10, 50]

GRADED_VALUES = st.one_of(
    st.integers(1, 5),
    st.sampled_from([0.5, 1.5, 2.25, 3.75]),
    st.floats(0.1, 8.0, allow_nan=False, allow_infinity=False),
)


# --------------------------------------------------------------------------- #
# input generation
# --------------------------------------------------------------------------- #
@st.composite
def metric_inputs(draw, graded=False):
    """Draw label rows (dicts) and rankings (lists) plus their input formats.

    Returns a dict with the plain-Python data (for the reference) and the
    format choices used to build the rankereval objects (``build``).
    """
    use_big = draw(st.booleans())
    universe = SMALL_IDS + BIG_IDS if use_big else SMALL_IDS
    n_rankings = draw(st.integers(1, 5))
    broadcast = draw(st.booleans())
    n_label_rows = 1 if broadcast else n_rankings

    # ---- rankings
    ranking_formats = ["list", "int64_arrays", "int64_2d"]
    if not use_big:
        ranking_formats += ["int32_arrays", "int32_2d"]
    ranking_format = draw(st.sampled_from(ranking_formats))
    if ranking_format.endswith("_2d"):
        common = draw(st.integers(0, 10))
        sizes = [common] * n_rankings
    else:
        sizes = [draw(st.integers(0, 10)) for _ in range(n_rankings)]
    rankings = [
        draw(st.lists(st.sampled_from(universe), min_size=s, max_size=s, unique=True))
        for s in sizes
    ]

    # ---- labels
    if graded:
        label_formats = ["csr", "coo"]
        if not use_big:
            label_formats += ["dense", "ragged"]
    else:
        label_formats = ["lists", "arrays", "indices_2d", "sparse_indices", "csr_matrix", "coo_matrix"]
        if not use_big:
            label_formats += ["dense_matrix"]
    label_format = draw(st.sampled_from(label_formats))
    if label_format == "indices_2d":
        common = draw(st.integers(1, 6))
        label_sizes = [common] * n_label_rows
    else:
        label_sizes = [draw(st.integers(0, 7)) for _ in range(n_label_rows)]
    label_rows = []
    for size in label_sizes:
        items = draw(st.lists(st.sampled_from(universe), min_size=size, max_size=size, unique=True))
        if graded:
            # explicit zeros are allowed in the input: they mean "not relevant"
            values = [draw(st.one_of(GRADED_VALUES, st.just(0))) for _ in items]
        else:
            values = [1] * len(items)
        label_rows.append(dict(zip(items, values)))
    # judgments (for Bpref, Judged, RBP's residual; every other metric must ignore them):
    # the row's items (graded zeros are judged non-relevant) and a few more judged ones
    judged_rows = None
    if draw(st.booleans()):
        judged_rows = [sorted(set(row) | set(draw(st.lists(st.sampled_from(universe), max_size=4))))
                       for row in label_rows]
    return {
        "rankings": rankings,
        "ranking_format": ranking_format,
        "label_rows": label_rows,
        "label_format": label_format,
        "graded": graded,
        "judged_rows": judged_rows,
    }


def build_rankings(rankings, fmt):
    if fmt == "list":
        data = [list(r) for r in rankings]
    elif fmt == "int64_arrays":
        data = [np.asarray(r, dtype=np.int64) for r in rankings]
    elif fmt == "int32_arrays":
        data = [np.asarray(r, dtype=np.int32) for r in rankings]
    elif fmt == "int64_2d":
        data = np.asarray(rankings, dtype=np.int64).reshape(len(rankings), -1)
    elif fmt == "int32_2d":
        data = np.asarray(rankings, dtype=np.int32).reshape(len(rankings), -1)
    else:
        raise AssertionError(fmt)
    return Rankings.from_ranked_indices(data)


def _sparse_parts(label_rows):
    rows, cols, vals = [], [], []
    for i, row in enumerate(label_rows):
        for item, value in row.items():
            rows.append(i)
            cols.append(item)
            vals.append(value)
    n_cols = max(cols) + 1 if cols else 1
    return (
        np.asarray(vals, dtype=np.float64),
        (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)),
        (len(label_rows), n_cols),
    )


def build_labels(label_rows, fmt, graded):
    if graded:
        vals, (r, c), shape = _sparse_parts(label_rows)
        if fmt == "csr":
            return NumericLabels.from_matrix(sp.csr_array((vals, (r, c)), shape=shape))
        if fmt == "coo":
            return NumericLabels.from_matrix(sp.coo_array((vals, (r, c)), shape=shape))
        if fmt == "dense":
            dense = np.zeros(shape)
            dense[r, c] = vals
            return NumericLabels.from_matrix(dense)
        if fmt == "ragged":
            ragged = []
            for row in label_rows:
                width = max(row) + 1 if row else 0
                dense_row = [0.0] * width
                for item, value in row.items():
                    dense_row[item] = value
                ragged.append(dense_row)
            return NumericLabels.from_matrix(ragged)
        raise AssertionError(fmt)

    positives = [list(row) for row in label_rows]
    if fmt == "lists":
        return BinaryLabels.from_positive_indices(positives)
    if fmt == "arrays":
        return BinaryLabels.from_positive_indices([np.asarray(p, dtype=np.int64) for p in positives])
    if fmt == "indices_2d":
        return BinaryLabels.from_positive_indices(np.asarray(positives, dtype=np.int64))
    vals, (r, c), shape = _sparse_parts(label_rows)
    if fmt == "sparse_indices":
        return BinaryLabels.from_positive_indices(sp.csr_array((vals, (r, c)), shape=shape))
    if fmt == "csr_matrix":
        return BinaryLabels.from_matrix(sp.csr_array((vals, (r, c)), shape=shape))
    if fmt == "coo_matrix":
        return BinaryLabels.from_matrix(sp.coo_array((vals, (r, c)), shape=shape))
    if fmt == "dense_matrix":
        dense = np.zeros(shape, dtype=np.int64)
        dense[r, c] = 1
        return BinaryLabels.from_matrix(dense)
    raise AssertionError(fmt)


def build(data):
    """Build (y_true, y_pred) rankereval objects from drawn data."""
    note(repr(data))
    with warnings.catch_warnings():
        # empty rankings legitimately warn (InvalidValuesWarning)
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        y_pred = build_rankings(data["rankings"], data["ranking_format"])
        y_true = build_labels(data["label_rows"], data["label_format"], data["graded"])
    if data.get("judged_rows") is not None:
        y_true = y_true.with_judged(data["judged_rows"])
    return y_true, y_pred


def check(metric, data, y_true, y_pred, ref_fn, **params):
    """Compare metric.score with the reference for one parameter set (where the reference
    refuses the input, e.g. Bpref without judgments, the metric must raise ValueError)."""
    try:
        expected = ref.score_rows(ref_fn, data["label_rows"], data["rankings"],
                                  judged_rows=data.get("judged_rows"), n_items=y_true.n_items, **params)
    except ValueError:
        with pytest.raises(ValueError), warnings.catch_warnings():
            warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
            metric.score(y_true, y_pred)
        return
    expected = np.asarray(expected, dtype=np.float64)
    # the kernel chooses a lookup strategy per row; force each one in turn, so that every
    # strategy is checked on every input whatever the chooser would pick
    for lookup in LOOKUPS:
        with warnings.catch_warnings(), _forced_lookup(lookup):
            warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
            if lookup == "bitset" and not bitset_fits(y_true.n_items, y_pred.indices.size):
                # a forced strategy that cannot apply refuses instead of running another
                with pytest.raises(ValueError, match="bitset lookup cannot be forced"):
                    metric.score(y_true, y_pred)
                continue
            got = metric.score(y_true, y_pred)
        _assert_matches(got, expected, metric, dict(params, lookup=lookup))


def _assert_matches(got, expected, metric, params):
    assert isinstance(got, np.ndarray)
    assert got.dtype == np.float64
    assert got.shape == expected.shape
    # cheap test first (thousands of comparisons per test); the same criterion
    # as assert_allclose(rtol, atol, equal_nan=True), which reports failures
    with np.errstate(invalid="ignore"):
        finite = np.isfinite(got) & np.isfinite(expected)
        close = np.where(
            finite,
            np.abs(got - expected) <= ATOL + RTOL * np.abs(expected),
            (got == expected) | (np.isnan(got) & np.isnan(expected)),  # inf == inf, nan ~ nan
        )
    if not close.all():
        np.testing.assert_allclose(
            got,
            expected,
            rtol=RTOL,
            atol=ATOL,
            equal_nan=True,
            err_msg="%s(%r)" % (type(metric).__name__, params),
        )
        raise AssertionError("mismatch %r != %r for %r" % (got, expected, params))


def ks_for(extra_k):
    return sorted(set(FIXED_KS + [extra_k]))


EXTRA_K = st.integers(1, 12)


# --------------------------------------------------------------------------- #
# every registered metric, every option combination, every lookup strategy
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("cls", METRIC_CLASSES, ids=lambda c: c.__name__)
@given(data=st.booleans().flatmap(lambda graded: metric_inputs(graded=graded)), extra_k=EXTRA_K)
def test_every_metric_matches_reference(cls, data, extra_k):
    """Parametrised from the registry: a new metric is checked here without editing this
    test, against the literal reference ``tests/reference.py`` holds under its class name."""
    if cls.info.labels == "binary" and data["graded"]:  # binary metrics: relevant = grade > 0
        rows = [{item: 1 for item, v in row.items() if v > 0} for row in data["label_rows"]]
        data = dict(data, graded=False, label_rows=rows, label_format="lists")
    y_true, y_pred = build(data)
    ref_fn = ref.REFERENCE[cls.__name__]
    for params in cls._param_space(cutoffs=ks_for(extra_k)):
        check(cls(**params), data, y_true, y_pred, ref_fn, **params)


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(data=st.booleans().flatmap(lambda graded: metric_inputs(graded=graded)), k=st.one_of(st.none(), EXTRA_K))
def test_ndcg_is_independent_of_log_base(data, k):
    """log_b(x) = ln(x) / ln(b): the factor cancels in DCG / IDCG."""
    y_true, y_pred = build(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        for scaling in ("identity", "power"):
            natural = NDCG(k, relevance_scaling=scaling, log_base="e").score(y_true, y_pred)
            binary = NDCG(k, relevance_scaling=scaling, log_base="2").score(y_true, y_pred)
            np.testing.assert_allclose(natural, binary, rtol=1e-12, atol=1e-12, equal_nan=True)
            assert np.all(np.isnan(natural) | ((natural >= 0) & (natural <= 1 + 1e-12)))
            other = NDCG(k, relevance_scaling=scaling, log_base=10).score(y_true, y_pred)
            np.testing.assert_allclose(other, natural, rtol=1e-12, atol=1e-12, equal_nan=True)


@settings(max_examples=max(10, settings.default.max_examples // 2))
@given(data=st.booleans().flatmap(lambda graded: metric_inputs(graded=graded)), k=st.one_of(st.none(), EXTRA_K),
       base=st.one_of(st.sampled_from([10, 3, "10"]), st.floats(1.01, 1000)))
def test_dcg_with_any_log_base_matches_reference(data, k, base):
    """DCG/NDCG with a base other than e and 2 (scikit-learn's dcg_score(log_base=b)) against
    the literal reference, log_b(i + 1) = math.log(i + 1, b)."""
    y_true, y_pred = build(data)
    for cls in (DCG, NDCG):
        for scaling in ("identity", "power"):
            params = dict(k=k, relevance_scaling=scaling, log_base=base)
            metric = cls(**params)
            check(metric, data, y_true, y_pred, ref.REFERENCE[cls.__name__], **params)


# --------------------------------------------------------------------------- #
# hand-computed exact cases
# --------------------------------------------------------------------------- #
NAN = float("nan")
INF = float("inf")
LN2 = math.log(2)
LN3 = math.log(3)
LN4 = math.log(4)
L2_3 = math.log2(3)  # log2(3)


def _pos(rows):
    return BinaryLabels.from_positive_indices(rows)


def _rank(rows):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        return Rankings.from_ranked_indices(rows)


def _assert_case(metric, ref_fn, params, label_rows, rankings, expected, numeric=False):
    """Check both the reference and the package against hand-derived values."""
    ref_values = ref.score_rows(ref_fn, label_rows, rankings, **params)
    np.testing.assert_allclose(ref_values, expected, rtol=1e-14, atol=1e-14, equal_nan=True)
    if numeric:
        width = max((max(r) for r in label_rows if r), default=0) + 1
        dense = np.zeros((len(label_rows), width))
        for i, row in enumerate(label_rows):
            for item, value in row.items():
                dense[i, item] = value
        y_true = NumericLabels.from_matrix(dense)
    else:
        y_true = _pos([sorted(r) for r in label_rows])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
        got = metric.score(y_true, _rank(rankings))
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-14, equal_nan=True)


def B(*items):
    """A binary label row as a dict."""
    return {i: 1 for i in items}


HAND_CASES = [
    # ---- Precision
    # spec example: row 1 has no positive among [3, 2, 1] -> 0/3;
    # row 2: [1, 2] both relevant, k=3 not truncated -> 2/3
    ("Precision", dict(k=3), [B(0, 5), B(1, 2, 3)], [[3, 2, 1], [1, 2]], [0.0, 2 / 3]),
    # labels {1,2,3}, top 3 of [1,5,2,7] = 1,5,2 -> 2 hits / 3 (k' = 3 either way)
    ("Precision", dict(k=3, truncated=True), [B(1, 2, 3)], [[1, 5, 2, 7]], [2 / 3]),
    # [2] with k=3: 1 hit; not truncated 1/3, truncated k' = min(3, 1) = 1 -> 1
    ("Precision", dict(k=3), [B(1, 2, 3)], [[2]], [1 / 3]),
    ("Precision", dict(k=3, truncated=True), [B(1, 2, 3)], [[2]], [1.0]),
    # empty ranking: 0/k = 0 not truncated, k' = 0 -> NaN truncated; no positive -> NaN
    ("Precision", dict(k=2), [B(1), B(1), B()], [[], [1], [1]], [0.0, 0.5, NAN]),
    ("Precision", dict(k=2, truncated=True), [B(1), B(1), B()], [[], [1], [1]], [NAN, 1.0, NAN]),
    # ---- Recall
    # spec example: row 1 nothing relevant in top 3 -> 0; row 2 {1} found -> 1
    ("Recall", dict(k=3), [B(0, 5), B(1)], [[3, 2, 1], [1, 2]], [0.0, 1.0]),
    # labels {1,2,3,4}, ranking [1,9,2]; k=2: top 2 = 1,9 -> 1 hit; 1/4, truncated 1/min(4,2) = 1/2
    ("Recall", dict(k=2), [B(1, 2, 3, 4)], [[1, 9, 2]], [1 / 4]),
    ("Recall", dict(k=2, truncated=True), [B(1, 2, 3, 4)], [[1, 9, 2]], [1 / 2]),
    # k=3: 2 hits; 2/4, truncated 2/min(4,3) = 2/3; empty ranking -> 0; no positive -> NaN
    ("Recall", dict(k=3), [B(1, 2, 3, 4), B(7), B()], [[1, 9, 2], [], [7]], [1 / 2, 0.0, NAN]),
    ("Recall", dict(k=3, truncated=True), [B(1, 2, 3, 4), B(7), B()], [[1, 9, 2], [], [7]], [2 / 3, 0.0, NAN]),
    # ---- F1
    # spec example: row 2 P = 1/3, R = 1 -> 2*(1/3)/(4/3) = 1/2
    ("F1", dict(k=3), [B(0, 5), B(1)], [[3, 2, 1], [1, 2]], [0.0, 0.5]),
    # {1,2,3,4}, [1,9,2], k=3: P = 2/3, R = 2/4 -> 2*(1/3)/(7/6) = 4/7
    # {1,2}, [2], k=5: P = 1/5, R = 1/2 -> 2*(1/10)/(7/10) = 2/7
    ("F1", dict(k=3), [B(1, 2, 3, 4)], [[1, 9, 2]], [4 / 7]),
    ("F1", dict(k=5), [B(1, 2)], [[2]], [2 / 7]),
    # truncated: P = 2/3 (k'=3), R = 2/min(4,3) = 2/3 -> 2/3;
    #            [2], k=5: P = 1/1, R = 1/min(2,5) = 1/2 -> 2*(1/2)/(3/2) = 2/3
    ("F1", dict(k=3, truncated=True), [B(1, 2, 3, 4)], [[1, 9, 2]], [2 / 3]),
    ("F1", dict(k=5, truncated=True), [B(1, 2)], [[2]], [2 / 3]),
    # no hit -> 0 (also for the empty ranking, truncated or not); no positive -> NaN
    ("F1", dict(k=2), [B(1), B(1), B()], [[5, 6], [], [1]], [0.0, 0.0, NAN]),
    ("F1", dict(k=2, truncated=True), [B(1), B(1), B()], [[5, 6], [], [1]], [0.0, 0.0, NAN]),
    # ---- HitRate
    # spec example: {0} not in [3,2,1] -> 0; {1} at rank 1 -> 1
    ("HitRate", dict(k=3), [B(0), B(1)], [[3, 2, 1], [1, 2]], [0.0, 1.0]),
    # {4} at rank 3: k=3 -> 1, k=2 -> 0; two positives / none -> NaN; empty ranking -> 0
    ("HitRate", dict(k=3), [B(4), B(4, 5), B(), B(4)], [[1, 2, 4], [4], [4], []], [1.0, NAN, NAN, 0.0]),
    ("HitRate", dict(k=2), [B(4)], [[1, 2, 4]], [0.0]),
    ("HitRate", dict(k=2, truncated=True), [B(4)], [[1, 2, 4]], [0.0]),
    # ---- ReciprocalRank
    # spec example: {0,5} in [3,0,1]: first relevant at rank 2 -> 1/2; {1} rank 1 -> 1
    ("ReciprocalRank", dict(k=3), [B(0, 5), B(1)], [[3, 0, 1], [1, 2]], [0.5, 1.0]),
    # {3,8} in [1,8,3]: first relevant rank 2 -> 1/2 with k=3, nothing in top 1 -> 0
    ("ReciprocalRank", dict(k=1), [B(3, 8), B(3), B()], [[1, 8, 3], [], [1]], [0.0, 0.0, NAN]),
    # ---- AP
    # spec example: row 2 [1,2] both relevant: (P@1 + P@2)/min(3, 3) = 2/3
    ("AP", dict(k=3), [B(0, 5), B(1, 2, 3)], [[3, 2, 1], [1, 2]], [0.0, 2 / 3]),
    # {1,2,3} in [1,9,2,3], k=4: relevant at ranks 1,3,4 -> (1 + 2/3 + 3/4)/min(4,3) = (29/12)/3 = 29/36
    ("AP", dict(k=4), [B(1, 2, 3)], [[1, 9, 2, 3]], [29 / 36]),
    # same, k=2: only rank 1 counts -> 1 / min(2, 3) = 1/2
    # {5} in [9,5], k=10: P@2 = 1/2, / min(10, 1) -> 1/2; empty -> 0; no positive -> NaN
    ("AP", dict(k=2), [B(1, 2, 3)], [[1, 9, 2, 3]], [1 / 2]),
    ("AP", dict(k=10), [B(5), B(5), B()], [[9, 5], [], [5]], [0.5, 0.0, NAN]),
    # ---- MeanRanks
    # spec example: {0,5} in [3,0,5] at ranks 2,3 -> 2.5; {1} in [1,2] -> 1
    ("MeanRanks", dict(), [B(0, 5), B(1)], [[3, 0, 5], [1, 2]], [2.5, 1.0]),
    # {1,2,3} in [9,3,8,1]: ranks 2,4 -> 3; {7} absent -> +inf; empty ranking -> +inf; no positive -> NaN
    ("MeanRanks", dict(), [B(1, 2, 3), B(7), B(7), B()], [[9, 3, 8, 1], [1, 2], [], [1]], [3.0, INF, INF, NAN]),
    # ---- FirstRelevantRank
    # spec example: {0,5} in [3,0,5] -> 2; {1} in [1,2] -> 1
    ("FirstRelevantRank", dict(), [B(0, 5), B(1)], [[3, 0, 5], [1, 2]], [2.0, 1.0]),
    ("FirstRelevantRank", dict(), [B(9), B(9), B()], [[1, 2], [], [1]], [INF, INF, NAN]),
    # ---- DCG (binary labels)
    # {1,2} in [2,5,1]: 1/ln(2) + 0/ln(3) + 1/ln(4) = 1/ln2 + 1/(2 ln2) = 1.5/ln2
    ("DCG", dict(), [B(1, 2)], [[2, 5, 1]], [1.5 / LN2]),
    # log2: 1/1 + 1/2 = 1.5; k=2: 1/1 + 0 = 1; empty -> 0; no positive -> NaN
    ("DCG", dict(log_base="2"), [B(1, 2), B(1), B()], [[2, 5, 1], [], [1]], [1.5, 0.0, NAN]),
    ("DCG", dict(k=2, log_base="2"), [B(1, 2)], [[2, 5, 1]], [1.0]),
    # ---- NDCG (binary labels)
    # {1,2,3} in [2,5,1], k=2, log2: DCG = 1, IDCG = 1 + 1/log2(3)
    ("NDCG", dict(k=2, log_base="2"), [B(1, 2, 3)], [[2, 5, 1]], [1 / (1 + 1 / L2_3)]),
    # k=None: DCG = 1 + 1/log2(4) = 1.5, IDCG = 1 + 1/log2(3) + 1/2 (all three positives)
    ("NDCG", dict(log_base="2"), [B(1, 2, 3)], [[2, 5, 1]], [1.5 / (1.5 + 1 / L2_3)]),
    # empty ranking -> 0; relevant nowhere in top k -> 0; no positive -> NaN
    ("NDCG", dict(k=1), [B(1), B(1), B()], [[], [2, 1], [1]], [0.0, 0.0, NAN]),
]

NUMERIC_HAND_CASES = [
    # spec example: {0:1, 1:2, 2:3} ranked [0,2,1]: 1/ln2 + 3/ln3 + 2/ln4;
    #               {0:4, 1:5} ranked [1,0]: 5/ln2 + 4/ln3
    ("DCG", dict(k=3), [{0: 1, 1: 2, 2: 3}, {0: 4, 1: 5}], [[0, 2, 1], [1, 0]],
     [1 / LN2 + 3 / LN3 + 2 / LN4, 5 / LN2 + 4 / LN3]),
    # spec example NDCG: IDCG row 1 = 3/ln2 + 2/ln3 + 1/ln4; row 2 is ideal -> 1
    ("NDCG", dict(k=3), [{0: 1, 1: 2, 2: 3}, {0: 4, 1: 5}], [[0, 2, 1], [1, 0]],
     [(1 / LN2 + 3 / LN3 + 2 / LN4) / (3 / LN2 + 2 / LN3 + 1 / LN4), 1.0]),
    # power gains 2**rel - 1: {0:3, 1:1} ranked [1,0], log2: (2-1)/1 + (8-1)/log2(3)
    ("DCG", dict(relevance_scaling="power", log_base="2"), [{0: 3, 1: 1}], [[1, 0]], [1 + 7 / L2_3]),
    # k=1: only rank 1 -> 2**1 - 1 = 1
    ("DCG", dict(k=1, relevance_scaling="power", log_base="2"), [{0: 3, 1: 1}], [[1, 0]], [1.0]),
    # ln: 1/ln2 + 7/ln3
    ("DCG", dict(relevance_scaling="power"), [{0: 3, 1: 1}], [[1, 0]], [1 / LN2 + 7 / LN3]),
    # NDCG power log2: (1 + 7/L) / (7 + 1/L) with L = log2(3)
    ("NDCG", dict(relevance_scaling="power", log_base="2"), [{0: 3, 1: 1}], [[1, 0]],
     [(1 + 7 / L2_3) / (7 + 1 / L2_3)]),
    # identity, k=1, graded {0:3, 1:1, 2:2} ranked [2, 0]: DCG@1 = 2/ln2, IDCG@1 = 3/ln2 -> 2/3
    ("NDCG", dict(k=1), [{0: 3, 1: 1, 2: 2}], [[2, 0]], [2 / 3]),
    # fractional labels, log2: {4: 0.5, 6: 2.5} ranked [4, 6]: DCG = 0.5 + 2.5/log2(3)
    ("DCG", dict(log_base="2"), [{4: 0.5, 6: 2.5}], [[4, 6]], [0.5 + 2.5 / L2_3]),
    # power with 0.5: 2**0.5 - 1 at rank 1 (log2(2) = 1)
    ("DCG", dict(k=1, relevance_scaling="power", log_base="2"), [{4: 0.5, 6: 2.5}], [[4, 6]], [math.sqrt(2) - 1]),
]

METRIC_CLASSES = {
    "Precision": Precision,
    "Recall": Recall,
    "F1": F1,
    "HitRate": HitRate,
    "ReciprocalRank": ReciprocalRank,
    "AP": AP,
    "MeanRanks": MeanRanks,
    "FirstRelevantRank": FirstRelevantRank,
    "DCG": DCG,
    "NDCG": NDCG,
}


@pytest.mark.parametrize(
    "name, params, label_rows, rankings, expected",
    HAND_CASES,
    ids=["%s-%d" % (c[0], i) for i, c in enumerate(HAND_CASES)],
)
def test_hand_computed_binary(name, params, label_rows, rankings, expected):
    metric = METRIC_CLASSES[name](**params)
    _assert_case(metric, ref.REFERENCE[name], params, label_rows, rankings, expected)


@pytest.mark.parametrize(
    "name, params, label_rows, rankings, expected",
    NUMERIC_HAND_CASES,
    ids=["%s-%d" % (c[0], i) for i, c in enumerate(NUMERIC_HAND_CASES)],
)
def test_hand_computed_graded(name, params, label_rows, rankings, expected):
    metric = METRIC_CLASSES[name](**params)
    _assert_case(metric, ref.REFERENCE[name], params, label_rows, rankings, expected, numeric=True)


def test_hand_computed_big_ids():
    """Ids above 2**31 and 2**53 + 1 (not representable in float64)."""
    big = 2**53 + 1
    y_true = BinaryLabels.from_positive_indices([[2**31, big]])
    # big - 1 would be confused with big if ids went through float64
    y_pred = Rankings.from_ranked_indices([np.array([big - 1, 2**31, 7, big], dtype=np.int64)])
    # relevant at ranks 2 and 4
    np.testing.assert_allclose(MeanRanks().score(y_true, y_pred), [3.0])
    np.testing.assert_allclose(FirstRelevantRank().score(y_true, y_pred), [2.0])
    np.testing.assert_allclose(Precision(2).score(y_true, y_pred), [0.5])
    # AP@4 = (P@2 + P@4) / 2 = (1/2 + 2/4) / 2 = 1/2
    np.testing.assert_allclose(AP(4).score(y_true, y_pred), [0.5], rtol=1e-14)
    graded = NumericLabels.from_matrix(
        sp.csr_array(([2.0, 3.0], ([0, 0], [2**31, big])), shape=(1, big + 1))
    )
    # DCG log2 = 2/log2(3) + 3/log2(5)
    np.testing.assert_allclose(
        DCG(log_base="2").score(graded, y_pred), [2 / L2_3 + 3 / math.log2(5)], rtol=1e-14
    )


# --------------------------------------------------------------------------- #
# large inputs: the multi-threaded kernel path and long rankings
# --------------------------------------------------------------------------- #
def _random_problem(rng, n_rows, n_label_rows, id_offset, graded):
    """Random rankings of length 0..60 over ~80 ids, label rows of 0..30 items."""
    ids = np.arange(80, dtype=np.int64) + id_offset
    rankings = []
    for _ in range(n_rows):
        length = int(rng.integers(0, 61))
        rankings.append([int(x) for x in rng.choice(ids, size=length, replace=False)])
    label_rows = []
    for _ in range(n_label_rows):
        size = int(rng.integers(0, 31))
        items = [int(x) for x in rng.choice(ids, size=size, replace=False)]
        if graded:
            values = [float(v) for v in rng.choice([0.5, 1.0, 2.0, 3.0, 4.25], size=size)]
        else:
            values = [1] * size
        label_rows.append(dict(zip(items, values)))
    return rankings, label_rows


@pytest.mark.parametrize(
    "id_offset, broadcast",
    [(0, False), (0, True), (2**33, True)],
    ids=["small-ids-per-row", "small-ids-broadcast", "big-ids-broadcast"],
)
def test_large_inputs_match_reference(id_offset, broadcast):
    """1000 rankings x up to 60 items (>= 50k padded entries) exercises the
    threaded kernel path; ``check`` runs every lookup strategy (big ids leave
    the bitset out: their range is too large for it)."""
    rng = np.random.default_rng(12345 + id_offset % 7 + broadcast)
    n_rows = 1000
    for graded in (False, True):
        rankings, label_rows = _random_problem(rng, n_rows, 1 if broadcast else n_rows, id_offset, graded)
        data = {"rankings": rankings, "label_rows": label_rows}
        fmt = "csr" if graded else "lists"
        y_true = build_labels(label_rows, fmt, graded)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", rankereval.InvalidValuesWarning)
            y_pred = build_rankings(rankings, "int64_arrays")
        # the padded (n_rows, max_len) array is what the kernel iterates over;
        # make sure this input is above the package's threading threshold (50k)
        assert y_pred.indices.size >= 50_000
        configs = [
            (DCG, ref.dcg, dict(k=None, relevance_scaling="power", log_base="2")),
            (DCG, ref.dcg, dict(k=10, relevance_scaling="identity", log_base="e")),
            (NDCG, ref.ndcg, dict(k=None, relevance_scaling="identity", log_base="e")),
            (NDCG, ref.ndcg, dict(k=20, relevance_scaling="power", log_base="2")),
        ]
        if not graded:
            configs += [
                (Precision, ref.precision, dict(k=20, truncated=True)),
                (Recall, ref.recall, dict(k=20, truncated=False)),
                (F1, ref.f1, dict(k=10, truncated=True)),
                (HitRate, ref.hit_rate, dict(k=30)),
                (ReciprocalRank, ref.reciprocal_rank, dict(k=40)),
                (AP, ref.average_precision, dict(k=50)),
                (MeanRanks, ref.mean_ranks, dict()),
                (FirstRelevantRank, ref.first_relevant_rank, dict()),
            ]
        for cls, ref_fn, params in configs:
            check(cls(**params), data, y_true, y_pred, ref_fn, **params)
