"""``rankereval compare --leaderboard`` and ``rankereval agreement``: run as the program is
(a subprocess of ``python -m rankereval``) once per subcommand, with results checked against
the API; the other cases through ``rankereval.cli.main`` in this process."""
import json
import subprocess
import sys

import numpy as np
import pytest

from rankereval import Precision
from rankereval.agreement import jaccard, rbo
from rankereval import compare
from rankereval.io import read_trec

from helpers import write_run


def _run(*argv):
    proc = subprocess.run([sys.executable, "-m", "rankereval", *argv], capture_output=True, text=True,
                          timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _main(capsys, *argv):
    from rankereval.cli import main

    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_compare_leaderboard_json_equals_the_api(trec_files):
    qrels, runs = trec_files
    code, out, err = _run("compare", qrels, *runs, "-m", "p@5", "--leaderboard", "-f", "json",
                          "--seed", "3")
    assert code == 0, err
    doc = json.loads(out)
    datas = {f"sys{i}": read_trec(qrels, r, missing="empty") for i, r in enumerate(runs)}
    ref = compare(None, datas, {"p@5": Precision(5)}, random_state=3)
    assert doc["leaderboards"] == [json.loads(ref.leaderboard("p@5", random_state=3).to_json())]


def test_compare_leaderboard_table(trec_files, capsys):
    qrels, runs = trec_files
    code, out, err = _main(capsys, "compare", qrels, *runs, "-m", "p@5", "ndcg@5", "--leaderboard",
                           "--seed", "1")
    assert code == 0, err
    assert out.count("Leaderboard(metric=") == 2 and "rank interval" in out and "p_best" in out


def test_compare_leaderboard_seeds(trec_files, tmp_path, capsys):
    qrels, runs = trec_files
    # the same name twice: two runs (seeds) of one system
    extra = write_run(tmp_path / "sys1b.run", 5)
    code, out, err = _main(capsys, "compare", qrels, runs[0], runs[1], extra, "--names", "A", "B", "B",
                           "-m", "p@5", "--leaderboard", "-f", "csv", "--seed", "1")
    assert code == 0, err
    lines = out.strip().splitlines()
    assert lines[0].split(",")[:3] == ["metric", "system", "mean"]
    rows = {line.split(",")[1]: line.split(",") for line in lines[1:]}
    header = lines[0].split(",")
    assert rows["B"][header.index("n_seeds")] == "2" and rows["A"][header.index("n_seeds")] == "1"
    code, out, err = _main(capsys, "compare", qrels, runs[0], runs[1], "--names", "A", "A", "--leaderboard")
    assert code == 2 and "at least two systems" in err


def test_agreement_subcommand_equals_the_api(trec_files, tmp_path):
    _, runs = trec_files
    short = write_run(tmp_path / "short.run", 2, skip=(3,), n_docs=5)
    code, out, err = _run("agreement", runs[1], short, "-p", "0.8", "-k", "3", "-f", "json")
    assert code == 0, err
    doc = json.loads(out)
    queries = [q["query"] for q in doc["queries"]]
    assert doc["n_queries"] == 11 and sorted(queries) == sorted(f"q{q}" for q in range(1, 13) if q != 3)
    # the API on the same rankings, written as item ids, in the output's query order
    def ranked(q, shift, n_docs):
        return [(d + shift * q) % 8 for d in range(n_docs)]
    a = [ranked(int(q[1:]), 1, 8) for q in queries]
    b = [ranked(int(q[1:]), 2, 5) for q in queries]
    expected = rbo(a, b, p=0.8)
    np.testing.assert_allclose([q["rbo"] for q in doc["queries"]], expected.ext, rtol=1e-12)
    np.testing.assert_allclose([q["rbo_min"] for q in doc["queries"]], expected.min, rtol=1e-12)
    np.testing.assert_allclose([q["jaccard@3"] for q in doc["queries"]], jaccard(a, b, 3), rtol=1e-12)
    assert doc["mean"]["rbo"] == pytest.approx(expected.ext.mean())


def test_agreement_table_and_errors(trec_files, tmp_path, capsys):
    _, runs = trec_files
    short = write_run(tmp_path / "short.run", 2, skip=(3,), n_docs=5)
    code, out, err = _main(capsys, "agreement", runs[1], short)
    assert code == 0, err
    assert "1 queries ranked only by" in err and out.splitlines()[0].split() == [
        "query", "rbo", "rbo_min", "rbo_max", "jaccard@10"]
    assert out.splitlines()[-2].startswith("mean")
    code, out, err = _main(capsys, "agreement", runs[1], short, "-p", "1.5")
    assert code == 2 and "strictly between 0 and 1" in err
    code, out, err = _main(capsys, "agreement", runs[1], str(tmp_path / "absent.run"))
    assert code == 1 and "absent.run" in err
