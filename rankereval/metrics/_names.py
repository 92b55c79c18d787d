"""The one metric-name grammar of the package (the library, :func:`rankereval.evaluate` and
the command line all read names here).

A name is ``base[@k][[option,...]]``:

* ``base``: a metric's canonical name or an alias (case-insensitive; ``_`` and ``-`` are
  ignored, so ``recip_rank`` is ``reciprocalrank``);
* ``@k``: the cutoff, an integer > 0. A metric whose cutoff is optional and that is named
  without one evaluates the whole ranking (``map`` is trec_eval's MAP). A metric whose
  registry entry says ``at=`` another parameter takes that one after ``@`` instead
  (``iprec@0.1``: the recall level);
* ``[...]``: parameters that differ from their defaults, comma-separated: a bool
  parameter by its name (``truncated``), a choice by its token (``power``, ``log2``,
  ``relevant``), or any parameter as ``name=value`` (``rbp[p=0.9]``). Two options apply to
  every metric that reads labels (an :class:`~rankereval.metrics.Adjusted` metric):
  ``rel=x``, the metric's own relevance level (binary metrics), and ``judged_only``.

ir_measures' names (``nDCG@10``, ``P(rel=2)@5``, ``AP(judged_only=True)``; case-sensitive,
:mod:`rankereval.metrics._ir_names`) are read with ir_measures' definitions first: a name
whose part before ``(`` or ``@`` is spelt as an ir_measures measure is one.
"""
import ast
import inspect
import re

from rankereval._validation import check_log_base
from rankereval.metrics._adjusted import Adjusted
from rankereval.metrics._base import _REGISTRY, _normalise_name


def _lookup_table():
    table = {}
    for cls in _REGISTRY.values():
        for key in (cls.info.name, *cls.info.aliases):
            table[_normalise_name(key)] = cls
    return table


def metric_names(aliases=False):
    """The metric names :func:`from_name` knows.

    Parameters
    ----------
    aliases : bool, default=False
        If True, return a dict {canonical name: tuple of aliases}; else the list of
        canonical names.

    Examples
    --------
    >>> from rankereval.metrics import metric_names
    >>> names = metric_names()
    >>> names[:6]
    ['p', 'recall', 'f1', 'hitrate', 'ap', 'success']
    >>> {"ndcg", "rbp", "err", "gmap", "ild", "coverage"} <= set(names)
    True
    >>> metric_names(aliases=True)["ap"]
    ('map', 'averageprecision')
    """
    if aliases:
        return {name: cls.info.aliases for name, cls in _REGISTRY.items()}
    return list(_REGISTRY)


class PeerName:
    """One spelling of a metric in another tool (ranx, torchmetrics, scikit-learn) and what it
    is here; ir_measures' and trec_eval's names have their own tables
    (:mod:`rankereval.metrics._ir_names`, :mod:`rankereval.metrics._trec_names`).

    Attributes
    ----------
    peer : str
        The tool.
    spelling : str
        As the tool writes it (``{k}``: the cutoff).
    meaning : str
        What it computes there.
    here : str
        rankereval's name of the same values (``{k}``: the cutoff), or how to get them.
    read : {'same', 'reference', 'refused', 'not a name'}
        What :func:`from_name` does with the spelling: reads it with the peer's meaning
        (``same``), reads it as the reference's metric of that name, which differs and whose
        output carries a footnote (``reference``), refuses it naming ``here`` (``refused``), or
        the tool has no string names (``not a name``: a class or function).
    """

    __slots__ = ("peer", "spelling", "meaning", "here", "read")

    def __init__(self, peer, spelling, meaning, here, read):
        self.peer, self.spelling, self.meaning, self.here, self.read = peer, spelling, meaning, here, read

    def base(self):
        """The spelling before ``@`` or ``(``, lower case: the key the parser looks up."""
        return self.spelling.split("@")[0].split("(")[0].lower()


_SUCCESS = "1 if any relevant document is in the top k"

#: every peer spelling the docs' "Coming from ..." table lists (tests compare the values with
#: the peers where they are installed)
PEER_NAMES = [
    PeerName("ranx", "hits@{k}", "number of relevant documents in the top k", "numrelret@{k}", "same"),
    PeerName("ranx", "hit_rate@{k}", _SUCCESS, "success@{k}", "refused"),
    PeerName("ranx", "precision@{k}", "relevant documents in the top k, divided by k", "p@{k}", "same"),
    PeerName("ranx", "recall@{k}", "relevant documents in the top k, divided by all relevant", "recall@{k}",
             "same"),
    PeerName("ranx", "f1@{k}", "harmonic mean of precision@k and recall@k", "f1@{k}", "same"),
    PeerName("ranx", "r-precision", "precision at rank R (R: the number of relevant documents)", "rprec",
             "same"),
    PeerName("ranx", "mrr@{k}", "1 / rank of the first relevant document in the top k", "rr@{k}", "same"),
    PeerName("ranx", "map@{k}", "AP of the top k divided by R (all relevant documents)",
             "ap@{k}[relevant]; map@{k} here divides by min(k, R) (the reference's AP@k, footnoted)",
             "reference"),
    PeerName("ranx", "dcg@{k}", "DCG, gain = grade, discount 1/log2(1 + rank)",
             "dcg@{k}[log2]; dcg@{k} here uses ln (the reference's default, footnoted)", "reference"),
    PeerName("ranx", "dcg_burges@{k}", "DCG, gain 2**grade - 1, discount 1/log2(1 + rank)",
             "dcg@{k}[power,log2]", "refused"),
    PeerName("ranx", "ndcg@{k}", "NDCG, gain = grade", "ndcg@{k}", "same"),
    PeerName("ranx", "ndcg_burges@{k}", "NDCG, gain 2**grade - 1", "ndcg@{k}[power]", "refused"),
    PeerName("ranx", "bpref", "trec_eval's bpref, except a query without judged non-relevant documents: "
             "NaN (trec_eval and rankereval: the fraction of the relevant documents ranked)", "bpref", "same"),
    PeerName("ranx", "rbp.95", "rank-biased precision, p = 0.95, the grades as gains (ranx' code; its "
             "docstring says binary)", "rbp[p=0.95]", "refused"),
    PeerName("torchmetrics", "RetrievalHitRate(top_k=k)", _SUCCESS, "success@{k}", "not a name"),
    PeerName("torchmetrics", "RetrievalPrecision(top_k=k)", "relevant documents in the top k, divided by k",
             "p@{k}", "not a name"),
    PeerName("torchmetrics", "RetrievalRecall(top_k=k)", "relevant documents in the top k, divided by all "
             "relevant", "recall@{k}", "not a name"),
    PeerName("torchmetrics", "RetrievalMRR(top_k=k)", "1 / rank of the first relevant document in the top k",
             "rr@{k}", "not a name"),
    PeerName("torchmetrics", "RetrievalNormalizedDCG(top_k=k)", "NDCG, gain = grade", "ndcg@{k}",
             "not a name"),
    PeerName("torchmetrics", "RetrievalRPrecision()", "precision at rank R", "rprec", "not a name"),
    PeerName("scikit-learn", "ndcg_score(y_true, y_score, k=k)", "NDCG, gain = grade, ties averaged, a query "
             "without relevant documents 0", "rankereval.ndcg_score(y_true, y_score, k=k) (the same); "
             "ndcg@{k} on Rankings", "not a name"),
    PeerName("scikit-learn", "dcg_score(y_true, y_score, k=k)", "DCG, gain = grade, discount "
             "1/log2(1 + rank), ties averaged", "rankereval.dcg_score(y_true, y_score, k=k) (the same); "
             "dcg@{k}[log2] on Rankings", "not a name"),
]

#: peers' spellings that rankereval's own grammar would misread (the underscore is ignored, so
#: ranx's ``hit_rate`` would be the reference's ``hitrate``) or not know: refused, naming the
#: spelling here. Keys: the base name as written, lower case.
_PEER_MEANINGS = {}
for _p in PEER_NAMES:
    if _p.read == "refused":
        _PEER_MEANINGS[_p.base()] = (f"{_p.peer}' {_p.spelling.replace('@{k}', '{at}')} ({_p.meaning}) is "
                                     f"{_p.here.replace('@{k}', '{at}')} here")
_PEER_MEANINGS["hit_rate"] += ("; rankereval's hitrate{at} (the reference's HitRate) is defined only "
                               "for exactly one relevant item (leave-one-out data)")
_PEER_MEANINGS["hit-rate"] = _PEER_MEANINGS["hit_rate"]
#: peers' spellings read with the peer's meaning under another name here
_PEER_ALIASES = {_p.base(): _p.here.split("@")[0] for _p in PEER_NAMES
                 if _p.read == "same" and _normalise_name(_p.base()) != _normalise_name(_p.here.split("@")[0])
                 and _p.here.split("@")[0] and "-" not in _p.base()}
del _p


def _unknown(name, base):
    """The message for an unknown metric name: the closest known names (difflib), or where
    ``rankereval metrics`` lists them all."""
    import difflib

    from rankereval.metrics._ir_names import TABLE

    word = _normalise_name(base)
    ours = {_normalise_name(k): k for cls in _REGISTRY.values() for k in (cls.info.name, *cls.info.aliases)}
    close = [ours[k] for k in difflib.get_close_matches(word, list(ours), n=3, cutoff=0.7)]
    close += [k for k in difflib.get_close_matches(base.strip(), list(TABLE), n=2, cutoff=0.8)
              if TABLE[k][0].build is not None]
    first = {}
    for c in close:  # p and P, precision and Precision: once
        first.setdefault(_normalise_name(c), c)
    close = list(first.values())
    at = name.strip()[len(base):] if name.strip().startswith(base) else ""
    hint = f"; did you mean {' or '.join(repr(c + at) for c in close)}?" if close else ""
    return (f"unknown metric {name!r}{hint} (every name: rankereval.metrics.metric_names(aliases=True), "
            "or `rankereval metrics` on the command line)")


def _parse_value(cls, param, text, name):
    default = inspect.signature(cls.__init__).parameters[param].default
    if isinstance(default, bool):
        low = text.lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise ValueError(f"metric {name!r}: {param} must be true or false, got {text!r}")
    if param in cls.info.reals:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"metric {name!r}: {param} must be a number, got {text!r}") from None
        try:
            return cls.info.reals[param].check(value, param)
        except ValueError as exc:
            raise ValueError(f"metric {name!r}: {exc}") from None
    choices = cls.info.choices.get(param, ())
    if text in choices:
        return text
    if param == "log_base":  # a base of DCG: 'e', '2' or any number > 1, one check everywhere
        try:
            return check_log_base(text, param)
        except ValueError as exc:
            raise ValueError(f"metric {name!r}: {exc}") from None
    raise ValueError(f"metric {name!r}: {param} must be one of {', '.join(map(str, choices))}, got {text!r}")


_IR_NAME = re.compile(r"^(?P<base>[^\W\d]\w*)\s*(?:\((?P<params>.*)\))?\s*(?:@(?P<at>[^@()]*))?$")


def _ir_params(name, text):
    """``[(key, value)]`` of ir_measures' ``(key=value, ...)``: Python literals, read with
    :func:`ast.literal_eval` (nothing is executed)."""
    try:
        call = ast.parse(f"f({text})", mode="eval").body
        if not isinstance(call, ast.Call) or call.args or any(kw.arg is None for kw in call.keywords):
            raise SyntaxError
        return [(kw.arg, ast.literal_eval(kw.value)) for kw in call.keywords]
    except (SyntaxError, ValueError):
        raise ValueError(f"ir_measures measure {name!r}: parameters must be name=value pairs of Python "
                         f"literals, e.g. P(rel=2)@5, got ({text})") from None


def _ir_measure(name, text, defaults=None):
    """The metric of an ir_measures name, or None when ``text`` is not spelt as one.
    ``defaults`` as in :func:`from_name`, for the parameters the name leaves open (the
    command line's --truncated, --relevance-scaling, --log-base; not a gain that ``dcg=`` sets)."""
    from rankereval.metrics._ir_names import TABLE

    match = _IR_NAME.match(text) if "[" not in text else None  # [options]: rankereval's grammar
    if match is None or match["base"] not in TABLE:
        return None
    entry, params = TABLE[match["base"]]
    if (entry.build is None or entry.name == "RBP") and match["params"] is None \
            and _normalise_name(match["base"]) in _lookup_table():
        return None  # e.g. RBP@10: rankereval's rbp@10 (the table says how ir_measures' differs)
    params = dict(params)
    given = _ir_params(name, match["params"]) if match["params"] is not None else []
    for key, value in given:
        if key == "cutoff" and entry.cutoff in ("required", "optional"):
            params[key] = value
            continue
        if key not in entry.params:
            accepted = [p for p in (("cutoff",) if entry.cutoff in ("required", "optional") else ()) + entry.params]
            raise ValueError(f"ir_measures measure {name!r}: {entry.name} has no parameter {key!r} "
                             f"(its parameters: {', '.join(accepted) or 'none'})")
        params[key] = value
    if entry.build is None:
        raise ValueError(f"ir_measures measure {name!r} is not supported: {entry.unsupported}")
    for key in params:
        if key != "cutoff" and key not in entry.supported:
            raise ValueError(f"ir_measures measure {name!r}: parameter {key!r} is not supported"
                             + (f": {entry.unsupported}" if entry.unsupported else ""))
    at = match["at"]
    if at is not None and "cutoff" in params:
        raise ValueError(f"ir_measures measure {name!r}: give the cutoff once (@k or cutoff=k)")
    if entry.cutoff == "recall":
        if at is None:
            raise ValueError(f"ir_measures measure {name!r}: {entry.name} needs its recall level after @, "
                             f"e.g. {entry.name}@0.1")
        try:
            cut = float(at)
        except ValueError:
            raise ValueError(f"ir_measures measure {name!r}: the recall level after @ must be a number "
                             f"in [0, 1], got {at!r}") from None
    else:
        cut = params.pop("cutoff", None)
        if at is not None:
            if entry.cutoff == "none":
                raise ValueError(f"ir_measures measure {name!r}: {entry.name} takes no cutoff")
            try:
                cut = int(at)
            except ValueError:
                raise ValueError(f"ir_measures measure {name!r}: the cutoff after @ must be an integer > 0, "
                                 f"got {at!r}") from None
        if cut is None and entry.cutoff == "required":
            raise ValueError(f"ir_measures measure {name!r}: {entry.name} needs a cutoff, e.g. {entry.name}@10")
        if cut is not None and (isinstance(cut, bool) or not isinstance(cut, int) or cut <= 0):
            raise ValueError(f"ir_measures measure {name!r}: the cutoff must be an integer > 0, got {cut!r}")
    rel = params.pop("rel", None)
    if rel is not None and (isinstance(rel, bool) or not isinstance(rel, int) or rel <= 0):
        raise ValueError(f"ir_measures measure {name!r}: rel must be an integer > 0 (the lowest relevant "
                         f"grade; rankereval stores no grades of 0 and below), got {rel!r}")
    judged_only = params.pop("judged_only", False)
    if not isinstance(judged_only, bool):
        raise ValueError(f"ir_measures measure {name!r}: judged_only must be True or False, got {judged_only!r}")
    if entry.name == "RBP" and rel is None:
        raise ValueError(f"ir_measures measure {name!r}: {entry.unsupported}; binary RBP is RBP(rel=1)")
    if entry.name == "NumRet" and rel is not None:
        params["_relevant"] = True  # NumRet(rel=x): the retrieved documents graded x and above
    try:
        metric = entry.build(cut, params)
    except ValueError as exc:
        raise ValueError(f"ir_measures measure {name!r}: {exc}") from None
    if rel is not None and "rel" in metric._params():  # a relevance level of its own (the diversity measures)
        metric = type(metric)(**{**metric._params(), "rel": rel})
        rel = None
    now = metric._params()
    fixed = {"k", metric.info.at, *metric.info.inputs} | ({"relevance_scaling"} if "dcg" in params else set())
    changed = {k: v for k, v in (defaults or {}).items() if k in now and k not in fixed and now[k] != v}
    if changed:
        metric = type(metric)(**{**now, **changed})
    return Adjusted(metric, rel=rel, judged_only=judged_only) if rel is not None or judged_only else metric


def from_name(name, defaults=None):
    """The metric a name stands for: ``"ndcg@10"``, ``"p@5"``, ``"map"``, ``"mrr@10"``.

    Parameters
    ----------
    name : str
        ``base[@k][[option,...]]``, case-insensitive. ``base`` is a canonical name or an
        alias (see :func:`metric_names`, or ``rankereval metrics`` on the command line);
        ``@k`` the cutoff (left out: the whole ranking, for metrics where that is defined);
        the options in brackets set parameters away from their defaults, e.g.
        ``"p@10[truncated]"``, ``"ndcg@10[power,log2]"``, ``"dcg[log_base=2]"``,
        ``"dcg@10[log_base=10]"`` (any base > 1).
    defaults : dict, optional
        Parameter values for every metric that has the parameter and whose name does not
        set it, e.g. ``{"truncated": True}`` (how the command line applies ``--truncated``).
        Also the data inputs a name cannot carry (``MetricInfo.inputs``), e.g.
        ``{"popularity": p}`` for ``"novelty@10"`` or ``{"n_items": 5000}`` for
        ``"coverage@10"``.

    Returns
    -------
    Metric
        ``from_name(m.name) == m`` for every metric ``m``.

    Raises
    ------
    ValueError
        For an unknown name (the message lists the valid ones), a missing cutoff where the
        metric needs one, a cutoff where it takes none, or a bad option.
    TypeError
        If ``name`` is not a string.

    Examples
    --------
    >>> from rankereval.metrics import from_name
    >>> from_name("NDCG@10")
    NDCG(k=10, relevance_scaling='identity', log_base='e')
    >>> from_name("map")
    AP(k=None, denominator='min')
    >>> from_name("p@5[truncated]")
    Precision(k=5, truncated=True)
    >>> from_name("ndcg@10[power]").name
    'ndcg@10[power]'
    """
    if not isinstance(name, str):
        raise TypeError(f"a metric name must be a str, got {type(name).__name__}")
    text = name.strip()
    ir = _ir_measure(name, text, defaults)
    if ir is not None:
        return ir
    options = ""
    if text.endswith("]"):
        open_at = text.find("[")
        if open_at < 0:
            raise ValueError(f"metric {name!r}: ']' without '['")
        text, options = text[:open_at], text[open_at + 1:-1]
    base, sep, cut = text.partition("@")
    borrowed = _PEER_MEANINGS.get(base.strip().lower())
    if borrowed is not None:
        raise ValueError(f"metric {name!r}: {borrowed.format(at=f'@{cut.strip()}' if sep else '@k')}")
    if re.fullmatch(r"rbp\.\d+", base.strip().lower()):  # ranx' rbp.95: p = 0.95
        p = "0." + base.strip()[4:]
        raise ValueError(f"metric {name!r}: ranx' {base.strip()} (rank-biased precision, p = {p}, the "
                         f"grades as gains) is rbp[p={p}] here")
    cls = _lookup_table().get(_normalise_name(_PEER_ALIASES.get(base.strip().lower(), base)))
    if cls is None:
        raise ValueError(_unknown(name, base))
    info = cls.info
    params = {}
    if sep and info.at != "k":
        params[info.at] = _parse_value(cls, info.at, cut.strip(), name)
    elif sep:
        if info.cutoff == "none":
            raise ValueError(f"metric {name!r}: {base.strip()} takes no cutoff (write it without @k)")
        try:
            params["k"] = int(cut)
        except ValueError:
            raise ValueError(f"metric {name!r}: the cutoff after @ must be an integer > 0") from None
        if params["k"] <= 0:
            raise ValueError(f"metric {name!r}: the cutoff after @ must be an integer > 0")
    elif info.at != "k":
        at = inspect.signature(cls.__init__).parameters[info.at]
        if at.default is at.empty:
            raise ValueError(f"metric {name!r} needs its {info.at} after @, e.g. "
                             f"{base.strip()}@{info.reals[info.at].examples[0]!r}")
    elif info.cutoff == "required":
        raise ValueError(f"metric {name!r} needs a cutoff, e.g. {base.strip()}@10")
    sig = inspect.signature(cls.__init__).parameters
    explicit = set()
    adjust = {}  # rel= and judged_only: an Adjusted metric
    for token in filter(None, (t.strip().lower() for t in options.split(","))):
        key, eq, value = token.partition("=")
        key = key.strip()
        key = {p.lower(): p for p in sig}.get(key, key)  # (names are case-insensitive: INST's T)
        if key in ("rel", "judged_only") and key not in sig and info.labels != "none":
            if key in adjust:
                raise ValueError(f"metric {name!r}: {key} is set twice")
            if key == "rel":
                try:
                    adjust[key] = float(value) if eq else None
                except ValueError:
                    adjust[key] = None
                if adjust[key] is None:
                    raise ValueError(f"metric {name!r}: rel must be a number (rel=2), got {token!r}")
            else:
                low = value.strip()
                if eq and low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(f"metric {name!r}: judged_only must be true or false, got {value!r}")
                adjust[key] = not eq or low in ("true", "1", "yes")
            continue
        if key in info.inputs:
            raise ValueError(f"metric {name!r}: {key} is data, not an option of the name; pass it "
                             f"as from_name(..., defaults={{{key!r}: ...}}) or build {cls.__name__} directly")
        if eq:
            if key not in sig or key in ("self", "k", info.at):
                raise ValueError(f"metric {name!r}: {cls.__name__} has no option {key!r}; options: "
                                 f"{', '.join(p for p in sig if p not in ('self', 'k', info.at))}")
            params[key] = _parse_value(cls, key, value.strip(), name)
        elif key in info.tokens:
            key, params_value = info.tokens[key]
            params[key] = params_value
        elif key in sig and isinstance(sig[key].default, bool):
            params[key] = True
        else:
            known = [p for p in sig if p not in ("self", "k") and isinstance(sig[p].default, bool)]
            raise ValueError(f"metric {name!r}: unknown option {token!r}; options of "
                             f"{cls.__name__}: {', '.join(known + list(info.tokens)) or 'none'}")
        if key in explicit:
            raise ValueError(f"metric {name!r}: {key} is set twice")
        explicit.add(key)
    for key, value in (defaults or {}).items():
        if key in sig and key not in ("self", "k", info.at) and key not in explicit:
            params[key] = value
    missing = [p for p in info.inputs if p not in params and sig[p].default is inspect.Parameter.empty]
    if missing:
        raise ValueError(f"metric {name!r}: {cls.__name__} needs {' and '.join(missing)} (data a name "
                         f"cannot carry): build {cls.__name__}(..., {missing[0]}=...) directly, or "
                         f"pass from_name(name, defaults={{{missing[0]!r}: ...}})")
    metric = cls(**params)
    if adjust.get("rel") is not None or adjust.get("judged_only"):
        try:
            return Adjusted(metric, **adjust)
        except ValueError as exc:
            raise ValueError(f"metric {name!r}: {exc}") from None
    return metric

