"""ir_measures' measure names: the one place they live (the grammar that reads them is
:func:`rankereval.metrics.from_name`).

ir_measures (0.4) names a measure ``Name(param=value, ...)@cutoff`` (``nDCG@10``,
``P(rel=2)@5``, ``AP(judged_only=True)``, ``IPrec@0.1``; the names are case-sensitive).
This table maps each measure whose per-query value rankereval computes onto a
:class:`~rankereval.Metric`: the trec_eval-backed ones (pytrec_eval is ir_measures' provider
for P, R, AP, RR, nDCG, Rprec, Bpref, IPrec, Success and the counts) as the trec_eval table
(:mod:`rankereval.metrics._trec_names`) maps them, ``ERR@k`` and ``nDCG(dcg='exp-log2')@k``
as gdeval computes them, ``Judged@k`` as ir_measures' own provider. ``rel=`` and
``judged_only=True`` become an :class:`~rankereval.metrics.Adjusted` metric. Every other
measure of ir_measures is listed with the reason rankereval does not compute it, so that a
name is either read exactly or refused with that reason.

ir_measures itself is never imported here (the tests compare the values with it).
"""
from dataclasses import dataclass, field

from rankereval.metrics._adjusted import Adjusted

from rankereval.metrics._binary import AP, Precision, Recall, Success
from rankereval.metrics._diversity import (
    APIA, ERRIA, NERRIA, NNRBP, NRBP, AlphaDCG, AlphaNDCG, PrecisionIA, SubtopicRecall)
from rankereval.metrics._cwl import BPM, INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, Compat
from rankereval.metrics._graded import ERR, NDCG, RBP
from rankereval.metrics._profile import AUROC, InfAP, NumQueries, SetAP, SetF, SetP, SetR, SetRelativeP
from rankereval.metrics._rank import ReciprocalRank
from rankereval.metrics._trec import (
    Bpref, InterpolatedPrecision, Judged, NumRelevant, NumRelevantRetrieved, NumRetrieved, RPrecision)

#: the parameters ir_measures gives its measures, besides ``cutoff`` (for the messages)
_REL = ("rel",)
_REL_J = ("rel", "judged_only")


@dataclass(frozen=True)
class IrEntry:
    """One measure of ir_measures: its parameters and the metric it is here.

    Attributes
    ----------
    name : str
        ir_measures' name (case-sensitive).
    cutoff : {'required', 'optional', 'none', 'recall'}
        What ``@`` takes: a cutoff (needed or not), nothing, or IPrec's recall level.
    params : tuple of str
        ir_measures' parameters of the measure other than ``cutoff``.
    build : callable or None
        ``build(cutoff, params) -> Metric`` (``params``: the parameters given, ``rel`` and
        ``judged_only`` already taken out); None for a measure rankereval does not compute.
    supported : tuple of str
        The parameters rankereval reads; the others of ``params`` are refused by name.
    unsupported : str
        Why rankereval does not compute the measure (``build`` is None), or a note on
        refused parameters.
    aliases : dict
        ir_measures' other names of the measure -> the parameters each alias fixes.
    note : str
        Where the values can differ from ir_measures' (shown in the docs' table).
    """

    name: str
    cutoff: str
    params: tuple = ()
    build: object = None
    supported: tuple = ()
    unsupported: str = ""
    aliases: dict = field(default_factory=dict)
    note: str = ""


def _ap(cutoff, params):
    # trec_eval's map (no cutoff) and map_cut_k (AP of the top k divided by R)
    return AP() if cutoff is None else AP(cutoff, denominator="relevant")


def _ndcg(cutoff, params):
    dcg = params.get("dcg", "log2")
    if dcg not in ("log2", "exp-log2"):
        raise ValueError(f"dcg must be 'log2' or 'exp-log2', got {dcg!r}")
    # trec_eval's ndcg / ndcg_cut: linear gain; gdeval's (dcg='exp-log2'): 2**grade - 1. An
    # NDCG does not depend on the base of its logarithm.
    return NDCG(cutoff, relevance_scaling="power" if dcg == "exp-log2" else "identity")


def _setp(cutoff, params):
    relative = params.get("relative", False)
    if not isinstance(relative, bool):
        raise ValueError(f"relative must be True or False, got {relative!r}")
    return SetRelativeP() if relative else SetP()


def _rbp(cutoff, params):
    # binary RBP: Adjusted(RBP, rel=...) thresholds the grades (from_name checks that rel is given)
    return RBP(cutoff, p=params.get("p", 0.8))


def _numret(cutoff, params):
    return NumRelevantRetrieved() if params.get("_relevant") else NumRetrieved()


#: the note of the diversity measures (ndeval's values; see rankereval.metrics._diversity)
_NDEVAL_NOTE = ("needs IntentLabels (read_trec(..., intents=True)); a query without any relevant item is NaN "
                "(ndeval: 0); without a cutoff: the whole ranking (ir_measures needs one)")
_AT1 = "; @1 divided by the ideal-ideal gain like every cutoff (ndeval leaves rank 1 undivided)"


def _diversity(cls):
    """``build`` of a diversity measure: ``cls`` with the cutoff (if it takes one), ``alpha`` and
    ``beta`` given (``rel`` is set by the name reader, as for every measure with ``rel``)."""
    def build(cutoff, params):
        kwargs = {p: params[p] for p in ("alpha", "beta") if p in params}
        if cls.info.cutoff != "none":
            kwargs["k"] = cutoff
        return cls(**kwargs)
    return build


#: ir_measures' gain parameters of the C/W/L measures (its cwl_eval provider)
_CWL_P = ("min_rel", "max_rel")
_CWL_NOTE = ("cwl_eval's expected rate of gain (its first column); gains are the grades clipped to "
             "[min_rel, max_rel] and scaled into [0, 1], as in ir_measures; without max_rel (which "
             "ir_measures requires) the grades are the gains, clipped at 1 (max_rel=1)")


def _cwl(cls, *names):
    """``build`` of a C/W/L measure: ``cutoff`` (if the class takes one), the parameters
    ``names`` as they are, ``min_rel``/``max_rel`` as ``min_grade``/``max_grade``."""
    def build(cutoff, params):
        kwargs = {n: params[n] for n in names if n in params}
        if "min_rel" in params:
            kwargs["min_grade"] = params["min_rel"]
        if "max_rel" in params:
            kwargs["max_grade"] = params["max_rel"]
        return cls(cutoff, **kwargs) if cls.info.cutoff == "required" else cls(**kwargs)
    return build


def _compat(cutoff, params):
    normalize = params.get("normalize", True)
    if not isinstance(normalize, bool):
        raise ValueError(f"normalize must be True or False, got {normalize!r}")
    return Compat(params.get("p", 0.95), normalize=normalize)


def _sdcg(cutoff, params):
    dcg = params.get("dcg", "log2")
    if dcg != "log2":
        raise ValueError(f"dcg must be 'log2' (cwl_eval's scaled DCG), got {dcg!r}")
    return _cwl(SDCG)(cutoff, params)


ENTRIES = [
    IrEntry("P", "required", _REL_J, lambda k, p: Precision(k), _REL_J, aliases={"Precision": {}}),
    IrEntry("R", "required", _REL_J, lambda k, p: Recall(k), _REL_J, aliases={"Recall": {}}),
    IrEntry("AP", "optional", _REL_J, _ap, _REL_J, aliases={"MAP": {}},
            note="AP@k divides by R, as trec_eval's map_cut_k; rankereval's own ap@k / map@k "
                 "(lower case) divide by min(k, R)"),
    IrEntry("RR", "optional", _REL_J, lambda k, p: ReciprocalRank(k), _REL_J, aliases={"MRR": {}}),
    IrEntry("nDCG", "optional", ("dcg", "gains", "judged_only"), _ndcg, ("dcg", "judged_only"),
            unsupported="custom gains= mappings are not supported (dcg='log2' is the grade as gain, "
                        "dcg='exp-log2' is 2**grade - 1)", aliases={"NDCG": {}}),
    IrEntry("Success", "required", _REL_J, lambda k, p: Success(k), _REL_J),
    IrEntry("Rprec", "none", _REL_J, lambda k, p: RPrecision(), _REL_J, aliases={"RPrec": {}}),
    IrEntry("Bpref", "none", _REL, lambda k, p: Bpref(), _REL, aliases={"BPref": {}}),
    IrEntry("IPrec", "recall", _REL_J, lambda x, p: InterpolatedPrecision(x), _REL_J,
            note="trec_eval 10's rounding of the level times R; ir_measures computes IPrec with "
                 "pytrec_eval (trec_eval 9), which rounds differently when the fraction of level * R "
                 "is in [0.1, 0.5) (the same at 0, 0.5 and 1)"),
    IrEntry("Judged", "optional", (), lambda k, p: Judged(k),
            note="counts every qrels line, a negative grade's too, as ir_measures; ir_measures "
                 "breaks score ties by ascending docid"),
    IrEntry("ERR", "optional", (), lambda k, p: ERR(k), note="gdeval's: grades up to 4"),
    IrEntry("NumRel", "none", _REL, lambda k, p: NumRelevant(), _REL),
    # NumRet counts every retrieved document; with rel=, the relevant ones (num_rel_ret)
    IrEntry("NumRet", "none", _REL, _numret, _REL, aliases={"NumRelRet": {"rel": 1}}),
    IrEntry("infAP", "none", _REL, lambda k, p: InfAP(), _REL,
            note="trec_eval's infAP: documents of negative grade are pooled but unjudged"),
    IrEntry("NumQ", "none", (), lambda k, p: NumQueries(),
            note="1 per query, as ir_measures' per-query value; ir_measures sums it (the number of "
                 "queries), rankereval's summary is the mean (1), the count is n_queries"),
    IrEntry("RBP", "optional", ("p", "rel"), _rbp, ("p", "rel"),
            unsupported="ir_measures' graded RBP (without rel=) is not read: its providers (cwl_eval, "
                        "trectools) differ on graded labels; RBP and RBP@k without parameters are "
                        "rankereval's rbp (grades as they are, p=0.8), rbp[p=...] sets p",
            note="read with rel= only (binary RBP, cwl_eval's): items graded rel and above count 1"),
    IrEntry("SetP", "none", ("rel", "relative", "judged_only"), _setp, ("rel", "relative", "judged_only"),
            aliases={"SetRelP": {"relative": True}}),
    IrEntry("SetR", "none", _REL, lambda k, p: SetR(), _REL),
    IrEntry("SetF", "none", ("rel", "beta", "judged_only"), lambda k, p: SetF(float(p.get("beta", 1.0))),
            ("rel", "beta", "judged_only")),
    IrEntry("SetAP", "none", _REL_J, lambda k, p: SetAP(), _REL_J),
    # ir_measures' accuracy provider: 1 - (non-relevant above each relevant retrieved) / (R' N'),
    # over the top k, unjudged documents non-relevant: the share of the (relevant, non-relevant)
    # pairs of the top k ordered relevant first, AUROC@k
    IrEntry("Accuracy", "optional", _REL, lambda k, p: AUROC(k), _REL,
            note="AUROC@k; NaN where ir_measures reports no value (no relevant document retrieved) "
                 "or fails (no non-relevant one: a division by zero)"),
    IrEntry("BPM", "required", _CWL_P + ("T",), _cwl(BPM, "T"), _CWL_P + ("T",), note=_CWL_NOTE),
    IrEntry("Compat", "none", ("p", "normalize"), _compat, ("p", "normalize"),
            note="ir_measures' compat provider; a query without relevant documents is NaN here (ir_measures: "
                 "0); equal grades of the ideal ranking in the run's order (ir_measures: by the run's scores, "
                 "unretrieved documents at 0)"),
    IrEntry("INST", "none", _CWL_P + ("T",), _cwl(INST, "T"), _CWL_P + ("T",), note=_CWL_NOTE),
    IrEntry("INSQ", "none", _CWL_P + ("T",), _cwl(INSQ, "T"), _CWL_P + ("T",), note=_CWL_NOTE),
    IrEntry("SDCG", "required", ("dcg",) + _CWL_P, _sdcg, ("dcg",) + _CWL_P, note=_CWL_NOTE),
    IrEntry("NERR8", "required", _CWL_P, _cwl(NERR8), _CWL_P, note=_CWL_NOTE),
    IrEntry("NERR9", "required", _CWL_P, _cwl(NERR9), _CWL_P, note=_CWL_NOTE),
    IrEntry("NERR10", "none", ("p",) + _CWL_P, _cwl(NERR10, "p"), ("p",) + _CWL_P, note=_CWL_NOTE),
    IrEntry("NERR11", "none", ("T",) + _CWL_P, _cwl(NERR11, "T"), ("T",) + _CWL_P, note=_CWL_NOTE),
    # the intent-aware diversity measures (ndeval, ir_measures' pyndeval provider): IntentLabels
    IrEntry("alpha_nDCG", "optional", ("rel", "alpha", "judged_only"), _diversity(AlphaNDCG),
            ("rel", "alpha", "judged_only"), aliases={"α_nDCG": {}}, note=_NDEVAL_NOTE),
    IrEntry("alpha_DCG", "optional", ("rel", "alpha", "judged_only"), _diversity(AlphaDCG),
            ("rel", "alpha", "judged_only"), aliases={"α_DCG": {}}, note=_NDEVAL_NOTE + _AT1),
    IrEntry("ERR_IA", "optional", _REL_J, _diversity(ERRIA), _REL_J, note=_NDEVAL_NOTE + _AT1),
    IrEntry("nERR_IA", "optional", _REL_J, _diversity(NERRIA), _REL_J, note=_NDEVAL_NOTE),
    IrEntry("P_IA", "optional", _REL_J, _diversity(PrecisionIA), _REL_J, note=_NDEVAL_NOTE),
    IrEntry("AP_IA", "none", _REL_J, _diversity(APIA), _REL_J, aliases={"MAP_IA": {}}, note=_NDEVAL_NOTE),
    IrEntry("StRecall", "optional", _REL, _diversity(SubtopicRecall), _REL, note=_NDEVAL_NOTE),
    IrEntry("NRBP", "none", ("rel", "alpha", "beta"), _diversity(NRBP), ("rel", "alpha", "beta"),
            note=_NDEVAL_NOTE),
    IrEntry("nNRBP", "none", ("rel", "alpha", "beta"), _diversity(NNRBP), ("rel", "alpha", "beta"),
            note=_NDEVAL_NOTE),
]

#: every ir_measures name (measures and aliases) -> (entry, parameters the alias fixes)
TABLE = {}
for _e in ENTRIES:
    TABLE[_e.name] = (_e, {})
    for _alias, _fixed in _e.aliases.items():
        TABLE[_alias] = (_e, dict(_fixed))
del _e


def example_name(entry):
    """An ir_measures name of ``entry`` for listings: ``P@k``, ``AP[@k]``, ``IPrec@recall``."""
    return {"required": f"{entry.name}@k", "optional": f"{entry.name}[@k]", "none": entry.name,
            "recall": f"{entry.name}@recall"}[entry.cutoff]


def table_rows():
    """``[(ir_measures name, parameters, rankereval metric name or why not, note)]``, one row per
    measure, from :data:`ENTRIES` (the docs' table and ``rankereval metrics`` print it)."""
    rows = []
    for e in ENTRIES:
        names = " / ".join([example_name(e)] + [a + (f" (= {e.name}({', '.join(f'{k}={v!r}' for k, v in fx.items())}))"
                                                     if fx else "") for a, fx in e.aliases.items()])
        params = ", ".join(p for p in e.params if p in e.supported) or "-"
        if e.build is None:
            rows.append((names, "-", "not supported: " + e.unsupported, e.note))
            continue
        probe = {"required": 10, "optional": 10, "none": None, "recall": 0.1}[e.cutoff]
        metric = e.build(probe, {})
        target = metric.name.replace("@10", "@k").replace("@0.1", "@recall")
        if e.cutoff == "optional":
            whole = e.build(None, {}).name
            target = f"{whole}[@k]" if target == f"{whole}@k" else f"{whole}; @k: {target}"
        if e.name == "nDCG":
            target += "; dcg='exp-log2': " + _ndcg(10, {"dcg": "exp-log2"}).name.replace("@10", "@k")
        if e.name == "RBP":
            target = "with rel=x (binary RBP): " + Adjusted(RBP(10), rel=1).name.replace(
                "@10", "[@k]").replace("rel=1", "rel=x") + "; without: not read"
        if e.name == "NumRet":
            target += "; with rel=: " + NumRelevantRetrieved().name
        rows.append((names, params, target, e.note))
    return rows
