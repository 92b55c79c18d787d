"""The intent-aware diversity measures (ndeval's family) and the labels with intents.

The measures read IntentLabels, which the generic registry tests do not build, so this file
covers them: every measure against the literal references of ``reference_diversity`` on
hypothesis inputs, against pyndeval (ir_measures' provider of the family) on ir_measures' test
input and on generated cases, the readers (TREC diversity qrels, DataFrames, dicts), the
names, evaluate/compare, the command line and the IntentLabels operations.
"""
import importlib.util
import math
import os
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rankereval
import reference_diversity as ref
from rankereval import (AP, APIA, ERRIA, NDCG, NERRIA, NNRBP, NRBP, AlphaDCG, AlphaNDCG, IntentLabels, NumericLabels,
                        PrecisionIA, Rankings, SubtopicRecall, evaluate)
from rankereval.metrics import from_name
from rankereval.metrics._adjusted import threshold_labels
from rankereval.metrics._base import _registered
from helpers import close, ranked

# queries without an intent with a relevant item are NaN on purpose in several tests
pytestmark = pytest.mark.filterwarnings("ignore::rankereval.exceptions.UndefinedMetricWarning")

DATA = os.path.join(os.path.dirname(__file__), "data", "diversity")
QRELS, RUN = os.path.join(DATA, "ir_measures.qrels"), os.path.join(DATA, "ir_measures.run")
FAMILY = [c for c in _registered(everything=True) if c.info.labels == "intents"]
N_ITEMS = 8


def _reference(metric, row, ranking):
    p = metric._params()
    kind = type(metric)
    if kind is AlphaDCG:
        return ref.alpha_dcg(row, ranking, p["k"], p["alpha"], p["rel"])
    if kind is AlphaNDCG:
        return ref.alpha_ndcg(row, ranking, p["k"], p["alpha"], p["rel"])
    if kind is ERRIA:
        return ref.err_ia(row, ranking, p["k"], p["alpha"], p["rel"])
    if kind is NERRIA:
        return ref.nerr_ia(row, ranking, p["k"], p["alpha"], p["rel"])
    if kind is PrecisionIA:
        return ref.p_ia(row, ranking, p["k"], p["rel"])
    if kind is SubtopicRecall:
        return ref.s_recall(row, ranking, p["k"], p["rel"])
    if kind is APIA:
        return ref.ap_ia(row, ranking, p["rel"])
    if kind is NRBP:
        return ref.nrbp(row, ranking, p["alpha"], p["beta"], p["rel"])
    if kind is NNRBP:
        return ref.nnrbp(row, ranking, p["alpha"], p["beta"], p["rel"])
    raise AssertionError(kind)


def test_family_is_registered():
    assert {c.__name__ for c in FAMILY} == {"AlphaDCG", "AlphaNDCG", "ERRIA", "NERRIA", "PrecisionIA",
                                            "SubtopicRecall", "APIA", "NRBP", "NNRBP"}
    for cls in FAMILY:
        assert cls not in _registered()  # the generic tests build plain labels only
        assert cls.__name__ in rankereval.__all__ and cls.__name__ in rankereval.metrics.__all__
        for params in cls._param_space(cutoffs=(1, 5)):
            m = cls(**params)
            assert from_name(m.name) == m
            assert pickle.loads(pickle.dumps(m)) == m


# ---------------------------------------------------------------------------------------- #
# kernels against the literal references
# ---------------------------------------------------------------------------------------- #
grades = st.sampled_from([0, 1, 1, 2, 3])
label_row = st.dictionaries(st.integers(0, 3), st.dictionaries(st.integers(0, N_ITEMS - 1), grades, max_size=5),
                            max_size=4)
ranking = st.lists(st.integers(0, N_ITEMS + 2), max_size=10, unique=True)
metrics_st = st.sampled_from(FAMILY).flatmap(
    lambda cls: st.fixed_dictionaries({
        "k": st.one_of(st.none(), st.integers(1, 12)) if cls.info.cutoff != "none" else st.just("-"),
        "alpha": st.sampled_from([0.5, 0.25, 0.7, 1.0, 0.0]) if "alpha" in cls.info.reals else st.just("-"),
        "beta": st.sampled_from([0.5, 0.8, 1.0]) if "beta" in cls.info.reals else st.just("-"),
        "rel": st.sampled_from([1.0, 2.0]),
    }).map(lambda p: cls(**{k: v for k, v in p.items() if v != "-"})))


@settings(max_examples=150)
@given(rows=st.lists(label_row, min_size=1, max_size=4), data=st.data(), metric=metrics_st)
def test_every_measure_matches_the_literal_reference(rows, data, metric):
    rankings = data.draw(st.lists(ranking, min_size=len(rows), max_size=len(rows)))
    y_true = IntentLabels.from_rows(rows, n_items=N_ITEMS + 3)
    got = metric.score(y_true, ranked(rankings))
    close(got, [_reference(metric, row, r) for row, r in zip(rows, rankings)])


@settings(max_examples=40)
@given(row=label_row, rankings=st.lists(ranking, min_size=2, max_size=5))
def test_one_label_row_serves_every_ranking(row, rankings):
    y_true = IntentLabels.from_rows([row], n_items=N_ITEMS + 3)
    metrics = [AlphaNDCG(5), ERRIA(3), NNRBP(0.3, 0.8), APIA(), PrecisionIA(4), SubtopicRecall()]
    got = evaluate(y_true, ranked(rankings), metrics).scores
    for j, m in enumerate(metrics):
        close(got[:, j], [_reference(m, row, r) for r in rankings])


def test_the_scores_of_one_call_equal_those_of_each_metric():
    rows = [{0: {0: 1, 1: 1}, 1: {1: 1, 2: 1}}, {0: {3: 2}}, {}, {5: {4: 1}, 6: {4: 1, 0: 1}}]
    y_true = IntentLabels.from_rows(rows)
    y_pred = ranked([[1, 2, 0], [3], [1], [0, 4, 2]])
    metrics = [m for cls in FAMILY for m in (cls(),)] + [AlphaNDCG(2, alpha=0.25), NDCG(3), AP()]
    ev = evaluate(y_true, y_pred, metrics, nan_handling="propagate")
    binary = threshold_labels(y_true, 1)  # what evaluate gives a binary metric (AP)
    for j, m in enumerate(metrics):
        np.testing.assert_array_equal(ev.scores[:, j], m.score(binary if m.info.labels == "binary" else y_true, y_pred))
    # no intent with a relevant item: NaN (ndeval: 0)
    assert all(np.isnan(m.score(y_true, y_pred)[2]) for m in metrics if m.info.labels == "intents")


def test_edge_cases():
    y_true = IntentLabels.from_rows([{"a": {0: 1}, "b": {1: 1}}])
    empty = ranked([[]])
    for cls in FAMILY:
        assert cls().score(y_true, empty)[0] == 0.0
    # the greedy ideal is not always the best ranking: alpha-nDCG can exceed 1
    rows = [{0: {0: 1, 1: 1}, 1: {0: 1, 2: 1}, 2: {3: 1, 1: 1}, 3: {3: 1, 2: 1}}]
    y = IntentLabels.from_rows(rows)
    best = max(AlphaNDCG(2).score(y, ranked([[a, b]]))[0] for a in range(4) for b in range(4) if a != b)
    assert best >= 1.0
    # alpha = 1: an intent counts once; alpha = 0: every relevant item counts fully
    y = IntentLabels.from_rows([{0: {0: 1, 1: 1}}])
    assert AlphaNDCG(2, alpha=1.0).score(y, ranked([[0, 1]]))[0] == 1.0
    assert NRBP(alpha=0.0, beta=0.5).score(y, ranked([[0, 1]]))[0] == pytest.approx(0.5 * 1.5)


# ---------------------------------------------------------------------------------------- #
# pyndeval (ir_measures' provider of the family): its test input and generated cases
# ---------------------------------------------------------------------------------------- #
_NDEVAL_NAMES = {"ERR-IA": ERRIA, "nERR-IA": NERRIA, "alpha-DCG": AlphaDCG, "alpha-nDCG": AlphaNDCG,
                 "P-IA": PrecisionIA, "strec": SubtopicRecall, "NRBP": NRBP, "nNRBP": NNRBP, "MAP-IA": APIA}


def _ndeval_measures(cutoffs):
    out = {}
    for name, cls in _NDEVAL_NAMES.items():
        if cls.info.cutoff == "none":
            out[name] = cls()
            continue
        for k in cutoffs:
            if k == 1 and cls in (ERRIA, AlphaDCG):
                continue  # ndeval leaves rank 1 undivided (see the definitions)
            out[f"{name}@{k}"] = cls(k)
    return out


def _compare_with_pyndeval(qrels, run, data, cutoffs, alpha=0.5, beta=0.5, rel=1):
    pyndeval = pytest.importorskip("pyndeval")
    measures = _ndeval_measures(cutoffs)
    for m in measures.values():  # the same parameters as the evaluator's
        for p, v in (("alpha", alpha), ("beta", beta), ("rel", rel)):
            if hasattr(m, p):
                setattr(m, p, float(v))
    expected = pyndeval.RelevanceEvaluator(qrels, list(measures), relevance_level=rel, alpha=alpha,
                                           beta=beta).evaluate(run)
    qids = [str(q) for q in data.query_ids]
    ev = evaluate(data, list(measures.values()), nan_handling="propagate")
    for j, name in enumerate(measures):
        want = np.array([expected[q][name] if q in expected else np.nan for q in qids])
        got = np.where(np.isnan(ev.scores[:, j]) & ~np.isnan(want), 0.0, ev.scores[:, j])  # ndeval: 0
        close(got, want, tol=1e-10)


def _tuples(path, run=False):
    with open(path) as fh:
        rows = [line.split() for line in fh if line.strip()]
    if run:
        return [(r[0], r[2], float(r[4])) for r in rows]
    return [(r[0], r[1], r[2], int(r[3])) for r in rows]


def test_ir_measures_test_input_equals_pyndeval():
    from rankereval.io import read_trec

    # pyndeval orders a run by score, ties by the smaller document id (tie_break='docid')
    data = read_trec(QRELS, RUN, intents=True, tie_break="docid")
    for rel in (1, 2):
        _compare_with_pyndeval(_tuples(QRELS), _tuples(RUN, run=True), data, range(1, 21), rel=rel)


def test_ir_measures_published_err_ia():
    # ir_measures' test_pyndeval.py: ERR_IA@20 of 0.4659 and 0.1803, mean 0.3231
    from rankereval.io import read_trec

    data = read_trec(QRELS, RUN, intents=True, tie_break="docid")
    scores = data.score(from_name("ERR_IA@20"))
    np.testing.assert_allclose(scores, [0.4659, 0.1803], atol=5e-5)
    assert data.mean(from_name("ERR_IA@20")) == pytest.approx(0.3231, abs=5e-5)


def test_ir_measures_provider_agrees():
    ir_measures = pytest.importorskip("ir_measures")
    pytest.importorskip("pyndeval")
    from rankereval.io import read_trec

    data = read_trec(QRELS, RUN, intents=True, tie_break="docid")
    qrels = list(ir_measures.read_trec_qrels(QRELS))
    run = list(ir_measures.read_trec_run(RUN))
    names = ["alpha_nDCG@20", "alpha_nDCG(alpha=0.25)@10", "alpha_DCG@5", "ERR_IA@20", "nERR_IA@10", "P_IA@5",
             "StRecall@10", "AP_IA", "NRBP", "nNRBP(alpha=0.3,beta=0.8)", "P_IA(rel=2)@10"]
    for name in names:
        measure = ir_measures.parse_measure(name)
        want = {m.query_id: m.value for m in ir_measures.pyndeval.iter_calc([measure], qrels, run)}
        got = data.score(from_name(name))
        close(got, [want[str(q)] for q in data.query_ids], tol=1e-10)


queries = st.lists(
    st.dictionaries(st.sampled_from(["1", "2", "3", "4"]),
                    st.dictionaries(st.sampled_from([f"d{i}" for i in range(7)]), st.sampled_from([0, 1, 1, 2]),
                                    min_size=1, max_size=5), min_size=1, max_size=4),
    min_size=1, max_size=3)


@pytest.mark.skipif(importlib.util.find_spec("pyndeval") is None, reason="pyndeval is not installed "
                    "(pip install pyndeval: ir_measures' provider of the diversity measures)")
@settings(max_examples=60)
@given(qrels=queries, data=st.data())
def test_generated_cases_equal_pyndeval(qrels, data):
    from rankereval.io import from_dicts

    docs = [f"d{i}" for i in range(9)]
    run = {}
    for q in range(len(qrels)):
        ranked = data.draw(st.lists(st.sampled_from(docs), min_size=1, max_size=9, unique=True))
        run[f"q{q}"] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)}
    nested = {f"q{q}": judged for q, judged in enumerate(qrels)}
    qrel_tuples = [(q, s, d, g) for q, by in nested.items() for s, judged in by.items() for d, g in judged.items()]
    run_tuples = [(q, d, score) for q, ranked in run.items() for d, score in ranked.items()]
    td = from_dicts(nested, run, tie_break="docid")
    assert isinstance(td.numeric_labels, IntentLabels)
    _compare_with_pyndeval(qrel_tuples, run_tuples, td, (1, 2, 3, 5, 10, 20))


# ---------------------------------------------------------------------------------------- #
# readers
# ---------------------------------------------------------------------------------------- #
def test_read_trec_keeps_the_judgements_of_each_intent():
    from rankereval.io import read_trec

    data = read_trec(QRELS, RUN, intents=True)
    y = data.numeric_labels
    assert isinstance(y, IntentLabels)
    docs = list(data.doc_ids)
    # query 0: D1 (intent 0), D2 (0 and 1), D3 (1, grade 2); D0 and D4 judged 0 for intent 0
    assert [docs[i] for i in y.indices_to_list()[0]] == ["D1", "D2", "D3"]
    assert y.intents_to_list()[0] == [{0: 1.0}, {0: 1.0, 1: 1.0}, {1: 2.0}]
    assert y.labels_to_list()[0] == [1.0, 1.0, 2.0]  # each document's largest grade
    assert y.n_intents.tolist() == [2, 2]
    assert sorted(docs[i] for i in y.judged.indices_to_list()[0]) == ["D0", "D1", "D2", "D3", "D4"]
    # the plain metrics read the collapsed labels: equal to reading qrels of the largest grades
    for metric, labels in ((NDCG(5), y.collapsed()), (AP(), threshold_labels(y.collapsed(), 1))):
        np.testing.assert_array_equal(data.score(metric), metric.score(labels, data.rankings))
    # the tie keys are the document names' order
    names = [docs[i] for row in y.indices_to_list() for i in row]
    assert np.argsort(y.order, kind="stable").tolist() == sorted(range(len(names)), key=names.__getitem__)


def test_plain_qrels_with_repeats_name_the_intent_reader(tmp_path):
    from rankereval.io import TrecFormatError, read_trec

    with pytest.raises(TrecFormatError, match="intents=True"):
        read_trec(QRELS, RUN)


def test_repeated_judgement_of_one_intent_is_refused(tmp_path):
    from rankereval.io import TrecFormatError, read_trec

    qrels = tmp_path / "q.txt"
    qrels.write_text("1 a d1 1\n1 b d1 1\n1 a d1 0\n")
    run = tmp_path / "r.txt"
    run.write_text("1 Q0 d1 1 1.0 x\n")
    with pytest.raises(TrecFormatError, match=r"line 3.*intent 'a'"):
        read_trec(qrels, run, intents=True)
    with pytest.raises(TypeError, match="intents must be True or False"):
        read_trec(qrels, run, intents="yes")


def test_dataframes_and_dicts_read_intents():
    pd = pytest.importorskip("pandas")
    from rankereval.io import from_dataframes, from_dicts, read_trec

    qrels = _tuples(QRELS)
    run = _tuples(RUN, run=True)
    labels = pd.DataFrame(qrels, columns=["query", "subtopic", "item", "label"])
    frame = pd.DataFrame(run, columns=["query", "item", "score"])
    a = from_dataframes(labels, frame, intent_col="subtopic", tie_break="docid")
    nested = {}
    for q, s, d, g in qrels:
        nested.setdefault(q, {}).setdefault(s, {})[d] = g
    b = from_dicts(nested, {q: {d: sc for qq, d, sc in run if qq == q} for q in {r[0] for r in run}},
                   tie_break="docid")
    c = read_trec(QRELS, RUN, intents=True, tie_break="docid")
    metrics = [AlphaNDCG(10), ERRIA(20), NNRBP(), APIA(), NDCG(5)]
    for data in (a, b):
        assert isinstance(data.numeric_labels, IntentLabels)
        close(evaluate(data, metrics).scores, evaluate(c, metrics).scores)
    with pytest.raises(ValueError, match="no column 'intent'"):
        from_dataframes(labels, frame, intent_col="intent")
    dup = pd.concat([labels, labels.iloc[:1]], ignore_index=True)
    with pytest.raises(ValueError, match="duplicate judgement for query '0', intent '0'"):
        from_dataframes(dup, frame, intent_col="subtopic")


def test_plain_labels_are_refused_naming_the_intent_reader():
    y = NumericLabels.from_matrix([[1, 0, 2]])
    r = ranked([[0, 1]])
    for cls in FAMILY:
        with pytest.raises(TypeError, match=r"IntentLabels.*read_trec\(qrels, run, intents=True\)"):
            cls().score(y, r)
    with pytest.raises(TypeError, match="intents=True"):
        evaluate(y, r, ["alpha_nDCG@10"])
    with pytest.raises(TypeError, match="from_rows"):
        IntentLabels.from_matrix([[1, 2]])


def test_from_rows_checks_its_input():
    with pytest.raises(TypeError, match="sequence of dicts"):
        IntentLabels.from_rows({"a": {0: 1}})
    with pytest.raises(TypeError, match=r"rows\[0\]\['a'\] must be a dict"):
        IntentLabels.from_rows([{"a": [0, 1]}])
    with pytest.raises(ValueError, match="non-negative integers"):
        IntentLabels.from_rows([{"a": {-1: 1}}])
    with pytest.raises(ValueError, match="finite number"):
        IntentLabels.from_rows([{"a": {0: math.nan}}])
    with pytest.raises(ValueError, match="n_items"):
        IntentLabels.from_rows([{"a": {5: 1}}], n_items=3)


# ---------------------------------------------------------------------------------------- #
# IntentLabels as labels: slicing, concatenation, pickling, judgments
# ---------------------------------------------------------------------------------------- #
ROWS = [{"a": {0: 1, 2: 2}, "b": {2: 1}}, {"x": {1: 1}}, {}, {"p": {3: 1, 4: 1}, "q": {4: 3}, "r": {0: 1}}]


def test_rows_slice_concatenate_and_pickle():
    y = IntentLabels.from_rows(ROWS)
    r = ranked([[2, 0, 4], [1], [3], [4, 0, 3]])
    metrics = [AlphaNDCG(3), NNRBP(), APIA(), NDCG(3)]
    full = evaluate(y, r, metrics).scores
    for key in (slice(1, 3), [3, 0], np.array([True, False, False, True]), slice(None, None, 2)):
        part = y[key]
        assert isinstance(part, IntentLabels)
        rows = np.arange(4)[key]
        close(evaluate(part, r[key], metrics).scores, full[rows])
        assert part.intents_to_list() == [y.intents_to_list()[i] for i in rows]
    joined = IntentLabels.concatenate([y[:2], y[2:]])
    assert joined == y
    assert pickle.loads(pickle.dumps(y)) == y
    assert y != IntentLabels.from_rows(ROWS[:1] + [{"x": {1: 2}}] + ROWS[2:])
    assert repr(y) == "IntentLabels(n_rows=4, n_items=5, n_intents=6, nnz=6)"
    judged = y.with_judged([[0, 2, 5], [1], [], [0, 3, 4]])
    assert isinstance(judged, IntentLabels) and judged.judged.indices_to_list()[0] == [0, 2, 5]
    close(evaluate(judged, r, metrics).scores, full)
    assert pickle.loads(pickle.dumps(judged)) == judged


def test_tied_rankings_are_refused_with_the_reason():
    y = IntentLabels.from_rows(ROWS[:1])
    r = Rankings.from_scores([[0.5, 0.5, 0.2]], ties="keep")
    with pytest.raises(ValueError, match="intent-aware diversity measures .* no tie-aware form"):
        AlphaNDCG(2).score(y, r, ties="expected")


# ---------------------------------------------------------------------------------------- #
# names, compare, command line
# ---------------------------------------------------------------------------------------- #
@pytest.mark.parametrize("name, metric", [
    ("alpha_nDCG(alpha=0.5)@20", AlphaNDCG(20)),
    ("alpha_nDCG@20", AlphaNDCG(20)),
    ("α_nDCG(alpha=0.25)@5", AlphaNDCG(5, alpha=0.25)),
    ("alpha_DCG@10", AlphaDCG(10)),
    ("ERR_IA@20", ERRIA(20)),
    ("nERR_IA@20", NERRIA(20)),
    ("P_IA@20", PrecisionIA(20)),
    ("P_IA(rel=2)@10", PrecisionIA(10, rel=2)),
    ("AP_IA", APIA()),
    ("MAP_IA", APIA()),
    ("StRecall@20", SubtopicRecall(20)),
    ("NRBP", NRBP()),
    ("nNRBP(alpha=0.3, beta=0.8)", NNRBP(0.3, 0.8)),
    ("alpha_ndcg@20[alpha=0.25]", AlphaNDCG(20, alpha=0.25)),
    ("err-ia@5", ERRIA(5)),
    ("strec@10[rel=2]", SubtopicRecall(10, rel=2)),
    ("map_ia", APIA()),
])
def test_names(name, metric):
    assert from_name(name) == metric
    assert from_name(metric.name) == metric


def test_bad_names():
    with pytest.raises(ValueError, match="alpha must be a number in"):
        from_name("alpha_nDCG(alpha=2)@10")
    with pytest.raises(ValueError, match="takes no cutoff"):
        from_name("NRBP@10")
    with pytest.raises(ValueError, match="no parameter 'beta'"):
        from_name("ERR_IA(beta=0.5)@10")


def test_compare_two_runs():
    from rankereval import compare
    from rankereval.io import read_trec

    a = read_trec(QRELS, RUN, intents=True)
    cmp = compare(None, {"a": a, "b": a}, ["alpha_nDCG@10", "ERR_IA@20"], baseline="a", nan_handling="drop")
    assert cmp.summary() is not None


def test_command_line_trec_output(capsys):
    from rankereval.cli import main
    from rankereval.io import read_trec

    code = main(["evaluate", QRELS, RUN, "-q", "-f", "trec", "--tie-break", "docid", "-m", "alpha_nDCG@20",
                 "ERR_IA@20", "P_IA@5", "StRecall@10", "ndcg_cut_10"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "read as the intent" in err
    lines = [line.split("\t") for line in out.splitlines()]
    data = read_trec(QRELS, RUN, intents=True, tie_break="docid")
    got = {(m.strip(), q): float(v) for m, q, v in lines}
    for name in ("alpha_nDCG@20", "ERR_IA@20", "P_IA@5", "StRecall@10"):
        scores = data.score(from_name(name))
        for q, s in zip(data.query_ids, scores):
            assert got[(name, str(q))] == pytest.approx(s, abs=1e-4)
        assert got[(name, "all")] == pytest.approx(scores.mean(), abs=1e-4)


def test_judged_only_ranks_the_judged_documents_alone():
    from rankereval.io import read_trec

    data = read_trec(QRELS, RUN, intents=True, tie_break="docid")
    judged = [set(row) for row in data.numeric_labels.judged.indices_to_list()]
    kept = ranked([[d for d in ranking if d in judged[i]] for i, ranking in enumerate(data.rankings.to_list())])
    for name in ("alpha_nDCG(judged_only=True)@10", "P_IA(judged_only=True)@5", "AP_IA(judged_only=True)"):
        metric = from_name(name)
        plain = from_name(name.replace("(judged_only=True)", ""))
        close(data.score(metric), plain.score(data.numeric_labels, kept))
