"""Several runs per system (seeds, folds) in :func:`rankereval.compare`.

``compare(y_true, {"A": [run_seed1, run_seed2], "B": [...]}, ...)`` treats the runs of a
system as repeated measurements of it: every run is scored on its own, the paired tests see
each system's per-query mean over its runs, and :meth:`Comparison.leaderboard` resamples the
runs of each system as well as the queries (and shows the spread of the per-run means).
"""
import numpy as np


def _is_run(x):
    """A run as compare takes it: Rankings, TrecData, or a run file path."""
    import os

    from rankereval.data import Rankings

    if isinstance(x, (Rankings, str, bytes, os.PathLike)):
        return True
    from rankereval.io import TrecData

    return isinstance(x, TrecData)


def _several(value):
    """Whether ``value`` is several runs of one system: a list or tuple of runs (a list of
    ranked ids is not: it stays one value, which compare refuses with its usual message)."""
    return (isinstance(value, (list, tuple)) and
            (len(value) == 0 or any(_is_run(v) for v in value)))


def expand(runs):
    """``(flat runs, groups)``: one entry per run (``name[i]`` for the i-th run of a system
    given as a list or tuple of runs) and, per system, the positions of its runs in the flat
    dict; groups is None when every system has one run (the one-run path, unchanged)."""
    if not isinstance(runs, dict) or not any(_several(v) for v in runs.values()):
        return runs, None
    flat, groups = {}, []
    for name, value in runs.items():
        several = _several(value)
        members = list(value) if several else [value]
        if not members:
            raise ValueError(f"runs[{name!r}] is an empty list: give at least one run per system")
        cols = []
        for i, run in enumerate(members):
            key = f"{name}[{i}]" if several else str(name)
            if key in flat:
                raise ValueError(f"runs: the run names {key!r} of two systems collide; rename a system")
            cols.append(len(flat))
            flat[key] = run
        groups.append(tuple(cols))
    return flat, tuple(groups)


def mean_over_runs(scores, groups):
    """(n, M, S) per-run scores -> (n, M, R) per-system means over their runs.

    The mean is the first run plus the mean deviation of the runs from it, so identical runs
    give exactly the one-run scores; a NaN in any run makes the system's query NaN."""
    out = np.empty(scores.shape[:2] + (len(groups),))
    for r, cols in enumerate(groups):
        block = scores[:, :, list(cols)]
        first = block[:, :, :1]
        out[:, :, r] = first[:, :, 0] + (block - first).mean(axis=2)
    return out
