"""trec_eval's measure names: the one place they live.

trec_eval (10.0) names a measure ``base`` or ``base_param`` (``map``, ``P_10``,
``iprec_at_recall_0.10``) and takes parameters as ``base.p1,p2,...`` (``-m P.5,10,20``).
This table maps each name onto a :class:`~rankereval.Metric` whose per-query value is
trec_eval's, and says for each measure of trec_eval's ``official`` and ``all_trec`` sets that
rankereval does not compute why not. The package's own grammar
(:func:`~rankereval.metrics.from_name`) keeps its own definitions; :func:`name_differences`
spells out where one of its names means something else in trec_eval or in the libraries
that copied trec_eval's names (ranx, ir_measures).

Two conventions of trec_eval live outside the metrics and are the command line's job:

* a query whose judgements hold no relevant document scores 0 in trec_eval and counts in
  its mean (rankereval's metrics are NaN there; ``nan_handling="zerofill"`` is the same);
* trec_eval's summary line (``all``) is the mean over queries, except for the counts
  (``num_ret``, ``num_rel``, ``num_rel_ret``: the sum, :attr:`TrecMeasure.aggregate`) and
  ``gm_map`` (:class:`~rankereval.GMAP`, whose mean is geometric).

Examples
--------
>>> from rankereval.metrics._trec_names import trec_measures
>>> [(m.column, m.metric) for m in trec_measures("P.5,10")]
[('P_5', Precision(k=5, truncated=False)), ('P_10', Precision(k=10, truncated=False))]
>>> trec_measures("ndcg_cut_10")[0].metric
NDCG(k=10, relevance_scaling='identity', log_base='e')
"""
import math
from dataclasses import dataclass

import numpy as np

from rankereval.metrics._binary import AP, HitRate, Precision, Recall, Success
from rankereval.metrics._graded import DCG, NDCG, RBP
from rankereval.metrics._rank import ReciprocalRank
from rankereval.metrics._profile import (
    RNDCG, BinG, ElevenPointAP, InfAP, NDCGRel, NormalizedGain, NumNonRelevantJudgedRetrieved, RelativePrecision,
    RPrecisionMultiple, ScaledRBP, ScaledRBPResidual, SetAP, SetF, SetP, SetR, SetRelativeP, Unjudged, Utility)
from rankereval.metrics._trec import (
    GMAP, Bpref, GMBpref, InterpolatedPrecision, NumRelevant, NumRelevantRetrieved, NumRetrieved, RPrecision)

#: trec_eval's default cutoffs of P, recall, ndcg_cut, map_cut, relative_P, Rprec_mult...
_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _mean(values):
    return float(np.mean(values)) if len(values) else math.nan


def _sum(values):
    return float(np.sum(values))


@dataclass(frozen=True)
class _Entry:
    """One trec_eval measure family: how its parameters read, its metric, its summary."""

    base: str
    param: str  # "none", "cutoff" (integers) or "level" (numbers in [0, 1])
    defaults: tuple = ()
    build: object = None  # param -> Metric (or () -> Metric); None: unsupported
    aggregate: object = _mean
    integer: bool = False  # printed as an integer by trec_eval
    unsupported: str = ""  # why rankereval does not compute it (when ``build`` is None)
    per_query: bool = True  # trec_eval prints a value per query (gm_map: the summary only)
    special: str = ""  # a line that is not a measure: the command line writes it (see TrecMeasure)

    def column(self, value):
        if self.param == "none":
            return self.base
        if self.param == "level":
            return f"{self.base}_{value:.2f}"
        return f"{self.base}_{value}"


_PREFS = ("a preference measure: it reads trec_eval's preference judgements (qrels_prefs format, "
          "pairs of documents), which rankereval's readers do not")
_JG = ("a judgement-group measure: it reads trec_eval's qrels_jg format (several judges' groups per "
       "query), which rankereval's readers do not")

_ENTRIES = [
    # not measures: the command line prints them as trec_eval does (TrecMeasure.special)
    _Entry("runid", "none", special="runid", per_query=False),
    _Entry("num_q", "none", special="num_q", per_query=False, integer=True),
    _Entry("num_ret", "none", build=lambda: NumRetrieved(), aggregate=_sum, integer=True),
    _Entry("num_rel", "none", build=lambda: NumRelevant(), aggregate=_sum, integer=True),
    _Entry("num_rel_ret", "none", build=lambda: NumRelevantRetrieved(), aggregate=_sum, integer=True),
    _Entry("map", "none", build=lambda: AP()),
    # the geometric mean of the per-query AP (floored at MIN_GEO_MEAN), a summary only
    # AP per query, averaged geometrically (GMAP's registry entry: its mean is geometric)
    _Entry("gm_map", "none", build=lambda: GMAP(), per_query=False),
    _Entry("Rprec", "none", build=lambda: RPrecision()),
    # needs the judged non-relevant documents: the readers keep every judged document
    _Entry("bpref", "none", build=lambda: Bpref()),
    _Entry("recip_rank", "none", build=lambda: ReciprocalRank()),
    _Entry("iprec_at_recall", "level", _RECALL_LEVELS, build=lambda x: InterpolatedPrecision(x)),
    _Entry("P", "cutoff", _CUTOFFS, build=lambda k: Precision(k)),
    _Entry("relstring", "cutoff", (10,), special="relstring"),
    _Entry("recall", "cutoff", _CUTOFFS, build=lambda k: Recall(k)),
    # pooled but unjudged documents (negative grades) are told from those outside the pool
    _Entry("infAP", "none", build=lambda: InfAP()),
    _Entry("gm_bpref", "none", build=lambda: GMBpref(), per_query=False),
    _Entry("Rprec_mult", "level", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
           build=lambda x: RPrecisionMultiple(x)),
    _Entry("utility", "none", build=lambda: Utility()),
    _Entry("11pt_avg", "none", build=lambda: ElevenPointAP()),
    _Entry("binG", "none", build=lambda: BinG()),
    _Entry("G", "none", build=lambda: NormalizedGain()),
    # trec_eval's ndcg: the qrels grades as linear gains, log2 discount, the ideal over all
    # judged documents; NDCG does not depend on the logarithm's base
    _Entry("ndcg", "none", build=lambda: NDCG()),
    _Entry("ndcg_rel", "none", build=lambda: NDCGRel()),
    _Entry("Rndcg", "none", build=lambda: RNDCG()),
    _Entry("ndcg_cut", "cutoff", _CUTOFFS, build=lambda k: NDCG(k)),
    # AP of the top k divided by R (rankereval's map@k divides by min(k, R))
    _Entry("map_cut", "cutoff", _CUTOFFS, build=lambda k: AP(k, denominator="relevant")),
    _Entry("relative_P", "cutoff", _CUTOFFS, build=lambda k: RelativePrecision(k)),
    _Entry("success", "cutoff", (1, 5, 10), build=lambda k: Success(k)),
    _Entry("set_P", "none", build=lambda: SetP()),
    _Entry("set_relative_P", "none", build=lambda: SetRelativeP()),
    _Entry("set_recall", "none", build=lambda: SetR()),
    _Entry("set_map", "none", build=lambda: SetAP()),
    _Entry("set_F", "none", build=lambda: SetF()),
    _Entry("num_nonrel_judged_ret", "none", build=lambda: NumNonRelevantJudgedRetrieved(), aggregate=_sum,
           integer=True),
    # not RBP(p=0.9): trec_eval divides each query's grades by the largest (gains in [0, 1])
    _Entry("rbp", "none", build=lambda: ScaledRBP()),
    _Entry("rbp_resid", "none", build=lambda: ScaledRBPResidual()),
    _Entry("unj", "cutoff", (5, 10, 20), build=lambda k: Unjudged(k)),
    # trec_eval's measures of preferences and judgement groups (its all_prefs, prefs and
    # qrels_jg sets): their judgements come in other file formats
    *(_Entry(b, "none", unsupported=_PREFS) for b in (
        "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
        "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp")),
    *(_Entry(b, "none", unsupported=_JG) for b in ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap")),
]

#: every trec_eval measure family this table knows, by trec_eval's (case-sensitive) name
TABLE = {e.base: e for e in _ENTRIES}

#: trec_eval's measure sets (trec_eval 10.0, measures.c), in the order trec_eval prints them
SETS = {
    "official": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P"),
    "all_trec": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
                 "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
                 "utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut",
                 "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
                 "num_nonrel_judged_ret", "rbp", "rbp_resid", "unj"),
    "set": ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_relative_P",
            "set_recall", "set_map", "set_F"),
}


@dataclass(frozen=True)
class TrecMeasure:
    """One measure named the trec_eval way.

    Attributes
    ----------
    column : str
        trec_eval's printed name (``"P_10"``, ``"iprec_at_recall_0.10"``).
    metric : Metric
        The metric whose per-query values are trec_eval's (with ``nan_handling="zerofill"``
        for queries without relevant documents).
    aggregate : callable
        trec_eval's summary of the per-query values where it is not the metric's own mean
        (the sum of the counts); ``_mean`` means the metric's mean.
    integer : bool
        Whether trec_eval prints the values as integers.
    per_query : bool
        Whether trec_eval prints a value per query (not for ``gm_map``).
    special : str
        For trec_eval's lines that are not measures (``metric`` is None), which one:
        ``"runid"`` (the tag of the run's last line, in the summary), ``"num_q"`` (the number
        of queries, in the summary) or ``"relstring"`` (per query, the relevance of the top
        ``param`` documents as a string: the grade, ``-`` outside the pool, ``.`` pooled but
        unjudged, ``>`` above 9); "" for a measure.
    param : int
        relstring's number of documents.
    """

    column: str
    metric: object
    aggregate: object
    integer: bool = False
    per_query: bool = True
    special: str = ""
    param: int = 0


def is_trec_name(name):
    """Whether ``name`` is spelt as a trec_eval measure or set (case-sensitive)."""
    try:
        _split(name)
    except ValueError:
        return False
    return True


def _split(name):
    """(entry or set name, list of parameter texts or None) of a trec_eval name."""
    if not isinstance(name, str):
        raise TypeError(f"a measure name must be a str, got {type(name).__name__}")
    text = name.strip()
    if text in SETS:
        return text, None
    if text in TABLE:
        return TABLE[text], None
    base, dot, params = text.partition(".")
    if dot and base in TABLE:
        return TABLE[base], params.split(",")
    # P_10, ndcg_cut_10, iprec_at_recall_0.10: the longest known base before an underscore
    for i in range(len(text) - 1, 0, -1):
        if text[i] == "_" and text[:i] in TABLE and TABLE[text[:i]].param != "none":
            return TABLE[text[:i]], [text[i + 1:]]
    raise ValueError(f"{name!r} is not a trec_eval measure name")


def _parse_param(entry, text, name):
    text = text.strip()
    if entry.param == "cutoff":
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"trec_eval measure {name!r}: {entry.base} takes integer cutoffs > 0, "
                             f"got {text!r}") from None
        if value <= 0:
            raise ValueError(f"trec_eval measure {name!r}: {entry.base} takes integer cutoffs > 0, got {value}")
        return value
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"trec_eval measure {name!r}: {entry.base} takes numbers, got {text!r}") from None
    if entry.base == "iprec_at_recall" and not 0.0 <= value <= 1.0:
        raise ValueError(f"trec_eval measure {name!r}: recall levels are between 0 and 1, got {text}")
    return value


def trec_measures(name, unsupported="error", relevance_level=1):
    """The measures a trec_eval name stands for.

    Parameters
    ----------
    name : str
        As trec_eval spells it (case-sensitive): ``"map"``, ``"P_10"``, ``"P.10"``,
        ``"P.5,10,20"``, ``"P"`` (trec_eval's default cutoffs), ``"ndcg_cut_10"``,
        ``"iprec_at_recall_0.10"``, or a set, ``"official"``, ``"set"`` or ``"all_trec"``.
    unsupported : {'error', 'skip'}
        What to do with a measure rankereval does not compute: raise (naming it and why),
        or leave it out (sets are expanded this way; see :func:`unsupported_in`).
    relevance_level : float, default=1
        trec_eval's ``-l``, for the measures of grades whose edge case depends on it
        (``Rndcg`` is 0 when no document reaches it).

    Returns
    -------
    list of TrecMeasure

    Raises
    ------
    ValueError
        For a name that is not trec_eval's, bad parameters, or (with ``unsupported="error"``)
        a measure rankereval does not compute.
    """
    entry, params = _split(name)
    if isinstance(entry, str):  # a set
        out = []
        for base in SETS[entry]:
            out.extend(trec_measures(base, unsupported="skip", relevance_level=relevance_level))
        return out
    if entry.special:
        depth = _parse_param(entry, params[0], name) if params else (entry.defaults[0] if entry.defaults else 0)
        return [TrecMeasure(entry.base, None, entry.aggregate, entry.integer, entry.per_query, entry.special,
                            depth)]
    if entry.build is None:
        if unsupported == "skip":
            return []
        raise ValueError(f"trec_eval measure {name!r} is not supported: {entry.unsupported} "
                         "(see 'rankereval metrics')")
    if entry.param == "none":
        if params is not None:
            raise ValueError(f"trec_eval measure {name!r}: {entry.base} takes no parameters in rankereval "
                             "(trec_eval's gain parameters of ndcg are not supported)")
        metric = entry.build()
        if isinstance(metric, RNDCG) and relevance_level != 1:
            metric = RNDCG(relevance_level)
        return [TrecMeasure(entry.base, metric, entry.aggregate, entry.integer, entry.per_query)]
    values = entry.defaults if params is None else [_parse_param(entry, p, name) for p in params]
    out, seen = [], set()
    for value in values:
        column = entry.column(value)
        if column not in seen:
            seen.add(column)
            out.append(TrecMeasure(column, entry.build(value), entry.aggregate, entry.integer, entry.per_query))
    return out


def unsupported_in(name):
    """``[(trec_eval measure, why)]`` of a set or family that rankereval does not compute."""
    entry, _ = _split(name)
    bases = SETS[entry] if isinstance(entry, str) else (entry.base,)
    return [(b, TABLE[b].unsupported) for b in bases if TABLE[b].build is None and not TABLE[b].special]


_SPECIAL_LISTING = {
    "runid": "the run's tag (of its last line), in the summary (-f trec)",
    "num_q": "the number of queries, in the summary (-f trec)",
    "relstring": "per query, the grades of the top k as a string (- outside the pool, . pooled but "
                 "unjudged; -f trec)",
}


def name_differences(metric, label=None):
    """A sentence on how ``metric`` (of rankereval's names; ``label``: the name it was given
    as, default its :attr:`~rankereval.Metric.name`) differs from what trec_eval, ranx or
    ir_measures call by the same or a similar name, or None when it does not."""
    name = metric.name if label is None else label
    if isinstance(metric, AP) and metric.k is not None and getattr(metric, "denominator", "min") == "min":
        return (f"{name}: AP@{metric.k} divided by min({metric.k}, R), R the number of relevant "
                f"documents; trec_eval's map_cut_{metric.k}, ranx' map@{metric.k} and ir_measures' "
                f"AP@{metric.k} (read as such when spelt so) divide by R: ap@{metric.k}[relevant]")
    if isinstance(metric, NDCG) and metric.relevance_scaling != "identity":
        return (f"{name}: gain 2**grade - 1; trec_eval's ndcg uses the grade itself (linear gain)")
    if isinstance(metric, (Precision, Recall)) and metric.truncated:
        return f"{name}: truncated cutoff; trec_eval divides P_k by k"
    if isinstance(metric, RBP) and name.strip().lower() == "rbp":
        return (f"{name}: rankereval's RBP (p={metric.p:g}, grades as they are); trec_eval's rbp is "
                "p=0.9 with each query's grades scaled into [0, 1] (scaledrbp, read as such in "
                "trec_eval's sets)")
    if type(metric) is DCG and metric.log_base == "e":
        at = "" if metric.k is None else f"@{metric.k}"
        return (f"{name}: discount 1/ln(1 + rank), the natural logarithm (the reference's default); "
                f"ranx' dcg{at} and rankereval.dcg_score use log2: dcg{at}[log2]")
    if isinstance(metric, HitRate):
        return (f"{name}: 1 if the single relevant item is in the top k, NaN with more than one; "
                f"ranx' hit_rate@k and trec_eval's success_k are rankereval's success@k")
    return None


def listing():
    """Lines describing trec_eval's names for ``rankereval metrics``."""
    lines = ["trec_eval measure names (case-sensitive, as trec_eval 10.0; name.p1,p2 or name_p sets "
             "parameters; sets: official, set, all_trec):", ""]
    for entry in _ENTRIES:
        form = entry.base if entry.param == "none" else (
            f"{entry.base}_k" if entry.param == "cutoff" else f"{entry.base}_x")
        if entry.special:
            lines.append(f"  {form:<22} = {_SPECIAL_LISTING[entry.special]}")
            continue
        if entry.build is None:
            lines.append(f"  {form:<22} not supported: {entry.unsupported}")
            continue
        example = entry.build() if entry.param == "none" else entry.build(entry.defaults[0])
        rk = example.name if entry.param == "none" else example.name.replace(
            f"@{entry.defaults[0]}", "@k")
        note = " (summary: sum over queries)" if entry.aggregate is _sum else (
            " (summary: geometric mean)" if example.info.aggregate == "geometric" else "")
        defaults = "" if entry.param == "none" else f" (default {entry.base}: " + ", ".join(
            entry.column(v) for v in entry.defaults) + ")"
        lines.append(f"  {form:<22} = {rk}{note}{defaults}")
    lines += ["", "where a name of rankereval differs from trec_eval's (or ranx / ir_measures'):", ""]
    for example, label in ((AP(100), "map@100"), (NDCG(10, relevance_scaling="power"), None),
                           (Precision(10, truncated=True), None), (DCG(10), None), (HitRate(10), None)):
        lines.append(f"  {name_differences(example, label)}")
    lines.append("  queries without relevant documents: trec_eval scores them 0 and counts them "
                 "(the command line's default, --nan-handling zerofill); the Python API returns NaN")
    return lines
