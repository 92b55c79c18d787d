"""rankereval: fast, exact ranking metrics for information retrieval and recommendation.

>>> from rankereval import BinaryLabels, Rankings, NDCG
>>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
>>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
>>> NDCG(3).score(y_true, y_pred)
array([0.        , 0.76536064])
"""
try:
    from rankereval import _convert, _kernels  # noqa: F401  (compiled extensions)
except ImportError as exc:  # pragma: no cover - depends on how the package was obtained
    raise ImportError(
        "rankereval's compiled extensions could not be imported. If you are running from a "
        "source checkout, install it (`pip install .`) and run from another directory, or "
        "build in place (`python setup.py build_ext --inplace`)."
    ) from exc

from rankereval.data import BinaryLabels, InvalidValuesWarning, NumericLabels, Rankings
from rankereval.exceptions import UndefinedMetricWarning
from rankereval._evaluation import Evaluation, evaluate  # noqa: E402  (after the metrics it uses)
from rankereval._accumulator import Accumulator  # noqa: E402
from rankereval.metrics import (
    AP,
    DCG,
    F1,
    NDCG,
    AveragePopularity,
    CatalogCoverage,
    DistributionalCoverage,
    GiniIndex,
    IntraListDiversity,
    Novelty,
    SystemMetric,
    TailShare,
    long_tail_items,
    popularity_from,
    FirstRelevantRank,
    HitRate,
    MeanRanks,
    Metric,
    Precision,
    Recall,
    ReciprocalRank,
    Success,
    RPrecision,
    NumRelevant,
    NumRetrieved,
    NumRelevantRetrieved,
    InterpolatedPrecision,
    GMAP,
    Bpref,
    Judged,
    RBP,
    ERR,
)

from rankereval._version import __version__
from rankereval._functional import (  # noqa: E402  (scikit-learn-shaped functions)
    dcg_score, map_score, mrr_score, ndcg_score, precision_at_k, recall_at_k)
# the function shadows the module as an attribute of the package (as with evaluate);
# `import rankereval.compare` and `from rankereval.compare import ...` still reach the module
from rankereval.compare import Comparison, compare  # noqa: E402

for _obj in (evaluate, Evaluation, Accumulator, UndefinedMetricWarning, Comparison, dcg_score, map_score, mrr_score,
             ndcg_score, precision_at_k, recall_at_k):
    _obj.__module__ = __name__  # documented and pickled under the public name
del _obj

__all__ = [
    "BinaryLabels",
    "NumericLabels",
    "Rankings",
    "InvalidValuesWarning",
    "UndefinedMetricWarning",
    "evaluate",
    "Evaluation",
    "Accumulator",
    "compare",
    "Comparison",
    "Metric",
    "Precision",
    "Recall",
    "F1",
    "HitRate",
    "ReciprocalRank",
    "AP",
    "Success",
    "MeanRanks",
    "FirstRelevantRank",
    "DCG",
    "NDCG",
    "RPrecision",
    "NumRelevant",
    "NumRetrieved",
    "NumRelevantRetrieved",
    "InterpolatedPrecision",
    "GMAP",
    "Bpref",
    "Judged",
    "RBP",
    "ERR",
    "Novelty",
    "AveragePopularity",
    "TailShare",
    "IntraListDiversity",
    "SystemMetric",
    "CatalogCoverage",
    "DistributionalCoverage",
    "GiniIndex",
    "popularity_from",
    "long_tail_items",
    "ndcg_score",
    "dcg_score",
    "map_score",
    "precision_at_k",
    "recall_at_k",
    "mrr_score",
    "__version__",
]
