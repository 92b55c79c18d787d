"""Evaluate on Apache Spark: the same kernels per partition, partial sums merged on the driver.

Needs the ``spark`` extra (``pip install 'rankereval[spark]'``: ``pyspark``); nothing of
Spark is imported by ``import rankereval``. The executors need rankereval installed.

The rows of the labels and of the run are partitioned by query (one shuffle); on each
partition a Spark task (``mapInArrow``: Arrow batches, no per-query Python call) runs the
in-memory reader, the fused metric kernel and the Poisson bootstrap kernel, and returns the
partition's *partial sums* (the layer :mod:`rankereval.dask` merges too). Only those reach
the driver. See :doc:`/guide/cluster`.
"""
from rankereval.spark._core import SparkInputError, compare, evaluate

__all__ = ["evaluate", "compare", "SparkInputError"]

for _obj in (evaluate, compare, SparkInputError):
    _obj.__module__ = __name__
del _obj
