"""trec_eval's names (rankereval.metrics._trec_names), the trec_eval conventions of the
command line (-m, -M, -, -f trec, zerofill) and of the readers (comments, extra fields,
swapped files, id kinds, tie-breaks), and a byte-level fuzz of both readers."""
import gzip
import io
import json
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankereval import AP, GMAP, NDCG, RBP, Precision, Recall, ReciprocalRank, ScaledRBP, Success
from rankereval.cli import main
from rankereval.metrics import from_name
from rankereval.metrics._trec_names import (
    SETS, TABLE, is_trec_name, name_differences, trec_measures, unsupported_in)

pd = pytest.importorskip("pandas")

from rankereval.io import TrecFormatError, from_dataframes, read_trec  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "trec_eval")


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(path, lines):
    path.write_text("".join(line + "\n" for line in lines))
    return str(path)


# ----------------------------------------------------------------------------------------
# the name table
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("name,expected", [
    ("P_10", [("P_10", Precision(10))]),
    ("P.10", [("P_10", Precision(10))]),
    ("P.5,10,20", [("P_5", Precision(5)), ("P_10", Precision(10)), ("P_20", Precision(20))]),
    ("recall_100", [("recall_100", Recall(100))]),
    ("ndcg", [("ndcg", NDCG())]),
    ("ndcg_cut_10", [("ndcg_cut_10", NDCG(10))]),
    ("ndcg_cut.5,10", [("ndcg_cut_5", NDCG(5)), ("ndcg_cut_10", NDCG(10))]),
    ("map", [("map", AP())]),
    ("recip_rank", [("recip_rank", ReciprocalRank())]),
    ("success_10", [("success_10", Success(10))]),
    ("success", [("success_1", Success(1)), ("success_5", Success(5)), ("success_10", Success(10))]),
])
def test_trec_names(name, expected):
    assert [(m.column, m.metric) for m in trec_measures(name)] == expected


def test_default_cutoffs_and_sets():
    assert [m.column for m in trec_measures("P")] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    official = [m.column for m in trec_measures("official")]
    assert {"map", "gm_map", "recip_rank"} <= set(official) and official[-1] == "P_1000"
    gm = trec_measures("gm_map")[0]  # AP per query, averaged geometrically; a summary only
    assert gm.metric == GMAP() and not gm.per_query
    every = [m.column for m in trec_measures("all_trec")]
    assert "ndcg_cut_1000" in every and "success_10" in every and len(every) == len(set(every))
    # every measure of trec_eval 10.0's sets is computed (runid, num_q, relstring: lines the
    # command line writes); only preference and judgement-group measures are refused
    for name in SETS:
        assert unsupported_in(name) == []
        assert {m.column for m in trec_measures(name)} >= {"runid", "num_q"}
    supported = {b for b in SETS["official"] if TABLE[b].build is not None}
    assert {"map", "gm_map", "recip_rank", "P"} <= supported
    assert supported | {"runid", "num_q"} == set(SETS["official"])
    assert dict(unsupported_in("prefs_simp"))["prefs_simp"].startswith("a preference measure")


@pytest.mark.parametrize("name,match", [
    ("P.0", "integer cutoffs > 0"), ("P.x", "integer cutoffs > 0"),
    ("iprec_at_recall.2", "between 0 and 1"), ("prefs_simp", "not supported: a preference measure"),
    ("P_avgjg", "not supported: a judgement-group measure"),
    ("ndcg.1=3,2=9", "takes no parameters"),
])
def test_bad_or_unsupported_trec_names(name, match):
    with pytest.raises(ValueError, match=match):
        trec_measures(name)


def test_shared_names_mean_the_same_metric():
    """A name both grammars read is the same metric in both (so the CLI's order is moot)."""
    shared = 0
    for entry in TABLE.values():
        if entry.build is None:
            continue
        for m in trec_measures(entry.base):
            try:
                ours = from_name(m.column)
            except ValueError:
                continue
            shared += 1
            if m.column == "rbp":  # rankereval's rbp (p=0.8, grades as they are) is not trec_eval's
                assert ours == RBP() and m.metric == ScaledRBP() and "scaledrbp" in name_differences(ours)
                continue
            assert ours == m.metric, m.column
    assert shared >= 3  # map, ndcg, recip_rank
    assert is_trec_name("P_10") and is_trec_name("official") and not is_trec_name("p@10")
    with pytest.raises(ValueError, match="integer cutoffs"):  # spelt as trec_eval's, but no cutoff
        trec_measures("P_")
    assert not is_trec_name("p_10")  # trec_eval's names are case-sensitive


def test_name_differences():
    assert "min(100, R)" in name_differences(AP(100)) and "map_cut_100" in name_differences(AP(100))
    assert name_differences(AP()) is None and name_differences(Precision(10)) is None
    assert "linear" in name_differences(NDCG(10, relevance_scaling="power"))


# ----------------------------------------------------------------------------------------
# command line
# ----------------------------------------------------------------------------------------

@pytest.fixture
def pair(tmp_path):
    qrels = write(tmp_path / "qrels", ["a 0 d1 1", "a 0 d2 0", "a 0 d4 2", "b 0 d1 0", "c 0 d9 1"])
    run = write(tmp_path / "run", ["a Q0 d1 1 3.0 t", "a Q0 d2 2 2.0 t", "a Q0 d3 3 1.0 t",
                                   "b Q0 d1 1 1.0 t", "b Q0 d2 2 0.5 t"])
    return qrels, run


def test_options_before_or_after_files(capsys, pair):
    qrels, run = pair
    want = cli(capsys, "evaluate", qrels, run, "-m", "map", "-m", "P.1,2", "-f", "json")[1]
    assert set(json.loads(want)) == {"map", "P_1", "P_2"}
    for argv in (["-m", "map", "P.1,2", qrels, run, "-f", "json"],
                 ["-f", "json", "-m", "map", "-m", "P.1,2", qrels, run],
                 [qrels, "-f", "json", run, "-m", "map,P.1,2"],
                 ["-m", "map P.1,2", "-f", "json", qrels, run],
                 [qrels, "-m", "map", "P.1,2", run, "-f", "json"]):
        code, out, err = cli(capsys, "evaluate", *argv)
        assert code == 0, (argv, err)
        assert out == want, argv
    code, _, err = cli(capsys, "evaluate", "-m", "map", qrels)
    assert code == 2 and "required: run" in err
    code, _, err = cli(capsys, "evaluate", qrels, run, run)
    assert code == 2 and "unrecognized arguments" in err


def test_zerofill_default_and_note(capsys, pair):
    qrels, run = pair
    # b is judged without relevant documents: 0 and counted, as trec_eval
    code, out, _ = cli(capsys, "evaluate", qrels, run, "-m", "P_1", "-q", "-f", "trec")
    assert out.splitlines() == ["P_1                   \ta\t1.0000", "P_1                   \tb\t0.0000",
                                "P_1                   \tall\t0.5000"]
    code, out, _ = cli(capsys, "evaluate", qrels, run, "-m", "p@1")
    assert "1 of 2 queries undefined for every metric (its labels have no relevant item): scored 0" in out
    assert out.splitlines()[2].split() == ["p@1", "0.5000", "2"]
    code, out, _ = cli(capsys, "evaluate", qrels, run, "-m", "p@1", "--nan-handling", "propagate", "-f", "json")
    assert json.loads(out)["p@1"]["mean"] is None


def test_trec_eval_summaries_of_names_both_grammars_know(capsys, pair):
    """num_rel is a name of ours too: spelt as trec_eval's it gets trec_eval's summary (a sum,
    printed as an integer); gm_map's is the geometric mean, and no per-query line."""
    qrels, run = pair
    code, out, _ = cli(capsys, "evaluate", qrels, run, "-m", "num_rel,num_ret,gm_map", "-q", "-f", "trec")
    lines = out.splitlines()
    assert "num_rel               \tall\t2" in lines and "num_ret               \tall\t5" in lines
    assert "num_rel               \ta\t2" in lines
    assert not any(line.startswith("gm_map ") and "\tall\t" not in line for line in lines)
    gm = float([line for line in lines if line.startswith("gm_map ")][0].split("\t")[2])
    assert gm == pytest.approx(np.exp((np.log(AP().score(*_labels_rankings(qrels, run))[0]) + np.log(1e-5)) / 2),
                               abs=5e-5)


def _labels_rankings(qrels, run):
    data = read_trec(qrels, run)
    return data.binary_labels, data.rankings


def test_footnote_on_names_that_differ(capsys, pair):
    qrels, run = pair
    code, out, _ = cli(capsys, "evaluate", qrels, run, "-m", "map@2", "map", "--quiet")
    lines = out.splitlines()
    assert lines[2].startswith("map@2*") and lines[3].startswith("map ")
    assert any(line.startswith("* map@2: AP@2 divided by min(2, R)") for line in lines)


def test_depth_stdin_and_counts(capsys, pair, monkeypatch):
    qrels, run = pair
    code, out, err = cli(capsys, "evaluate", qrels, run, "-m", "num_ret" if TABLE["num_ret"].build else "P_3",
                         "-M", "1", "-q", "-f", "trec")
    assert code == 0 and "only the first 1 were evaluated" in err
    code, out, _ = cli(capsys, "evaluate", qrels, run, "-m", "recall_3", "-M", "1", "-q", "-f", "trec")
    assert "recall_3              \ta\t0.5000" in out  # d1 only: 1 of the 2 relevant
    with open(run, "rb") as fh:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(fh.read())))
    code, out2, _ = cli(capsys, "evaluate", qrels, "-", "-m", "recall_3", "-M", "1", "-q", "-f", "trec")
    assert code == 0 and out2 == out
    code, _, err = cli(capsys, "evaluate", "-", "-", "-m", "map")
    assert code == 2 and "standard input" in err


def test_metrics_listing_shows_both(capsys):
    code, out, _ = cli(capsys, "metrics")
    assert code == 0
    assert "P_k" in out and "= p@k" in out and "map_cut_k" in out and "not supported" in out
    assert "divided by min(100, R)" in out and "trec_eval scores them 0" in out


# ----------------------------------------------------------------------------------------
# readers
# ----------------------------------------------------------------------------------------

def test_comments_and_extra_fields_are_counted(tmp_path, parser_name):
    from rankereval.io import _source

    qrels = write(tmp_path / "q", ["# judged by hand", "a 0 d1 1", "   # indented", "a 0 d2 0"])
    run = write(tmp_path / "r", ["# run", "a Q0 d1 1 2.0 t extra", "", "a\tQ0\td2\t2\t1.0\tt\tx\ty",
                                 "a Q0 d3 3 0.5 t"])
    with _source._forced_parser(parser_name):
        data = read_trec(qrels, run)
    assert data.rankings.to_list() == [[0, 1, 2]] and list(data.doc_ids) == ["d1", "d2", "d3"]
    assert data.report.n_comment_lines == (2, 1) and data.report.n_extra_field_lines == 2
    notes = " ".join(data.report.notes())
    assert "2 comment lines ('#') of the qrels were skipped" in notes and "after the sixth" in notes
    # line numbers still count the comment lines
    bad = write(tmp_path / "b", ["# run", "a Q0 d1 1 x t"])
    with _source._forced_parser(parser_name), pytest.raises(TrecFormatError, match="line 2"):
        read_trec(qrels, bad)


@pytest.fixture(params=["pyarrow", "pandas"])
def parser_name(request):
    from rankereval.io import _source

    if request.param == "pyarrow" and _source._pyarrow() is None:
        pytest.skip("pyarrow not installed")
    return request.param


def test_swapped_files_hint(tmp_path):
    qrels = write(tmp_path / "q", ["a 0 d1 1"])
    run = write(tmp_path / "r", ["a Q0 d1 1 2.0 t"])
    with pytest.raises(TrecFormatError, match="the qrels file has 6 columns: is it the run"):
        read_trec(run, qrels)
    with pytest.raises(TrecFormatError, match="the run file has 4 columns: is it the qrels"):
        read_trec(qrels, qrels)


def test_depth_keeps_the_first_documents(tmp_path):
    qrels = write(tmp_path / "q", ["a 0 d1 1", "b 0 d1 1"])
    run = write(tmp_path / "r", ["a Q0 d1 1 1.0 t", "a Q0 d2 1 3.0 t", "a Q0 d3 1 2.0 t", "b Q0 d1 1 1.0 t"])
    data = read_trec(qrels, run, depth=2)
    names = [[data.doc_ids[i] for i in row] for row in data.rankings.to_list()]
    assert names == [["d2", "d3"], ["d1"]]
    assert data.report.n_truncated_queries == 1 and data.report.depth == 2
    with pytest.raises(ValueError, match="depth must be an integer > 0"):
        read_trec(qrels, run, depth=0)


def test_id_kinds_must_match():
    labels = pd.DataFrame({"query": [1, 1], "item": [10, 11], "label": [1, 0]})
    run = pd.DataFrame({"query": [1, 1], "item": ["10", "11"], "score": [0.9, 0.5]})
    with pytest.raises(ValueError, match="column 'item' holds numbers in the labels DataFrame but strings"):
        from_dataframes(labels, run)
    run["item"] = run["item"].astype(int)
    assert from_dataframes(labels, run).score(Precision(1)).tolist() == [1.0]
    run["query"] = run["query"].astype(str)
    with pytest.raises(ValueError, match="column 'query'"):
        from_dataframes(labels, run)


# ----------------------------------------------------------------------------------------
# byte-level fuzz of both readers: only the documented errors
# ----------------------------------------------------------------------------------------

def _parsers():
    from rankereval.io import _source

    return ("pyarrow", "pandas") if _source._pyarrow() is not None else ("pandas",)


def _read(qrels_bytes, run_bytes, **kw):
    """Read with each parser (pyarrow, pandas): only the documented errors, and the same
    outcome from both."""
    from rankereval.io import _source

    outcomes = []
    for name in _parsers():
        with _source._forced_parser(name):
            try:
                data = read_trec(io.BytesIO(qrels_bytes), io.BytesIO(run_bytes), **kw)
                outcomes.append(("ok", data.rankings.to_list(), list(data.query_ids), list(data.doc_ids)))
            except ValueError as exc:  # TrecFormatError is a ValueError; so is "no query to evaluate"
                assert str(exc)
                outcomes.append(("error", type(exc).__name__))
    assert all(o == outcomes[0] for o in outcomes), outcomes


def _real_files():
    """Every 10th line of trec_eval's test qrels and run (3 queries, tabs, padded scores),
    with a comment line and a line with an extra field."""
    with gzip.open(os.path.join(DATA, "qrels.test.with-comments.gz"), "rb") as fh:
        qrels = b"".join(fh.readlines()[::10])
    with gzip.open(os.path.join(DATA, "results.test.gz"), "rb") as fh:
        lines = fh.readlines()[::10]
    lines[3] = lines[3].rstrip(b"\n") + b" extra\n"
    return qrels, b"# run\n" + b"".join(lines)


REAL_QRELS, REAL_RUN = _real_files()


@settings(max_examples=150, deadline=None)
@given(qrels=st.binary(max_size=300), run=st.binary(max_size=300))
def test_fuzz_random_bytes(qrels, run):
    _read(qrels, run)
    _read(REAL_QRELS, run)
    _read(qrels, REAL_RUN)


_MUTATIONS = st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["flip", "delete", "insert", "dup"]),
                                st.binary(min_size=1, max_size=4)), min_size=1, max_size=6)


def _mutate(buf, edits):
    buf = bytearray(buf)
    for pos, kind, data in edits:
        if not buf:
            break
        i = pos % len(buf)
        if kind == "flip":
            buf[i] ^= data[0] or 1
        elif kind == "delete":
            del buf[i:i + len(data)]
        elif kind == "insert":
            buf[i:i] = data
        else:
            buf[i:i] = buf[i:i + 50]
    return bytes(buf)


@settings(max_examples=120, deadline=None)
@given(edits_q=_MUTATIONS, edits_r=_MUTATIONS, gz=st.sampled_from([None, "qrels", "run"]),
       cut=st.integers(0, 40), tie_break=st.sampled_from(["trec_eval", "trec_eval9"]))
def test_fuzz_mutated_real_files(edits_q, edits_r, gz, cut, tie_break):
    qrels, run = _mutate(REAL_QRELS, edits_q), _mutate(REAL_RUN, edits_r)
    if gz == "qrels":
        qrels = gzip.compress(qrels, mtime=0)
        qrels = qrels[: len(qrels) - cut]  # a truncated gzip stream is a documented error
    elif gz == "run":
        run = gzip.compress(run, mtime=0)
        run = _mutate(run, edits_q[:1]) if cut % 2 else run[: len(run) - cut]
    _read(qrels, run, tie_break=tie_break)


def test_fuzz_helpers_are_not_vacuous():
    rng = random.Random(0)
    data = read_trec(io.BytesIO(REAL_QRELS), io.BytesIO(REAL_RUN), missing="drop")
    assert data.n_queries > 0
    with pytest.raises(TrecFormatError):
        read_trec(io.BytesIO(REAL_QRELS), io.BytesIO(gzip.compress(REAL_RUN)[:-rng.randrange(5, 20)]))
    assert np.isfinite(data.mean(Precision(5), nan_handling="zerofill"))


def test_reading_restores_pyarrows_memory_pool(tmp_path):
    """read_trec allocates from jemalloc while it reads (peak memory), then puts the default
    pool back, also when reading fails and when readers run in several threads."""
    pa = pytest.importorskip("pyarrow")
    from concurrent.futures import ThreadPoolExecutor

    before = pa.default_memory_pool().backend_name
    qrels = write(tmp_path / "q", ["a 0 d1 1"])
    run = write(tmp_path / "r", ["a Q0 d1 1 2.0 t"])
    with ThreadPoolExecutor(4) as pool:
        assert all(d.n_queries == 1 for d in pool.map(lambda _: read_trec(qrels, run), range(16)))
    with pytest.raises(TrecFormatError):
        read_trec(qrels, qrels)
    assert pa.default_memory_pool().backend_name == before
