"""The peers' spellings of ``PEER_NAMES`` (the docs' "Coming from ..." table) against the peers
themselves: ranx, torchmetrics and scikit-learn compute the values, rankereval reads the
spelling given in the table's "here" column. Each peer's test skips, with the reason, where the
peer is not installed (``pip install ranx``, ``pip install torch torchmetrics`` CPU build;
scikit-learn is in the test extra). ir_measures' and trec_eval's names are tested in
``test_ir_measures_names.py`` and ``test_trec_eval_parity.py``."""
import math
import os
import pathlib
import re
import warnings

import numpy as np
import pytest

from rankereval import evaluate
from rankereval.metrics import from_name
from rankereval.metrics._names import PEER_NAMES
from rankereval.metrics._trec_names import name_differences

K = 5


def _dicts(seed=7, n_queries=15, n_docs=9):
    """qrels and a run over the same documents (every judged document ranked: torchmetrics sees
    the ranked ones only), grades 0-3, distinct scores; every query has a relevant document
    and most have several (HitRate's leave-one-out case is not the peers')."""
    rng = np.random.default_rng(seed)
    qrels, run = {}, {}
    for q in range(n_queries):
        grades = rng.integers(0, 4, n_docs)
        grades[rng.integers(n_docs)] = max(1, int(grades.max()))
        qrels[f"q{q}"] = {f"d{d}": int(g) for d, g in enumerate(grades)}
        scores = rng.permutation(n_docs) + rng.random(n_docs) / 2
        run[f"q{q}"] = {f"d{d}": float(s) for d, s in enumerate(scores)}
    return qrels, run


def _ours(qrels, run, name):
    from rankereval.io import from_dicts

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate(from_dicts(qrels, run), [name], nan_handling="zerofill")
    return ev.means[name], {str(q): float(v) for q, v in zip(ev.query_ids, ev[name])}


def _here(entry):
    """rankereval's spelling of ``entry`` (the first word of its 'here' column)."""
    return re.split(r"[ ;]", entry.here)[0].format(k=K)


RANX = [p for p in PEER_NAMES if p.peer == "ranx"]


@pytest.mark.parametrize("entry", RANX, ids=lambda p: p.spelling)
def test_ranx_spellings_mean_what_they_mean_in_ranx(entry):
    ranx = pytest.importorskip("ranx")
    pytest.importorskip("pandas")
    qrels, run = _dicts()
    spelling = entry.spelling.format(k=K)
    ranx_run = ranx.Run.from_dict(run)
    ranx.evaluate(ranx.Qrels.from_dict(qrels), ranx_run, spelling)
    theirs = {str(q): float(v) for q, v in ranx_run.scores[spelling].items()}
    here = _here(entry)
    ours = _ours(qrels, run, here)[1]
    assert theirs.keys() == ours.keys()
    for q, value in theirs.items():
        if math.isnan(value):  # ranx' bpref of a query without judged non-relevant documents (0/0)
            assert entry.spelling == "bpref" and "NaN" in entry.meaning and ours[q] == 1.0, (q, ours[q])
            continue
        assert math.isclose(ours[q], value, rel_tol=1e-9, abs_tol=1e-12), (here, q, ours[q], value)
    if entry.read == "same":  # the peer's spelling itself reads with the peer's meaning
        assert from_name(spelling) == from_name(here)
    elif entry.read == "refused":  # refused, naming the spelling here
        with pytest.raises(ValueError) as err:
            from_name(spelling)
        assert here in str(err.value)
    else:  # the reference's metric of that name: another value, and a footnote saying so
        assert entry.read == "reference"
        plain = from_name(spelling)
        assert from_name(spelling) != from_name(here)
        assert name_differences(plain, spelling) is not None and here in name_differences(plain, spelling)


def _per_query(qrels, run):
    """Per query: (scores, grades) over the ranked documents, for torchmetrics and scikit-learn."""
    out = {}
    for q, docs in run.items():
        ids = sorted(docs)
        out[q] = (np.array([docs[d] for d in ids]), np.array([qrels[q].get(d, 0) for d in ids]))
    return out


TORCH = [p for p in PEER_NAMES if p.peer == "torchmetrics"]


@pytest.mark.parametrize("entry", TORCH, ids=lambda p: p.spelling)
def test_torchmetrics_classes_equal_the_names_here(entry):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torchmetrics")
    pytest.importorskip("pandas")
    import torchmetrics.retrieval as tr

    qrels, run = _dicts(seed=11)
    cls = getattr(tr, entry.spelling.split("(")[0])
    graded = cls is tr.RetrievalNormalizedDCG
    metric = cls(top_k=K) if "top_k" in entry.spelling else cls()
    per_query = _per_query(qrels, run)
    for q, (scores, grades) in per_query.items():
        target = torch.tensor(grades if graded else (grades >= 1).astype(np.int64))
        metric.update(torch.tensor(scores), target, indexes=torch.full((scores.size,), int(q[1:])))
    theirs = float(metric.compute())
    assert math.isclose(_ours(qrels, run, _here(entry))[0], theirs, rel_tol=1e-6, abs_tol=1e-7), theirs


SKLEARN = [p for p in PEER_NAMES if p.peer == "scikit-learn"]


@pytest.mark.parametrize("entry", SKLEARN, ids=lambda p: p.spelling)
def test_scikit_learn_functions_equal_the_names_here(entry):
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    pytest.importorskip("pandas")
    import rankereval

    qrels, run = _dicts(seed=5)
    per_query = _per_query(qrels, run)
    y_true = np.array([g for _, g in per_query.values()])
    y_score = np.array([s for s, _ in per_query.values()])
    name = entry.spelling.split("(")[0]
    theirs = getattr(sklearn_metrics, name)(y_true, y_score, k=K)
    assert math.isclose(getattr(rankereval, name)(y_true, y_score, k=K), theirs, rel_tol=1e-12)
    on_rankings = entry.here.split("; ")[1].split(" ")[0].format(k=K)
    assert math.isclose(_ours(qrels, run, on_rankings)[0], theirs, rel_tol=1e-9)


def test_every_peer_entry_is_checked_by_a_test():
    assert {p.peer for p in PEER_NAMES} == {"ranx", "torchmetrics", "scikit-learn"}
    assert all(p.read in ("same", "reference", "refused", "not a name") for p in PEER_NAMES)
    for p in PEER_NAMES:  # every spelling named here reads
        from_name(_here(p).replace("rankereval.", "")) if p.peer != "scikit-learn" else None


_root = pathlib.Path(__file__).resolve().parent.parent
SOURCE = pathlib.Path(os.environ.get("RANKEREVAL_SOURCE_TREE", _root)).resolve()
PAGE = SOURCE / "docs" / "guide" / "coming_from.rst"


@pytest.mark.skipif(not PAGE.is_file(), reason=f"no docs page at {PAGE} (set RANKEREVAL_SOURCE_TREE)")
def test_the_docs_table_lists_every_peer_spelling():
    text = PAGE.read_text(encoding="utf-8")
    for p in PEER_NAMES:
        assert f"``{p.spelling.format(k='k')}``" in text, p.spelling
