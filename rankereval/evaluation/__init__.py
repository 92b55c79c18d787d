"""The evaluation layer: many metrics over the same rankings at once.

``_evaluate`` (:func:`rankereval.evaluate` and :class:`rankereval.Evaluation`),
``_accumulator`` (:class:`rankereval.Accumulator`, the same over batches) and ``_columns``
(the metric columns of a call and their per-query scores, shared with
:func:`rankereval.compare`, :mod:`rankereval.dask` and :mod:`rankereval.spark`). The public
names are the package's (``from rankereval import evaluate``); they pickle under
``rankereval``.
"""
from rankereval.evaluation._accumulator import Accumulator
from rankereval.evaluation._evaluate import Evaluation, evaluate

__all__ = ["evaluate", "Evaluation", "Accumulator"]
