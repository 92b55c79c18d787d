"""ir_measures' measure names (rankereval.metrics._ir_names, read by from_name): the values
equal ir_measures' on its own test inputs and on random ones, every measure of ir_measures
is either read or refused with a reason, and the options rel= / judged_only (Adjusted)."""
import glob
import math
import os
import pickle
import random
import re
import warnings

import numpy as np
import pytest

from rankereval import (AP, NDCG, BinaryLabels, InfAP, NumericLabels, Precision, Rankings, SetAP, SetF, SetP, SetR,
                        SetRelativeP, evaluate)
from rankereval.cli import main
from rankereval import compare
from rankereval.metrics import Adjusted, from_name, metric_names
from rankereval.metrics._ir_names import ENTRIES, TABLE, table_rows

ir_measures = pytest.importorskip("ir_measures")
pytest.importorskip("pandas")

from rankereval.io import read_trec  # noqa: E402

# The qrels/run pairs of ir_measures' own tests (terrierteam/ir_measures, commit dc04a88:
# tests/test_pytrec_eval.py and tests/test_judged.py), one file pair per distinct input.
DATA = os.path.join(os.path.dirname(__file__), "data", "ir_measures")
CASES = sorted(p[:-len(".qrels")] for p in glob.glob(os.path.join(DATA, "*.qrels")))

# trec_eval-backed names (pytrec_eval is ir_measures' provider), exact to the last bit
TREC_BACKED = [
    "P@1", "P@2", "P@4", "P@5", "P@10", "R@2", "R@100", "Recall@3", "Precision@3",
    "AP", "MAP", "AP@2", "AP@4", "AP@100", "MAP@3", "RR", "MRR", "RR@1", "RR@2",
    "nDCG", "NDCG", "nDCG@3", "nDCG@10", "Success@1", "Success@2", "Rprec", "RPrec", "Bpref", "BPref",
    "IPrec@0.0", "IPrec@0.25", "IPrec@0.5", "IPrec@1.0", "NumRet", "NumRel", "NumRelRet",
    "P(rel=2)@2", "AP(rel=2)", "AP(rel=2)@3", "RR(rel=2)", "R(rel=2)@4", "Success(rel=2)@2",
    "Rprec(rel=2)", "Bpref(rel=2)", "NumRet(rel=1)", "NumRet(rel=2)", "NumRet(rel=3)", "IPrec(rel=2)@0.25",
    "P(judged_only=True)@4", "AP(judged_only=True)", "AP(judged_only=True)@4", "RR(judged_only=True)",
    "nDCG(judged_only=True)", "nDCG(judged_only=True)@4", "R(judged_only=True)@2",
    "Success(judged_only=True)@2", "Rprec(judged_only=True)", "IPrec(judged_only=True)@0.5",
    "P(rel=2, judged_only=True)@3", "P(cutoff=3)", "AP(cutoff=2, rel=2)",
]
# gdeval-backed (ir_measures runs the bundled gdeval.pl, which prints 5 decimals)
GDEVAL = ["ERR@1", "ERR@2", "ERR@10", "nDCG(dcg='exp-log2')@2", "nDCG(dcg='exp-log2')@10"]
JUDGED = ["Judged", "Judged@1", "Judged@3", "Judged@10"]


def _ours(qrels, run, names):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate(read_trec(qrels, run), names)
    # trec_eval (and ir_measures) score a query without relevant documents 0
    return {n: {str(q): (0.0 if math.isnan(v) else float(v)) for q, v in zip(ev.query_ids, ev[n])}
            for n in names}


def _theirs(qrels, run, name):
    measure = ir_measures.parse_measure(name)
    return {m.query_id: float(m.value) for m in ir_measures.iter_calc(
        [measure], list(ir_measures.read_trec_qrels(qrels)), list(ir_measures.read_trec_run(run)))}


def _check(qrels, run, names, tol):
    ours = _ours(qrels, run, names)
    for name in names:
        theirs = _theirs(qrels, run, name)
        assert theirs, name
        for qid, value in theirs.items():
            assert math.isclose(ours[name][qid], value, rel_tol=0, abs_tol=tol), (name, qid, ours[name][qid], value)


@pytest.mark.parametrize("case", CASES, ids=os.path.basename)
def test_equal_to_ir_measures_on_its_own_test_inputs(case):
    qrels, run = case + ".qrels", case + ".run"
    _check(qrels, run, TREC_BACKED, 1e-12)
    _check(qrels, run, GDEVAL, 5.01e-6)  # half a unit of the 5th decimal
    # also on qrels with negative grades: ir_measures' Judged counts every qrels line, and so
    # does Judged here (a negative grade is in the labels' pool)
    _check(qrels, run, JUDGED, 1e-12)


def test_judged_counts_a_negative_grade_as_ir_measures_does(tmp_path):
    # issue 44: d2, graded -1, is a qrels line, so judged for ir_measures' Judged: d1, d2, d3
    # are all judged, 1.0 (not 2/3)
    qrels, run = tmp_path / "neg.qrels", tmp_path / "neg.run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 -1\nq1 0 d3 0\nq1 0 d4 2\n")
    run.write_text("".join(f"q1 Q0 {d} {i + 1} {4 - i} r\n" for i, d in enumerate(["d1", "d2", "d3", "d5"])))
    ours = _ours(str(qrels), str(run), ["Judged@3", "Judged@4", "judged@3"])
    assert ours["Judged@3"]["q1"] == ours["judged@3"]["q1"] == 1.0
    assert ours["Judged@4"]["q1"] == 0.75
    _check(str(qrels), str(run), ["Judged@3", "Judged@4", "Judged"], 0)
    # Bpref still reads d2 as not judged (trec_eval's convention, ir_measures through
    # pytrec_eval), in the same evaluate call as Judged
    _check(str(qrels), str(run), ["Bpref", "Judged@3"], 1e-12)


ACCURACY = ["Accuracy", "Accuracy@2", "Accuracy@3", "Accuracy(rel=2)", "Accuracy(rel=2)@5", "NumQ"]


def test_accuracy_and_numq_equal_ir_measures_on_random_inputs(tmp_path):
    """ir_measures' accuracy provider (its own Python: 1 - the non-relevant documents above
    each relevant one retrieved, over R' N') is AUROC@k here; NumQ is 1 per query. Where its
    provider divides by zero (a query whose top k has relevant documents only) ir_measures
    raises ZeroDivisionError: those cases are left out (AUROC is NaN there)."""
    rng = random.Random(45)
    checked = 0
    for i in range(30):
        qrels, run = _random_case(rng, tmp_path, i)
        ours = _ours(qrels, run, ACCURACY)
        for name in ACCURACY:
            try:
                theirs = _theirs(qrels, run, name)
            except ZeroDivisionError:
                continue
            for qid, value in theirs.items():  # (it reports no value where AUROC is NaN)
                assert math.isclose(ours[name][qid], value, rel_tol=0, abs_tol=1e-12), (name, qid)
                checked += 1
    assert checked >= 100


def test_accuracy_by_hand(tmp_path):
    # d1 relevant; d2 (-1), d3 (0) and d5 (unjudged) not relevant: every pair ordered, 1.0;
    # q2: d7 (0) above d1 (2), d9 below: 1 of 2 pairs
    qrels, run = tmp_path / "a.qrels", tmp_path / "a.run"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 -1\nq1 0 d3 0\nq1 0 d4 2\nq2 0 d1 2\nq2 0 d7 0\n")
    run.write_text("q1 Q0 d1 1 4 r\nq1 Q0 d2 2 3 r\nq1 Q0 d3 3 2 r\nq1 Q0 d5 4 1 r\n"
                   "q2 Q0 d7 1 3 r\nq2 Q0 d1 2 2 r\nq2 Q0 d9 3 1 r\n")
    ours = _ours(str(qrels), str(run), ["Accuracy", "Accuracy@2", "NumQ"])
    assert ours["Accuracy"] == {"q1": 1.0, "q2": 0.5}
    assert ours["Accuracy@2"] == {"q1": 1.0, "q2": 0.0}
    assert ours["NumQ"] == {"q1": 1.0, "q2": 1.0}
    _check(str(qrels), str(run), ["Accuracy", "Accuracy@2", "Accuracy(rel=2)", "NumQ"], 0)


def _random_case(rng, tmp_path, i):
    """A qrels and run with grades -1..3, unjudged documents, distinct scores per query
    (numeric query ids: gdeval reads no others)."""
    qrels, run = [], []
    for q in range(rng.randint(1, 6)):
        docs = [f"d{d}" for d in range(rng.randint(1, 14))]
        for d in docs:
            if rng.random() < 0.7:
                qrels.append(f"{q} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
        ranked = rng.sample(docs, rng.randint(1, len(docs)))
        scores = rng.sample(range(1000), len(ranked))
        run.extend(f"{q} Q0 {d} {r + 1} {s / 10} run" for r, (d, s) in enumerate(zip(ranked, scores)))
    if not qrels:
        qrels.append("0 0 d0 1")
    qp, rp = tmp_path / f"r{i}.qrels", tmp_path / f"r{i}.run"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n")
    return str(qp), str(rp)


def test_equal_to_ir_measures_on_random_inputs(tmp_path):
    # IPrec at levels where trec_eval 9's rounding of the level times R (pytrec_eval, so
    # ir_measures) and trec_eval 10's (rankereval) agree: 0, 0.5, 1 (the table's note).
    # Not IPrec(judged_only=True): pytrec_eval gives NaN for a query that retrieves no judged
    # document (rankereval: 0, trec_eval's value for an empty ranking).
    names = [n for n in TREC_BACKED if "IPrec" not in n] + ["IPrec@0.0", "IPrec@0.5", "IPrec(rel=2)@1.0"]
    rng = random.Random(33)
    for i in range(25):
        qrels, run = _random_case(rng, tmp_path, i)
        _check(qrels, run, names + JUDGED, 1e-12)  # grades -1..3: Judged counts the -1 lines
        _check(qrels, run, GDEVAL[:3], 5.01e-6)  # gdeval ERR; its nDCG takes the ideal of judged grades >= 0 too


def test_every_ir_measures_measure_is_read_or_refused_with_a_reason():
    from ir_measures.measures import registry

    # the table is of ir_measures 0.4.3 (the installed one here); a measure a later release
    # adds is still refused (by rankereval's grammar, as an unknown name)
    for name in set(registry) - set(TABLE):
        with pytest.raises(ValueError):
            from_name(name)
    for name, (entry, fixed) in TABLE.items():
        if name not in registry:
            continue
        measure = registry[name]
        if ir_measures.__version__ == "0.4.3":
            assert set(entry.params) == set(measure.SUPPORTED_PARAMS) - {"cutoff", "recall"}, name
        assert set(entry.supported) <= set(measure.SUPPORTED_PARAMS), name
        assert (entry.cutoff in ("required", "optional")) == ("cutoff" in measure.SUPPORTED_PARAMS), name
        if entry.build is None:
            spelt = name if entry.cutoff != "required" else f"{name}@5"
            if name.lower() in metric_names():  # RBP: rankereval's rbp, unless given parameters
                assert from_name(spelt) == from_name(spelt.lower())
                spelt = f"{name}({entry.params[0]}=1)"
            with pytest.raises(ValueError, match=f"ir_measures measure '{re.escape(spelt)}' is not supported: "):
                from_name(spelt)


@pytest.mark.parametrize("name, match", [
    ("P(foo=1)@5", "P has no parameter 'foo' \\(its parameters: cutoff, rel, judged_only\\)"),
    ("nDCG(gains={0: 0, 1: 1})@10", "parameter 'gains' is not supported: custom gains"),
    ("nDCG(dcg='exp')@10", "dcg must be 'log2' or 'exp-log2'"),
    ("nDCG(rel=2)@10", "nDCG has no parameter 'rel'"),
    ("NumQ@5", "NumQ takes no cutoff"),
    ("Compat(normalize=1)", "normalize must be True or False"),
    ("SetP(relative=1)", "relative must be True or False"),
    ("P", "P needs a cutoff, e.g. P@10"),
    ("P@0", "the cutoff must be an integer > 0"),
    ("P@x", "the cutoff after @ must be an integer > 0"),
    ("P(cutoff=3)@3", "give the cutoff once"),
    ("Bpref@10", "Bpref takes no cutoff"),
    ("IPrec", "needs its recall level after @"),
    ("IPrec@1.5", "recall_level must be a number in \\[0, 1\\]"),
    ("P(rel=0)@5", "rel must be an integer > 0"),
    ("P(rel=True)@5", "rel must be an integer > 0"),
    ("AP(judged_only=1)", "judged_only must be True or False"),
    ("P(rel=len('x'))@5", "parameters must be name=value pairs of Python literals"),
    ("P(2)@5", "parameters must be name=value pairs"),
])
def test_bad_ir_measures_names(name, match):
    with pytest.raises(ValueError, match=match):
        from_name(name)


@pytest.mark.parametrize("ir_name, ours", [
    ("nDCG@10", NDCG(10)), ("P@5", Precision(5)), ("AP", AP()),
    ("AP@100", AP(100, denominator="relevant")),  # trec_eval's map_cut_100, not ap@100
    ("P(rel=2)@5", Adjusted(Precision(5), rel=2)), ("AP(judged_only=True)", Adjusted(AP(), judged_only=True)),
    ("nDCG(dcg='exp-log2')@10", NDCG(10, relevance_scaling="power")),
    ("infAP", InfAP()), ("SetP", SetP()), ("SetRelP", SetRelativeP()), ("SetP(relative=True)", SetRelativeP()),
    ("SetP(rel=2)", Adjusted(SetP(), rel=2)), ("SetR", SetR()), ("SetF", SetF()), ("SetF(beta=0.5)", SetF(0.5)),
    ("SetAP", SetAP()), ("SetAP(judged_only=True)", Adjusted(SetAP(), judged_only=True)),
])
def test_names_map_onto_rankereval_metrics(ir_name, ours):
    got = from_name(ir_name)
    assert got == ours
    assert from_name(got.name) == got  # rankereval's name of it reads back
    assert pickle.loads(pickle.dumps(got)) == got


def test_names_ir_measures_refuses_but_rankereval_knows_fall_back():
    from rankereval import RBP

    assert from_name("RBP@10") == RBP(10)
    # graded RBP of ir_measures (no rel=) is refused naming rankereval's spelling; RBP(rel=x) is binary RBP
    with pytest.raises(ValueError, match=r"ir_measures measure 'RBP\(p=0.9\)': .*graded RBP .*rbp\[p=\.\.\.\]"):
        from_name("RBP(p=0.9)")
    assert from_name("RBP(rel=1)") == Adjusted(RBP(), rel=1)
    assert from_name("RBP(rel=2, p=0.9)@10") == Adjusted(RBP(10, p=0.9), rel=2) == from_name("rbp@10[p=0.9,rel=2]")


def test_defaults_apply_where_the_name_leaves_a_parameter_open():
    # the command line's --truncated / --relevance-scaling / --log-base, as for rankereval's names
    assert from_name("P@5", defaults={"truncated": True}) == Precision(5, truncated=True)
    assert from_name("nDCG@10", defaults={"relevance_scaling": "power"}) == NDCG(10, relevance_scaling="power")
    assert from_name("nDCG(dcg='log2')@10", defaults={"relevance_scaling": "power"}) == NDCG(10)
    assert from_name("P(rel=2)@5", defaults={"truncated": True}) == Adjusted(Precision(5, truncated=True), rel=2)
    assert from_name("RR@10", defaults={"truncated": True, "n_items": 3}) == from_name("rr@10")


def test_lower_case_names_keep_rankereval_definitions():
    # ir_measures' names are case-sensitive; rankereval's grammar is not, and keeps its own
    assert from_name("ap@100") == AP(100)
    assert from_name("map@100") == AP(100)
    assert from_name("MAP@100") == AP(100, denominator="relevant")


def test_table_rows_cover_every_entry():
    rows = table_rows()
    assert len(rows) == len(ENTRIES)
    by_name = {r[0].split(" ")[0]: r for r in rows}
    assert by_name["AP[@k]"][2] == "ap; @k: ap@k[relevant]"
    assert by_name["P@k"][1:] == ("rel, judged_only", "p@k", "")
    assert by_name["NumQ"][2] == "numq"
    assert by_name["Accuracy[@k]"][2] == "auroc[@k]"
    assert by_name["BPM@k"][2] == "bpm@k"
    assert by_name["infAP"][2] == "infap"


# ----------------------------------------------------------------------------------------
# Adjusted: rel= and judged_only as rankereval options
# ----------------------------------------------------------------------------------------

def test_adjusted_by_hand():
    y = NumericLabels.from_matrix([[2, 1, 0, 3, 0]])
    judged = BinaryLabels.from_positive_indices([[0, 1, 2, 3]])  # item 4 is not judged
    y = y.with_judged(judged)
    r = Rankings.from_ranked_indices([[4, 1, 0, 2, 3]])
    assert Adjusted(Precision(2), rel=2).score(y, r)[0] == 0.0  # items 4, 1: neither >= 2
    assert Adjusted(Precision(2), rel=1).score(y, r)[0] == 0.5
    # judged only: the ranking is 1, 0, 2, 3
    assert Adjusted(Precision(2), judged_only=True).score(y, r)[0] == 1.0
    assert Adjusted(Precision(2), rel=2, judged_only=True).score(y, r)[0] == 0.5
    np.testing.assert_allclose(Adjusted(AP(), judged_only=True).score(y, r), [(1 + 1 + 3 / 4) / 3])
    assert from_name("p@2[rel=2,judged_only]") == Adjusted(Precision(2), rel=2, judged_only=True)
    ev = evaluate(y, r, ["p@2", "P(rel=2)@2", "p@2[judged_only]"], relevance_level=2)
    assert ev.scores.tolist() == [[0.0, 0.0, 0.5]]  # rel not given: the call's level (2)


def test_adjusted_errors():
    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_ranked_indices([[0, 1]])
    with pytest.raises(ValueError, match="judged_only.*y_true has no judgments"):
        Adjusted(Precision(1), judged_only=True).score(y, r)
    with pytest.raises(ValueError, match="rel must be a finite number > 0"):
        Adjusted(Precision(1), rel=0)
    with pytest.raises(ValueError, match="needs rel or judged_only"):
        Adjusted(Precision(1))
    with pytest.raises(TypeError, match="metric must be a registered Metric"):
        Adjusted(Adjusted(Precision(1), rel=2), judged_only=True)
    with pytest.raises(TypeError, match="judged_only must be True or False"):
        Adjusted(Precision(1), judged_only="yes")
    with pytest.raises(ValueError, match="ndcg reads the grades themselves"):
        from_name("ndcg[rel=2]")
    with pytest.raises(ValueError, match="rel is set twice"):
        from_name("p@1[rel=2,rel=3]")


# ----------------------------------------------------------------------------------------
# the command line and compare
# ----------------------------------------------------------------------------------------

def test_cli_reads_ir_measures_names(capsys, tmp_path):
    case = CASES[0]
    names = ["P(rel=2, judged_only=True)@3", "AP@2", "nDCG(dcg='exp-log2')@10", "RR"]
    code = main(["evaluate", case + ".qrels", case + ".run", "-m", *names, "-f", "json", "-q"])
    out, err = capsys.readouterr()
    assert code == 0, err
    import json

    got = json.loads(out)
    assert list(got) == names
    for name in names:
        theirs = _theirs(case + ".qrels", case + ".run", name)
        assert got[name]["mean"] == pytest.approx(np.mean(list(theirs.values())), abs=5e-6)
        for qid, value in theirs.items():
            assert got[name]["per_query"][qid] == pytest.approx(value, abs=5e-6)
    code = main(["evaluate", case + ".qrels", case + ".run", "-m", "P(foo=2)@3"])
    assert code == 2 and "P has no parameter 'foo'" in capsys.readouterr().err


def test_compare_reads_ir_measures_names():
    case = CASES[0]
    cmp = compare(case + ".qrels", {"a": case + ".run", "b": case + ".run"}, ["P(rel=2)@2", "AP@4"],
                  nan_handling="zerofill")
    assert cmp.metrics == ("P(rel=2)@2", "AP@4")
    for j, name in enumerate(cmp.metrics):
        assert cmp.means[j, 0] == pytest.approx(np.mean(list(_theirs(case + ".qrels", case + ".run", name).values())))


def test_cli_lists_ir_measures_names(capsys):
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    for names, params, target, _ in table_rows():
        if target.startswith("not supported"):
            assert names.split(" ")[0] in out.splitlines()[-1]
        else:
            assert f"  {names:<22} = {target}" in out


def test_cli_compare_reads_ir_measures_names(capsys, tmp_path):
    case = CASES[0]
    runs = []
    for name in ("a", "b"):
        path = tmp_path / f"{name}.run"
        path.write_text(open(case + ".run").read())
        runs.append(str(path))
    code = main(["compare", case + ".qrels", *runs, "-m", "P(rel=2, judged_only=True)@3", "AP@2"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "P(rel=2, judged_only=True)@3" in out and "AP@2" in out


def test_binary_rbp_equals_ir_measures_cwl_eval():
    # RBP(rel=x): binary RBP, computed by ir_measures' cwl_eval provider (pip install cwl-eval)
    from ir_measures import providers

    provider = providers.registry.get("cwl_eval")
    if provider is None or not provider.is_available():
        pytest.skip("ir_measures' cwl_eval provider is not available (pip install cwl-eval)")
    for case in CASES:
        _check(case + ".qrels", case + ".run", ["RBP(rel=1)", "RBP(rel=2)", "RBP(rel=1, p=0.5)"], 1e-9)
