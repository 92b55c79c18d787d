"""The argument checks of :func:`rankereval.compare` (and of the block-wise callers: Spark).

Each option is checked once, with a message naming the argument; the values on offer are
``rankereval._utils._choices``'.
"""
from numbers import Real

import numpy as np

from rankereval._utils._choices import ALTERNATIVES, CORRECTIONS, QUERIES


_CORRECTION_ALIASES = {"fdr_bh": "bh", "benjamini-hochberg": "bh"}


def _choice(value, options, name, aliases=None):
    """``value`` (or what its alias stands for) if it is one of ``options``; else ValueError."""
    from rankereval._validation import check_choice

    if isinstance(value, str):
        value = (aliases or {}).get(value, value)
    return check_choice(value, options, name)


def _check_alpha(alpha):
    if (isinstance(alpha, (bool, np.bool_)) or not isinstance(alpha, (Real, np.floating))
            or not 0.0 < float(alpha) < 1.0):
        raise ValueError(f"alpha must be a number strictly between 0 and 1, got {alpha!r}")
    return float(alpha)


def _check_resamples(n_resamples):
    """As every bootstrap's (rankereval.stats._engine): an integer > 1 (one resample gives p = 0.5)."""
    from rankereval._validation import check_n_resamples

    return check_n_resamples(n_resamples)


def _threads(work):
    """OpenMP threads for a kernel over ``work`` elements: the package's one policy."""
    from rankereval._threads import effective_n_threads

    return effective_n_threads(work)


def _check_arguments(runs, baseline, test, tests, correction, alternative, nan_handling, queries,
                     alpha, n_resamples):
    """The checked options of :func:`compare` (``tests``: the tests on offer) and the run names."""
    from rankereval._validation import check_nan_handling

    test = _choice(test, tests, "test")
    correction = _choice(correction, CORRECTIONS, "correction", _CORRECTION_ALIASES)
    alternative = _choice(alternative, ALTERNATIVES, "alternative")
    nan_handling = check_nan_handling(nan_handling)
    queries = _choice(queries, QUERIES, "queries")
    alpha = _check_alpha(alpha)
    n_resamples = _check_resamples(n_resamples)
    if not isinstance(runs, dict):
        raise TypeError(f"runs must be a dict {{name: run}}, got {type(runs).__name__}")
    if len(runs) < 2:
        raise ValueError(f"runs must hold at least two runs to compare, got {len(runs)}")
    run_names = [str(k) for k in runs]
    if len(set(run_names)) != len(run_names):
        raise ValueError(f"run names must be distinct, got {run_names}")
    if baseline is not None and str(baseline) not in run_names:
        raise ValueError(f"baseline must be one of the run names {run_names}, got {baseline!r}")
    return test, correction, alternative, nan_handling, queries, alpha, n_resamples, run_names
