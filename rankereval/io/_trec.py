"""The public readers and TREC's conventions (options, missing and extra queries)."""
import os
from numbers import Real

import numpy as np

from rankereval._utils._choices import EXTRA, MISSING, ORDER_BY, TIE_BREAKS  # noqa: F401  (the options' values)
from rankereval._validation import check_k
from rankereval.io._assemble import (_PackedIdArray, _Side, _assemble, _r, _union_ids, _unpack_ids,
                                     _unpack_short_strings)
from rankereval.io._parse import _QRELS, _QRELS_INTENTS, _RUN, _parse
from rankereval.io._source import _arrow_memory, _pandas



def _check_options(relevance_level, tie_break, order_by, missing, extra, depth=None, ties="break"):
    from rankereval.data._rankings import check_ties_keep

    check_ties_keep(ties)
    if depth is not None:
        check_k(depth, "depth", allow_none=True)
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, (Real, np.integer, np.floating)) \
            or not np.isfinite(float(relevance_level)):
        raise ValueError(f"relevance_level must be a finite number, got {relevance_level!r}")
    for value, allowed, name in ((tie_break, TIE_BREAKS, "tie_break"), (order_by, ORDER_BY, "order_by"),
                                 (missing, MISSING, "missing"), (extra, EXTRA, "extra")):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


def sample_paths():
    """Paths ``(qrels, run)`` of the small sample shipped with the package.

    A synthetic TREC pair (20 queries, 50 ranked documents each, graded judgements) made by
    ``rankereval/_sample/make_sample.py``; ``rankereval example`` evaluates it.
    """
    base = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "_sample")
    return os.path.join(base, "qrels.txt"), os.path.join(base, "run.txt")


def read_trec(qrels, run, relevance_level=1, tie_break="trec_eval", order_by="score", missing="drop",
              extra="drop", progress=None, depth=None, *, ties="break", intents=False):
    """Read a TREC qrels file and a TREC run file into labels and rankings.

    Parameters
    ----------
    qrels : str, path or binary file object
        Judgements, one ``query iteration docid relevance`` line each; plain or gzip.
    run : str, path or binary file object
        The run, one ``query Q0 docid rank score tag`` line each; plain or gzip.
    relevance_level : number, default=1
        Grade from which a document counts as relevant for binary metrics (``trec_eval -l``).
    tie_break : {'trec_eval', 'trec_eval9', 'docid', 'input'}, default='trec_eval'
        Order of documents with equal scores (or ranks): ``'trec_eval'`` compares scores as
        64-bit doubles and puts the larger docid first (byte-wise string order), as
        trec_eval 10.0; ``'trec_eval9'`` compares them as 32-bit floats first, as trec_eval
        9.x and pytrec_eval (which bundles trec_eval 9) do; ``'docid'`` compares exact
        scores, smaller docid first; ``'input'`` compares exact scores and keeps the file
        order.
    order_by : {'score', 'rank'}, default='score'
        Rank documents by descending score (as ``trec_eval``) or by ascending rank field.
    missing : {'drop', 'empty', 'error'}, default='drop'
        Queries of the qrels that the run does not rank: dropped (``trec_eval``), evaluated
        with an empty ranking (``trec_eval -c``) or an error.
    extra : {'drop', 'keep', 'error'}, default='drop'
        Queries of the run without judgements: dropped (``trec_eval``), kept with empty labels
        (their metrics are NaN) or an error.
    progress : bool or None, default=None
        Show a tqdm progress bar while reading; None: for files over 32 MB when stderr is a
        terminal.
    depth : int or None, default=None
        Keep only the first ``depth`` documents of each ranking, after ordering
        (``trec_eval -M``); None keeps them all.
    ties : {'break', 'keep'}, default='break'
        'keep' also records which documents have equal scores (or ranks) in
        :attr:`Rankings.ties <rankereval.Rankings.ties>`, for metrics over every order of
        the tied documents (``ties="expected"`` in :func:`rankereval.evaluate` and
        :meth:`Metric.score <rankereval.Metric.score>`); the order is ``tie_break``'s
        either way. With ``depth``, a group crossing the depth is cut there, as the run is.
    intents : bool, default=False
        Read ``qrels`` as diversity qrels (ndeval's and the TREC Web track's
        ``query subtopic docid grade``): the second field is the intent (subtopic) of the
        judgement, and a document may be judged once per intent. ``numeric_labels`` are then
        :class:`~rankereval.IntentLabels` (for the intent-aware measures, e.g.
        ``alpha_nDCG@20``), every other metric reading each document's largest grade over the
        intents. Declared, not detected: both formats have four fields, and the second field of
        an ordinary qrels file (the "iteration") is not interpreted.

    Returns
    -------
    TrecData
        ``binary_labels``, ``numeric_labels``, ``rankings``, ``query_ids``, ``doc_ids`` and a
        ``report`` of what was read and dropped.

    Raises
    ------
    TrecFormatError
        (a ``ValueError``) for a malformed file: the message names the file, the line and the
        problem (column count, non-numeric or NaN value, duplicate document, bad encoding).
    ValueError
        For invalid options, or if ``missing``/``extra`` is ``'error'`` and such queries
        exist, or if no query is left to evaluate.
    OSError
        If a file cannot be opened.

    Examples
    --------
    >>> from rankereval import AP
    >>> from rankereval.io import read_trec, sample_paths
    >>> data = read_trec(*sample_paths(), relevance_level=2)
    >>> data.report.n_queries, data.report.missing_queries
    (20, ())
    >>> round(data.mean(AP(100)), 4)
    0.4909
    """
    _check_options(relevance_level, tie_break, order_by, missing, extra, depth, ties)
    _check_intents(intents)
    _pandas()  # fail early, with an installation hint, if pandas is missing
    with _arrow_memory():
        return _read_trec(qrels, run, relevance_level, tie_break, order_by, missing, extra, progress, depth,
                          ties=ties, intents=intents)


def _read_trec_for_printing(qrels, run, relevance_level=1, tie_break="trec_eval", order_by="score",
                            missing="drop", extra="drop", progress=None, depth=None, ties="break", intents=False):
    """:func:`read_trec` for the command line, which prints the query ids and looks up only
    a few document ids (ties, error messages): when every id is short (at most 8 bytes, as
    most query and document ids are) and the lines are plain, ``query_ids`` is a NumPy string
    array, ``doc_ids`` the packed ids (unpacked when read, see ``_PackedIdArray``), and
    neither pandas nor pyarrow is imported (together about 0.4 s of CPU, most of the time of
    an everyday file); otherwise the same TrecData as :func:`read_trec`."""
    _check_options(relevance_level, tie_break, order_by, missing, extra, depth, ties)
    _check_intents(intents)
    with _arrow_memory():
        return _read_trec(qrels, run, relevance_level, tie_break, order_by, missing, extra, progress, depth,
                          numpy_ids=True, ties=ties, intents=intents)


def _check_intents(intents):
    if not isinstance(intents, (bool, np.bool_)):
        raise TypeError(f"intents must be True or False, got {intents!r}")


def _read_trec(qrels, run, relevance_level, tie_break, order_by, missing, extra, progress, depth,
               numpy_ids=False, ties="break", intents=False):
    pq = _parse(qrels, _QRELS_INTENTS if intents else _QRELS, progress)
    t_l, ut_l = pq.t.factorize() if intents else (None, None)
    q_l, uq_l = pq.q.factorize(packed=True)
    d_l, ud_l = pq.d.factorize(packed=True)
    # the run's short ids get their codes in tables that start from the labels' ids: the
    # codes of the labels' ids, then the run's other ids in order of first appearance
    pr = _parse(run, _RUN, progress, need_rank=order_by == "rank",
                seeds=(uq_l if _is_packed(uq_l) else None, ud_l if _is_packed(ud_l) else None))
    q_r, uq_r = pr.q.factorize(packed=True)
    d_r, ud_r = pr.d.factorize(packed=True)
    uniques = (uq_l, uq_r, ud_l, ud_r)
    packed = [_is_packed(u) for u in uniques]
    if all(packed) and pr.q.seeded and pr.d.seeded:  # short ids only: the run's codes are the joint ones
        query_ids, doc_ids = uq_r, ud_r
        if numpy_ids:
            query_ids, doc_ids = _unpack_ids(query_ids), _PackedIdArray(doc_ids)
        else:
            pd = _pandas()
            query_ids = pd.Index(_unpack_short_strings(query_ids).to_pandas(), name="query")
            doc_ids = pd.Index(_unpack_short_strings(doc_ids).to_pandas(), name="docid")
        lab_q, lab_d, run_q, run_d = q_l, d_l, q_r, d_r
    else:
        uq_l, uq_r, ud_l, ud_r = (_unpack_short_strings(u) if p else u for u, p in zip(uniques, packed))
        query_ids, ml, mr = _union_ids(uq_l, uq_r)
        doc_ids, dl, dr = _union_ids(ud_l, ud_r)
        query_ids = query_ids.rename("query")
        doc_ids = doc_ids.rename("docid")
        lab_q, lab_d, run_q, run_d = ml[q_l], dl[d_l], mr[q_r], dr[d_r]
    del q_l, d_l, q_r, d_r
    pq.q = pq.d = pr.q = pr.d = None  # the id strings live on in query_ids and doc_ids only

    def side(p, q, d, t=None, ut=None):
        return _Side(q, d, p.value, p.rank, len(p), p.name, p.error, lambda row: f"on line {p.line(row)}",
                     p.n_comments, p.n_extra_fields, t, None if ut is None else _id_list(ut))

    lab = side(pq, lab_q, lab_d, t_l, ut_l)
    run = side(pr, run_q, run_d)
    del lab_q, lab_d, run_q, run_d
    return _assemble(lab, run, query_ids, doc_ids, relevance_level, tie_break, order_by, missing, extra,
                     "document", depth, ties)


def _id_list(ids):
    """The ids of a column's uniques (pyarrow strings, a pandas Index or an array) as a list."""
    return ids.to_pylist() if hasattr(ids, "to_pylist") else list(ids)


def _is_packed(ids):
    """Whether ``ids`` are short ids packed into 64-bit integers (see :class:`_IdColumn`)."""
    return isinstance(ids, np.ndarray) and ids.dtype == np.uint64


def order_columns(columns, score_col, rank_col, what):
    """``(score_col, rank_col)``, one of them None: the column a run is ordered by, as given,
    else the run's ``'score'`` column, else its ``'rank'`` column (``columns``: the run's
    column names; ``what``: its name in messages)."""
    if score_col is not None and rank_col is not None:
        raise ValueError("give score_col or rank_col, not both")
    if score_col is None and rank_col is None:
        if "score" in columns:
            return "score", None
        if "rank" in columns:
            return None, "rank"
        raise ValueError(f"{what} has neither a 'score' nor a 'rank' column; name one with score_col= "
                         f"or rank_col= (columns: {columns})")
    return score_col, rank_col


def from_dataframes(labels, run, query_col="query", item_col="item", label_col="label", score_col=None,
                    rank_col=None, relevance_level=1, tie_break="trec_eval", missing="drop", extra="drop",
                    depth=None, *, ties="break", intent_col=None):
    """Labels and rankings from two pandas DataFrames in long format.

    Parameters
    ----------
    labels : pandas.DataFrame
        One row per judged (query, item) pair with columns ``query_col``, ``item_col`` and
        ``label_col`` (numeric grades).
    run : pandas.DataFrame
        One row per ranked (query, item) pair with ``query_col``, ``item_col`` and either a
        score column (higher is better) or a rank column (lower is better).
    query_col, item_col : str, default='query', 'item'
        Id columns (the same names in both frames); any hashable dtype.
    label_col : str, default='label'
        Grade column of ``labels``.
    score_col, rank_col : str or None
        Give one of them. If both are None: ``'score'`` if ``run`` has such a column, else
        ``'rank'``.
    relevance_level, tie_break, missing, extra, depth, ties
        As in :func:`read_trec`. ``tie_break`` compares item ids in their natural order
        (numbers numerically, strings lexicographically).
    intent_col : str or None, default=None
        The intent (subtopic) column of ``labels``, for diversity judgements: one row per
        (query, intent, item), and ``numeric_labels`` are :class:`~rankereval.IntentLabels`
        (as ``read_trec(..., intents=True)``).

    Returns
    -------
    TrecData
        As :func:`read_trec`; ``query_ids`` and ``doc_ids`` hold the original ids.

    Raises
    ------
    ValueError
        For a missing column, missing ids, non-numeric/NaN grades or scores, non-integer
        ranks, duplicate (query, item) pairs (naming the offending row) or invalid options;
        if the query or item ids of the two frames are of different kinds (numbers in one,
        strings in the other: ``1`` and ``"1"`` would never match, and every metric would
        be 0), naming the column and both kinds.

    Examples
    --------
    >>> import pandas as pd
    >>> from rankereval import Precision
    >>> from rankereval.io import from_dataframes
    >>> qrels = pd.DataFrame({"query": ["a", "a", "b"], "item": [10, 11, 12], "label": [1, 0, 2]})
    >>> run = pd.DataFrame({"query": ["a", "a", "b", "b"], "item": [11, 10, 12, 13],
    ...                     "score": [0.9, 0.5, 0.8, 0.3]})
    >>> data = from_dataframes(qrels, run)
    >>> data.rankings.to_list()
    [[1, 0], [2, 3]]
    >>> list(data.doc_ids)
    [10, 11, 12, 13]
    >>> data.score(Precision(1))
    array([0., 1.])
    """
    order_by = "rank" if rank_col is not None else "score"
    _check_options(relevance_level, tie_break, order_by, missing, extra, depth, ties)
    pd = _pandas()
    for df, what in ((labels, "labels"), (run, "run")):
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    score_col, rank_col = order_columns(list(run.columns), score_col, rank_col, "run")
    order_by = "rank" if rank_col is not None else "score"
    value_col = rank_col if rank_col is not None else score_col
    if intent_col is not None and not isinstance(intent_col, str):
        raise TypeError(f"intent_col must be a column name (str) or None, got {intent_col!r}")
    for df, what, cols in ((labels, "labels", (query_col, item_col, label_col) + (
            (intent_col,) if intent_col is not None else ())),
                           (run, "run", (query_col, item_col, value_col))):
        absent = [c for c in cols if c not in df.columns]
        if absent:
            raise ValueError(f"{what} DataFrame has no column {absent[0]!r} (columns: {list(df.columns)})")

    def locate(df):
        return lambda row: f"row {row} (index {_r(df.index[row])})"

    return _from_frames(labels, run, query_col, item_col, label_col, score_col, rank_col, order_by, relevance_level,
                        tie_break, missing, extra, depth, ("labels DataFrame", "run DataFrame"),
                        (locate(labels), locate(run)), "item", ties, intent_col)


def _from_frames(labels, run, query_col, item_col, label_col, score_col, rank_col, order_by, relevance_level,
                 tie_break, missing, extra, depth, sources, locators, doc_word, ties="break", intent_col=None):
    """TrecData of two checked long-format DataFrames (of the user's, or built from dicts or
    records): ``sources`` name the two inputs and ``locators`` describe a row of each in
    error messages."""
    pd = _pandas()

    def where_for(source, locate):
        def where(row, reason):
            return ValueError(f"{source}, {locate(row)}: {reason}")

        def short(row):
            return f"in {locate(row)}"
        return where, short

    lwhere, lshort = where_for(sources[0], locators[0])
    rwhere, rshort = where_for(sources[1], locators[1])
    for df, where, col in ((labels, lwhere, query_col), (labels, lwhere, item_col),
                           (run, rwhere, query_col), (run, rwhere, item_col)) + (
            ((labels, lwhere, intent_col),) if intent_col is not None else ()):
        isna = df[col].isna().to_numpy()
        if isna.any():
            raise where(int(np.argmax(isna)), f"missing id in column {col!r}")

    for col in (query_col, item_col):
        _check_id_kinds(labels[col], run[col], col)

    grades = _numeric_column(labels, label_col, lwhere, "label")
    if order_by == "rank":
        ranks = _integer_column(run, rank_col, rwhere)
        values = ranks.astype(np.float64)
    else:
        values = _numeric_column(run, score_col, rwhere, "score", allow_inf=True)
        ranks = None

    def codes_of(a, b):
        both = pd.concat([a, b], ignore_index=True)
        codes, uniques = pd.factorize(both)
        return codes[: len(a)].astype(np.int64), codes[len(a):].astype(np.int64), pd.Index(uniques)

    ql, qr, query_ids = codes_of(labels[query_col], run[query_col])
    dl, dr, doc_ids = codes_of(labels[item_col], run[item_col])
    query_ids = query_ids.rename(query_col)
    doc_ids = doc_ids.rename(item_col)
    intents = intent_ids = None
    if intent_col is not None:
        intents, intent_ids = pd.factorize(labels[intent_col])
        intents, intent_ids = intents.astype(np.int64), list(intent_ids)
    lab = _Side(ql, dl, grades, None, len(labels), sources[0], lwhere, lshort, intent=intents, intent_ids=intent_ids)
    runs = _Side(qr, dr, values, ranks, len(run), sources[1], rwhere, rshort)
    return _assemble(lab, runs, query_ids, doc_ids, relevance_level, tie_break, order_by, missing, extra,
                     doc_word, depth, ties)


_KINDS = {"integer": "numbers", "floating": "numbers", "mixed-integer-float": "numbers", "decimal": "numbers",
          "boolean": "numbers", "string": "strings", "bytes": "bytes"}


def _id_kind(series):
    """'numbers', 'strings', 'bytes', or None (empty, or another/mixed kind)."""
    pd = _pandas()
    if len(series) == 0:
        return None
    return _KINDS.get(pd.api.types.infer_dtype(series, skipna=True))


def _check_id_kinds(a, b, col):
    """ValueError if column ``col`` holds ids of different kinds in the labels and the run
    (e.g. integers and strings): they would never be equal, silently."""
    ka, kb = _id_kind(a), _id_kind(b)
    if ka is not None and kb is not None and ka != kb:
        raise ValueError(
            f"column {col!r} holds {ka} in the labels DataFrame but {kb} in the run DataFrame "
            f"(e.g. {_r(a.iloc[0])} and {_r(b.iloc[0])}): ids of different kinds never match; convert one "
            f"side, e.g. run[{col!r}] = run[{col!r}].astype(labels[{col!r}].dtype) or both .astype(str)")


def _numeric_column(df, col, where, what, allow_inf=False):
    """Column ``col`` as float64 (booleans as 0/1); raise ``where(row, reason)`` for the first
    non-numeric or NaN (or, unless ``allow_inf``, infinite) value."""
    pd = _pandas()
    s = df[col]
    if not pd.api.types.is_numeric_dtype(s.dtype):
        conv = pd.to_numeric(s, errors="coerce")
        bad = conv.isna().to_numpy() & s.notna().to_numpy()
        if bad.any():
            i = int(np.argmax(bad))
            raise where(i, f"{what} in column {col!r} is not a number: {_r(s.iloc[i])}")
        s = conv
    v = s.to_numpy(dtype=np.float64, na_value=np.nan)
    bad = np.isnan(v) if allow_inf else ~np.isfinite(v)
    if bad.any():
        i = int(np.argmax(bad))
        raise where(i, f"{what} in column {col!r} must be a {'' if allow_inf else 'finite '}number, got {v[i]}")
    return v


def _integer_column(df, col, where):
    v = _numeric_column(df, col, where, "rank")
    bad = v != np.round(v)
    if bad.any():
        i = int(np.argmax(bad))
        raise where(i, f"rank in column {col!r} must be an integer, got {v[i]}")
    return v.astype(np.int64)


#: the reader of the command line's output options (rankereval.cli)
read_trec_for_printing = _read_trec_for_printing
