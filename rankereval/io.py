"""Read relevance judgements and runs from TREC files or pandas DataFrames.

The readers turn string (or any hashable) query and document ids into the integer rows and
item ids that :class:`~rankereval.BinaryLabels`, :class:`~rankereval.NumericLabels` and
:class:`~rankereval.Rankings` use, *jointly* for the labels and the run, so that item ``j``
means the same document in both. The id maps come back with the data, so per-query results
can be reported by query id:

>>> from rankereval import NDCG
>>> from rankereval.io import read_trec, sample_paths
>>> qrels_path, run_path = sample_paths()
>>> data = read_trec(qrels_path, run_path)
>>> data
TrecData(n_queries=20, n_documents=..., n_judgements=..., n_run_lines=1000)
>>> scores = data.score(NDCG(10))
>>> scores.shape
(20,)
>>> data.query_ids[0]
'q01'

Conventions (the same as ``trec_eval`` wherever ``trec_eval`` defines one):

* **Files.** Qrels lines are ``query iteration document relevance``, run lines are
  ``query Q0 document rank score tag``. Fields are separated by spaces and/or tabs; blank
  lines are allowed; gzip-compressed files (recognised by their content, not their name)
  are read transparently. Ids are strings and compared as such (``"01"`` and ``"1"`` are
  different queries). The ``iteration``, ``Q0`` and ``tag`` fields are not interpreted.
* **Order of a ranking.** By descending score (``order_by="rank"``: by ascending rank).
  Ties are broken by ``tie_break``: ``"trec_eval"`` (default) compares scores at the 32-bit
  float precision ``trec_eval`` stores them in and puts the larger document id first
  (byte-wise string order), exactly as ``trec_eval`` and ``pytrec_eval`` do; ``"docid"``
  compares scores exactly and puts the smaller document id first; ``"input"`` compares
  scores exactly and keeps the order of the lines in the file (rows in the DataFrame).
* **Rows.** One row per query, ordered by query id (string order, as ``trec_eval``'s
  per-query output; DataFrame ids that cannot be sorted keep their first-appearance order).
  Queries of the qrels that are not in the run are dropped (``missing="drop"``, like
  ``trec_eval``) or evaluated with an empty ranking (``missing="empty"``, like
  ``trec_eval -c``: their metrics are 0, or NaN where a metric is undefined), or refused
  (``missing="error"``). Queries of the run without judgements cannot be scored; they are
  dropped (``extra="drop"``, like ``trec_eval``), kept with empty labels (``extra="keep"``:
  their metrics are NaN) or refused (``extra="error"``). Every choice is counted in
  :attr:`TrecData.report`.
* **Relevance.** Binary metrics see a document as relevant when its grade is at least
  ``relevance_level`` (default 1, ``trec_eval -l``). Graded metrics (:class:`~rankereval.DCG`,
  :class:`~rankereval.NDCG`) use the grades; negative grades (e.g. ``-2`` for spam) count as
  0 because :class:`~rankereval.NumericLabels` holds non-negative grades, and are counted in
  the report.
* **Errors.** A malformed file raises :class:`TrecFormatError` naming the file, the line and
  what is wrong (column count, non-numeric or NaN score/grade, duplicate document for a
  query, invalid UTF-8, broken gzip stream). Nothing is skipped silently.

pandas is needed by this module (``pip install rankereval[io]``); pyarrow, when installed,
parses large files several times faster. Neither is imported by ``import rankereval`` or by
``import rankereval.io``; they are imported when a reader is called. Reading a file larger
than 32 MB shows a tqdm progress bar when stderr is a terminal (``progress=`` overrides).
"""
import gzip
import os
import sys
import warnings
import zlib
from dataclasses import dataclass, field
from numbers import Real

import numpy as np

__all__ = ["TrecData", "ReadReport", "TrecFormatError", "read_trec", "from_dataframes", "sample_paths"]

TIE_BREAKS = ("trec_eval", "docid", "input")
MISSING = ("drop", "empty", "error")
EXTRA = ("drop", "keep", "error")
ORDER_BY = ("score", "rank")

# files above this size show a progress bar (when stderr is a terminal)
_PROGRESS_MIN_BYTES = 32 << 20
_READ_CHUNK = 16 << 20
# set to False to force the pandas parser (tests exercise both)
_USE_PYARROW = True


class TrecFormatError(ValueError):
    """A TREC qrels or run file is malformed.

    Attributes
    ----------
    path : str
        The file, as it was given.
    line : int or None
        1-based line number of the first offending line (None when the problem is not tied
        to a line, e.g. a broken gzip stream).
    reason : str
        What is wrong.
    """

    def __init__(self, path, line, reason):
        self.path = path
        self.line = line
        self.reason = reason
        where = f"{path}, line {line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {reason}")


# ----------------------------------------------------------------------------------------
# result objects
# ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ReadReport:
    """What a reader found and did, in counts (and the ids of queries it set aside).

    Attributes
    ----------
    qrels_source, run_source : str
        The files read (``"labels DataFrame"``/``"run DataFrame"`` for DataFrames).
    n_judgements, n_run_lines : int
        Judgement lines (rows) and run lines (rows) read.
    n_queries : int
        Rows of the result (queries evaluated).
    n_qrels_queries, n_run_queries : int
        Distinct queries in the qrels and in the run.
    missing_queries : tuple
        Queries of the qrels that are not in the run, in row order.
    missing : str
        What was done with them: ``"drop"`` or ``"empty"`` (evaluated with an empty ranking).
    extra_queries : tuple
        Queries of the run that have no judgements.
    extra : str
        What was done with them: ``"drop"`` or ``"keep"`` (rows with empty labels).
    n_dropped_run_lines : int
        Run lines of dropped queries.
    n_queries_without_relevant : int
        Rows with no document graded ``>= relevance_level``: binary metrics are NaN there.
    n_negative_labels : int
        Judgements with a negative grade (relevant to no metric; grade 0 for DCG/NDCG).
    n_tied_lines : int
        Run lines whose score ties another line of the same query (ordered by ``tie_break``).
    relevance_level : float
    tie_break : str
    order_by : str
    """

    qrels_source: str
    run_source: str
    n_judgements: int
    n_run_lines: int
    n_queries: int
    n_qrels_queries: int
    n_run_queries: int
    missing_queries: tuple
    missing: str
    extra_queries: tuple
    extra: str
    n_dropped_run_lines: int
    n_queries_without_relevant: int
    n_negative_labels: int
    n_tied_lines: int
    relevance_level: float
    tie_break: str
    order_by: str

    def notes(self):
        """Human-readable notes on everything a user may want to know (list of str)."""
        out = []

        def some(ids):
            shown = ", ".join(str(q) for q in ids[:5])
            return shown + (f", ... ({len(ids) - 5} more)" if len(ids) > 5 else "")

        if self.missing_queries:
            n = len(self.missing_queries)
            what = ("dropped, as trec_eval does (missing='empty' / -c evaluates them with an empty "
                    "ranking)" if self.missing == "drop" else "evaluated with an empty ranking")
            out.append(f"{n} {_queries(n)} of the qrels not in the run {_were(n)} {what}: "
                       f"{some(self.missing_queries)}")
        if self.extra_queries:
            n = len(self.extra_queries)
            what = ("dropped, as trec_eval does" if self.extra == "drop"
                    else "kept with empty labels (their metrics are NaN)")
            out.append(f"{n} {_queries(n)} of the run without judgements {_were(n)} {what}: "
                       f"{some(self.extra_queries)}")
        if self.n_queries_without_relevant:
            n = self.n_queries_without_relevant
            out.append(f"{n} of {self.n_queries} {_queries(self.n_queries)} {_have(n)} no document with "
                       f"relevance >= {_num(self.relevance_level)}: binary metrics are NaN there "
                       "(see nan_handling)")
        if self.n_negative_labels:
            out.append(f"{self.n_negative_labels} negative relevance grades count as 0 for graded metrics")
        return out

    def summary(self):
        """One paragraph: what was read and the notes."""
        head = (f"{self.n_queries} {_queries(self.n_queries)} evaluated (qrels {self.qrels_source}: "
                f"{self.n_qrels_queries} {_queries(self.n_qrels_queries)}, {self.n_judgements} judgements; "
                f"run {self.run_source}: {self.n_run_queries} {_queries(self.n_run_queries)}, "
                f"{self.n_run_lines} lines)")
        return "\n".join([head] + self.notes())


def _queries(n):
    return "query" if n == 1 else "queries"


def _were(n):
    return "was" if n == 1 else "were"


def _have(n):
    return "has" if n == 1 else "have"


def _num(x):
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True, repr=False, eq=False)
class TrecData:
    """Labels and rankings read together, with the id maps and a report.

    Row ``i`` of :attr:`binary_labels`, :attr:`numeric_labels` and :attr:`rankings` belongs
    to query ``query_ids[i]``; item id ``j`` is document ``doc_ids[j]`` in all three.

    Attributes
    ----------
    binary_labels : BinaryLabels
        Relevant = grade ``>= relevance_level``. For Precision, Recall, AP, ... .
    numeric_labels : NumericLabels
        The grades (negative grades as 0). For DCG and NDCG.
    rankings : Rankings
        One ranking per query, best document first.
    query_ids : pandas.Index
        Query id of each row (``query_ids.get_loc(q)`` finds the row of query ``q``).
    doc_ids : pandas.Index
        Document id of each item id (``doc_ids.get_indexer(ids)`` maps ids to item ids).
    report : ReadReport
        Counts of what was read, dropped, kept, clipped and tied.
    """

    binary_labels: object
    numeric_labels: object
    rankings: object
    query_ids: object
    doc_ids: object
    report: ReadReport = field(compare=False)

    @property
    def n_queries(self):
        """Number of rows (queries evaluated)."""
        return len(self.query_ids)

    def labels_for(self, metric):
        """The labels ``metric`` reads: :attr:`numeric_labels` for a metric of graded
        relevance (its registry entry says ``labels="graded"``: DCG, NDCG), else binary."""
        from rankereval.metrics._base import labels_for

        return labels_for(metric, self.binary_labels, self.numeric_labels)

    def score(self, metric):
        """Per-query scores of ``metric`` (ndarray aligned with :attr:`query_ids`)."""
        return metric.score(self.labels_for(metric), self.rankings)

    def mean(self, metric, **kwargs):
        """``metric.mean`` on these labels and rankings; keyword arguments are passed on."""
        return metric.mean(self.labels_for(metric), self.rankings, **kwargs)

    def __repr__(self):
        return (f"TrecData(n_queries={self.n_queries}, n_documents={len(self.doc_ids)}, "
                f"n_judgements={self.report.n_judgements}, n_run_lines={self.report.n_run_lines})")


def sample_paths():
    """Paths ``(qrels, run)`` of the small sample shipped with the package.

    A synthetic TREC pair (20 queries, 50 ranked documents each, graded judgements) made by
    ``rankereval/_sample/make_sample.py``; ``rankereval example`` evaluates it.
    """
    base = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_sample")
    return os.path.join(base, "qrels.txt"), os.path.join(base, "run.txt")


# ----------------------------------------------------------------------------------------
# optional dependencies
# ----------------------------------------------------------------------------------------

def _pandas():
    try:
        import pandas as pd
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "rankereval.io needs pandas: pip install 'rankereval[io]' (or pip install pandas)"
        ) from exc
    return pd


def _pyarrow():
    if not _USE_PYARROW:
        return None
    try:
        import pyarrow  # noqa: F401
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return None
    return pyarrow


# ----------------------------------------------------------------------------------------
# reading bytes
# ----------------------------------------------------------------------------------------

def _source_name(src):
    if hasattr(src, "read"):
        return str(getattr(src, "name", "<file object>"))
    return os.fspath(src) if isinstance(src, (str, bytes, os.PathLike)) else repr(src)


def _want_progress(progress, size):
    if progress is not None:
        return bool(progress)
    try:
        return size >= _PROGRESS_MIN_BYTES and sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _load(src, progress):
    """The whole content of ``src`` (path or file object), gunzipped, as bytes."""
    name = _source_name(src)
    if hasattr(src, "read"):
        data = src.read()
        if isinstance(data, str):
            data = data.encode("utf-8")
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as exc:
                raise TrecFormatError(name, None, f"not a valid gzip stream ({exc})") from None
        return data
    if not isinstance(src, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path or a file object, got {type(src).__name__}")
    with open(src, "rb") as raw:
        size = os.fstat(raw.fileno()).st_size
        magic = raw.read(2)
        raw.seek(0)
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw
        bar = None
        if _want_progress(progress, size):
            try:
                from tqdm.auto import tqdm

                bar = tqdm(total=size, unit="B", unit_scale=True, leave=False, file=sys.stderr,
                           desc=f"reading {os.path.basename(name)}")
            except ImportError:
                bar = None
        try:
            if bar is None and stream is raw:
                return raw.read()
            chunks, done = [], 0
            while True:
                chunk = stream.read(_READ_CHUNK)
                if not chunk:
                    break
                chunks.append(chunk)
                if bar is not None:
                    pos = raw.tell()
                    bar.update(pos - done)
                    done = pos
            return b"".join(chunks)
        except (OSError, EOFError, zlib.error) as exc:
            if stream is raw:
                raise
            raise TrecFormatError(name, None, f"not a valid gzip stream ({exc})") from None
        finally:
            if bar is not None:
                bar.close()


def _light_normalise(buf):
    """No byte order mark, ``\n`` line ends, other whitespace as spaces (single-byte scans)."""
    if buf.startswith(b"\xef\xbb\xbf"):  # UTF-8 byte order mark
        buf = buf[3:]
    if b"\r" in buf:
        buf = buf.replace(b"\r\n", b"\n")
    if b"\t" in buf or b"\r" in buf or b"\x0b" in buf or b"\x0c" in buf:
        buf = buf.translate(bytes.maketrans(b"\t\r\x0b\x0c", b"    "))
    return buf


def _collapse_spaces(buf):
    """Single spaces between fields and none at line ends (the line count is kept)."""
    while b"  " in buf:
        buf = buf.replace(b"  ", b" ")
    if b"\n " in buf:
        buf = buf.replace(b"\n ", b"\n")
    if b" \n" in buf:
        buf = buf.replace(b" \n", b"\n")
    if buf.startswith(b" "):
        buf = buf[1:]
    if buf.endswith(b" "):
        buf = buf[:-1]
    return buf


def _normalise(buf):
    return _collapse_spaces(_light_normalise(buf))


# ----------------------------------------------------------------------------------------
# parsing
# ----------------------------------------------------------------------------------------

class _Format:
    def __init__(self, kind, columns, value, value_name):
        self.kind = kind
        self.columns = columns
        self.value = value
        self.value_name = value_name

    @property
    def ncols(self):
        return len(self.columns)

    def describe(self):
        return " ".join(self.columns)


_QRELS = _Format("qrels", ("query", "iteration", "docid", "relevance"), "relevance", "relevance grade")
_RUN = _Format("run", ("query", "Q0", "docid", "rank", "score", "tag"), "score", "score")


class _Parsed:
    """Columns of one file; ``q``/``d`` are pyarrow string arrays or numpy object arrays."""

    def __init__(self, name, buf, fmt, q, d, value, rank):
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
    block = 1 << 24
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
        bad = (ends > starts) & (fields != fmt.ncols)
        if bad.any():
            i = int(np.argmax(bad))
            return TrecFormatError(
                name, line0 + i + 1, f"expected {fmt.ncols} columns ({fmt.describe()}), found {int(fields[i])}")
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


def _parse(src, fmt, progress, need_rank=False):
    name = _source_name(src)
    buf = _light_normalise(_load(src, progress))
    pa = _pyarrow()
    if pa is None:
        buf = _collapse_spaces(buf)
        cols = _parse_pandas(name, buf, fmt, need_rank)
    else:
        # Most files are single-space separated: parse as they are, and check that the
        # number of spaces is exactly (columns - 1) per line (cheaper than looking for double
        # or line-edge spaces). Otherwise collapse the spaces and parse again.
        cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
        if exc is not None or buf.count(b" ") != (fmt.ncols - 1) * len(cols[2]):
            buf = _collapse_spaces(buf)
            cols, exc = _parse_arrow(pa, buf, fmt, need_rank)
            if exc is not None:
                _diagnose(name, buf, fmt, need_rank, exc)
    parsed = _Parsed(name, buf, fmt, *cols)
    _check_values(parsed)
    return parsed


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
            read_options=pcsv.ReadOptions(column_names=list(fmt.columns), block_size=1 << 24),
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
    q = table.column("query").combine_chunks()
    d = table.column("docid").combine_chunks()
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


# ----------------------------------------------------------------------------------------
# ids -> integers
# ----------------------------------------------------------------------------------------

def _is_arrow(values):
    pa = _pyarrow()
    return pa is not None and isinstance(values, pa.Array)


def _factorize(values):
    """(codes int64, uniques) of a pyarrow string array (uniques: pyarrow array) or of a
    NumPy/pandas array (uniques: pandas.Index)."""
    if _is_arrow(values):
        import pyarrow as pa
        import pyarrow.compute as pc

        packed = _pack_short_strings(values)
        if packed is not None:
            # hashing 8-byte integers is several times faster than hashing strings
            enc = pc.dictionary_encode(pa.array(packed))
            uniques = pa.array(enc.dictionary.to_numpy().astype(">u8").view("S8")).cast(pa.string())
        else:
            enc = pc.dictionary_encode(values)
            uniques = enc.dictionary
        return enc.indices.to_numpy(zero_copy_only=False), uniques  # int32
    pd = _pandas()
    codes, uniques = pd.factorize(values)
    if not isinstance(uniques, pd.Index):
        uniques = pd.Index(uniques)
    return codes, uniques


def _pack_short_strings(values):
    """Each string of a pyarrow string array as a uint64 (its bytes, big-endian, zero-padded),
    or None if a string is longer than 8 bytes or contains a NUL byte (then the packing would
    not be one-to-one). Order-preserving: comparing the integers compares the strings."""
    import pyarrow as pa

    n = len(values)
    if n < 1024 or values.type != pa.string():
        return None
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int32)[values.offset: values.offset + n + 1]
    lengths = np.diff(offsets)
    if lengths.max() > 8 or lengths.min() < 1:
        return None
    first, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[first:end]
    if not data.all():  # a NUL byte
        return None
    padded = np.zeros(((end - first) // 8 + 2) * 8, dtype=np.uint8)
    padded[: end - first] = data
    words = padded.view(">u8").astype(np.uint64)
    starts = (offsets[:-1] - first).astype(np.int64)
    base, shift = starts >> 3, ((starts & 7) * 8).astype(np.uint64)
    packed = words[base] << shift
    # the bytes continuing in the next word: w >> (64 - shift), written so that shift 0 gives 0
    packed |= (words[base + 1] >> np.uint64(1)) >> (np.uint64(63) - shift)
    keep_bits = ((np.uint64(8) - lengths.astype(np.uint64)) * np.uint64(8))
    packed &= ~((np.uint64(1) << keep_bits) - np.uint64(1))
    return packed


def _factorize_runs(values):
    """Like _factorize, but hashing only one value per run of equal neighbours (run files
    list each query's lines together)."""
    n = len(values)
    if n == 0:
        return _factorize(values)
    if _is_arrow(values):
        import pyarrow as pa
        import pyarrow.compute as pc

        change = pc.not_equal(values[1:], values[:-1]).to_numpy(zero_copy_only=False)
    else:
        change = values[1:] != values[:-1]
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    if starts.size > n // 4:
        return _factorize(values)
    firsts = values.take(pa.array(starts)) if _is_arrow(values) else values[starts]
    codes, uniques = _factorize(firsts)
    lengths = np.diff(np.append(starts, n))
    return np.repeat(codes, lengths), uniques


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


# ----------------------------------------------------------------------------------------
# assembling labels and rankings
# ----------------------------------------------------------------------------------------

class _Side:
    """One input (qrels/labels or run) after id encoding.

    ``q``/``d`` are the joint integer query and document ids of each line; ``error(row,
    reason)`` builds the exception for line ``row`` and ``locate(row)`` describes it briefly.
    """

    def __init__(self, q, d, value, rank, n, source, error, locate):
        self.q = q
        self.d = d
        self.value = value
        self.rank = rank
        self.n = n
        self.source = source
        self.error = error
        self.locate = locate


def _check_options(relevance_level, tie_break, order_by, missing, extra):
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, (Real, np.integer, np.floating)) \
            or not np.isfinite(float(relevance_level)):
        raise ValueError(f"relevance_level must be a finite number, got {relevance_level!r}")
    for value, allowed, name in ((tie_break, TIE_BREAKS, "tie_break"), (order_by, ORDER_BY, "order_by"),
                                 (missing, MISSING, "missing"), (extra, EXTRA, "extra")):
        if value not in allowed:
            raise ValueError(f"{name} must be one of {allowed}, got {value!r}")


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
              doc_word):
    from rankereval.data import BinaryLabels, InvalidValuesWarning, NumericLabels, Rankings
    import scipy.sparse as sp

    n_q, n_docs = len(query_ids), len(doc_ids)

    # duplicates in the judgements would be summed by a sparse matrix: refuse them
    dup = _first_duplicate(lab.q, lab.d, n_docs)
    if dup is not None:
        first, second = dup
        raise lab.error(second, f"duplicate judgement for query {_r(query_ids[lab.q[second]])} and "
                                f"{doc_word} {_r(doc_ids[lab.d[second]])} "
                                f"(first given {lab.locate(first)})")

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
    row_of = np.full(n_q, -1, dtype=np.int64)
    row_of[row_codes] = np.arange(n_rows, dtype=np.int64)

    # ---- labels
    lrow = row_of[lab.q]
    lk = lrow >= 0
    rows_l, docs_l, grades = lrow[lk], lab.d[lk], lab.value[lk]
    n_negative = int(np.count_nonzero(lab.value < 0))
    shape = (n_rows, n_docs)
    numeric = NumericLabels.from_matrix(
        sp.csr_array((np.maximum(grades, 0.0), (rows_l, docs_l)), shape=shape))
    relevant = grades >= relevance_level
    binary = BinaryLabels.from_matrix(
        sp.csr_array((np.ones(int(relevant.sum())), (rows_l[relevant], docs_l[relevant])), shape=shape))
    n_without = int(np.count_nonzero(np.diff(binary.indptr) == 0))

    # ---- rankings
    rrow = row_of[run.q]
    rk = rrow >= 0
    all_kept = bool(rk.all())
    sel = None if all_kept else np.flatnonzero(rk)
    rows_r = rrow if all_kept else rrow[sel]
    if order_by == "rank":
        key = run.rank.astype(np.float64)
    elif tie_break == "trec_eval":
        with np.errstate(over="ignore"):
            key = -run.value.astype(np.float32)  # trec_eval keeps scores as 32-bit floats
    else:
        key = -run.value
    if not all_kept:
        key = key[sel]
    perm = _order(rows_r, key)  # positions into the kept lines, in ranking order
    rows_s = rows_r if perm is None else rows_r[perm]
    key_s = key if perm is None else key[perm]
    tied = np.flatnonzero((rows_s[1:] == rows_s[:-1]) & (key_s[1:] == key_s[:-1]))
    n_tied = 0
    if tied.size:
        members = np.unique(np.concatenate((tied, tied + 1)))
        n_tied = int(members.size)
        if tie_break != "input":
            if perm is None:
                perm = np.arange(rows_r.size, dtype=np.int64)
            src = perm[members] if all_kept else sel[perm[members]]
            doc_rank = _id_rank(doc_ids, run.d[src])
            start = np.ones(members.size, dtype=bool)
            start[1:] = ~((members[1:] == members[:-1] + 1) & np.isin(members[:-1], tied, assume_unique=True))
            group = np.cumsum(start)
            sub = np.lexsort((-doc_rank if tie_break == "trec_eval" else doc_rank, group))
            perm[members] = perm[members][sub]
    if perm is None:
        docs_sorted = run.d if all_kept else run.d[sel]
    else:
        docs_sorted = run.d[perm] if all_kept else run.d[sel[perm]]
    counts = np.bincount(rows_r, minlength=n_rows)
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

    report = ReadReport(
        qrels_source=lab.source,
        run_source=run.source,
        n_judgements=int(lab.n),
        n_run_lines=int(run.n),
        n_queries=int(n_rows),
        n_qrels_queries=int(in_qrels.sum()),
        n_run_queries=int(in_run.sum()),
        missing_queries=tuple(query_ids[missing_codes]),
        missing=missing if missing != "error" else "drop",
        extra_queries=tuple(query_ids[extra_codes]),
        extra=extra if extra != "error" else "drop",
        n_dropped_run_lines=int(run.n - rows_r.size),
        n_queries_without_relevant=n_without,
        n_negative_labels=n_negative,
        n_tied_lines=n_tied,
        relevance_level=float(relevance_level),
        tie_break=tie_break,
        order_by=order_by,
    )
    return TrecData(binary, numeric, rankings, query_ids[row_codes], doc_ids, report)


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
    grouped = np.unique(block_rows).size == block_rows.size
    if grouped:
        same = np.ones(n - 1, dtype=bool)
        same[brk - 1] = False
        if bool(np.all(key[1:][same] >= key[:-1][same])):
            if np.all(block_rows[1:] > block_rows[:-1]):
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
    pd = _pandas()
    values = doc_ids[codes]
    try:
        ranks, _ = pd.factorize(values, sort=True)
    except TypeError as exc:
        raise TypeError(
            f"tie_break needs sortable document ids to break ties in score ({exc}); use "
            "tie_break='input' to keep the input order instead") from None
    return ranks.astype(np.int64)


# ----------------------------------------------------------------------------------------
# public readers
# ----------------------------------------------------------------------------------------

def read_trec(qrels, run, relevance_level=1, tie_break="trec_eval", order_by="score", missing="drop",
              extra="drop", progress=None):
    """Read a TREC qrels file and a TREC run file into labels and rankings.

    Parameters
    ----------
    qrels : str, path or binary file object
        Judgements, one ``query iteration docid relevance`` line each; plain or gzip.
    run : str, path or binary file object
        The run, one ``query Q0 docid rank score tag`` line each; plain or gzip.
    relevance_level : number, default=1
        Grade from which a document counts as relevant for binary metrics (``trec_eval -l``).
    tie_break : {'trec_eval', 'docid', 'input'}, default='trec_eval'
        Order of documents with equal scores (or ranks): ``'trec_eval'`` compares scores as
        32-bit floats and puts the larger docid first (string order), matching ``trec_eval``
        exactly; ``'docid'`` compares exact scores, smaller docid first; ``'input'`` compares
        exact scores and keeps the file order.
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
    _check_options(relevance_level, tie_break, order_by, missing, extra)
    _pandas()  # fail early, with an installation hint, if pandas is missing
    pq = _parse(qrels, _QRELS, progress)
    pr = _parse(run, _RUN, progress, need_rank=order_by == "rank")

    q_l, uq_l = _factorize_runs(pq.q)
    q_r, uq_r = _factorize_runs(pr.q)
    d_l, ud_l = _factorize(pq.d)
    d_r, ud_r = _factorize(pr.d)
    query_ids, ml, mr = _union_ids(uq_l, uq_r)
    doc_ids, dl, dr = _union_ids(ud_l, ud_r)
    query_ids = query_ids.rename("query")
    doc_ids = doc_ids.rename("docid")

    def side(p, q, d):
        return _Side(q, d, p.value, p.rank, len(p), p.name, p.error, lambda row: f"on line {p.line(row)}")

    return _assemble(side(pq, ml[q_l], dl[d_l]), side(pr, mr[q_r], dr[d_r]), query_ids, doc_ids,
                     relevance_level, tie_break, order_by, missing, extra, "document")


def from_dataframes(labels, run, query_col="query", item_col="item", label_col="label", score_col=None,
                    rank_col=None, relevance_level=1, tie_break="trec_eval", missing="drop", extra="drop"):
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
    relevance_level, tie_break, missing, extra
        As in :func:`read_trec`. ``tie_break`` compares item ids in their natural order
        (numbers numerically, strings lexicographically).

    Returns
    -------
    TrecData
        As :func:`read_trec`; ``query_ids`` and ``doc_ids`` hold the original ids.

    Raises
    ------
    ValueError
        For a missing column, missing ids, non-numeric/NaN grades or scores, non-integer
        ranks, duplicate (query, item) pairs (naming the offending row) or invalid options.

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
    _check_options(relevance_level, tie_break, order_by, missing, extra)
    pd = _pandas()
    for df, what in ((labels, "labels"), (run, "run")):
        if not isinstance(df, pd.DataFrame):
            raise TypeError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    if score_col is not None and rank_col is not None:
        raise ValueError("give score_col or rank_col, not both")
    if score_col is None and rank_col is None:
        if "score" in run.columns:
            score_col = "score"
        elif "rank" in run.columns:
            rank_col, order_by = "rank", "rank"
        else:
            raise ValueError("run has neither a 'score' nor a 'rank' column; name one with score_col= "
                             f"or rank_col= (columns: {list(run.columns)})")
    value_col = rank_col if rank_col is not None else score_col
    for df, what, cols in ((labels, "labels", (query_col, item_col, label_col)),
                           (run, "run", (query_col, item_col, value_col))):
        absent = [c for c in cols if c not in df.columns]
        if absent:
            raise ValueError(f"{what} DataFrame has no column {absent[0]!r} (columns: {list(df.columns)})")

    def where_for(df, what):
        def where(row, reason):
            return ValueError(f"{what} DataFrame, row {row} (index {_r(df.index[row])}): {reason}")

        def short(row):
            return f"in row {row} (index {_r(df.index[row])})"
        return where, short

    lwhere, lshort = where_for(labels, "labels")
    rwhere, rshort = where_for(run, "run")
    for df, where, col in ((labels, lwhere, query_col), (labels, lwhere, item_col),
                           (run, rwhere, query_col), (run, rwhere, item_col)):
        isna = df[col].isna().to_numpy()
        if isna.any():
            raise where(int(np.argmax(isna)), f"missing id in column {col!r}")

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
    lab = _Side(ql, dl, grades, None, len(labels), "labels DataFrame", lwhere, lshort)
    runs = _Side(qr, dr, values, ranks, len(run), "run DataFrame", rwhere, rshort)
    return _assemble(lab, runs, query_ids, doc_ids, relevance_level, tie_break, order_by, missing, extra,
                     "item")


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
