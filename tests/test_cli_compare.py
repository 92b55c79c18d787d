"""The ``compare`` subcommand (rankereval/cli/_compare.py), on a parser built as cli/_main.py builds it."""
import argparse
import gzip
import io
import json

import pytest

from rankereval import Precision
from rankereval.cli._compare import add_compare_subparser, run_compare
from rankereval import compare
from rankereval.io import read_trec
from helpers import write_run


def _cli(*argv):
    parser = argparse.ArgumentParser(prog="rankereval")
    sub = parser.add_subparsers(dest="command")
    add_compare_subparser(sub)
    out, err = io.StringIO(), io.StringIO()
    try:
        args = parser.parse_args(["compare", *argv])
    except SystemExit as exc:
        return exc.code, out.getvalue(), err.getvalue()
    return run_compare(args, out, err), out.getvalue(), err.getvalue()


def test_json_equals_the_api(trec_files):
    qrels, runs = trec_files
    code, out, err = _cli(qrels, *runs, "-m", "p@5", "--baseline", "0", "-f", "json", "--seed", "3",
                          "--test", "permutation", "--n-resamples", "999")
    assert code == 0, err
    doc = json.loads(out)
    assert {"comparisons", "test", "correction", "alpha", "n_resamples"} <= set(doc)
    assert doc["test"] == "permutation" and doc["n_resamples"] == 999
    datas = {f"sys{i}": read_trec(qrels, r, missing="empty") for i, r in enumerate(runs)}
    ref = compare(None, datas, {"p@5": Precision(5)}, baseline="sys0", test="permutation",
                  n_resamples=999, random_state=3)
    assert doc["comparisons"] == json.loads(ref.to_json())["comparisons"]
    assert [(c["run"], c["baseline"]) for c in doc["comparisons"]] == [("sys1", "sys0"), ("sys2", "sys0")]


@pytest.mark.parametrize("fmt,needle", [("table", "W/T/L"), ("csv", "metric,run,baseline,mean"),
                                        ("markdown", "| key | run |"), ("latex", "\\toprule")])
def test_formats(trec_files, fmt, needle):
    qrels, runs = trec_files
    code, out, err = _cli(qrels, *runs, "-m", "p@5", "map", "-f", fmt)
    assert code == 0, err
    assert needle in out
    if fmt == "csv":
        assert len(out.strip().splitlines()) == 1 + 2 * 3       # 2 metrics x 3 pairs


def test_names_baseline_and_usage_errors(trec_files):
    qrels, runs = trec_files
    code, out, _ = _cli(qrels, *runs, "-m", "p@5", "--names", "a", "b", "c", "--baseline", "b", "-f", "csv")
    assert code == 0 and "a,b," in out and "c,b," in out
    assert _cli(qrels, *runs, "-m", "p@5", "--baseline", "7")[0] == 2
    assert _cli(qrels, *runs, "-m", "nosuchmetric")[0] == 2
    assert _cli(qrels, *runs, "--names", "a", "b")[0] == 2
    assert _cli(qrels, runs[0])[0] == 2
    assert _cli(qrels, *runs, "--alpha", "2")[0] == 2
    assert _cli(qrels, *runs, "--test", "wilcoxon")[0] == 2


def test_input_errors_exit_1(trec_files, tmp_path):
    qrels, runs = trec_files
    code, _, err = _cli(qrels, runs[0], str(tmp_path / "missing.run"))
    assert code == 1 and "missing.run" in err
    partial = write_run(tmp_path / "partial.run", 1, skip=(4, 9))
    code, _, err = _cli(qrels, runs[0], partial, "-m", "p@5")
    assert code == 1 and "q4" in err and "q9" in err
    code, out, err = _cli(qrels, runs[0], partial, "-m", "p@5", "--queries", "intersection", "-f", "json")
    assert code == 0 and "does not rank 2" in err
    assert json.loads(out)["n_queries"] == {"p@5": 10}


def test_plot_file(trec_files, tmp_path):
    pytest.importorskip("matplotlib")
    qrels, runs = trec_files
    target = tmp_path / "forest.svg"
    code, _, err = _cli(qrels, *runs, "-m", "p@5", "--plot", str(target), "--quiet")
    assert code == 0, err
    text = target.read_text()
    assert text.startswith("<?xml") and "sys1 − sys0" in text


def test_default_names_strip_extensions(trec_files, tmp_path):
    qrels, runs = trec_files
    gz = tmp_path / "deep.v2.run.gz"
    gz.write_bytes(gzip.compress(open(runs[1], "rb").read()))
    code, out, err = _cli(qrels, runs[0], str(gz), runs[0], "-m", "p@5", "-f", "json")
    assert code == 0, err
    assert json.loads(out)["runs"] == ["sys0", "deep.v2", "sys0-2"]
