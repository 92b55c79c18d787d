"""Metrics over tied scores: ``Metric.score(..., ties=...)`` on rankings that keep their ties.

The reference enumerates the orders literally: every permutation of every tied group
(``itertools.permutations`` of each group, the product over the groups), each order scored
as a ranking without ties (the path :mod:`tests.test_metrics_reference` checks against the
formulas), then the mean (expected), max and min (optimistic and pessimistic; min and max
for the metrics where lower is better) over the orders, query by query.
"""
import itertools
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from helpers import all_metrics
from rankereval import NDCG, AP, BinaryLabels, NumericLabels, Rankings, ReciprocalRank
from rankereval.metrics._ties import refusal

METRICS = list(all_metrics(cutoffs=(1, 2, 4)).values())


def groups_of(ranking, tie_row):
    """The tied groups of one ranking, as lists of its item ids."""
    out, group = [], []
    for j, item in enumerate(ranking):
        group.append(item)
        if not (j < len(ranking) - 1 and tie_row[j]):
            out.append(group)
            group = []
    return out


def all_orders(ranking, tie_row):
    """Every ranking the tied groups allow: the product of the permutations of each group."""
    perms = [list(itertools.permutations(g)) for g in groups_of(ranking, tie_row)]
    return [[i for part in combo for i in part] for combo in itertools.product(*perms)]


def enumerated(metric, label_row, ranking, tie_row):
    """(mean, best, worst) of ``metric`` over every order of the ranking's tied groups."""
    orders = all_orders(ranking, tie_row)
    labels = label_row if label_row.n_rows == 1 else None
    values = metric.score(labels, Rankings.from_ranked_indices(orders))
    if metric.info.higher_is_better:
        return values.mean(), values.max(), values.min()
    return values.mean(), values.min(), values.max()


@st.composite
def tied_inputs(draw):
    """Few short rankings with small integer scores (so heavy ties) and graded labels."""
    n_rows = draw(st.integers(1, 3))
    n_items = draw(st.integers(1, 6))
    scores = draw(st.lists(st.lists(st.integers(0, 2), min_size=n_items, max_size=n_items),
                           min_size=n_rows, max_size=n_rows))
    grades = draw(st.lists(st.lists(st.integers(0, 3), min_size=n_items + 1, max_size=n_items + 1),
                           min_size=n_rows, max_size=n_rows))
    k = draw(st.sampled_from([None, 1, 2, 3]))
    return np.array(scores, dtype=np.float64), np.array(grades, dtype=np.float64), k


@settings(max_examples=40, deadline=None)
@given(tied_inputs())
def test_every_metric_equals_the_enumeration_of_tied_orders(inputs):
    scores, grades, k = inputs
    y_pred = Rankings.from_scores(scores, k=k, ties="keep")
    numeric = NumericLabels.from_matrix(grades)
    binary = BinaryLabels.from_matrix(grades >= 2)
    rankings, tie_rows = y_pred.to_list(), y_pred.ties.tolist()
    for metric in METRICS:
        y_true = numeric if metric.info.labels == "graded" else binary
        if refusal(metric) is not None:
            if y_pred.has_ties:
                with pytest.raises(ValueError, match="ties="):
                    metric.score(y_true, y_pred, ties="expected")
            continue
        got = {mode: metric.score(y_true, y_pred, ties=mode) for mode in ("expected", "optimistic", "pessimistic")}
        for i, (ranking, tie_row) in enumerate(zip(rankings, tie_rows)):
            mean, best, worst = enumerated(metric, y_true[i:i + 1], ranking, tie_row)
            for mode, want in (("expected", mean), ("optimistic", best), ("pessimistic", worst)):
                assert np.isclose(got[mode][i], want, rtol=1e-12, atol=1e-12, equal_nan=True), \
                    (metric.name, mode, i, ranking, tie_row, got[mode][i], want)


def test_the_cutoff_keeps_a_crossing_group_whole():
    scores = np.array([[3, 1, 3, 3, 0, 2], [1, 1, 0, 0, 0, 0], [5, 4, 3, 2, 1, 0]])
    y_pred = Rankings.from_scores(scores, k=2, ties="keep")
    assert y_pred.to_list() == [[0, 2, 3], [0, 1], [0, 1]]
    assert y_pred.ties.tolist() == [[True, True, False], [True, False, False], [False, False, False]]
    # ties='break' (the default) is today's order, cut at k, nothing recorded
    plain = Rankings.from_scores(scores, k=2)
    assert plain.to_list() == [[0, 2], [0, 1], [0, 1]] and plain.ties is None
    # a whole row of equal scores (a constant scorer) is one group
    const = Rankings.from_scores(np.zeros((2, 50), dtype=np.float32), k=3, ties="keep")
    assert const.lengths.tolist() == [50, 50] and const.ties[:, :49].all()


@pytest.mark.parametrize("make", [
    lambda a: a,
    lambda a: a.astype(np.float16),
    lambda a: a.astype(np.int32),
    lambda a: a.tolist(),
    lambda a: __import__("scipy.sparse", fromlist=["csr_matrix"]).csr_matrix(a),
])
def test_every_input_form_records_the_same_ties(make):
    scores = np.array([[3, 1, 3, 3, 0, 2], [1, 1, 0, 2, 0, 2]], dtype=np.float64)
    dense = Rankings.from_scores(scores, k=2, ties="keep")
    other = Rankings.from_scores(make(scores), k=2, ties="keep")
    if hasattr(make(scores), "nnz"):  # sparse: only the stored (nonzero) scores are candidates
        assert other.to_list() == [[0, 2, 3], [3, 5]]
        assert other.ties.tolist() == [[True, True, False], [True, False, False]]
    else:
        assert other == dense


def test_ties_survive_slicing_concatenation_and_pickling():
    y_pred = Rankings.from_scores([[1, 1, 0], [2, 0, 0], [0, 0, 0]], ties="keep")
    assert pickle.loads(pickle.dumps(y_pred)) == y_pred
    assert y_pred[1:].ties.tolist() == y_pred.ties[1:].tolist()
    assert y_pred[[2, 0]].ties.tolist() == [y_pred.ties[2].tolist(), y_pred.ties[0].tolist()]
    both = Rankings.concatenate([y_pred, Rankings.from_ranked_indices([[4, 3, 2, 1]])])
    assert both.ties[:3, :3].tolist() == y_pred.ties.tolist() and not both.ties[3].any()
    # the same order without recorded ties is another object: it scores differently
    assert Rankings.from_ranked_indices(y_pred.to_list()) != y_pred
    with pytest.raises(ValueError, match="ties must be 'break'"):
        Rankings.from_scores([[1, 1]], ties="expected")


def test_without_recorded_ties_every_mode_is_the_recorded_order():
    y_true = BinaryLabels.from_positive_indices([[1], [0, 2]])
    y_pred = Rankings.from_scores([[0.5, 0.5, 0.1], [0.3, 0.2, 0.1]])
    for metric in (NDCG(2), AP(), ReciprocalRank(1)):
        plain = metric.score(y_true, y_pred)
        for mode in ("expected", "optimistic", "pessimistic"):
            assert np.array_equal(metric.score(y_true, y_pred, ties=mode), plain)
    with pytest.raises(ValueError, match="ties must be None"):
        AP().score(y_true, y_pred, ties="average")


def test_ndcg_expected_equals_scikit_learn_per_query():
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(7)
    grades = rng.integers(0, 4, size=(40, 12)).astype(np.float64)
    grades[:, 0] = 1.0  # every query has a relevant item (else rankereval gives NaN)
    scores = rng.integers(0, 3, size=(40, 12)).astype(np.float64)
    y_true = NumericLabels.from_matrix(grades)
    y_pred = Rankings.from_scores(scores, ties="keep")
    for k in (1, 3, 5, None):
        ours = NDCG(k, log_base="2").score(y_true, y_pred, ties="expected")
        theirs = [sklearn_metrics.ndcg_score(grades[i:i + 1], scores[i:i + 1], k=k) for i in range(40)]
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)


def test_a_constant_scorer_gets_the_value_of_a_random_order():
    rng = np.random.default_rng(3)
    n_items = 20
    y_true = BinaryLabels.from_positive_indices([[0, 1], [0], [0, 1, 2]])  # the best ids first
    y_pred = Rankings.from_scores(np.zeros((3, n_items)), k=10, ties="keep")
    # the id order puts the relevant items on top: a perfect score for a useless model
    assert np.allclose(ReciprocalRank(10).score(y_true, y_pred), 1.0)
    expected = ReciprocalRank(10).score(y_true, y_pred, ties="expected")
    # against random orders (a Monte Carlo estimate with a generous tolerance)
    draws = [ReciprocalRank(10).score(y_true, Rankings.from_ranked_indices(
        [rng.permutation(n_items)[:10] for _ in range(3)])) for _ in range(4000)]
    np.testing.assert_allclose(expected, np.mean(draws, axis=0), atol=0.02)
    assert (expected < 0.5).all()


def _tied_example():
    y_true = BinaryLabels.from_positive_indices([[0, 1], [2], [5]])
    y_pred = Rankings.from_scores(np.array([[1, 1, 1, 0, 0, 0], [2, 2, 1, 1, 0, 0], [3, 2, 1, 0, 0, 0.]]),
                                  ties="keep")
    return y_true, y_pred


def test_evaluate_and_mean_take_ties_and_report_the_range():
    import warnings

    from rankereval import evaluate
    from rankereval.exceptions import TiedScoresWarning

    y_true, y_pred = _tied_example()
    names = ["ndcg@3", "p@2", "mrr@10", "err@3"]
    with pytest.warns(TiedScoresWarning, match="ndcg@3.*\n.*p@2.*\n.*mrr@10"):
        plain = evaluate(y_true, y_pred, names)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TiedScoresWarning)
        ev = evaluate(y_true, y_pred, names[:3], ties="expected")
    from rankereval.metrics import from_name
    for name in names[:3]:
        m = from_name(name)
        np.testing.assert_array_equal(ev[name], m.score(y_true, y_pred, ties="expected"))
        assert ev.mean(name) == m.mean(y_true, y_pred, ties="expected")
        lo, hi = ev.tie_report.ranges[name]
        assert lo == m.mean(y_true, y_pred, ties="pessimistic") and hi == m.mean(y_true, y_pred, ties="optimistic")
        assert lo <= ev.mean(name) <= hi
        assert plain.mean(name) == m.mean(y_true, y_pred)  # ties=None: the recorded order
    report = plain.tie_report
    assert report.mode is None and report.positions == 18 and report.tied_positions == 15
    assert report.tied_rankings == {"ndcg@3": 2, "p@2": 2, "mrr@10": 3, "err@3": 2}
    assert report.ranges["err@3"] == (None, None) and "cascade" in report.refused["err@3"]
    text = repr(ev)
    assert "15 of 18 ranked positions tied, scored with ties='expected'" in text
    assert "[pessimistic, optimistic]" in text and "[0.1667, 0.3333]" in text and "refused" in repr(plain)
    assert "[0.1667, 0.3333]" in ev._repr_html_()
    assert ev.to_dict()["metrics"]["p@2"]["ties"] == {"tied_rankings": 2, "pessimistic": pytest.approx(1 / 6),
                                                      "optimistic": pytest.approx(1 / 3)}
    pytest.importorskip("pandas")
    summary = ev.summary()
    assert list(summary.columns[-3:]) == ["tied_rankings", "pessimistic", "optimistic"]
    assert summary.loc["p@2", "optimistic"] == pytest.approx(1 / 3)
    # an evaluation of rankings without recorded ties has no report
    assert evaluate(y_true, Rankings.from_ranked_indices(y_pred.to_list()), ["p@2"]).tie_report is None
    with pytest.raises(ValueError, match="err@3: its cascade"):
        evaluate(y_true, y_pred, ["err@3"], ties="expected")


def test_adjusted_metrics_follow_their_metric():
    from rankereval.metrics import from_name

    grades = NumericLabels.from_matrix([[2, 1, 0, 2, 0, 1]])
    y_pred = Rankings.from_scores([[1, 1, 1, 1, 0, 0]], ties="keep")
    got = from_name("p@2[rel=2]").score(grades, y_pred, ties="expected")
    want = from_name("p@2").score(BinaryLabels.from_matrix([[1, 0, 0, 1, 0, 0]]), y_pred, ties="expected")
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(got, [0.5])  # 2 of the 4 tied items are relevant
    with pytest.raises(ValueError, match="splits the tied groups"):
        from_name("p@2[judged_only]").score(grades.with_judged([[0, 1, 3, 5]]), y_pred, ties="expected")


def test_readers_and_the_command_line_keep_ties(tmp_path):
    pytest.importorskip("pandas")
    from rankereval.cli import main
    from rankereval.io import from_dicts, from_records, read_trec

    qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}, "q2": {"d3": 1}}
    run = {"q1": {"d2": 0.9, "d1": 0.9, "d3": 0.4, "d4": 0.4}, "q2": {"d3": 0.7, "d4": 0.7, "d5": 0.1}}
    data = from_dicts(qrels, run, ties="keep")
    assert data.rankings.to_list() == from_dicts(qrels, run).rankings.to_list()  # tie_break's order
    assert data.rankings.ties.tolist() == [[True, False, True, False], [True, False, False, False]]
    assert from_dicts(qrels, run).rankings.ties is None
    np.testing.assert_allclose(data.score(NDCG(1), ties="expected"), [0.5, 0.5])  # one of two tied docs
    records = ([(q, d, v) for q, docs in qrels.items() for d, v in docs.items()],
               [(q, d, v) for q, docs in run.items() for d, v in docs.items()])
    assert from_records(*records, ties="keep").rankings == data.rankings
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {v}\n" for q, docs in qrels.items() for d, v in docs.items()))
    (tmp_path / "run").write_text("".join(f"{q} Q0 {d} 0 {v} r\n" for q, docs in run.items() for d, v in docs.items()))
    assert read_trec(tmp_path / "qrels", tmp_path / "run", ties="keep").rankings == data.rankings
    short = read_trec(tmp_path / "qrels", tmp_path / "run", ties="keep", depth=1).rankings
    assert short.lengths.tolist() == [1, 1] and not short.ties.any()  # a group crossing the depth is cut
    with pytest.raises(ValueError, match="ties must be 'break'"):
        from_dicts(qrels, run, ties="expected")

    import io
    out, err = io.StringIO(), io.StringIO()
    from contextlib import redirect_stderr, redirect_stdout
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["evaluate", str(tmp_path / "qrels"), str(tmp_path / "run"), "-m", "ndcg@1", "-f", "json",
                     "--ties", "expected"])
    assert code == 0, err.getvalue()
    assert "6 of 7 ranked documents share their score" in err.getvalue()
    assert '"mean": 0.5' in out.getvalue()


def test_compare_and_the_accumulator_score_over_tied_orders():
    from rankereval import Accumulator, compare, evaluate
    from rankereval.exceptions import TiedScoresWarning

    rng = np.random.default_rng(5)
    scores_a = rng.integers(0, 3, size=(30, 8)).astype(np.float64)
    scores_b = rng.integers(0, 2, size=(30, 8)).astype(np.float64)
    grades = rng.integers(0, 3, size=(30, 8))
    grades[:, 0] = 2
    y_true = BinaryLabels.from_matrix(grades >= 2)
    runs = {"a": Rankings.from_scores(scores_a, ties="keep"), "b": Rankings.from_scores(scores_b, ties="keep")}
    cmp = compare(y_true, runs, ["ndcg@3", "mrr@5"], ties="expected", random_state=0)
    for r, run in enumerate(runs.values()):
        # the test reads the expected per-query values, not those of the recorded order
        want = evaluate(y_true, run, ["ndcg@3", "mrr@5"], ties="expected").scores
        np.testing.assert_array_equal(cmp.scores[:, :, r], want)
        with pytest.warns(TiedScoresWarning):
            assert not np.array_equal(cmp.scores[:, :, r], evaluate(y_true, run, ["ndcg@3", "mrr@5"]).scores)
    # the accumulator: batches of scores, ranked with ties kept (k=3 keeps crossing groups whole)
    acc = Accumulator(["ndcg@3", "p@3"], ties="expected")
    for lo in range(0, 30, 10):
        acc.update(y_true[lo:lo + 10], scores_a[lo:lo + 10])
    one = evaluate(y_true, Rankings.from_scores(scores_a, k=3, ties="keep"), ["ndcg@3", "p@3"], ties="expected")
    got = acc.compute()
    for metric in ("ndcg@3", "p@3"):
        assert got.mean(metric) == pytest.approx(one.mean(metric), rel=1e-12)
        plain = evaluate(y_true, Rankings.from_scores(scores_a, k=3), [metric])  # no ties recorded
        assert got.mean(metric) != pytest.approx(plain.mean(metric), rel=1e-6)


def test_a_report_without_ties_costs_nothing_and_says_so():
    from rankereval import evaluate

    y_true = BinaryLabels.from_positive_indices([[0], [1]])
    y_pred = Rankings.from_scores([[0.3, 0.2, 0.1], [0.1, 0.2, 0.3]], ties="keep")
    assert not y_pred.has_ties and y_pred.ties is not None
    ev = evaluate(y_true, y_pred, ["p@1", "mrr"])
    assert ev.tie_report.tied_positions == 0 and ev.tie_report.tied_rankings == {"p@1": 0, "mrr": 0}
    assert ev.tie_report.ranges == {"p@1": (0.5, 0.5), "mrr": (ev.mean("mrr"), ev.mean("mrr"))}


def test_filters_and_groups_keep_ties():
    scores = np.array([[3, 3, 3, 1, 3], [2, 2, 0, 2, 1]], dtype=np.float32)
    # item 0 excluded from row 0: the group at the cutoff is items 1, 2, 4 (kept whole)
    y_pred = Rankings.from_scores(scores, k=1, invalid_items=[[0], []], ties="keep")
    assert y_pred.to_list() == [[1, 2, 4], [0, 1, 3]]
    assert y_pred.ties.tolist() == [[True, True, False], [True, True, False]]
    kept = Rankings.from_scores(scores, k=2, valid_items=[0, 3, 4], ties="keep")
    assert kept.to_list() == [[0, 4], [0, 3]] and kept.ties.tolist() == [[True, False], [True, False]]
    groups = Rankings.from_groups([0.2, 0.9, 0.2, 0.5, 0.5], qid=[7, 7, 7, 3, 3], ties="keep", k=1)
    assert groups.to_list() == [[0, 1], [1]] and groups.ties.tolist() == [[True, False], [False, False]]
