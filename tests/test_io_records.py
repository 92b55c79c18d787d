"""``rankereval.io.from_dicts`` / ``from_records``: the same TrecData as the DataFrame reader,
the numbers of ranx and ir_measures on the same inputs, and clear errors."""
from collections import namedtuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rankereval import AP, NDCG, Precision, Recall, ReciprocalRank
from rankereval.io import from_dataframes, from_dicts, from_records

pd = pytest.importorskip("pandas")


def random_collection(seed, n_q=25, n_docs=60, ties=False):
    """(qrels dict, run dict): every query judged (at least one relevant) and ranked."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for i in range(n_q):
        q = f"q{i}"
        judged = rng.choice(n_docs, rng.integers(1, 15), replace=False)
        grades = rng.integers(0, 4, judged.size)
        grades[0] = max(grades[0], 1)
        qrels[q] = {f"d{j}": int(g) for j, g in zip(judged, grades)}
        ranked = rng.choice(n_docs, rng.integers(1, min(40, n_docs)), replace=False)
        scores = rng.integers(0, 5, ranked.size) / 4 if ties else rng.permutation(ranked.size) + rng.random()
        run[q] = {f"d{j}": float(s) for j, s in zip(ranked, scores)}
    return qrels, run


def as_frames(qrels, run):
    lab = pd.DataFrame([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
                       columns=["query", "item", "label"])
    rn = pd.DataFrame([(q, d, s) for q, docs in run.items() for d, s in docs.items()],
                      columns=["query", "item", "score"])
    return lab, rn


def by_ids(data):
    """Rankings and labels in terms of the original ids (independent of the id coding)."""
    ids = list(data.doc_ids)

    def labels(lab):
        return [dict(zip((ids[j] for j in r), v)) for r, v in zip(lab.indices_to_list(), lab.labels_to_list())]
    return (list(data.query_ids), [[ids[j] for j in r] for r in data.rankings.to_list()],
            labels(data.binary_labels), labels(data.numeric_labels))


def same_data(a, b):
    """The same TrecData, id coding included."""
    assert by_ids(a) == by_ids(b)
    assert a.rankings == b.rankings
    assert a.binary_labels == b.binary_labels and a.numeric_labels == b.numeric_labels
    assert list(a.query_ids) == list(b.query_ids) and list(a.doc_ids) == list(b.doc_ids)


@settings(max_examples=40)  # each example builds DataFrames three times
@given(st.integers(0, 2**16), st.booleans(), st.sampled_from([1, 2]), st.sampled_from(["drop", "empty"]))
def test_dicts_and_records_give_the_dataframe_result(seed, ties, level, missing):
    qrels, run = random_collection(seed, n_q=6, n_docs=15, ties=ties)
    run.pop("q0")  # a judged query without a ranking
    run["extra"] = {"d1": 1.0}  # a ranked query without judgements
    expected = from_dataframes(*as_frames(qrels, run), relevance_level=level, missing=missing)
    same_data(from_dicts(qrels, run, relevance_level=level, missing=missing), expected)
    records = ([(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
               ((q, d, s) for q, docs in run.items() for d, s in docs.items()))  # a generator
    same_data(from_records(*records, relevance_level=level, missing=missing), expected)


def test_integer_ids_and_namedtuples_with_more_fields():
    Qrel = namedtuple("Qrel", ["query_id", "doc_id", "relevance", "iteration"])
    Scored = namedtuple("Scored", ["query_id", "doc_id", "score"])
    qrels = [Qrel(1, 10, 2, "0"), Qrel(1, 11, 0, "0"), Qrel(2, 12, 1, "0")]
    run = [Scored(2, 13, 0.5), Scored(2, 12, 0.1), Scored(1, 11, 0.9), Scored(1, 10, 0.8)]
    data = from_records(qrels, run)
    assert list(data.query_ids) == [1, 2] and data.rankings.to_list() == [[1, 0], [3, 2]]
    same_data(data, from_dicts({1: {10: 2, 11: 0}, 2: {12: 1}}, {1: {11: 0.9, 10: 0.8}, 2: {13: 0.5, 12: 0.1}}))


METRICS = [  # (ranx name, ir_measures name, rankereval metric, graded)
    ("ndcg@10", "nDCG@10", NDCG(10), True),
    ("map@100", "AP@100", AP(100, denominator="relevant"), False),
    ("precision@5", "P@5", Precision(5), False),
    ("recall@10", "R@10", Recall(10), False),
    ("mrr", "RR", ReciprocalRank(), False),
]


@pytest.mark.filterwarnings("ignore:unsafe cast:Warning")  # numba, inside ranx
def test_ranx_objects_and_values():
    ranx = pytest.importorskip("ranx")
    qrels, run = random_collection(7)
    data = from_dicts(ranx.Qrels(qrels), ranx.Run(run))
    assert by_ids(data) == by_ids(from_dicts(qrels, run))  # ranx reorders the documents of a query
    theirs = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), [m[0] for m in METRICS])
    for name, _, metric, graded in METRICS:
        ours = metric.score(data.numeric_labels if graded else data.binary_labels, data.rankings).mean()
        assert ours == pytest.approx(theirs[name], rel=1e-9), name


def test_ir_measures_records_and_values():
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = random_collection(11, ties=True)  # ties: both follow trec_eval's order
    qrels_records = [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    run_records = [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    data = from_records(qrels_records, iter(run_records))
    theirs = ir_measures.calc_aggregate([ir_measures.parse_measure(m[1]) for m in METRICS], qrels_records,
                                        run_records)
    for _, name, metric, graded in METRICS:
        ours = metric.score(data.numeric_labels if graded else data.binary_labels, data.rankings).mean()
        assert ours == pytest.approx(theirs[ir_measures.parse_measure(name)], rel=1e-9), name


@pytest.mark.parametrize("call, exc, match", [
    (lambda: from_dicts({"q1": {"d1": 1}}, {"q1": {"d1": float("nan")}}), ValueError,
     r"run, entry \['q1'\]\['d1'\]: score .* must be a number, got nan"),
    (lambda: from_dicts({"q1": {"d1": 1}, 2: {"d1": 1}}, {"q1": {"d1": 1.0}}), TypeError,
     "qrels: query ids of different types"),
    (lambda: from_dicts({"1": {"d1": 1}}, {1: {"d1": 1.0}}), TypeError,
     "qrels has query ids of type str but run of type int"),
    (lambda: from_dicts({"q": {"d1": 1}}, {"q": {1: 1.0, "d1": 2.0}}), TypeError, "run: doc ids of different types"),
    (lambda: from_dicts([("q", "d", 1)], {}), TypeError, "qrels must be a dict of dicts"),
    (lambda: from_dicts({"q": [1]}, {}), TypeError, r"qrels\['q'\] must be a dict"),
    (lambda: from_dicts({"q": {"d": "x"}}, {"q": {"d": 1.0}}), ValueError, "is not a number: 'x'"),
    (lambda: from_records([("q1", "d1", 1), ("q1", "d1", 2)], [("q1", "d1", 1.0)]), ValueError,
     r"qrels, record 1: duplicate judgement for query 'q1' and document 'd1' \(first given in record 0\)"),
    (lambda: from_records([("q1", "d1", 1)], [("q1", "d1", 1.0), ("q1", "d1", 2.0)]), ValueError,
     "run, record 1: duplicate document 'd1'"),
    (lambda: from_records([("q1", "d1", 1), ("q1", "d1")], [("q1", "d1", 1.0)]), TypeError,
     r"qrels\[1\]: expected a record"),
    (lambda: from_records([("q1", "d1", 1)], [("q1", "d1", 1.0)], missing="x"), ValueError, "missing must be"),
    (lambda: from_records([("q1", "d1", 1)], [("q2", "d1", 1.0)]), ValueError, "no query to evaluate"),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
