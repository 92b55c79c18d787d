"""Every public entry refuses None, object arrays and values of the wrong kind with a
TypeError or ValueError whose message names the argument at fault (the entry's own name for
it, not that of a helper it calls)."""
import numpy as np
import pytest

import rankereval
from rankereval import (NDCG, Accumulator, BinaryLabels, NumericLabels, Precision, Rankings, compare,
                        evaluate)

Y = BinaryLabels.from_positive_indices([[0], [1]])
G = NumericLabels.from_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 1.0, 0.0]]))
R = Rankings.from_ranked_indices([[0, 1], [1, 2]])
OBJ = np.array([[object(), 1, 2]], dtype=object)
NAN_OBJ = np.array([1, np.nan, 1], dtype=object)
ONES = np.ones((1, 3))


def _io():
    return pytest.importorskip("rankereval.io")


# (case name, call, argument the message must name)
CASES = [
    ("evaluate y_pred None", lambda: evaluate(Y, None, ["map"]), "y_pred"),
    ("evaluate y_pred array", lambda: evaluate(Y, np.ones((2, 3)), ["map"]), "y_pred"),
    ("evaluate y_true None", lambda: evaluate(None, R, ["map"]), "y_true"),
    ("evaluate y_true array", lambda: evaluate(np.ones((2, 3)), R, ["map"]), "y_true"),
    ("evaluate metrics None", lambda: evaluate(Y, R, None), "metrics"),
    ("evaluate metrics int", lambda: evaluate(Y, R, 5), "metric"),
    ("evaluate nan_handling", lambda: evaluate(Y, R, ["map"], nan_handling=None), "nan_handling"),
    ("evaluate conf_interval", lambda: evaluate(Y, R, ["map"], conf_interval="yes"), "conf_interval"),
    ("evaluate query_ids", lambda: evaluate(Y, R, ["map"], query_ids=[1]), "query_ids"),
    ("compare runs None", lambda: compare(Y, None, ["map"]), "run"),
    ("metric score y_pred None", lambda: Precision(1).score(Y, None), "y_pred"),
    ("metric score y_true object", lambda: NDCG(3).score(OBJ, R), "y_true"),
    ("metric k None", lambda: Precision(None), "k"),
    ("metric k str", lambda: Precision("3"), "k"),
    ("ndcg_score qid NaN object", lambda: rankereval.ndcg_score([1, 0, 1], [0.3, 0.2, 0.1], qid=NAN_OBJ), "qid"),
    ("ndcg_score qid None object", lambda: rankereval.ndcg_score(
        [1, 0, 1], [0.3, 0.2, 0.1], qid=np.array([1, None, 1], dtype=object)), "qid"),
    ("ndcg_score y_score None", lambda: rankereval.ndcg_score([[1, 0]], None), "y_score"),
    ("ndcg_score y_true object", lambda: rankereval.ndcg_score(OBJ, ONES), "y_true"),
    ("map_score y_score object", lambda: rankereval.map_score(ONES, OBJ), "y_score"),
    ("precision_at_k k None", lambda: rankereval.precision_at_k(ONES, ONES, k=None), "k"),
    ("from_scores None", lambda: Rankings.from_scores(None), "raw_scores"),
    ("from_scores object", lambda: Rankings.from_scores(OBJ), "raw_scores"),
    ("from_scores invalid_items negative", lambda: Rankings.from_scores(ONES, invalid_items=[[-1]]),
     "invalid_items"),
    ("from_scores valid_items negative", lambda: Rankings.from_scores(ONES, valid_items=[[-1]]), "valid_items"),
    ("from_scores invalid_items str", lambda: Rankings.from_scores(ONES, invalid_items="a"), "invalid_items"),
    ("from_scores k str", lambda: Rankings.from_scores(ONES, k="2"), "k"),
    ("from_ranked_indices None", lambda: Rankings.from_ranked_indices(None), "indices"),
    ("from_ranked_indices object", lambda: Rankings.from_ranked_indices(OBJ), "indices"),
    ("from_positive_indices None", lambda: BinaryLabels.from_positive_indices(None), "indices"),
    ("binary from_matrix None", lambda: BinaryLabels.from_matrix(None), "labels"),
    ("numeric from_matrix object", lambda: NumericLabels.from_matrix(OBJ), "labels"),
    ("accumulator update None", lambda: Accumulator(["map"]).update(Y, None), "y_pred"),
    ("accumulator update object", lambda: Accumulator(["map"]).update(Y, OBJ), "y_pred"),
    ("accumulator metrics None", lambda: Accumulator(None), "metrics"),
    ("accumulator load_state_dict None", lambda: Accumulator(["map"]).load_state_dict(None), "state"),
    ("accumulator merge None", lambda: Accumulator(["map"]).merge(None), "merge"),
    ("from_records None", lambda: _io().from_records(None, []), "qrels"),
    ("from_records run None", lambda: _io().from_records([("q", "d", 1)], None), "run"),
    ("from_records run int", lambda: _io().from_records([("q", "d", 1)], 5), "run"),
    ("from_dicts None", lambda: _io().from_dicts(None, {}), "qrels"),
    ("read_trec None", lambda: _io().read_trec(None, None), "path"),
]


@pytest.mark.parametrize("call, argument", [pytest.param(c, a, id=n) for n, c, a in CASES])
def test_bad_argument_is_named(call, argument):
    with pytest.raises((TypeError, ValueError)) as err:
        call()
    assert type(err.value).__name__ not in ("AttributeError", "KeyError", "IndexError")
    assert argument in str(err.value), str(err.value)


@pytest.mark.parametrize("which", ["pyarrow", "pandas"])
@pytest.mark.parametrize("field, column, text", [("1_0", "score", "score is not a number: '1_0'"),
                                                  ("٣", "score", "score is not a number"),
                                                  ("1_0", "rank", "rank is not an integer: '1_0'")])
def test_run_numbers_as_the_c_parsers_read_them(tmp_path, which, field, column, text):
    """Python's float and int take '1_0' (and non-ASCII digits); the parsers do not: both
    name the line and the field."""
    io_ = _io()
    from rankereval.io import _source

    if which == "pyarrow" and _source._pyarrow() is None:
        pytest.skip("pyarrow not installed")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 d1 1\n")
    run = tmp_path / "run"
    line = f"1 Q0 d1 {field} 3 t" if column == "rank" else f"1 Q0 d1 1 {field} t"
    run.write_text("1 Q0 d0 1 5 t\n" + line + "\n", encoding="utf-8")
    with _source._forced_parser(which), pytest.raises(io_.TrecFormatError) as err:
        io_.read_trec(str(qrels), str(run), order_by=column if column == "rank" else "score")
    assert err.value.line == 2
    assert text in str(err.value)


@pytest.mark.parametrize("which", ["pyarrow", "pandas"])
def test_infinite_run_scores_are_ordered_nan_refused(tmp_path, which):
    """The documented rule: an infinite run score is a score (+inf first, -inf last, as
    trec_eval orders them); NaN has no order and is refused with its line; infinite
    relevance grades are refused."""
    io_ = _io()
    from rankereval.io import _source

    if which == "pyarrow" and _source._pyarrow() is None:
        pytest.skip("pyarrow not installed")
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 -inf t\n1 Q0 b 2 1e308 t\n1 Q0 c 3 inf t\n1 Q0 d 4 -1e308 t\n")
    with _source._forced_parser(which):
        data = io_.read_trec(str(qrels), str(run))
        ids = list(data.doc_ids)
        assert [ids[i] for i in data.rankings.to_list()[0]] == ["c", "b", "d", "a"]
        run.write_text("1 Q0 a 1 1 t\n1 Q0 b 2 nan t\n")
        with pytest.raises(io_.TrecFormatError, match="line 2: score must be a number, got nan"):
            io_.read_trec(str(qrels), str(run))
        qrels.write_text("1 0 a inf\n")
        with pytest.raises(io_.TrecFormatError, match="line 1: relevance grade must be a finite number"):
            io_.read_trec(str(qrels), str(run))
