r"""System-level metrics: one value for all the rankings of a system, from item exposure.

How much of the catalogue a recommender shows, and how evenly: :class:`CatalogCoverage`,
:class:`DistributionalCoverage` (Shannon entropy of exposure) and :class:`GiniIndex`. They
are not per-ranking metrics (there is no per-ranking score to average, so no ``score``,
``mean`` or paired test); :meth:`SystemMetric.compute` gives the value and
:meth:`SystemMetric.bootstrap` a bootstrap interval over rankings where that is meaningful.

Exposure counts come from one parallel typed pass over the top k of every ranking
(``rankereval.metrics._beyond_fast.exposure``, one histogram per thread).
"""
import math

import numpy as np

import rankereval.metrics._beyond_fast as _beyond
from rankereval._threads import effective_n_threads
from rankereval._validation import check_choice, check_flag, check_k
from rankereval.data import Rankings
from rankereval.metrics._base import Metric, MetricInfo, _register

_DISCOUNTS = ("none", "log2")


def _check_n_items(n_items, name="n_items", allow_none=False):
    if n_items is None and allow_none:
        return None
    if isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, (int, np.integer)) or n_items <= 0:
        raise ValueError(f"{name} must be an integer > 0 (the number of items in the catalogue)"
                         f"{' or None' if allow_none else ''}, got {n_items!r}")
    return int(n_items)


class SystemMetric:
    """Base class of the system-level metrics: one value for all rankings.

    Like a :class:`~rankereval.Metric` it has a short :attr:`name` (``"coverage@10"``),
    compares, hashes and pickles by its parameters, and is built from a name by
    :func:`~rankereval.metrics.from_name` (the catalogue size ``n_items`` comes from
    ``defaults``, which the command line fills from the data).
    """

    info = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("info") is not None:
            _register(cls)

    # parameters, names, equality and pickling: as every metric
    _params = Metric._params
    __repr__ = Metric.__repr__
    __eq__ = Metric.__eq__
    __hash__ = Metric.__hash__
    __reduce__ = Metric.__reduce__
    name = Metric.name
    _param_space = Metric.__dict__["_param_space"]

    def _check(self, y_pred):
        if not isinstance(y_pred, Rankings):
            raise TypeError(f"y_pred must be Rankings, got {type(y_pred).__name__}; build it with "
                            "Rankings.from_ranked_indices(...) or Rankings.from_scores(...)")

    def _exposure(self, y_pred, weights=None):
        """Exposure of every catalogue item in the top k of all rankings (weighted per ranking
        by ``weights`` when given)."""
        ranks = y_pred.indices
        kk = min(self.k, ranks.shape[1])
        n_items = self._n_items_for(y_pred)
        threads = effective_n_threads(ranks.shape[0] * kk)
        hist = np.zeros((threads, n_items), dtype=np.float64)
        bad = np.full(1, -1, dtype=np.int64)
        _beyond.exposure(ranks, y_pred.lengths, self.k, self._discount(kk),
                         np.empty(0) if weights is None else weights, hist, bad, threads)
        if bad[0] != -1:
            raise ValueError(f"y_pred: item id {int(bad[0])} is outside the catalogue of "
                             f"{type(self).__name__} (n_items={n_items}: ids 0..{n_items - 1})")
        return hist.sum(axis=0) if threads > 1 else hist[0]

    def _n_items_for(self, y_pred):
        if self.n_items is not None:
            return self.n_items
        ranks = y_pred.indices
        return int(ranks[:, :self.k].max()) + 1 if ranks.size else 1

    def _discount(self, kk):
        return np.empty(0)

    def compute(self, y_pred):
        """The metric's value for all rankings of ``y_pred`` (a float)."""
        self._check(y_pred)
        return self._statistic(self._exposure(y_pred), y_pred.n_rows)

    def _statistic(self, exposure, n_rankings):
        raise NotImplementedError

    def bootstrap(self, y_pred, n_resamples=1000, confidence_level=0.95, random_state=None):
        """Percentile bootstrap over rankings: resample the rankings with replacement,
        recompute the exposure and the statistic, ``n_resamples`` times.

        Returns a :class:`~rankereval.bootstrap.BootstrapResult` whose ``mean`` is the value
        on all rankings (:meth:`compute`) and whose distribution holds the resampled values.
        Each resample costs one exposure pass (weighted by how often each ranking was drawn),
        so memory stays O(n_rankings + n_items + n_resamples).
        """
        import rankereval.stats._bootstrap as _bootstrap
        from rankereval.stats._random import stream_key
        from rankereval._validation import check_confidence, check_n_resamples
        from rankereval.stats._resampling import BootstrapResult, percentile_interval

        n_resamples = check_n_resamples(n_resamples)
        confidence_level = check_confidence(confidence_level, "confidence_level")
        self._check(y_pred)
        n = y_pred.n_rows
        value = self._statistic(self._exposure(y_pred), n)
        if n == 0:
            return BootstrapResult.undefined(n_resamples, confidence_level)
        # resample b draws the rankings from the engine's stream (seed, b), as every bootstrap
        # of the package does: reproducible for a seed, whatever the number of threads
        seed = stream_key(random_state)
        dist = np.empty(n_resamples)
        for b in range(n_resamples):
            weights = np.bincount(_bootstrap.bounded_samples(n, n, seed, b), minlength=n).astype(np.float64)
            dist[b] = self._statistic(self._exposure(y_pred, weights), n)
        dist.setflags(write=False)
        alpha = 1.0 - confidence_level
        (low, high), se = percentile_interval(dist, [alpha / 2, 1 - alpha / 2])
        return BootstrapResult(value, (low, high), dist, float(se), "percentile", confidence_level, n_resamples)


class CatalogCoverage(SystemMetric):
    r"""CatalogCoverage@k: the fraction of the catalogue that appears in some top k.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0).
    n_items : int
        Size of the catalogue (item ids ``0 .. n_items - 1``); a ranked id outside it is an
        error.

    Notes
    -----
    .. math::

        \mathrm{CatalogCoverage}@k = \frac{|\bigcup_u \mathrm{top}_k(y_u)|}{|I|}

    [GE10]_. The denominator is the catalogue given as ``n_items``, as RecBole's
    ItemCoverage; Microsoft Recommenders' ``catalog_coverage`` divides by the items of the
    training data instead (pass that number as ``n_items`` for theirs).

    No bootstrap interval: coverage counts distinct items, and a resample of the rankings can
    only lose items, never gain any, so every resampled value is at most the observed one and
    a percentile interval lies below the estimate instead of around it.

    References
    ----------
    .. [GE10] M. Ge, C. Delgado-Battenfeld and D. Jannach: "Beyond accuracy: evaluating
       recommender systems by coverage and serendipity". RecSys 2010.

    Examples
    --------
    >>> from rankereval import Rankings, CatalogCoverage
    >>> CatalogCoverage(2, n_items=10).compute(Rankings.from_ranked_indices([[0, 1, 2], [1, 3]]))
    0.3
    """

    info = MetricInfo(
        name="coverage", kernel="exposure", labels="none", inputs=("n_items",),
        aliases=("catalogcoverage", "itemcoverage"),
        summary="CatalogCoverage@k: fraction of the catalogue in some top k (system-level)",
        undefined="", value_range=(0.0, 1.0),
    )

    def __init__(self, k, n_items):
        self.k = check_k(k)
        self.n_items = _check_n_items(n_items)

    def _statistic(self, exposure, n_rankings):
        return float(np.count_nonzero(exposure) / exposure.size)

    def bootstrap(self, y_pred, n_resamples=1000, confidence_level=0.95, random_state=None):
        """Not available: see the Notes (a resample can only lose items, so the percentile
        interval would not cover the estimate)."""
        raise TypeError("CatalogCoverage has no bootstrap interval: it counts distinct items, and a "
                        "resample of the rankings can only lose items, so every resampled coverage is "
                        "at most the observed one and a percentile interval would lie below it")


class DistributionalCoverage(SystemMetric):
    r"""DistributionalCoverage@k: Shannon entropy (bits) of item exposure in the top k.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0).
    n_items : int, optional
        Size of the catalogue; needed with ``normalize=True`` (and then a ranked id outside
        it is an error).
    normalize : bool, default=False
        Divide by :math:`\log_2 |I|`, the entropy of exposure spread evenly over the whole
        catalogue: a value in [0, 1].

    Notes
    -----
    With :math:`p(i)` the share of item :math:`i` among all top-k slots,

    .. math::

        H = -\sum_{i : p(i) > 0} p(i) \log_2 p(i)

    as Microsoft Recommenders' ``distributional_coverage`` [SG11]_.
    RecBole's ShannonEntropy uses the natural logarithm and divides by the number of distinct
    recommended items, which is not bounded by 1 nor comparable across catalogues; we
    normalise by the maximum entropy :math:`\log_2 |I|` instead. No top-k slot at all gives
    NaN. A catalogue of one item has no entropy to normalise by: NaN.

    The bootstrap over rankings is consistent (the entropy is a smooth function of the mean
    exposure per ranking) but the plug-in entropy is biased downward when items are exposed
    only a few times each; the interval then sits low.

    References
    ----------
    .. [SG11] G. Shani and A. Gunawardana: "Evaluating recommendation systems".
       Recommender Systems Handbook, Springer (2011).

    Examples
    --------
    >>> from rankereval import Rankings, DistributionalCoverage
    >>> y_pred = Rankings.from_ranked_indices([[0, 1], [2, 3]])
    >>> DistributionalCoverage(2).compute(y_pred)
    2.0
    >>> DistributionalCoverage(2, n_items=16, normalize=True).compute(y_pred)
    0.5
    """

    info = MetricInfo(
        name="entropy", kernel="exposure", labels="none", inputs=("n_items",),
        aliases=("distributionalcoverage", "shannonentropy"),
        summary="DistributionalCoverage@k: entropy (bits) of item exposure in the top k (system-level)",
        undefined="", value_range=(0.0, float("inf")),
    )

    def __init__(self, k, n_items=None, normalize=False):
        self.k = check_k(k)
        self.n_items = _check_n_items(n_items, allow_none=True)
        self.normalize = check_flag(normalize, "normalize")
        if self.normalize and self.n_items is None:
            raise ValueError("DistributionalCoverage(normalize=True) needs n_items, the catalogue "
                             "size whose maximum entropy log2(n_items) it divides by")

    def _statistic(self, exposure, n_rankings):
        total = exposure.sum()
        if not total > 0:
            return math.nan
        p = exposure[exposure > 0] / total
        h = float(0.0 - (p * np.log2(p)).sum())  # 0.0 - x: no -0.0 for one exposed item
        if self.normalize:
            return h / math.log2(self.n_items) if self.n_items > 1 else math.nan
        return h


class GiniIndex(SystemMetric):
    r"""GiniIndex@k: inequality of item exposure in the top k over the catalogue.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0).
    n_items : int
        Size of the catalogue: items never recommended count with exposure 0.
    discount : {'none', 'log2'}, default='none'
        'none': each top-k slot exposes its item once (RecBole's GiniIndex, LensKit's
        ListGini); 'log2': the slot at rank j exposes it by :math:`1 / \log_2(j + 1)`, as
        LensKit's ExposureGini with a logarithmic rank weight.

    Notes
    -----
    With the exposures :math:`c_{(1)} \le \dots \le c_{(n)}` of the :math:`n` catalogue
    items in ascending order

    .. math::

        G = \frac{\sum_{j=1}^{n} (2j - n - 1)\, c_{(j)}}{n \sum_j c_{(j)}},

    0 when every item is exposed equally, :math:`(n - 1)/n` when one item takes all exposure
    (Gini; as RecBole and LensKit compute it). No exposure at all gives NaN.

    The bootstrap over rankings is consistent (a smooth function of the mean exposure) but
    with few exposures per item the plug-in Gini is biased upward, and so is the interval.

    Examples
    --------
    >>> from rankereval import Rankings, GiniIndex
    >>> GiniIndex(1, n_items=2).compute(Rankings.from_ranked_indices([[0], [0]]))
    0.5
    >>> GiniIndex(2, n_items=2).compute(Rankings.from_ranked_indices([[0, 1], [1, 0]]))
    0.0
    """

    info = MetricInfo(
        name="gini", kernel="exposure", labels="none", inputs=("n_items",),
        aliases=("giniindex", "exposuregini"), choices={"discount": _DISCOUNTS},
        tokens={"log2": ("discount", "log2")},
        summary="GiniIndex@k: inequality of item exposure over the catalogue (system-level)",
        undefined="", value_range=(0.0, 1.0), higher_is_better=False,
    )

    def __init__(self, k, n_items, discount="none"):
        self.k = check_k(k)
        self.n_items = _check_n_items(n_items)
        self.discount = check_choice(discount, _DISCOUNTS, "discount")

    def _discount(self, kk):
        if self.discount == "none":
            return np.empty(0)
        return 1.0 / np.log2(np.arange(2, kk + 2, dtype=np.float64))

    def _statistic(self, exposure, n_rankings):
        total = exposure.sum()
        if not total > 0:
            return math.nan
        n = exposure.size
        if self.discount == "none":
            # integer counts: sort by counting. The m_v items of count v take the sorted
            # positions s_v + 1 .. s_v + m_v, whose sum is m_v s_v + m_v (m_v + 1) / 2
            mult = np.bincount(exposure.astype(np.int64))
            values = np.flatnonzero(mult)
            m = mult[values].astype(np.float64)
            before = np.cumsum(m) - m
            weighted = float(np.dot(values.astype(np.float64), m * before + m * (m + 1) / 2))
        else:
            weighted = float(np.dot(np.arange(1, n + 1, dtype=np.float64), np.sort(exposure)))
        g = float((2.0 * weighted - (n + 1) * total) / (n * total))
        return min(max(g, 0.0), 1.0)
