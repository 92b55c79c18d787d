"""The C/W/L family (rankereval.metrics._cwl): the kernel against the literal reference
(tests/reference_cwl.py) at cwl_eval's full depth, against cwl_eval itself on its own example
files and on generated cases, ir_measures' names and values, and the documented difference
(cwl_eval's dynamic BPM never moves K)."""
import math
import os
import random
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference_cwl as ref  # noqa: E402

from rankereval import (BPM, INSQ, INST, NERR8, NERR9, NERR10, NERR11, SDCG, BinaryLabels,  # noqa: E402
                        Compat, NumericLabels, Rankings, evaluate)
from rankereval.metrics import from_name  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "cwl")
TOL = 1e-12


def _metrics(max_grade=1.0, depth=1000):
    g = dict(max_grade=max_grade, depth=depth)
    return [SDCG(1, **g), SDCG(5, **g), SDCG(10, **g), INST(**g), INST(T=2.5, **g), INSQ(**g), INSQ(T=3, **g),
            BPM(1, **g), BPM(10, **g), BPM(10, T=2, **g), BPM(7, T=1.5, hb=1, hc=1, median=0.3, **g),
            NERR8(1, **g), NERR8(10, **g), NERR9(3, **g), NERR10(**g), NERR10(0.5, **g), NERR11(**g),
            NERR11(T=4, **g)]


def _ref_value(metric, labels, ranking):
    params = dict(metric._params())
    return ref.REFERENCE[type(metric).__name__](labels, ranking, **params)


# --------------------------------------------------------------------------- #
# the kernel equals the literal reference (cwl_eval's depth, 1000 ranks)
# --------------------------------------------------------------------------- #
@st.composite
def _cases(draw):
    n = draw(st.integers(1, 3))
    rows, rankings = [], []
    for _ in range(n):
        items = draw(st.lists(st.integers(0, 40), max_size=25, unique=True))
        grades = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 3.0]), min_size=len(items),
                               max_size=len(items)))
        rows.append({i: g for i, g in zip(items, grades) if g > 0})
        rankings.append(draw(st.lists(st.integers(0, 40), max_size=30, unique=True)))
    return rows, rankings


def _labels(rows, graded=True):
    n_items = 1 + max([i for r in rows for i in r] + [0])
    dense = np.zeros((len(rows), n_items))
    for r, row in enumerate(rows):
        for i, g in row.items():
            dense[r, i] = g
    return NumericLabels.from_matrix(dense) if graded else BinaryLabels.from_matrix(dense > 0)


@settings(max_examples=25, deadline=None)
@given(case=_cases(), depth=st.sampled_from([1000, 3, 40]))
def test_kernel_equals_reference_at_full_depth(case, depth):
    rows, rankings = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y_pred = Rankings.from_ranked_indices(rankings)
    y_true = _labels(rows)
    for metric in _metrics(max_grade=3.0, depth=depth) + [INST(min_grade=1, max_grade=3, depth=depth)]:
        got = metric.score(y_true, y_pred)
        expected = [_ref_value(metric, row, ranking) for row, ranking in zip(rows, rankings)]
        np.testing.assert_allclose(got, expected, rtol=TOL, atol=TOL, err_msg=metric.name)
    binary = _labels(rows, graded=False)
    for metric in (INST(depth=depth), BPM(4, depth=depth), NERR9(5, depth=depth)):
        expected = [_ref_value(metric, {i: 1.0 for i in row}, ranking) for row, ranking in zip(rows, rankings)]
        np.testing.assert_allclose(metric.score(binary, y_pred), expected, rtol=TOL, atol=TOL)


def test_grades_are_clipped_to_the_grade_range():
    # ir_measures' clipping: a grade above max_grade gains 1, one at or below min_grade 0
    y_pred = Rankings.from_ranked_indices([[1, 2, 3]])
    for metric in _metrics() + [INST(min_grade=0.5)]:
        np.testing.assert_array_equal(metric.score(NumericLabels.from_matrix([[0, 5, 1, 0.5]]), y_pred),
                                      metric.score(NumericLabels.from_matrix([[0, 1, 1, 0.5]]), y_pred))
    low = INST(min_grade=1, max_grade=3)
    np.testing.assert_array_equal(low.score(NumericLabels.from_matrix([[0, 0.5, 1, 2]]), y_pred),
                                  low.score(NumericLabels.from_matrix([[0, 0, 0, 2]]), y_pred))
    for bad in (dict(T=0), dict(max_grade=0), dict(min_grade=2, max_grade=1), dict(depth=2.5), dict(depth=0)):
        with pytest.raises(ValueError):
            INST(**bad)
    with pytest.raises(ValueError, match="median"):
        BPM(3, median=2)


def test_no_gain_scores_zero_not_nan():
    # a rate of gain, defined without relevant items (cwl_eval reports 0)
    y_true = BinaryLabels.from_positive_indices([[], [5]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y_pred = Rankings.from_ranked_indices([[1, 2], []])
    for metric in _metrics():
        np.testing.assert_array_equal(metric.score(y_true, y_pred), [0.0, 0.0])


def test_hand_computed_values():
    y_true = BinaryLabels.from_positive_indices([[3]])
    y_pred = Rankings.from_ranked_indices([[1, 2, 3, 4]])
    # BPM@10, T=1: the user reads ranks 1-3 (the gain reaches 1 at rank 3), each weighs 1/3
    assert BPM(10).score(y_true, y_pred)[0] == pytest.approx(1 / 3, abs=1e-15)
    # BPM@2: the budget stops the user after rank 2, before the relevant item
    assert BPM(2).score(y_true, y_pred)[0] == 0.0
    # SDCG@3: (1 / log2(4)) / (1 + 1 / log2(3) + 1 / log2(4))
    assert SDCG(3).score(y_true, y_pred)[0] == pytest.approx(0.5 / (1 + 1 / math.log2(3) + 0.5), abs=1e-15)
    # NERR8@k with gain 1 at rank 1: the user stops there, whatever k
    assert NERR8(5).score(y_true, Rankings.from_ranked_indices([[3, 1]]))[0] == 1.0
    # INSQ, T=1: C(i) = ((i + 1) / (i + 2))^2, so reaching rank i has probability (2 / (i + 1))^2;
    # the gain is at rank 3: (1/2)^2 over the sum of (2 / (i + 1))^2 for i = 1..1000
    mass = sum((2 / (i + 1)) ** 2 for i in range(1, 1001))
    assert INSQ().score(y_true, y_pred)[0] == pytest.approx(0.25 / mass, rel=1e-13)


# --------------------------------------------------------------------------- #
# cwl_eval itself (its Python API: the values before its four-decimal printing)
# --------------------------------------------------------------------------- #
def _cwl_class(metric):
    """cwl_eval's measure object of ``metric`` (its classes as cwl_eval's metrics file names them)."""
    from cwl.ruler.measures.cwl_bpm import BPMCWLMetric, BPMDCWLMetric
    from cwl.ruler.measures.cwl_dcg import NDCGCWLMetric
    from cwl.ruler.measures.cwl_insq import INSQCWLMetric
    from cwl.ruler.measures.cwl_inst import INSTCWLMetric
    from cwl.ruler.measures.cwl_nerr import NERReq8CWLMetric, NERReq9CWLMetric, NERReq10CWLMetric, NERReq11CWLMetric
    name = type(metric).__name__
    if name == "BPM":
        if metric.hb == 0 and metric.hc == 0:
            return BPMCWLMetric(metric.T, metric.k)
        return BPMDCWLMetric(metric.T, metric.k, metric.hb, metric.hc, metric.median)
    return {"SDCG": lambda: NDCGCWLMetric(metric.k), "INST": lambda: INSTCWLMetric(metric.T),
            "INSQ": lambda: INSQCWLMetric(metric.T), "NERR8": lambda: NERReq8CWLMetric(metric.k),
            "NERR9": lambda: NERReq9CWLMetric(metric.k), "NERR10": lambda: NERReq10CWLMetric(metric.p),
            "NERR11": lambda: NERReq11CWLMetric(metric.T)}[name]()


def _cwl_scores(qrels, run, metrics):
    """``{metric: {topic: value}}`` from cwl_eval's Python API, as its ``main`` builds each
    ranking: the run's lines in file order, no cost file, depth 1000."""
    logging = pytest.importorskip("logging")
    logging.getLogger("cwl").disabled = True
    from cwl.ruler.ranking import RankingMaker
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler
    handler = qrels if isinstance(qrels, TrecQrelHandler) else TrecQrelHandler(qrels)
    topics = {}
    for line in run:
        topic, element, doc = line.split()[:3]
        topics.setdefault(topic, []).append((doc, element))
    out = {m: {} for m in metrics}
    for topic, docs in topics.items():
        maker = RankingMaker(topic, handler, None, max_n=1000)
        for doc, element in docs:
            maker.add(doc, element)
        ranking = maker.get_ranking()
        for m in metrics:
            out[m][topic] = float(_cwl_class(m).measure(ranking))
    return out


def _ours(qrels_path, run_path, metrics):
    from rankereval.io import read_trec
    # (cwl_eval scores the topics of the run without judgements too: 0)
    data = read_trec(qrels_path, run_path, tie_break="input", extra="keep")
    ev = evaluate(data, metrics)
    return {m: {str(q): float(v) for q, v in zip(ev.query_ids, ev[m.name])} for m in metrics}


def _check_against_cwl(qrels_path, run_path, metrics):
    with open(run_path) as fh:
        run = [line for line in fh if line.strip()]
    theirs = _cwl_scores(qrels_path, run, metrics)
    ours = _ours(qrels_path, run_path, metrics)
    for m in metrics:
        assert set(theirs[m]) == set(ours[m]), m.name
        for topic, value in theirs[m].items():
            assert ours[m][topic] == pytest.approx(value, rel=TOL, abs=TOL), (m.name, topic)


@pytest.mark.parametrize("qrels", ["qrel_file", "gain_file"])
def test_equal_to_cwl_eval_on_its_example_files(qrels):
    pytest.importorskip("cwl")
    pytest.importorskip("pandas")
    _check_against_cwl(os.path.join(DATA, qrels), os.path.join(DATA, "result_file"),
                       [m for m in _metrics() if not (isinstance(m, BPM) and m.hc)])


def _random_files(rng, tmp_path, i):
    qrels, run = [], []
    for q in range(rng.randint(1, 5)):
        docs = [f"d{d}" for d in range(rng.randint(1, 40))]
        for d in docs:
            if rng.random() < 0.6:
                qrels.append(f"t{q} 0 {d} {rng.choice(['0', '0', '0.25', '0.5', '1', '1', '0.8'])}")
        ranked = rng.sample(docs, rng.randint(1, len(docs)))
        run.extend(f"t{q} E1 {d} {r + 1} {1000 - r} run" for r, d in enumerate(ranked))
    if not qrels:
        qrels.append("t0 0 d0 1")
    qp, rp = tmp_path / f"r{i}.qrels", tmp_path / f"r{i}.run"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n")
    return str(qp), str(rp)


def test_equal_to_cwl_eval_on_generated_cases(tmp_path):
    pytest.importorskip("cwl")
    pytest.importorskip("pandas")
    rng = random.Random(45)
    metrics = [m for m in _metrics() if not (isinstance(m, BPM) and m.hc)] + [BPM(5, T=0.7, hb=2, median=0.4)]
    for i in range(12):
        _check_against_cwl(*_random_files(rng, tmp_path, i), metrics)


def test_cwl_eval_dynamic_bpm_ignores_hc():
    # The documented difference: cwl_eval's BPM-Dynamic adds hc * (g - median) to T in its
    # cost loop, so K never moves; rankereval follows Zhang et al. (K moves by hc).
    pytest.importorskip("cwl")
    from cwl.ruler.measures.cwl_bpm import BPMDCWLMetric
    from cwl.ruler.ranking import Ranking
    logging = pytest.importorskip("logging")
    logging.getLogger("cwl").disabled = True
    gains = [1.0, 1.0, 1.0, 0.0, 0.0]
    ranking = Ranking("t", gains, [1.0] * 5)
    with_hc = BPMDCWLMetric(T=10, K=2, hb=0.0, hc=5.0, gain_med=0.5).measure(ranking)
    without = BPMDCWLMetric(T=10, K=2, hb=0.0, hc=0.0, gain_med=0.5).measure(ranking)
    assert with_hc == without == 1.0  # ranks 1-2 read whatever hc
    y_true = BinaryLabels.from_positive_indices([[0, 1, 2]])
    y_pred = Rankings.from_ranked_indices([[0, 1, 2, 3, 4]])
    assert BPM(2, T=10).score(y_true, y_pred)[0] == 1.0
    # here K moves by 5 * (g - 0.5) after each rank read: 2, 4.5, 7, 9.5, 7, 4.5 before ranks
    # 1-6; the user goes on after ranks 1-5 (i < K) and stops after rank 6: gain 3 over 6 ranks
    assert BPM(2, T=10, hc=5).score(y_true, y_pred)[0] == pytest.approx(3 / 6, abs=1e-15)


# --------------------------------------------------------------------------- #
# names: rankereval's grammar and ir_measures' spellings, and ir_measures' values
# --------------------------------------------------------------------------- #
def test_names_round_trip():
    for metric in _metrics() + _metrics(max_grade=3, depth=20) + [INST(min_grade=1, max_grade=4)]:
        assert from_name(metric.name) == metric, metric.name


@pytest.mark.parametrize("name, metric", [
    ("BPM(T=2, max_rel=3)@5", BPM(5, T=2, max_grade=3)),
    ("BPM@10", BPM(10)),
    ("INST(T=2, min_rel=1, max_rel=3)", INST(T=2, min_grade=1, max_grade=3)),
    ("INST", INST()),
    ("INSQ(T=3)", INSQ(T=3)),
    ("SDCG(max_rel=3)@10", SDCG(10, max_grade=3)),
    ("SDCG(dcg='log2')@5", SDCG(5)),
    ("NERR8@5", NERR8(5)),
    ("NERR9(max_rel=2)@5", NERR9(5, max_grade=2)),
    ("NERR10(p=0.8)", NERR10(0.8)),
    ("NERR11(T=2)", NERR11(T=2)),
    ("Compat", Compat()),
    ("Compat(p=0.8, normalize=False)", Compat(0.8, normalize=False)),
    ("compat[p=0.5]", Compat(0.5)),
    ("bpm@10[T=2]", BPM(10, T=2)),
    ("inst[T=2,max_grade=3]", INST(T=2, max_grade=3)),
])
def test_ir_measures_spellings(name, metric):
    assert from_name(name) == metric


def test_ir_measures_spellings_refused_with_reasons():
    with pytest.raises(ValueError, match="dcg"):
        from_name("SDCG(dcg='exp-log2')@5")
    with pytest.raises(ValueError, match="needs a cutoff"):
        from_name("SDCG")
    with pytest.raises(ValueError, match="normalize"):
        from_name("Compat(normalize=2)")


def test_equal_to_ir_measures(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("cwl")
    pytest.importorskip("pandas")
    rng = random.Random(7)
    names = ["BPM(T=1.0, max_rel=3)@10", "BPM(T=2.0, max_rel=3)@4", "INST(T=1.0, max_rel=3)", "INSQ(T=2.0, max_rel=3)",
             "SDCG(max_rel=3)@5", "NERR8(max_rel=3)@5", "NERR9(max_rel=3)@10", "NERR10(p=0.9, max_rel=3)",
             "NERR11(T=2.0, min_rel=1, max_rel=3)", "INST(T=1.0, max_rel=2)", "NERR9(max_rel=1)@5", "Compat", "Compat(p=0.8)", "Compat(normalize=False)"]
    for i in range(4):
        qrels, run = [], []
        for q in range(rng.randint(1, 4)):
            docs = [f"d{d}" for d in range(rng.randint(1, 30))]
            qrels += [f"{q} 0 {d} {rng.choice([0, 1, 2, 3])}" for d in docs if rng.random() < 0.6]
            ranked = rng.sample(docs, rng.randint(1, len(docs)))
            run += [f"{q} Q0 {d} {r + 1} {1000 - r} run" for r, d in enumerate(ranked)]
        qrels.append("0 0 dtop 3")  # (the top grade present in the qrels)
        qp, rp = tmp_path / f"q{i}", tmp_path / f"r{i}"
        qp.write_text("\n".join(qrels) + "\n")
        rp.write_text("\n".join(run) + "\n")
        from rankereval.io import read_trec
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ev = evaluate(read_trec(str(qp), str(rp)), names)
        ours = {n: dict(zip(map(str, ev.query_ids), ev[n])) for n in names}
        for name in names:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = list(ir_measures.iter_calc([ir_measures.parse_measure(name)],
                                                    list(ir_measures.read_trec_qrels(str(qp))),
                                                    list(ir_measures.read_trec_run(str(rp)))))
            assert theirs
            for m in theirs:
                if name.startswith("Compat") and math.isnan(ours[name][m.query_id]):
                    assert m.value == 0  # no relevant document: NaN here, 0 in ir_measures (documented)
                    continue
                assert float(ours[name][m.query_id]) == pytest.approx(m.value, rel=TOL, abs=TOL), (name, m.query_id)
