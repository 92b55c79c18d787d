"""Parsing TREC qrels and run bytes into columns (pyarrow when installed, else pandas)."""
import bisect
import contextvars
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from rankereval._threads import effective_n_threads
from rankereval.io._assemble import _first_duplicate, _IdColumn, _join_arrays, _unpack_ids
from rankereval.io._result import TrecFormatError
from rankereval.io._source import (_BLOCK_BYTES, LineTooLongError, _blocks, _collapse_spaces, _have_pyarrow,
                                   _light_normalise, _long_line_start, _pandas, _pyarrow_for_reading, _source_name,
                                   _too_long_reason)
from rankereval.io._text import parse_plain, scan_block


class _Format:
    def __init__(self, kind, columns, value, value_name, extra_fields):
        self.kind = kind
        self.columns = columns
        self.value = value
        self.value_name = value_name
        self.extra_fields = extra_fields  # whether fields after the last are ignored

    @property
    def ncols(self):
        return len(self.columns)

    def describe(self):
        return " ".join(self.columns)


_QRELS = _Format("qrels", ("query", "iteration", "docid", "relevance"), "relevance", "relevance grade", False)
# the diversity qrels of the TREC Web track (ndeval): the second field is the intent (subtopic)
_QRELS_INTENTS = _Format("qrels", ("query", "intent", "docid", "relevance"), "relevance", "relevance grade", False)


# trec_eval 10 ignores the fields of a run line after the sixth (the tag)
_RUN = _Format("run", ("query", "Q0", "docid", "rank", "score", "tag"), "score", "score", True)

_OTHER = {"qrels": _RUN, "run": _QRELS}

# a comment: a line whose first non-blank character is '#' (trec_eval 10), after tabs
# became spaces
_COMMENT = re.compile(rb"(?m)^ *#[^\n]*")


# the rows of a file from which check_duplicates looks for repeated pairs as blocks come (and
# again each time their number doubled): about 80 MB of columns, more than most files have
_DUPLICATE_CHECK_ROWS = 4_000_000


def _id_value(uniques, code):
    """The id of ``code`` as a Python value (uniques: pyarrow strings or a NumPy array)."""
    x = uniques[int(code)]
    if hasattr(x, "as_py"):
        return x.as_py()
    return x.item() if isinstance(x, np.generic) else x


def _id_at(column, uniques, code):
    """The id of ``code`` in the ``uniques`` of ``column.codes(packed=True)``."""
    if column.table is not None:  # short ids packed into uint64s
        return str(_unpack_ids(uniques[int(code):int(code) + 1])[0])
    return _id_value(uniques, code)


class _Parsed:
    """Columns of one file, read block by block: ``value`` and ``rank`` (NumPy arrays), and
    the id columns ``q``/``d`` as :class:`_IdColumn` (factorised by the caller, seeded with
    ``seeds``)."""

    def __init__(self, name, fmt, arrow, need_rank, seeds=(None, None)):
        self.name = name
        self.fmt = fmt
        self.q = _IdColumn(arrow, runs=True, seed=seeds[0])
        self.d = _IdColumn(arrow, seed=seeds[1])
        self.t = _IdColumn(arrow) if "intent" in fmt.columns else None  # the intents of diversity qrels
        self._values, self._ranks = [], [] if need_rank else None
        self.value = self.rank = None
        self.n_comments = 0  # comment lines skipped
        self.n_extra_fields = 0  # lines with fields after the last one (ignored)
        self.n_rows = 0
        self.n_lines = 0
        # from the first block with blank (or comment) lines on: each block's first row,
        # first line, and the line numbers of its rows within it (None: its rows are its
        # lines); before that block, row i is line i + 1
        self._row0, self._line0, self._block_lines = [], [], []
        self._pending = None  # the ids of the last block, being added on a helper thread
        self._next_check = _DUPLICATE_CHECK_ROWS  # rows at which check_duplicates looks again

    def add(self, q, d, value, rank, n_lines, lines, n_comments, n_extra, t=None, helper=None):
        """Append a block's columns (``q``/``d``/``t``: lists of arrays, ``t`` the intents of
        diversity qrels or None); ``lines``: the 1-based line numbers within the block of its
        rows, or None when they are its lines 1, 2, ... With an executor ``helper``, the ids
        are added there, after the previous block's."""
        self._wait()
        if helper is None:
            self._add_ids(q, d, t)
        else:
            # in this thread's context (the parser forced by tests is a context variable)
            self._pending = helper.submit(contextvars.copy_context().run, self._add_ids, q, d, t)
        self._values.append(value)
        if self._ranks is not None:
            self._ranks.append(rank)
        if lines is not None or self._row0:
            self._row0.append(self.n_rows)
            self._line0.append(self.n_lines)
            self._block_lines.append(lines)
        self.n_rows += len(value)
        self.n_lines += n_lines
        self.n_comments += n_comments
        self.n_extra_fields += n_extra

    def check_duplicates(self):
        """Raise the error of the first repeated (query, document) pair as soon as the rows so
        far are sure to hold one (more rows than distinct queries times distinct documents)
        and, from ``_DUPLICATE_CHECK_ROWS`` rows on, each time their number doubled: a file
        of lines repeated (a gzip bomb) stops early, with at most about twice the rows of its
        valid part in memory. The pair and line are those the end of reading reports."""
        nq, nd = self.q.n_distinct(), self.d.n_distinct()
        sure = nq is not None and nd is not None and self.n_rows > nq * nd
        if not sure and self.n_rows < self._next_check:
            return
        self._next_check = max(2 * self.n_rows, _DUPLICATE_CHECK_ROWS)
        self._wait()
        # packed short ids stay packed (no pyarrow for plain files); unpacked for the message
        q, uq = self.q.codes(packed=True)
        d, ud = self.d.codes(packed=True)
        if self.t is not None:  # diversity qrels: one judgement per (query, intent, document)
            t, ut = self.t.codes(packed=True)
            dup = _first_duplicate(q, t.astype(np.int64) * max(len(ud), 1) + d, len(ut) * max(len(ud), 1))
        else:
            dup = _first_duplicate(q, d, len(ud))
        if dup is None:
            return
        first, second = dup
        qid, did = _id_at(self.q, uq, q[second]), _id_at(self.d, ud, d[second])
        hint = ""
        if self.t is not None:
            reason = (f"duplicate judgement for query {qid!r}, intent {_id_at(self.t, ut, t[second])!r} and "
                      f"document {did!r}")
        elif self.fmt.kind == "qrels":
            reason = f"duplicate judgement for query {qid!r} and document {did!r}"
            hint = ("; judgements per intent (subtopic), as in TREC Web diversity qrels, are read with "
                    "intents=True (--intents on the command line)")
        else:
            reason = f"duplicate document {did!r} for query {qid!r}"
        raise self.error(second, f"{reason} (first given on line {self.line(first)}){hint}")

    def _add_ids(self, q, d, t=None):
        for part in q:
            self.q.add(part)
        for part in d:
            self.d.add(part)
        for part in t or ():
            self.t.add(part)

    def _wait(self):
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def finish(self):
        """Join the blocks' values and ranks (and wait for the ids)."""
        self._wait()
        self.value = _join_arrays(self._values, np.float64)
        self.rank = _join_arrays(self._ranks, np.int64) if self._ranks is not None else None
        self._values = self._ranks = None

    def __len__(self):
        return len(self.value)

    def line(self, row):
        """1-based line number of parsed row ``row`` (blank lines are not rows)."""
        row = int(row)
        b = bisect.bisect_right(self._row0, row) - 1
        if b < 0:
            return row + 1
        lines = self._block_lines[b]
        within = row - self._row0[b]
        return self._line0[b] + (int(lines[within]) if lines is not None else within + 1)

    def error(self, row, reason):
        return TrecFormatError(self.name, self.line(row), reason)


def _nonblank_lines(buf):
    """Line numbers of the non-empty lines of a normalised buffer, or None if none is empty."""
    if not (buf.startswith(b"\n") or b"\n\n" in buf):
        return None
    arr = np.frombuffer(buf, dtype=np.uint8)
    ends = np.flatnonzero(arr == 10)
    if not buf.endswith(b"\n"):
        ends = np.append(ends, len(buf))
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    return np.flatnonzero(ends > starts) + 1


def _column_count_error(name, buf, fmt, line0=0):
    """TrecFormatError for the first line without ``fmt.ncols`` fields, or None (vectorised);
    ``buf`` starts at line ``line0 + 1`` of the file."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    n = arr.size
    pos = 0
    block = _BLOCK_BYTES
    while pos < n:
        stop = min(n, pos + block)
        if stop < n:
            nl = buf.find(b"\n", stop)
            stop = n if nl < 0 else nl + 1
        chunk = arr[pos:stop]
        ends = np.flatnonzero(chunk == 10)
        if stop == n and chunk[-1] != 10:
            ends = np.append(ends, chunk.size)
        starts = np.empty_like(ends)
        if ends.size:
            starts[0] = 0
            starts[1:] = ends[:-1] + 1
        spaces = np.concatenate(([0], np.cumsum(chunk == 32, dtype=np.int64)))
        fields = spaces[ends] - spaces[starts] + 1
        bad = (ends > starts) & ((fields < fmt.ncols) if fmt.extra_fields else (fields != fmt.ncols))
        if bad.any():
            i = int(np.argmax(bad))
            found = int(fields[i])
            reason = f"expected {fmt.ncols} columns ({fmt.describe()}), found {found}"
            other = _OTHER[fmt.kind]
            if line0 + i == 0 and (found == other.ncols or (other.extra_fields and found > other.ncols)):
                reason += (f": the {fmt.kind} file has {found} columns: is it the {other.kind}? "
                           "(give the qrels first, then the run)")
            return TrecFormatError(name, line0 + i + 1, reason)
        line0 += ends.size
        pos = stop
    return None


def _diagnose(name, buf, fmt, need_rank, exc, line0=0):
    """Raise a TrecFormatError for the first malformed line of a normalised buffer (which
    starts at line ``line0 + 1`` of the file).

    Called when the fast parser failed (``exc``); slow, but only on the error path.
    """
    err = _column_count_error(name, buf, fmt, line0)
    if err is not None:
        raise err
    try:
        buf.decode("utf-8")
    except UnicodeDecodeError as uerr:
        raise TrecFormatError(name, line0 + buf.count(b"\n", 0, uerr.start) + 1,
                              f"invalid UTF-8 text ({uerr.reason})") from None
    vi = fmt.columns.index(fmt.value)
    ri = fmt.columns.index("rank") if need_rank else None
    for lineno, line in enumerate(buf.split(b"\n"), line0 + 1):
        if not line:
            continue
        parts = line.split(b" ")
        try:
            _strict(parts[vi], float)
        except ValueError:
            raise TrecFormatError(name, lineno, f"{fmt.value_name} is not a number: "
                                  f"{parts[vi].decode('utf-8', 'replace')!r}") from None
        if ri is not None:
            try:
                _strict(parts[ri], int)
            except ValueError:
                raise TrecFormatError(name, lineno, f"rank is not an integer: "
                                      f"{parts[ri].decode('utf-8', 'replace')!r}") from None
    raise TrecFormatError(name, None, f"cannot be parsed as a {fmt.kind} file ({exc})")


def _strict(text, parse):
    """``parse(text)`` (float or int) as the parsers read numbers: ASCII, without the
    underscores between digits that Python takes ('1_0') and the C parsers refuse."""
    raw = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
    if b"_" in raw or not raw.isascii():
        raise ValueError(f"not a number: {text!r}")
    return parse(raw.decode("ascii") if parse is int else raw)


def _skip_comments(buf):
    """``buf`` with each comment line emptied (line numbers are kept), and their count."""
    if b"#" not in buf:
        return buf, 0
    return _COMMENT.subn(b"", buf)


def _drop_extra_fields(buf, fmt):
    """``buf`` (spaces collapsed) without the fields after the ``fmt.ncols``-th of each line,
    and the number of lines that had some."""
    if not fmt.extra_fields:
        return buf, 0
    pattern = re.compile(rb"(?m)^((?:[^ \n]+ ){%d}[^ \n]+) [^\n]*" % (fmt.ncols - 1))
    return pattern.subn(rb"\1", buf)


def _parse(src, fmt, progress, need_rank=False, seeds=(None, None)):
    """The :class:`_Parsed` columns of file ``src``, parsed block by block; ``seeds``: the
    packed ids (or None) that take the first codes of the query and document columns (see
    :class:`_IdColumn`)."""
    name = _source_name(src)
    arrow = _have_pyarrow()
    parsed = _Parsed(name, fmt, arrow, need_rank, seeds)
    # the ids of a block get their codes on a second thread while the next block is parsed
    # (both loops run without the GIL); one block at a time is in flight
    helper = ThreadPoolExecutor(1) if effective_n_threads() > 1 else None
    try:
        try:
            for block in _blocks(src, progress):
                long_line = _long_line_start(block)
                if long_line >= 0:
                    raise LineTooLongError(long_line)
                cols = _parse_block(arrow, name, block, fmt, need_rank, parsed.n_lines)
                del block
                parsed.add(*cols, helper=helper)
                parsed.check_duplicates()
        except LineTooLongError as exc:
            # offset 0: the line after the blocks parsed; else within the block
            line = parsed.n_lines + 1 + (bytes(block[:exc.offset]).count(b"\n") if exc.offset else 0)
            raise TrecFormatError(name, line, _too_long_reason()) from None
        parsed.finish()
    finally:
        if helper is not None:
            helper.shutdown(wait=True, cancel_futures=True)
    _check_values(parsed)
    return parsed


def _parse_block(arrow, name, block, fmt, need_rank, line0):
    """(q, d, value, rank, n_lines, lines, n_comments, n_extra) of a block of text that
    starts at line ``line0 + 1`` of the file and ends at a line end (or the file's end);
    ``q``, ``d`` and ``lines`` as :meth:`_Parsed.add` takes them.

    Most blocks are plain text with fields separated by single spaces: one scan tells, and
    they are parsed as they are, by ``_text.parse_plain`` when their ids are short and their
    numbers plain decimals, else by pyarrow. Other blocks are normalised first (tabs, CR-LF
    line ends, a byte order mark, comment lines, runs of spaces, extra fields of run lines).
    ``arrow``: pyarrow is there (imported here, for the first block that needs it).
    """
    n_newlines, n_empty, irregular, special = scan_block(block)
    n_lines = n_newlines + (1 if len(block) and block[-1] != 10 else 0)
    skip = 3 if line0 == 0 and bytes(block[:3]) == b"\xef\xbb\xbf" else 0  # the file's BOM
    if bytes(block[skip:skip + 3]) == b"\xef\xbb\xbf":
        # a byte order mark that starts a block but not the file (or follows the file's):
        # part of its line's first field, as anywhere but at the file's start (and as
        # trec_eval reads it), while both parsers would skip it at the start of what they
        # are given: an empty line first
        q, d, value, rank, _n, lines, n_comments, n_extra, t = _parse_block(
            arrow, name, b"\n" + bytes(block[skip:]), fmt, need_rank, line0 - 1)
        return q, d, value, rank, n_lines, lines - 1, n_comments, n_extra, t
    buf, n_comments, n_extra = block, 0, 0
    bom = line0 == 0 and bytes(block[:3]) == b"\xef\xbb\xbf"
    if arrow and not (special or bom or irregular or need_rank) and "intent" not in fmt.columns:
        # short ASCII ids and plain decimal numbers (most files): read here, ids packed
        plain = parse_plain(block, fmt.ncols, fmt.columns.index("query"), fmt.columns.index("docid"),
                            fmt.columns.index(fmt.value), n_lines)
        if plain is not None:
            q, d, value = plain
            return [q], [d], value, None, n_lines, _nonblank_lines(bytes(block)) if n_empty else None, 0, 0, None
    if special or bom:
        buf, n_comments = _skip_comments(_light_normalise(bytes(block), start=line0 == 0))
        _n, n_empty, irregular, _s = scan_block(buf)
    if irregular:
        buf = _collapse_spaces(bytes(buf))
    pa = _pyarrow_for_reading() if arrow else None
    if pa is None:
        buf, n_extra = _drop_extra_fields(bytes(buf), fmt)
        q, d, value, rank, t = _parse_pandas(name, buf, fmt, need_rank, line0)
        q, d, t = [q], [d], (None if t is None else [t])
    else:
        cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
        if exc is not None and fmt.extra_fields:
            buf, n_extra = _drop_extra_fields(bytes(buf), fmt)
            if n_extra:
                cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
        if exc is not None:
            _diagnose(name, bytes(buf), fmt, need_rank, exc, line0)
        q, d, value, rank, t = cols
    # blank lines are not rows (after collapsing spaces, neither are lines of spaces)
    lines = _nonblank_lines(bytes(buf)) if (n_empty or irregular or special or bom) else None
    return q, d, value, rank, n_lines, lines, n_comments, n_extra, t


def _parse_arrow(pa, buf, fmt, need_rank):
    """(columns, None), or (None, ArrowInvalid) when the parser rejects the buffer."""
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    types = {"query": pa.string(), "docid": pa.string(), fmt.value: pa.float64()}
    include = ["query", "docid", fmt.value]
    intents = "intent" in fmt.columns
    if intents:
        types["intent"] = pa.string()
        include.append("intent")
    if need_rank:
        types["rank"] = pa.int64()
        include.append("rank")
    try:
        table = pcsv.read_csv(
            pa.py_buffer(buf),
            read_options=pcsv.ReadOptions(column_names=list(fmt.columns), block_size=_BLOCK_BYTES),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                            escape_char=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=include,
                                                strings_can_be_null=False, null_values=[],
                                                quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            _q, _d, value, rank, _t = _empty_columns(need_rank)
            return ([], [], value, rank, [] if intents else None), None
        return None, exc
    # the id columns as the parser's chunks (no copy); the spaces were checked to be single
    # ones between fields, so no id is empty
    value = table.column(fmt.value).to_numpy()
    rank = table.column("rank").to_numpy() if need_rank else None
    return (table.column("query").chunks, table.column("docid").chunks, value, rank,
            table.column("intent").chunks if intents else None), None


def _parse_pandas(name, buf, fmt, need_rank, line0=0):
    import csv
    import io

    pd = _pandas()
    if not buf.strip(b"\n"):
        return _empty_columns(need_rank, "intent" in fmt.columns)
    # the C parser fills short lines with NaN and its messages count lines differently:
    # check the column counts first (vectorised, cheap next to the parse itself)
    err = _column_count_error(name, buf, fmt, line0)
    if err is not None:
        raise err
    intents = "intent" in fmt.columns
    include = ["query", "docid", fmt.value] + (["rank"] if need_rank else []) + (["intent"] if intents else [])
    try:
        df = pd.read_csv(
            io.BytesIO(buf), sep=" ", header=None, names=list(fmt.columns), usecols=include,
            dtype={"query": object, "docid": object, fmt.value: object, "rank": object, "intent": object},
            quoting=csv.QUOTE_NONE, na_filter=False, skip_blank_lines=True, engine="c",
            encoding="utf-8",
        )
    except (ValueError, UnicodeDecodeError) as exc:
        _diagnose(name, buf, fmt, need_rank, exc, line0)
    values = pd.to_numeric(df[fmt.value], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(values).any():
        raw = df[fmt.value].to_numpy()
        for i in np.flatnonzero(np.isnan(values)):
            try:
                _strict(raw[i], float)
            except ValueError:
                _diagnose(name, buf, fmt, need_rank, ValueError("non-numeric value"), line0)
    rank = None
    if need_rank:
        try:
            if df["rank"].str.contains(r"[^\x00-\x7f]|_", regex=True).any():  # Python's int takes them
                raise ValueError("not an ASCII integer")
            rank = df["rank"].astype(np.int64).to_numpy()
        except (ValueError, OverflowError) as exc:
            _diagnose(name, buf, fmt, need_rank, ValueError(f"conversion to int64 failed: {exc}"), line0)
    return (df["query"].to_numpy(), df["docid"].to_numpy(), values, rank,
            df["intent"].to_numpy() if intents else None)


def _empty_columns(need_rank, intents=False):
    e = np.zeros(0, dtype=object)
    return (e, e, np.zeros(0, dtype=np.float64), (np.zeros(0, dtype=np.int64) if need_rank else None),
            e if intents else None)


def _check_values(p):
    """Relevance grades must be finite numbers; run scores numbers (not NaN, which has no
    order: an infinite score is a score, ranked first or last, as trec_eval orders it)."""
    v = p.value
    bad = np.isnan(v)
    if p.fmt.kind == "qrels":
        bad |= np.isinf(v)
    if bad.any():
        i = int(np.argmax(bad))
        if p.fmt.kind == "qrels":
            raise p.error(i, f"{p.fmt.value_name} must be a finite number, got {v[i]}")
        raise p.error(i, f"{p.fmt.value_name} must be a number, got {v[i]} (NaN has no order; an infinite "
                         "score is ranked first or last)")
