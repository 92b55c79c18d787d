"""Bytes in: files, gzip, standard input, progress bars, and the optional dependencies."""
import contextlib
import contextvars
import gzip
import os
import sys
import threading
import zlib

from rankereval._switches import forced
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
_PARSER = contextvars.ContextVar("rankereval_parser", default="auto")  # see rankereval._switches


def _forced_parser(name):
    """Within the block, the readers use parser ``name`` ('pyarrow' or 'pandas'; tests)."""
    return forced(_PARSER, name, ("auto", "pyarrow", "pandas"))


def _pandas():
    from rankereval._optional import require

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


def _blocks(src, progress):
    """The content of ``src`` (path or file object), gunzipped, as bytes blocks of about
    ``_READ_BYTES`` that each end at a line end (the last one: where the content ends).

    A file is read block by block, so that a reader holds one block of text at a time, never
    the whole file; a file object (e.g. standard input) is read whole, as one block.
    """
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
        yield data
        return
    if not isinstance(src, (str, bytes, os.PathLike)):
        raise TypeError(f"expected a path or a file object, got {type(src).__name__}")
    # unbuffered: each read() makes its bytes object in one piece, with no copy in between
    with open(src, "rb", buffering=0) as raw:
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
            # one buffer, reused: each block is a view of it, valid until the next is asked
            # for (a fresh 64 MB object per block would cost a page fault per 4 kB each time);
            # no larger than a plain file (a 64 MB buffer, zeroed, for a 78 kB qrels file was
            # most of the memory and a share of the time of reading an everyday file)
            buf = bytearray(_READ_BYTES if stream is not raw else max(1, min(_READ_BYTES, size + 1)))
            held, done = 0, 0  # bytes at the start of buf carried over from the last read
            while True:
                if held == len(buf):  # a line longer than the buffer: a larger one
                    buf = buf + bytes(len(buf))
                got = _read_into(stream, memoryview(buf)[held:])
                if bar is not None:
                    pos = raw.tell()
                    bar.update(pos - done)
                    done = pos
                n = held + got
                if got == 0:
                    if held:
                        yield memoryview(buf)[:held]
                    break
                end = buf.rfind(b"\n", held, n) + 1
                if end == 0:  # no line end in what was read: keep reading
                    held = n
                    continue
                yield memoryview(buf)[:end]
                held = n - end
                buf[:held] = buf[end:n]
        except (OSError, EOFError, zlib.error) as exc:
            if stream is raw:
                raise
            raise TrecFormatError(name, None, f"not a valid gzip stream ({exc})") from None
        finally:
            if bar is not None:
                bar.close()


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
