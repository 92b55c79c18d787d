"""Every registered metric in every combination of its options: the set the engines'
equality tests (Dask, Spark) run over, so that a new metric or option is covered by both."""
from rankereval.metrics._base import _registered


def all_metrics(cutoffs=(1, 3, 10), partitioned=False):
    """{name: metric} of every registered metric with every combination of its options
    (cutoffs as given). ``partitioned``: leave out the metrics that read the size of the
    catalogue (the kernel trait CATALOGUE: CoverageError, LabelRankingLoss), which the
    partitions of Dask and Spark, numbering their items apart, do not share."""
    import rankereval._metric_ids as ids

    catalogue = ids.ids_with("catalogue")
    out = {}
    for cls in _registered():
        if partitioned and ids.METRIC_IDS.get(cls.info.kernel) in catalogue:
            continue
        for params in cls._param_space(cutoffs=cutoffs):
            m = cls(**params)
            out[m.name] = m
    return out
