"""Judgements and runs held in Python objects: ranx-style dicts of dicts and the records of
ir_datasets / ir_measures (``query_id, doc_id, relevance`` / ``query_id, doc_id, score``).

Both are flattened into two long-format DataFrames and go through the same assembly as
:func:`~rankereval.io.from_dataframes` (one id space, one row per query, the same ordering,
ties, options and errors); only the description of an offending entry differs.
"""
from collections.abc import Mapping
from operator import attrgetter, itemgetter

import numpy as np

from rankereval.io._assemble import _r
from rankereval.io._source import _pandas
from rankereval.io._trec import _check_options, _from_frames

_QRELS_FIELDS = ("query_id", "doc_id", "relevance")
_RUN_FIELDS = ("query_id", "doc_id", "score")


def _id_types(values):
    """The id types of a column, numbers counted as one ('number'), or a TypeError's text."""
    kinds = set()
    for v in values:
        if isinstance(v, str):
            kinds.add("str")
        elif isinstance(v, bytes):
            kinds.add("bytes")
        elif isinstance(v, (bool, np.bool_)):
            kinds.add("bool")
        elif isinstance(v, (int, np.integer)):
            kinds.add("int")
        else:
            kinds.add(type(v).__name__)
        if len(kinds) > 1:
            break
    return kinds


def _check_ids(qrels_ids, run_ids, what, arg_names):
    """TypeError when the ids of one kind (queries or documents) mix types within an input or
    differ between the two inputs: ``1`` and ``"1"`` would never match, silently."""
    seen = []
    for ids, arg in zip((qrels_ids, run_ids), arg_names):
        kinds = _id_types(ids)
        if len(kinds) > 1:
            raise TypeError(f"{arg}: {what} ids of different types ({' and '.join(sorted(kinds))}); "
                            "give every id as one type (e.g. all str)")
        seen.append(kinds)
    if seen[0] and seen[1] and seen[0] != seen[1]:
        raise TypeError(f"{arg_names[0]} has {what} ids of type {seen[0].pop()} but {arg_names[1]} of type "
                        f"{seen[1].pop()}: they would never match; convert one side (e.g. both to str)")


def _frame(q, d, v, value_col):
    pd = _pandas()
    return pd.DataFrame({"query": pd.Series(q, dtype=object), "item": pd.Series(d, dtype=object),
                         value_col: pd.Series(v, dtype=object) if len(v) else pd.Series(v, dtype=float)})


def _flatten_dict(nested, arg, value_word):
    """(queries, documents, values) of a dict of dicts, or of an object with ``to_dict()``
    (ranx's Qrels and Run)."""
    if not isinstance(nested, Mapping) and callable(getattr(nested, "to_dict", None)):
        nested = nested.to_dict()
    if not isinstance(nested, Mapping):
        raise TypeError(f"{arg} must be a dict of dicts ({{query_id: {{doc_id: {value_word}}}}}) or have "
                        f"a to_dict() method (ranx.Qrels / ranx.Run), got {type(nested).__name__}")
    q, d, v = [], [], []
    for qid, docs in nested.items():
        if not isinstance(docs, Mapping):
            raise TypeError(f"{arg}[{qid!r}] must be a dict {{doc_id: {value_word}}}, got {type(docs).__name__}")
        q.extend([qid] * len(docs))
        d.extend(docs.keys())
        v.extend(docs.values())
    return q, d, v


def _flatten_intents(nested):
    """(queries, intents, documents, values) of ``{query_id: {intent: {doc_id: relevance}}}``."""
    q, t, d, v = [], [], [], []
    for qid, by_intent in nested.items():
        if not isinstance(by_intent, Mapping):
            raise TypeError(f"qrels[{qid!r}] must be a dict {{intent: {{doc_id: relevance}}}}, "
                            f"got {type(by_intent).__name__}")
        for intent, docs in by_intent.items():
            if not isinstance(docs, Mapping):
                raise TypeError(f"qrels[{qid!r}][{intent!r}] must be a dict {{doc_id: relevance}} (the qrels hold "
                                f"judgements per intent), got {type(docs).__name__}")
            q.extend([qid] * len(docs))
            t.extend([intent] * len(docs))
            d.extend(docs.keys())
            v.extend(docs.values())
    return q, t, d, v


def _has_intents(nested):
    """Whether a dict of qrels is ``{query: {intent: {doc: grade}}}`` (its first judgement is
    a dict): a grade is never a dict, so the three levels are told apart without a flag."""
    if not isinstance(nested, Mapping):
        return False
    for docs in nested.values():
        if isinstance(docs, Mapping):
            for value in docs.values():
                return isinstance(value, Mapping)
    return False


def from_dicts(qrels, run, relevance_level=1, tie_break="trec_eval", missing="drop", extra="drop", depth=None, *,
               ties="break"):
    """Labels and rankings from ranx-style dicts of dicts.

    Parameters
    ----------
    qrels : dict of dicts, or an object with ``to_dict()`` such as ``ranx.Qrels``
        ``{query_id: {doc_id: relevance}}``; or, for diversity judgements,
        ``{query_id: {intent: {doc_id: relevance}}}`` (told apart by their third level of dicts),
        whose ``numeric_labels`` are then :class:`~rankereval.IntentLabels`.
    run : dict of dicts, or an object with ``to_dict()`` such as ``ranx.Run``
        ``{query_id: {doc_id: score}}``, higher scores first.
    relevance_level, tie_break, missing, extra, depth, ties
        As in :func:`read_trec`; ``tie_break`` compares doc ids in their natural order.

    Returns
    -------
    TrecData
        As :func:`read_trec` and :func:`from_dataframes` (query ids kept, same id coding).

    Raises
    ------
    TypeError
        If an input is not a dict of dicts, or query or doc ids mix types (within an input,
        or between the two).
    ValueError
        For a non-numeric or NaN grade or score (naming the entry), or invalid options.

    Examples
    --------
    >>> from rankereval import NDCG
    >>> from rankereval.io import from_dicts
    >>> qrels = {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}
    >>> run = {"q1": {"d2": 0.9, "d1": 0.4}, "q2": {"d3": 0.7, "d4": 0.2}}
    >>> data = from_dicts(qrels, run)
    >>> data.rankings.to_list()
    [[1, 0], [2, 3]]
    >>> data.score(NDCG(10)).round(4)
    array([0.6309, 1.    ])
    """
    _check_options(relevance_level, tie_break, "score", missing, extra, depth, ties)
    if _has_intents(qrels):
        lq, lt, ld, lv = _flatten_intents(qrels)
        rq, rd, rv = _flatten_dict(run, "run", "score")

        def locate3(q, t, d):
            return lambda row: f"entry [{_r(q[row])}][{_r(t[row])}][{_r(d[row])}]"

        def locate2(q, d):
            return lambda row: f"entry [{_r(q[row])}][{_r(d[row])}]"

        return _from_columns((lq, ld, lv), (rq, rd, rv), (locate3(lq, lt, ld), locate2(rq, rd)),
                             relevance_level, tie_break, missing, extra, depth, ties, intents=lt)
    lq, ld, lv = _flatten_dict(qrels, "qrels", "relevance")
    rq, rd, rv = _flatten_dict(run, "run", "score")

    def locate(q, d):
        return lambda row: f"entry [{_r(q[row])}][{_r(d[row])}]"

    return _from_columns((lq, ld, lv), (rq, rd, rv), (locate(lq, ld), locate(rq, rd)),
                         relevance_level, tie_break, missing, extra, depth, ties)


def _columns(records, arg, fields):
    """(queries, documents, values) of an iterable of records: namedtuples with the named
    fields (ir_datasets, ir_measures), or any tuples/sequences read by position."""
    if records is None or isinstance(records, (str, bytes, dict)) or not hasattr(records, "__iter__"):
        raise TypeError(f"{arg}: expected an iterable of records ({', '.join(fields)}) or tuples, got "
                        f"{type(records).__name__}" + (" (from_dicts reads dicts of dicts)"
                                                       if isinstance(records, dict) else ""))
    rows = records if isinstance(records, (list, tuple)) else list(records)
    if not rows:
        return [], [], []
    first = rows[0]
    if all(hasattr(first, f) for f in fields):
        get = attrgetter(*fields)
    else:
        get = itemgetter(0, 1, 2)
    try:
        cols = list(zip(*map(get, rows)))
    except (AttributeError, IndexError, TypeError, KeyError):
        for i, rec in enumerate(rows):
            try:
                get(rec)
            except (AttributeError, IndexError, TypeError, KeyError):
                raise TypeError(f"{arg}[{i}]: expected a record ({', '.join(fields)}) or a tuple of at least "
                                f"three fields, got {rec!r}") from None
        raise
    return list(cols[0]), list(cols[1]), list(cols[2])


def from_records(qrels, run, relevance_level=1, tie_break="trec_eval", missing="drop", extra="drop", depth=None, *,
                 ties="break"):
    """Labels and rankings from iterables of records, as ir_datasets and ir_measures give them.

    Parameters
    ----------
    qrels : iterable
        Judgements: namedtuples with fields ``query_id, doc_id, relevance`` (ir_datasets'
        ``TrecQrel``, ir_measures' ``Qrel``; other fields are ignored) or plain tuples
        ``(query_id, doc_id, relevance)``.
    run : iterable
        Scored documents: namedtuples with ``query_id, doc_id, score`` (ir_measures'
        ``ScoredDoc``, ir_datasets' ``ScoredDoc``) or tuples ``(query_id, doc_id, score)``.
    relevance_level, tie_break, missing, extra, depth
        As in :func:`read_trec`.

    Returns
    -------
    TrecData
        As :func:`read_trec` and :func:`from_dataframes`.

    Raises
    ------
    TypeError
        If a record has fewer than three fields, or ids mix types.
    ValueError
        For a non-numeric or NaN grade or score, a repeated (query, doc) pair (naming both
        records), or invalid options.

    Examples
    --------
    >>> from rankereval import Precision
    >>> from rankereval.io import from_records
    >>> qrels = [("q1", "d1", 1), ("q1", "d2", 0), ("q2", "d3", 2)]
    >>> run = [("q1", "d2", 3.5), ("q1", "d1", 1.0), ("q2", "d3", 0.5)]
    >>> from_records(qrels, run).score(Precision(1))
    array([0., 1.])
    """
    _check_options(relevance_level, tie_break, "score", missing, extra, depth, ties)
    lq, ld, lv = _columns(qrels, "qrels", _QRELS_FIELDS)
    rq, rd, rv = _columns(run, "run", _RUN_FIELDS)

    def locate(row):
        return f"record {row}"

    return _from_columns((lq, ld, lv), (rq, rd, rv), (locate, locate), relevance_level, tie_break, missing, extra,
                         depth, ties)


def _from_columns(qrels, run, locators, relevance_level, tie_break, missing, extra, depth, ties="break",
                  intents=None):
    """TrecData of the (queries, documents, values) columns of the qrels and the run, through
    the DataFrame path of :func:`from_dataframes`; ``intents``: the intent of each qrels entry
    (diversity judgements), or None."""
    _check_ids(qrels[0], run[0], "query", ("qrels", "run"))
    _check_ids(qrels[1], run[1], "doc", ("qrels", "run"))
    frame = _frame(*qrels, "relevance")
    if intents is not None:
        frame["intent"] = _pandas().Series(intents, dtype=object)
    return _from_frames(frame, _frame(*run, "score"), "query", "item", "relevance", "score",
                        None, "score", relevance_level, tie_break, missing, extra, depth, ("qrels", "run"),
                        locators, "document", ties, "intent" if intents is not None else None)
