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


def _bootstrap_means(d, n_resamples, rng, studentized=False):
    """Bootstrap means (and t statistics) of each column's differences (NaN: not in it).

    Returns ``(means, t)``, both (B, C): the mean of each resample, and with
    ``studentized=True`` the bootstrap t statistic ``(mean* - mean) / (sd* / sqrt(n))`` of the
    resample (else None). Columns with the same queries share one kernel call, i.e. one pass
    over the rows per resample (with their squares as extra columns when studentized), and
    each such group gets its own 64-bit key from ``rng``. The differences are centred first
    (the null of the test, and no cancellation in the sums of squares).
    """
    import rankereval.stats._compare as _compare

    valid = ~np.isnan(d)
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
        sub = d[np.ix_(rows, cols)]
        centre = sub.mean(axis=0)
        centred = sub - centre
        block = np.hstack([centred, centred * centred]) if studentized else centred
        block = np.ascontiguousarray(block)
        sums = _compare.bootstrap_sums(block, n_resamples, seed, _threads(block.size * n_resamples))
        shift = sums[:, :len(cols)] / n                      # mean* - mean
        means[:, cols] = centre + shift
        if studentized:
            with np.errstate(invalid="ignore", divide="ignore"):
                var = (sums[:, len(cols):] - n * shift * shift) / (n - 1)
                stat = shift / np.sqrt(np.maximum(var, 0.0) / n)
            t[:, cols] = np.where(np.isnan(stat), 0.0, stat)   # 0/0: a resample of one value
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
