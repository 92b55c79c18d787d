"""Bootstrap confidence intervals for the mean of per-ranking scores.

:func:`bootstrap_mean` draws ``n_resamples`` bootstrap resamples of a 1-D array of scores (one
score per ranking, NaN already handled) and returns a :class:`BootstrapResult` with a
``'percentile'`` or ``'bca'`` (bias-corrected and accelerated) confidence interval.
``Metric.mean(..., conf_interval=True)`` and ``Metric.bootstrap`` are built on it.

How it stays fast and small
---------------------------
* No resample is ever materialised (the textbook ``scores[rng.integers(n, size=(B, n))]``
  needs ``8 * n * B`` bytes: 8 GB for a million scores): a typed, parallel kernel
  (``rankereval.stats._bootstrap``) accumulates each resampled mean on the fly, in O(n + B) memory.
  It draws, exactly, how many picks fall in each block of 512 scores, then the picks inside
  the block, so that memory is read block by block from L1 instead of at random (~1 ns per
  draw instead of ~18 for a million scores).
* Each resample ``b`` uses its own random stream keyed by ``(seed, b)``, where ``seed`` is one
  64-bit integer drawn from ``random_state``; results are identical for any number of threads.
* Exact shortcut: the bootstrap law of a mean depends only on the multiset of scores. When
  there are few distinct values (``HitRate``: 2; ``ReciprocalRank@10``: at most 11), each
  resample is a multinomial draw of counts over the distinct values, which costs O(d) instead
  of O(n) per resample.

Poisson bootstrap
-----------------
``resampling="poisson"`` (Chamandy et al. 2012) gives each query an independent Poisson(1)
weight per resample instead of drawing ``n`` queries with replacement. The weight of a query
in resample ``b`` is a function of ``(seed, hash of the query key, b)`` alone (a counter-based
generator in ``_bootstrap.pyx``), so any subset of the queries can be weighted on any
machine, and the per-resample sums ``sum(w * score)`` and ``sum(w)`` of disjoint subsets
merge by addition: the interval of :mod:`rankereval.dask` is the one computed here on the
same queries, whatever the partitioning. :func:`query_key_hashes` defines the key hash.

For ``Metric.mean``, whose arguments are called ``n_bootstrap_samples`` and ``confidence``,
validate first with ``_validate(n, c, method, n_name="n_bootstrap_samples",
conf_name="confidence")`` so that error messages name the arguments as the caller wrote them.
"""
from dataclasses import dataclass, field
import math
from statistics import NormalDist

import numpy as np

import rankereval.stats._bootstrap as _bootstrap
from rankereval._utils._choices import CI_METHODS as METHODS, RESAMPLINGS
from rankereval.stats._exact import exact_mean, poisson_sums, ratio_mean, weighted_terms
from rankereval.stats._random import rng as _rng, stream_key as _seed  # noqa: F401  (the one seed derivation)
from rankereval._threads import effective_n_threads
from rankereval._validation import (  # noqa: F401  (MAX_RESAMPLES: the bound, importable from here)
    MAX_RESAMPLES, check_bca_finite, check_choice, check_confidence, check_n_resamples)

__all__ = ["BootstrapResult", "bootstrap_mean", "query_key_hashes"]


# The multinomial shortcut is used when there are d <= n // _SHORTCUT_RATIO distinct values.
# Measured on a 2-core AMD EPYC: one binomial of numpy's multinomial costs ~90 ns (one thread);
# one draw of the general kernel ~1 ns of CPU, spread over the threads (two here). Per
# resample the shortcut costs 90 d ns and the loop ~n / 2 ns: the shortcut wins for
# d < n / 180.
_SHORTCUT_RATIO = 200
# Multinomial counts are drawn for at most this many (resample, value) cells at a time.
_SHORTCUT_CELLS = 1 << 20

# Draws per thread below which the resampling loop uses fewer threads: about 1 ms of work,
# since starting and joining threads costs ~10 us on an idle machine but can cost a
# scheduler time slice on a busy one.
_DRAWS_PER_THREAD = 1 << 20


def resample_threads(n, n_resamples):
    """OpenMP threads for ``n_resamples`` resamples of ``n`` queries: fewer below
    ``_DRAWS_PER_THREAD`` draws each (the results do not depend on it)."""
    return max(1, min(effective_n_threads(), (n * n_resamples) // _DRAWS_PER_THREAD))

_NORMAL = NormalDist()
_EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True, eq=False)
class BootstrapResult:
    """Result of :func:`bootstrap_mean`: a mean, its bootstrap distribution and interval.

    Attributes
    ----------
    mean : float
        Mean of the scores (``nan`` when there are none).
    confidence_interval : tuple of (float, float)
        ``(low, high)`` bootstrap confidence interval of the mean at ``confidence_level``;
        ``(nan, nan)`` when there are no scores.
    bootstrap_distribution : ndarray of float64, shape (n_resamples,)
        Mean of each bootstrap resample, in resample order (read-only).
    standard_error : float
        Bootstrap estimate of the standard error of the mean: the standard deviation
        (``ddof=1``) of ``bootstrap_distribution``.
    method : {'percentile', 'bca'}
        How the interval was computed.
    confidence_level : float
        Nominal coverage of the interval, in (0, 1).
    n_resamples : int
        Number of bootstrap resamples.

    Notes
    -----
    Instances are immutable and compare by identity (the distribution is an array).

    See Also
    --------
    bootstrap_mean : computes it.
    scipy.stats.bootstrap : whose result names this class follows.
    """

    mean: float
    confidence_interval: tuple
    bootstrap_distribution: np.ndarray = field(repr=False)
    standard_error: float
    method: str
    confidence_level: float
    n_resamples: int

    @classmethod
    def undefined(cls, n_resamples=1000, confidence_level=0.95, method="percentile"):
        """The result for an undefined mean (no scores, or NaN scores propagated).

        ``mean``, both bounds, every resampled mean and ``standard_error`` are ``nan``. The
        options are validated and normalised as in :func:`bootstrap_mean`.

        Examples
        --------
        >>> from rankereval.bootstrap import BootstrapResult
        >>> BootstrapResult.undefined(10).confidence_interval
        (nan, nan)
        """
        n_resamples, confidence_level, method = _validate(n_resamples, confidence_level, method)
        distribution = np.full(n_resamples, np.nan)
        distribution.setflags(write=False)
        return cls(math.nan, (math.nan, math.nan), distribution, math.nan, method,
                   confidence_level, n_resamples)

    def _exp(self):
        """The result for exp of the statistic, from a bootstrap of its log (a geometric
        mean from the mean of logs): the mean, every resampled value and both bounds mapped
        by exp (percentile and BCa intervals follow monotone maps), the standard error that
        of the mapped distribution."""
        distribution = np.exp(self.bootstrap_distribution)
        distribution.setflags(write=False)
        low, high = self.confidence_interval
        se = float(np.std(distribution, ddof=1)) if distribution.size > 1 else math.nan
        return type(self)(math.exp(self.mean), (math.exp(low), math.exp(high)), distribution, se,
                          self.method, self.confidence_level, self.n_resamples)


def _validate(n_resamples, confidence_level, method, n_name="n_resamples",
              conf_name="confidence_level"):
    """Check the bootstrap options; return them normalised as ``(int, float, str)``.

    Parameters
    ----------
    n_resamples, confidence_level, method
        As in :func:`bootstrap_mean`.
    n_name, conf_name : str
        Names of the first two arguments as the caller's user wrote them (``Metric.mean``
        calls them ``n_bootstrap_samples`` and ``confidence``); error messages use them.

    Raises
    ------
    ValueError
        Naming the offending argument: ``n_resamples`` not an integer in
        ``[2, MAX_RESAMPLES]`` (``10**8``; bools are rejected), ``confidence_level`` not a real number strictly between 0 and 1 (integers,
        including 0 and 1, are rejected), ``method`` not 'percentile' or 'bca'.
    """
    return (check_n_resamples(n_resamples, n_name), check_confidence(confidence_level, conf_name),
            check_choice(method, METHODS, "method"))


def _check_resampling(resampling):
    """``resampling`` lower-cased, after checking it is one of :data:`RESAMPLINGS`."""
    return check_choice(resampling, RESAMPLINGS, "resampling")


def query_key_hashes(keys, n=None):
    """Stable 64-bit hashes of query keys, which key the Poisson bootstrap's weights.

    Parameters
    ----------
    keys : array-like of int or str, shape (n,), or None
        The key of each query: its query id (integers, or strings compared as text), or
        ``None`` for the row numbers ``0 .. n - 1``. Integers must fit in int64 and hash by
        value (``7``, ``np.int32(7)`` and ``np.uint64(7)`` are one key); strings hash by
        their Unicode code points. Integers and strings are never mixed.
    n : int, optional
        The number of queries; required when ``keys`` is None, checked otherwise.

    Returns
    -------
    ndarray of uint64, shape (n,)
        The same values on every platform, Python version and run (no salt).

    Raises
    ------
    TypeError
        For keys that are neither all integers nor all strings (floats, bools, mixed).
    ValueError
        For a length other than ``n``, or integers outside int64.

    Examples
    --------
    >>> from rankereval.bootstrap import query_key_hashes
    >>> bool((query_key_hashes(None, 3) == query_key_hashes([0, 1, 2])).all())
    True
    >>> int(query_key_hashes(["q1"])[0]) == int(query_key_hashes(["q1"])[0])
    True
    """
    if keys is None:
        if n is None:
            raise ValueError("query_key_hashes needs n when keys is None")
        return _bootstrap.hash_int_keys(np.arange(n, dtype=np.int64))
    # a list goes through an object array: np.asarray([1, "a"]) would turn 1 into "1"
    a = np.asarray(keys) if hasattr(keys, "__array__") else np.array(keys, dtype=object)
    if a.ndim != 1 or (n is not None and a.shape[0] != n):
        raise ValueError(f"query keys must be a 1-D array of {n if n is not None else 'n'} keys, "
                         f"got shape {a.shape}")
    if a.dtype.kind == "O":
        a = _object_keys(a)
    if a.dtype.kind == "b" or a.dtype.kind not in "iuU":
        raise TypeError(f"query keys must be integers or strings, got dtype {a.dtype}")
    if a.dtype.kind == "U":
        if a.shape[0] == 0:
            return np.empty(0, dtype=np.uint64)
        if a.dtype.itemsize == 0:
            a = a.astype("<U1")
        codes = np.ascontiguousarray(a).view(np.uint32).reshape(a.shape[0], -1)
        return _bootstrap.hash_str_keys(codes)
    if a.dtype.kind == "u" and a.size and a.max() > np.iinfo(np.int64).max:
        raise ValueError(f"integer query keys must fit in int64, got {a.max()}")
    return _bootstrap.hash_int_keys(np.ascontiguousarray(a, dtype=np.int64))


def id_kind(a, what="query keys"):
    """``'int'`` or ``'str'``: the type of every id of a 1-D array.

    Raises TypeError naming ``what`` and the first offending position for floats, bools,
    None or a mix of integers and strings (``rankereval.dask`` checks its id columns with it).
    """
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        return "int"
    if a.dtype.kind == "U":
        return "str"
    if a.dtype.kind != "O":
        raise TypeError(f"{what} must be integers or strings, got dtype {a.dtype}")
    is_str = np.fromiter((isinstance(v, str) for v in a), dtype=bool, count=a.shape[0])
    if is_str.all():
        return "str"
    is_int = np.fromiter((isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))
                          for v in a), dtype=bool, count=a.shape[0])
    if is_int.all():
        return "int"
    if (is_str | is_int).all():
        i, j = int(np.argmax(is_str)), int(np.argmax(is_int))
        raise TypeError(f"{what} mix integers and strings ({a[j]!r} at position {j}, "
                        f"{a[i]!r} at position {i}); use one type for every id")
    bad = int(np.argmin(is_str | is_int))
    raise TypeError(f"{what} must be integers or strings, got {a[bad]!r} "
                    f"({type(a[bad]).__name__}) at position {bad}")


def _object_keys(a):
    """An object array of keys as int64 or str; TypeError for anything else or a mix."""
    if id_kind(a) == "str":
        return a.astype(str)
    try:
        return a.astype(np.int64)
    except OverflowError:
        raise ValueError("integer query keys must fit in int64") from None


def _scores(scores):
    """The scores as a C-contiguous 1-D float64 array, checked for NaN and mixed infinities."""
    x = np.ascontiguousarray(scores, dtype=np.float64)
    if x.ndim != 1:
        raise ValueError(f"scores must be a 1-D array, got an array of shape {x.shape}")
    if not np.isfinite(x).all():
        if np.isnan(x).any():
            raise ValueError(
                "scores contain NaN: handle NaN values before bootstrapping (e.g. "
                "nan_handling='drop' or 'zerofill')")
        if np.isposinf(x).any() and np.isneginf(x).any():
            raise ValueError("scores contain both +inf and -inf: their mean is undefined")
    return x


def _quantiles(sorted_values, probabilities):
    """Linearly interpolated quantiles (numpy's default 'linear' method) of sorted values.

    Equal neighbours give exactly their value and an exact hit gives the order statistic, so
    infinite values never produce ``inf - inf``.
    """
    last = sorted_values.shape[0] - 1
    out = []
    for prob in probabilities:
        h = last * min(max(prob, 0.0), 1.0)
        lo = int(math.floor(h))
        hi = min(lo + 1, last)
        frac = h - lo
        a, b = sorted_values[lo], sorted_values[hi]
        out.append(float(a) if frac == 0.0 or a == b else float(a + (b - a) * frac))
    return out


def _bca_probabilities(distribution, mean, m2, m3, n, confidence_level):
    """Quantile levels of the BCa interval (Efron 1987), for the mean.

    The jackknife values of a mean are analytic, ``(n * mean - x_i) / (n - 1)``, so the
    acceleration ``a = sum(d**3) / (6 * sum(d**2) ** 1.5)`` with ``d = x_i - mean`` costs O(n).
    ``m2`` and ``m3`` are ``sum(d**2)`` and ``sum(d**3)``.
    """
    alpha = (1.0 - confidence_level) / 2.0
    n_res = distribution.shape[0]
    # bias correction: share of resampled means below the sample mean, ties counted half;
    # a resampled mean equal to the mean may differ from it by rounding, hence a tolerance
    scale = abs(mean) + math.sqrt(m2 / n)
    tol = 64.0 * math.sqrt(n) * _EPS * scale if math.isfinite(scale) else 0.0
    below = np.count_nonzero(distribution < mean - tol)
    ties = np.count_nonzero(np.abs(distribution - mean) <= tol)
    share = (below + 0.5 * ties) / n_res
    # keep z0 finite when the mean lies outside the resampled means (tiny n or B)
    share = min(max(share, 0.5 / n_res), 1.0 - 0.5 / n_res)
    z0 = _NORMAL.inv_cdf(share)
    # m2 can underflow to 0 (scores 1e-320 apart) or overflow to inf (scores near 1e200):
    # no usable skewness then, and no acceleration
    accel = m3 / (6.0 * m2 ** 1.5) if 0.0 < m2 < math.inf else 0.0
    if not math.isfinite(accel):
        accel = 0.0
    probabilities = []
    for z_alpha in (_NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1.0 - alpha)):
        z = z0 + z_alpha
        denominator = 1.0 - accel * z
        if denominator <= 0.0:
            # beyond the pole of the adjustment: the level tends to 0 or 1
            probabilities.append(1.0 if z > 0 else 0.0)
        else:
            probabilities.append(_NORMAL.cdf(z0 + z / denominator))
    return probabilities


def _prepare(scores, n_resamples, confidence_level, method, resampling, random_state, keys):
    """The checked arguments of a bootstrap (:func:`bootstrap_mean`, :func:`bootstrap_ratio`):
    ``(n_resamples, confidence_level, method, resampling, scores, rng, hashes)``, ``hashes``
    the Poisson bootstrap's query key hashes (None for the multinomial one)."""
    n_resamples, confidence_level, method = _validate(n_resamples, confidence_level, method)
    resampling = _check_resampling(resampling)
    x = _scores(scores)
    rng = _rng(random_state)
    hashes = None
    if resampling == "poisson":
        hashes = query_key_hashes(keys, x.shape[0])
    elif keys is not None:
        raise ValueError("keys are only used with resampling='poisson'")
    return n_resamples, confidence_level, method, resampling, x, rng, hashes


def bootstrap_mean(scores, n_resamples=1000, confidence_level=0.95, method="percentile",
                   random_state=None, *, resampling="multinomial", keys=None):
    """Bootstrap confidence interval of the mean of ``scores``.

    Draws ``n_resamples`` resamples of the ``n`` scores with replacement, takes the mean of
    each, and derives a confidence interval from the distribution of these means.

    Parameters
    ----------
    scores : array-like of float, shape (n,)
        Per-ranking scores (e.g. ``Metric.score`` output after NaN handling). They must not
        contain NaN; ``+inf`` (``MeanRanks`` of a ranking without relevant items) is allowed
        with ``method='percentile'``.
    n_resamples : int, default=1000
        Number of bootstrap resamples, an integer > 1 (at most ``10**8``).
    confidence_level : float, default=0.95
        Nominal coverage of the interval, strictly between 0 and 1.
    method : {'percentile', 'bca'}, default='percentile'
        ``'percentile'`` (the reference's behaviour): the ``(1 - confidence_level) / 2`` and
        ``(1 + confidence_level) / 2`` quantiles of the bootstrap means. Simple and
        transformation-respecting; accurate when the sampling distribution of the mean is
        close to symmetric (large ``n``, metrics like NDCG or Precision over many rankings).

        ``'bca'``: bias-corrected and accelerated percentile interval (Efron 1987). The
        quantile levels are shifted by a bias correction (share of bootstrap means below the
        sample mean) and an acceleration (skewness of the jackknife values, exact and O(n)
        for a mean). It has second-order accurate coverage and is preferable for skewed
        scores and small ``n``, e.g. ``ReciprocalRank`` or ``HitRate`` with a low hit rate,
        or a few dozen queries. Requires finite scores.
        Case-insensitive (``'BCa'`` is accepted).
    random_state : None, int or numpy.random.Generator, default=None
        Source of randomness, passed to ``numpy.random.default_rng``: an int seed, a
        Generator (used as is: its state advances) or anything else ``default_rng`` accepts.
        ``None`` draws fresh entropy. The global NumPy RNG is never used.
    resampling : {'multinomial', 'poisson'}, default='multinomial'
        ``'multinomial'``: the classical bootstrap, ``n`` draws with replacement.
        ``'poisson'``: each score gets an independent Poisson(1) weight per resample, keyed
        by ``(random_state, key, resample)``, and a resampled mean is ``sum(w * score) /
        sum(w)`` (a resample whose weights are all 0, probability ``e**-n``, counts as the
        sample mean). Its intervals match those of :mod:`rankereval.dask` on the same keys,
        for any partitioning. See :doc:`/guide/confidence_intervals`.
    keys : array-like of int or str, shape (n,), optional
        With ``resampling='poisson'``: the key of each score (its query id); default the
        positions ``0 .. n - 1``. See :func:`query_key_hashes`.

    Returns
    -------
    BootstrapResult
        ``mean``, ``confidence_interval``, ``bootstrap_distribution``, ``standard_error``,
        ``method``, ``confidence_level`` and ``n_resamples``.

    Raises
    ------
    ValueError
        If ``scores`` is not 1-D, contains NaN, both +inf and -inf, or (with
        ``method='bca'``, unless all scores are equal) an infinite value; or if an option is
        invalid. The message names the argument.

    Notes
    -----
    Degenerate cases need no special handling by the caller:

    * no scores: ``mean`` and both bounds are ``nan`` (no warning is raised);
    * all scores equal (including ``n == 1``): every resampled mean is that value, so the
      interval has zero width at it and ``standard_error`` is 0, for both methods.

    Results are reproducible for a given ``random_state`` and do not depend on the number of
    threads. Extra memory is O(n + n_resamples); with few distinct values (``d <= n / 200``)
    the resamples are drawn as multinomial counts over those values (O(n_resamples * d) work
    instead of O(n_resamples * n), the same distribution).

    References
    ----------
    .. [1] B. Efron and R. J. Tibshirani, *An Introduction to the Bootstrap*, Chapman & Hall,
       1993, chapters 13-14.
    .. [2] B. Efron, "Better bootstrap confidence intervals", *Journal of the American
       Statistical Association* 82(397), 1987.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval.bootstrap import bootstrap_mean
    >>> rr = np.array([1.0, 0.5, 0.0, 1.0, 0.25, 0.0, 1.0, 0.5])
    >>> res = bootstrap_mean(rr, n_resamples=2000, random_state=0)
    >>> float(res.mean)
    0.53125
    >>> low, high = res.confidence_interval
    >>> bool(low < res.mean < high), res.bootstrap_distribution.shape
    (True, (2000,))
    >>> bootstrap_mean([0.5, 0.5, 0.5], random_state=0).confidence_interval
    (0.5, 0.5)
    """
    n_resamples, confidence_level, method, resampling, x, rng, hashes = _prepare(
        scores, n_resamples, confidence_level, method, resampling, random_state, keys)
    n = x.shape[0]

    def result(mean, interval, distribution, standard_error):
        distribution.setflags(write=False)
        return BootstrapResult(float(mean), (float(interval[0]), float(interval[1])),
                               distribution, float(standard_error), method,
                               confidence_level, n_resamples)

    if n == 0:
        return BootstrapResult.undefined(n_resamples, confidence_level, method)

    support = _bootstrap.small_support(x, max(1, n // _SHORTCUT_RATIO))
    if support is not None and support[0].shape[0] == 1:
        value = support[0][0]            # all scores equal: exact, whatever the rounding
        return result(value, (value, value), np.full(n_resamples, value), 0.0)

    if method == "bca":
        check_bca_finite(x)
    mean = exact_mean(x)

    if resampling == "poisson":
        sums, weights = poisson_sums(
            x[:, None], hashes, _seed(rng), n_resamples,
            n_threads=resample_threads(n, n_resamples))
        moments = _bootstrap.centred_moments(x, mean) + (n,) if method == "bca" else None
        return poisson_result(sums[0], weights[0], mean, False, n_resamples, confidence_level,
                              method, moments)
    elif support is not None:
        values, counts = support
        distribution = _multinomial_means(values, counts, n, n_resamples, rng)
        if method == "bca":
            d = values - mean
            m2 = float(np.dot(counts, d * d))
            m3 = float(np.dot(counts, d * d * d))
    else:
        seed = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        distribution = _bootstrap.resample_means(x, n_resamples, seed, n_threads=resample_threads(n, n_resamples))
        if method == "bca":
            m2, m3 = _bootstrap.centred_moments(x, mean)

    if method == "bca":
        probabilities = _bca_probabilities(distribution, mean, m2, m3, n, confidence_level)
    else:
        probabilities = ((1.0 - confidence_level) / 2.0, (1.0 + confidence_level) / 2.0)
    interval, standard_error = _interval(distribution, probabilities)
    return result(mean, interval, distribution, standard_error)


def ratio_influence(scores, weights, mean):
    """The linearised (delta-method) values of a weighted mean ``R = sum(w x) / sum(w)``:
    ``(w_i / mean(w)) * (x_i - R)``. Their mean is 0, their variance over ``n`` is the
    delta-method variance of ``R``, and their skewness gives BCa's acceleration for ``R``
    (the empirical influence values, as the jackknife values give it for a mean)."""
    w = np.asarray(weights, dtype=np.float64)
    return np.ascontiguousarray(w / (w.sum() / w.shape[0]) * (np.asarray(scores, dtype=np.float64) - mean))


def bootstrap_ratio(scores, weights, *, n_resamples=1000, confidence_level=0.95, method="percentile",
                    random_state=None, resampling="multinomial", keys=None):
    """Bootstrap of a weighted mean ``R = sum(w x) / sum(w)``: each resample draws the queries
    (with their weights) and takes the ratio of its two sums, ``sum(c w x) / sum(c w)`` (``c``:
    how often each query is drawn, multinomial or Poisson(1) as in :func:`bootstrap_mean`), so
    that the spread of the denominator enters the interval. A resample whose drawn weights sum
    to 0 counts as ``R``. ``R`` is the exact ratio of :func:`rankereval.stats._engine.ratio_mean`;
    BCa's acceleration comes from :func:`ratio_influence`. Same options and degenerate cases as
    :func:`bootstrap_mean` (no scores, or a zero total weight: the undefined result)."""
    import rankereval.stats._compare as _compare

    n_resamples, confidence_level, method, resampling, x, rng, hashes = _prepare(
        scores, n_resamples, confidence_level, method, resampling, random_state, keys)
    w = np.ascontiguousarray(weights, dtype=np.float64)
    if w.shape != x.shape or not np.isfinite(w).all() or (w.size and w.min() < 0):
        raise ValueError(f"weights must hold one finite, non-negative weight per score ({x.shape[0]}), "
                         f"got shape {w.shape}")
    n = x.shape[0]
    mean = ratio_mean(x, w)
    if n == 0 or math.isnan(mean):
        return BootstrapResult.undefined(n_resamples, confidence_level, method)
    if (x == x[0]).all():  # every resampled ratio is the value: (mean, mean), as the merged sums give
        return poisson_result(None, None, mean, True, n_resamples, confidence_level, method)
    if method == "bca":
        check_bca_finite(x)
    moments = None
    if method == "bca":
        moments = _bootstrap.centred_moments(ratio_influence(x, w, mean), 0.0) + (n,)
    terms = np.column_stack([weighted_terms(x, w), w])
    threads = resample_threads(n, n_resamples)
    if resampling == "poisson":
        sums, _ = poisson_sums(terms, hashes, _seed(rng), n_resamples, n_threads=threads)
        numerators, denominators = sums[0], sums[1]
    else:
        seed = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
        sums = _compare.bootstrap_sums(np.ascontiguousarray(terms), n_resamples, seed, threads)
        numerators, denominators = sums[:, 0], sums[:, 1]
    return poisson_result(numerators, denominators, mean, False, n_resamples, confidence_level, method,
                          moments)


def _interval(distribution, probabilities):
    """Quantiles of the bootstrap distribution at ``probabilities``, and its standard deviation."""
    interval = _quantiles(np.sort(distribution), probabilities)
    with np.errstate(invalid="ignore", over="ignore"):      # infinite or huge scores
        standard_error = np.std(distribution, ddof=1)
    return interval, standard_error


#: quantiles and standard deviation of a bootstrap distribution (SystemMetric.bootstrap too)
percentile_interval = _interval


def poisson_means(sums, weights, mean):
    """Resampled means of a Poisson bootstrap from its per-resample sums (1-D each).

    ``sums[b] / weights[b]``; a resample with total weight 0 (no query drawn) is the sample
    ``mean``. Used in memory and by :mod:`rankereval.dask` after adding up partitions.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(weights > 0, sums / np.where(weights > 0, weights, 1.0), mean)
    return out


def poisson_result(sums, weights, mean, constant, n_resamples, confidence_level,
                   method="percentile", moments=None):
    """:class:`BootstrapResult` of a Poisson bootstrap from its (merged) per-resample sums:
    the one Poisson path, of :func:`bootstrap_mean`, ``Metric.mean``, ``evaluate``, the
    Accumulator, :mod:`rankereval.dask` and :mod:`rankereval.spark`.

    ``constant``: every score is ``mean`` (the interval is then exactly ``(mean, mean)``, as
    :func:`bootstrap_mean` gives, instead of a rounding of it). ``method='bca'`` needs
    ``moments``: ``(sum(d**2), sum(d**3), n)`` of the deviations ``d`` from the mean.
    """
    if constant:
        distribution = np.full(n_resamples, mean)
        interval, standard_error = (mean, mean), 0.0
    else:
        distribution = poisson_means(sums, weights, mean)
        if method == "bca":
            m2, m3, n = moments
            probabilities = _bca_probabilities(distribution, mean, m2, m3, n, confidence_level)
        else:
            probabilities = ((1.0 - confidence_level) / 2.0, (1.0 + confidence_level) / 2.0)
        interval, standard_error = _interval(distribution, probabilities)
    distribution.setflags(write=False)
    return BootstrapResult(float(mean), (float(interval[0]), float(interval[1])), distribution,
                           float(standard_error), method, confidence_level, n_resamples)



def _multinomial_means(values, counts, n, n_resamples, rng):
    """Resampled means from multinomial counts over distinct ``values`` (with ``counts``).

    Each resample draws how many times each distinct value is picked, ``Multinomial(n,
    counts / n)``, which is exactly the law of the multiset of ``n`` draws with replacement.
    Memory is O(n_resamples + chunk * d).
    """
    d = values.shape[0]
    probabilities = counts / n
    finite = np.isfinite(values)
    out = np.empty(n_resamples, dtype=np.float64)
    chunk = max(1, _SHORTCUT_CELLS // d)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        drawn = rng.multinomial(n, probabilities, size=stop - start)
        if finite.all():
            out[start:stop] = drawn @ values / n
        else:
            # 0 * inf would be nan: the infinite value (one sign only) wins when drawn
            out[start:stop] = drawn[:, finite] @ values[finite] / n
            infinite = ~finite
            hit = (drawn[:, infinite] > 0).any(axis=1)
            out[start:stop][hit] = values[infinite][0]
    return out


for _obj in (BootstrapResult, bootstrap_mean, query_key_hashes):
    _obj.__module__ = "rankereval.bootstrap"  # documented and pickled under the public module
