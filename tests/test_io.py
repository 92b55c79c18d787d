"""Tests of rankereval.io: TREC files and DataFrames to labels and rankings.

A slow reference reader (plain Python dicts and sorts, written from the documented rules)
checks the fast reader on generated TREC pairs with awkward ids, ties, shuffled lines and
queries on one side only; pytrec_eval checks the numbers of the metrics where trec_eval's
definitions coincide with ours. Both parsers (pyarrow and pandas) are exercised.
"""
import gzip
import importlib.util
import io
import os
import random
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

pd = pytest.importorskip("pandas")

from rankereval import AP, NDCG, BinaryLabels, NumericLabels, Precision, Rankings, Recall, ReciprocalRank  # noqa: E402
from rankereval.io import _assemble, _source  # noqa: E402
from rankereval.io import TrecFormatError, from_dataframes, read_trec, sample_paths  # noqa: E402

HAVE_PYARROW = _source._pyarrow() is not None


@pytest.fixture(params=["pyarrow", "pandas"])
def parser(request):
    """Run a test with each of the two parsers."""
    if request.param == "pyarrow" and not HAVE_PYARROW:
        pytest.skip("pyarrow not installed")
    with _source._forced_parser(request.param):
        yield request.param


# ----------------------------------------------------------------------------------------
# generated TREC pairs and a slow reference reader
# ----------------------------------------------------------------------------------------

def make_pair(seed, n_queries=12, only_qrels=2, only_run=2, grades=(0, 1, 2, 3), negative=False):
    """(qrels lines, run lines): awkward ids, ties, shuffled run lines, one-sided queries."""
    rng = random.Random(seed)
    qids = [str(x) for x in rng.sample([1, 2, 3, 10, 11, 20, 100, 7, 8, 9, 42, 5, 6, 77, 300, 12], n_queries)]
    qids[0] = "q" + qids[0]
    qrels, run = [], []
    for i, q in enumerate(qids):
        docs = [f"D{rng.randrange(40)}" for _ in range(30)]
        docs = list(dict.fromkeys(docs))
        judged = rng.sample(docs, min(len(docs), 12)) + [f"U{i}"]  # U: judged, never retrieved
        if i < len(qids) - only_run:
            for d in judged:
                g = rng.choice(grades)
                if negative and rng.random() < 0.1:
                    g = -1
                qrels.append(f"{q} 0 {d} {g}")
        if i >= only_qrels:
            for rank, d in enumerate(docs, 1):
                s = rng.choice([0.5, 1.0, 1.5, 2.0, 2.25, 3.0, rng.random() * 3])
                if d.endswith("7"):
                    s = 1.00000001  # ties 1.0 at 32-bit precision only
                run.append(f"{q} Q0 {d} {rank} {s!r} tag")
    rng.shuffle(run)
    rng.shuffle(qrels)
    return qrels, run


def ref_read(qrels_lines, run_lines, tie_break="trec_eval", missing="drop", extra="drop"):
    """Slow reference: {query: (ranked doc ids, {doc: grade})} for the rows, in row order."""
    qrels, run = {}, {}
    for line in qrels_lines:
        q, _it, d, g = line.split()
        qrels.setdefault(q, {})[d] = float(g)
    for i, line in enumerate(run_lines):
        q, _q0, d, _rank, s, _tag = line.split()
        run.setdefault(q, []).append((d, float(s), i))
    rows = set(qrels) & set(run)
    if missing == "empty":
        rows |= set(qrels)
    if extra == "keep":
        rows |= set(run)
    out = {}
    for q in sorted(rows):
        docs = list(run.get(q, []))
        if tie_break == "trec_eval9":
            docs.sort(key=lambda t: t[0], reverse=True)
            docs.sort(key=lambda t: -float(np.float32(t[1])))
        elif tie_break == "trec_eval":
            docs.sort(key=lambda t: t[0], reverse=True)
            docs.sort(key=lambda t: -t[1])
        elif tie_break == "docid":
            docs.sort(key=lambda t: t[0])
            docs.sort(key=lambda t: -t[1])
        else:
            docs.sort(key=lambda t: t[2])
            docs.sort(key=lambda t: -t[1])
        out[q] = ([d for d, _s, _i in docs], qrels.get(q, {}))
    return out


def as_strings(data):
    """{query: (ranked doc ids, {doc: grade}, set of relevant docs)} of a TrecData."""
    out = {}
    ranks = data.rankings.to_list()
    num_idx, num_val = data.numeric_labels.indices_to_list(), data.numeric_labels.labels_to_list()
    bin_idx = data.binary_labels.indices_to_list()
    for r, q in enumerate(data.query_ids):
        out[str(q)] = (
            [data.doc_ids[i] for i in ranks[r]],
            {data.doc_ids[i]: v for i, v in zip(num_idx[r], num_val[r])},
            {data.doc_ids[i] for i in bin_idx[r]},
        )
    return out


def write(path, lines, gz=False, end="\n"):
    text = "".join(line + end for line in lines).encode()
    if gz:
        text = gzip.compress(text)
    with open(path, "wb") as fh:
        fh.write(text)
    return str(path)


def check_against_reference(data, qrels, run, level=1, **kw):
    ref = ref_read(qrels, run, **kw)
    got = as_strings(data)
    assert list(got) == list(ref)
    for q, (ranked, grades) in ref.items():
        g_ranked, g_grades, g_rel = got[q]
        assert g_ranked == ranked, q
        assert g_grades == {d: max(v, 0.0) for d, v in grades.items() if v > 0}, q
        assert g_rel == {d for d, v in grades.items() if v >= level}, q


# ----------------------------------------------------------------------------------------
# files
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("tie_break", ["trec_eval", "trec_eval9", "docid", "input"])
@pytest.mark.parametrize("seed", [0, 1])
def test_read_trec_matches_reference(tmp_path, parser, tie_break, seed):
    qrels, run = make_pair(seed, negative=True)
    data = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run), tie_break=tie_break)
    check_against_reference(data, qrels, run, tie_break=tie_break)
    rep = data.report
    assert rep.n_judgements == len(qrels) and rep.n_run_lines == len(run)
    assert rep.n_queries == len(data.query_ids) == data.rankings.n_rows == data.binary_labels.n_rows
    assert len(rep.missing_queries) == 2 and len(rep.extra_queries) == 2
    assert rep.n_dropped_run_lines == sum(line.split()[0] in rep.extra_queries for line in run)
    assert rep.n_negative_labels == sum(line.split()[3] == "-1" for line in qrels)
    assert rep.n_tied_lines > 0
    assert isinstance(data.binary_labels, BinaryLabels) and isinstance(data.numeric_labels, NumericLabels)
    assert isinstance(data.rankings, Rankings)


@pytest.mark.parametrize("missing,extra", [("empty", "drop"), ("drop", "keep"), ("empty", "keep")])
def test_missing_and_extra_queries(tmp_path, parser, missing, extra):
    qrels, run = make_pair(3)
    data = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run), missing=missing, extra=extra)
    check_against_reference(data, qrels, run, missing=missing, extra=extra)
    rep = data.report
    assert (rep.missing, rep.extra) == (missing, extra)
    scores = data.score(Precision(5))
    rows = {str(q): i for i, q in enumerate(data.query_ids)}
    for q in rep.missing_queries:
        if missing == "empty":
            assert data.rankings.lengths[rows[q]] == 0
            assert scores[rows[q]] in (0.0,) or np.isnan(scores[rows[q]])
        else:
            assert q not in rows
    for q in rep.extra_queries:
        if extra == "keep":
            assert np.isnan(scores[rows[q]])  # no judgements: undefined
        else:
            assert q not in rows
    assert any("of the qrels not in the run" in n for n in rep.notes())


def test_missing_extra_error_and_nothing_in_common(tmp_path):
    qrels, run = make_pair(4)
    q, r = write(tmp_path / "q", qrels), write(tmp_path / "r", run)
    with pytest.raises(ValueError, match="no ranking in"):
        read_trec(q, r, missing="error")
    with pytest.raises(ValueError, match="no judgements in"):
        read_trec(q, r, extra="error")
    other = write(tmp_path / "o", ["zzz Q0 D1 1 1.0 t"])
    with pytest.raises(ValueError, match="no query to evaluate"):
        read_trec(q, other)
    # with -c the judged queries are evaluated with empty rankings
    data = read_trec(q, other, missing="empty")
    assert data.rankings.lengths.sum() == 0
    assert np.all(data.score(Recall(10))[~np.isnan(data.score(Recall(10)))] == 0)


def test_gzip_and_file_objects(tmp_path, parser):
    qrels, run = make_pair(5)
    plain = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run))
    gz = read_trec(write(tmp_path / "q.gz", qrels, gz=True), write(tmp_path / "r.anything", run, gz=True))
    assert as_strings(plain) == as_strings(gz)
    objs = read_trec(io.BytesIO("\n".join(qrels).encode()), io.StringIO("\n".join(run)))
    assert as_strings(plain) == as_strings(objs)


def test_whitespace_variants(tmp_path, parser):
    qrels, run = make_pair(6)
    ref = as_strings(read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run)))
    messy_run = ["\ufeff" + run[0]] + [("  " if i % 3 == 0 else "") + line.replace(" ", "\t" if i % 2 else "   ")
                                       + (" \t" if i % 5 == 0 else "") for i, line in enumerate(run[1:])]
    messy_run.insert(4, "")
    messy_run.insert(7, "   \t ")
    q = write(tmp_path / "q2", qrels, end="\r\n")
    r = tmp_path / "r2"
    r.write_bytes("\n".join(messy_run).encode())  # no final newline
    assert as_strings(read_trec(q, str(r))) == ref


def test_relevance_level_and_negative_grades(tmp_path, parser):
    qrels = ["a 0 d1 2", "a 0 d2 1", "a 0 d3 0", "a 0 d4 -2", "b 0 d1 1"]
    run = ["a Q0 d4 1 4 t", "a Q0 d2 2 3 t", "a Q0 d1 3 2 t", "b Q0 d1 1 1 t"]
    q, r = write(tmp_path / "q", qrels), write(tmp_path / "r", run)
    d1 = read_trec(q, r)
    d2 = read_trec(q, r, relevance_level=2)
    docs = d1.doc_ids
    assert [[docs[i] for i in row] for row in d1.binary_labels.indices_to_list()] == [["d1", "d2"], ["d1"]]
    assert [[docs[i] for i in row] for row in d2.binary_labels.indices_to_list()] == [["d1"], []]
    assert d1.numeric_labels.labels_to_list() == [[2.0, 1.0], [1.0]]  # d3 (0) and d4 (-2) not stored
    assert d1.report.n_negative_labels == 1 and d2.report.n_queries_without_relevant == 1
    assert np.isnan(d2.score(Precision(1))[1])
    # graded metrics use the grades whatever the level
    np.testing.assert_allclose(d1.score(NDCG(3)), d2.score(NDCG(3)))
    assert any("negative" in n for n in d1.report.notes())
    assert any("no document with relevance >= 2" in n for n in d2.report.notes())


def test_order_by_rank(tmp_path, parser):
    qrels = ["a 0 x 1"]
    run = ["a Q0 x 2 9.0 t", "a Q0 y 1 1.0 t", "a Q0 z 2 5.0 t", "a Q0 w 3 5.0 t"]
    q, r = write(tmp_path / "q", qrels), write(tmp_path / "r", run)
    by_score = read_trec(q, r)
    by_rank = read_trec(q, r, order_by="rank")
    by_rank_docid = read_trec(q, r, order_by="rank", tie_break="docid")
    names = lambda d: [d.doc_ids[i] for i in d.rankings.to_list()[0]]  # noqa: E731
    assert names(by_score) == ["x", "z", "w", "y"]  # 5.0 tie: larger docid first
    assert names(by_rank) == ["y", "z", "x", "w"]  # rank 2 tie: larger docid first
    assert names(by_rank_docid) == ["y", "x", "z", "w"]


def test_trec_eval_ties_use_doubles_trec_eval9_32bit_scores(tmp_path):
    qrels = ["a 0 x 1"]
    run = ["a Q0 x 1 1.00000001 t", "a Q0 y 2 1.0 t", "a Q0 z 3 1.0 t"]
    q, r = write(tmp_path / "q", qrels), write(tmp_path / "r", run)
    names = lambda d: [d.doc_ids[i] for i in d.rankings.to_list()[0]]  # noqa: E731
    assert names(read_trec(q, r)) == ["x", "z", "y"]  # trec_eval 10: doubles differ, then docid descending
    assert names(read_trec(q, r, tie_break="trec_eval9")) == ["z", "y", "x"]  # equal as float32
    assert names(read_trec(q, r, tie_break="docid")) == ["x", "y", "z"]  # exact scores differ
    assert names(read_trec(q, r, tie_break="input")) == ["x", "y", "z"]


@pytest.mark.parametrize("prefix", ["", "d", "document-", "é"])
def test_larger_files_match_reference(tmp_path, parser, prefix):
    """Enough lines for the packed-id fast path (ids up to 8 bytes) and the string fallback."""
    rng = random.Random(len(prefix))
    qrels, run = [], []
    for q in range(60):
        docs = rng.sample(range(3000), 60)
        for rank, d in enumerate(docs, 1):
            run.append(f"{q} Q0 {prefix}{d} {rank} {rng.choice([1.5, 2.0, rng.random()])!r} t")
        for d in docs[:15] + [4000 + q]:
            qrels.append(f"{q} 0 {prefix}{d} {rng.randrange(3)}")
    data = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run))
    check_against_reference(data, qrels, run)
    assert len(set(data.doc_ids)) == len(data.doc_ids) == len({line.split()[2] for line in qrels + run})


def test_pack_short_strings():
    pa = pytest.importorskip("pyarrow")
    rng = random.Random(1)
    for alphabet, longest, packed in [("abcXYZ019", 8, True), ("ab", 3, True), ("aé", 4, True), ("ab", 9, False)]:
        values = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, longest))) for _ in range(3000)]
        values[0] = alphabet[0] * longest  # the longest possible id is there
        arr = pa.array(values)
        got = _assemble._pack_short_strings(arr)
        assert (got is not None) == packed
        for a, v in [(arr, values), (arr.slice(77, 2000), values[77:2077])]:
            codes, uniques = _assemble._factorize(a)
            assert [uniques[c].as_py() for c in codes] == v
        if packed:  # order-preserving (byte order)
            order = sorted(range(len(values)), key=lambda i: values[i].encode())
            assert all(got[i] <= got[j] for i, j in zip(order, order[1:]))
    assert _assemble._pack_short_strings(pa.array(["a\x00b"] * 2000)) is None


def awkward_lines(lines, rng):
    """``lines`` with comment and blank lines, tabs, runs of spaces and (for 6 fields) extra
    fields sprinkled in; a few ids made longer than 8 bytes (not packable)."""
    out = []
    for line in lines:
        parts = line.split(" ")
        if rng.random() < 0.05:
            parts[2] = parts[2] + "-long-document-id"
        sep = rng.choice([" ", " ", " ", "\t", "  "])
        text = sep.join(parts)
        if len(parts) == 6 and rng.random() < 0.1:
            text += " extra fields"
        out.append(text)
        if rng.random() < 0.05:
            out.append(rng.choice(["", "# a comment", "   ", "  # indented comment"]))
    return out


@pytest.mark.parametrize("read_bytes", [7, 500])
def test_blocks_read_like_whole_file(tmp_path, parser, monkeypatch, read_bytes):
    """A file parsed in blocks of any size (cut at line ends; a line longer than a block is
    read whole) gives what it gives in one block, and an error names the same line."""
    rng = random.Random(read_bytes)
    qrels, run = make_pair(read_bytes, n_queries=6)
    plain = [write(tmp_path / "q0", qrels), write(tmp_path / "r0", run)]
    # packable ids in some blocks, long ones in others: the packed blocks are unpacked
    awkward = [write(tmp_path / "q1", ["# judgements"] + awkward_lines(qrels, rng)),
               write(tmp_path / "r1", awkward_lines(run, rng), end="\r\n")]
    with open(awkward[1], "rb") as fh:
        text = fh.read()
    with open(awkward[1], "wb") as fh:
        fh.write(b"\xef\xbb\xbf" + text)  # a byte order mark starts the file
    whole = [as_strings(read_trec(*files)) for files in (plain, awkward)]
    bad_run = awkward_lines(run[:30], rng) + ["", "a Q0 d9 x"]
    bad = write(tmp_path / "r2", bad_run)
    with pytest.raises(TrecFormatError) as whole_err:
        read_trec(plain[0], bad)
    monkeypatch.setattr(_source, "_READ_BYTES", read_bytes)
    check_against_reference(read_trec(*plain), qrels, run)
    for files, expected in zip((plain, awkward), whole):
        data = read_trec(*files)
        assert as_strings(data) == expected
    assert data.report.n_comment_lines == (1 + sum(line.lstrip().startswith("#") for line in
                                                   open(awkward[0]).read().splitlines()[1:]),
                                           sum(line.lstrip().startswith("#") for line in
                                               open(awkward[1], encoding="utf-8-sig").read().splitlines()))
    with pytest.raises(TrecFormatError) as err:
        read_trec(plain[0], bad)
    assert err.value.line == whole_err.value.line == len(bad_run)
    assert str(err.value) == str(whole_err.value)


decimals = st.from_regex(r"\A[+-]?[0-9]{0,25}(\.[0-9]{0,25})?\Z").filter(lambda t: any(c.isdigit() for c in t))


@given(st.lists(st.tuples(st.from_regex(r"\A[!-~]{1,9}\Z"), decimals | st.sampled_from(["1e5", "nan", "-", "0x1"])),
                min_size=1, max_size=20))
def test_plain_parse_equals_python_or_declines(rows):
    """The parser of plain blocks gives Python's ids and floats (correctly rounded), or
    declines the block (a long id, a number that is not a plain decimal)."""
    from rankereval.io._text import parse_plain

    text = "".join(f"{q} Q0 d{i} 1 {v} t\n" for i, (q, v) in enumerate(rows)).encode()
    got = parse_plain(text, 6, 0, 2, 4, len(rows))
    plain = all(len(q) <= 8 and " " not in q for q, _v in rows) and all(
        set(v) <= set("+-.0123456789") and v != "-" for _q, v in rows)
    assert (got is not None) == plain
    if got is not None:
        q, d, value = got
        assert value.tolist() == [float(v) for _q, v in rows]
        assert [np.array(x, dtype=">u8").tobytes().rstrip(b"\0").decode() for x in q] == [q for q, _v in rows]
        assert list(_assemble._unpack_short_strings(d).to_pylist()) == [f"d{i}" for i in range(len(rows))]


@pytest.mark.parametrize("seed", [None, ["q7", "s1", "q3"]])
@pytest.mark.parametrize("runs", [False, True])
@pytest.mark.parametrize("long_from", [None, 0, 2])
def test_id_column_blocks_equal_one_factorization(runs, long_from, seed):
    """Ids given block by block (packed by the parser, or pyarrow strings, a long id from
    block ``long_from`` on) get the codes and uniques of one factorisation of them all;
    with a ``seed`` (packed ids), of the seed followed by them while the ids are short."""
    pa = pytest.importorskip("pyarrow")
    rng = np.random.default_rng(3)
    blocks = []
    for b in range(4):
        ids = [f"q{x}" for x in np.repeat(rng.integers(0, 50, 40), rng.integers(1, 4, 40))]
        if long_from is not None and b >= long_from:
            ids[5] = "a-long-query-id"
        blocks.append(ids)
    packed_seed = None if seed is None else _assemble._pack_short_strings(pa.array(seed))
    col = _assemble._IdColumn(arrow=True, runs=runs, seed=packed_seed)
    for b, ids in enumerate(blocks):
        arr = pa.array(ids)
        col.add(_assemble._pack_short_strings(arr) if b % 2 and _assemble._pack_short_strings(arr) is not None
                else arr)
    assert col.seeded == (seed is not None and long_from is None)
    codes, uniques = col.factorize()
    flat = [x for ids in blocks for x in ids]
    first = seed if col.seeded else []
    ref_codes, ref_uniques = pd.factorize(np.array(first + flat, dtype=object))
    ref_codes = ref_codes[len(first):]
    assert codes.tolist() == ref_codes.tolist()
    assert uniques.to_pylist() == list(ref_uniques)


def test_packed_ids_table():
    from rankereval.io._text import PackedIds

    rng = np.random.default_rng(0)
    x = rng.integers(1, 2**64 - 1, 5000, dtype=np.uint64)[rng.integers(0, 5000, 300_000)]
    table = PackedIds()
    codes = np.concatenate([table.encode(x[i:i + 70_000]) for i in range(0, x.size, 70_000)])
    ref_codes, ref_uniques = pd.factorize(x)
    assert codes.tolist() == ref_codes.tolist() and table.uniques().tolist() == ref_uniques.tolist()
    with pytest.raises(ValueError, match="0 is not a packed id"):
        table.encode(np.array([5, 0], dtype=np.uint64))


def test_packed_ids_table_grows_within_a_block():
    # the table grows when the new ids of a call fill it, in the middle of the call: the codes
    # stay those of the first appearance across the growths and across calls of any size
    from rankereval.io._text import PackedIds

    rng = np.random.default_rng(1)
    new = rng.permutation(np.arange(1, 200_001, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
    again = new[rng.integers(0, new.size, 50_000)]
    blocks = [new[:1], new[1:150_000], again, new[150_000:150_003], np.zeros(0, dtype=np.uint64),
              np.concatenate([new[150_003:], again])]
    table = PackedIds()
    codes = np.concatenate([table.encode(b) for b in blocks])
    ref_codes, ref_uniques = pd.factorize(np.concatenate(blocks))
    assert codes.tolist() == ref_codes.tolist() and table.uniques().tolist() == ref_uniques.tolist()
    assert len(table) == 200_000


def test_sorted_input_fast_path_equals_general_path(tmp_path):
    qrels, run = make_pair(7, only_qrels=0, only_run=0)
    shuffled = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run))
    # the same lines grouped by query and sorted best first (what real runs look like)
    ordered = sorted(run, key=lambda line: (line.split()[0][::-1], -float(line.split()[4]),
                                            [-ord(c) for c in line.split()[2]]))
    grouped = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r2", ordered))
    assert as_strings(shuffled) == as_strings(grouped)
    # queries in row order, sorted by score, ties in the order that the tie break reverses
    # (then only the ties move)
    ordered = sorted(run, key=lambda line: (line.split()[0], -float(line.split()[4]), line.split()[2]))
    for tie_break in ("trec_eval", "docid"):
        grouped = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r3", ordered), tie_break=tie_break)
        assert grouped.report.n_tied_lines > 0
        check_against_reference(grouped, qrels, run, tie_break=tie_break)


def test_ids_are_strings(tmp_path, parser):
    qrels = ["01 0 007 1", "1 0 7 1"]
    run = ["1 Q0 7 1 1.0 t", "01 Q0 007 1 2.0 t", "01 Q0 7 2 1.0 t"]
    data = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run))
    assert list(data.query_ids) == ["01", "1"]
    got = as_strings(data)
    assert got["01"][0] == ["007", "7"] and got["01"][2] == {"007"}
    assert got["1"][0] == ["7"] and got["1"][2] == {"7"}


def test_sample_files(tmp_path):
    qrels, run = sample_paths()
    data = read_trec(qrels, run)
    assert data.n_queries == 20 and data.report.n_run_lines == 1000
    assert not data.report.notes()
    # the shipped files are exactly what the documented script writes
    spec = importlib.util.spec_from_file_location("make_sample", os.path.join(os.path.dirname(qrels), "make_sample.py"))
    make_sample = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make_sample)
    q_lines, r_lines = make_sample.make(random.Random(make_sample.SEED))
    with open(qrels) as fh:
        assert fh.read() == "".join(q_lines)
    with open(run) as fh:
        assert fh.read() == "".join(r_lines)


def test_progress_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    qrels, run = make_pair(8)
    read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run, gz=True), progress=True)
    assert "reading r" in capsys.readouterr().err
    read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run), progress=None)
    assert capsys.readouterr().err == ""  # not a terminal


def test_trecdata_helpers(tmp_path):
    data = read_trec(*sample_paths())
    assert data.labels_for(NDCG(5)) is data.numeric_labels
    assert data.labels_for(AP(5)) is data.binary_labels
    assert data.mean(AP(5)) == AP(5).mean(data.binary_labels, data.rankings)
    row = data.query_ids.get_loc("q03")
    assert data.score(NDCG(5))[row] == NDCG(5).score(data.numeric_labels, data.rankings)[row]
    assert "TrecData(n_queries=20" in repr(data)
    assert "20 queries evaluated" in data.report.summary()


def test_import_does_not_import_pandas():
    code = ("import sys, rankereval, rankereval.io, rankereval.cli; "
            "bad = [m for m in ('pandas', 'pyarrow', 'tqdm') if m in sys.modules]; "
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


# ----------------------------------------------------------------------------------------
# agreement with trec_eval (pytrec_eval)
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [10, 11, 12])
def test_agrees_with_pytrec_eval(tmp_path, seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = make_pair(seed, n_queries=14)
    # pytrec_eval bundles trec_eval 9: scores tie at 32-bit precision
    data = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run), tie_break="trec_eval9")
    qrel_d, run_d = {}, {}
    for line in qrels:
        q, _it, d, g = line.split()
        qrel_d.setdefault(q, {})[d] = int(g)
    for line in run:
        q, _q0, d, _rank, s, _tag = line.split()
        run_d.setdefault(q, {})[d] = float(s)
    measures = {"P_5", "P_10", "recall_5", "recall_20", "ndcg_cut_5", "ndcg_cut_10", "recip_rank"}
    res = pytrec_eval.RelevanceEvaluator(qrel_d, measures).evaluate(run_d)
    assert sorted(res) == sorted(str(q) for q in data.query_ids)
    has_rel = np.diff(data.binary_labels.indptr) > 0
    longest = int(data.rankings.lengths.max())
    ours = {
        "P_5": Precision(5), "P_10": Precision(10), "recall_5": Recall(5), "recall_20": Recall(20),
        "ndcg_cut_5": NDCG(5, log_base="2"), "ndcg_cut_10": NDCG(10, log_base="2"),
        "recip_rank": ReciprocalRank(longest),
    }
    for name, metric in ours.items():
        got = data.score(metric)
        want = np.array([res[str(q)][name] for q in data.query_ids])
        np.testing.assert_allclose(got[has_rel], want[has_rel], rtol=1e-6, atol=1e-7, err_msg=name)
        assert np.isnan(got[~has_rel]).all()
        mean = data.mean(metric, nan_handling="drop")
        assert mean == pytest.approx(want[has_rel].mean(), rel=1e-6)


# ----------------------------------------------------------------------------------------
# malformed files
# ----------------------------------------------------------------------------------------

GOOD_QRELS = ["a 0 d1 1", "a 0 d2 0", "b 0 d1 2"]
GOOD_RUN = ["a Q0 d1 1 2.0 t", "a Q0 d2 2 1.0 t", "b Q0 d3 1 1.0 t"]


def expect_error(tmp_path, qrels, run, line, match, which="r", **kw):
    q, r = write(tmp_path / "q", qrels), write(tmp_path / "r", run)
    with pytest.raises(TrecFormatError, match=match) as info:
        read_trec(q, r, **kw)
    err = info.value
    assert err.path == (r if which == "r" else q)
    assert err.line == line
    assert str(err).startswith(f"{err.path}, line {line}: " if line else f"{err.path}: ")
    return err


@pytest.mark.parametrize("bad,line,match", [
    ("a Q0 d9 3 0.5", 3, "expected 6 columns .*found 5"),
    ("a Q0 d9 3 high t", 3, "score is not a number: 'high'"),
    ("a Q0 d9 3 nan t", 3, "score must be a number, got nan"),
    ("a Q0 d1 3 0.5 t", 3, "duplicate document 'd1' for query 'a' \\(first given on line 1\\)"),
])
def test_bad_run_lines(tmp_path, parser, bad, line, match):
    run = GOOD_RUN[:2] + [bad] + GOOD_RUN[2:]
    expect_error(tmp_path, GOOD_QRELS, run, line, match)


def test_bad_run_line_numbers_count_blank_lines(tmp_path, parser):
    run = ["", GOOD_RUN[0], "   ", "", GOOD_RUN[1], "a Q0 d9 x"]
    expect_error(tmp_path, GOOD_QRELS, run, 6, "expected 6 columns")
    run = ["", GOOD_RUN[0], "", GOOD_RUN[1], "a Q0 d9 3 NaN t"]
    expect_error(tmp_path, GOOD_QRELS, run, 5, "finite")
    run = ["", GOOD_RUN[0], "", GOOD_RUN[1], "b Q0 d3 1 1.0 t", "", "a Q0 d2 7 0.1 t"]
    expect_error(tmp_path, GOOD_QRELS, run, 7, "duplicate document 'd2' .*first given on line 4")


def test_bad_rank_with_order_by_rank(tmp_path, parser):
    run = GOOD_RUN[:1] + ["a Q0 d2 second 1.0 t"]
    expect_error(tmp_path, GOOD_QRELS, run, 2, "rank is not an integer: 'second'", order_by="rank")
    # the rank field is not interpreted when ranking by score (as trec_eval)
    read_trec(write(tmp_path / "q", GOOD_QRELS), write(tmp_path / "r", run))


@pytest.mark.parametrize("bad,line,match", [
    ("a 0 d3", 2, "expected 4 columns .*found 3"),
    ("a 0 d3 1 1", 2, "expected 4 columns .*found 5"),
    ("a 0 d3 yes", 2, "relevance grade is not a number: 'yes'"),
    ("a 0 d3 inf", 2, "relevance grade must be a finite number"),
    ("a 0 d2 1", 3, "duplicate judgement for query 'a' and document 'd2' \\(first given on line 2\\)"),
])
def test_bad_qrels_lines(tmp_path, parser, bad, line, match):
    qrels = GOOD_QRELS[:1] + [bad] + GOOD_QRELS[1:]
    expect_error(tmp_path, qrels, GOOD_RUN, line, match, which="q")


def test_bad_encoding_and_gzip(tmp_path, parser):
    q = write(tmp_path / "q", GOOD_QRELS)
    r = tmp_path / "r"
    r.write_bytes(b"a Q0 d1 1 2.0 t\na Q0 d\xff 2 1.0 t\n")
    with pytest.raises(TrecFormatError, match="line 2: invalid UTF-8"):
        read_trec(q, str(r))
    r.write_bytes(gzip.compress(b"a Q0 d1 1 2.0 t\n")[:-6])
    with pytest.raises(TrecFormatError, match="not a valid gzip stream"):
        read_trec(q, str(r))


def test_missing_file_and_bad_options(tmp_path):
    q = write(tmp_path / "q", GOOD_QRELS)
    with pytest.raises(FileNotFoundError):
        read_trec(q, str(tmp_path / "nope"))
    r = write(tmp_path / "r", GOOD_RUN)
    for kw in [dict(tie_break="random"), dict(missing="zero"), dict(extra="x"), dict(order_by="x"),
               dict(relevance_level=float("nan")), dict(relevance_level="1")]:
        with pytest.raises(ValueError):
            read_trec(q, r, **kw)


def test_empty_files(tmp_path, parser):
    q = write(tmp_path / "q", GOOD_QRELS)
    r = write(tmp_path / "r", [])
    with pytest.raises(ValueError, match="no query to evaluate"):
        read_trec(q, r)
    data = read_trec(q, r, missing="empty")
    assert data.n_queries == 2 and data.report.n_run_lines == 0


# ----------------------------------------------------------------------------------------
# DataFrames
# ----------------------------------------------------------------------------------------

def frames(qrels, run):
    lab = pd.DataFrame([line.split() for line in qrels], columns=["query", "it", "item", "label"])
    lab["label"] = lab["label"].astype(int)
    rdf = pd.DataFrame([line.split() for line in run], columns=["query", "q0", "item", "rank", "score", "tag"])
    rdf["score"] = rdf["score"].astype(float)
    rdf["rank"] = rdf["rank"].astype(int)
    return lab, rdf.drop(columns=["rank"])


@pytest.mark.parametrize("tie_break", ["trec_eval", "trec_eval9", "docid", "input"])
def test_dataframes_equal_files(tmp_path, tie_break):
    qrels, run = make_pair(20, negative=True)
    lab, rdf = frames(qrels, run)
    from_files = read_trec(write(tmp_path / "q", qrels), write(tmp_path / "r", run), tie_break=tie_break)
    from_frames = from_dataframes(lab, rdf, tie_break=tie_break)
    assert as_strings(from_files) == as_strings(from_frames)
    assert from_frames.report.n_tied_lines == from_files.report.n_tied_lines
    assert from_frames.report.missing_queries == from_files.report.missing_queries


def test_dataframes_any_hashable_ids_and_custom_columns():
    lab = pd.DataFrame({"u": [(1, "x"), (1, "x"), (2, "y")], "i": [10, 20, 30], "g": [1.0, 2.5, 1.0]})
    run = pd.DataFrame({"u": [(1, "x"), (1, "x"), (2, "y"), (2, "y")], "i": [20, 10, 40, 30],
                        "pos": [2, 1, 1, 2]})
    data = from_dataframes(lab, run, query_col="u", item_col="i", label_col="g", rank_col="pos")
    got = as_strings(data)
    assert got[str((1, "x"))][0] == [10, 20] and got[str((2, "y"))][0] == [40, 30]
    assert got[str((1, "x"))][1] == {10: 1.0, 20: 2.5}
    assert list(data.query_ids) == [(1, "x"), (2, "y")]
    # auto-detected rank column
    run2 = run.rename(columns={"pos": "rank"})
    assert as_strings(from_dataframes(lab, run2, query_col="u", item_col="i", label_col="g")) == got


def test_dataframes_categorical_and_integer_ids():
    lab = pd.DataFrame({"query": pd.Categorical(["a", "b"]), "item": [5, 7], "label": [1, 1]})
    run = pd.DataFrame({"query": pd.Categorical(["b", "a", "a"]), "item": [7, 7, 5], "score": [1, 2, 2]})
    data = from_dataframes(lab, run)  # tie at score 2: larger item id first
    assert [[data.doc_ids[i] for i in row] for row in data.rankings.to_list()] == [[7, 5], [7]]
    assert data.score(Precision(1)).tolist() == [0.0, 1.0]
    # boolean labels are 0/1 grades
    data = from_dataframes(lab.assign(label=[True, False]), run)
    assert data.binary_labels.indices_to_list() == [[0], []] and data.report.n_queries_without_relevant == 1


@pytest.mark.parametrize("which,column,values,match", [
    ("run", "score", None, "neither a 'score' nor a 'rank'"),
    ("labels", "label", None, "labels DataFrame has no column 'label'"),
    ("labels", "label", ["1", "x", "2"], "labels DataFrame, row 1 .*not a number: 'x'"),
    ("labels", "label", [1, np.nan, 2], "labels DataFrame, row 1 .*finite number"),
    ("run", "score", [1.0, np.nan, 1.0], "run DataFrame, row 1 .*score .*number, got nan"),
    ("run", "item", ["d1", None, "d3"], "run DataFrame, row 1 .*missing id"),
    ("run", "item", ["d1", "d1", "d3"], "run DataFrame, row 1 .*duplicate item 'd1'"),
    ("labels", "item", ["d1", "d1", "d1"], "labels DataFrame, row 1 .*duplicate judgement"),
])
def test_dataframe_errors(which, column, values, match):
    frames = {
        "labels": pd.DataFrame({"query": ["a", "a", "b"], "item": ["d1", "d2", "d1"], "label": [1, 0, 2]},
                               index=[10, 11, 12]),
        "run": pd.DataFrame({"query": ["a", "a", "b"], "item": ["d1", "d2", "d3"], "score": [2.0, 1.0, 1.0]},
                            index=[10, 11, 12]),
    }
    df = frames[which]
    frames[which] = df.drop(columns=[column]) if values is None else df.assign(**{column: values})
    with pytest.raises(ValueError, match=match) as info:
        from_dataframes(frames["labels"], frames["run"])
    if values is not None:
        assert "(index 11)" in str(info.value)


def test_dataframe_argument_errors():
    lab = pd.DataFrame({"query": ["a"], "item": [1], "label": [1]})
    run = pd.DataFrame({"query": ["a", "a"], "item": [1, 2], "rank": [1, 1.5], "score": [1, 2]})
    with pytest.raises(ValueError, match="not both"):
        from_dataframes(lab, run, score_col="score", rank_col="rank")
    with pytest.raises(ValueError, match="must be an integer, got 1.5"):
        from_dataframes(lab, run, rank_col="rank")
    with pytest.raises(TypeError, match="DataFrame"):
        from_dataframes({"query": []}, run)
    mixed = pd.DataFrame({"query": ["a", "a"], "item": [1, (2, 3)], "score": [1, 1]})
    with pytest.raises(TypeError, match="tie_break='input'"):
        from_dataframes(lab, mixed)
    assert from_dataframes(lab, mixed, tie_break="input").rankings.to_list() == [[0, 1]]
