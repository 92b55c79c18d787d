"""Id assembly: one integer id space for the documents of the labels and the run, one
row per query, rankings in trec_eval's order."""
import sys
import warnings

import numpy as np

from rankereval.io._result import ReadReport, TrecData, _have, _queries
from rankereval.io._source import _pandas
from rankereval.io._text import PackedIds


def _is_arrow(values):
    """Whether ``values`` is a pyarrow array (which it can only be once pyarrow is loaded)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(values, pa.Array)


def _factorize(values):
    """(codes, uniques) of a pyarrow string array, of short ids packed by
    :func:`_pack_short_strings` (uint64; uniques: a pyarrow string array), or of a
    NumPy/pandas array (uniques: pandas.Index); uniques in order of first appearance."""
    if isinstance(values, np.ndarray) and values.dtype == np.uint64:
        table = PackedIds()
        codes = table.encode(values)
        return codes, _unpack_short_strings(table.uniques())
    if _is_arrow(values):
        import pyarrow.compute as pc

        packed = _pack_short_strings(values)
        if packed is not None:  # hashing 8-byte integers is several times faster than strings
            return _factorize(packed)
        enc = pc.dictionary_encode(values)
        return enc.indices.to_numpy(zero_copy_only=False), enc.dictionary  # int32
    pd = _pandas()
    codes, uniques = pd.factorize(values)
    if not isinstance(uniques, pd.Index):
        uniques = pd.Index(uniques)
    return codes, uniques


def _pack_short_strings(values):
    """Each string of a pyarrow string array as a uint64 (its bytes, big-endian, zero-padded),
    or None if a string is empty, longer than 8 bytes or contains a NUL byte (then the
    packing would not be one-to-one). Order-preserving: comparing the integers compares the
    strings."""
    import pyarrow as pa

    from rankereval.io._text import pack_ids

    n = len(values)
    if values.type != pa.string() or values.null_count:
        return None
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset: values.offset + n + 1]
    data = values.buffers()[2]
    data = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, dtype=np.uint8)
    out = np.empty(n, dtype=np.uint64)
    return out if pack_ids(offsets, data, out) else None


def _unpack_short_strings(packed):
    """The pyarrow string array of uint64s made by :func:`_pack_short_strings`."""
    import pyarrow as pa

    return pa.array(packed.astype(">u8").view("S8")).cast(pa.string())


def _unpack_ids(packed):
    """A NumPy unicode array of the ids packed by :func:`_pack_short_strings` (or by the
    short-id parser): what the command line prints, without pyarrow or pandas."""
    raw = packed.astype(">u8").view("S8")  # NumPy drops the padding NULs of each item
    try:
        return raw.astype("U8")  # ASCII (what the short-id parser reads)
    except UnicodeDecodeError:
        return np.char.decode(raw, "utf-8")


class _PackedIdArray:
    """Ids packed by :func:`_pack_short_strings`, unpacked when read: ``ids[i]`` (a str),
    ``ids[codes]`` (a NumPy string array), ``len`` and iteration. The command line's document
    ids: it looks a few up (ties, error messages) and never prints them all, so a million ids
    stay 8 bytes each instead of a 32-byte string (and the time to make it)."""

    def __init__(self, packed):
        self.packed = packed

    def __len__(self):
        return len(self.packed)

    def __getitem__(self, key):
        got = _unpack_ids(np.atleast_1d(self.packed[key]))
        return got[0].item() if np.ndim(self.packed[key]) == 0 else got

    def __iter__(self):
        return iter(_unpack_ids(self.packed).tolist())


class _IdColumn:
    """One id column of a file, taken block by block (:meth:`add`) and factorised at the end
    (:meth:`factorize`, as :func:`_factorize`).

    Short ids (at most 8 bytes: query numbers, most document ids) are packed into 64-bit
    integers and given their codes block by block (a :class:`~rankereval.io._text.PackedIds`
    table): 4 bytes a line are kept instead of the string's bytes and offset. Once an id is
    longer, the column keeps strings (pyarrow's, hashed at the end). With ``runs=True`` only
    one value per run of equal neighbours is kept, and its length (query ids: run files list
    each query's lines together). ``arrow``: the blocks are pyarrow string arrays (else
    NumPy object arrays, factorised by pandas), and so are the uniques, even of an empty
    column.

    ``seed``: packed ids without repeats (the other file's ids of the column) that take the
    codes 0, 1, ... before the column's own ids; the run's ids then get the joint codes of
    the labels' and the run's ids directly, with no second table (``seeded`` says whether
    the uniques start with the seed: not without pyarrow, nor once the column holds strings).
    """

    def __init__(self, arrow, runs=False, seed=None):
        self.arrow = arrow
        self.runs = runs
        self.table = PackedIds() if arrow else None  # None: strings
        self.seeded = seed is not None and self.table is not None
        if self.seeded:
            self.table.encode(seed)
        self.parts = []  # codes (while packed) or ids of each block
        self.lengths = []  # per part: lengths of its runs, or None (runs of 1)

    def add(self, values):
        """Append the ids of a block: a pyarrow string array, a NumPy object array, or (with
        ``arrow``) a uint64 array of ids packed as :func:`_pack_short_strings` packs them."""
        if len(values) == 0:
            return
        if isinstance(values, np.ndarray) and values.dtype == np.uint64:  # packed by the parser
            packed = values
        else:
            packed = _pack_short_strings(values) if self.table is not None else None
            if packed is None and self.table is not None:  # a long id: strings from now on
                import pyarrow as pa

                strings = _unpack_short_strings(self.table.uniques())
                self.parts = [strings.take(pa.array(codes)) for codes in self.parts]
                self.table = None
                self.seeded = False  # the seed's ids are not the first of the strings
        if packed is not None and self.table is None:
            values, packed = _unpack_short_strings(packed), None
        lengths = None
        if self.runs:
            if packed is not None:
                packed, lengths = _runs(packed)
            else:
                values, lengths = _runs(values)
        self.parts.append(self.table.encode(packed) if packed is not None else values)
        self.lengths.append(lengths)

    def factorize(self, packed=False):
        """(codes, uniques); with ``packed``, the uniques of a column whose ids all were
        short stay packed (a uint64 array, see :func:`_unpack_ids`)."""
        codes, uniques = self.codes(packed)
        self.parts = self.lengths = self.table = None
        return codes, uniques

    def n_distinct(self):
        """The number of distinct ids so far (the seed's included), or None when the column
        holds strings (not counted until the end)."""
        return len(self.table) if self.table is not None else None

    def codes(self, packed=False):
        """(codes, uniques) of the ids so far, as :meth:`factorize`, keeping the column."""
        if self.table is not None:
            codes = _join_arrays(self.parts, np.int32)
            uniques = self.table.uniques() if packed else _unpack_short_strings(self.table.uniques())
        elif self.parts and self.arrow:
            codes, uniques = _factorize_chunks(self.parts)
        elif self.parts:
            codes, uniques = _factorize(_join_arrays(self.parts, object))
        else:
            codes, uniques = _factorize(np.zeros(0, dtype=object))
        if any(n is not None for n in self.lengths):
            lengths = np.concatenate([np.ones(len(p), dtype=np.int64) if n is None else n
                                      for p, n in zip(self.parts, self.lengths)])
            codes = np.repeat(codes, lengths)
        return codes, uniques


def _factorize_chunks(parts):
    """_factorize of pyarrow string arrays, without joining them first when pyarrow's
    dictionary_encode of a chunked array gives every chunk the same dictionary (as pyarrow
    does: one hash table over the chunks); else of the joined array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    enc = pc.dictionary_encode(pa.chunked_array(parts)).chunks
    uniques = enc[-1].dictionary
    if all(c.dictionary.equals(uniques) for c in enc):
        return np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in enc]), uniques
    return _factorize(_join_arrays(parts, object))


def _join_arrays(parts, dtype):
    """One array of the parts (NumPy arrays or pyarrow arrays, all of one kind)."""
    if not parts:
        return np.zeros(0, dtype=dtype)
    if len(parts) == 1:
        return parts[0]
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts)
    import pyarrow as pa

    return pa.concat_arrays(parts)


def _runs(values):
    """(first value of each run of equal neighbours, run lengths), or (values, None) when
    runs are short (then keeping them all costs less than the lengths)."""
    n = len(values)
    if isinstance(values, np.ndarray) and values.dtype != object:
        change = values[1:] != values[:-1]
    elif _is_arrow(values):
        import pyarrow.compute as pc

        change = pc.not_equal(values[1:], values[:-1]).to_numpy(zero_copy_only=False)
    else:
        change = values[1:] != values[:-1]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    if starts.size > n // 4:
        return values, None
    if _is_arrow(values):
        import pyarrow as pa

        firsts = values.take(pa.array(starts))
    else:
        firsts = values[starts]
    return firsts, np.diff(np.append(starts, n))


def _union_ids(u_labels, u_run):
    """Joint id map (the labels' ids first, then the run's other ids) as a pandas.Index, and
    the maps from each side's codes to the joint ids."""
    pd = _pandas()
    if _is_arrow(u_labels):
        import pyarrow as pa
        import pyarrow.compute as pc

        pos = pc.index_in(u_run, value_set=u_labels).fill_null(-1).to_numpy(zero_copy_only=False)
    else:
        pos = u_labels.get_indexer(u_run)
    new = pos < 0
    n_new = int(new.sum())
    dtype = np.int32 if len(u_labels) + n_new < 2**31 else np.int64
    run_map = pos.astype(dtype)
    run_map[new] = len(u_labels) + np.arange(n_new, dtype=dtype)
    if _is_arrow(u_labels):
        ids = pa.concat_arrays([u_labels, u_run.filter(pa.array(new))]) if n_new else u_labels
        ids = pd.Index(ids.to_pandas())
    else:
        ids = u_labels.append(u_run[new]) if n_new else u_labels
    return ids, np.arange(len(u_labels), dtype=dtype), run_map


def _sorted_order(index):
    """Positions of ``index`` in sorted order (first-appearance order if not sortable)."""
    try:
        return np.asarray(index.argsort(), dtype=np.int64)
    except TypeError:
        return np.arange(len(index), dtype=np.int64)


class _Side:
    """One input (qrels/labels or run) after id encoding.

    ``q``/``d`` are the joint integer query and document ids of each line; ``error(row,
    reason)`` builds the exception for line ``row`` and ``locate(row)`` describes it briefly.
    """

    def __init__(self, q, d, value, rank, n, source, error, locate, n_comments=0, n_extra_fields=0, intent=None,
                 intent_ids=None):
        # the intent (subtopic) code of each judgement line of diversity qrels, and the ids
        # of the codes; None for other inputs
        self.intent = intent
        self.intent_ids = intent_ids
        self.n_comments = n_comments
        self.n_extra_fields = n_extra_fields
        self.q = q
        self.d = d
        self.value = value
        self.rank = rank
        self.n = n
        self.source = source
        self.error = error
        self.locate = locate


def _first_duplicate(q, d, n_docs):
    """(first, second) rows of the earliest repeated (query, doc) pair, or None."""
    if q.size < 2:
        return None
    key = q.astype(np.int64) * max(int(n_docs), 1) + d
    order = np.argsort(key, kind="stable")
    ks = key[order]
    same = np.flatnonzero(ks[1:] == ks[:-1])
    if same.size == 0:
        return None
    second = order[same + 1]
    j = int(np.argmin(second))
    second_row = int(second[j])
    first_row = int(order[np.searchsorted(ks, ks[same[j]], side="left")])
    return first_row, second_row


def _assemble(lab, run, query_ids, doc_ids, relevance_level, tie_break, order_by, missing, extra,
              doc_word, depth=None, ties="break"):
    """TrecData of the two sides; ``query_ids`` and ``doc_ids`` are pandas Indexes, or NumPy
    arrays (the command line's reading, which needs no pandas). ``ties="keep"``: the
    rankings record their groups of equal scores (or ranks)."""
    from rankereval.data import BinaryLabels, InvalidValuesWarning, NumericLabels, Rankings

    n_q, n_docs = len(query_ids), len(doc_ids)

    # duplicates in the judgements would be summed by a sparse matrix: refuse them
    intents = lab.intent
    if intents is not None:  # diversity qrels: one judgement per (query, intent, document)
        n_t = max(len(lab.intent_ids), 1)
        dup = _first_duplicate(lab.q, intents.astype(np.int64) * max(n_docs, 1) + lab.d, n_t * max(n_docs, 1))
    else:
        dup = _first_duplicate(lab.q, lab.d, n_docs)
    if dup is not None:
        first, second = dup
        what = "" if intents is None else f", intent {_r(lab.intent_ids[intents[second]])}"
        hint = "" if intents is not None else (
            "; judgements per intent (subtopic), as in TREC Web diversity qrels, are read with intents=True "
            "(--intents on the command line; from_dataframes: intent_col=)")
        raise lab.error(second, f"duplicate judgement for query {_r(query_ids[lab.q[second]])}{what} and "
                                f"{doc_word} {_r(doc_ids[lab.d[second]])} "
                                f"(first given {lab.locate(first)}){hint}")

    in_qrels = np.zeros(n_q, dtype=bool)
    in_qrels[lab.q] = True
    in_run = np.zeros(n_q, dtype=bool)
    in_run[run.q] = True
    order = _sorted_order(query_ids)  # query codes in row order
    missing_codes = order[in_qrels[order] & ~in_run[order]]
    extra_codes = order[in_run[order] & ~in_qrels[order]]
    if missing == "error" and missing_codes.size:
        raise ValueError(
            f"{missing_codes.size} {_queries(missing_codes.size)} of {lab.source} {_have(missing_codes.size)} "
            f"no ranking in {run.source}: {_list(query_ids[missing_codes])} (missing='drop' ignores "
            "them, missing='empty' evaluates them with an empty ranking)")
    if extra == "error" and extra_codes.size:
        raise ValueError(
            f"{extra_codes.size} {_queries(extra_codes.size)} of {run.source} {_have(extra_codes.size)} "
            f"no judgements in {lab.source}: {_list(query_ids[extra_codes])} (extra='drop' ignores "
            "them, extra='keep' keeps them with empty labels)")
    keep = in_qrels & in_run
    if missing == "empty":
        keep |= in_qrels
    if extra == "keep":
        keep |= in_run
    row_codes = order[keep[order]]
    n_rows = row_codes.size
    if n_rows == 0:
        raise ValueError(
            f"no query to evaluate: {lab.source} has {int(in_qrels.sum())} queries, {run.source} has "
            f"{int(in_run.sum())}, none in common" + ("" if missing == "empty" else
                                                      " (missing='empty' evaluates judged queries "
                                                      "without a ranking)"))
    row_dtype = np.int32 if n_rows < 2**31 else np.int64  # half the traffic of int64 per line
    row_of = np.full(n_q, -1, dtype=row_dtype)
    row_of[row_codes] = np.arange(n_rows, dtype=row_dtype)

    # ---- labels: the judgement lines of the kept queries in (row, document) order, once
    lrow = row_of[lab.q]
    lk = lrow >= 0
    rows_l, docs_l, grades = lrow[lk], lab.d[lk], lab.value[lk]
    n_negative = int(np.count_nonzero(lab.value < 0))
    by_row = np.lexsort((docs_l, rows_l))
    rows_l, docs_l, grades = rows_l[by_row], docs_l[by_row], grades[by_row]
    if intents is not None:
        # the lines of each intent, for IntentLabels; every other label object holds each
        # document's largest grade over the intents
        per_intent = (rows_l, docs_l, intents[lk][by_row], grades)
        rows_l, docs_l, grades = _collapse_intents(rows_l, docs_l, grades)
    numeric = _labels_of(NumericLabels, rows_l, docs_l, np.maximum(grades, 0.0), n_rows, n_docs)
    relevant = grades >= relevance_level
    binary = _labels_of(BinaryLabels, rows_l, docs_l, relevant, n_rows, n_docs)
    n_without = int(np.count_nonzero(np.diff(binary.indptr) == 0))
    # every judgement line with a grade >= 0 is a judged document (grade 0: judged not
    # relevant), as trec_eval counts them (a negative grade: in the pool, not judged), and
    # the relevant ones whatever their grade; for Bpref, Judged and RBP's residual
    judged = (grades >= 0) | relevant
    judged_labels = _labels_of(BinaryLabels, rows_l, docs_l, judged, n_rows, n_docs)
    if n_negative:  # the pool: every judgement line, also "in the pool, not judged" (infAP)
        pool = _labels_of(BinaryLabels, rows_l, docs_l, np.ones(grades.shape[0], dtype=bool), n_rows, n_docs)
        judged_labels = judged_labels.with_judged(pool)
    binary = binary.with_judged(judged_labels)
    numeric = numeric.with_judged(judged_labels)
    if intents is not None:
        numeric = _intent_labels(per_intent, lab.intent_ids, doc_ids, n_rows, n_docs).with_judged(judged_labels)

    # ---- rankings
    rrow = row_of[run.q]
    rk = rrow >= 0
    all_kept = bool(rk.all())
    sel = None if all_kept else np.flatnonzero(rk)
    rows_r = rrow if all_kept else rrow[sel]
    if order_by == "rank":
        key = run.rank.astype(np.float64)
    elif tie_break == "trec_eval9":
        with np.errstate(over="ignore"):
            key = -run.value.astype(np.float32)  # trec_eval <= 9 kept scores as 32-bit floats
    else:
        key = -run.value
    if not all_kept:
        key = key[sel]
    perm = _order(rows_r, key)  # positions into the kept lines, in ranking order
    rows_s = rows_r if perm is None else rows_r[perm]
    key_s = key if perm is None else key[perm]
    tied = np.flatnonzero((rows_s[1:] == rows_s[:-1]) & (key_s[1:] == key_s[:-1]))
    n_tied = 0
    tie_fix = None  # (positions, docs) that replace the docs of tied lines in file order
    if tied.size:
        members = np.unique(np.concatenate((tied, tied + 1)))
        n_tied = int(members.size)
        if tie_break != "input":
            pos = members if perm is None else perm[members]  # of the tied lines, among the kept
            src = pos if all_kept else sel[pos]
            doc_rank = _id_rank(doc_ids, run.d[src])
            start = np.ones(members.size, dtype=bool)
            start[1:] = ~((members[1:] == members[:-1] + 1) & np.isin(members[:-1], tied, assume_unique=True))
            group = np.cumsum(start)
            sub = np.lexsort((-doc_rank if tie_break in ("trec_eval", "trec_eval9") else doc_rank, group))
            if perm is None and all_kept:  # in order but for the ties: reorder only them
                tie_fix = (members, run.d[src[sub]])
            else:
                if perm is None:
                    perm = np.arange(rows_r.size, dtype=np.int64)
                perm[members] = pos[sub]
    if perm is None:
        docs_sorted = run.d if all_kept else run.d[sel]
        if tie_fix is not None:
            docs_sorted = docs_sorted.copy()
            docs_sorted[tie_fix[0]] = tie_fix[1]
    else:
        docs_sorted = run.d[perm] if all_kept else run.d[sel[perm]]
    # the lines in ranking order have ascending rows: each row's count is where the next starts
    counts = np.diff(np.append(np.searchsorted(rows_s, np.arange(n_rows, dtype=rows_s.dtype)), rows_s.size))
    tie_flags = None
    if ties == "keep":  # line t ties line t + 1 (same row, same key): tie_break only ordered them
        tie_flags = np.zeros(rows_s.size, dtype=bool)
        tie_flags[tied] = True
    n_truncated = 0
    if depth is not None and counts.size and counts.max() > depth:
        # trec_eval -M: the first ``depth`` documents of each ranking, after ordering
        n_truncated = int(np.count_nonzero(counts > depth))
        starts = np.cumsum(counts) - counts
        rows_in_order = np.repeat(np.arange(n_rows, dtype=np.int64), counts)
        within = np.arange(docs_sorted.size) - starts[rows_in_order] < depth
        docs_sorted = docs_sorted[within]
        if tie_flags is not None:
            tie_flags = tie_flags[within]
        counts = np.minimum(counts, depth)
    if counts.size and counts.min() == counts.max() > 0:
        split = docs_sorted.reshape(n_rows, counts[0])  # equal lengths: a 2-D array, no padding
    else:
        split = np.split(docs_sorted, np.cumsum(counts)[:-1])
    with warnings.catch_warnings():
        # empty rankings (missing='empty') are counted in the report
        warnings.simplefilter("ignore", InvalidValuesWarning)
        try:
            rankings = Rankings.from_ranked_indices(split)
        except ValueError:
            dup = _first_duplicate(run.q, run.d, n_docs)
            if dup is None:
                raise
            first, second = dup
            raise run.error(second, f"duplicate {doc_word} {_r(doc_ids[run.d[second]])} for query "
                                    f"{_r(query_ids[run.q[second]])} (first given {run.locate(first)})") from None
    if tie_flags is not None:
        # the flags in the rankings' padded layout; a row's last position ties nothing after it
        ends = np.cumsum(counts)
        tie_flags[ends[counts > 0] - 1] = False
        row_of_line = np.repeat(np.arange(n_rows, dtype=np.int64), counts)
        padded = np.zeros(rankings.indices.shape, dtype=bool)
        padded[row_of_line, np.arange(tie_flags.size) - (ends - counts)[row_of_line]] = tie_flags
        rankings = Rankings._from_padded(rankings.indices, rankings.lengths, ties=padded)

    report = ReadReport(
        qrels_source=lab.source,
        run_source=run.source,
        n_judgements=int(lab.n),
        n_run_lines=int(run.n),
        n_queries=int(n_rows),
        n_qrels_queries=int(in_qrels.sum()),
        n_run_queries=int(in_run.sum()),
        missing_queries=_ids_tuple(query_ids[missing_codes]),
        missing=missing if missing != "error" else "drop",
        extra_queries=_ids_tuple(query_ids[extra_codes]),
        extra=extra if extra != "error" else "drop",
        n_dropped_run_lines=int(run.n - rows_r.size),
        n_queries_without_relevant=n_without,
        n_negative_labels=n_negative,
        n_tied_lines=n_tied,
        relevance_level=float(relevance_level),
        tie_break=tie_break,
        order_by=order_by,
        n_comment_lines=(int(lab.n_comments), int(run.n_comments)),
        n_extra_field_lines=int(run.n_extra_fields),
        depth=depth,
        n_truncated_queries=n_truncated,
    )
    return TrecData(binary, numeric, rankings, query_ids[row_codes], doc_ids, report)


def _collapse_intents(rows, docs, grades):
    """The lines sorted by (row, document) with one line per (row, document): its largest grade."""
    new = np.ones(rows.size, dtype=bool)
    new[1:] = (rows[1:] != rows[:-1]) | (docs[1:] != docs[:-1])
    starts = np.flatnonzero(new)
    if not starts.size:
        return rows, docs, grades
    return rows[starts], docs[starts], np.maximum.reduceat(grades, starts)


def _intent_labels(lines, intent_ids, doc_ids, n_rows, n_docs):
    """IntentLabels of judgement lines ``(row, document, intent code, grade)``: the intents of
    each query numbered in the order of their ids (as numbers when all are integers, as
    ndeval reads them), ties of the greedy ideal broken by the larger document id (ndeval's
    comparison of document names)."""
    from rankereval.data import IntentLabels

    rows, docs, codes, grades = lines
    ids = np.empty(len(intent_ids), dtype=object)
    ids[:] = list(intent_ids)
    try:
        as_numbers = np.array([int(x) for x in ids], dtype=object)
        rank_of = np.argsort(np.argsort(as_numbers, kind="stable"), kind="stable")
    except (TypeError, ValueError):
        try:
            rank_of = np.argsort(np.argsort(ids.astype(str), kind="stable"), kind="stable")
        except TypeError:
            rank_of = np.arange(ids.size)
    key = rows.astype(np.int64) * max(ids.size, 1) + rank_of[codes]
    uniq, inverse = np.unique(key, return_inverse=True)
    uniq_rows = uniq // max(ids.size, 1)
    local = np.arange(uniq.size) - np.searchsorted(uniq_rows, uniq_rows, side="left")
    try:
        order = _id_rank(doc_ids, docs)
    except TypeError:  # ids that cannot be sorted: the larger item id first
        order = None
    return IntentLabels._from_lines(rows.astype(np.int64), docs.astype(np.int64), local[inverse.ravel()],
                                    np.asarray(grades, dtype=np.float64), n_rows, n_docs, order)


def _labels_of(cls, rows, docs, values, n_rows, n_docs):
    """Labels of class ``cls`` from lines sorted by (row, document), without repeats: the
    lines whose ``values`` are non-zero (``values``: grades, or a boolean mask for binary
    labels), built from the sorted columns directly (no SciPy)."""
    keep = values != 0
    rows, docs = rows[keep], docs[keep]
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    data = None if values.dtype == bool else np.ascontiguousarray(values[keep], dtype=np.float64)
    out = cls._from_ragged_fast(indptr, np.ascontiguousarray(docs, dtype=np.int64), data, n_docs)
    if out is None:  # not expected (checked, sorted, unique lines): the general path says why
        import scipy.sparse as sp

        ones = np.ones(docs.size) if data is None else data
        out = cls.from_matrix(sp.csr_array((ones, (rows, docs)), shape=(n_rows, n_docs)))
    return out


def _ids_tuple(ids):
    """The ids as a tuple of Python values (a NumPy array's items unwrapped)."""
    return tuple(ids.tolist()) if isinstance(ids, np.ndarray) else tuple(ids)


def _r(x):
    """repr of an id, without NumPy's scalar wrapper (``11``, not ``np.int64(11)``)."""
    return repr(x.item() if isinstance(x, np.generic) else x)


def _list(ids):
    ids = list(ids)
    shown = ", ".join(_r(x) for x in ids[:5])
    return shown + (f", ... ({len(ids) - 5} more)" if len(ids) > 5 else "")


def _order(rows, key):
    """Stable order of lines by (row, key); None when they are in that order already.

    Run files usually list each query's lines together, best first: that case is detected in
    linear time and needs at most a reordering of the query blocks, no sort.
    """
    n = rows.size
    if n < 2:
        return None
    brk = np.flatnonzero(rows[1:] != rows[:-1]) + 1
    starts = np.concatenate(([0], brk))
    block_rows = rows[starts]
    ascending = bool(np.all(block_rows[1:] > block_rows[:-1]))  # (then no need of np.unique)
    if ascending or np.unique(block_rows).size == block_rows.size:  # each query's lines together
        # no score goes up within a query (keys hold no NaN)
        up = key[1:] < key[:-1]
        up[brk - 1] = False
        if not up.any():
            if ascending:
                return None
            lengths = np.diff(np.append(starts, n))
            border = np.argsort(block_rows, kind="stable")
            lens = lengths[border]
            offsets = starts[border] - (np.cumsum(lens) - lens)
            return np.repeat(offsets, lens) + np.arange(n, dtype=np.int64)
    if key.dtype == np.float32 and rows.max() < 2**32:
        # one sort of a 64-bit composite (row, order-preserving bits of the 32-bit key)
        # instead of two stable sorts
        bits = (key + np.float32(0.0)).view(np.uint32)  # -0.0 == 0.0
        bits = np.where(bits >> np.uint32(31), ~bits, bits | np.uint32(0x80000000))
        composite = (rows.astype(np.uint64) << np.uint64(32)) | bits
        return np.argsort(composite, kind="stable")
    return np.lexsort((key, rows))


def _id_rank(doc_ids, codes):
    """Rank of each id (by the ids' own order) among the given ids."""
    values = doc_ids[codes]
    if isinstance(values, np.ndarray) and values.dtype.kind == "U":  # the command line's ids
        return np.unique(values, return_inverse=True)[1].astype(np.int64)
    pd = _pandas()
    try:
        ranks, _ = pd.factorize(values, sort=True)
    except TypeError as exc:
        raise TypeError(
            f"tie_break needs sortable document ids to break ties in score ({exc}); use "
            "tie_break='input' to keep the input order instead") from None
    return ranks.astype(np.int64)
