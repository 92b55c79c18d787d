"""Evaluate on a Dask cluster: the same kernels per partition, partial sums merged in a tree.

Needs the ``dask`` extra (``pip install 'rankereval[dask]'``: ``dask[array,dataframe]`` and
``distributed``). Nothing of Dask is imported by ``import rankereval``.

Every partition holds whole queries. On each partition the in-memory code runs on NumPy
blocks (the reader :func:`rankereval.io.from_dataframes`, the fused metric kernel, the
Poisson bootstrap kernel) and returns *partial sums*: per metric the number of rankings, the
sum of scores, the number of undefined scores, and per resample ``sum(w * score)`` and
``sum(w)``. Partial sums of disjoint sets of queries add up, so they are merged in a tree
and only the total reaches the client, which turns it into an
:class:`~rankereval.Evaluation`. See :doc:`/guide/cluster`.
"""
from rankereval.dask._core import (
    DaskEvaluation, PartitionedData, evaluate, from_arrays, from_dataframes, read_parquet,
    repartition_by_query)

__all__ = ["evaluate", "DaskEvaluation", "PartitionedData", "from_dataframes", "from_arrays",
           "read_parquet", "repartition_by_query"]

for _obj in (evaluate, DaskEvaluation, PartitionedData, from_dataframes, from_arrays, read_parquet,
             repartition_by_query):
    _obj.__module__ = __name__
del _obj
