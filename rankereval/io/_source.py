"""Bytes in: files, gzip, standard input, progress bars, and the optional dependencies."""
import contextlib
import contextvars
import gzip
import os
import stat
import sys
import threading
import zlib

from rankereval._utils._switches import forced
from rankereval.io._result import TrecFormatError


# files above this size show a progress bar (when stderr is a terminal)
_PROGRESS_MIN_BYTES = 32 << 20

# bytes per block of the pyarrow parser and of the line scan that locates a bad line: large
# enough to amortise per-call overhead, small enough that the working set of a block stays
# well inside memory of any machine that runs the reader
_BLOCK_BYTES = 16 << 20

# bytes per read of a file: the readers parse a file in blocks of this size (cut at line
# ends), so that only one block of text and its columns are in memory at a time besides the
# compact columns kept (about 20 bytes a line). 8 MB: the 2M-line run of 72 MB peaked at
# 266 MiB with 64 MB blocks, 236 MiB with 32 MB or 16 MB ones (when the run's ids were
# hashed a second time to join them with the labels'), and peaks at 187 MiB with 8 MB ones
# instead of 224 MiB with 32 MB ones, in the same CPU time
_READ_BYTES = 8 << 20

# Which parser reads the files: "auto" (pyarrow when installed, else pandas), or one forced
# with _forced_parser (tests run both). A context variable, not a module switch: local to
# the thread that set it, and forcing pyarrow where it is missing raises.
_PARSER = contextvars.ContextVar("rankereval_parser", default="auto")  # see rankereval._utils._switches


def _forced_parser(name):
    """Within the block, the readers use parser ``name`` ('pyarrow' or 'pandas'; tests)."""
    return forced(_PARSER, name, ("auto", "pyarrow", "pandas"))


def _pandas():
    from rankereval._utils._optional import require

    return require("pandas", "io", "rankereval.io")


def _pyarrow():
    parser = _PARSER.get()
    if parser == "pandas":
        return None
    try:
        import pyarrow  # noqa: F401
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    except ImportError:
        if parser == "pyarrow":
            raise ImportError("the pyarrow parser was forced but pyarrow is not installed") from None
        return None
    return pyarrow


def _have_pyarrow():
    """Whether the pyarrow parser (and the short-id parser that goes with it) serves the
    readers, without importing pyarrow: a file of plain lines is read by the short-id parser
    alone, and pyarrow (about 0.15 s of CPU to import) only comes in for a block that needs it
    (:func:`_pyarrow_for_reading`)."""
    parser = _PARSER.get()
    if parser == "pandas":
        return False
    if parser == "pyarrow":
        return _pyarrow() is not None  # forced: missing raises
    import importlib.util

    if sys.modules.get("pyarrow") is not None:
        return True
    try:
        return importlib.util.find_spec("pyarrow") is not None
    except (ImportError, ValueError):  # e.g. sys.modules["pyarrow"] = None: import blocked
        return False


_POOL_LOCK = threading.Lock()
# readers inside _arrow_memory, whether the pool was switched, the pool to restore
_POOL_STATE = {"depth": 0, "switched": False, "previous": None}


@contextlib.contextmanager
def _arrow_memory():
    """Within the block, pyarrow allocates from jemalloc where it has it (once
    :func:`_pyarrow_for_reading` brought pyarrow in): jemalloc hands freed blocks back to the
    system, which keeps the peak memory of reading a large file near the file's size plus its
    columns (mimalloc, pyarrow's default on most platforms, keeps them: about 1.2 GB instead of
    1.0-1.1 GB for a 378 MB run file). Buffers remember their pool, so switching back is safe;
    readers in several threads share one switch (the first to need pyarrow sets it, the last
    reader out restores it). Without pyarrow or jemalloc this does nothing."""
    with _POOL_LOCK:
        _POOL_STATE["depth"] += 1
    try:
        yield
    finally:
        with _POOL_LOCK:
            _POOL_STATE["depth"] -= 1
            if _POOL_STATE["depth"] == 0 and _POOL_STATE["switched"]:
                sys.modules["pyarrow"].set_memory_pool(_POOL_STATE["previous"])
                _POOL_STATE["switched"], _POOL_STATE["previous"] = False, None


def _pyarrow_for_reading():
    """:func:`_pyarrow`, with the memory pool of :func:`_arrow_memory` switched to jemalloc
    when a reader is inside it."""
    pa = _pyarrow()
    if pa is None:
        return None
    with _POOL_LOCK:
        if _POOL_STATE["depth"] and not _POOL_STATE["switched"]:
            try:
                pool = pa.jemalloc_memory_pool()
            except (NotImplementedError, pa.ArrowNotImplementedError):
                return pa
            _POOL_STATE["previous"] = pa.default_memory_pool()
            pa.set_memory_pool(pool)
            _POOL_STATE["switched"] = True
    return pa


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


# the longest line the readers take, in bytes (its line end aside): far above any real TREC
# line (a few hundred bytes; document ids that are URLs stay within a few kB), and small
# enough that a file without line ends (/dev/zero, a gzip of one long line) is refused after
# reading this much, with its line number, instead of filling memory. Not above _READ_BYTES:
# a block always holds a whole line.
_MAX_LINE_BYTES = 1 << 20


class LineTooLongError(ValueError):
    """A line of more than ``_MAX_LINE_BYTES`` bytes; ``offset``: where it starts in the
    block that was being read (the readers turn it into a TrecFormatError with its line
    number)."""

    def __init__(self, offset=0):
        super().__init__(_too_long_reason())
        self.offset = offset


def _too_long_reason():
    return (f"line longer than {_MAX_LINE_BYTES} bytes (the longest the readers take: "
            "is this a TREC file?)")


def _long_line_start(block):
    """Offset in ``block`` of the start of a line longer than ``_MAX_LINE_BYTES``, or -1.

    A line that long holds a whole window of ``_MAX_LINE_BYTES // 2`` bytes starting at a
    multiple of it, and such a window holds no line end: one ``find`` a window, each of which
    stops at the first line end (a few per block of everyday text).
    """
    half = _MAX_LINE_BYTES // 2
    n = len(block)
    if n <= _MAX_LINE_BYTES:
        return -1
    # a block is a view of the start of the read buffer: search the buffer, within n
    data = block.obj if isinstance(block, memoryview) and isinstance(block.obj, bytearray) else bytes(block)
    checked = 0  # the lines starting before this offset were measured
    for p in range(0, n - half + 1, half):
        if p < checked or data.find(b"\n", p, p + half) >= 0:
            continue
        start = data.rfind(b"\n", 0, p) + 1
        end = data.find(b"\n", p, n)
        end = n if end < 0 else end
        if end - start > _MAX_LINE_BYTES:
            return start
        checked = end
    return -1


class _Stream:
    """``readinto``/``read`` over a file object's ``read(n)`` (bytes or str, as UTF-8), after
    ``head``, bytes already read from it (to see whether it is gzip): a pipe cannot seek."""

    def __init__(self, read, head=b""):
        self._read = read
        self._pending = head

    def read(self, n=-1):
        if self._pending:
            data, self._pending = self._pending, b""
            if n is not None and 0 <= n < len(data):
                data, self._pending = data[:n], data[n:]
            return data
        data = self._read(n)
        return data.encode("utf-8") if isinstance(data, str) else data

    def readinto(self, view):
        data = self.read(len(view))
        if len(data) > len(view):  # str read: more bytes than characters
            data, self._pending = data[:len(view)], data[len(view):]
        view[:len(data)] = data
        return len(data)


def _open_stream(src):
    """(stream, raw, size, close) of a path or file object: ``stream`` has ``readinto`` and
    gives the content gunzipped; ``raw`` (a plain file opened here, for the progress bar's
    position) or None; ``size`` in bytes of a regular file, else 0; ``close`` a callable."""
    if hasattr(src, "read"):  # read through its read(n), whatever it is (standard input)
        raw, size, close = None, 0, (lambda: None)
        base = _Stream(src.read)
    else:
        if not isinstance(src, (str, bytes, os.PathLike)):
            raise TypeError(f"expected a path or a file object, got {type(src).__name__}")
        # unbuffered: each read() makes its bytes object in one piece, with no copy in between
        raw = open(src, "rb", buffering=0)
        close = raw.close
        try:
            st = os.fstat(raw.fileno())
        except BaseException:
            raw.close()
            raise
        size = st.st_size if stat.S_ISREG(st.st_mode) else 0
        # a pipe, FIFO, terminal or device (/dev/stdin, <(cat file)): read as a stream
        base = raw if stat.S_ISREG(st.st_mode) else _Stream(raw.read)
        if base is not raw:
            raw = None
    try:
        magic = _read_exactly(base, 2)
        if base is raw:
            raw.seek(0)
        else:
            base = _Stream(base.read, magic)
        if magic == b"\x1f\x8b":
            stream = gzip.GzipFile(fileobj=base, mode="rb")
        else:
            stream = base
    except BaseException:
        close()
        raise
    return stream, raw, size, close


def _read_exactly(stream, n):
    out = b""
    while len(out) < n:
        data = stream.read(n - len(out))
        if not data:
            break
        out += data
    return out


def _blocks(src, progress):
    """The content of ``src`` (path or file object: a file, standard input, a pipe),
    gunzipped, as bytes blocks of about ``_READ_BYTES`` that each end at a line end (the last
    one: where the content ends).

    Any source is read block by block, so that a reader holds one block of text at a time,
    never the whole file; a line longer than ``_MAX_LINE_BYTES`` raises
    :class:`LineTooLongError` (offset 0: the line after the blocks given).
    """
    name = _source_name(src)
    stream, raw, size, close = _open_stream(src)
    try:
        bar = None
        if raw is not None and _want_progress(progress, size):
            try:
                from tqdm.auto import tqdm

                bar = tqdm(total=size, unit="B", unit_scale=True, leave=False, file=sys.stderr,
                           desc=f"reading {os.path.basename(name)}")
            except ImportError:
                bar = None
        try:
            # one buffer, reused: each block is a view of it, valid until the next is asked
            # for (a fresh 64 MB object per block would cost a page fault per 4 kB each time);
            # no larger than a plain file (a 64 MB buffer, zeroed, for a 78 kB qrels file was
            # most of the memory and a share of the time of reading an everyday file)
            plain = stream is raw and size > 0
            buf = bytearray(max(1, min(_READ_BYTES, size + 1)) if plain else 1 << 16)
            held, done = 0, 0  # bytes at the start of buf carried over from the last read
            while True:
                if held == len(buf):  # a line longer than the buffer: a larger one
                    if held > _MAX_LINE_BYTES:
                        raise LineTooLongError()
                    grown = bytearray(min(2 * len(buf), max(_READ_BYTES, 2 * _MAX_LINE_BYTES)))
                    grown[:held] = buf
                    buf = grown
                got = _read_into(stream, memoryview(buf)[held:])
                if bar is not None:
                    pos = raw.tell()
                    bar.update(pos - done)
                    done = pos
                n = held + got
                if got == 0:
                    if held > _MAX_LINE_BYTES:
                        raise LineTooLongError()
                    if held:
                        yield memoryview(buf)[:held]
                    break
                end = buf.rfind(b"\n", held, n) + 1
                if end == 0:  # no line end in what was read: keep reading
                    if n > _MAX_LINE_BYTES:
                        raise LineTooLongError()
                    held = n
                    continue
                yield memoryview(buf)[:end]
                held = n - end
                buf[:held] = buf[end:n]
                if stream is not raw and len(buf) < _READ_BYTES:
                    # a stream of unknown size: from a small buffer to a larger one
                    grown = bytearray(min(2 * len(buf), _READ_BYTES))
                    grown[:held] = buf[:held]
                    buf = grown
        except (OSError, EOFError, zlib.error) as exc:
            if not isinstance(stream, gzip.GzipFile):
                raise
            raise TrecFormatError(name, None, f"not a valid gzip stream ({exc})") from None
        finally:
            if bar is not None:
                bar.close()
    finally:
        close()


def _read_into(stream, view):
    """Fill ``view`` from ``stream``; the number of bytes read, short only at its end."""
    got, n = 0, len(view)
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            break
        got += k
    return got


def _light_normalise(buf, start=True):
    """No byte order mark (if ``buf`` starts the file), ``\n`` line ends, other whitespace as
    spaces (single-byte scans)."""
    if start and buf.startswith(b"\xef\xbb\xbf"):  # UTF-8 byte order mark
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
