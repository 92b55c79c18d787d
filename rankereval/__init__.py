"""rankereval: fast, exact ranking metrics for information retrieval and recommendation.

>>> from rankereval import BinaryLabels, Rankings, NDCG
>>> y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
>>> y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
>>> NDCG(3).score(y_true, y_pred)
array([0.        , 0.76536064])
"""
# The public names are imported on first use (SPEC 1, PEP 562 module ``__getattr__``), so that
# ``import rankereval`` and the command line's ``--help`` do not pay for NumPy and the compiled
# kernels. ``_LAZY`` says where each name lives (the metrics: ``_METRICS``) and ``__all__`` is
# its keys; the ``TYPE_CHECKING`` block below repeats the imports literally, for type checkers
# and IDEs (tests/test_lazy_import.py checks that the two agree, tests/test_registry.py that
# ``_METRICS`` holds every registered metric). A
# block here rather than an ``__init__.pyi`` stub: a stub hides the whole module from type
# checkers, so it would repeat ``__version__``, ``__all__`` and the rest, and must be shipped.
from importlib import import_module as _import_module
from importlib.machinery import PathFinder as _PathFinder
import os as _os

from rankereval._version import __version__

# one compiled module proves a build: _utils/_runtime, looked up without importing its package
if _PathFinder.find_spec("_runtime", [_os.path.join(__path__[0], "_utils")]) is None:  # pragma: no cover
    raise ImportError(
        "rankereval's compiled extensions could not be imported. If you are running from a "
        "source checkout, install it (`pip install .`) and run from another directory, or "
        "build in place (`python setup.py build_ext --inplace`).")

_METRICS = (
    "AP", "DCG", "F1", "NDCG", "AveragePopularity", "CatalogCoverage", "DistributionalCoverage", "GiniIndex",
    "IntraListDiversity", "Novelty", "SystemMetric", "TailShare", "long_tail_items", "popularity_from",
    "FirstRelevantRank", "HitRate", "MeanRanks", "Metric", "Precision", "Recall", "ReciprocalRank", "Success",
    "RPrecision", "NumRelevant", "NumRetrieved", "NumRelevantRetrieved", "InterpolatedPrecision", "GMAP", "Bpref",
    "Judged", "RBP", "ERR",
    # trec_eval 10.0's other measures (rankereval.metrics._profile)
    "GMBpref", "InfAP", "RPrecisionMultiple", "Utility", "ElevenPointAP", "BinG", "NormalizedGain", "NDCGRel",
    "RNDCG", "RelativePrecision", "SetP", "SetRelativeP", "SetR", "SetAP", "SetF", "NumNonRelevantJudgedRetrieved",
    "Unjudged", "ScaledRBP", "ScaledRBPResidual", "FallOut", "AUROC",
    # the intent-aware diversity measures (rankereval.metrics._diversity)
    "ERRIA", "NERRIA", "AlphaDCG", "AlphaNDCG", "NRBP", "NNRBP", "APIA", "PrecisionIA", "SubtopicRecall",
    "NumQueries",
    # the C/W/L family (rankereval.metrics._cwl)
    "SDCG", "INST", "INSQ", "BPM", "NERR8", "NERR9", "NERR10", "NERR11", "Compat",
    # scikit-learn's label ranking measures (rankereval.metrics._rank)
    "CoverageError", "LabelRankingLoss",
    # Microsoft Recommenders' serendipity and its similarities (rankereval.metrics._serendipity)
    "Serendipity", "cooccurrence_similarity", "feature_similarity",
    # RecBole's grouped AUC, a weighted mean of AUROC (rankereval.metrics._profile)
    "GAUC")
#: {public name: module that defines it}
_LAZY = {
    **dict.fromkeys(("BinaryLabels", "InvalidValuesWarning", "NumericLabels", "Rankings", "IntentLabels"),
                    "rankereval.data"),
    "UndefinedMetricWarning": "rankereval.exceptions",
    "Evaluation": "rankereval.evaluation._evaluate",
    "evaluate": "rankereval.evaluation._evaluate",
    "Accumulator": "rankereval.evaluation._accumulator",
    **dict.fromkeys(_METRICS, "rankereval.metrics"),
    **dict.fromkeys(("dcg_score", "map_score", "mrr_score", "ndcg_score", "precision_at_k", "recall_at_k"),
                    "rankereval.metrics._functional"),
    "Comparison": "rankereval.stats._comparison",
    "compare": "rankereval.stats._compare_runs",
}
#: public subpackages and modules that ``import rankereval`` made attributes before the imports were lazy
_SUBMODULES = ("data", "exceptions", "metrics")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES))


TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy and pyright know the idiom)
if TYPE_CHECKING:  # what a type checker or IDE sees: the same names, imported eagerly
    from rankereval import data, exceptions, metrics  # noqa: F401
    from rankereval.evaluation._accumulator import Accumulator
    from rankereval.evaluation._evaluate import Evaluation, evaluate
    from rankereval.metrics._functional import dcg_score, map_score, mrr_score, ndcg_score, precision_at_k, recall_at_k
    from rankereval.stats._comparison import Comparison
    from rankereval.stats._compare_runs import compare
    from rankereval.data import BinaryLabels, InvalidValuesWarning, NumericLabels, Rankings
    from rankereval.exceptions import UndefinedMetricWarning
    from rankereval.metrics import (
        AP, DCG, ERR, F1, GMAP, NDCG, RBP, AveragePopularity, Bpref, CatalogCoverage, DistributionalCoverage,
        FirstRelevantRank, GiniIndex, HitRate, InterpolatedPrecision, IntraListDiversity, Judged, MeanRanks, Metric,
        Novelty, NumRelevant, NumRelevantRetrieved, NumRetrieved, Precision, Recall, ReciprocalRank, RPrecision,
        Success, SystemMetric, TailShare, long_tail_items, popularity_from)
    from rankereval.metrics import (
        RNDCG, BinG, ElevenPointAP, GMBpref, InfAP, NDCGRel, NormalizedGain, NumNonRelevantJudgedRetrieved,
        RelativePrecision, RPrecisionMultiple, ScaledRBP, ScaledRBPResidual, SetAP, SetF, SetP, SetR, SetRelativeP,
        Unjudged, Utility)
    from rankereval.metrics import AUROC, FallOut
    from rankereval.metrics import GAUC
    from rankereval.data import IntentLabels
    from rankereval.metrics import (
        APIA, ERRIA, NERRIA, NNRBP, NRBP, AlphaDCG, AlphaNDCG, PrecisionIA, SubtopicRecall)
    from rankereval.metrics import NumQueries
    from rankereval.metrics import BPM, INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, Compat
    from rankereval.metrics import CoverageError, LabelRankingLoss
    from rankereval.metrics import Serendipity, cooccurrence_similarity, feature_similarity
else:  # hidden from type checkers, which would accept any attribute of a module with __getattr__
    def __getattr__(name):
        if name in _LAZY:
            value = getattr(_import_module(_LAZY[name]), name)
        elif name in _SUBMODULES:
            value = _import_module(f"{__name__}.{name}")
        else:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        globals()[name] = value  # found once, then an ordinary attribute
        return value
del TYPE_CHECKING

#: every public name: the lazy table's, in its order (the metrics: ``_METRICS``)
__all__ = [*_LAZY, "__version__"]


def _moved_compare_module():
    """``rankereval.compare`` as a module, as before issue 43's layout (``from
    rankereval.compare import Comparison``), for one release: each name is
    :mod:`rankereval.stats`'s, with a DeprecationWarning. It is put in ``sys.modules`` only,
    never as an attribute, so ``rankereval.compare`` stays the function."""
    import sys
    import types

    class _Moved(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            import warnings

            warnings.warn(f"rankereval.compare.{name} is rankereval.stats.{name} (the module "
                          "rankereval.compare, which the function rankereval.compare shadowed, is gone); "
                          "import it from rankereval.stats: rankereval.compare will be removed in the next release",
                          DeprecationWarning, stacklevel=2)
            return getattr(_import_module(f"{__name__}.stats"), name)

    sys.modules.setdefault(f"{__name__}.compare", _Moved(f"{__name__}.compare", _moved_compare_module.__doc__))


_moved_compare_module()
