"""rankereval.agreement: RBO and Jaccard per query against literal references written from
the published formulas and from the definitions; Kendall's tau against scipy; tau_AP
against a literal transcription of Yilmaz, Aslam and Robertson (2008)."""
import math
import warnings

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, strategies as hst

from rankereval import Rankings
from rankereval.agreement import RBOResult, jaccard, kendall_tau, rbo, tau_ap


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
    r = rbo(_rankings(a), _rankings(b), p=p, k=k)
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


def _rankings(rows):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # an empty ranking warns when built
        return Rankings.from_ranked_indices([list(r) for r in rows])


def test_rbo_hand_worked_examples():
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
    r = rbo(_rankings([[1, 2, 3], [1, 2, 3], []]), _rankings([[1, 2, 3], [4, 5, 6], []]), p=0.8)
    assert r.ext[0] == pytest.approx(1.0) and r.max[0] == pytest.approx(1.0)
    assert r.ext[1] == 0.0 and r.min[1] == 0.0
    assert math.isnan(r.ext[2]) and r.min[2] == 0.0 and r.max[2] == pytest.approx(1.0)
    assert r.mean() == pytest.approx(0.5)


def test_rbo_is_symmetric_and_threads_agree():
    rng = np.random.default_rng(0)
    a = [list(rng.permutation(200)[: rng.integers(0, 60)]) for _ in range(300)]
    b = [list(rng.permutation(200)[: rng.integers(0, 60)]) for _ in range(300)]
    ra, rb = _rankings(a), _rankings(b)
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
    got = jaccard(_rankings(a), _rankings(b), k)
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
    got = rbo(_rankings(a), _rankings(b), p=p).ext
    for i, (x, y) in enumerate(pairs):
        assert got[i] == pytest.approx(rbo_package.RankingSimilarity(x, y).rbo_ext(p=p), abs=1e-9)
