"""rankereval.agreement: RBO and Jaccard per query against literal references written from
the published formulas and from the definitions; Kendall's tau against scipy; tau_AP
against a literal transcription of Yilmaz, Aslam and Robertson (2008)."""
import json
import math
import warnings

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, strategies as hst

from rankereval import Rankings
from rankereval.agreement import RBOResult, jaccard, kendall_tau, rbo, tau_ap
from helpers import ranked


# ----------------------------------------------------------------------------------------
# literal references
# ----------------------------------------------------------------------------------------

def _overlap(S, L, d):
    return len(set(S[:d]) & set(L[:d]))


def rbo_ext_literal(a, b, p):
    """Webber, Moffat & Zobel (2010), eq. 32 (eq. 30 when s == l), term by term."""
    S, L = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(S), len(L)
    if s == 0:
        return math.nan
    X = {d: _overlap(S, L, d) for d in range(1, l + 1)}
    first = sum(X[d] / d * p ** d for d in range(1, l + 1))
    second = sum(X[s] * (d - s) / (s * d) * p ** d for d in range(s + 1, l + 1))
    return (1 - p) / p * (first + second) + ((X[l] - X[s]) / l + X[s] / s) * p ** l


def _rbo_of_infinite(S, L, p, depth):
    """(1 - p) sum_{d=1}^{depth} p^(d-1) |S_:d ∩ L_:d| / d: the definition (eq. 7),
    truncated where p^depth is negligible."""
    total = 0.0
    seen_s, seen_l, x = set(), set(), 0
    for d in range(1, depth + 1):
        if d <= len(S):
            item = S[d - 1]
            x += item in seen_l
            seen_s.add(item)
        if d <= len(L):
            item = L[d - 1]
            x += item in seen_s
            seen_l.add(item)
        total += (1 - p) * p ** (d - 1) * x / d
    return total


def rbo_bounds_literal(a, b, p):
    """RBO_min and RBO_max from the definition applied to the worst and the best completion
    of the two prefixes: unseen items all new (min); each list continued with the other's
    items it lacks, then the same new items (max)."""
    depth = max(int(math.log(1e-15) / math.log(p)), 1) + 2 * (len(a) + len(b)) + 10
    fresh = 10 ** 6
    worst_a = list(a) + [fresh + 2 * i for i in range(depth)]
    worst_b = list(b) + [fresh + 2 * i + 1 for i in range(depth)]
    best_a = list(a) + [x for x in b if x not in a] + [fresh + i for i in range(depth)]
    best_b = list(b) + [x for x in a if x not in b] + [fresh + i for i in range(depth)]
    return _rbo_of_infinite(worst_a, worst_b, p, depth), _rbo_of_infinite(best_a, best_b, p, depth)


def tau_ap_literal(x, y):
    """tau_AP = 1/(N-1) sum_{i=2}^N (2 C(i)/(i-1) - 1): systems in y's order, C(i) the
    systems above the i-th in y that are above it in x (higher score = better)."""
    n = len(x)
    order = sorted(range(n), key=lambda i: -y[i])
    total = 0.0
    for pos in range(1, n):
        i = order[pos]
        c = sum(1 for j in order[:pos] if x[j] > x[i])
        total += 2.0 * c / pos - 1.0
    return total / (n - 1)


lists = hst.lists(hst.integers(0, 14), min_size=0, max_size=9, unique=True)


@given(pairs=hst.lists(hst.tuples(lists, lists), min_size=1, max_size=6),
       p=hst.floats(0.05, 0.95), k=hst.one_of(hst.none(), hst.integers(1, 10)))
def test_rbo_equals_the_literal_formulas(pairs, p, k):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    r = rbo(ranked(a), ranked(b), p=p, k=k)
    assert isinstance(r, RBOResult)
    for i, (x, y) in enumerate(pairs):
        if k is not None:
            x, y = x[:k], y[:k]
        ext = rbo_ext_literal(x, y, p)
        lo, hi = rbo_bounds_literal(x, y, p)
        if math.isnan(ext):
            assert math.isnan(r.ext[i])
        else:
            assert r.ext[i] == pytest.approx(ext, rel=1e-9, abs=1e-12)
        assert r.min[i] == pytest.approx(lo, abs=1e-9)
        assert r.max[i] == pytest.approx(hi, abs=1e-9)
        assert r.res[i] == pytest.approx(hi - lo, abs=1e-9)
        assert -1e-12 <= r.min[i] <= r.max[i] <= 1 + 1e-12


def test_rbo_hand_worked_examples():
    # derived by hand from the formulas (not values published by the papers)
    # S = (a, b), L = (b, a), p = 1/2: X_1 = 0, X_2 = 2.
    # eq. 30: X_2/2 p^2 + (1-p)/p (X_1 p + X_2/2 p^2) = 1/4 + 1/4 = 1/2
    # eq. 11: (1-p)/p ((X_1 - X_2) p + 0 - X_2 ln(1-p)) = -1 + 2 ln 2
    # max: agreement 0 at depth 1, 1 below: (1-p) sum_{d>=2} p^(d-1) = p = 1/2
    r = rbo([[1, 2]], [[2, 1]], p=0.5)
    assert r.ext[0] == pytest.approx(0.5)
    assert r.min[0] == pytest.approx(2 * math.log(2) - 1)
    assert r.max[0] == pytest.approx(0.5)
    # uneven: S = (a), L = (a, b), p = 1/2: X_1 = X_2 = 1, s = 1, l = 2. eq. 32:
    # (X_1 p + X_2/2 p^2 + X_1 (2-1)/(1*2) p^2) + ((X_2 - X_1)/2 + X_1/1) p^2 = 3/4 + 1/4 = 1
    # min: (X_1 - X_2) p + 0 - X_2 ln(1/2) = ln 2; max: every depth can agree fully: 1
    r = rbo([[7]], [[7, 9]], p=0.5)
    assert r.ext[0] == pytest.approx(1.0)
    assert r.min[0] == pytest.approx(math.log(2))
    assert r.max[0] == pytest.approx(1.0)


def test_rbo_identical_disjoint_and_empty():
    r = rbo(ranked([[1, 2, 3], [1, 2, 3], []]), ranked([[1, 2, 3], [4, 5, 6], []]), p=0.8)
    assert r.ext[0] == pytest.approx(1.0) and r.max[0] == pytest.approx(1.0)
    assert r.ext[1] == 0.0 and r.min[1] == 0.0
    assert math.isnan(r.ext[2]) and r.min[2] == 0.0 and r.max[2] == pytest.approx(1.0)
    assert r.mean() == pytest.approx(0.5)


def test_rbo_is_symmetric_and_threads_agree():
    rng = np.random.default_rng(0)
    a = [list(rng.permutation(200)[: rng.integers(0, 60)]) for _ in range(300)]
    b = [list(rng.permutation(200)[: rng.integers(0, 60)]) for _ in range(300)]
    ra, rb = ranked(a), ranked(b)
    x, y = rbo(ra, rb), rbo(rb, ra)
    np.testing.assert_array_equal(np.isnan(x.ext), np.isnan(y.ext))
    np.testing.assert_allclose(x.ext, y.ext, rtol=1e-12, atol=0)
    np.testing.assert_allclose(x.min, y.min, rtol=1e-12, atol=0)
    from threadpoolctl import threadpool_limits

    import rankereval._threads as threads

    old = threads.PARALLEL_MIN_WORK
    threads.PARALLEL_MIN_WORK = 0
    try:
        with threadpool_limits(2, user_api="openmp"):
            z = rbo(ra, rb)
    finally:
        threads.PARALLEL_MIN_WORK = old
    np.testing.assert_array_equal(x.ext, z.ext)
    np.testing.assert_array_equal(x.res, z.res)


def test_rbo_large_ids_and_int64():
    big = np.array([[2 ** 40, 5, 2 ** 33], [1, 2, 3]], dtype=np.int64)
    other = np.array([[5, 2 ** 40, 9], [3, 2, 1]], dtype=np.int64)
    r = rbo(Rankings.from_ranked_indices(big), Rankings.from_ranked_indices(other), p=0.7)
    for i in range(2):
        assert r.ext[i] == pytest.approx(rbo_ext_literal(list(big[i]), list(other[i]), 0.7))


def test_rbo_marker_array_growth_hash_rows_and_restart():
    # the kernel keeps a marker array over the ids (grown as larger ids come), sends a row
    # holding an id >= 2^20 to the hash table, and zeroes the marks when their stamps would
    # wrap (forced here by lowering the limit): every path equals the literal formula
    import rankereval.agreement._kernels as _agreement

    rng = np.random.default_rng(3)
    # (first id, ids): the literal's unseen items are 10^6 and up, so no id is near them
    spans = [(0, 50), (0, 5_000), (0, 300_000), (2 ** 20, 90), (0, 40), (2 ** 30, 2 ** 30),
             (0, 70_000)]
    a, b = [], []
    for i in range(140):
        first, span = spans[i % len(spans)]
        pool = first + rng.choice(span, size=min(span, 40), replace=False)
        a.append(list(rng.permutation(pool)[: rng.integers(0, 25)]))
        b.append(list(rng.permutation(pool)[: rng.integers(0, 25)]))
    ra, rb = ranked(a), ranked(b)
    previous = _agreement._set_stamp_limit(200)       # a restart every few rows
    try:
        restarted = rbo(ra, rb, p=0.8)
    finally:
        _agreement._set_stamp_limit(previous)
    plain = rbo(ra, rb, p=0.8)
    for r in (restarted, plain):
        for i, (x, y) in enumerate(zip(a, b)):
            ext = rbo_ext_literal(x, y, 0.8)
            assert (math.isnan(ext) and math.isnan(r.ext[i])) or r.ext[i] == pytest.approx(ext, rel=1e-9)
            lo, hi = rbo_bounds_literal(x, y, 0.8)
            assert r.min[i] == pytest.approx(lo, abs=1e-9) and r.max[i] == pytest.approx(hi, abs=1e-9)
    jac = jaccard(ra, rb, 10)
    for i, (x, y) in enumerate(zip(a, b)):
        union = set(x[:10]) | set(y[:10])
        assert (not union and math.isnan(jac[i])) or jac[i] == len(set(x[:10]) & set(y[:10])) / len(union)


@pytest.mark.parametrize("bad, message", [
    (dict(p=0.0), "p must be strictly between 0 and 1"),
    (dict(p=1.0), "p must be strictly between 0 and 1"),
    (dict(p="x"), "p must be a finite number"),
    (dict(k=0), "k must be an integer > 0"),
])
def test_rbo_bad_arguments(bad, message):
    with pytest.raises(ValueError, match=message):
        rbo([[1, 2]], [[2, 1]], **bad)


def test_rows_must_match():
    with pytest.raises(ValueError, match="a has 2 rankings, b has 1"):
        rbo([[1], [2]], [[1]])
    with pytest.raises(TypeError, match="a must be Rankings"):
        jaccard("run.txt", [[1]], 3)


@given(pairs=hst.lists(hst.tuples(lists, lists), min_size=1, max_size=6), k=hst.integers(1, 10))
def test_jaccard_equals_set_arithmetic(pairs, k):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    got = jaccard(ranked(a), ranked(b), k)
    for i, (x, y) in enumerate(pairs):
        A, B = set(x[:k]), set(y[:k])
        if not A | B:
            assert math.isnan(got[i])
        else:
            assert got[i] == len(A & B) / len(A | B)


@given(x=hst.lists(hst.floats(0, 1), min_size=2, max_size=12), seed=hst.integers(0, 2 ** 32 - 1))
def test_kendall_tau_equals_scipy(x, seed):
    y = np.random.default_rng(seed).permutation(np.asarray(x) + 0.0)
    expected = st.kendalltau(x, y)[0]
    got = kendall_tau(x, y)
    if math.isnan(expected):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, abs=1e-12)


def test_kendall_tau_matches_dicts_by_name():
    x = {"a": 0.1, "b": 0.2, "c": 0.3}
    y = {"c": 0.9, "a": 0.1, "b": 0.5}
    assert kendall_tau(x, y) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="only in x"):
        kendall_tau(x, {"a": 1, "b": 2, "d": 3})
    with pytest.raises(TypeError, match="both be dicts"):
        kendall_tau(x, [1, 2, 3])
    with pytest.raises(ValueError, match="finite"):
        kendall_tau([1, np.nan], [1, 2])


@given(n=hst.integers(2, 12), seed=hst.integers(0, 2 ** 32 - 1))
def test_tau_ap_equals_the_literal_formula(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.permutation(n) * 1.0
    y = rng.permutation(n) * 1.0
    assert tau_ap(x, y) == pytest.approx(tau_ap_literal(list(x), list(y)), abs=1e-12)
    # lower is better: the same as negated scores
    assert tau_ap(x, y, higher_is_better=False) == pytest.approx(tau_ap_literal(list(-x), list(-y)))


def test_tau_ap_properties():
    x = [5.0, 4.0, 3.0, 2.0, 1.0]
    assert tau_ap(x, x) == 1.0
    assert tau_ap(x, x[::-1]) == -1.0
    top = tau_ap(x, [4.0, 5.0, 3.0, 2.0, 1.0])
    bottom = tau_ap(x, [5.0, 4.0, 3.0, 1.0, 2.0])
    assert top < bottom        # a swap at the top costs more
    # Kendall's tau does not see the difference
    assert kendall_tau(x, [4.0, 5.0, 3.0, 2.0, 1.0]) == kendall_tau(x, [5.0, 4.0, 3.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="y has tied scores"):
        tau_ap(x, [1.0, 1.0, 2.0, 3.0, 4.0])


@given(pairs=hst.lists(hst.tuples(lists.filter(len), lists.filter(len)), min_size=1, max_size=5),
       p=hst.floats(0.1, 0.95))
def test_rbo_ext_equals_the_rbo_package(pairs, p):
    # an independent implementation (PyPI 'rbo', not in the test extra: skipped without it)
    rbo_package = pytest.importorskip("rbo")
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    got = rbo(ranked(a), ranked(b), p=p).ext
    for i, (x, y) in enumerate(pairs):
        assert got[i] == pytest.approx(rbo_package.RankingSimilarity(x, y).rbo_ext(p=p), abs=1e-9)


# ----------------------------------------------------------------------------------------
# ties: the variants of Corsi and Urbano (SIGIR 2024)
# ----------------------------------------------------------------------------------------

def _contribution(groups, item, d, variant):
    """c(d) of ``item`` in the ranking ``groups`` (a list of lists of tied items)."""
    top = 1
    for group in groups:
        if item in group:
            if variant == "w":
                return 1.0 if d >= top else 0.0
            return min(1.0, max(0.0, (d - top + 1) / len(group)))
        top += len(group)
    return 0.0


def rbo_tied_literal(a, b, p, variant):
    """RBO^a, RBO^b or RBO^w (Corsi and Urbano, 2024) of two rankings given as groups of tied
    items, depth by depth from the definitions: (ext, min, max)."""
    S, L = (a, b) if sum(map(len, a)) <= sum(map(len, b)) else (b, a)
    s, l = sum(map(len, S)), sum(map(len, L))
    S_items = [i for g in S for i in g]
    L_items = [i for g in L for i in g]
    lacking = [i for i in L_items if i not in S_items]        # L's order
    q = (1 - p) / p

    def agreement(x, d):
        cs = [_contribution(S, i, d, variant) for i in S_items]
        cl = [_contribution(L, i, d, variant) for i in L_items]
        if d > s:                        # the unseen items of S: d - s more, all whole
            cs = cs + [1.0] * (d - s)
        if variant == "a":
            return x / d
        if variant == "b":
            return x / math.sqrt(sum(c * c for c in cs) * sum(c * c for c in cl))
        return 2 * x / (sum(cs) + sum(cl))

    def overlap(d):
        return sum(_contribution(S, i, d, variant) * _contribution(L, i, d, variant)
                   for i in S_items if i in L_items)

    x_l = len(set(S_items) & set(L_items))
    a_s = agreement(overlap(s), s) if s else math.nan
    sums = {"ext": 0.0, "min": 0.0, "max": 0.0}
    for d in range(1, l + 1):
        x = overlap(d)
        if d <= s:
            for key in sums:
                sums[key] += agreement(x, d) * p ** d
            continue
        sums["min"] += agreement(x, d) * p ** d
        extra = sum(_contribution(L, i, d, variant) for i in lacking[:d - s])
        sums["max"] += agreement(x + extra, d) * p ** d
        if s:
            present = [c for c in (_contribution(L, i, d, variant) for i in lacking) if c > 0]
            mean_c = sum(present) / len(present) if present else 0.0
            sums["ext"] += agreement(x + (d - s) * a_s * mean_c, d) * p ** d
    # beyond depth l no item is tied: as Webber, Moffat and Zobel (2010)
    sums["min"] += x_l * (-math.log(1 - p) - sum(p ** d / d for d in range(1, l + 1)))
    f = l + s - x_l
    sums["max"] += (sum((2 * d - l - s + x_l) / d * p ** d for d in range(l + 1, f + 1))
                    + p ** (f + 1) / (1 - p))
    sums["ext"] += (x_l + (l - s) * a_s) / l * p ** (l + 1) / (1 - p) if s else 0.0
    ext = q * sums["ext"] if s else math.nan
    return ext, q * sums["min"], q * sums["max"]


def _tiedranked(rows, n_items=16):
    """Rankings keeping ties from rows of groups (item ids < n_items); the recorded order
    puts a group's items by id."""
    scores = np.zeros((len(rows), n_items))
    for r, groups in enumerate(rows):
        for j, group in enumerate(groups):
            scores[r, group] = len(groups) - j
    valid = [[i for g in groups for i in g] for groups in rows]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # an empty ranking warns when built
        return Rankings.from_scores(scores, valid_items=valid, ties="keep")


@hst.composite
def tied_ranking(draw, max_items=7):
    items = draw(hst.lists(hst.integers(0, 11), max_size=max_items, unique=True))
    groups, i = [], 0
    while i < len(items):
        size = draw(hst.integers(1, 3))
        groups.append(sorted(items[i:i + size]))
        i += size
    return groups


def test_tied_rankings_are_built_as_drawn():
    r = _tiedranked([[[3], [1, 5, 7], [2]], [[4, 6]]])
    assert r.to_list() == [[3, 1, 5, 7, 2], [4, 6]]
    assert r.has_ties


@given(pairs=hst.lists(hst.tuples(tied_ranking(), tied_ranking()), min_size=1, max_size=4),
       p=hst.floats(0.1, 0.95), variant=hst.sampled_from(["a", "b", "w"]))
def test_rbo_ties_equal_the_literal_formulas(pairs, p, variant):
    a = _tiedranked([x for x, _ in pairs])
    b = _tiedranked([y for _, y in pairs])
    r = rbo(a, b, p=p, ties=variant)
    plain = rbo(a, b, p=p)
    for i, (x, y) in enumerate(pairs):
        tied = any(len(g) > 1 for g in x + y)
        if not tied:     # no tie in the pair: the kernel's value, exactly
            for field in ("ext", "min", "max", "res"):
                np.testing.assert_array_equal(getattr(r, field)[i], getattr(plain, field)[i])
            continue
        ext, lo, hi = rbo_tied_literal(x, y, p, variant)
        if math.isnan(ext):
            assert math.isnan(r.ext[i])
        else:
            assert r.ext[i] == pytest.approx(ext, rel=1e-9, abs=1e-12)
        assert r.min[i] == pytest.approx(min(max(lo, 0.0), 1.0), abs=1e-9)
        assert r.max[i] == pytest.approx(min(max(hi, r.min[i]), 1.0), abs=1e-9)
        assert r.res[i] == pytest.approx(r.max[i] - r.min[i], abs=1e-12)
        assert -1e-12 <= r.min[i] <= r.max[i] <= 1 + 1e-12
        if not math.isnan(r.ext[i]):
            assert r.min[i] - 1e-9 <= r.ext[i] <= r.max[i] + 1e-9


def _cut_groups(groups, k):
    """The groups of a ranking cut at depth k, the group holding position k kept whole."""
    out, n = [], 0
    for group in groups:
        if n >= k:
            break
        out.append(group)
        n += len(group)
    return out


@given(pairs=hst.lists(hst.tuples(tied_ranking(max_items=9), tied_ranking(max_items=9)),
                       min_size=1, max_size=4),
       p=hst.floats(0.1, 0.95), variant=hst.sampled_from(["a", "b", "w"]), k=hst.integers(1, 8))
def test_rbo_ties_kernel_cut_at_k_equals_the_literal(pairs, p, variant, k):
    # the typed tie-aware kernel on uneven rankings cut at k (tied groups crossing k kept
    # whole) against the literal transcription of the cut groups
    a = _tiedranked([x for x, _ in pairs])
    b = _tiedranked([y for _, y in pairs])
    r = rbo(a, b, p=p, k=k, ties=variant)
    for i, (x, y) in enumerate(pairs):
        if not any(len(g) > 1 for g in x + y):
            continue
        ext, lo, hi = rbo_tied_literal(_cut_groups(x, k), _cut_groups(y, k), p, variant)
        assert (math.isnan(ext) and math.isnan(r.ext[i])) or r.ext[i] == pytest.approx(ext, rel=1e-9, abs=1e-12)
        assert r.min[i] == pytest.approx(min(max(lo, 0.0), 1.0), abs=1e-9)
        assert r.max[i] == pytest.approx(min(max(hi, r.min[i]), 1.0), abs=1e-9)


def test_rbo_ties_kernel_threads_and_int64_ids_agree():
    rng = np.random.default_rng(5)
    n, width = 400, 30
    scores_a = rng.integers(0, 6, size=(n, width)).astype(np.float64)
    scores_b = rng.integers(0, 6, size=(n, width)).astype(np.float64)
    a = Rankings.from_scores(scores_a, ties="keep")
    b = Rankings.from_scores(scores_b, ties="keep")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1, user_api="openmp"):
        one = rbo(a, b, p=0.9, ties="b")
    with threadpool_limits(2, user_api="openmp"):
        two = rbo(a, b, p=0.9, ties="b")
    for field in ("ext", "min", "max", "res"):
        np.testing.assert_array_equal(getattr(one, field), getattr(two, field))
    # the same rankings with ids shifted past 2^31 (int64): the same values
    wide_a = Rankings._from_padded(a.indices.astype(np.int64) + 2 ** 40, a.lengths, ties=a.ties)
    wide_b = Rankings._from_padded(b.indices.astype(np.int64) + 2 ** 40, b.lengths, ties=b.ties)
    wide = rbo(wide_a, wide_b, p=0.9, ties="b")
    np.testing.assert_allclose(wide.ext, one.ext, rtol=1e-12)
    np.testing.assert_allclose(wide.max, one.max, rtol=1e-12)
    # every row against the literal
    groups = lambda r, i: [list(g) for g in np.split(r.indices[i], np.flatnonzero(~r.ties[i, :width - 1]) + 1)]
    for i in range(0, n, 40):
        ext, lo, hi = rbo_tied_literal(groups(a, i), groups(b, i), 0.9, "b")
        assert one.ext[i] == pytest.approx(ext, rel=1e-9)
        assert one.min[i] == pytest.approx(min(max(lo, 0.0), 1.0), abs=1e-9)


@given(pairs=hst.lists(hst.tuples(lists, lists), min_size=1, max_size=4),
       p=hst.floats(0.05, 0.95), variant=hst.sampled_from(["a", "b", "w"]))
def test_rbo_ties_literal_reduces_to_webber_without_ties(pairs, p, variant):
    # the literal tie-aware formulas on strict orders give the untied literal values
    for x, y in pairs:
        ext, lo, hi = rbo_tied_literal([[i] for i in x], [[i] for i in y], p, variant)
        ref = rbo_ext_literal(x, y, p)
        assert (math.isnan(ext) and math.isnan(ref)) or ext == pytest.approx(ref, abs=1e-12)
        low, high = rbo_bounds_literal(x, y, p)
        assert lo == pytest.approx(low, abs=1e-9) and hi == pytest.approx(high, abs=1e-9)


def _orders(groups):
    """Every strict order of a ranking's tied groups."""
    import itertools

    for parts in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [i for part in parts for i in part]


@given(x=tied_ranking(max_items=6), y=tied_ranking(max_items=6), p=hst.floats(0.1, 0.95))
def test_rbo_a_min_is_the_mean_over_tied_orders(x, y, p):
    # RBO^a's overlaps are the expected overlaps over every order of every group, so its min
    # (linear in them) is the mean of the untied min over those orders
    orders = [(u, v) for u in _orders(x) for v in _orders(y)]
    untied = rbo(ranked([u for u, _ in orders]), ranked([v for _, v in orders]), p=p)
    r = rbo(_tiedranked([x]), _tiedranked([y]), p=p, ties="a")
    assert r.min[0] == pytest.approx(untied.min.mean(), abs=1e-9)
    assert untied.min.min() - 1e-9 <= r.min[0] <= untied.min.max() + 1e-9


def test_rbo_ties_hand_worked_example():
    # derived by hand from the definitions (not values published by the papers)
    # S = L = ((a, b)) tied, p = 1/2, s = l = X_l = 2. 'a': c(1) = 1/2 for both items,
    # X_1 = 1/2, A_1 = 1/2, A_2 = 1. ext = (1-p)/p (A_1 p + A_2 p^2) + X_l/l p^2 = 3/4, the
    # mean over the 4 orders (two agree fully: 1; two swap: 1/2);
    # min = (1-p)/p (A_1 p + A_2 p^2) + X_l (ln 2 - p - p^2/2) = 2 ln 2 - 3/4.
    # 'b': A_1 = (1/2) / sqrt(1/2 * 1/2) = 1; 'w': both in at depth 1, A_1 = 2*2/(2+2) = 1:
    # ext = 1, min = 3/4 + 2 (ln 2 - 5/8) = 2 ln 2 - 1/2.
    a = _tiedranked([[[0, 1]]])
    expected = {"a": (0.75, 2 * math.log(2) - 0.75), "b": (1.0, 2 * math.log(2) - 0.5),
                "w": (1.0, 2 * math.log(2) - 0.5)}
    for variant, (ext, low) in expected.items():
        r = rbo(a, a, p=0.5, ties=variant)
        assert r.ext[0] == pytest.approx(ext)
        assert r.min[0] == pytest.approx(low)
        assert r.max[0] == pytest.approx(ext)
    orders = rbo([[0, 1], [0, 1]], [[0, 1], [1, 0]], p=0.5)
    assert orders.ext.mean() == pytest.approx(expected["a"][0])
    assert orders.min.mean() == pytest.approx(expected["a"][1])


def test_rbo_ties_on_untied_rankings_equal_the_plain_value():
    a = Rankings.from_scores([[0.9, 0.5, 0.1, 0.3]], ties="keep")
    b = Rankings.from_scores([[0.2, 0.5, 0.8, 0.3]], ties="keep")
    assert not a.has_ties and not b.has_ties
    plain = rbo(a, b, p=0.8)
    for variant in ("a", "b", "w"):
        r = rbo(a, b, p=0.8, ties=variant)
        for field in ("ext", "min", "max", "res"):
            np.testing.assert_array_equal(getattr(r, field), getattr(plain, field))


def test_rbo_ties_cut_at_k_keeps_the_group_whole():
    a = _tiedranked([[[0], [1, 2, 3], [4]]])
    b = _tiedranked([[[1], [0], [2], [3], [4]]])
    r = rbo(a, b, p=0.7, k=2, ties="a")
    ext, lo, hi = rbo_tied_literal([[0], [1, 2, 3]], [[1], [0]], 0.7, "a")
    assert r.ext[0] == pytest.approx(ext) and r.min[0] == pytest.approx(lo)
    assert r.max[0] == pytest.approx(min(hi, 1.0))


@pytest.mark.parametrize("bad", ["expected", "A", 1, True])
def test_rbo_ties_bad_argument(bad):
    with pytest.raises(ValueError, match="ties must be None .* 'a', 'b' or 'w'"):
        rbo([[1, 2]], [[2, 1]], ties=bad)


def test_agreement_subcommand_with_ties(tmp_path, capsys):
    # two runs of one query: run A scores d1 and d2 equally, run B d2 and d3
    from rankereval.cli import main

    run_a = tmp_path / "a.run"
    run_b = tmp_path / "b.run"
    run_a.write_text("q1 Q0 d1 1 3.0 A\nq1 Q0 d2 2 3.0 A\nq1 Q0 d3 3 1.0 A\n")
    run_b.write_text("q1 Q0 d1 1 5.0 B\nq1 Q0 d2 2 4.0 B\nq1 Q0 d3 3 4.0 B\n")
    results = {}
    for ties in ("a", "b", "w"):
        assert main(["agreement", str(run_a), str(run_b), "-p", "0.7", "--ties", ties, "-f", "json"]) == 0
        results[ties] = json.loads(capsys.readouterr().out)["queries"][0]
        # the API on the same groups: d1, d2, d3 as items 1, 2, 3
        expected = rbo(_tiedranked([[[1, 2], [3]]]), _tiedranked([[[1], [2, 3]]]), p=0.7, ties=ties)
        assert results[ties]["rbo"] == pytest.approx(expected.ext[0], rel=1e-12)
        assert results[ties]["rbo_min"] == pytest.approx(expected.min[0], rel=1e-12)
        assert results[ties]["rbo_max"] == pytest.approx(expected.max[0], rel=1e-12)
    assert main(["agreement", str(run_a), str(run_b), "-p", "0.7", "-f", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)["queries"][0]["rbo"]
    # without --ties, trec_eval's order: equal scores by document id, descending
    assert plain == pytest.approx(rbo([[2, 1, 3]], [[1, 3, 2]], p=0.7).ext[0], rel=1e-12)
    assert len({round(v["rbo"], 12) for v in results.values()} | {round(plain, 12)}) > 1


# ----------------------------------------------------------------------------------------
# the papers' worked examples: only values published by the authors (in the paper or their
# own code); the hand-worked examples above are derived here from the formulas
# ----------------------------------------------------------------------------------------

def test_rbo_webber_moffat_zobel_figure_5():
    # Webber, Moffat and Zobel (TOIS 2010), Figure 5: S = <a b c d e f g>, T = <z c a v w x y>;
    # the agreement A_d and the average overlap AO at depths 1..7 printed there (3 decimals;
    # transcribed likewise in the tests of changyaochen/rbo, tests/test.py, "RBO Paper
    # Figure 5", and the doctests of dlukes/rbo's average_overlap). RBO_ext at depth k of
    # even lists (eq. 30) gives them back: ext_1 = A_1 and ext_k - ext_{k-1} = (A_k - A_{k-1})
    # p^(k-1), whatever p.
    agreement = [0.0, 0.0, 0.667, 0.5, 0.4, 0.333, 0.286]
    average_overlap = [0.0, 0.0, 0.222, 0.292, 0.313, 0.317, 0.312]
    S, T = "abcdefg", "zcavwxy"
    ids = {c: i for i, c in enumerate(sorted(set(S + T)))}
    a, b = ranked([[ids[c] for c in S]]), ranked([[ids[c] for c in T]])
    for p in (0.5, 0.9):
        ext = [float(rbo(a, b, p=p, k=d).ext[0]) for d in range(1, 8)]
        A = [ext[0]]
        for d in range(2, 8):
            A.append(A[-1] + (ext[d - 1] - ext[d - 2]) / p ** (d - 1))
        assert [round(x, 3) for x in A] == agreement
        assert [round(sum(A[:d]) / d, 3) for d in range(1, 8)] == average_overlap


def _urbano_ranking(text):
    """A ranking in the notation of Corsi and Urbano's code (``from_string``): items ``iN``
    (id N), tied groups in parentheses."""
    groups, open_group = [], None
    for token in text.split():
        item = int(token.strip("()")[1:])
        if token.startswith("("):
            open_group = [item]
        elif open_group is not None:
            open_group.append(item)
        else:
            groups.append([item])
        if token.endswith(")"):
            groups.append(sorted(open_group))
            open_group = None
    return groups


def test_urbano_ranking_notation():
    assert _urbano_ranking("i3 (i1 i5 i7) i9") == [[3], [1, 5, 7], [9]]


def test_rbo_ties_corsi_urbano_readme_example():
    # Corsi and Urbano's implementation (github.com/julian-urbano/sigir2024-rbo,
    # rbo/Python/README.md, "How to compute RBO"): x = red (blue green) yellow pink,
    # y = (blue red) white (yellow black purple) green, p = 0.95; the values printed there
    # (7 digits) for RBO^a, RBO^w and RBO^b: (ext, min, max, res)
    red, blue, green, yellow, pink, white, black, purple = range(8)
    x = [[red], [blue, green], [yellow], [pink]]
    y = [[blue, red], [white], [yellow, black, purple], [green]]
    published = {"a": (0.6922853, 0.3310519, 0.8930692, 0.5620173),
                 "w": (0.7068257, 0.3429684, 0.9049857, 0.5620173),
                 "b": (0.7207131, 0.3509163, 0.9129336, 0.5620173)}
    for variant, values in published.items():
        r = rbo(_tiedranked([x]), _tiedranked([y]), p=0.95, ties=variant)
        got = (r.ext[0], r.min[0], r.max[0], r.res[0])
        assert got == pytest.approx(values, abs=6e-8)


# rows of rbo/test.csv in github.com/julian-urbano/sigir2024-rbo (the test data of the authors'
# R and Python code: x, y, p, then ext, min, max, res of RBO^w, RBO^a and RBO^b); uneven
# lengths, groups crossing the end of the shorter ranking, and a pair with no common item
CORSI_URBANO_TEST_CSV = """\
(i5 i9 i13 i15 i16 i19 i20) (i3 i8),i6 (i4 i18) i2 i7 i8 i17 i14 (i11 i12) i1,0.958074765324023,0.0816485573277354,0.0370062754797617,0.59493569657566,0.557929421095898,0.0808189832771587,0.0354671825076603,0.593396603603558,0.557929421095898,0.0813693619867344,0.0356267307324464,0.593556151828344,0.557929421095898
i13 (i1 i4 i5 i6),i3 i14 i11 (i10 i15) i12 (i6 i9) i4 i2,0.92238320668128,0.117578490431637,0.0763135264223449,0.53999366118093,0.463680134758586,0.114619469221414,0.0733545052121218,0.537945108035391,0.464590602823269,0.11474835409049,0.0734833900811979,0.538589532380772,0.465106142299574
(i4 i7 i15) (i2 i11) i8 i18,i4 i8 i17 i11 (i2 i3 i5 i7 i9 i13 i14),0.955836875418683,0.601671359995661,0.310498723372055,0.820912519608734,0.510413796236679,0.584235464666522,0.295503371358027,0.805839323150565,0.510335951792538,0.632087129618464,0.322093781902212,0.833840285843908,0.511746503941696
(i3 i6) (i2 i7) i10,(i3 i6 i7 i10) (i1 i2),0.965413635276732,0.946064537517568,0.343706790399566,0.958770957517067,0.615064167117501,0.92051534467649,0.319428239558438,0.934492406675939,0.615064167117501,0.956844651806714,0.348953051936765,0.964017219054266,0.615064167117501
i21 i20 (i1 i16 i19) (i5 i10) i4,(i12 i17) (i2 i3 i8 i11) (i15 i18) (i6 i13) (i7 i14) i9,0.930074017489188,0,0,0.389142712252727,0.389142712252727,0,0,0.38977330351866,0.38977330351866,0,0,0.390116806797613,0.390116806797613
(i4 i14) i10 i9 i16 i1 (i11 i21) i7,(i4 i7 i9 i10 i14 i16) i21 (i1 i11) (i3 i6 i17 i18),0.980350757903177,0.95731778452095,0.350742506261885,0.95731778452095,0.606575278259065,0.939619367902257,0.336112285552834,0.939619367902257,0.603507082349424,0.96333114711547,0.35963910728389,0.96333114711547,0.60369203983158
"""


@pytest.mark.parametrize("row", CORSI_URBANO_TEST_CSV.splitlines())
def test_rbo_ties_equal_corsi_urbano_test_data(row):
    x, y, p, *values = row.split(",")
    values = [float(v) for v in values]
    a = _tiedranked([_urbano_ranking(x)], n_items=32)
    b = _tiedranked([_urbano_ranking(y)], n_items=32)
    for j, variant in enumerate("wab"):
        r = rbo(a, b, p=float(p), ties=variant)
        got = (r.ext[0], r.min[0], r.max[0], r.res[0])
        assert got == pytest.approx(values[4 * j: 4 * j + 4], abs=1e-12)
