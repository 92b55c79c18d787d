r"""Ranking metrics: per-ranking scores and means with bootstrap confidence intervals.

All metrics allow you to get both individual scores as well as mean scores:
:meth:`Metric.score` gives one value per ranking, :meth:`Metric.mean` the mean over all
rankings after handling NaN values.

>>> from rankereval import BinaryLabels, Rankings, ReciprocalRank
>>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
>>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
>>> metric = ReciprocalRank(3)
>>> metric.score(y_true, y_pred)
array([0., 1.])
>>> metric.mean(y_true, y_pred)
0.5

rankereval returns NaN in ill-specified cases (for instance a label row without any
relevant item). If you observe a NaN value, check the edge cases of the metric, then either
remove those rankings or handle them with the ``nan_handling`` option of :meth:`Metric.mean`.

Every metric has a short :attr:`~Metric.name`, and :func:`from_name` builds a metric from
one (the grammar the command line and :func:`rankereval.evaluate` use):

>>> from rankereval.metrics import from_name
>>> from_name("mrr@10") == ReciprocalRank(10)
True

The package is organised by family, as :mod:`sklearn.metrics` is: ``_base`` (the
:class:`Metric` class, the registry, mean and bootstrap), ``_binary`` (set-based metrics of
the top k), ``_rank`` (where the relevant items are), ``_graded`` (DCG, NDCG, RBP, ERR),
``_trec`` (trec_eval's other measures: R-precision, the counts, interpolated precision,
GMAP, bpref, Judged), ``_diversity`` (the intent-aware measures of ndeval, which read
:class:`~rankereval.IntentLabels`), ``_beyond`` (novelty, popularity, long tail and diversity of each
ranking, which read rankings only), ``_system`` (system-level metrics: one value for all
rankings) and ``_names`` (the name grammar). Every public name is importable from here.
"""
from rankereval.metrics._base import Metric, MetricInfo, RealParam, _registered, _restore_metric  # noqa: F401
# the import order is the registry's order (listings, docs)
from rankereval.metrics._binary import AP, F1, HitRate, Precision, Recall, Success  # isort: skip
from rankereval.metrics._rank import FirstRelevantRank, MeanRanks, ReciprocalRank  # isort: skip
from rankereval.metrics._graded import DCG, NDCG  # isort: skip
from rankereval.metrics._trec import (  # isort: skip
    GMAP, Bpref, InterpolatedPrecision, Judged, NumRelevant, NumRelevantRetrieved, NumRetrieved, RPrecision)
from rankereval.metrics._graded import ERR, RBP  # isort: skip
from rankereval.metrics._trec import GMBpref  # isort: skip
from rankereval.metrics._profile import (  # isort: skip
    RNDCG, BinG, ElevenPointAP, InfAP, NDCGRel, NormalizedGain, NumNonRelevantJudgedRetrieved, RelativePrecision,
    RPrecisionMultiple, ScaledRBP, ScaledRBPResidual, SetAP, SetF, SetP, SetR, SetRelativeP, Unjudged, Utility)
from rankereval.metrics._profile import AUROC, FallOut  # isort: skip
from rankereval.metrics._profile import GAUC  # isort: skip
from rankereval.metrics._diversity import (  # isort: skip
    APIA, ERRIA, NERRIA, NNRBP, NRBP, AlphaDCG, AlphaNDCG, PrecisionIA, SubtopicRecall)
from rankereval.metrics._profile import NumQueries  # isort: skip
from rankereval.metrics._cwl import BPM, INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, Compat  # isort: skip
from rankereval.metrics._rank import CoverageError, LabelRankingLoss  # isort: skip
from rankereval.metrics._beyond import (AveragePopularity, IntraListDiversity, Novelty,  # isort: skip
                                        TailShare, long_tail_items, popularity_from)
from rankereval.metrics._system import (CatalogCoverage, DistributionalCoverage, GiniIndex,  # isort: skip
                                        SystemMetric)
from rankereval.metrics._serendipity import (Serendipity, cooccurrence_similarity,  # isort: skip
                                             feature_similarity)
from rankereval.metrics._adjusted import Adjusted  # isort: skip
from rankereval.metrics._names import from_name, metric_names  # isort: skip

#: the public names: the base classes, every registered metric (the registry, in its order:
#: the order of the imports above) and the helpers
__all__ = ["Metric", "MetricInfo", *(cls.__name__ for cls in _registered(everything=True)),
           "SystemMetric", "popularity_from", "long_tail_items", "Adjusted", "from_name", "metric_names",
           "cooccurrence_similarity", "feature_similarity"]

# Public classes are documented, pickled and shown under this module, not the private
# module that defines them (pickles written by 0.3.0 named rankereval.metrics.<Class>).
for _obj in (Metric, MetricInfo, RealParam, Adjusted, from_name, metric_names, _restore_metric, SystemMetric, popularity_from,
             long_tail_items, cooccurrence_similarity, feature_similarity, *_registered(everything=True)):
    _obj.__module__ = __name__
del _obj
