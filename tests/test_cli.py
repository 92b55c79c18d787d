"""Tests of the ``rankereval`` command line (rankereval.cli, python -m rankereval)."""
import csv
import io
import json
import re
import math
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pandas")

from rankereval import AP, DCG, NDCG, FirstRelevantRank, MeanRanks, Precision, Recall, ReciprocalRank  # noqa: E402
from rankereval.cli import main  # noqa: E402
from rankereval.metrics import from_name  # noqa: E402
from rankereval.io import read_trec, sample_paths  # noqa: E402

QRELS, RUN = sample_paths()


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def small(tmp_path):
    """A pair with a query without relevant documents, one only in the qrels, one only in the run."""
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("a 0 d1 2\na 0 d2 1\na 0 d3 0\nb 0 d1 0\nc 0 d9 1\n")
    run.write_text("a Q0 d3 1 3.0 t\na Q0 d1 2 2.0 t\na Q0 d2 3 1.0 t\nb Q0 d1 1 1.0 t\nz Q0 d1 1 1.0 t\n")
    return str(qrels), str(run)


# ----------------------------------------------------------------------------------------
# metric names
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("text,kind,k", [
    ("ndcg@10", "ndcg", 10), ("NDCG@10", "ndcg", 10), ("nDCG", "ndcg", None), ("P@5", "precision", 5),
    ("precision@5", "precision", 5), ("Recall@100", "recall", 100), ("r@3", "recall", 3),
    ("map", "ap", None), ("MAP@100", "ap", 100), ("ap@10", "ap", 10), ("mrr@10", "rr", 10), ("RR", "rr", None),
    ("recip_rank", "rr", None), ("hr@10", "hitrate", 10), ("HitRate@1", "hitrate", 1), ("f1@5", "f1", 5),
    ("dcg@3", "dcg", 3), ("MeanRanks", "meanranks", None), ("firstrelevantrank", "firstrelevantrank", None),
    ("first_relevant_rank", "firstrelevantrank", None),
])
def test_cli_metric_names_use_the_library_grammar(text, kind, k):
    metric = from_name(text)  # the CLI's only parser
    assert (metric.info.name, getattr(metric, "k", None)) == (
        {"precision": "p"}.get(kind, kind), k)


@pytest.mark.parametrize("text,match", [
    ("foo@10", "unknown metric"), ("p", "needs a cutoff"), ("f1", "needs a cutoff"),
    ("p@0", "integer > 0"), ("p@-1", "integer > 0"), ("p@x", "integer > 0"), ("p@2.5", "integer > 0"),
    ("meanranks@10", "takes no cutoff"),
])
def test_bad_metric_names_are_usage_errors(text, match, tmp_path, capsys):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("q1 0 d1 1\n")
    run.write_text("q1 Q0 d1 1 1.0 t\n")
    assert main(["evaluate", str(qrels), str(run), "-m", text]) == 2
    err = capsys.readouterr().err
    assert re.search(match, err) and "rankereval metrics" in err


# ----------------------------------------------------------------------------------------
# evaluate: the numbers are the Python API's
# ----------------------------------------------------------------------------------------

def api_metrics(data):
    longest = int(data.rankings.lengths.max())
    most_rel = int(np.diff(data.binary_labels.indptr).max())
    return {
        "ndcg@10": NDCG(10, log_base="2"), "P@5": Precision(5), "recall@20": Recall(20), "map": AP(max(longest, most_rel)),
        "MRR": ReciprocalRank(longest), "ap@10": AP(10), "dcg@5": DCG(5, log_base="2"),
        "meanranks": MeanRanks(), "FirstRelevantRank": FirstRelevantRank(),
    }


def test_json_equals_python_api(capsys):
    data = read_trec(QRELS, RUN)
    metrics = api_metrics(data)
    code, out, err = run_cli(capsys, "evaluate", QRELS, RUN, "-m", *metrics, "--log-base", "2", "-f", "json",
                             "--ci", "--seed", "3", "--n-bootstrap", "200", "--confidence", "0.9")
    assert code == 0, err
    got = json.loads(out)
    assert list(got) == list(metrics)  # keyed as written, in order
    for name, metric in metrics.items():
        want = data.mean(metric, conf_interval=True, n_bootstrap_samples=200, confidence=0.9, random_state=3)
        assert got[name]["mean"] == want["score"], name
        assert got[name]["ci"] == list(want["conf_interval"]), name
        assert got[name]["n_queries"] == 20 and got[name]["n_nan"] == 0


def test_log_base_takes_any_base(capsys):
    data = read_trec(QRELS, RUN)
    code, out, err = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "dcg@5", "dcg@5[log_base=3]", "--log-base", "10",
                             "-f", "json")
    assert code == 0, err
    got = json.loads(out)
    assert got["dcg@5"]["mean"] == data.mean(DCG(5, log_base=10), nan_handling="zerofill")
    assert got["dcg@5[log_base=3]"]["mean"] == data.mean(DCG(5, log_base=3), nan_handling="zerofill")
    code, out, err = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "dcg@5", "--log-base", "1")
    assert code == 2 and "--log-base: expected '2', 'e' or a number > 1" in err


def test_per_query_json_csv_table(capsys):
    data = read_trec(QRELS, RUN)
    ndcg = data.score(NDCG(10))
    p5 = data.score(Precision(5))
    code, out, _ = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "ndcg@10", "p@5", "--per-query", "-f", "json")
    got = json.loads(out)
    assert code == 0
    assert list(got["ndcg@10"]["per_query"]) == list(data.query_ids)
    assert list(got["ndcg@10"]["per_query"].values()) == ndcg.tolist()
    assert got["p@5"]["mean"] == data.mean(Precision(5))
    code, out, _ = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "ndcg@10", "p@5", "-q", "-f", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["query", "ndcg@10", "p@5"]
    assert [r[0] for r in rows[1:]] == list(data.query_ids)
    assert [float(r[1]) for r in rows[1:]] == ndcg.tolist()
    assert [float(r[2]) for r in rows[1:]] == p5.tolist()
    code, out, _ = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "ndcg@10", "p@5", "-q")
    lines = out.splitlines()
    assert lines[0].split() == ["query", "ndcg@10", "p@5"]
    assert lines[2].split() == ["q01", f"{ndcg[0]:.4f}", f"{p5[0]:.4f}"]
    assert lines[-1].split() == ["mean", f"{ndcg.mean():.4f}", f"{p5.mean():.4f}"]


def test_summary_csv_and_table(capsys):
    data = read_trec(QRELS, RUN)
    code, out, _ = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "NDCG@10", "map", "-f", "csv", "--ci", "--seed", "1")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["metric"] for r in rows] == ["NDCG@10", "map"]
    want = data.mean(NDCG(10), conf_interval=True, random_state=1)
    assert float(rows[0]["mean"]) == want["score"]
    assert (float(rows[0]["ci_lower"]), float(rows[0]["ci_upper"])) == want["conf_interval"]
    code, out, _ = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "NDCG@10", "--ci", "--seed", "1")
    lines = out.splitlines()
    assert lines[0].split() == ["metric", "mean", "95%", "CI", "queries"]
    lo, hi = want["conf_interval"]
    assert lines[2].split() == ["NDCG@10", f"{want['score']:.4f}", f"[{lo:.4f},", f"{hi:.4f}]", "20"]


def test_subprocess_python_m(capsys):
    args = ["evaluate", QRELS, RUN, "-m", "ndcg@10", "Recall@50", "mrr", "-f", "json", "--ci", "--seed", "7"]
    main(args)
    in_process = json.loads(capsys.readouterr().out)
    # cwd and PYTHONPATH come from tests/conftest.py: the child imports the package under test
    proc = subprocess.run([sys.executable, "-m", "rankereval", *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == in_process


def test_example(capsys):
    code, out, err = run_cli(capsys, "example")
    assert code == 0
    assert out.splitlines()[0].split() == ["metric", "mean", "queries"]
    assert [line.split()[0] for line in out.splitlines()[2:]] == ["ndcg@10", "p@10", "recall@100", "map", "mrr@10"]
    assert "make_sample.py" in err and "rankereval evaluate" in err
    # example takes the evaluate options; its bootstrap seed defaults to 0 (reproducible)
    code, out, _ = run_cli(capsys, "example", "-m", "p@10", "--ci", "-f", "json", "--quiet")
    data = read_trec(QRELS, RUN)
    want = data.mean(Precision(10), conf_interval=True, random_state=0)
    assert json.loads(out) == {"p@10": {"mean": want["score"], "ci": list(want["conf_interval"]),
                                        "n_queries": 20, "n_nan": 0}}


def test_metrics_listing_and_version(capsys):
    code, out, _ = run_cli(capsys, "metrics")
    assert code == 0 and "ndcg[@k]" in out and "mrr" in out
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.startswith("rankereval ")
    code, out, _ = run_cli(capsys, "evaluate", "--help")
    assert code == 0 and "--relevance-level" in out


# ----------------------------------------------------------------------------------------
# options about the data
# ----------------------------------------------------------------------------------------

def test_nan_handling_missing_and_notes(capsys, small):
    qrels, run = small
    # b has no relevant document -> NaN; c is not in the run; z is not in the qrels
    code, out, err = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "-f", "json", "-q",
                             "--nan-handling", "propagate")
    got = json.loads(out)["p@1"]
    assert code == 0
    assert got["mean"] is None and got["n_nan"] == 1 and got["per_query"] == {"a": 0.0, "b": None}
    assert "not in the run" in err and "without judgements" in err and "no document with relevance" in err
    code, out, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "-f", "json", "--nan-handling", "drop")
    assert json.loads(out)["p@1"] == {"mean": 0.0, "n_queries": 1, "n_nan": 1}
    code, out, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "-f", "json", "--nan-handling", "zerofill")
    assert json.loads(out)["p@1"]["mean"] == 0.0
    # onefill: b counts as 1 (torchmetrics' empty_target_action='pos'), a is 0
    code, out, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "-f", "json", "--nan-handling", "onefill")
    assert json.loads(out)["p@1"] == {"mean": 0.5, "n_queries": 2, "n_nan": 1}
    code, out, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "-q", "--nan-handling", "onefill")
    assert code == 0 and "scored 1 and counted in the mean (--nan-handling onefill" in out + _
    # -c: c is evaluated with an empty ranking (recall 0), as trec_eval -c
    code, out, err = run_cli(capsys, "evaluate", qrels, run, "-m", "recall@10", "-c", "-f", "json", "-q",
                             "--nan-handling", "drop")
    got = json.loads(out)["recall@10"]
    assert got["per_query"] == {"a": 1.0, "b": None, "c": 0.0} and got["mean"] == 0.5
    code, out, err = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "--extra", "keep", "-f", "json", "-q",
                             "--quiet")
    assert json.loads(out)["p@1"]["per_query"] == {"a": 0.0, "b": None, "z": None}
    assert err == ""


def test_relevance_level_tie_break_and_inf(capsys, small):
    qrels, run = small
    code, out, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "rr", "ndcg", "meanranks", "-f", "json", "-q",
                           "-l", "2", "--quiet")
    got = json.loads(out)
    assert got["rr"]["per_query"]["a"] == 0.5  # only d1 (grade 2) is relevant, at rank 2
    assert got["ndcg"]["per_query"]["a"] == NDCG().score(read_trec(qrels, run).numeric_labels,
                                                         read_trec(qrels, run).rankings)[0]
    tie_run = os.path.join(os.path.dirname(run), "tie.txt")
    with open(tie_run, "w") as fh:
        fh.write("a Q0 d1 1 1.0 t\na Q0 d3 2 1.0 t\na Q0 d5 3 1.0 t\n")
    code, out, _ = run_cli(capsys, "evaluate", qrels, tie_run, "-m", "rr", "-f", "json", "--quiet")
    assert json.loads(out)["rr"]["mean"] == 1 / 3  # trec_eval: d5, d3, d1
    code, out, _ = run_cli(capsys, "evaluate", qrels, tie_run, "-m", "rr", "-f", "json", "--tie-break", "docid")
    assert json.loads(out)["rr"]["mean"] == 1.0
    # a query whose relevant documents are not retrieved: MeanRanks is +inf, written as "inf"
    with open(tie_run, "w") as fh:
        fh.write("a Q0 d3 1 1.0 t\n")
    code, out, _ = run_cli(capsys, "evaluate", qrels, tie_run, "-m", "meanranks", "-f", "json", "--quiet")
    assert json.loads(out)["meanranks"]["mean"] == "inf"
    code, out, _ = run_cli(capsys, "evaluate", qrels, tie_run, "-m", "meanranks", "--quiet")
    assert out.splitlines()[2].split() == ["meanranks", "inf", "1"]


# ----------------------------------------------------------------------------------------
# exit status and messages
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("argv,match", [
    (["evaluate", QRELS, RUN, "-m", "foo"], "unknown metric 'foo'"),
    (["evaluate", QRELS, RUN, "-m", "p"], "needs a cutoff"),
    (["evaluate", QRELS, RUN, "-m", "ndcg@0"], "integer > 0"),
    (["evaluate", QRELS, RUN, "--confidence", "1.5"], "--confidence"),
    (["evaluate", QRELS, RUN, "--n-bootstrap", "1"], "--n-bootstrap"),
    (["evaluate", QRELS, RUN, "--format", "xml"], "--format"),
    (["evaluate", QRELS, RUN, "--relevance-level", "nan"], "--relevance-level"),
    (["evaluate", QRELS], "the following arguments are required: run"),
    (["example", "-m", "meanranks@3"], "takes no cutoff"),
    ([], "required"),
])
def test_usage_errors_exit_2(capsys, argv, match):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert match in err and "usage:" in err
    assert out == ""


def test_input_errors_exit_1(capsys, tmp_path, small):
    qrels, run = small
    bad = tmp_path / "bad.txt"
    bad.write_text("a Q0 d1 1 2.0 t\na Q0 d2 2 two t\n")
    cases = [
        ([qrels, str(bad)], f"rankereval: error: {bad}, line 2: score is not a number: 'two'"),
        ([qrels, str(tmp_path / "nope.txt")], f"rankereval: error: cannot read '{tmp_path / 'nope.txt'}'"),
        ([qrels, str(tmp_path)], "rankereval: error: cannot read"),
        ([qrels, run, "--missing", "error"], "rankereval: error: 1 query of"),
        ([qrels, run, "--extra", "error"], "rankereval: error: 1 query of"),
    ]
    cases.append(([qrels, qrels], f"{qrels}, line 1: expected 6 columns (query Q0 docid rank score tag), found 4"))
    dup = tmp_path / "dup.txt"
    dup.write_text("a Q0 d1 1 2.0 t\na Q0 d1 2 1.0 t\n")
    cases.append(([qrels, str(dup)], f"{dup}, line 2: duplicate document 'd1' for query 'a' (first given on line 1)"))
    other = tmp_path / "other.txt"
    other.write_text("zz Q0 d1 1 2.0 t\n")
    cases.append(([qrels, str(other)], "no query to evaluate"))
    for files, message in cases:
        code, out, err = run_cli(capsys, "evaluate", *files, "-m", "p@1")
        assert code == 1, files
        assert message in err, (message, err)
        assert "Traceback" not in err and out == ""


def test_json_is_strict(capsys, small):
    qrels, run = small
    code, out, _ = run_cli(capsys, "evaluate", qrels, run, "-m", "p@1", "ap", "-f", "json", "-q", "--ci", "--quiet",
                           "--nan-handling", "propagate")
    assert "NaN" not in out and "Infinity" not in out
    got = json.loads(out, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert got["p@1"]["ci"] == [None, None]
    assert math.isclose(got["ap"]["per_query"]["a"], AP(3).score(read_trec(qrels, run).binary_labels,
                                                                  read_trec(qrels, run).rankings)[0])


def test_missing_pandas_is_an_input_error(capsys, monkeypatch):
    # plain files with short ids are read without pandas (and without pyarrow's parser); the
    # parser that needs pandas says how to install it
    monkeypatch.setitem(sys.modules, "pandas", None)  # `import pandas` now raises ImportError
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    code, out, err = run_cli(capsys, "example")
    assert code == 1 and "pip install 'rankereval[io]'" in err and out == ""


def test_plain_files_are_read_without_pandas(capsys, monkeypatch):
    expected = run_cli(capsys, "example", "--quiet")
    monkeypatch.setitem(sys.modules, "pandas", None)
    assert run_cli(capsys, "example", "--quiet") == expected and expected[0] == 0


@pytest.mark.parametrize("docs", [["d1", "d2", "d3"], ["café", "naïve", "d3"], ["doc-00000001", "d2", "d3"]],
                         ids=["short", "utf8", "long"])
def test_the_command_lines_reading_agrees_with_read_trec(tmp_path, docs):
    """The command line reads its files into NumPy id arrays (no pandas) when every id is
    short; the rows, ids and values are those of read_trec (whose ids are pandas Indexes)."""
    from rankereval.io._trec import _read_trec_for_printing

    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text(f"q2 0 {docs[0]} 2\nq2 0 {docs[1]} 0\nq10 0 {docs[2]} 1\nq1 0 {docs[0]} 1\n", encoding="utf-8")
    run.write_text(f"q10 Q0 {docs[2]} 1 2.0 t\nq10 Q0 {docs[0]} 2 2.0 t\nq2 Q0 {docs[1]} 1 5.0 t\n"
                   f"q2 Q0 {docs[0]} 2 1.0 t\nq3 Q0 {docs[0]} 1 1.0 t\n", encoding="utf-8")
    for missing, extra in (("drop", "drop"), ("empty", "keep")):
        a = read_trec(qrels, run, missing=missing, extra=extra)
        b = _read_trec_for_printing(qrels, run, missing=missing, extra=extra)
        assert list(map(str, b.query_ids)) == list(a.query_ids)
        assert list(map(str, b.doc_ids)) == list(a.doc_ids)
        assert b.binary_labels == a.binary_labels and b.numeric_labels == a.numeric_labels
        assert b.rankings == a.rankings and b.report == a.report
        assert b.binary_labels.judged == a.binary_labels.judged
    assert isinstance(b.query_ids, np.ndarray) == all(len(d.encode()) <= 8 for d in docs)
    with open(run, "a", encoding="utf-8") as fh:
        fh.write(f"q2 Q0 {docs[1]} 3 0.5 t\n")  # a repeated document: the same message
    with pytest.raises(ValueError) as expected:
        read_trec(qrels, run)
    with pytest.raises(ValueError) as got:
        _read_trec_for_printing(qrels, run)
    assert str(got.value) == str(expected.value) and repr(docs[1]) in str(got.value)


def test_gain_is_the_old_spelling_of_relevance_scaling(capsys):
    """--relevance-scaling is relevance_scaling= of NDCG/DCG; --gain works with a note."""
    data = read_trec(QRELS, RUN)
    code, out, err = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "ndcg@10", "dcg@5",
                             "--relevance-scaling", "power", "-f", "json")
    assert code == 0, err
    new = json.loads(out)
    assert new["ndcg@10"]["mean"] == data.mean(NDCG(10, relevance_scaling="power"), nan_handling="zerofill")
    assert "deprecated" not in err
    code, out, err = run_cli(capsys, "evaluate", QRELS, RUN, "-m", "ndcg@10", "dcg@5",
                             "--gain", "power", "-f", "json")
    assert code == 0
    assert "--gain is deprecated; use --relevance-scaling" in err
    assert json.loads(out) == new
