"""The paired tests on a matrix of per-query differences (NaN: query not compared).

The t-test (p-values of :func:`scipy.stats.ttest_rel`), the randomization (sign-flip) test,
the paired bootstrap-t test and the randomized Tukey HSD; resampling runs in the kernel
``rankereval.stats._compare``, which shares the bootstrap's keyed random streams.
"""
import numpy as np

from rankereval.stats._checks import _threads


# Bootstrap resamples of the confidence intervals of the tests that are not bootstrap tests
# ('permutation', 'tukey'): at most this many. Each bootstrap draw of a query costs a row of
# differences (~5 ns for 10 columns), a sign flip 1/8 of a table row: 10,000 bootstrap
# resamples of 100k queries would take ~5 s of CPU, 10x the test itself. The Monte Carlo
# error of a 95% percentile bound from 1,000 resamples is ~0.08 standard errors.
CI_RESAMPLES = 1000


_EPS = float(np.finfo(np.float64).eps)


_TEST_NAMES = {
    "t": "paired t-test",
    "permutation": "paired randomization (sign-flip) test",
    "bootstrap": "paired bootstrap test",
    "tukey": "randomized Tukey HSD",
}


def _moments(d):
    """Per column: number of queries, mean, standard deviation (ddof=1) of the differences.

    A standard deviation at the level of rounding noise (differences that are equal but
    for their last bits, e.g. ``0.7 - 0.2`` and ``0.8 - 0.3``) is taken as 0.
    """
    valid = ~np.isnan(d)
    n = valid.sum(axis=0)
    d0 = np.where(valid, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = d0.sum(axis=0) / n
        centred = np.where(valid, d - mean, 0.0)
        sd = np.sqrt((centred * centred).sum(axis=0) / (n - 1))
    noise = 64.0 * _EPS * np.abs(d0).max(axis=0, initial=0.0)
    sd = np.where(sd <= noise, 0.0, sd)
    sd = np.where(n >= 2, sd, np.nan)
    return n, mean, sd


def _t_test(d, alternative, alpha):
    """Paired t-test per column: ``(p, ci_low, ci_high)``, as ``scipy.stats.ttest_rel``.

    All differences zero: p = 1 and the interval is ``(0, 0)`` (scipy returns NaN).
    """
    return _t_from_moments(*_moments(d), alternative, alpha)


def _t_from_moments(n, mean, sd, alternative, alpha):
    """:func:`_t_test` from the number, mean and standard deviation of each column."""
    from scipy.stats import t as t_dist

    df = n - 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        se = sd / np.sqrt(n)
        t = mean / se
        if alternative == "two-sided":
            p = 2.0 * t_dist.sf(np.abs(t), df)
            crit = t_dist.ppf(1.0 - alpha / 2.0, df)
        elif alternative == "greater":
            p = t_dist.sf(t, df)
            crit = t_dist.ppf(1.0 - alpha, df)
        else:
            p = t_dist.cdf(t, df)
            crit = t_dist.ppf(1.0 - alpha, df)
        half = np.where(se == 0, 0.0, crit * se)
    p = np.where((se == 0) & (mean == 0), 1.0, np.minimum(p, 1.0))
    p = np.where(n >= 2, p, np.nan)
    low = mean - half if alternative != "less" else np.full_like(mean, -np.inf)
    high = mean + half if alternative != "greater" else np.full_like(mean, np.inf)
    low = np.where(n >= 2, low, np.nan)
    high = np.where(n >= 2, high, np.nan)
    return p, low, high


def _tolerance(n, abs_sum):
    """Rounding allowance when a resampled sum is compared with the observed one.

    Sums of the same terms in another order differ by at most ``(n - 1) eps sum|d|``; ties
    (common with discrete metrics) must count as "at least as extreme".
    """
    return 4.0 * np.maximum(n, 1) * _EPS * abs_sum


def _count_extreme(null, observed, tol, alternative):
    """Per column, how many rows of ``null`` are at least as extreme as ``observed``."""
    if alternative == "two-sided":
        return (np.abs(null) >= np.abs(observed) - tol).sum(axis=0)
    if alternative == "greater":
        return (null >= observed - tol).sum(axis=0)
    return (null <= observed + tol).sum(axis=0)


def _permutation_test(d, alternative, n_resamples, seed):
    """Paired sign-flip randomization test per column: p = (count + 1) / (B + 1)."""
    import rankereval.stats._compare as _compare

    valid = ~np.isnan(d)
    d0 = np.ascontiguousarray(np.where(valid, d, 0.0))   # absent queries: a zero difference
    n = valid.sum(axis=0)
    sums = _compare.sign_flip_sums(d0, n_resamples, seed, _threads(d0.size * n_resamples // 8))
    observed = d0.sum(axis=0)
    tol = _tolerance(n, np.abs(d0).sum(axis=0))
    count = _count_extreme(sums, observed, tol, alternative)
    return np.where(n > 0, (count + 1.0) / (n_resamples + 1.0), np.nan)


def _weighted(weights, n_cols):
    """Which difference columns are of weighted means (their ``weights`` column is not NaN)."""
    if weights is None:
        return np.zeros(n_cols, dtype=bool)
    return ~np.isnan(weights).all(axis=0)


def _ratio(d, w):
    """Per column, ``sum(w d) / sum(w)`` over the rows where ``d`` is not NaN (exact sums,
    rounded once, as the means of the engine); NaN for a zero total weight."""
    from rankereval.stats._exact import exact_column_sums, weighted_terms

    valid = ~np.isnan(d)
    w0 = np.where(valid, w, 0.0)
    num = exact_column_sums(np.where(valid, weighted_terms(np.where(valid, d, 0.0), w0), 0.0)).to_float()
    den = exact_column_sums(w0).to_float()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _linearised(d, weights):
    """The paired tests' inputs for the columns of weighted means (``weights``: the weight of
    each query in each column, NaN in the columns of unweighted means; None: none).

    Returns ``(pseudo, flips, ratio)``, each (n, C) but ``ratio`` (C,): ``ratio`` is the
    difference of the weighted means ``D = sum(w d) / sum(w)``; ``flips`` the scaled
    differences ``u = (w / mean(w)) d``, whose mean is ``D`` at any signs of the queries (the
    randomization test flips ``w d`` with the total weight fixed); ``pseudo`` the linearised
    (delta-method) values ``D + (w / mean(w)) (d - D)``, whose mean is ``D`` and whose variance
    over ``n`` is the delta-method variance of ``D`` (the t-test's input). The columns of
    unweighted means are ``d`` in both; a column with total weight 0 is all NaN (not compared).
    """
    weighted = _weighted(weights, d.shape[1])
    if not weighted.any():
        return d, d, None
    valid = ~np.isnan(d)
    w = np.where(valid & weighted, np.nan_to_num(weights, nan=0.0), 0.0)
    n = valid.sum(axis=0)
    ratio = _ratio(np.where(weighted, d, np.nan), np.where(weighted, w, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        scale = w / (w.sum(axis=0) / np.maximum(n, 1))
        flips = np.where(weighted, scale * d, d)
        pseudo = np.where(weighted, ratio + scale * (d - ratio), d)
    dead = weighted & np.isnan(ratio)
    flips[:, dead] = np.nan
    pseudo[:, dead] = np.nan
    return pseudo, flips, np.where(weighted, ratio, np.nan)


def _bootstrap_means(d, n_resamples, rng, studentized=False, weights=None):
    """Bootstrap means (and t statistics) of each column's differences (NaN: not in it).

    Returns ``(means, t)``, both (B, C): the mean of each resample, and with
    ``studentized=True`` the bootstrap t statistic ``(mean* - mean) / (sd* / sqrt(n))`` of the
    resample (else None). Columns with the same queries share one kernel call, i.e. one pass
    over the rows per resample (with their squares as extra columns when studentized), and
    each such group gets its own 64-bit key from ``rng``. The differences are centred first
    (the null of the test, and no cancellation in the sums of squares).

    ``weights`` (n, C), NaN in the columns of unweighted means: a weighted column's resampled
    statistic is the ratio ``sum(c w d) / sum(c w)`` of the resample's sums (``c``: how often
    each query is drawn; never a fixed denominator), and its t statistic divides by the
    resample's delta-method standard error, ``sqrt(n sum(c w^2 (d - R*)^2) / ((n - 1)
    sum(c w)^2))``, from the sums of ``w^2 d'^2``, ``w^2 d'`` and ``w^2`` (``d'``: centred).
    """
    import rankereval.stats._compare as _compare

    valid = ~np.isnan(d)
    weighted = _weighted(weights, d.shape[1])
    means = np.full((n_resamples, d.shape[1]), np.nan)
    t = np.full((n_resamples, d.shape[1]), np.nan) if studentized else None
    groups = {}
    for c in range(d.shape[1]):
        groups.setdefault(valid[:, c].tobytes(), []).append(c)
    for cols in groups.values():
        rows = valid[:, cols[0]]
        n = int(rows.sum())
        seed = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        if n == 0:
            continue
        ratio_cols = [c for c in cols if weighted[c]]
        cols = [c for c in cols if not weighted[c]]
        blocks = []
        if cols:
            sub = d[np.ix_(rows, cols)]
            centre = sub.mean(axis=0)
            centred = sub - centre
            blocks += [centred, centred * centred] if studentized else [centred]
        if ratio_cols:
            w = weights[np.ix_(rows, ratio_cols)]
            sub = d[np.ix_(rows, ratio_cols)]
            r_centre = _ratio(sub, w)
            c = sub - r_centre
            blocks += [w * c, w] + ([w * w * c * c, w * w * c, w * w] if studentized else [])
        block = np.ascontiguousarray(np.hstack(blocks))
        sums = _compare.bootstrap_sums(block, n_resamples, seed, _threads(block.size * n_resamples))
        if cols:
            shift = sums[:, :len(cols)] / n                      # mean* - mean
            means[:, cols] = centre + shift
            if studentized:
                with np.errstate(invalid="ignore", divide="ignore"):
                    var = (sums[:, len(cols):2 * len(cols)] - n * shift * shift) / (n - 1)
                    stat = shift / np.sqrt(np.maximum(var, 0.0) / n)
                t[:, cols] = np.where(np.isnan(stat), 0.0, stat)   # 0/0: a resample of one value
        if ratio_cols:
            q = len(ratio_cols)
            s = sums[:, (2 if studentized else 1) * len(cols):]
            s1, s2 = s[:, :q], s[:, q:2 * q]
            with np.errstate(invalid="ignore", divide="ignore"):
                shift = np.where(s2 > 0, s1 / np.where(s2 > 0, s2, 1.0), 0.0)   # R* - R
                means[:, ratio_cols] = r_centre + shift
                if studentized:
                    s3, s4, s5 = s[:, 2 * q:3 * q], s[:, 3 * q:4 * q], s[:, 4 * q:]
                    var = n * (s3 - 2.0 * shift * s4 + shift * shift * s5) / ((n - 1) * s2 * s2)
                    stat = shift / np.sqrt(np.maximum(var, 0.0))
            if studentized:
                t[:, ratio_cols] = np.where(np.isfinite(stat), stat, 0.0)
            means[:, ratio_cols] = np.where(np.isnan(r_centre), np.nan, means[:, ratio_cols])
    return means, t


def _percentile_ci(means, alternative, alpha):
    with np.errstate(invalid="ignore"):
        if alternative == "two-sided":
            low, high = np.quantile(means, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
        elif alternative == "greater":
            low = np.quantile(means, alpha, axis=0)
            high = np.full(means.shape[1], np.inf)
        else:
            low = np.full(means.shape[1], -np.inf)
            high = np.quantile(means, 1.0 - alpha, axis=0)
    nan = np.isnan(means).all(axis=0)
    return np.where(nan, np.nan, low), np.where(nan, np.nan, high)


def _bootstrap_test(t_null, d, alternative):
    """Paired bootstrap-t test: the bootstrap t statistics of the centred differences are the
    null distribution of the observed t statistic (Efron & Tibshirani 1993, 16.4; Sakai
    2006). p = (count + 1) / (B + 1); all differences zero: p = 1."""
    return _bootstrap_p(t_null, *_moments(d), alternative)


def _bootstrap_p(t_null, n, mean, sd, alternative):
    """:func:`_bootstrap_test` from the number, mean and standard deviation of each column."""
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = mean / (sd / np.sqrt(n))
    observed = np.where((sd == 0) & (mean == 0), 0.0, observed)
    tol = 1e-9 * np.where(np.isfinite(observed), np.abs(observed), 0.0)
    count = _count_extreme(t_null, observed, tol, alternative)
    b = t_null.shape[0]
    p = np.where(n > 1, (count + 1.0) / (b + 1.0), np.nan)
    return np.where((sd == 0) & (mean == 0), 1.0, p)


def _tukey_test(scores, valid, pairs, n_resamples, seed):
    """Randomized Tukey HSD p-values, (n_metrics, n_pairs).

    ``scores`` is (n, n_metrics, n_runs); rows where ``valid[:, m]`` is False are not used
    for metric m (zeros in the kernel's input: a permutation of zeros changes nothing).
    """
    import rankereval.stats._compare as _compare

    n, n_metrics, n_runs = scores.shape
    s = np.where(valid[:, :, None], scores, 0.0)
    flat = np.ascontiguousarray(s.reshape(n, n_metrics * n_runs))
    ranges = _compare.tukey_ranges(flat, n_metrics, n_runs, n_resamples, seed,
                                   _threads(flat.size * n_resamples))
    sums = s.sum(axis=0)                                       # (n_metrics, n_runs)
    tol = _tolerance(valid.sum(axis=0), np.abs(s).sum(axis=(0, 2)))
    p = np.empty((n_metrics, len(pairs)))
    for j, (r, b) in enumerate(pairs):
        observed = np.abs(sums[:, r] - sums[:, b])
        count = (ranges >= observed - tol).sum(axis=0)
        p[:, j] = (count + 1.0) / (n_resamples + 1.0)
    return np.where(valid.any(axis=0)[:, None], p, np.nan)
