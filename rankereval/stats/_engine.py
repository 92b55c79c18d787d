"""The one way from per-query scores to means and intervals (shared internals).

Every entry point that averages per-query scores goes through this module: ``Metric.mean`` and
``Metric.bootstrap``, :func:`rankereval.evaluate`, the scikit-learn-shaped functions, the
:class:`~rankereval.Accumulator`, :func:`rankereval.compare`'s per-run means,
:mod:`rankereval.dask` and :mod:`rankereval.spark`. It holds, once each:

* :func:`options`: the averaging options of one call, validated once into an :class:`Options`
  (one set of messages, each naming the argument as the caller spells it; an
  :class:`OptionError` carries the argument's name so that the command line can name its flag
  instead, :func:`cli_message`). Option strings match case-insensitively everywhere.
* :func:`apply_nan_policy`: the NaN policy. **Only NaN is undefined.** An infinite per-query
  value (MeanRanks or FirstRelevantRank of a ranking that retrieves none of the relevant items:
  ``+inf``) is a value: no ``nan_handling`` drops or fills it, so the mean is infinite, in
  every entry point (``docs/guide/nan_policy.rst``).
* :func:`aggregate`: the mean (exact sums, rounded once; geometric where the registry says,
  or weighted: ``sum(w * x) / sum(w)`` over the queries kept, each sum exact, for a metric
  whose registry entry says ``aggregate='weighted'``, with each query's weight from
  ``Metric._query_weights``, a property of the query, never of the run).
* :func:`interval`: the bootstrap of one column; :func:`random_seed` / :func:`stream_key`: the
  one seed derivation (an int shared by every metric of a call, then the 64-bit key of the
  random streams); the Poisson bootstrap's one path is
  :func:`rankereval.bootstrap.poisson_result`, from the sums of :func:`partials`.
* :func:`partials`, :func:`merge_partials`, :func:`summarise`: the mergeable sums of a block
  of queries (Dask partitions, Spark partitions, Accumulator batches), their merge, and the
  means and intervals of the total.

Feature modules import from here; they never import each other's private helpers
(``tests/test_imports.py``).
"""
from dataclasses import dataclass
import math
import re
import warnings

import numpy as np

from rankereval._utils._choices import CI_METHODS, GEOMETRIC_FLOOR, NAN_FILLS, RESAMPLINGS
from rankereval.stats._exact import exact_column_sums, exact_mean, poisson_exact, ratio_mean, weighted_terms
from rankereval._stack import user_stacklevel
from rankereval.stats._random import random_seed, rng, stream_key  # noqa: F401  (the seed derivation)
from rankereval._validation import (  # noqa: F401  (the option checks, one message each)
    MAX_RESAMPLES, OptionError, check_bca_finite, check_choice, check_confidence, check_flag, check_n_resamples,
    check_nan_handling)
from rankereval.stats._resampling import (  # noqa: F401  (ratio_influence: the linearised values)
    BootstrapResult, bootstrap_mean, bootstrap_ratio, poisson_result, ratio_influence, resample_threads)

__all__ = ["Options", "OptionError", "options", "merged_options", "apply_nan_policy", "fill_undefined", "aggregate",
           "interval",
           "random_seed", "stream_key", "partials", "merge_partials", "summarise", "cli_message"]


def cli_message(exc, flags):
    """The message of ``exc`` with arguments named as command-line flags.

    ``flags``: {argument name: flag spelling, e.g. ``'--n-resamples'``}. Every ``name=value``
    in the message becomes ``flag value`` (``queries='intersection'`` -> ``--queries
    intersection``); the bare name of the argument an :class:`OptionError` is about becomes
    the flag too (other words are left alone: "queries" is also a noun).
    """
    text = str(exc)
    for arg, flag in flags.items():
        text = re.sub(rf"(?<![-\w.]){re.escape(arg)}='([^']*)'", rf"{flag} \1", text)
        text = re.sub(rf"(?<![-\w.]){re.escape(arg)}=([^\s,;)'\]]+)", rf"{flag} \1", text)
    arg = getattr(exc, "argument", None)
    if arg in flags:
        text = re.sub(rf"(?<![-\w.]){re.escape(arg)}\b(?!=)", flags[arg], text)
    return text


def renamed(new_value, old_value, new, old, default, where, unset=None):
    """``(value, name)`` of an option renamed from ``old`` to ``new`` (the package's one
    word, :doc:`/guide/vocabulary`): the old spelling still works for one release, with a
    DeprecationWarning naming the new word; both with different values is a TypeError.
    ``old_value`` ``unset`` (None unless None is a value of the option): the old spelling
    was not used."""
    if old_value is unset:
        return new_value, new
    warnings.warn(f"{where}({old}=...) is deprecated: use {new}= (the same option under its one "
                  f"name); {old} will be removed in the next release", DeprecationWarning, stacklevel=user_stacklevel())
    if new_value != default and new_value != old_value:
        raise TypeError(f"{where}() got {new}={new_value!r} and {old}={old_value!r}: give {new} only")
    return old_value, old


#: the default nan_handling of compare and rankereval.spark.compare in this release ('drop');
#: the next release makes it 'propagate', the Python API's one default (docs/guide/nan_policy.rst)
COMPARE_NAN_DEFAULT = "drop"


def compare_nan_handling(nan_handling):
    """``(nan_handling, default_used)`` of a comparison: None is the default of this release."""
    if nan_handling is None:
        return COMPARE_NAN_DEFAULT, True
    return nan_handling, False


def warn_compare_default(n_undefined, where):
    """The FutureWarning of a comparison that relied on the default ``nan_handling`` while
    some metric has undefined queries (``n_undefined``: metric name -> count)."""
    hit = {name: n for name, n in n_undefined.items() if n}
    if not hit:
        return
    listed = ", ".join(f"{name} ({n})" for name, n in hit.items())
    warnings.warn(f"{where}(): the default nan_handling will change from 'drop' to 'propagate' "
                  f"(the Python API's one default) in the next release; queries with an undefined "
                  f"score here: {listed}. Pass nan_handling='drop' to keep these results and silence "
                  "this warning, or nan_handling='propagate' for the coming default",
                  FutureWarning, stacklevel=user_stacklevel())


@dataclass(frozen=True)
class Options:
    """The averaging options of one call, checked and normalised (see :func:`options`)."""

    nan_handling: str = "propagate"
    conf_interval: bool = False
    n_resamples: int = 1000
    confidence: float = 0.95
    method: str = "percentile"
    resampling: str = "multinomial"
    random_state: object = None


def check_method(value, name="method"):
    return check_choice(value, CI_METHODS, name)


def check_resampling(value, name="resampling"):
    return check_choice(value, RESAMPLINGS, name)


def check_random_state(value, name="random_state"):
    """``value`` if ``numpy.random.default_rng`` accepts it (None, an int, a Generator...)."""
    if value is None or isinstance(value, np.random.Generator):
        return value
    rng(value, name)
    return value


def merged_options(where, *, nan_handling, conf_interval, n_resamples, n_bootstrap_samples, confidence,
                   random_state, resampling="poisson"):
    """``(Options, seed)`` of an entry point that adds up partial sums (Dask, Spark, the
    Accumulator): :func:`options` with ``merged=True`` after the ``n_bootstrap_samples``
    rename, and the key of the Poisson streams (0 without intervals), derived as
    :func:`rankereval.evaluate` derives it."""
    n_resamples, n_name = renamed(n_resamples, n_bootstrap_samples, "n_resamples", "n_bootstrap_samples",
                                  1000, where)
    opts = options(nan_handling=nan_handling, conf_interval=conf_interval, n_resamples=n_resamples,
                   confidence=confidence, resampling=resampling, random_state=random_state,
                   names={"n_resamples": n_name}, merged=True)
    return opts, (stream_key(random_seed(opts.random_state)) if opts.conf_interval else 0)


def options(*, nan_handling="propagate", conf_interval=False, n_resamples=1000, confidence=0.95,
            method="percentile", resampling="multinomial", random_state=None, names=None,
            merged=False):
    """Check the averaging options of one call once; an :class:`Options`.

    ``names``: {concept: the caller's argument name} for the messages (``Metric.mean`` calls
    ``n_resamples`` ``n_bootstrap_samples``). ``merged``: the entry point adds up partial sums
    (Dask, Spark, the Accumulator): its intervals are Poisson percentile intervals, the
    ones whose resamples merge, and other choices are refused with one message.
    """
    names = {**{k: k for k in ("nan_handling", "conf_interval", "n_resamples", "confidence",
                               "method", "resampling", "random_state")}, **(names or {})}
    out = Options(
        nan_handling=check_nan_handling(nan_handling, names["nan_handling"]),
        conf_interval=check_flag(conf_interval, names["conf_interval"]),
        n_resamples=check_n_resamples(n_resamples, names["n_resamples"]),
        confidence=check_confidence(confidence, names["confidence"]),
        method=check_method(method, names["method"]),
        resampling=check_resampling(resampling, names["resampling"]),
        random_state=check_random_state(random_state, names["random_state"]),
    )
    if merged and out.resampling != "poisson":
        raise OptionError(names["resampling"], f"{names['resampling']} must be 'poisson' here (the "
                          "bootstrap whose resamples merge across batches, partitions and processes), "
                          f"got {resampling!r}")
    if merged and out.method != "percentile":
        raise OptionError(names["method"], f"{names['method']}={out.method!r} needs every score in one "
                          "place (BCa's acceleration is not a mergeable sum); merged partial sums give "
                          "percentile intervals only: use method='percentile', or rankereval.evaluate "
                          "in memory")
    return out


# -- seeds ---------------------------------------------------------------------------------
#: OpenMP threads for the Poisson kernel over ``n`` queries (the sums do not depend on it)
poisson_threads = resample_threads


# -- NaN policy, mean, interval --------------------------------------------------------------
def apply_nan_policy(scores, nan_handling):
    """``(values, rows, n_undefined)``: 1-D ``scores`` after the policy, the row numbers kept
    (None: all; the Poisson bootstrap's keys) and the number of NaN scores.

    ``'propagate'`` keeps NaN (the mean is NaN; the caller warns), ``'drop'`` leaves NaN out,
    ``'zerofill'`` counts it as 0, ``'onefill'`` as 1 (:func:`fill_undefined`). Infinite
    values are values: never dropped nor filled.
    """
    nan = np.isnan(scores)
    n_undefined = int(np.count_nonzero(nan))
    if not n_undefined:
        return scores, None, 0
    if nan_handling == "drop":
        rows = np.flatnonzero(~nan)
        return scores[rows], rows, n_undefined
    if nan_handling in NAN_FILLS:
        return np.where(nan, NAN_FILLS[nan_handling], scores), None, n_undefined
    return scores, None, n_undefined


def fill_undefined(scores, nan_handling):
    """``scores`` (any shape) with NaN replaced by the value the policy counts an undefined
    score as: 0 for ``'zerofill'``, 1 for ``'onefill'``; unchanged for ``'drop'`` and
    ``'propagate'`` (which leave NaN to the caller). The one place that knows the fill values
    (``rankereval._utils._choices.NAN_FILLS``)."""
    if nan_handling not in NAN_FILLS:
        return scores
    return np.where(np.isnan(scores), NAN_FILLS[nan_handling], scores)


def floored_log(scores):
    """log(max(score, GEOMETRIC_FLOOR)), NaN kept."""
    with np.errstate(invalid="ignore"):
        return np.log(np.maximum(scores, GEOMETRIC_FLOOR)) if scores.size else scores


def from_log_mean(info, mean):
    """A mean as the registry entry says from the mean of the summed values: ``exp`` of it for
    a geometric mean (whose sums are of floored logs), else itself."""
    return exp_mean(mean) if info is not None and info.aggregate == "geometric" else mean


def exp_mean(mean):
    """``math.exp`` of a mean of logs (the same bits in every entry point; ``numpy.exp`` may
    differ in the last bit), ``inf`` where it overflows."""
    try:
        return math.exp(mean)
    except OverflowError:
        return math.inf


def aggregate(info, scores, weights=None):
    """The mean of ``scores`` as the metric's registry entry says (NaN for none, or for a NaN
    score): the arithmetic mean, the geometric mean of the scores floored at
    ``GEOMETRIC_FLOOR``, or the weighted mean ``sum(w * x) / sum(w)`` (``weights``: one per
    score, required then; :func:`ratio_mean`); the sums are exact, rounded once."""
    if is_weighted(info):
        return ratio_mean(scores, need_weights(info, weights, scores))
    if info is not None and info.aggregate == "geometric":
        return from_log_mean(info, exact_mean(floored_log(scores)))
    return exact_mean(scores)


def weighted_mean(scores, weights):
    """The weighted mean (``numpy.average``; NaN for no scores or a zero total weight): the
    scikit-learn-shaped functions' ``sample_weight``, weights the caller gives."""
    if scores.size == 0 or weights.sum() == 0:
        return float("nan")
    return float(np.average(scores, weights=weights))


def is_weighted(info):
    """Whether the registry entry ``info`` averages its scores weighted by each query's weight."""
    return info is not None and info.aggregate == "weighted"


def need_weights(info, weights, scores):
    """``weights`` as float64, one per score (a ValueError naming the metric without them)."""
    if weights is None:
        raise ValueError(f"{info.name} is a weighted mean over queries (sum(w * x) / sum(w)): "
                         "it needs the weight of each query, which this call does not have")
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != np.shape(scores):
        raise ValueError(f"{info.name}: {w.shape[0] if w.ndim else w} query weights for "
                         f"{np.shape(scores)[0]} scores")
    return w


def interval(scores, opts, rows=None, info=None, random_state=None, weights=None):
    """The bootstrap :class:`~rankereval.bootstrap.BootstrapResult` of the mean of ``scores``
    (after the NaN policy; a NaN score gives the undefined result). ``rows``: the Poisson
    bootstrap's key of each score (None: positions). A geometric mean (``info.aggregate``)
    resamples the logs and maps the result back with exp; a weighted one resamples the
    queries with their weights and takes the ratio of the resampled sums
    (:func:`~rankereval.stats._resampling.bootstrap_ratio`; ``weights``: one per score).
    ``random_state`` overrides ``opts.random_state`` (the seed a call shares between its
    metrics)."""
    if np.isnan(scores).any():  # 'propagate' with NaN scores
        return BootstrapResult.undefined(opts.n_resamples, opts.confidence, opts.method)
    random_state = opts.random_state if random_state is None else random_state
    keys = rows if opts.resampling == "poisson" else None
    if is_weighted(info):
        return bootstrap_ratio(scores, need_weights(info, weights, scores), n_resamples=opts.n_resamples,
                               confidence_level=opts.confidence, method=opts.method,
                               random_state=random_state, resampling=opts.resampling, keys=keys)
    geometric = info is not None and info.aggregate == "geometric"
    result = bootstrap_mean(floored_log(scores) if geometric else scores, n_resamples=opts.n_resamples,
                            confidence_level=opts.confidence, method=opts.method,
                            random_state=random_state, resampling=opts.resampling, keys=keys)
    return result._exp() if geometric else result


def geometric_columns(columns):
    """Which ``(name, metric)`` columns average geometrically (their registry entry's
    ``aggregate``), as a bool array for :func:`partials`."""
    return np.array([m.info.aggregate == "geometric" for _, m in columns], dtype=bool)


def weighted_columns(columns):
    """Which ``(name, metric)`` columns average with query weights (``aggregate='weighted'``)."""
    return np.array([is_weighted(m.info) for _, m in columns], dtype=bool)


# -- mergeable partial sums --------------------------------------------------------------------
def partials(scores, nan_handling, hashes=None, seed=0, n_resamples=0, n_threads=1, geometric=None,
             moments=False, weights=None):
    """What the means and Poisson intervals of a block of per-query scores need, as sums.

    ``geometric`` (a bool per column): those columns are summed as floored logarithms (after
    ``zerofill`` or ``onefill``), for a geometric mean. A dict of arrays, one entry per column, that
    :func:`merge_partials` adds up across blocks (queries split into disjoint blocks anywhere,
    in any order); :func:`summarise` turns the total into means and intervals. With
    ``hashes`` (query key hashes) it also holds the Poisson bootstrap's per-resample sums,
    shape ``(n_columns, n_resamples)``. ``moments``: also keep the values (in memory only:
    BCa's acceleration needs them, so such partials are not merged).

    ``weights`` (shape of ``scores``, or None): the weight of each query in each column, for
    the columns of weighted means (the other columns weigh 1, which changes no bit of their
    sums). Then ``sum`` holds ``sum(w * x)`` and ``wsum`` the exact ``sum(w)`` over the
    queries kept, and with ``hashes`` ``wsums`` the Poisson bootstrap's per-resample
    ``sum(p * w)`` beside ``sums`` (``sum(p * w * x)``): a resampled weighted mean is their
    ratio. Every partition carries both sums, so they merge like the others.
    """
    nan = np.isnan(scores)
    used = ~nan
    x = scores
    if nan_handling in NAN_FILLS:
        x = fill_undefined(scores, nan_handling)
        used = np.ones_like(nan)
    if geometric is not None and geometric.any():
        x = np.array(x, dtype=np.float64)
        x[:, geometric] = floored_log(x[:, geometric])
    values = x
    if weights is not None:
        w = np.where(used, weights, 0.0)
        x = weighted_terms(x, w)
    filled = np.where(used, x, 0.0)
    part = {
        "n": np.int64(scores.shape[0]),
        "n_undefined": nan.sum(axis=0),
        "n_used": (used.sum(axis=0) if nan_handling == "drop"
                   else np.full(scores.shape[1], scores.shape[0])),
        "sum": exact_column_sums(filled),
        "min": np.where(used, values, np.inf).min(axis=0, initial=np.inf),   # of the scores, not of w * x
        "max": np.where(used, values, -np.inf).max(axis=0, initial=-np.inf),
    }
    if weights is not None:
        part["wsum"] = exact_column_sums(w)
    if hashes is not None:
        if weights is not None:
            x = np.where(used, x, np.nan)  # unused queries take no part in the resamples
            part["wsums"] = poisson_exact(np.where(used, w, np.nan), hashes, seed, n_resamples, n_threads)[0]
        part["sums"], part["weights"] = poisson_exact(x, hashes, seed, n_resamples, n_threads)
    if moments:
        part["_values"] = (values, used, None if weights is None else w)
    return part


def merge_partials(a, b):
    """The partial sums of two disjoint blocks of queries together (exactly: the sums are
    :class:`rankereval.stats._exact.ExactSum`, so any grouping and order gives the same bits)."""
    out = {}
    for key in a:
        if key == "min":
            out[key] = np.minimum(a[key], b[key])
        elif key == "max":
            out[key] = np.maximum(a[key], b[key])
        else:
            out[key] = a[key] + b[key]
    return out


def summarise(part, columns, nan_handling, n_boot=None, conf=None, method="percentile"):
    """Means, Poisson intervals (when ``part`` has sums; else None), rankings used and
    undefined, and the notes about undefined means, from the total partial sums.
    ``method='bca'`` needs ``part`` from :func:`partials` with ``moments=True``."""
    import rankereval.stats._bootstrap as _bootstrap

    means, intervals, n_used, n_undefined, notes = {}, {}, {}, {}, []
    total = part["sum"].to_float()
    sums = part["sums"].to_float() if "sums" in part else None
    wtotal = part["wsum"].to_float() if "wsum" in part else None
    wsums = part["wsums"].to_float() if "wsums" in part else None
    for j, (col, m) in enumerate(columns):
        weighted = is_weighted(m.info)
        if weighted and wtotal is None:
            raise ValueError(f"metric {col!r} is a weighted mean over queries: its partial sums need "
                             "the sums of the query weights (partials(..., weights=...))")
        n_undefined[col] = int(part["n_undefined"][j])
        n_used[col] = int(part["n_used"][j])
        undefined = nan_handling == "propagate" and n_undefined[col] > 0
        if undefined:
            notes.append(m._undefined_message(n_undefined[col], int(part["n"]), label=col))
        elif nan_handling == "drop" and n_undefined[col] and n_undefined[col] == int(part["n"]):
            notes.append(m._all_undefined_message(n_undefined[col], label=col))
        den = float(wtotal[j]) if weighted else n_used[col]
        mean = float("nan") if undefined or not n_used[col] or not den else float(total[j]) / den
        geometric = m.info.aggregate == "geometric"  # the sums are of floored logs (partials)
        means[col] = from_log_mean(m.info, mean)
        if "sums" in part:
            if math.isnan(mean):
                res = BootstrapResult.undefined(n_boot, conf, method)
            else:
                moments = None
                constant = part["min"][j] == part["max"][j]
                if method == "bca" and not constant:
                    x, used, w = part["_values"]
                    v = np.ascontiguousarray(x[used[:, j], j])
                    check_bca_finite(v)
                    if weighted:  # the linearised values of the ratio (their mean is 0)
                        moments = _bootstrap.centred_moments(
                            ratio_influence(v, w[used[:, j], j], mean), 0.0) + (v.shape[0],)
                    else:
                        moments = _bootstrap.centred_moments(v, mean) + (v.shape[0],)
                res = poisson_result(sums[j], wsums[j] if weighted else part["weights"][j], mean, constant,
                                     n_boot, conf, method, moments)
                if geometric:
                    res = res._exp()
            intervals[col] = res.confidence_interval
    return means, (intervals if "sums" in part else None), n_used, n_undefined, notes

