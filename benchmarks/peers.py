"""Adapters that run rankereval and its peer libraries on a :class:`workloads.Workload`.

Each adapter has the same three steps, timed separately by ``run.py``:

``convert(workload)``
    Turn the workload (CSR labels + int64 rankings) into the library's own input objects
    (rankereval: ``BinaryLabels`` / ``NumericLabels`` / ``Rankings``; pytrec_eval and ranx:
    ``{query: {doc: value}}`` dicts and the objects built from them; scikit-learn: dense
    arrays; torchmetrics: flat tensors).
``evaluate(state, measure)``
    Compute one metric; returns per-query values (scikit-learn: the mean, its public API has
    no per-query output).
``warmup``
    Not a method: ``run.py`` times ``convert`` + every ``evaluate`` once on a 20-query slice
    before anything else, which is when numba (ranx) compiles or loads its cached kernels.

Peers get scores that reproduce the ranking exactly: the item at rank ``r`` (1-based) of a
list of length ``n`` scores ``n - r + 1`` (all > 0: torchmetrics ignores targets whose
score is <= 0). Relevant items that are not in a ranking are added where a library needs
them to know the number of relevant items (scikit-learn, torchmetrics) with score 0.5,
below every ranked item.

Queries without relevant items are NaN in rankereval. Peers score them 0 (ranx,
scikit-learn, torchmetrics with ``empty_target_action='neg'``) or cannot be given them (ranx
requires the same query ids in qrels and run; trec_eval only evaluates queries with qrels).
So pytrec_eval, ranx and scikit-learn are given only the queries with at least one relevant
item, torchmetrics gets all of them with ``empty_target_action='skip'``; every per-query
result is therefore aligned with the rows that have a relevant item, and rankereval's NaNs
are compared with nothing (its means use ``nan_handling='drop'``).
"""
import importlib
import importlib.util

import numpy as np

UNRETRIEVED_SCORE = 0.5


def query_ids(rows):
    """Zero-padded ids, so that lexicographic order (ranx sorts by id) is row order."""
    return [f"q{r:08d}" for r in rows]


def relevant_rows(w):
    """Row numbers of the queries with at least one relevant item."""
    return np.flatnonzero(np.diff(w.labels.indptr) > 0)


def join(w):
    """Per ranked item its label, and the relevant items missing from each ranking.

    Returns ``(ranked_labels, miss_rows, miss_items, miss_labels)``: ``ranked_labels`` has the
    shape of the rankings (0 = not relevant); the ``miss_*`` arrays list, row by row, the
    relevant items that are not ranked. Vectorised with sorted ``row * n_items + item`` keys.
    """
    m = w.labels
    n_rows, length = w.rankings.shape
    n_items = np.int64(max(m.shape[1], int(w.rankings.max(initial=-1)) + 1))
    label_rows = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(m.indptr))
    label_keys = label_rows * n_items + m.indices  # sorted: CSR with sorted indices
    rank_keys = (np.arange(n_rows, dtype=np.int64)[:, None] * n_items + w.rankings).ravel()
    if label_keys.size:
        pos_c = np.minimum(np.searchsorted(label_keys, rank_keys), label_keys.size - 1)
        found = label_keys[pos_c] == rank_keys
    else:
        pos_c, found = np.zeros(rank_keys.size, np.int64), np.zeros(rank_keys.size, bool)
    ranked_labels = np.zeros(rank_keys.size, dtype=np.float64)
    ranked_labels[found] = m.data[pos_c[found]]
    retrieved = np.zeros(label_keys.size, dtype=bool)
    retrieved[pos_c[found]] = True
    miss = ~retrieved
    return ranked_labels.reshape(n_rows, length), label_rows[miss], m.indices[miss].astype(np.int64), m.data[miss]


def trec_dicts(w, rows):
    """``(qrels, run)`` as ``{qid: {docid: int grade}}`` and ``{qid: {docid: float score}}``."""
    m = w.labels
    qids = query_ids(rows)
    indptr = m.indptr
    docs = m.indices.astype(str).tolist()
    grades = m.data.astype(np.int64).tolist()
    qrels = {q: dict(zip(docs[indptr[r]:indptr[r + 1]], grades[indptr[r]:indptr[r + 1]])) for q, r in zip(qids, rows)}
    length = w.rankings.shape[1]
    scores = np.arange(length, 0, -1, dtype=np.float64).tolist()
    ranked = w.rankings[rows].astype(str).tolist()
    run = {q: dict(zip(d, scores)) for q, d in zip(qids, ranked)}
    return qrels, run


class Library:
    """Base adapter: subclasses fill in ``convert`` and ``evaluate``. A measure is named as
    the library spells it ('ndcg_cut.10', 'ndcg@10'); rankereval's is a (labels kind, metric
    object) pair."""

    name = ""
    module = ""
    dist = ""  # distribution name, for the version
    per_query = True

    def installed(self):
        return importlib.util.find_spec(self.module) is not None

    def version(self):
        try:
            from importlib.metadata import version

            return version(self.dist)
        except Exception:  # pragma: no cover - odd installs
            return getattr(importlib.import_module(self.module), "__version__", "?")

    def threads(self):
        return 1

    def convert(self, w):
        raise NotImplementedError

    def evaluate(self, state, measure):
        raise NotImplementedError


class RankerEval(Library):
    name = "rankereval"
    module = "rankereval"
    dist = "rankereval"

    def version(self):
        import rankereval

        return rankereval.__version__

    def threads(self):
        from rankereval._threads import effective_n_threads

        return effective_n_threads()

    def convert_labels(self, w):
        """Binary labels (for graded workloads: the non-zero pattern) and graded labels."""
        from rankereval import BinaryLabels, NumericLabels

        if not w.graded:
            return {"binary": BinaryLabels.from_matrix(w.labels)}
        return {"binary": BinaryLabels.from_positive_indices(w.labels), "graded": NumericLabels.from_matrix(w.labels)}

    def convert_rankings(self, w):
        from rankereval import Rankings

        return {"rankings": Rankings.from_ranked_indices(w.rankings)}

    def convert(self, w, measures=()):
        return {**self.convert_labels(w), **self.convert_rankings(w)}

    def evaluate(self, state, measure):
        """``measure``: a ``(labels kind, metric object)`` pair."""
        kind, metric = measure
        return metric.score(state[kind], state["rankings"])


class PytrecEval(Library):
    name = "pytrec_eval"
    module = "pytrec_eval"
    dist = "pytrec-eval-terrier"

    def convert(self, w, measures=()):
        import pytrec_eval

        rows = relevant_rows(w)
        qrels, run = trec_dicts(w, rows)
        # one evaluator per measure, so each can be timed alone (an evaluator parses qrels once)
        evaluators = {m: pytrec_eval.RelevanceEvaluator(qrels, {m}) for m in measures}
        return {"qids": query_ids(rows), "run": run, "evaluators": evaluators}

    def evaluate(self, state, measure):
        res = state["evaluators"][measure].evaluate(state["run"])  # parses the run dict too
        key = measure.replace(".", "_")
        return np.fromiter((res[q][key] for q in state["qids"]), dtype=np.float64, count=len(state["qids"]))


class Ranx(Library):
    name = "ranx"
    module = "ranx"
    dist = "ranx"

    def threads(self):
        import numba

        return int(numba.config.NUMBA_NUM_THREADS)

    def convert(self, w, measures=()):
        from ranx import Qrels, Run

        rows = relevant_rows(w)
        qrels, run = trec_dicts(w, rows)
        # the documented route (Qrels/Run from dicts), then the numba typed lists that
        # ranx.evaluate would otherwise rebuild on every call
        q, r = Qrels.from_dict(qrels), Run.from_dict(run)
        return {"qrels": q.to_typed_list(), "run": r.to_typed_list()}

    def evaluate(self, state, measure):
        import numba
        from ranx.meta.evaluate import extract_metric_and_params
        from ranx.metrics import metric_switch

        # What ranx.evaluate(qrels, run, measure, return_mean=False) does, minus its bugs: with
        # one metric and return_mean=False it raises KeyError (ranx 0.3.21), and for < 10
        # queries it switches numba to 1 thread for good.
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        name, k, rel_lvl = extract_metric_and_params(measure)
        return np.asarray(metric_switch(name)(state["qrels"], state["run"], k, rel_lvl), dtype=np.float64)


class Sklearn(Library):
    name = "sklearn"
    module = "sklearn"
    dist = "scikit-learn"
    per_query = False

    def convert(self, w, measures=()):
        """Dense ``(n_queries, width)`` arrays over each query's own candidates: its ranked
        items, then its unretrieved relevant items (score 0.5), then padding (label 0,
        score 0)."""
        rows = relevant_rows(w)
        ranked_labels, miss_rows, _, miss_labels = join(w)
        length = w.rankings.shape[1]
        n_miss = np.bincount(miss_rows, minlength=w.n_rows)
        width = length + int(n_miss.max(initial=0))
        y_true = np.zeros((w.n_rows, width))
        y_score = np.zeros((w.n_rows, width))
        y_true[:, :length] = ranked_labels
        y_score[:, :length] = np.arange(length, 0, -1, dtype=np.float64)
        start = np.zeros(w.n_rows + 1, dtype=np.int64)
        np.cumsum(n_miss, out=start[1:])
        col = length + np.arange(miss_rows.size) - start[miss_rows]
        y_true[miss_rows, col] = miss_labels
        y_score[miss_rows, col] = UNRETRIEVED_SCORE
        return {"y_true": y_true[rows], "y_score": y_score[rows]}

    def evaluate(self, state, measure):
        from sklearn.metrics import ndcg_score

        k = int(measure.split("@")[1])
        # scores are distinct: ignore_ties=True is exact and the documented fast path
        return float(ndcg_score(state["y_true"], state["y_score"], k=k, ignore_ties=True))


class TorchMetrics(Library):
    name = "torchmetrics"
    module = "torchmetrics"
    dist = "torchmetrics"

    def installed(self):
        return importlib.util.find_spec("torch") is not None and importlib.util.find_spec("torchmetrics") is not None

    def threads(self):
        import torch

        return int(torch.get_num_threads())

    def convert(self, w, measures=()):
        """Flat ``preds``/``target``/``indexes`` tensors: each query's ranked items, then its
        unretrieved relevant items (score 0.5)."""
        import torch

        ranked_labels, miss_rows, _, miss_labels = join(w)
        n_rows, length = w.rankings.shape
        q = np.concatenate([np.repeat(np.arange(n_rows, dtype=np.int64), length), miss_rows])
        preds = np.concatenate([np.tile(np.arange(length, 0, -1, dtype=np.float32), n_rows),
                                np.full(miss_rows.size, UNRETRIEVED_SCORE, dtype=np.float32)])
        target = np.concatenate([ranked_labels.ravel(), miss_labels]).astype(np.int64)
        order = np.argsort(q, kind="stable")
        state = {"indexes": torch.from_numpy(q[order]), "preds": torch.from_numpy(preds[order]),
                 "graded": torch.from_numpy(target[order])}
        state["binary"] = (state["graded"] > 0).long()
        return state

    _CLASSES = {
        "ndcg": "RetrievalNormalizedDCG", "precision": "RetrievalPrecision", "recall": "RetrievalRecall",
        "mrr": "RetrievalMRR", "hit_rate": "RetrievalHitRate", "map": "RetrievalMAP",
    }

    def evaluate(self, state, measure):
        """``measure``: 'ndcg@10', 'mrr' (whole ranking), ..."""
        import torchmetrics.retrieval as tr

        name, _, k = measure.partition("@")
        cls = getattr(tr, self._CLASSES[name])
        metric = cls(top_k=int(k) if k else None, empty_target_action="skip", aggregation=_per_query)
        metric.update(state["preds"], state["graded" if name == "ndcg" else "binary"], indexes=state["indexes"])
        return metric.compute().double().numpy()


def _per_query(values, dim=None):
    """torchmetrics ``aggregation``: keep the per-query values."""
    return values


LIBRARIES = {lib.name: lib for lib in (RankerEval(), PytrecEval(), Ranx(), Sklearn(), TorchMetrics())}
PEERS = [n for n in LIBRARIES if n != "rankereval"]
