"""trec_eval's measures (RPrecision, the counts, InterpolatedPrecision, GMAP, Bpref,
AP(denominator='relevant')), Judged, RBP and ERR: cross-checks against independent
implementations, hand-derived cases, and the judgments the labels carry for them.

* pytrec_eval (trec_eval's C code, package ``pytrec-eval-terrier``): ``Rprec``,
  ``num_rel``, ``num_ret``, ``num_rel_ret``, ``iprec_at_recall_x``, ``gm_map``, ``bpref``,
  ``map_cut_k``;
* ir_measures: ``Judged@k`` (its own Python code), ``ERR@k`` (gdeval, needs perl) and binary
  ``RBP(rel=1)`` (cwl_eval, when installed).

Every measure is also checked against its literal reference in ``tests/reference.py`` by
``test_metrics_reference.py`` (all options, all lookups).
"""
import math
import pickle
import shutil
import sys
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import reference as ref  # noqa: E402

import rankereval  # noqa: E402
from rankereval import (  # noqa: E402
    AP,
    ERR,
    GMAP,
    RBP,
    BinaryLabels,
    Bpref,
    InterpolatedPrecision,
    Judged,
    NumericLabels,
    NumRelevant,
    NumRelevantRetrieved,
    NumRetrieved,
    RPrecision,
    evaluate,
)
from rankereval.metrics import from_name  # noqa: E402
from helpers import ranked, trec_eval, trec_queries

RTOL = ATOL = 1e-12
LEVELS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]


def _labels(qrels, level=1):
    """Binary labels (grade >= level) with every judged item (grade >= 0) as judgments."""
    y = BinaryLabels.from_positive_indices([sorted(i for i, g in rels.items() if g >= level) for rels in qrels])
    return y.with_judged([sorted(rels) for rels in qrels])


def _iprec_cut_trec9(level, n_rel):
    """trec_eval <= 9 (pytrec_eval) turns a recall level into relevant items as (long)(l R + 0.9)."""
    return int(level * n_rel + 0.9)


@given(data=trec_queries())
def test_against_trec_eval(data):
    qrels, rankings = data
    note((qrels, rankings))
    results = trec_eval(qrels, rankings, ["Rprec", "num_rel", "num_ret", "num_rel_ret", "iprec_at_recall",
                                           "gm_map", "bpref", "map_cut.1,2,3,5,10"])
    y, r = _labels(qrels), ranked(rankings)
    n_rel = np.array([sum(1 for g in rels.values() if g >= 1) for rels in qrels])
    # pytrec_eval evaluates the queries that have judgments and a ranking; trec_eval scores a
    # query without relevant items 0 where rankereval says NaN: those are checked apart
    there = [q for q in range(len(qrels)) if f"q{q}" in results]
    defined = [q for q in there if n_rel[q] > 0]

    def check(ours, measure, queries):
        assert np.isnan(ours[n_rel == 0]).all() or measure.startswith("num_")
        if queries:
            theirs = np.array([results[f"q{q}"][measure] for q in queries])
            np.testing.assert_allclose(ours[queries], theirs, rtol=RTOL, atol=ATOL, err_msg=measure)

    check(RPrecision().score(y, r), "Rprec", defined)
    check(Bpref().score(y, r), "bpref", defined)
    # the counts are defined everywhere, as in trec_eval
    check(NumRelevant().score(y, r), "num_rel", there)
    check(NumRetrieved().score(y, r), "num_ret", there)
    check(NumRelevantRetrieved().score(y, r), "num_rel_ret", there)
    for k in (1, 2, 3, 5, 10):
        check(AP(k, denominator="relevant").score(y, r), f"map_cut_{k}", defined)
    for level in LEVELS:
        ours = InterpolatedPrecision(level).score(y, r)
        # trec_eval 10 rounds the level with lround, pytrec_eval (trec_eval 9) with +0.9:
        # compare where both give the same number of relevant items (c and 1 are alike)
        same = [q for q in defined if max(_iprec_cut_trec9(level, n_rel[q]), 1)
                == max(ref.round_half_away(level * n_rel[q]), 1)]
        check(ours, f"iprec_at_recall_{level:.2f}", same)
    # gm_map: pytrec_eval reports log(max(AP, 1e-5)) per query; trec_eval's summary is the
    # geometric mean over every evaluated query, those without relevant items as AP 0
    gm = GMAP().score(y, r)
    check(np.log(np.maximum(gm, 1e-5)), "gm_map", defined)
    if there:
        summary = math.exp(np.mean([results[f"q{q}"]["gm_map"] for q in there]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = GMAP().mean(y[np.array(there)], r[np.array(there)], nan_handling="zerofill")
        assert ours == pytest.approx(summary, rel=1e-12)


def test_iprec_rounds_as_trec_eval_10():
    """R = 7, relevant at ranks 1 and 3. Level 0.2: lround(1.4) = 1 relevant item -> the best
    precision from rank 1 on, 1.0 (trec_eval 9 and pytrec_eval: floor(2.3) = 2 -> 2/3).
    Level 0.5: lround(3.5) = 4 > 2 found -> 0."""
    y = BinaryLabels.from_positive_indices([[1, 2, 3, 4, 5, 6, 7]])
    r = ranked([[1, 9, 3]])
    assert InterpolatedPrecision(0.2).score(y, r)[0] == 1.0
    assert InterpolatedPrecision(0.5).score(y, r)[0] == 0.0
    # level 0.3: lround(2.1) = 2 -> best precision from rank 3 on: 2/3
    assert InterpolatedPrecision(0.3).score(y, r)[0] == pytest.approx(2 / 3, rel=1e-15)


# --------------------------------------------------------------------------- #
# ir_measures
# --------------------------------------------------------------------------- #
def _ir_measures(qrels, rankings, measure):
    ir_measures = pytest.importorskip("ir_measures")
    q = [ir_measures.Qrel(f"{i}", f"d{d:02d}", int(g)) for i, rels in enumerate(qrels) for d, g in rels.items()]
    run = [ir_measures.ScoredDoc(f"{i}", f"d{d:02d}", float(len(r) - rank))
           for i, r in enumerate(rankings) for rank, d in enumerate(r)]
    return {int(m.query_id): float(m.value) for m in ir_measures.iter_calc([measure], q, run)}


@given(data=trec_queries(), k=st.sampled_from([1, 3, 5, 20]))
def test_judged_against_ir_measures(data, k):
    qrels, rankings = data
    ir_measures = pytest.importorskip("ir_measures")
    theirs = _ir_measures(qrels, rankings, ir_measures.Judged @ k)
    ours = Judged(k).score(_labels(qrels), ranked(rankings))
    # a query without judgments, or with an empty ranking (ir_measures fills in 0 for a
    # query it has no ranking of): NaN here
    for q in range(len(qrels)):
        if not qrels[q] or not rankings[q]:
            assert np.isnan(ours[q])
        else:
            assert ours[q] == pytest.approx(theirs[q], rel=RTOL, abs=ATOL), q


@given(data=trec_queries(), k=st.sampled_from([1, 3, 5, 20]))
def test_err_against_ir_measures_gdeval(data, k):
    """gdeval prints ERR with 5 decimals; it leaves out queries without a relevant item."""
    if shutil.which("perl") is None:
        pytest.skip("gdeval needs perl")
    qrels, rankings = data
    ir_measures = pytest.importorskip("ir_measures")
    theirs = _ir_measures(qrels, rankings, ir_measures.ERR @ k)
    grades = NumericLabels.from_matrix(
        [[rels.get(i, 0) for i in range(15)] for rels in qrels])
    ours = ERR(k).score(grades, ranked(rankings))
    for q in range(len(qrels)):
        if not any(g > 0 for g in qrels[q].values()):
            assert np.isnan(ours[q])
        elif rankings[q]:
            assert ours[q] == pytest.approx(theirs[q], abs=5.1e-6), q


@given(data=trec_queries(), p=st.sampled_from([0.5, 0.8, 0.95]))
def test_binary_rbp_against_ir_measures_cwl_eval(data, p):
    """ir_measures' RBP(rel=1) runs cwl_eval (not in the test extra: it has no wheel)."""
    pytest.importorskip("cwl")
    qrels, rankings = data
    ir_measures = pytest.importorskip("ir_measures")
    theirs = _ir_measures(qrels, rankings, ir_measures.RBP(p=p, rel=1))
    ours = RBP(p=p).score(_labels(qrels), ranked(rankings))
    for q, v in theirs.items():
        if not np.isnan(ours[q]):  # cwl_eval reports 0 without relevant items
            assert ours[q] == pytest.approx(v, rel=1e-9, abs=1e-12), q


# --------------------------------------------------------------------------- #
# hand-derived cases (checked against the reference too)
# --------------------------------------------------------------------------- #
def _check(metric, ref_fn, label_rows, rankings, expected, judged_rows=None, graded=False, **params):
    got_ref = ref.score_rows(ref_fn, label_rows, rankings, judged_rows=judged_rows, **params)
    np.testing.assert_allclose(got_ref, expected, rtol=1e-14, atol=1e-14, equal_nan=True)
    if graded:
        width = max(max(r, default=0) for r in label_rows) + 1
        y = NumericLabels.from_matrix([[r.get(i, 0) for i in range(width)] for r in label_rows])
    else:
        y = BinaryLabels.from_positive_indices([sorted(r) for r in label_rows])
    if judged_rows is not None:
        y = y.with_judged(judged_rows)
    np.testing.assert_allclose(metric.score(y, ranked(rankings)), expected, rtol=1e-14, atol=1e-14,
                               equal_nan=True)


def B(*items):
    return {i: 1 for i in items}


def test_hand_cases():
    # R-precision: R = 3, top 3 of [1, 9, 2, 3] holds 1, 2 -> 2/3; R = 2, ranking [5] -> 0/2
    _check(RPrecision(), ref.r_precision, [B(1, 2, 3), B(4, 6), B()], [[1, 9, 2, 3], [5], [1]], [2 / 3, 0, math.nan])
    # counts; the row without relevant items is defined
    _check(NumRelevantRetrieved(2), ref.num_relevant_retrieved, [B(1, 2, 3), B()], [[1, 9, 2], [1]], [1, 0], k=2)
    _check(NumRetrieved(2), ref.num_retrieved, [B(1), B()], [[1, 9, 2], []], [2, 0], k=2)
    # AP over R: relevant at ranks 1, 3 of 4 relevant, k = 3: (1 + 2/3) / 4 (min: / 3)
    _check(AP(3, "relevant"), ref.average_precision, [B(1, 2, 3, 4)], [[1, 9, 2]], [(5 / 3) / 4], k=3,
           denominator="relevant")
    # bpref: R = 2, judged non-relevant 7, 8 (N = 2), 5 unjudged; ranking 7, 5, 1, 8, 2:
    # 1 has one judged non-relevant above -> 1 - 1/2; 2 has two -> 1 - 2/2 = 0; sum / 2
    _check(Bpref(), ref.bpref, [B(1, 2)], [[7, 5, 1, 8, 2]], [0.25], judged_rows=[[1, 2, 7, 8]])
    # N = 0: every retrieved relevant item counts 1 (1 of R = 2 retrieved)
    _check(Bpref(), ref.bpref, [B(1, 2)], [[5, 1]], [0.5], judged_rows=[[1, 2]])
    # Judged@3: 7 and 1 of [7, 5, 1] judged -> 2/3; the whole ranking [5]: 0; empty: NaN
    _check(Judged(3), ref.judged_at, [B(1, 2), B(), B(3)], [[7, 5, 1, 8], [5], []], [2 / 3, 0, math.nan],
           judged_rows=[[1, 2, 7, 8], [9], [3]], k=3)
    # RBP p = 0.5, graded 2 at rank 1, 1 at rank 3: 0.5 * (2 + 1 * 0.25)
    _check(RBP(p=0.5), ref.rbp, [{0: 2, 2: 1}], [[0, 1, 2]], [1.125], graded=True, p=0.5)
    # residual, top 2 of [0, 1, 2] with 1 unjudged: the weight of rank 2, 0.25, plus p^2
    _check(RBP(2, p=0.5, residual=True), ref.rbp, [B(0, 2)], [[0, 1, 2]], [0.5], judged_rows=[[0, 2]],
           p=0.5, k=2, residual=True)
    # ERR, g_max = 4: rank 1 grade 2 -> 3/16; rank 3 grade 1 -> (1/16) (13/16) / 3
    _check(ERR(), ref.err, [{0: 2, 2: 1}], [[0, 1, 2]], [3 / 16 + 13 / 768], graded=True)
    # binary labels: every relevant item has grade 1, R = 1/16
    _check(ERR(max_grade=1), ref.err, [B(0, 2)], [[0, 1, 2]], [0.5 + 0.25 / 3], max_grade=1.0)


def test_err_refuses_labels_above_max_grade():
    y = NumericLabels.from_matrix([[5, 0, 1]])
    with pytest.raises(ValueError, match="label of 5 exceeds max_grade=4"):
        ERR().score(y, ranked([[0]]))
    with pytest.raises(ValueError, match=r"max_grade must be a number in \(0, inf\]"):
        ERR(max_grade=0)


# --------------------------------------------------------------------------- #
# GMAP: a geometric mean
# --------------------------------------------------------------------------- #
def test_gmap_mean_bootstrap_evaluate_and_compare():
    y = BinaryLabels.from_positive_indices([[0], [1], [2], []])
    r = ranked([[0], [2, 3, 1], [5], [0]])
    ap = AP().score(y, r)
    np.testing.assert_array_equal(GMAP().score(y, r), ap)  # per ranking: AP
    # AP = 1, 1/3, 0 (floored at 1e-5), NaN (zerofill: 0 -> 1e-5)
    want = (1 * (1 / 3) * 1e-5 * 1e-5) ** 0.25
    assert GMAP().mean(y, r, nan_handling="zerofill") == pytest.approx(want, rel=1e-12)
    assert GMAP().mean(y, r, nan_handling="drop") == pytest.approx((1 / 3 * 1e-5) ** (1 / 3), rel=1e-12)
    res = GMAP().bootstrap(y, r, nan_handling="drop", random_state=0, n_resamples=200)
    assert res.mean == pytest.approx((1 / 3 * 1e-5) ** (1 / 3), rel=1e-12)
    low, high = res.confidence_interval
    assert 1e-5 <= low <= res.mean <= high <= 1
    assert res.bootstrap_distribution.min() >= 1e-5 - 1e-20
    ev = evaluate(y, r, [GMAP(), AP()], nan_handling="zerofill")
    assert ev.means["gmap"] == pytest.approx(want, rel=1e-12)
    assert ev.means["ap"] == pytest.approx((1 + 1 / 3) / 4, rel=1e-12)
    # the Poisson bootstrap sums the floored logs (the partial sums rankereval.dask merges)
    ev = evaluate(y, r, [GMAP()], nan_handling="zerofill", conf_interval=True, resampling="poisson",
                  random_state=0, n_resamples=200)
    low, high = ev.conf_intervals["gmap"]
    assert ev.means["gmap"] == pytest.approx(want, rel=1e-12) and 1e-5 - 1e-20 <= low <= high <= 1
    cmp = rankereval.compare(y, {"a": r, "b": ranked([[0], [1], [5], [0]])}, ["gmap"], baseline="b",
                             nan_handling="zerofill")
    row = cmp.summary().iloc[0]
    assert row["mean"] == pytest.approx(want, rel=1e-12)
    # on the log scale: the mean log ratio of the two runs' floored APs
    assert row["diff"] == pytest.approx(np.mean(np.log(np.maximum([1, 1 / 3, 0, 0], 1e-5))
                                                - np.log(np.maximum([1, 1, 0, 0], 1e-5))), rel=1e-12)


# --------------------------------------------------------------------------- #
# names
# --------------------------------------------------------------------------- #
@pytest.mark.parametrize("text, expected", [
    ("iprec@0.1", InterpolatedPrecision(0.1)), ("iprec@1", InterpolatedPrecision(1.0)),
    ("rbp", RBP()), ("rbp[p=0.9]", RBP(p=0.9)), ("rbp@10[p=0.5,residual]", RBP(10, p=0.5, residual=True)),
    ("ap@100[relevant]", AP(100, "relevant")), ("map@10[denominator=relevant]", AP(10, "relevant")),
    ("err@20", ERR(20)), ("err@5[max_grade=3]", ERR(5, 3.0)), ("gm_map", GMAP()), ("Rprec", RPrecision()),
    ("num_rel", NumRelevant()), ("num_ret", NumRetrieved()), ("num_rel_ret@5", NumRelevantRetrieved(5)),
    ("bpref", Bpref()), ("judged@10", Judged(10)),
])
def test_names(text, expected):
    assert from_name(text) == expected
    assert from_name(expected.name) == expected


@pytest.mark.parametrize("text, match", [
    ("iprec", r"needs its recall_level after @, e.g. iprec@0.0"),
    ("iprec@x", "recall_level must be a number"), ("iprec@1.5", r"recall_level must be a number in \[0, 1\]"),
    ("rbp[p=1]", r"p must be a number in \(0, 1\)"), ("rbp[p=nan]", "p must be a finite number"),
    ("iprec@0.1[recall_level=0.2]", "no option 'recall_level'"), ("bpref@3", "takes no cutoff"),
])
def test_name_errors(text, match):
    with pytest.raises(ValueError, match=match):
        from_name(text)


# --------------------------------------------------------------------------- #
# the judgments the labels carry
# --------------------------------------------------------------------------- #
def test_judged_labels_keep_the_invariants():
    y = BinaryLabels.from_positive_indices([[0, 5], [1], []])
    j = y.with_judged([[0, 3, 5], [1, 2], [7]])
    assert j.judged.indices_to_list() == [[0, 3, 5], [1, 2], [7]]
    assert j.n_items == 8 and y.judged is None
    assert j != y and j == y.with_judged([[0, 3, 5], [1, 2], [7]]) and j != y.with_judged(y)
    assert repr(j) == "BinaryLabels(n_rows=3, n_items=8, nnz=3, judged=6)"
    assert pickle.loads(pickle.dumps(j)) == j
    # labels without judgments pickle as before (five arguments, as 0.3.0 wrote them)
    assert len(y.__reduce__()[1]) == 5
    assert j[1:].judged.indices_to_list() == [[1, 2], [7]]
    assert j[[2, 0]].judged.indices_to_list() == [[7], [0, 3, 5]]
    both = BinaryLabels.concatenate([j, j[:1]])
    assert both.judged.indices_to_list() == [[0, 3, 5], [1, 2], [7], [0, 3, 5]]
    with pytest.raises(ValueError, match=r"labels\[1\] has no judgments but labels\[0\] has"):
        BinaryLabels.concatenate([j, y])
    with pytest.raises(ValueError, match="item 5 of label row 0 is relevant but not judged"):
        y.with_judged([[0], [1], []])
    with pytest.raises(ValueError, match="judged has 1 rows but the labels have 3"):
        y.with_judged([[0, 5]])
    # judged = the labels' own items (checked by equality, not by sparse algebra), and the
    # same ids with one item more or less than the labels still go through the full check
    assert y.with_judged(y).judged.indices_to_list() == [[0, 5], [1], []]
    assert y.with_judged([[0, 5], [1], []]) == y.with_judged(y)
    with pytest.raises(ValueError, match="item 1 of label row 1 is relevant but not judged"):
        y.with_judged([[0, 5], [2], []])
    assert y.with_judged([[0, 5], [1], [3]]).judged.indices_to_list() == [[0, 5], [1], [3]]
    # numeric labels, and every other metric ignores the judgments
    g = NumericLabels.from_matrix([[2, 0, 1]])
    gj = g.with_judged([[0, 1, 2]])
    r = ranked([[1, 0, 2]])
    np.testing.assert_array_equal(rankereval.NDCG(2).score(gj, r), rankereval.NDCG(2).score(g, r))


def test_evaluate_keeps_the_judgments_when_it_thresholds():
    g = NumericLabels.from_matrix([[2, 0, 1, 0]]).with_judged([[0, 1, 2]])
    r = ranked([[1, 2, 0, 3]])
    ev = evaluate(g, r, ["bpref", "judged@4"], relevance_level=2)
    # relevant: 0 only; judged non-relevant 1, 2 above it: 1 - min(2, 1) / min(2, 1) = 0
    assert ev.scores.tolist() == [[0.0, 0.75]]


def test_read_trec_fills_the_judgments(tmp_path):
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 2\n1 0 b 0\n1 0 c -1\n2 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 b 1 3.0 r\n1 Q0 c 2 2.0 r\n1 Q0 a 3 1.0 r\n2 Q0 d 1 1.0 r\n")
    data = rankereval.io.read_trec(str(qrels), str(run))
    doc = list(data.doc_ids)
    # query 1: a (relevant) and b (grade 0) judged, c (grade -1, trec_eval: not judged) not
    assert [[doc[i] for i in row] for row in data.binary_labels.judged.indices_to_list()] == [["a", "b"], ["a"]]
    assert data.numeric_labels.judged == data.binary_labels.judged
    # bpref of query 1: a has b (judged, not relevant) above it: 1 - 1/1 = 0; query 2: 0 found
    np.testing.assert_array_equal(data.score(Bpref()), [0.0, 0.0])
    # Judged counts every qrels line, c's too (ir_measures' Judged): 3/3; query 2: d unjudged
    np.testing.assert_allclose(data.score(Judged(3)), [1.0, 0.0])
