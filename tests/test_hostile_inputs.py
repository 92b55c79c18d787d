"""Hostile and unusual inputs to the TREC readers: files without line ends (/dev/zero), gzip
bombs (one long line; lines repeated), pipes, FIFOs and /dev/stdin, overlong lines, byte
order marks, and mutated files.

The bombs run the command line in a subprocess under an address-space limit
(``resource.setrlimit(RLIMIT_AS)``, 1 GB) and a timeout: the command must end with a one-line
error, never a traceback or the limit's ``MemoryError``. A bomb is a few gzip members of the
same compressed block written one after the other (a valid gzip stream: each member
decompresses in turn), so making one costs one compression of a few MB.
"""
import gzip
import os
import subprocess
import sys
import threading
import zlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("pandas")

from rankereval.io import TrecFormatError, read_trec  # noqa: E402
from rankereval.io import _source  # noqa: E402

HAVE_PYARROW = _source._pyarrow() is not None
resource = pytest.importorskip("resource")

QRELS = b"1 0 d1 1\n1 0 d2 0\n2 0 d1 1\n"
RUN = b"1 Q0 d1 1 2.5 t\n1 Q0 d2 2 1.5 t\n2 Q0 d1 1 1.0 t\n"
LIMIT_AS = 1 << 30  # bytes of address space the command line gets for a bomb
# under AddressSanitizer (CONTRIBUTING.md: the sanitizer build) an address-space limit cannot
# be set: ASan reserves terabytes of it; the tests that need one are skipped there
ASAN = "asan" in os.environ.get("LD_PRELOAD", "")
needs_limit = pytest.mark.skipif(ASAN, reason="RLIMIT_AS cannot be set under AddressSanitizer")


@pytest.fixture(params=["pyarrow", "pandas"])
def parser(request):
    if request.param == "pyarrow" and not HAVE_PYARROW:
        pytest.skip("pyarrow not installed")
    with _source._forced_parser(request.param):
        yield request.param


def _limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def _cli(*args, stdin=None, timeout=60):
    """(exit status, stdout, stderr) of ``python -m rankereval`` under LIMIT_AS."""
    env = dict(os.environ, RANKEREVAL_NUM_THREADS="1", OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "rankereval", *args], input=stdin, capture_output=True,
                          timeout=timeout, preexec_fn=None if ASAN else _limit_memory, env=env)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def _bomb(path, block, members):
    """A gzip file of ``members`` copies of the gzip member of ``block``."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    member = c.compress(block) + c.flush()
    with open(path, "wb") as fh:
        for _ in range(members):
            fh.write(member)
    return os.path.getsize(path)


@pytest.fixture
def qrels(tmp_path):
    p = tmp_path / "qrels"
    p.write_bytes(QRELS)
    return str(p)


def _one_line_error(rc, err):
    assert rc == 1, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rankereval: error: "), err
    assert "Traceback" not in err and "MemoryError" not in err
    return lines[0]


@needs_limit
def test_dev_zero_is_refused_after_one_long_line(qrels):
    rc, _out, err = _cli("evaluate", qrels, "/dev/zero")
    line = _one_line_error(rc, err)
    assert "/dev/zero, line 1: line longer than" in line


@needs_limit
def test_gzip_bomb_of_one_long_line(qrels, tmp_path):
    path = str(tmp_path / "long.gz")
    size = _bomb(path, b"7" * (16 << 20), 256)  # 4 GiB of one line
    assert size < 8 << 20
    rc, _out, err = _cli("evaluate", qrels, path)
    assert "line 1: line longer than" in _one_line_error(rc, err)


@needs_limit
def test_gzip_bomb_of_one_line_repeated(qrels, tmp_path):
    path = str(tmp_path / "repeated.gz")
    _bomb(path, b"1 Q0 d1 1 2.5 t\n" * (1 << 20), 256)  # 4 GiB, 268M lines
    rc, _out, err = _cli("evaluate", qrels, path)
    assert "line 2: duplicate document 'd1' for query '1' (first given on line 1)" in _one_line_error(rc, err)


@needs_limit
def test_gzip_bomb_of_a_file_repeated(qrels, tmp_path):
    # 200 distinct lines (100 queries x 2 documents) repeated to 4 GB: found in the first block
    text = b"".join(b"q%d Q0 d%d %d 1.0 t\n" % (i // 2, i, i % 2 + 1) for i in range(200))
    path = str(tmp_path / "file.gz")
    _bomb(path, text * 500, 1000)
    rc, _out, err = _cli("evaluate", qrels, path)
    assert "line 201: duplicate document 'd0' for query 'q0' (first given on line 1)" in _one_line_error(rc, err)


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_repeats_found_at_doubling_checkpoints(parser, monkeypatch, kind):
    """Distinct queries and documents on every line (no count can tell), a repeated line, then
    more lines and a malformed one: the repeat is reported from a checkpoint (rows doubled
    since the last), before the reader reaches the malformed line."""
    from rankereval.io import _parse

    monkeypatch.setattr(_parse, "_DUPLICATE_CHECK_ROWS", 500)
    monkeypatch.setattr(_source, "_READ_BYTES", 4096)
    fmt = b"q%d 0 d%d 1\n" if kind == "qrels" else b"q%d Q0 d%d 1 1.0 t\n"
    lines = [fmt % (i, i) for i in range(3000)] + [fmt % (7, 7)] + [fmt % (i, i) for i in range(3000, 20000)]
    text = b"".join(lines) + b"malformed\n"
    qrels_path, run_path = (_write(text), _write(RUN)) if kind == "qrels" else (_write(QRELS), _write(text))
    with pytest.raises(TrecFormatError) as err:
        read_trec(qrels_path, run_path)
    assert err.value.line == 3001
    assert "duplicate" in str(err.value) and "'q7'" in str(err.value) and "line 8" in str(err.value)


@needs_limit
def test_qrels_bomb_stops_at_the_first_duplicate(tmp_path):
    path = str(tmp_path / "qrels.gz")
    _bomb(path, b"1 0 d1 1\n" * (1 << 20), 256)
    run = tmp_path / "run"
    run.write_bytes(RUN)
    rc, _out, err = _cli("evaluate", path, str(run))
    assert "line 2: duplicate judgement for query '1' and document 'd1'" in _one_line_error(rc, err)


@needs_limit
def test_memory_error_is_one_line():
    """A MemoryError (here: a request beyond the address-space limit) reaches the command
    line's handler as a one-line error."""
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
            "from rankereval.cli import _common as c;"
            "sys.exit(c.guarded(lambda: bytearray(1 << 31), None, 'evaluate', sys.stderr))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == ["rankereval: error: out of memory"]


# ---- pipes, FIFOs, /dev/stdin

def _summary(data):
    lab = data.numeric_labels
    return (data.rankings.to_list(), lab.indices_to_list(), lab.labels_to_list(), list(data.query_ids),
            list(data.doc_ids))


def _expected():
    data = read_trec(_write(QRELS), _write(RUN))
    return _summary(data)


_tmp_files = []


def _write(content, suffix=""):
    import tempfile

    fd, path = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as fh:
        fh.write(content)
    _tmp_files.append(path)
    return path


@pytest.mark.parametrize("compress", [False, True])
def test_fifo_reads_like_a_file(parser, tmp_path, compress):
    fifo = str(tmp_path / "run.fifo")
    os.mkfifo(fifo)
    content = gzip.compress(RUN) if compress else RUN

    def feed():
        with open(fifo, "wb") as fh:
            fh.write(content)

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        data = read_trec(_write(QRELS), fifo)
    finally:
        writer.join(timeout=10)
    assert _summary(data) == _expected()


@pytest.mark.parametrize("arg", ["/dev/stdin", "-"])
def test_stdin_path_and_dash(qrels, arg):
    rc, out, err = _cli("evaluate", qrels, arg, "-m", "map", stdin=gzip.compress(RUN))
    assert rc == 0, err
    ref_rc, ref_out, _ = _cli("evaluate", qrels, _write(RUN), "-m", "map")
    assert out == ref_out


def test_file_object_read_in_blocks(parser, monkeypatch):
    """A file object (standard input) is read in blocks too: a long line is refused."""
    import io

    monkeypatch.setattr(_source, "_MAX_LINE_BYTES", 64)
    with pytest.raises(TrecFormatError, match="line 4: line longer than 64 bytes"):
        read_trec(_write(QRELS), io.BytesIO(RUN + b"1 Q0 " + b"x" * 80 + b" 3 0.5 t\n" + RUN))
    got = read_trec(_write(QRELS), io.StringIO(RUN.decode()))
    assert _summary(got) == _expected()


# ---- line length: the same rule wherever the line is (within a block, across blocks, last)

@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 90), min_size=1, max_size=30), read_bytes=st.sampled_from([128, 200, 4096]),
       final_newline=st.booleans(), which=st.sampled_from(["pyarrow", "pandas"]))
def test_max_line_length_anywhere(lengths, read_bytes, final_newline, which):
    """With a limit of 64 bytes, the first line longer than that is refused with its line
    number (the block size and the line's position do not matter); else the file reads as
    with no limit."""
    if which == "pyarrow" and not HAVE_PYARROW:
        return
    lines = [b"%d Q0 %s 1 %d.5 t" % (i // 3, b"d" * (n if n > 20 else 1) + b"%d" % i, -i)
             for i, n in enumerate(lengths)]
    text = b"\n".join(lines) + (b"\n" if final_newline else b"")
    long_ = [i for i, line in enumerate(lines) if len(line) > 64]
    qrels = _write(b"0 0 d1 1\n")
    run = _write(text)
    with _source._forced_parser(which):
        expected = None if long_ else read_trec(qrels, run, extra="keep")
        saved = _source._MAX_LINE_BYTES, _source._READ_BYTES
        _source._MAX_LINE_BYTES, _source._READ_BYTES = 64, read_bytes
        try:
            if long_:
                with pytest.raises(TrecFormatError) as err:
                    read_trec(qrels, run, extra="keep")
                assert err.value.line == long_[0] + 1
                assert "line longer than 64 bytes" in str(err.value)
            else:
                got = read_trec(qrels, run, extra="keep")
                assert got.rankings.to_list() == expected.rankings.to_list()
        finally:
            _source._MAX_LINE_BYTES, _source._READ_BYTES = saved


def test_default_line_limit_is_far_above_real_lines():
    assert _source._MAX_LINE_BYTES >= 1 << 20
    assert _source._MAX_LINE_BYTES <= _source._READ_BYTES


def teardown_module():
    for path in _tmp_files:
        try:
            os.unlink(path)
        except OSError:
            pass


# ---- byte order marks: skipped at the file's start only, wherever the blocks are cut

BOM = b"\xef\xbb\xbf"


def _read_or_line(qrels, run):
    try:
        d = read_trec(qrels, run, missing="empty", extra="keep")
    except TrecFormatError as exc:
        return ("error", exc.line)
    return _summary(d)


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(st.tuples(st.integers(0, 2), st.sampled_from(["bom", "plain", "only"])), min_size=1,
                      max_size=12),
       lead=st.booleans(), final_newline=st.booleans(), read_bytes=st.sampled_from([64, 70, 4096]),
       which=st.sampled_from(["pyarrow", "pandas"]))
def test_byte_order_mark_one_rule(lines, lead, final_newline, read_bytes, which):
    """A BOM that starts the file is skipped; anywhere else its bytes belong to the line, as
    trec_eval reads them (a BOM before a query id makes another id; a line of a BOM alone is
    one field: an error): the same as reading the file with the BOM spelled ``Zb``, for both
    parsers and whatever the block size."""
    if which == "pyarrow" and not HAVE_PYARROW:
        return
    body = [(BOM if kind == "bom" else b"") + (b"%d 0 d%d 1" % (q, i) if kind != "only" else BOM)
            for i, (q, kind) in enumerate(lines)]
    text = b"\n".join(body) + (b"\n" if final_newline else b"")
    if lead:
        text = BOM + text
    # the file's first BOM (given as such, or the first line's) is skipped
    marked = (text[3:] if text.startswith(BOM) else text).replace(BOM, b"Zb")
    run = _write(b"0 Q0 d0 1 1.0 t\n")
    with _source._forced_parser(which):
        expected = _read_or_line(_write(marked), run)
        saved = _source._MAX_LINE_BYTES, _source._READ_BYTES
        _source._MAX_LINE_BYTES, _source._READ_BYTES = 64, read_bytes
        try:
            got = _read_or_line(_write(text), run)
        finally:
            _source._MAX_LINE_BYTES, _source._READ_BYTES = saved
    if expected[0] != "error":
        expected = (expected[0], expected[1], expected[2], [q.replace("Zb", "\ufeff") for q in expected[3]],
                    expected[4])
    assert got == expected
