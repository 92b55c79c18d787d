"""Bootstrap confidence intervals for the mean of per-ranking scores.

The engine is in :mod:`rankereval.stats` (``stats/_resampling.py`` and its kernel
``stats/_bootstrap.pyx``); this module is its documented import path, under which
:class:`BootstrapResult` pickles.

>>> import numpy as np
>>> from rankereval.bootstrap import bootstrap_mean
>>> res = bootstrap_mean(np.array([0.2, 0.4, 0.9, 0.5]), n_resamples=200, random_state=0)
>>> round(res.mean, 3)
0.5
"""
from rankereval.stats._resampling import BootstrapResult, bootstrap_mean, query_key_hashes

__all__ = ["BootstrapResult", "bootstrap_mean", "query_key_hashes"]
