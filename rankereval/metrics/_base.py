"""The :class:`Metric` base class, the metric registry and the kernel call.

Every concrete metric declares one :class:`MetricInfo` as its ``info`` class attribute. That
declaration is the single place everything else reads: the name grammar
(:func:`~rankereval.metrics.from_name`), the CLI's listing, the docs' list of metrics, the
labels :mod:`rankereval.io` and :func:`rankereval.evaluate` hand it, the warnings about
undefined values and the parametrisation of the generic tests.
"""
import contextvars
import inspect
import itertools
import warnings
from dataclasses import dataclass, field

import numpy as np

import rankereval.metrics._beyond_fast as _beyond
import rankereval.metrics._kernels as _kernels
from rankereval._stack import user_stacklevel
from rankereval._utils._switches import forced
from rankereval._threads import effective_n_threads
from rankereval._validation import bitset_fits, check_flag, check_k, check_nan_handling, check_real
from rankereval.data import BinaryLabels, Labels, Rankings
from rankereval.exceptions import UndefinedMetricWarning

#: every registered metric class, by canonical name, in declaration order
_REGISTRY = {}

_CUTOFFS = ("required", "optional", "none")
_LABELS = ("binary", "graded", "none", "intents")
_AGGREGATES = ("mean", "geometric", "weighted")

#: the floor of a score in a geometric mean (trec_eval's MIN_GEO_MEAN, for gm_map)
from rankereval._utils._choices import GEOMETRIC_FLOOR  # noqa: E402,F401  (the floor of geometric means)

_NO_VALUES = np.empty(0)

# How the kernel looks ranked items up in a label row. "auto" chooses per row; tests force
# "bitset", "search" or "scan" (with :func:`_forced_lookup`) to check every strategy on the
# same input. A context variable, not a module switch: it is read once per call, is local
# to the thread (and task) that set it, and forcing a strategy that cannot apply raises.
_LOOKUP = contextvars.ContextVar("rankereval_lookup", default="auto")  # see rankereval._utils._switches


def _forced_lookup(strategy):
    """Within the block, every metric kernel call uses lookup ``strategy`` (tests only)."""
    return forced(_LOOKUP, strategy, _kernels.LOOKUP_IDS)


@dataclass(frozen=True)
class RealParam:
    """A real-valued metric parameter: the interval it must lie in, and a few values
    (``examples``) that the generic tests enumerate.

    Parameters
    ----------
    low, high : float
        The bounds of the interval.
    examples : tuple of float
        Values inside it, for the tests and the docs.
    low_open, high_open : bool, default=False
        Whether the bound itself is excluded.
    """

    low: float
    high: float
    examples: tuple
    low_open: bool = False
    high_open: bool = False

    def __post_init__(self):
        for x in self.examples:
            self.check(x, "example")

    def describe(self):
        """The interval in mathematical notation, e.g. ``(0, 1)`` or ``[0, 1]``."""
        return f"{'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"

    def check(self, value, name):
        """``value`` as a float inside the interval; ValueError naming ``name`` otherwise."""
        value = float(check_real(value, name))
        if value < self.low or value > self.high or (self.low_open and value == self.low) \
                or (self.high_open and value == self.high):
            raise ValueError(f"{name} must be a number in {self.describe()}, got {value!r}")
        return value


@dataclass(frozen=True)
class MetricInfo:
    """What a metric class declares about itself, in one place.

    Parameters
    ----------
    name : str
        Canonical short name, the first part of :attr:`Metric.name` (``"ndcg"``, ``"p"``).
    kernel : str
        Key of the metric's reduction in the kernel's ``METRIC_IDS``.
    summary : str
        One line for listings (``rankereval metrics``, the docs).
    aliases : tuple of str
        Other names :func:`~rankereval.metrics.from_name` accepts (case-insensitive;
        ``_`` and ``-`` are ignored).
    labels : {'binary', 'graded', 'none'}
        'binary': needs :class:`~rankereval.BinaryLabels` (graded labels are thresholded
        by :func:`rankereval.evaluate`); 'graded': uses the label values as they are;
        'none': reads the rankings only (the beyond-accuracy metrics), so ``y_true`` may be
        None and is not read when given; 'intents': needs :class:`~rankereval.IntentLabels`
        (a judgement per intent: the diversity measures, ``rankereval.metrics._diversity``).
    cutoff : {'required', 'optional', 'none'}
        Whether the metric takes ``k``: always, optionally (``k=None`` is the whole
        ranking), or never.
    choices : dict
        Parameter -> allowed values, for parameters that take one of a few strings.
    tokens : dict
        Short option names in metric names: token -> (parameter, value), e.g.
        ``{"power": ("relevance_scaling", "power")}``. A bool parameter is its own token.
    undefined : str or None
        When a value is NaN, completing "... because ..." (for the warning of ``mean``);
        None for a metric that is never NaN (the counts).
    value_range : tuple of float
        The values a defined score can take, ``(low, high)`` inclusive.
    higher_is_better : bool
        Whether a larger score is a better ranking (False for rank positions), read by
        :func:`rankereval.compare` for wins, best values and significance marks.
    reals : dict
        Parameter -> :class:`RealParam`, for parameters that take a real number (RBP's
        ``p``, a recall level).
    at : str
        The parameter that ``@`` sets in a metric name: ``"k"`` (the cutoff, default), or
        a real parameter (``iprec@0.1`` is the recall level).
    aggregate : {'mean', 'geometric', 'weighted'}
        How :meth:`Metric.mean` (and :func:`rankereval.evaluate`) average the scores:
        arithmetically, geometrically with scores floored at ``GEOMETRIC_FLOOR``
        (trec_eval's gm_map), or weighted by a weight of each query that the class gives
        (``_query_weights``: a property of the query, read from the labels, so that the runs
        of a comparison weigh each query alike), ``sum(w * x) / sum(w)`` (RecBole's GAUC).
    judged : bool
        Whether the metric tells judged non-relevant items from unjudged ones, so that it
        needs labels with judgments (:meth:`~rankereval.BinaryLabels.with_judged`, or labels
        read by :mod:`rankereval.io`).
    inputs : tuple of str
        Constructor parameters that are data, not options (an item popularity array, item
        features, the catalogue size): a name cannot carry them, so
        :func:`~rankereval.metrics.from_name` takes them from its ``defaults`` and says so
        when they are missing, and the generic tests (which build every metric from its
        options alone) leave such metrics to their own tests.
    exclusive : tuple of tuple of str
        Bool options that cannot be true together (RBP's ``residual`` and ``normalize``):
        the constructor refuses them and :meth:`Metric._param_space` leaves them out.
    row_inputs : tuple of str
        The inputs among ``inputs`` that hold one row per ranking (Serendipity's users'
        histories), aligned with the rankings by position as label rows are: the
        Accumulator takes each batch's rows, and Dask and Spark (which split the rankings
        by query and number each partition's items apart) refuse the metric.
    """

    name: str
    kernel: str
    summary: str
    aliases: tuple = ()
    labels: str = "binary"
    cutoff: str = "required"
    choices: dict = field(default_factory=dict)
    tokens: dict = field(default_factory=dict)
    undefined: str = "its labels have no relevant item"
    value_range: tuple = (0.0, 1.0)
    higher_is_better: bool = True
    reals: dict = field(default_factory=dict)
    at: str = "k"
    aggregate: str = "mean"
    judged: bool = False
    inputs: tuple = ()
    exclusive: tuple = ()
    row_inputs: tuple = ()

    def __post_init__(self):
        if self.labels not in _LABELS:
            raise ValueError(f"labels must be one of {_LABELS}, got {self.labels!r}")
        if self.cutoff not in _CUTOFFS:
            raise ValueError(f"cutoff must be one of {_CUTOFFS}, got {self.cutoff!r}")
        if self.labels == "none":  # the metrics that read rankings only (rankereval.metrics._beyond_fast)
            if self.kernel not in _beyond.KERNELS:
                raise ValueError(f"kernel {self.kernel!r} is not a kernel of rankereval.metrics._beyond_fast; "
                                 f"known: {sorted(_beyond.KERNELS)}")
        elif self.kernel not in _kernels.METRIC_IDS and self.kernel not in ("profile", "diversity", "serendipity"):
            raise ValueError(f"kernel {self.kernel!r} is not a reduction of the metric kernel; "
                             f"known: {sorted(_kernels.METRIC_IDS)} (or 'profile': "
                             "rankereval.metrics._profile, 'diversity': rankereval.metrics._diversity, "
                             "or 'serendipity': rankereval.metrics._serendipity)")
        if self.aggregate not in _AGGREGATES:
            raise ValueError(f"aggregate must be one of {_AGGREGATES}, got {self.aggregate!r}")
        if self.at != "k" and self.at not in self.reals:
            raise ValueError(f"at must be 'k' or a real parameter, got {self.at!r}")

    def name_form(self):
        """How a name of the metric starts, for listings: ``ndcg[@k]``, ``p@k``, ``map``,
        ``iprec@recall_level``."""
        if self.at != "k":
            return f"{self.name}@{self.at}"
        return {"required": f"{self.name}@k", "optional": f"{self.name}[@k]", "none": self.name}[self.cutoff]

    def option_tokens(self, params):
        """The bracket options of a metric with constructor parameters ``params`` (names),
        for listings: a bool or a choice by its token, a real as ``name=<number>``."""
        out = [f"{p}=<number in {self.reals[p].describe()}>" if p in self.reals else p
               for p in params if p not in ("k", self.at) and p not in self.choices and p not in self.inputs]
        return out + list(self.tokens)


def _registered(everything=False):
    """The registered metric classes, in declaration order.

    By default the per-ranking metrics of labels that their options alone build (what the
    generic tests enumerate); ``everything=True`` adds the beyond-accuracy metrics, which
    read rankings only, need data inputs (``MetricInfo.inputs``) or give one value for all
    rankings (:class:`~rankereval.metrics.SystemMetric`): every name
    :func:`~rankereval.metrics.from_name` knows.
    """
    classes = list(_REGISTRY.values())
    if everything:
        return classes
    return [c for c in classes if issubclass(c, Metric) and c.info.labels not in ("none", "intents")
            and not c.info.inputs]


def _register(cls):
    """Put ``cls`` (a class with a :class:`MetricInfo` ``info``) in the registry under its
    canonical name, refusing a name or alias another class already has."""
    info = cls.info
    if not isinstance(info, MetricInfo):
        raise TypeError(f"{cls.__name__}.info must be a MetricInfo")
    for key in (info.name, *info.aliases):
        norm = _normalise_name(key)
        for other in _REGISTRY.values():
            if other.__name__ != cls.__name__ and norm in {
                    _normalise_name(a) for a in (other.info.name, *other.info.aliases)}:
                raise ValueError(f"metric name {key!r} of {cls.__name__} is already taken by "
                                 f"{other.__name__}")
    _REGISTRY[info.name] = cls


class Metric:
    """Base class of all metrics.

    A metric object holds its parameters (such as the cutoff ``k``); :meth:`score` and
    :meth:`mean` take the ground truth (:class:`~rankereval.data.BinaryLabels` or
    :class:`~rankereval.data.NumericLabels`) and the :class:`~rankereval.data.Rankings` to
    evaluate. One label row serves every ranking; otherwise row ``i`` of the labels belongs
    to ranking ``i``.

    Metrics compare equal when they are of the same class with the same parameters, hash
    accordingly, pickle by their parameters, and have a short :attr:`name` that
    :func:`~rankereval.metrics.from_name` reads back.
    """

    #: the registry entry of a concrete metric class (None on abstract bases)
    info = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if info is None:
            return
        _register(cls)
        cls._kernel_id = _kernels.METRIC_IDS.get(info.kernel)  # None: a kernel of _beyond

    # -- parameters ----------------------------------------------------------------------
    def _params(self):
        """Constructor arguments, in signature order (what repr, ==, pickling and name use)."""
        return {p.name: getattr(self, p.name)
                for p in inspect.signature(type(self).__init__).parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        return self._params() == other._params()

    def __hash__(self):
        return hash((type(self).__name__, tuple(self._params().items())))

    def __reduce__(self):
        return (_restore_metric, (type(self), self._params()))

    @property
    def name(self):
        """Short name: ``"ndcg@10"``, ``"ndcg@10[power]"``, ``"p@10[truncated]"``, ``"ap"``.

        The canonical name of the class, ``@k`` for a cutoff, and in brackets the
        parameters that differ from their defaults. ``from_name(m.name) == m`` for every
        metric ``m``; :func:`rankereval.evaluate` uses it as the default column name.
        """
        return format_name(self)

    # -- scoring -------------------------------------------------------------------------
    def _check_inputs(self, y_true, y_pred):
        if not isinstance(y_true, Labels):
            raise TypeError(
                f"y_true must be BinaryLabels or NumericLabels, got {type(y_true).__name__}; "
                "build it with BinaryLabels.from_positive_indices(...) or *.from_matrix(...)"
            )
        if not isinstance(y_pred, Rankings):
            raise TypeError(
                f"y_pred must be Rankings, got {type(y_pred).__name__}; build it with "
                "Rankings.from_ranked_indices(...) or Rankings.from_scores(...)"
            )
        if self.info.labels == "binary" and not isinstance(y_true, BinaryLabels):
            raise TypeError(
                f"{type(self).__name__} needs BinaryLabels, got {type(y_true).__name__}; "
                "threshold graded labels first (e.g. BinaryLabels.from_matrix(grades >= 1)), "
                "or use rankereval.evaluate(..., relevance_level=1), which does it for you"
            )
        if y_true.n_rows != 1 and y_true.n_rows != y_pred.n_rows:
            raise ValueError(
                f"y_true has {y_true.n_rows} label rows but y_pred has {y_pred.n_rows} rankings; "
                "give one label row per ranking, or a single label row for all rankings"
            )

    def _query_weights(self, y_true, y_pred):
        """The weight of each ranking's query in the mean, shape ``(n_rankings,)`` float64
        (only for ``info.aggregate == 'weighted'``; read from the labels, never the ranking)."""
        raise TypeError(f"{type(self).__name__} averages with equal weights (info.aggregate="
                        f"{self.info.aggregate!r}): it has no query weights")

    def _kernel_args(self, y_true, y_pred):
        """What the kernel needs of this metric: ``dict(k=..., truncated=..., disc=...,
        power=..., norm=...)``; ``k=None`` is the whole ranking (see :func:`_score_many`)."""
        raise NotImplementedError

    def score(self, y_true, y_pred, *, ties=None):
        """Individual scores for each ranking.

        Parameters
        ----------
        y_true : BinaryLabels or NumericLabels
            Ground truth labels: one row, or one row per ranking.
        y_pred : Rankings
            Rankings to be evaluated.
        ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
            For rankings that keep their tied scores (``Rankings.from_scores(...,
            ties="keep")``): 'expected' is the mean of the metric over every order of each
            group of equal scores (computed exactly, in one pass, without enumerating the
            orders), 'optimistic' / 'pessimistic' its value for the best / worst order of
            each group. None scores the recorded order (equal scores by item id). Rankings
            without recorded ties score the same under every choice. A metric without an
            exact expected value over tied orders is refused with the reason (see
            :doc:`/guide/ties`).

        Returns
        -------
        ndarray of float64, shape (n_rankings,)
            The metric of each ranking.

        Raises
        ------
        TypeError
            If ``y_true`` or ``y_pred`` are of incorrect type.
        ValueError
            If the numbers of label rows and rankings differ (and there is more than one
            label row), ``ties`` is not one of its values, or the metric has no value over
            tied orders.

        Examples
        --------
        >>> from rankereval import BinaryLabels, Rankings, ReciprocalRank
        >>> y_true = BinaryLabels.from_positive_indices([[2]])
        >>> y_pred = Rankings.from_scores([[0.5, 0.5, 0.5, 0.5]], ties="keep")
        >>> ReciprocalRank().score(y_true, y_pred)  # the order by item id
        array([0.33333333])
        >>> ReciprocalRank().score(y_true, y_pred, ties="expected")  # (1 + 1/2 + 1/3 + 1/4) / 4
        array([0.52083333])
        >>> ReciprocalRank().score(y_true, y_pred, ties="pessimistic")
        array([0.25])
        """
        from rankereval.metrics._ties import check_ties, tied_scores

        ties = check_ties(ties)
        if type(self).info is None:
            raise TypeError(f"{type(self).__name__} is not a registered metric (give it an "
                            "`info = MetricInfo(...)` registry entry)")
        self._check_inputs(y_true, y_pred)
        if ties is not None:
            return tied_scores(self, y_true, y_pred, ties)
        return self._score(y_true, y_pred)

    def _score(self, y_true, y_pred):
        return _score_many([self], y_true, y_pred)[:, 0]

    # -- aggregation ---------------------------------------------------------------------
    def mean(
        self,
        y_true,
        y_pred,
        nan_handling="propagate",
        conf_interval=False,
        n_bootstrap_samples=1000,
        confidence=0.95,
        *args,
        random_state=None,
        method="percentile",
        resampling="multinomial",
        n_resamples=None,
        confidence_level=None,
        ties=None,
    ):
        """Mean score over all rankings after handling NaN values.

        Parameters
        ----------
        y_true : BinaryLabels or NumericLabels
            Ground truth labels.
        y_pred : Rankings
            Rankings to be evaluated.
        nan_handling : {'propagate', 'drop', 'zerofill', 'onefill'}, default='propagate'
            'propagate': return NaN if any score is NaN; 'drop': ignore NaN scores;
            'zerofill': replace NaN scores with zero; 'onefill': with one (torchmetrics'
            ``empty_target_action='pos'``).
        conf_interval : bool, default=False
            If True, also return a bootstrap confidence interval of the mean.
        n_bootstrap_samples : int, default=1000
            Number of bootstrap resamples (an int > 1). (:meth:`bootstrap` calls it
            ``n_resamples``, as :func:`scipy.stats.bootstrap` does.)
        confidence : float, default=0.95
            Confidence level of the interval, 0 < confidence < 1. (:meth:`bootstrap`:
            ``confidence_level``.)
        random_state : None, int or numpy.random.Generator, default=None, keyword-only
            Seed or generator for the resampling; an int makes intervals reproducible. The
            global NumPy random state is never used. ``random_state``, ``method`` and
            ``resampling`` are keyword-only in :meth:`mean` and :meth:`bootstrap` alike;
            given by position (in this method's former order ``random_state, method,
            resampling``) they work for one release, with a ``DeprecationWarning``.
        method : {'percentile', 'bca'}, default='percentile', keyword-only
            Percentile bootstrap, or bias-corrected and accelerated (BCa), which is more
            accurate for skewed score distributions (e.g. reciprocal rank) and small samples.
        resampling : {'multinomial', 'poisson'}, default='multinomial', keyword-only
            The classical bootstrap, or the Poisson bootstrap keyed by ranking position
            (row ``i`` has key ``i``), whose intervals :mod:`rankereval.dask` reproduces on
            a cluster; see :func:`rankereval.bootstrap.bootstrap_mean`.
        n_resamples, confidence_level : optional, keyword-only
            The package's and scipy's words for ``n_bootstrap_samples`` and ``confidence``
            (:doc:`/guide/vocabulary`); either spelling may be used, not both with
            different values. Option strings are matched case-insensitively.
        ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
            How the scores of rankings with recorded ties are computed, as in :meth:`score`.

        Returns
        -------
        float or dict
            The mean if ``conf_interval`` is False; otherwise
            ``{"score": mean, "conf_interval": (lower, upper)}``. No scores left after NaN
            handling gives NaN (and ``(nan, nan)``).

        Warns
        -----
        UndefinedMetricWarning
            With ``nan_handling='propagate'``, when the mean is NaN because some rankings
            are undefined: how many, why, and the other choices.

        Raises
        ------
        TypeError
            If ``y_true`` or ``y_pred`` are of incorrect type.
        ValueError
            If ``n_bootstrap_samples``, ``confidence``, ``method`` or ``nan_handling`` are
            invalid.

        Examples
        --------
        >>> from rankereval import BinaryLabels, Rankings, Precision
        >>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
        >>> y_pred = Rankings.from_ranked_indices([[0, 2, 1], [1, 2]])
        >>> Precision(2).mean(y_true, y_pred)
        0.75
        >>> Precision(2).mean(y_true, y_pred, conf_interval=True, random_state=0)
        {'score': 0.75, 'conf_interval': (0.5, 1.0)}
        """
        from rankereval.stats import _engine

        if args:
            random_state, method, resampling = _positional(
                "Metric.mean", 6, args, ("random_state", "method", "resampling"),
                (random_state, method, resampling), (None, "percentile", "multinomial"))
        if n_resamples is not None:
            n_bootstrap_samples = _same_option(n_bootstrap_samples, 1000, n_resamples,
                                               "n_bootstrap_samples", "n_resamples")
        if confidence_level is not None:
            confidence = _same_option(confidence, 0.95, confidence_level, "confidence", "confidence_level")
        opts = _engine.options(nan_handling=nan_handling, conf_interval=conf_interval,
                               n_resamples=n_bootstrap_samples, confidence=confidence, method=method,
                               resampling=resampling, random_state=random_state,
                               names={"n_resamples": "n_bootstrap_samples"})
        scores, rows = self._policy(self.score(y_true, y_pred, ties=ties), opts.nan_handling)
        weights = self._kept_weights(y_true, y_pred, rows)
        if not opts.conf_interval:
            return _engine.aggregate(self.info, scores, weights)
        result = _engine.interval(scores, opts, rows, self.info, weights=weights)
        return {"score": result.mean, "conf_interval": result.confidence_interval}

    def bootstrap(
        self,
        y_true,
        y_pred,
        nan_handling="propagate",
        n_resamples=1000,
        confidence_level=0.95,
        *args,
        method="percentile",
        random_state=None,
        resampling="multinomial",
        ties=None,
    ):
        """Bootstrap distribution of the mean score, as a result object.

        Like ``mean(..., conf_interval=True)`` but returns a
        :class:`~rankereval.bootstrap.BootstrapResult` with the interval, the bootstrap
        distribution and the standard error. The arguments are named as in
        :func:`scipy.stats.bootstrap` (``n_resamples``, ``confidence_level``); :meth:`mean`
        keeps the reference's names (``n_bootstrap_samples``, ``confidence``). Both are
        checked by the same code. ``resampling='poisson'`` is the Poisson bootstrap keyed
        by ranking position, as in :meth:`mean`. ``method``, ``random_state`` and
        ``resampling`` are keyword-only, as in :meth:`mean`; given by position (in this
        method's former order ``method, random_state, resampling``) they work for one
        release, with a ``DeprecationWarning``.

        Examples
        --------
        >>> from rankereval import BinaryLabels, Rankings, HitRate
        >>> y_true = BinaryLabels.from_positive_indices([[0], [1], [2], [3]])
        >>> y_pred = Rankings.from_ranked_indices([[0, 1], [0, 1], [2, 0], [0, 1]])
        >>> res = HitRate(2).bootstrap(y_true, y_pred, random_state=0)
        >>> res.mean
        0.75
        >>> res.bootstrap_distribution.shape
        (1000,)
        """
        from rankereval.stats import _engine

        if args:
            method, random_state, resampling = _positional(
                "Metric.bootstrap", 5, args, ("method", "random_state", "resampling"),
                (method, random_state, resampling), ("percentile", None, "multinomial"))
        opts = _engine.options(nan_handling=nan_handling, conf_interval=True, n_resamples=n_resamples,
                               confidence=confidence_level, method=method, resampling=resampling,
                               random_state=random_state, names={"confidence": "confidence_level"})
        scores, rows = self._policy(self.score(y_true, y_pred, ties=ties), opts.nan_handling)
        return _engine.interval(scores, opts, rows, self.info, weights=self._kept_weights(y_true, y_pred, rows))

    def _kept_weights(self, y_true, y_pred, rows):
        """The query weights of the rankings the NaN policy kept (``rows``; None: all), for a
        weighted mean; None for any other mean."""
        if self.info.aggregate != "weighted":
            return None
        w = self._query_weights(y_true, y_pred)
        return w if rows is None else w[rows]

    def _policy(self, raw, nan_handling):
        """The engine's NaN policy on ``raw`` scores: ``(scores, rows kept or None)``.
        ``'propagate'`` warns about NaN; ``'drop'`` warns when it leaves nothing (a NaN mean).
        Warnings point at the user's line."""
        from rankereval.stats._engine import apply_nan_policy

        scores, rows, n_nan = apply_nan_policy(raw, nan_handling)
        if n_nan and nan_handling == "propagate":
            warnings.warn(self._undefined_message(n_nan, raw.size), UndefinedMetricWarning,
                          stacklevel=user_stacklevel())
        elif nan_handling == "drop" and raw.size and not scores.size:
            warnings.warn(self._all_undefined_message(raw.size), UndefinedMetricWarning,
                          stacklevel=user_stacklevel())
        return scores, rows

    def _handle_nan(self, scores, nan_handling):
        """Scores after the NaN policy ('propagate' keeps them, and warns about them)."""
        return self._policy(scores, check_nan_handling(nan_handling))[0]

    def _all_undefined_message(self, n, label=None):
        """The warning of nan_handling='drop' when every one of ``n`` rankings is undefined."""
        label = label or self.name
        return (f"{label} is undefined (NaN) for all {n} rankings, because {self.info.undefined}, "
                "so nan_handling='drop' leaves nothing to average and its mean is NaN.")

    def _undefined_message(self, n_nan, n, label=None):
        label = label or self.name
        return (f"{label} is undefined (NaN) for {n_nan} of {n} rankings, because "
                f"{self.info.undefined}, so its mean is NaN. Pass nan_handling='drop' to "
                "average over the defined rankings only, or nan_handling='zerofill' to count "
                "undefined rankings as 0.")

    # -- generic parameter space (docs and tests) -----------------------------------------
    @classmethod
    def _param_space(cls, cutoffs=(1, 3, 10)):
        """Every combination of this class's options, as constructor keyword dicts.

        ``k`` takes ``cutoffs`` (and None where the cutoff is optional); every bool
        parameter False and True; every choice parameter each of its values. Data inputs
        (``info.inputs``) are left out: the caller supplies them, and so are the bool options
        that cannot be true together (``info.exclusive``).
        """
        axes = {}
        for p in inspect.signature(cls.__init__).parameters.values():
            if p.name == "self" or p.name in cls.info.inputs:
                continue
            if p.name == "k":
                axes["k"] = list(cutoffs) + ([None] if cls.info.cutoff == "optional" else [])
            elif isinstance(p.default, bool):
                axes[p.name] = [False, True]
            elif p.name in cls.info.choices:
                axes[p.name] = list(cls.info.choices[p.name])
            elif p.name in cls.info.reals:
                axes[p.name] = list(cls.info.reals[p.name].examples)
            else:
                raise TypeError(f"{cls.__name__}: parameter {p.name!r} has no declared values "
                                "(a bool default, or an entry in info.choices or info.reals)")
        names = list(axes)
        combos = [dict(zip(names, combo)) for combo in itertools.product(*(axes[n] for n in names))]
        return [c for c in combos if not any(all(c.get(p) is True for p in group)
                                             for group in cls.info.exclusive)]


# The bases of the metrics by their parameters (every family module uses them): a cutoff k
# with the truncated flag, an optional cutoff, no parameter (the whole ranking).
class _CutoffMetric(Metric):
    """A binary metric with a cutoff ``k`` and an optional ``truncated`` flag."""

    def __init__(self, k, truncated=False):
        self.k = check_k(k)
        self.truncated = check_flag(truncated, "truncated")

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k, "truncated": self.truncated}


class _OptionalCutoffMetric(Metric):
    """A metric whose one parameter is a cutoff ``k`` that may be None (the whole ranking)."""

    def __init__(self, k=None):
        self.k = check_k(k, allow_none=True)

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k}


class _WholeRankingMetric(Metric):
    """A metric over the whole ranking (no cutoff, no parameter)."""

    def __init__(self):
        pass

    def _kernel_args(self, y_true, y_pred):
        return {"k": None}


def _score_many(metrics, y_true, y_pred):
    """Scores of several metrics over the same (checked) labels and rankings, one column
    each, from one kernel call: each ranking is looked up in its label row once, up to the
    largest cutoff, and every metric reduces the hits within its own cutoff.

    ``_kernel_args`` may also name another reduction than the class's (``kernel``), a real
    parameter (``param``) and whether it reads the judged items (``judged``: True) or every
    item of the pool, also those of a negative grade (``judged``: "pool"). The metrics of
    the relevance profile (``MetricInfo.kernel == "profile"``) are scored together by
    :func:`rankereval.metrics._profile.score_profiles`, those of the diversity family
    (``"diversity"``) by :func:`rankereval.metrics._diversity.score_diversity`, Serendipity
    (``"serendipity"``) by :func:`rankereval.metrics._serendipity.score_serendipity`."""
    for pseudo, scorer in (("profile", _PROFILE_SCORER), ("diversity", _DIVERSITY_SCORER),
                           ("serendipity", _SERENDIPITY_SCORER)):
        if any(type(m).info.kernel == pseudo for m in metrics):
            own = [j for j, m in enumerate(metrics) if type(m).info.kernel == pseudo]
            rest = [j for j, m in enumerate(metrics) if type(m).info.kernel != pseudo]
            out = np.empty((y_pred.n_rows, len(metrics)), dtype=np.float64)
            # the scorer is set by the module that defines the metrics (which imports this one)
            out[:, own] = scorer[0]([metrics[j] for j in own], y_true, y_pred)
            if rest:
                out[:, rest] = _score_many([metrics[j] for j in rest], y_true, y_pred)
            return out
    ranks = y_pred.indices
    args = [m._kernel_args(y_true, y_pred) for m in metrics]
    kinds = [a.get("judged", False) for a in args]
    pool = y_true.judged.judged if y_true.judged is not None else None  # None: the judged items
    if pool is not None and True in kinds and "pool" in kinds:  # one judged set per call: apart
        out = np.empty((y_pred.n_rows, len(metrics)), dtype=np.float64)
        pooled = [j for j, w in enumerate(kinds) if w == "pool"]
        others = [j for j, w in enumerate(kinds) if w != "pool"]
        out[:, pooled] = _score_many([metrics[j] for j in pooled], y_true, y_pred)
        out[:, others] = _score_many([metrics[j] for j in others], y_true, y_pred)
        return out
    ids = np.array([_kernels.METRIC_IDS[a["kernel"]] if "kernel" in a else type(m)._kernel_id
                    for m, a in zip(metrics, args)], dtype=np.int32)
    judged = y_true.judged
    if any(a.get("judged", False) for a in args):
        if judged is None:
            who = next(m for m, a in zip(metrics, args) if a.get("judged", False))
            raise ValueError(
                f"{who.name} needs to tell judged non-relevant items from unjudged ones, but "
                f"y_true has no judgments: build it with y_true.with_judged(judged_ids), or read "
                "it with rankereval.io (read_trec, from_dataframes), which keeps every judged item")
        if "pool" in kinds and pool is not None:
            # every line of the qrels, also a negative grade's (in the pool, not judged)
            judged = pool
        j_indptr, j_ind = judged.indptr, judged.indices
    else:
        j_indptr = j_ind = np.empty(0, dtype=y_true.indptr.dtype)
    n, width = ranks.shape
    ks = np.array([-1 if a["k"] is None else a["k"] for a in args], dtype=np.int64)
    k_max = width if (ks < 0).any() else int(ks.max())
    bitset_ok = bitset_fits(y_true.n_items, ranks.size)
    lookup = _LOOKUP.get()
    if lookup == "bitset" and not bitset_ok:
        raise ValueError(f"the bitset lookup cannot be forced here: {y_true.n_items} item ids "
                         f"need more than the bitset limit for {ranks.size} ranked ids")
    n_disc = max((a["disc"].size for a in args if a.get("disc") is not None), default=0)
    discs = np.zeros((len(metrics), n_disc))
    norms = np.zeros((len(metrics), y_true.n_rows if any(a.get("norm") is not None for a in args) else 0))
    for j, a in enumerate(args):
        if a.get("disc") is not None:
            discs[j, :a["disc"].size] = a["disc"]
        if a.get("norm") is not None:
            norms[j] = a["norm"]
    out = np.empty((n, len(metrics)), dtype=np.float64)
    _kernels.score(
        ids,
        ks,
        np.array([a.get("truncated", False) for a in args], dtype=np.int8),
        np.array([a.get("power", 0) for a in args], dtype=np.int8),
        y_true.indptr,
        y_true.indices,
        _NO_VALUES if isinstance(y_true, BinaryLabels) else y_true.values,  # binary: all 1
        isinstance(y_true, BinaryLabels),
        y_true.n_items,
        ranks,
        y_pred.lengths,
        discs,
        norms,
        np.array([a.get("norm") is not None for a in args], dtype=np.int8),
        bitset_ok,
        _kernels.LOOKUP_IDS[lookup],
        out,
        effective_n_threads(n * min(k_max, width)),
        np.array([a.get("param", 0.0) for a in args], dtype=np.float64),
        j_indptr,
        j_ind,
    )
    return out


#: the scorer of the profile metrics (``rankereval.metrics._profile.score_profiles``), put here
#: by that module (which imports this one) when it defines them
_PROFILE_SCORER = [None]
#: the scorer of the diversity family (``rankereval.metrics._diversity.score_diversity``), likewise
_DIVERSITY_SCORER = [None]
#: the scorer of Serendipity (``rankereval.metrics._serendipity.score_serendipity``), likewise
_SERENDIPITY_SCORER = [None]


def _positional(where, n_fixed, args, names, given, defaults):
    """The keyword-only arguments ``names`` of ``where`` given by position in ``args`` (their
    former order, after the ``n_fixed`` positional parameters): a DeprecationWarning naming
    them, and their values (a TypeError for too many arguments, or one given both ways)."""
    if len(args) > len(names):
        raise TypeError(f"{where}() takes {n_fixed} positional arguments (and, deprecated, "
                        f"{', '.join(names)} after them), got {n_fixed + len(args)}")
    used = names[:len(args)]
    warnings.warn(f"{where}(): passing {', '.join(used)} by position is deprecated; pass "
                  + ", ".join(f"{n}=" for n in used) + " by keyword (keyword-only in Metric.mean and "
                  "Metric.bootstrap alike from the next release)",
                  DeprecationWarning, stacklevel=user_stacklevel())
    out = list(given)
    for i, value in enumerate(args):
        if given[i] is not defaults[i] and not (isinstance(defaults[i], str) and given[i] == defaults[i]):
            raise TypeError(f"{where}() got {names[i]} by position and by keyword")
        out[i] = value
    return tuple(out)


def _same_option(old, default, new, old_name, new_name):
    """The value of an option given under either of two names (``Metric.mean`` takes the
    reference's word and the package's); TypeError for two different values."""
    if old != default and old != new:
        raise TypeError(f"mean() got {old_name}={old!r} and {new_name}={new!r}: give one of them")
    return new


def _restore_metric(cls, params):
    return cls(**params)


def _aggregate(info, scores):
    """The mean of ``scores`` as the registry entry says (:func:`rankereval.stats._engine.aggregate`)."""
    from rankereval.stats._engine import aggregate

    return aggregate(info, scores)


def _normalise_name(text):
    return text.strip().lower().replace("_", "").replace("-", "")


def format_name(metric):
    """The short name of ``metric`` (see :attr:`Metric.name`), as the grammar of
    :func:`~rankereval.metrics.from_name` reads it (``rankereval.metrics._names`` imports this
    module, never the other way)."""
    cls = type(metric)
    info = cls.info
    params = metric._params()
    out = info.name
    if params.get(info.at) is not None:
        out += f"@{params[info.at]!r}"
    sig = inspect.signature(cls.__init__).parameters
    by_value = {(p, v): t for t, (p, v) in info.tokens.items()}
    opts = []
    for key, value in params.items():
        if key in ("k", info.at) or key in info.inputs or value is sig[key].default or value == sig[key].default:
            continue
        if isinstance(value, bool):
            opts.append(key if value else f"{key}=false")
        else:
            opts.append(by_value.get((key, value), f"{key}={value}"))
    return out + (f"[{','.join(opts)}]" if opts else "")


def labels_for(metric, binary_labels, numeric_labels):
    """The labels ``metric`` reads: graded values where it uses them, else the binary ones."""
    return numeric_labels if metric.info.labels in ("graded", "intents") and numeric_labels is not None \
        else binary_labels


#: the names other features use (shared with evaluate's columns and the command line)
score_many, registered = _score_many, _registered
