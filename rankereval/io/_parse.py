"""Parsing TREC qrels and run bytes into columns (pyarrow when installed, else pandas)."""
import re

import numpy as np

from rankereval.io._result import TrecFormatError
from rankereval.io._source import _BLOCK_BYTES, _collapse_spaces, _light_normalise, _load, _pandas, _pyarrow, _source_name


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


# trec_eval 10 ignores the fields of a run line after the sixth (the tag)
_RUN = _Format("run", ("query", "Q0", "docid", "rank", "score", "tag"), "score", "score", True)

_OTHER = {"qrels": _RUN, "run": _QRELS}

# a comment: a line whose first non-blank character is '#' (trec_eval 10), after tabs
# became spaces
_COMMENT = re.compile(rb"(?m)^ *#[^\n]*")


class _Parsed:
    """Columns of one file; ``q``/``d`` are pyarrow string arrays or numpy object arrays."""

    def __init__(self, name, buf, fmt, q, d, value, rank, n_comments=0, n_extra_fields=0):
        self.n_comments = n_comments  # comment lines skipped
        self.n_extra_fields = n_extra_fields  # lines with fields after the last one (ignored)
        self.name = name
        self.buf = buf
        self.fmt = fmt
        self.q = q
        self.d = d
        self.value = value
        self.rank = rank
        self._lines = False  # not computed yet

    def __len__(self):
        return len(self.value)

    def line(self, row):
        """1-based line number of parsed row ``row`` (blank lines are not rows)."""
        if self._lines is False:
            self._lines = _nonblank_lines(self.buf)
        return int(self._lines[row]) if self._lines is not None else int(row) + 1

    def release(self):
        """Let the text go (the largest object of a read): keep only what :meth:`line`
        needs, which is nothing when the file has no blank (or comment) lines."""
        if self._lines is False:
            self._lines = _nonblank_lines(self.buf)
        self.buf = None

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


def _column_count_error(name, buf, fmt):
    """TrecFormatError for the first line without ``fmt.ncols`` fields, or None (vectorised)."""
    arr = np.frombuffer(buf, dtype=np.uint8)
    n = arr.size
    pos, line0 = 0, 0
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


def _diagnose(name, buf, fmt, need_rank, exc):
    """Raise a TrecFormatError for the first malformed line of a normalised buffer.

    Called when the fast parser failed (``exc``); slow, but only on the error path.
    """
    err = _column_count_error(name, buf, fmt)
    if err is not None:
        raise err
    try:
        buf.decode("utf-8")
    except UnicodeDecodeError as uerr:
        raise TrecFormatError(name, buf.count(b"\n", 0, uerr.start) + 1,
                              f"invalid UTF-8 text ({uerr.reason})") from None
    vi = fmt.columns.index(fmt.value)
    ri = fmt.columns.index("rank") if need_rank else None
    for lineno, line in enumerate(buf.split(b"\n"), 1):
        if not line:
            continue
        parts = line.split(b" ")
        try:
            float(parts[vi])
        except ValueError:
            raise TrecFormatError(name, lineno, f"{fmt.value_name} is not a number: "
                                  f"{parts[vi].decode('utf-8', 'replace')!r}") from None
        if ri is not None:
            try:
                int(parts[ri])
            except ValueError:
                raise TrecFormatError(name, lineno, f"rank is not an integer: "
                                      f"{parts[ri].decode('utf-8', 'replace')!r}") from None
    raise TrecFormatError(name, None, f"cannot be parsed as a {fmt.kind} file ({exc})")


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


def _parse(src, fmt, progress, need_rank=False):
    name = _source_name(src)
    buf, n_comments = _skip_comments(_light_normalise(_load(src, progress)))
    n_extra = 0
    pa = _pyarrow()
    if pa is None:
        buf, n_extra = _drop_extra_fields(_collapse_spaces(buf), fmt)
        cols = _parse_pandas(name, buf, fmt, need_rank)
    else:
        # Most files are single-space separated: parse as they are, and check that the
        # number of spaces is exactly (columns - 1) per line (cheaper than looking for double
        # or line-edge spaces). Otherwise collapse the spaces and parse again.
        cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
        if exc is not None or buf.count(b" ") != (fmt.ncols - 1) * len(cols[2]):
            buf = _collapse_spaces(buf)
            cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
            if exc is not None and fmt.extra_fields:
                buf, n_extra = _drop_extra_fields(buf, fmt)
                if n_extra:
                    cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
            if exc is not None:
                _diagnose(name, buf, fmt, need_rank, exc)
    parsed = _Parsed(name, buf, fmt, *cols, n_comments=n_comments, n_extra_fields=n_extra)
    del buf
    _check_values(parsed)
    parsed.release()
    return parsed


# Above this size the parser runs on one thread: its threads each hold a block's parse in
# flight, which for a 378 MB run took the peak memory from 715 MB to 890 MB for one second
# less of parsing at best (2 cores; the same CPU time)
_SERIAL_PARSE_BYTES = 256 << 20


def _parse_arrow(pa, buf, fmt, need_rank):
    """(columns, None), or (None, ArrowInvalid) when the parser rejects the buffer."""
    import pyarrow.compute as pc
    import pyarrow.csv as pcsv

    types = {"query": pa.string(), "docid": pa.string(), fmt.value: pa.float64()}
    include = ["query", "docid", fmt.value]
    if need_rank:
        types["rank"] = pa.int64()
        include.append("rank")
    try:
        table = pcsv.read_csv(
            pa.py_buffer(buf),
            read_options=pcsv.ReadOptions(column_names=list(fmt.columns), block_size=_BLOCK_BYTES,
                                          use_threads=len(buf) < _SERIAL_PARSE_BYTES),
            parse_options=pcsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                            escape_char=False, ignore_empty_lines=True),
            convert_options=pcsv.ConvertOptions(column_types=types, include_columns=include,
                                                strings_can_be_null=False, null_values=[],
                                                quoted_strings_can_be_null=False),
        )
    except pa.ArrowInvalid as exc:
        if "Empty CSV file" in str(exc):
            _q, _d, value, rank = _empty_columns(need_rank)
            return (pa.array([], type=pa.string()), pa.array([], type=pa.string()), value, rank), None
        return None, exc
    # one column at a time, each block's copy let go before the next column is joined
    # (remove_column: pyarrow 10 has no drop_columns)
    q = table.column("query").combine_chunks()
    table = table.remove_column(table.schema.get_field_index("query"))
    d = table.column("docid").combine_chunks()
    table = table.remove_column(table.schema.get_field_index("docid"))
    for col in (q, d):  # an empty id means a stray space: parse again after collapsing spaces
        if len(col) and pc.min(pc.binary_length(col)).as_py() == 0:
            return None, pa.ArrowInvalid("empty field")
    value = table.column(fmt.value).to_numpy()
    rank = table.column("rank").to_numpy() if need_rank else None
    return (q, d, value, rank), None


def _parse_pandas(name, buf, fmt, need_rank):
    import csv
    import io

    pd = _pandas()
    if not buf.strip(b"\n"):
        return _empty_columns(need_rank)
    # the C parser fills short lines with NaN and its messages count lines differently:
    # check the column counts first (vectorised, cheap next to the parse itself)
    err = _column_count_error(name, buf, fmt)
    if err is not None:
        raise err
    include = ["query", "docid", fmt.value] + (["rank"] if need_rank else [])
    try:
        df = pd.read_csv(
            io.BytesIO(buf), sep=" ", header=None, names=list(fmt.columns), usecols=include,
            dtype={"query": object, "docid": object, fmt.value: object, "rank": object},
            quoting=csv.QUOTE_NONE, na_filter=False, skip_blank_lines=True, engine="c",
            encoding="utf-8",
        )
    except (ValueError, UnicodeDecodeError) as exc:
        _diagnose(name, buf, fmt, need_rank, exc)
    values = pd.to_numeric(df[fmt.value], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(values).any():
        raw = df[fmt.value].to_numpy()
        for i in np.flatnonzero(np.isnan(values)):
            try:
                float(raw[i])
            except ValueError:
                _diagnose(name, buf, fmt, need_rank, ValueError("non-numeric value"))
    rank = None
    if need_rank:
        try:
            rank = df["rank"].astype(np.int64).to_numpy()
        except (ValueError, OverflowError) as exc:
            _diagnose(name, buf, fmt, need_rank, ValueError(f"conversion to int64 failed: {exc}"))
    return df["query"].to_numpy(), df["docid"].to_numpy(), values, rank


def _empty_columns(need_rank):
    e = np.zeros(0, dtype=object)
    return e, e, np.zeros(0, dtype=np.float64), (np.zeros(0, dtype=np.int64) if need_rank else None)


def _check_values(p):
    v = p.value
    bad = np.isnan(v)
    if p.fmt.kind == "qrels":
        bad |= np.isinf(v)
    if bad.any():
        i = int(np.argmax(bad))
        raise p.error(i, f"{p.fmt.value_name} must be a finite number, got {v[i]}")
