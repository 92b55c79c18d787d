"""Top-k selection of ``Rankings.from_scores`` against a slow literal reference.

The rule (docs, ``Rankings.from_scores``): items by descending score, ties by ascending
item id; excluded items (outside ``valid_items`` or in ``invalid_items``) are never ranked;
NaN and infinite scores of candidates are dropped with an ``InvalidValuesWarning``; only
the first ``k`` items are kept. Scores are compared in their own dtype.

The inputs are built to stress the kernel: small integer-valued scores (many ties), every
score dtype, ``k`` above the number of candidates, empty rows, rows with every item
excluded, filters given once or per row, rows wide enough for the sampled threshold and
inputs that force its second pass. Also: arrays of other libraries (PyTorch, if installed)
and every documented error.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from rankereval import BinaryLabels, InvalidValuesWarning, Rankings
from rankereval import data as rdata
from rankereval.data import _topk

SCORE_DTYPES = [np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64,
                np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]
FLOAT_DTYPES = [np.float16, np.float32, np.float64]


# ---------------------------------------------------------------------------------------
# the slow reference, written from the rule
# ---------------------------------------------------------------------------------------

def _finite(v):
    return not isinstance(v, float) or (v == v and v not in (float("inf"), float("-inf")))


def reference(rows, k=None, valid=None, invalid=None):
    """``rows``: per row a list of (item id, score as a Python number). ``valid``/``invalid``:
    None, or one set of ids per row. Returns (rankings as lists, number of dropped scores)."""
    out, dropped = [], 0
    for i, cands in enumerate(rows):
        kept = []
        for j, v in cands:
            if valid is not None and j not in valid[i]:
                continue
            if invalid is not None and j in invalid[i]:
                continue
            if not _finite(v):
                dropped += 1
                continue
            kept.append((j, v))
        kept.sort(key=lambda jv: (-jv[1], jv[0]))
        out.append([j for j, _ in kept][:k])
    return out, dropped


def dense_rows(a):
    """(id, Python score) of every entry; float16/32 scores compare exactly as Python floats."""
    a = np.asarray(a)
    return [list(enumerate(row.tolist())) for row in a]


def sparse_rows(m):
    m = sp.csr_array(m)
    m.sum_duplicates()
    return [list(zip(m.indices[m.indptr[i]:m.indptr[i + 1]].tolist(), m.data[m.indptr[i]:m.indptr[i + 1]].tolist()))
            for i in range(m.shape[0])]


def run(fn, *args, **kwargs):
    """Result of ``fn`` and the number of NaN/inf scores its warning reports (0 if none)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    dropped = 0
    for w in caught:
        assert issubclass(w.category, InvalidValuesWarning), f"unexpected {w.category.__name__}: {w.message}"
        text = str(w.message)
        if text.startswith("dropped "):
            dropped = int(text.split()[1])
    return out, dropped


def filter_sets(f, n):
    if f is None:
        return None
    rows = f if isinstance(f[0], list) else [f]
    rows = rows * n if len(rows) == 1 else rows
    return [set(r) for r in rows]


# ---------------------------------------------------------------------------------------
# hypothesis inputs
# ---------------------------------------------------------------------------------------

@st.composite
def score_matrices(draw, max_rows=6, max_items=40):
    dtype = np.dtype(draw(st.sampled_from(SCORE_DTYPES)))
    n = draw(st.integers(0, max_rows))
    m = draw(st.integers(0, max_items))
    lo = 0 if dtype.kind in "ub" else -3
    hi = 1 if dtype.kind == "b" else 3
    values = draw(st.lists(st.integers(lo, hi), min_size=n * m, max_size=n * m))
    a = np.array(values, dtype=np.int64).reshape(n, m).astype(dtype)
    if dtype.kind == "f" and a.size:
        specials = draw(st.lists(st.tuples(st.integers(0, a.size - 1),
                                           st.sampled_from([np.nan, np.inf, -np.inf, -0.0, 0.5, -2.5])),
                                 max_size=4))
        flat = a.reshape(-1)
        for pos, v in specials:
            flat[pos] = v
    if dtype.kind in "iu" and a.size and draw(st.booleans()):
        # the extremes of the dtype: no float conversion may merge them with their neighbours
        info = np.iinfo(dtype)
        flat = a.reshape(-1)
        for pos in draw(st.lists(st.integers(0, a.size - 1), max_size=3)):
            flat[pos] = draw(st.sampled_from([info.min, info.max, info.max - 1]))
    return a


@st.composite
def item_filters(draw, n, m):
    """None, one row for all rankings, or one row per ranking (possibly every item)."""
    kind = draw(st.sampled_from(["none", "once", "per-row", "all"]))
    ids = st.lists(st.integers(0, m + 2), unique=True, max_size=m + 3)
    if kind == "none":
        return None
    if kind == "once":
        return sorted(draw(ids))
    if kind == "all":
        return list(range(m + 1))
    if n == 0:
        return None
    return [sorted(draw(ids)) for _ in range(n)]


K = st.none() | st.integers(1, 50)


@given(data=st.data())
def test_dense_matches_reference(data):
    a = data.draw(score_matrices())
    n, m = a.shape
    k = data.draw(K)
    valid = data.draw(item_filters(n, m))
    invalid = data.draw(item_filters(n, m))
    if (valid is not None and len(valid) == 0) or (invalid is not None and len(invalid) == 0):
        valid = invalid = None  # an empty flat list is one empty row: covered elsewhere
    expected, dropped = reference(dense_rows(a), k, filter_sets(valid, n), filter_sets(invalid, n))
    r, reported = run(Rankings.from_scores, a, k=k, valid_items=valid, invalid_items=invalid)
    assert r.to_list() == expected
    assert reported == dropped
    assert r.n_rows == n


@given(data=st.data())
def test_sparse_matches_reference(data):
    a = data.draw(score_matrices())
    if a.dtype == np.float16 or a.dtype == np.bool_:
        a = a.astype(np.float32)  # scipy sparse has no float16; bool sums are not scores
    n, m = a.shape
    stored = np.array(data.draw(st.lists(st.booleans(), min_size=a.size, max_size=a.size)), dtype=bool).reshape(n, m)
    rows, cols = np.nonzero(stored)
    mat = sp.csr_array((a[rows, cols], (rows, cols)), shape=(n, m))
    k = data.draw(K)
    invalid = data.draw(item_filters(n, m))
    valid = data.draw(item_filters(n, m))
    if (valid is not None and len(valid) == 0) or (invalid is not None and len(invalid) == 0):
        valid = invalid = None
    expected, dropped = reference(sparse_rows(mat), k, filter_sets(valid, n), filter_sets(invalid, n))
    r, reported = run(Rankings.from_scores, mat, k=k, valid_items=valid, invalid_items=invalid)
    assert r.to_list() == expected
    assert reported == dropped


@given(rows=st.lists(st.lists(st.integers(-3, 3) | st.sampled_from([0.5, float("nan")]), max_size=12), min_size=1,
                     max_size=5), k=K)
def test_ragged_lists_match_reference(rows, k):
    expected, dropped = reference([list(enumerate(float(v) if any(isinstance(x, float) for r in rows for x in r)
                                                  else v for v in r)) for r in rows], k)
    r, reported = run(Rankings.from_scores, rows, k=k)
    assert r.to_list() == expected
    assert reported == dropped


# ---------------------------------------------------------------------------------------
# wide rows: the sampled threshold and its second pass
# ---------------------------------------------------------------------------------------

def _wide(kind, dtype, rng, n=3, m=9000):
    if kind == "ties":
        a = rng.integers(-4, 5, size=(n, m))
    elif kind == "random":
        a = rng.random((n, m)) * 1000 - 500
    elif kind == "ascending":  # every score a new maximum: the threshold rises all the time
        a = np.tile(np.arange(m), (n, 1))
    elif kind == "outliers":  # the dtype's extremes among small scores: the winners crowd into
        # one bucket of the final sort (radix sorted), the others in buckets of one or two
        is_float = np.dtype(dtype).kind == "f"
        info = np.finfo(dtype) if is_float else np.iinfo(dtype)
        a = (rng.random((n, m)) * 100 if is_float else rng.integers(0, 100, size=(n, m))).astype(dtype)
        a[:, rng.choice(m, 5, replace=False)] = info.max
        a[:, rng.choice(m, 5, replace=False)] = info.min
        if is_float:
            a[rng.random(a.shape) < 0.01] = np.nan
        return a
    else:  # "sample-misses": the sample sees zeros only, fewer than k scores above them
        a = np.zeros((n, m))
        hot = np.concatenate([np.arange(40, 70), rng.choice(np.arange(300, m - 300), 20, replace=False)])
        a[:, hot] = rng.integers(1, 4, size=hot.size)
    if np.dtype(dtype).kind == "u":
        a = a - a.min()
    a = a.astype(dtype)
    if np.dtype(dtype).kind == "f":
        a[rng.random(a.shape) < 0.01] = np.nan
    return a


@pytest.mark.parametrize("kind", ["ties", "random", "ascending", "sample-misses", "outliers"])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int16, np.int32, np.int64, np.uint32])
def test_wide_rows_match_reference(kind, dtype):
    rng = np.random.default_rng(7)
    a = _wide(kind, dtype, rng)
    n, m = a.shape
    invalid = [sorted(rng.choice(m, 300, replace=False).tolist()) for _ in range(n)]
    rows = dense_rows(a)
    for k in (1, 10, 64, 100, 700, m + 5):
        expected, dropped = reference(rows, k, None, filter_sets(invalid, n))
        r, reported = run(Rankings.from_scores, a, k=k, invalid_items=invalid)
        assert r.to_list() == expected, k
        assert reported == dropped


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
@pytest.mark.parametrize("m", [8200, 9000 + 17])
def test_compress_scan_rows_match_reference(dtype, m, topk_path):
    """The rows of the compress scan (float32, float64, int32 and int64; re_compress_scan of
    _topk_algo.h with the kernel of _topk_avx512.h, or of _topk_avx2.h, where NaN and
    infinite candidates are dropped when the ids become entries), on every path: sampled thresholds with k >= m / 256, so that many scores pass; rows whose
    length is not a multiple of the 32-score block; NaN and infinite scores of either sign
    among the candidates and among the excluded items (only the candidates' are counted);
    excluded items in runs that fill whole blocks; a row above the sample (compactions)."""
    rng = np.random.default_rng(21)
    n = 6
    if np.dtype(dtype).kind == "f":
        a = rng.standard_normal((n, m)).astype(dtype)
        a[rng.random(a.shape) < 0.003] = np.inf
        a[rng.random(a.shape) < 0.003] = -np.inf
        a[rng.random(a.shape) < 0.003] = np.nan
        a[4, : m // 3] = np.inf  # one row where the excluded items are the non-finite ones
    else:
        info = np.iinfo(dtype)
        a = rng.integers(-(10**6), 10**6, size=(n, m)).astype(dtype)
        a[rng.random(a.shape) < 0.002] = info.max
        a[rng.random(a.shape) < 0.002] = info.min
    a[5] = np.arange(m)[::-1] % 997  # ties in runs of equal scores, none of them sampled alike
    # the sample sees only the lowest scores, nearly all pass its threshold: compactions
    sampled = np.zeros(m, dtype=bool)
    sampled[np.concatenate([_sample_positions(m, 100), _sample_positions(m, 300)])] = True
    a[3] = np.where(sampled, rng.integers(-50, 0, m), rng.integers(0, 50, m))
    invalid = [sorted(set(rng.choice(m, 400, replace=False).tolist()) | set(range(64 * i, 64 * i + 96)))
               for i in range(n)]
    invalid[4] = list(range(m // 3))
    rows = dense_rows(a)
    for k in (40, 100, 700, 3000):
        expected, dropped = reference(rows, k, None, filter_sets(invalid, n))
        r, reported = run(Rankings.from_scores, a, k=k, invalid_items=invalid)
        assert r.to_list() == expected, k
        assert reported == dropped, k


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint64])
def test_wide_64_bit_winners_with_equal_top_bits(dtype, topk_path):
    """64-bit winners whose keys span 2^32 or more are sorted on their top 32 bits with
    indices into the buffer (_topk_algo.h: out_words), and the runs of equal truncated keys --
    here most winners, differing only in low bits, many tied -- are ordered by the full
    keys afterwards, the run at the k-th position with its words beyond it."""
    rng = np.random.default_rng(17)
    n, m = 3, 9000
    if dtype == np.float64:
        a = 1.0 + rng.integers(0, 60, size=(n, m)) * 2.0**-40
        a[:, rng.choice(m, 3, replace=False)] = 1e300
        a[:, rng.choice(m, 3, replace=False)] = -1e300
    else:
        info = np.iinfo(dtype)
        a = (rng.integers(0, 60, size=(n, m)) + (2**40 if info.min == 0 else -30)).astype(dtype)
        a[:, rng.choice(m, 3, replace=False)] = info.max
        a[:, rng.choice(m, 3, replace=False)] = info.min
    invalid = [sorted(rng.choice(m, 100, replace=False).tolist()) for _ in range(n)]
    rows = dense_rows(a)
    for k in (40, 100, 150, 700, 3000):
        expected, _ = reference(rows, k, None, filter_sets(invalid, n))
        assert Rankings.from_scores(a, k=k, invalid_items=invalid).to_list() == expected, k


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
@pytest.mark.parametrize("offset", [0, 2**31 - 10_000, 2**40, 2**62])
def test_wide_integer_rows_in_a_narrow_range(dtype, offset, topk_path):
    """Integer scores in a narrow range, anywhere in the dtype: the sample's 32-bit keys are
    a window of the sampled range (_topk_traits.h: re_key_window; for 32-bit keys the bisection
    runs over the range's offsets), and the top k still follows the rule, ties included."""
    info = np.iinfo(dtype)
    if offset + 5000 > info.max:
        pytest.skip("offset beyond the dtype")
    rng = np.random.default_rng(5)
    n, m = 3, 9000
    a = (rng.integers(-4000, 4000, size=(n, m)) + (5000 if info.min == 0 else 0)).astype(np.int64)
    a = a.astype(dtype) + dtype(offset)
    invalid = [sorted(rng.choice(m, 200, replace=False).tolist()) for _ in range(n)]
    rows = dense_rows(a)
    for k in (10, 100, 700):
        expected, _ = reference(rows, k, None, filter_sets(invalid, n))
        assert Rankings.from_scores(a, k=k, invalid_items=invalid).to_list() == expected, k


@st.composite
def winner_rows(draw):
    """float32 rows whose winners (more than 32: the sorted part of the kernel) have keys
    spread evenly (the bucket sort), bunched (ties, or one outlier stretching the range: the
    radix sort), or near each other in ulps (keys that differ in their last bits only)."""
    n = draw(st.integers(1, 3))
    m = draw(st.integers(40, 600))
    kind = draw(st.sampled_from(["spread", "ties", "outlier", "ulps", "mixed"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "spread":
        a = rng.standard_normal((n, m)).astype(np.float32)
    elif kind == "ties":
        a = rng.integers(-3, 4, size=(n, m)).astype(np.float32)
    elif kind == "outlier":
        a = (1 + rng.random((n, m)) * 1e-3).astype(np.float32)
        a[:, rng.integers(m)] = 1e30
    elif kind == "ulps":
        a = np.nextafter(np.float32(1), np.float32(2)) + rng.integers(0, 64, size=(n, m)).astype(np.float32) * np.float32(2**-23)
        a = a.astype(np.float32)
    else:
        a = rng.choice(np.float32([-0.0, 0.0, 1e-40, -1e-40, 3.5, -2.25, 1e38, -1e38]), size=(n, m))
        a[:, : m // 2] = rng.standard_normal((n, m // 2)).astype(np.float32)
    return a.astype(np.float32)


@given(a=winner_rows(), k=st.integers(33, 700), data=st.data())
def test_winner_sorts_match_reference(a, k, data):
    """More than 32 winners are sorted by the kernel's word sorts (AVX-512: buckets and
    transposition rounds, unless the keys bunch; otherwise the radix sort)."""
    n, m = a.shape
    invalid = data.draw(st.none() | st.lists(st.integers(0, m - 1), min_size=1, max_size=20, unique=True).map(sorted))
    inv = None if invalid is None else [invalid] * n
    expected, _ = reference(dense_rows(a), k, None, filter_sets(inv, n))
    r = Rankings.from_scores(a, k=k, invalid_items=invalid)
    assert r.to_list() == expected


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int64])
@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([5, 40, 300, None]))
def test_item_ids_beyond_32_bits(dtype, seed, k):
    """Sparse scores over more than 2^32 items: 64-bit ids, whose winners are sorted as
    words holding their index in the buffer (re_topk::write_packed, indexed), with ties and
    exclusions among them."""
    rng = np.random.default_rng(seed)
    n, per_row, m = 3, 400, 2**33 + 7
    cols = np.sort(np.concatenate([rng.choice(2**20, per_row // 2, replace=False),
                                   rng.choice(m - 2**32, per_row // 2, replace=False) + 2**32]))
    values = rng.integers(-50, 50, size=(n, per_row)).astype(dtype)
    scores = sp.csr_array((values.ravel(), np.tile(cols, n), np.arange(n + 1) * per_row), shape=(n, m))
    invalid = sorted(rng.choice(cols, 30, replace=False).tolist())
    expected, _ = reference(sparse_rows(scores), k, None, filter_sets([invalid] * n, n))
    r = Rankings.from_scores(scores, k=k, invalid_items=invalid)
    assert r.indices.dtype == np.int64
    assert r.to_list() == expected


@pytest.mark.parametrize("k", [600, 1000, 1800])
def test_bucket_sort_with_full_buckets_matches_reference(k, topk_path):
    """Wide standard normal rows at large k: the winners are densest just above the
    threshold, where buckets of the word sort (AVX-512) hold 5 to 12 words; after four
    transposition rounds those are sorted one by one (re_bucket_sort_avx512). Half
    the rows also get runs of equal scores and of scores a few ulps apart."""
    rng = np.random.default_rng(21)
    a = rng.standard_normal((6, 20000), dtype=np.float32)
    for r in range(3):
        top = np.argsort(-a[r])[: k // 2]
        a[r, top[::7]] = a[r, top[0]]  # ties with the row's best
        a[r, top[1::9]] = np.nextafter(a[r, top[1::9]], np.float32(np.inf))
    invalid = [sorted(rng.choice(20000, 50, replace=False).tolist()) for _ in range(6)]
    expected, _ = reference(dense_rows(a), k, None, filter_sets(invalid, 6))
    assert Rankings.from_scores(a, k=k, invalid_items=invalid).to_list() == expected


def test_second_pass_after_sampled_threshold_is_taken():
    """The input of "sample-misses" really leaves fewer than k scores above the sampled
    threshold: the top k holds items scoring 0, which only the second pass collects."""
    a = _wide("sample-misses", np.float32, np.random.default_rng(7))
    a[np.isnan(a)] = 0
    r = Rankings.from_scores(a, k=100)
    assert (a[0, r.indices[0]] == 0).sum() == 100 - np.count_nonzero(a[0] > 0)


def _sample_positions(m, k):
    """The scores the kernel samples for a row's first threshold (_topk_algo.h,
    re_sample_threshold: runs of 32 spread evenly over the row, 32 runs from k = 256)."""
    chunks = 32 if k >= 256 else 16
    return np.concatenate([np.arange(c * (m - 32) // (chunks - 1), c * (m - 32) // (chunks - 1) + 32)
                           for c in range(chunks)])


@pytest.mark.parametrize("k", [100, 300, 1000])
def test_buffer_holds_the_scores_above_the_sampled_threshold(k):
    """Where many scores pass the sampled threshold (k >= m / 256), the selection buffer has
    room for all of them in nearly every row, so the scan need not compact it: the rank of
    the threshold among the sampled scores is mu + 2 sqrt(mu) + 2 (mu: the sampled scores
    expected among the k best), and a compaction comes when fewer than 32 places are left.
    Elsewhere the buffer is k + max(k, 64), or every candidate when that is more."""
    from rankereval.data import _topk

    m, n = 20_000, 400
    cap = _topk.buffer_size(k, m, m)
    rng = np.random.default_rng(11)
    a = rng.standard_normal((n, m)).astype(np.float32)
    sampled = np.sort(a[:, _sample_positions(m, k)], axis=1)[:, ::-1]
    mu = sampled.shape[1] * k / m
    t = sampled[:, int(mu + 2 * np.sqrt(mu) + 2) - 1]
    above = (a > t[:, None]).sum(axis=1)
    general = max(2 * k, k + 64)
    if k < 1000:  # the general rule's buffer would often be compacted (at k = 1000 it has room)
        assert (above > general - 32).mean() > 0.1
    assert (above > cap - 32).mean() <= 0.01
    assert _topk.buffer_size(k, m, 0) == 2 * k  # sparse or listed rows: the general rule
    assert _topk.buffer_size(10, m, m) == 10 + 64 and _topk.buffer_size(10, 50, m) == 50
    assert _topk.buffer_size(k, k, m) == k
    r = Rankings.from_scores(a[:20], k=k)
    expected = np.lexsort((np.arange(m)[None, :].repeat(20, 0), -a[:20]), axis=1)[:, :k]
    assert np.array_equal(r.indices, expected)
    with pytest.raises(ValueError, match="buffer_size"):
        _topk.buffer_size(0, m, m)


def _float32_keys(v):
    """Order-preserving unsigned keys of float32 scores (-0.0 as +0.0), as _topk_traits.h makes them
    (as int64: NumPy 1.x has no shift of uint64 by a Python int)."""
    b = (np.asarray(v, dtype=np.float32) + np.float32(0)).view(np.uint32).astype(np.int64)
    return np.where(b >= 2**31, b ^ 0xFFFFFFFF, b | 0x80000000)


@pytest.mark.parametrize("kind", ["normal", "narrow", "ties", "nan", "outlier"])
@pytest.mark.parametrize("k", [10, 300, 1000])
def test_sampled_threshold_is_the_rank_r_sampled_score(kind, k, topk_path):
    """The threshold a wide row starts from is the r-th largest of the sampled scores (r =
    mu + 2 sqrt(mu) + 2 of the finite ones), searched bit by bit on their keys' offsets from
    the smallest down to 21 bits below the highest bit of their range (finer without
    AVX-512): the key of the threshold is at most the r-th largest sampled key and less than
    2^(top - 21) below it; exactly it when the range is narrower than 2^22. Derived here in
    NumPy from the sampled positions and that rule, for each path the CPU takes."""
    from rankereval.data import _topk

    m = 20_000
    rng = np.random.default_rng(5)
    for row in range(4):
        if kind == "normal":
            a = rng.standard_normal(m).astype(np.float32)
        elif kind == "narrow":  # keys within 2^22 of each other: the search is exact
            a = (np.float32(1) + rng.integers(0, 3_000_000, m).astype(np.float32) * np.float32(2**-23))
        elif kind == "ties":
            a = rng.integers(-3, 4, m).astype(np.float32)
        elif kind == "nan":
            a = rng.standard_normal(m).astype(np.float32)
            a[rng.random(m) < 0.05] = np.nan
            a[rng.random(m) < 0.01] = -np.inf
        else:
            a = rng.standard_normal(m).astype(np.float32)
            a[_sample_positions(m, k)[row * 7]] = np.float32(3e38)
        a = a.astype(np.float32)
        s = a[_sample_positions(m, k)]
        ok = np.isfinite(s)
        keys = np.where(ok, _float32_keys(s), 0)
        mu = ok.sum() * k / m
        r = int(mu + 2 * np.sqrt(mu) + 2)
        got = _topk.sampled_threshold(a, k)
        if r > ok.sum() / 4:
            assert got is None
            continue
        lo, hi = int(keys.min()), int(keys.max())
        key_r = int(np.sort(keys)[::-1][r - 1])
        top = (hi - lo).bit_length() - 1
        assert got is not None and np.isfinite(got)
        key = int(_float32_keys(np.float32(got)))
        if top < 22:
            assert key == key_r, (kind, k, row)
        else:
            assert key_r - 2 ** (top - 21) < key <= key_r, (kind, k, row)
        assert (s[ok] >= got).sum() >= r
    with pytest.raises(ValueError, match="sampled_threshold"):
        _topk.sampled_threshold(np.zeros(0, dtype=np.float32), 10)
    assert _topk.sampled_threshold(np.zeros(100, dtype=np.float32), 10) is None  # a short row


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_sample_below_the_rest_fills_the_buffer(dtype):
    """Every sampled score is below every other score, so nearly the whole row passes the
    sampled threshold: the scan compacts its buffer again and again (between blocks in the
    vectorised scan of float32 rows, where many scores pass), and the result is still the
    rule's. Ties, NaN and exclusions included."""
    rng = np.random.default_rng(3)
    n, m, k = 2, 9000, 700
    a = rng.integers(100, 200, size=(n, m)).astype(dtype)
    a[:, _sample_positions(m, k)] = rng.integers(0, 50, size=(n, 32 * 32))
    if np.dtype(dtype).kind == "f":
        a[rng.random(a.shape) < 0.01] = np.nan
    invalid = [sorted(rng.choice(m, 300, replace=False).tolist()) for _ in range(n)]
    expected, dropped = reference(dense_rows(a), k, None, filter_sets(invalid, n))
    r, reported = run(Rankings.from_scores, a, k=k, invalid_items=invalid)
    assert r.to_list() == expected
    assert reported == dropped


def test_valid_items_beyond_the_columns_and_exclusions_beyond():
    s = np.array([[3.0, 1.0, 2.0]])
    assert Rankings.from_scores(s, valid_items=[0, 2, 7, 10**12], invalid_items=[2, 99]).to_list() == [[0]]


def test_all_items_excluded_and_empty_inputs_warn():
    s = np.arange(12.0).reshape(3, 4)
    with pytest.warns(InvalidValuesWarning, match="3 of 3 rankings are empty"):
        r = Rankings.from_scores(s, invalid_items=[0, 1, 2, 3], k=2)
    assert r.to_list() == [[], [], []]
    with pytest.warns(InvalidValuesWarning, match="empty"):
        assert Rankings.from_scores(np.zeros((2, 0)), k=3).to_list() == [[], []]
    assert Rankings.from_scores(np.zeros((0, 5)), k=3).to_list() == []


def test_non_finite_scores_of_excluded_items_are_not_reported():
    s = np.array([[np.nan, 1.0, np.inf, 2.0]])
    r, reported = run(Rankings.from_scores, s, invalid_items=[0, 2])
    assert r.to_list() == [[3, 1]] and reported == 0
    r, reported = run(Rankings.from_scores, s, valid_items=[1, 2])
    assert r.to_list() == [[1]] and reported == 1


def test_integer_scores_are_compared_exactly():
    big = np.array([[2**53, 2**53 + 1, 2**63 - 1, 2**63 - 2]], dtype=np.int64)
    assert Rankings.from_scores(big).to_list() == [[2, 3, 1, 0]]
    ubig = np.array([[2**64 - 1, 2**64 - 2, 0]], dtype=np.uint64)
    assert Rankings.from_scores(ubig, k=2).to_list() == [[0, 1]]


@pytest.mark.parametrize("m", [500, 9000])
def test_float16_block_test_with_special_values(m, topk_path):
    """The float16 scan's block test (F16C: the scores converted to float32) against the
    rule: signed zeros tie, subnormals and the extremes order, infinities and NaN are
    dropped and counted, ties go to the lower id; long rows so that blocks are tested."""
    rng = np.random.default_rng(13)
    n = 4
    specials = np.float16([0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 65504, -65504, 1.0, 1.0009765625])
    a = rng.choice(np.float16([-2.0, -1.0, 0.5, 1.0, 2.0]), size=(n, m)).astype(np.float16)
    pos = rng.random(a.shape) < 0.3
    a[pos] = rng.choice(specials, size=pos.sum())
    invalid = [sorted(rng.choice(m, 20, replace=False).tolist()) for _ in range(n)]
    rows = dense_rows(a)
    for k in (1, 10, 100, m):
        expected, dropped = reference(rows, k, None, filter_sets(invalid, n))
        r, reported = run(Rankings.from_scores, a, k=k, invalid_items=invalid)
        assert r.to_list() == expected, k
        assert reported == dropped


def test_float16_bits_order_and_signed_zero():
    s = np.array([[-0.0, 0.0, np.float16(65504), -np.float16(65504), np.float16(6e-8), -np.float16(6e-8)]],
                 dtype=np.float16)
    assert Rankings.from_scores(s).to_list() == [[2, 4, 0, 1, 5, 3]]


@pytest.mark.parametrize("order", ["C", "F", "strided", "reversed"])
def test_memory_layouts(order):
    rng = np.random.default_rng(3)
    base = rng.integers(-3, 4, size=(7, 30)).astype(np.float32)
    a = {"C": base, "F": np.asfortranarray(base), "strided": np.repeat(base, 2, axis=1)[:, ::2],
         "reversed": base[::-1][::-1]}[order]
    expected, _ = reference(dense_rows(base), 5)
    assert Rankings.from_scores(a, k=5).to_list() == expected


def test_non_native_byte_order():
    a = np.array([[1.0, 3.0, 2.0]], dtype=">f8")
    assert Rankings.from_scores(a).to_list() == [[1, 2, 0]]


def test_threads_do_not_change_the_result():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(5)
    a = rng.integers(0, 5, size=(600, 1000)).astype(np.float32)  # above the parallel threshold
    invalid = sp.random(600, 1000, density=0.05, format="csr", random_state=1)
    many = Rankings.from_scores(a, k=30, invalid_items=invalid)
    with threadpoolctl.threadpool_limits(1):
        one = Rankings.from_scores(a, k=30, invalid_items=invalid)
    assert many == one
    expected, _ = reference(dense_rows(a[:20]), 30, None, [set(invalid[[i]].indices.tolist()) for i in range(20)])
    assert many[:20].to_list() == expected


def _path_workloads():
    """Rows for every path's kernels: ties, NaN and infinite scores, the block tests of each
    dtype, the compress scan, the winners' sorts (keys spread: buckets; bunched by one
    outlier: the radix sort; more than 4096 winners), sampled thresholds at small k, and
    the compress scan's exclusion masks, which a thread sets and clears row by row."""
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(11)
    out = {}
    for dtype in ("float16", "float32", "float64", "int32", "int64"):
        a = rng.integers(-4, 5, size=(40, 9000)).astype(dtype)
        if dtype.startswith("float"):
            a[rng.random(a.shape) < 0.01] = np.nan
            a[rng.random(a.shape) < 0.005] = -np.inf
        for k in (5, 100, 700):
            out[f"ties {dtype} {k}"] = Rankings.from_scores(a, k=k, invalid_items=[list(range(0, 9000, 7))]).to_list()
    b = rng.standard_normal((20, 9000), dtype=np.float32)
    b[rng.random(b.shape) < 0.002] = np.inf
    b[rng.random(b.shape) < 0.002] = -np.inf
    for dtype in ("float32", "float64"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = Rankings.from_scores(b.astype(dtype), k=700, invalid_items=[list(range(3, 9000, 11))])
        out[f"infinite {dtype}"] = [r.to_list(), [str(w.message) for w in caught]]
    # the winners' sorts: keys spread (buckets), bunched by one outlier (radix sort), more than
    # 4096 winners (radix sort), few above the sample
    c = np.random.default_rng(12).standard_normal((6, 30000), dtype=np.float32)
    c[3, 17] = 1e30
    for k in (40, 1500, 5000):
        out[f"sorts {k}"] = Rankings.from_scores(c, k=k).to_list()
    # sampled thresholds at small k, and the compress scan's exclusion masks, which a thread
    # sets and clears row by row: each row excludes other items (about 1 in 20, some blocks
    # several), rows in the order of one thread and of several
    x = [sorted(set(np.random.default_rng(13 + i).integers(0, 30000, 1500).tolist())) for i in range(6)]
    ci = np.clip(c, -1e5, 1e5) * 1000  # the outlier in range of int32
    for scores in (c, c.astype(np.float64), ci.astype(np.int32), ci.astype(np.int64)):
        for k in (1, 10, 150, 1500):
            out[f"masks {scores.dtype} {k}"] = Rankings.from_scores(scores, k=k, invalid_items=x).to_list()
    return out


def _each_path():
    return [pytest.param(p, marks=pytest.mark.skipif(p not in _topk.available_paths(),
                                                     reason=f"this CPU cannot run the {p} path"))
            for p in _topk.PATHS]


@pytest.fixture(params=_each_path())
def topk_path(request):
    """Each instruction-set path of the kernel in turn, in this process (_topk.forced_path)."""
    with _topk.forced_path(request.param):
        yield request.param


def test_paths_agree():
    """Every instruction-set path this CPU can run (_topk.h: AVX-512's compress scan, sample
    keys and bucket sort; AVX2's block tests and compress scan; the portable core), forced in
    turn in this one process, gives the same rankings, and they are the reference's."""
    with warnings.catch_warnings():
        runs = {}
        for p in _topk.available_paths():
            with _topk.forced_path(p):
                assert _topk.path() == p
                runs[p] = _path_workloads()
    assert _topk.path() == _topk.available_paths()[-1]  # restored
    first = runs["portable"]
    for p, out in runs.items():
        assert out == first, p
    out = first
    rng = np.random.default_rng(11)
    a = rng.integers(-4, 5, size=(40, 9000)).astype("float16")  # the workloads' first rows
    a[rng.random(a.shape) < 0.01] = np.nan
    a[rng.random(a.shape) < 0.005] = -np.inf
    expected, _ = reference(dense_rows(a[:3]), 5, None, [set(range(0, 9000, 7))] * 3)
    assert out["ties float16 5"][:3] == expected
    c = np.random.default_rng(12).standard_normal((6, 30000), dtype=np.float32)  # as in the workloads
    c[3, 17] = 1e30
    whole = reference(dense_rows(c))[0]  # every k's ranking is a prefix of the whole one
    for k in (40, 1500, 5000):
        assert out[f"sorts {k}"] == [r[:k] for r in whole]
    x = [set(np.random.default_rng(13 + i).integers(0, 30000, 1500).tolist()) for i in range(6)]
    ci = np.clip(c, -1e5, 1e5) * 1000
    for scores in (c, c.astype(np.float64), ci.astype(np.int32), ci.astype(np.int64)):
        whole = reference(dense_rows(scores), None, None, x)[0]
        for k in (1, 10, 150, 1500):
            assert out[f"masks {scores.dtype} {k}"] == [r[:k] for r in whole]


def test_forcing_a_path():
    """_topk._set_path names the path taken; an unknown path, or one this CPU cannot run,
    is refused with a ValueError naming it, and the path taken stays."""
    before = _topk.path()
    assert before in _topk.available_paths() and _topk.available_paths()[0] == "portable"
    assert set(_topk.available_paths()) <= set(_topk.PATHS) == {"portable", "avx2", "avx512"}
    with pytest.raises(ValueError, match="unknown top-k path 'sse9'"):
        _topk._set_path("sse9")
    for p in set(_topk.PATHS) - set(_topk.available_paths()):
        with pytest.raises(ValueError, match=f"cannot run the top-k path '{p}'"):
            _topk._set_path(p)
    assert _topk.path() == before
    assert _topk._set_path("portable") == before and _topk.path() == "portable"
    _topk._set_path(before)
    with pytest.raises(RuntimeError):
        with _topk.forced_path("portable"):
            assert _topk.path() == "portable"
            raise RuntimeError
    assert _topk.path() == before


def test_header_includes_have_no_cycle():
    """The top-k headers include one another without a cycle, the instruction sets' headers
    only the interface (_topk_traits.h) and the traits they derive from, and the algorithm
    none: _topk.h includes it once per path."""
    import os
    import re

    folder = os.path.dirname(os.path.abspath(_topk.__file__))
    headers = sorted(f for f in os.listdir(folder) if f.startswith("_topk") and f.endswith(".h"))
    if "_topk_traits.h" not in headers:
        pytest.skip("the headers are not installed beside the module")
    includes = {}
    for h in headers:
        with open(os.path.join(folder, h), encoding="utf-8") as f:
            includes[h] = re.findall(r'^#include "([^"]+)"', f.read(), flags=re.M)
    assert includes["_topk_traits.h"] == []
    assert includes["_topk_portable.h"] == ["_topk_traits.h"]
    assert includes["_topk_avx2.h"] == ["_topk_portable.h"]
    assert includes["_topk_avx512.h"] == ["_topk_avx2.h"]
    assert includes["_topk_algo.h"] == []
    assert includes["_topk.h"].count("_topk_algo.h") == 3

    def reach(h, seen=()):
        assert h not in seen, f"include cycle: {' -> '.join(seen + (h,))}"
        for inc in includes.get(h, []):
            if inc != "_topk_algo.h":
                reach(inc, seen + (h,))

    for h in headers:
        reach(h)


# ---------------------------------------------------------------------------------------
# arrays of other libraries
# ---------------------------------------------------------------------------------------

class _Device:
    """An array in GPU memory, as far as the DLPack protocol tells."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, **kwargs):
        raise AssertionError("must not be read")


class _ArrayLike:
    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a


@pytest.mark.parametrize("call", [
    lambda x: Rankings.from_scores(x),
    lambda x: Rankings.from_ranked_indices(x),
    lambda x: BinaryLabels.from_matrix(x),
    lambda x: BinaryLabels.from_positive_indices(x),
    lambda x: Rankings.from_scores(np.ones((1, 2)), invalid_items=x),
])
def test_device_arrays_are_refused_with_advice(call):
    with pytest.raises(TypeError, match=r"CUDA memory; move it to the host"):
        call(_Device())


def test_array_protocol_objects_are_accepted():
    s = _ArrayLike(np.array([[0.1, 0.9, 0.5]]))
    assert Rankings.from_scores(s).to_list() == [[1, 2, 0]]
    assert Rankings.from_ranked_indices(_ArrayLike(np.array([[2, 0]]))).to_list() == [[2, 0]]
    assert BinaryLabels.from_positive_indices(_ArrayLike(np.array([[1, 3]]))).indices_to_list() == [[1, 3]]


def test_torch_tensors():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(0)
    t = torch.randint(-3, 4, (5, 40), generator=g)
    for dtype in (torch.float16, torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8, torch.bool):
        x = t.to(dtype)
        expected, _ = reference(dense_rows(x.numpy()), 7)
        assert Rankings.from_scores(x, k=7).to_list() == expected
    # no copy: the array handed on shares the tensor's memory
    f = t.float()
    assert np.shares_memory(rdata._host_array(f, "raw_scores"), f.numpy())
    ranked = torch.argsort(f, dim=1, descending=True, stable=True)[:, :5]
    assert Rankings.from_ranked_indices(ranked).to_list() == ranked.tolist()
    assert BinaryLabels.from_matrix((t > 1).int()).indices_to_list() == [np.flatnonzero(r).tolist()
                                                                          for r in (t > 1).numpy()]
    assert BinaryLabels.from_positive_indices(torch.tensor([[4, 1]])).indices_to_list() == [[1, 4]]
    with pytest.raises(TypeError, match="raw_scores: .*detach"):
        Rankings.from_scores(f.requires_grad_())
    with pytest.raises(TypeError, match="raw_scores"):
        Rankings.from_scores(t.to(torch.bfloat16))


# ---------------------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, exc, match", [
    (np.ones((2, 2), dtype=complex), TypeError, "raw_scores: complex"),
    (np.array([["a", "b"]]), ValueError, "raw_scores: scores must be real"),
    (np.ones((1, 2, 2)), ValueError, "raw_scores: expected at most two dimensions"),
    (np.float64(1.0), ValueError, "raw_scores: expected one or two dimensions"),
    (1.0, TypeError, "raw_scores: expected a NumPy array"),
    ({"a": 1}, TypeError, "raw_scores: expected a NumPy array"),
    ([[1.0], 2.0], ValueError, "raw_scores: mixes score rows"),
])
def test_bad_scores(raw, exc, match):
    with pytest.raises(exc, match=match):
        Rankings.from_scores(raw)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "3", 2**63])
def test_bad_k(k):
    with pytest.raises(ValueError, match="k must be"):
        Rankings.from_scores(np.ones((1, 3)), k=k)


def test_bad_filters():
    with pytest.raises(ValueError, match="invalid_items has 3 rows"):
        Rankings.from_scores(np.ones((2, 3)), invalid_items=[[0], [1], [2]])
    with pytest.raises(ValueError, match="valid_items: item ids must be non-negative"):
        Rankings.from_scores(np.ones((2, 3)), valid_items=[[0, -1], [1]])


# ---------------------------------------------------------------------------------------
# the benchmark script (so that it never rots)
# ---------------------------------------------------------------------------------------

def test_benchmark_script_smoke(tmp_path, capsys):
    import importlib.util
    import json
    import os
    import sys

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "benchmarks", "bench_topk.py")
    if not os.path.exists(path):
        pytest.skip("benchmarks/ not shipped")
    saved = list(sys.path)
    spec = importlib.util.spec_from_file_location("rankereval_bench_topk", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = [p for p in sys.path if p in saved or p == getattr(module, "ROOT", None)]
    out = tmp_path / "topk.json"
    module.main(["--users", "60", "--items", "300", "--exclusions", "500", "--k", "5,50", "--repeats", "1",
                 "--json", str(out)])
    res = json.loads(out.read_text())
    cases = {(c["case"], c["k"]) for c in res["cases"]}
    for k in (5, 50):
        for case in ("floor (numpy sum)", "rankereval", "rankereval + exclusions", "rankereval + exclusions, 1 thread",
                     "numpy argpartition (no exclusions)"):
            assert (case, k) in cases
    assert {c["dtype"] for c in res["cases"] if "dtype" in c} == {"float16", "float64", "int32", "int64"}
    assert res["memory"]["k"] == 50 and res["config"]["users"] == 60
    module.main(["--table", str(out)])
    table = capsys.readouterr().out
    assert ".. list-table:: Top-k of 60 users x 300 items" in table and "rankereval / NumPy-sum floor" in table
    # --paths: each instruction-set path in its own child process (the environment variables
    # read at import by _topk.pyx), all workloads timed in each
    paths = tmp_path / "paths.json"
    module.main(["--paths", "--users", "20", "--items", "9000", "--k", "10,300", "--repeats", "1", "--rounds", "1",
                 "--json", str(paths)])
    res = json.loads(paths.read_text())
    workloads = {f"{dt} k={k} {ex}" for dt in ("float32", "float64", "float16", "int32", "int64")
                 for k in (10, 300) for ex in ("none", "excl")}
    assert set(res["median_s"]) == {"portable", "AVX2", "AVX-512"}
    assert all(set(m) == workloads for m in res["median_s"].values())
    assert res["config"]["exclusions"] == 20 * 9000 // 400
    capsys.readouterr()
    module.main(["--paths-table", str(paths)])
    table = capsys.readouterr().out
    assert ".. list-table:: What each path buys: 20 x 9 000 scores" in table and "portable / AVX-512" in table
    assert table.count("   * - ") == 1 + len(workloads)
    # --builds: another compiled _topk module (here this checkout's own, loaded a second time)
    # against this checkout's, per path, in one process taking turns; results checked equal
    so = rankereval_topk_module_file()
    builds = tmp_path / "builds.json"
    module.main(["--builds", f"again={so}", "--isa", "portable,AVX-512", "--users", "20", "--items", "9000",
                 "--k", "10,300", "--repeats", "2", "--dtypes", "float32,int64", "--json", str(builds)])
    res = json.loads(builds.read_text())
    assert res["config"]["builds"] == ["again", "now"] and set(res["paths"]) == {"portable", "AVX-512"}
    assert all(len(t) == 2 and min(t) > 0 for times in res["paths"].values() for t in times.values())
    capsys.readouterr()
    module.main(["--builds-table", str(builds)])
    table = capsys.readouterr().out
    assert "earlier builds: 20 x 9 000 scores" in table and "AVX-512 now / again" in table
    assert table.count("   * - ") == 1 + 2 * 2 * 2


def rankereval_topk_module_file():
    import rankereval.data._rankings as kernel_user

    return kernel_user._topk.__file__


def test_performance_page_shows_the_published_run():
    """The top-k table of docs/guide/performance.rst is what the benchmark prints from the
    run kept in benchmarks/published/topk.json, and the table of the instruction-set paths
    what it prints from benchmarks/published/topk_paths.json (generated, not typed in)."""
    import os
    import subprocess
    import sys

    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
    script = os.path.join(root, "benchmarks", "bench_topk.py")
    page = os.path.join(root, "docs", "guide", "performance.rst")
    run = os.path.join(root, "benchmarks", "published", "topk.json")
    if not all(os.path.exists(p) for p in (script, page, run)):
        pytest.skip("benchmarks/ and docs/ not shipped")
    printed = subprocess.run([sys.executable, script, "--table", run], capture_output=True, text=True, check=True).stdout
    with open(page, encoding="utf-8") as f:
        text = f.read()
    assert printed.count("list-table") == 1 and printed.strip() in text
    paths = os.path.join(root, "benchmarks", "published", "topk_paths.json")
    printed = subprocess.run([sys.executable, script, "--paths-table", paths], capture_output=True, text=True,
                             check=True).stdout
    assert printed.count("list-table") == 1 and printed.strip() in text
    for name in ("topk_builds.json", "topk_builds_traits.json", "topk_builds_traits_20k.json"):
        builds = os.path.join(root, "benchmarks", "published", name)
        printed = subprocess.run([sys.executable, script, "--builds-table", builds], capture_output=True, text=True,
                                 check=True).stdout
        assert printed.count("list-table") == 1 and printed.strip() in text, name


def test_result_pages_written_first():
    """A result of 4 MiB or more gets a byte written per 4 KiB page before the rows are
    ranked (_topk.pyx: whole rows back to back, which the kernel requires); every entry is
    then overwritten by the rankings: 2 000 rows of k = 600 (4.6 MiB of int32 ids), ties
    among them, against a stable argsort."""
    from rankereval.data import _topk
    from rankereval.data import _filter_structure

    rng = np.random.default_rng(5)
    n, m, k = 2000, 1000, 600
    a = rng.integers(0, 400, size=(n, m)).astype(np.float32)
    r = Rankings.from_scores(a, k=k)
    np.testing.assert_array_equal(r.indices, np.argsort(-a, axis=1, kind="stable")[:, :k])
    vp, vi, vmode = _filter_structure(None, n, "valid_items")
    empty = np.empty(0, dtype=np.int64)
    strided = np.zeros((n, 2 * k), dtype=np.int32)[:, :k]
    with pytest.raises(ValueError, match="contiguous"):
        _topk.topk(0, 4, a.view(np.uint8), m, empty, empty, None, k, _topk.buffer_size(k, m, m),
                   vp, vi, vmode, vp, vi, vmode, strided.view(np.uint8), False,
                   np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), 2)
