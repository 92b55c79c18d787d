"""``rankereval evaluate -q -f trec`` with trec_eval's names against trec_eval 10.0 itself.

The expected outputs in tests/data/trec_eval/ were made by trec_eval 10.0 (built from
usnistgov/trec_eval; ``regenerate.py`` there remakes them and ``cases.json`` names the
version) with ``-q -m all_trec`` and each case's flags, on trec_eval's own test files and on
generated ones. Every value rankereval prints must agree with trec_eval's to the precision
trec_eval prints (4 decimals); every measure of trec_eval's output that rankereval does not
print must be one the trec_eval name table declares unsupported.
"""
import gzip
import json
import os

import pytest

from rankereval.cli import main
from rankereval.metrics._trec_names import SETS, TABLE, trec_measures

pytest.importorskip("pandas")

DATA = os.path.join(os.path.dirname(__file__), "data", "trec_eval")
with open(os.path.join(DATA, "cases.json")) as _fh:
    CASES = json.load(_fh)["cases"]


def parse_trec(text):
    """{(measure, query): value text} of trec_eval's output lines."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        measure, query, value = line.split("\t")
        out[(measure.strip(), query)] = value.strip()
    return out


def line_order(text):
    """The (measure, query) keys of trec_eval's output lines, in order."""
    return [tuple(f.strip() for f in line.split("\t")[:2]) for line in text.splitlines() if line.strip()]


def _unsupported_columns():
    names = set()
    for base in SETS["all_trec"]:
        entry = TABLE[base]
        if entry.build is None and not entry.special:
            names.add(base)
            names.update(entry.column(v) for v in entry.defaults)
    return names


@pytest.mark.parametrize("case", CASES, ids=[c["case"] for c in CASES])
def test_reproduces_trec_eval(case, capsys):
    with gzip.open(os.path.join(DATA, case["case"] + ".out.gz"), "rt") as fh:
        text = fh.read()
    expected = parse_trec(text)
    flags = ["--missing", "empty"] if "-c" in case["flags"] else []
    flags += [f for f in case["flags"] if f != "-c"]
    code = main(["evaluate", "-q", "-f", "trec", "-m", "all_trec", *flags, "--quiet",
                 os.path.join(DATA, case["qrels"]), os.path.join(DATA, case["run"])])
    out, err = capsys.readouterr()
    assert code == 0, err
    got = parse_trec(out)
    assert got, "no output"
    unsupported = _unsupported_columns()
    checked = 0
    for key, value in got.items():
        assert key in expected, f"{key} is not in trec_eval's output"
        want = expected[key]
        if key[0] != "relstring" and "." in want:  # trec_eval prints doubles with %6.4f
            # a summary is a mean: trec_eval sums in query order in doubles, rankereval exactly,
            # so a mean on a rounding boundary of the 4th decimal (set_relative_P of gen_aql:
            # 6.15 / 24 = 0.25625) prints one unit apart
            tol = 1e-4 if key[1] == "all" else 0.5e-4
            assert abs(float(value) - float(want)) <= tol + 1e-9, (key, value, want)
        else:
            assert value == want, (key, value, want)
        checked += 1
    missing = {m for (m, _q) in expected} - {m for (m, _q) in got}
    assert missing <= unsupported, f"trec_eval measures neither printed nor declared unsupported: {missing}"
    # every line trec_eval prints, in its order: all of trec_eval 10.0's all_trec is computed
    assert unsupported == set()
    assert line_order(out) == line_order(text)
    # the same queries, for every measure printed per query
    for measure in {m for (m, q) in got if q != "all"}:
        assert {q for (m, q) in got if m == measure} == {q for (m, q) in expected if m == measure}, measure
    assert checked > 0


def test_trec_eval_outputs_name_the_version():
    with open(os.path.join(DATA, "cases.json")) as fh:
        meta = json.load(fh)
    assert "10.0" in meta["trec_eval"] and "v10.0" in meta["source"]
    # every trec_eval measure of the sets is either computed or declared unsupported, with why
    for base in SETS["all_trec"]:
        entry = TABLE[base]
        if entry.build is None:
            assert entry.special, base  # runid, num_q, relstring: lines the output writes
        assert trec_measures(base), base
    # only the measures of preference and judgement-group files are refused, with the reason
    refused = {b: e.unsupported for b, e in TABLE.items() if e.build is None and not e.special}
    assert refused and all(b.startswith("prefs_") or b in ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg", "yaap")
                           for b in refused)
    assert all("not computed" not in why and ("preference" in why or "judgement-group" in why)
               for why in refused.values())
    with pytest.raises(ValueError, match="a preference measure"):
        trec_measures("prefs_simp")


def test_set_and_runid_lines(tmp_path, capsys):
    """trec_eval's 'set' set, the run's tag of its last line (also gzip), num_q."""
    run = os.path.join(DATA, "results.test.gz")
    assert main(["evaluate", "-q", "-f", "trec", "-m", "set", "--quiet", os.path.join(DATA, "qrels.test.gz"),
                 run]) == 0
    with gzip.open(os.path.join(DATA, "test_aq.out.gz"), "rt") as fh:
        expected = parse_trec(fh.read())
    out = capsys.readouterr()[0]
    got = parse_trec(out)
    assert [m for m, q in line_order(out) if q == "all"] == list(SETS["set"])
    assert got[("runid", "all")] == expected[("runid", "all")] == "STANDARD"
    assert got[("num_q", "all")] == "3"
    for key, value in got.items():
        if key[0] != "runid" and "." in value:
            assert abs(float(value) - float(expected[key])) <= 0.5e-4 + 1e-9, key
    plain = tmp_path / "run.txt"
    with gzip.open(run, "rb") as fh:
        plain.write_bytes(fh.read() + b"301 Q0 extra 1 0.1 LASTTAG\n")
    main(["evaluate", "-f", "trec", "-m", "runid", "-m", "map", "--quiet", os.path.join(DATA, "qrels.test.gz"),
          str(plain)])
    assert parse_trec(capsys.readouterr()[0])[("runid", "all")] == "LASTTAG"


def test_the_generated_ties_need_trec_eval_10s_rule(capsys):
    """The generated run has scores equal as 32-bit floats but not as doubles: trec_eval 9's
    rule (tie_break='trec_eval9') ranks them differently from trec_eval 10, so this data
    tells the two apart."""
    with gzip.open(os.path.join(DATA, "gen_aq.out.gz"), "rt") as fh:
        expected = parse_trec(fh.read())
    main(["evaluate", "-q", "-f", "trec", "-m", "map", "--tie-break", "trec_eval9", "--quiet",
          os.path.join(DATA, "gen.qrels"), os.path.join(DATA, "gen.run")])
    got = parse_trec(capsys.readouterr()[0])
    assert any(abs(float(v) - float(expected[k])) > 1e-4 for k, v in got.items())
