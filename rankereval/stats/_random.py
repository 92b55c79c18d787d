"""The one seed derivation of the package (shared internals).

``random_state`` (None, an int or a ``numpy.random.Generator``) becomes a Generator by
:func:`rng` (never the global NumPy random state); a call whose metrics share their
resamples draws one int seed from it (:func:`random_seed`); every keyed random stream of a
bootstrap (Poisson weights, resample streams, sign flips) is keyed by one 64-bit integer
(:func:`stream_key`). :func:`rankereval.evaluate`, ``Metric.mean``, the Accumulator,
:func:`rankereval.compare`, :mod:`rankereval.dask` and :mod:`rankereval.spark` derive their
seeds here, so an int ``random_state`` gives the same streams through every entry point.
"""
from numbers import Integral

import numpy as np

from rankereval._validation import OptionError

__all__ = ["rng", "random_seed", "stream_key"]


def rng(random_state, name="random_state"):
    """``numpy.random.Generator`` from None, an int seed or a Generator (never the global RNG)."""
    if isinstance(random_state, (bool, np.bool_)):
        raise OptionError(name, f"{name} must be None, an int or a numpy.random.Generator, "
                                f"got {random_state!r}")
    try:
        return np.random.default_rng(random_state)
    except (TypeError, ValueError) as exc:
        raise OptionError(name, f"{name} must be None, an int or a numpy.random.Generator, "
                                f"got {random_state!r}") from exc


def random_seed(random_state):
    """The one int seed of a call's bootstraps, shared by all its metrics: an int as given,
    else drawn from ``random_state`` (None: fresh entropy; a Generator: it advances)."""
    if isinstance(random_state, (Integral, np.integer)) and not isinstance(random_state, (bool, np.bool_)):
        return int(random_state)
    return int(rng(random_state).integers(0, 2**63 - 1))


def stream_key(random_state):
    """The one 64-bit key of every random stream of a bootstrap, from ``random_state``."""
    return int(rng(random_state).integers(0, 2 ** 64, dtype=np.uint64))
