"""Every registered metric in every combination of its options: the set the engines'
equality tests (Dask, Spark) run over, so that a new metric or option is covered by both."""
from rankereval.metrics._base import _registered


def all_metrics(cutoffs=(1, 3, 10)):
    """{name: metric} of every registered metric with every combination of its options
    (cutoffs as given)."""
    out = {}
    for cls in _registered():
        for params in cls._param_space(cutoffs=cutoffs):
            m = cls(**params)
            out[m.name] = m
    return out
