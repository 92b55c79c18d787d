"""Evaluate batch by batch (a training loop's validation), merge across processes exactly.

The accumulator scores each batch with the kernels of :func:`rankereval.evaluate` and keeps
only the mergeable partial sums of :mod:`rankereval.evaluation._evaluate` (the layer that
:mod:`rankereval.dask` moves between workers): per metric the counts, the exact sum of the
scores and, with intervals, the Poisson bootstrap's per-resample exact sums keyed by query id.
The sums are exact (:mod:`rankereval.stats._exact`), so :meth:`Accumulator.compute` gives the same
bits as ``evaluate`` on the concatenated batches, whatever the batch boundaries, the order of
the batches or how the accumulators of several processes are merged.
"""
import json
import warnings

import numpy as np


from rankereval.stats import _engine
from rankereval.stats._engine import geometric_columns as _geometric, merge_partials as _merge_partials
from rankereval.stats._engine import partials as _partials, summarise as _summarise
from rankereval.evaluation._columns import check_relevance_level, metric_columns as _metric_columns
from rankereval.evaluation._columns import column_weights, score_columns as _score_columns
from rankereval.evaluation._columns import columns_for_rows as _columns_for_rows
from rankereval._stack import user_stacklevel
from rankereval.data._conversion import _host_array
from rankereval.evaluation._evaluate import Evaluation
from rankereval.stats._exact import ExactSum
from rankereval._validation import check_flag
from rankereval.data import BinaryLabels, Labels, NumericLabels, Rankings

__all__ = ["Accumulator"]

_STATE_VERSION = 1


class Accumulator:
    """Evaluate rankings batch by batch in bounded memory; merge accumulators exactly.

    Each :meth:`update` scores one batch (the top ``k`` of a batch of item scores, or its
    rankings) and adds it to a state of O(metrics x resamples) numbers; :meth:`compute`
    returns the :class:`~rankereval.Evaluation` that :func:`rankereval.evaluate` gives on the
    concatenated batches (with ``resampling='poisson'`` for the intervals), bit for bit.
    Accumulators of several processes combine with :meth:`merge` or through
    :meth:`state_dict` (plain NumPy arrays, picklable), e.g. ``torch.distributed``'s
    ``all_gather_object``. See :doc:`/guide/training`.

    Parameters
    ----------
    metrics : list or dict
        Metric objects and/or names, as in :func:`rankereval.evaluate`.
    k : int, optional
        How many items of each row of scores to rank (:meth:`Rankings.from_scores
        <rankereval.Rankings.from_scores>`). Default: the largest cutoff of the metrics,
        or every item when a metric has no cutoff (``"map"``). Unused for ``Rankings``.
    invalid_items : scipy.sparse matrix or array, optional
        Items never to rank, one row per query id (e.g. the training interactions of
        every user): a batch of scores with integer ``query_ids`` excludes rows
        ``invalid_items[query_ids]``. Or pass a batch's own rows to :meth:`update`.
    relevance_level, nan_handling, conf_interval, n_resamples, confidence
        As in :func:`rankereval.evaluate`.
    resampling : {'poisson'}, default='poisson'
        The bootstrap of the intervals: the Poisson bootstrap keyed by query id, the one
        whose resamples merge across batches (the classical bootstrap needs every score
        at once).
    random_state : None, int or numpy.random.Generator
        Seed of the bootstrap. Accumulators that are merged must share one int seed.
    keep_scores : bool, default=False
        Also keep the per-query scores (8 bytes per query and metric) for
        :attr:`Evaluation.scores <rankereval.Evaluation.scores>`.
    check_query_ids : bool, default=True
        Keep the 64-bit hash of every query id (8 bytes per query) to refuse a query id
        seen twice, in two batches or two merged accumulators, with a ``ValueError``. With
        False nothing per query is kept, and a repeated id counts as two rankings that
        share one bootstrap key, as ``evaluate`` counts a repeated id.
    ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
        Score over the orders of equal scores, as :func:`rankereval.evaluate` does: scores
        are ranked with ``ties="keep"`` (a tied group crossing ``k`` kept whole) and every
        metric takes its expected (or best, or worst) value over the tied orders. None:
        equal scores are ordered by item id.

    Notes
    -----
    Rows of batches without ``query_ids`` are keyed by their row number in the stream of
    this accumulator (``evaluate``'s default on the concatenation); accumulators holding
    such rows cannot be merged when they compute intervals (the keys would repeat): give
    ``query_ids`` in a distributed loop.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import Accumulator, BinaryLabels
    >>> acc = Accumulator(["ndcg@2", "rr@2"])
    >>> acc.update(BinaryLabels.from_positive_indices([[1], [2]]),
    ...            np.array([[0.1, 0.9, 0.3], [0.8, 0.1, 0.2]]), query_ids=[10, 11])
    >>> acc.update(BinaryLabels.from_positive_indices([[2]]), np.array([[0.5, 0.4, 0.3]]),
    ...            query_ids=[12])
    >>> acc.compute()  # doctest: +NORMALIZE_WHITESPACE
    Evaluation of 3 rankings
    metric    mean  rankings
    ------  ------  --------
    ndcg@2  0.5436         3
    rr@2    0.5000         3
    """

    def __init__(self, metrics, *, k=None, invalid_items=None, relevance_level=1, nan_handling="propagate",
                 conf_interval=False, n_resamples=1000, confidence=0.95, resampling="poisson",
                 random_state=None, keep_scores=False, check_query_ids=True, n_bootstrap_samples=None,
                 ties=None):
        from rankereval._validation import check_k

        from rankereval.metrics._ties import check_ties

        self._ties = check_ties(ties)
        self._columns = _metric_columns(metrics)
        self.names = [c for c, _ in self._columns]
        opts, self._seed = _engine.merged_options(
            "Accumulator", nan_handling=nan_handling, conf_interval=conf_interval, n_resamples=n_resamples,
            n_bootstrap_samples=n_bootstrap_samples, confidence=confidence, random_state=random_state,
            resampling=resampling)
        self._nan_handling, self._conf_interval = opts.nan_handling, opts.conf_interval
        self._n_boot, self._confidence = opts.n_resamples, opts.confidence
        self._keep_scores = check_flag(keep_scores, "keep_scores")
        self._check_ids = check_flag(check_query_ids, "check_query_ids")
        if any(m.info.labels == "binary" for _, m in self._columns):
            check_relevance_level(relevance_level)
        self._relevance_level = relevance_level
        cutoffs = [getattr(m, "k", None) for _, m in self._columns]
        if k is None:
            k = max(cutoffs) if all(isinstance(c, (int, np.integer)) for c in cutoffs) else None
        self.k = check_k(k, allow_none=True)
        if self.k is not None:
            for (col, _), c in zip(self._columns, cutoffs):
                if c is None or (isinstance(c, (int, np.integer)) and c > self.k):
                    raise ValueError(f"k={self.k} ranks fewer items than {col} reads ("
                                     f"{'the whole ranking' if c is None else f'the top {c}'}); "
                                     "leave k=None to rank as many as the metrics need")
        if invalid_items is not None:
            import scipy.sparse as sp

            invalid_items = _host_array(invalid_items, "invalid_items")
            if not sp.issparse(invalid_items) and not isinstance(invalid_items, np.ndarray):
                raise TypeError("invalid_items must be a SciPy sparse matrix/array or a 2-D array with one "
                                f"row per query id, got {type(invalid_items).__name__}")
            if invalid_items.ndim != 2:
                raise ValueError(f"invalid_items must be 2-D (one row per query id), got shape {invalid_items.shape}")
            invalid_items = sp.csr_array(invalid_items)
        self._invalid = invalid_items
        self._geometric = _geometric(self._columns)
        self._weighted = bool(_engine.weighted_columns(self._columns).any())  # GAUC: sum(w x), sum(w)
        self.reset()

    # -- state ---------------------------------------------------------------------------
    def reset(self):
        """Forget every batch (a new epoch's validation); the options stay."""
        m = len(self._columns)
        self._part = _partials(np.empty((0, m)), self._nan_handling,
                               np.empty(0, np.uint64) if self._conf_interval else None,
                               self._seed, self._n_boot if self._conf_interval else 0,
                               geometric=self._geometric, weights=np.empty((0, m)) if self._weighted else None)
        self._id_kind = None          # None (no batch yet), 'row' (row numbers), 'int' or 'str'
        self._seen = []               # sorted uint64 hash chunks (check_query_ids)
        self._scores, self._ids = [], []

    @property
    def n_rankings(self):
        """Rankings accumulated so far."""
        return int(self._part["n"])

    def _config(self):
        extra = {} if self._ties is None else {"ties": self._ties}  # (states saved before ties load)
        return json.dumps({**extra,
            "version": _STATE_VERSION,
            "columns": [[c, repr(m)] for c, m in self._columns],
            "nan_handling": self._nan_handling, "relevance_level": repr(self._relevance_level),
            "conf_interval": self._conf_interval, "n_bootstrap_samples": self._n_boot,
            "confidence": self._confidence, "seed": str(self._seed), "keep_scores": self._keep_scores,
            "check_query_ids": self._check_ids}, sort_keys=True)

    # -- update --------------------------------------------------------------------------
    def update(self, y_true, y_pred, *, query_ids=None, invalid_items=None):
        """Add one batch.

        The data come first, as in :meth:`Metric.score <rankereval.Metric.score>`,
        :func:`rankereval.evaluate` and :func:`rankereval.compare`: the labels, then the
        scores or rankings. The order of rankereval 0.3 (``update(scores_or_rankings,
        labels)``) still works, with a ``DeprecationWarning``, where the types tell it
        apart (a ``Labels`` object second, or a ``Rankings`` object first); two matrices
        that look swapped (``y_true`` with values that are not grades, or ``y_pred``
        boolean) raise a ``TypeError`` naming both arguments instead of returning a number.

        Parameters
        ----------
        y_true : BinaryLabels, NumericLabels, or array-like of shape (n, n_items)
            The batch's relevant items. A dense or sparse matrix (or CPU tensor) is read as
            :class:`~rankereval.BinaryLabels` when boolean, else as graded
            :class:`~rankereval.NumericLabels` (binary metrics count grades of at least
            ``relevance_level``); its values must be grades: whole numbers >= 0 (give
            fractional grades as ``NumericLabels``).
        y_pred : array-like of shape (n, n_items), CPU tensor, or Rankings
            Item scores of the batch's queries (NumPy, SciPy sparse, or any object with
            ``__dlpack__``/``__array__`` in host memory, e.g. a PyTorch CPU tensor; ranked
            by :meth:`Rankings.from_scores <rankereval.Rankings.from_scores>` with ``k``), or
            their :class:`~rankereval.Rankings`.
        query_ids : array-like of int or str, shape (n,), optional
            The query id of each row: the Poisson bootstrap's keys, the rows of the
            constructor's ``invalid_items``, and what :meth:`compute` reports. Give them in
            every batch or in none.
        invalid_items : optional
            Items not to rank in this batch, one row per row of scores (as in
            :meth:`Rankings.from_scores <rankereval.Rankings.from_scores>`).

        Raises
        ------
        TypeError
            For inputs of the wrong type, arguments that look swapped, or tensors in GPU
            memory (move them with ``.cpu()``).
        ValueError
            For row counts that differ, a query id seen before (``check_query_ids``), or ids
            given in some batches and not in others.
        """
        labels, scores_or_rankings = _data_first(y_true, y_pred)
        rankings = self._rankings(scores_or_rankings, query_ids, invalid_items)
        binary, numeric = self._labels(labels, rankings.n_rows)
        n = rankings.n_rows
        kind, ids, hashes = self._keys(query_ids, n)
        # every check before the state changes: a refused batch leaves the accumulator as it was
        new_seen = self._check_new(hashes, ids) if (self._check_ids and kind != "row") else None
        scores = _score_columns(self._batch_columns(query_ids, n), binary, numeric, rankings,
                                self._relevance_level, self._ties)
        # evaluate's rule: a thread per 2**20 draws (the sums do not depend on it)
        n_threads = _engine.poisson_threads(n, self._n_boot) if self._conf_interval else 1
        weights = (column_weights(self._columns, binary, numeric, rankings, self._relevance_level)
                   if self._weighted else None)
        part = _partials(scores, self._nan_handling, hashes if self._conf_interval else None, self._seed,
                         self._n_boot if self._conf_interval else 0, n_threads, self._geometric, weights=weights)
        self._part = _merge_partials(self._part, part)
        self._id_kind = kind
        if new_seen is not None:
            self._add_seen(new_seen)
        if self._keep_scores:
            scores.flags.writeable = False
            self._scores.append(scores)
            self._ids.append(ids)

    def _batch_columns(self, query_ids, n):
        """The metric columns for this batch: a metric whose input has one row per ranking
        (Serendipity's history) gets the batch's rows, by integer query id as ``invalid_items``
        (row ``q`` for query ``q``), or without query ids by the rows' numbers in the stream
        (the rows of ``evaluate`` on the concatenated batches)."""
        if not any(m.info.row_inputs for _, m in self._columns):
            return self._columns
        if query_ids is None:
            rows = np.arange(self.n_rankings, self.n_rankings + n, dtype=np.int64)
        else:
            rows = np.asarray(_host_array(query_ids, "query_ids"))
            if rows.dtype.kind not in "iu":
                raise TypeError("a metric's input has one row per query id (Serendipity's history): "
                                f"query_ids must be integers, got dtype {rows.dtype}")
        return _columns_for_rows(self._columns, rows)

    def _rankings(self, x, query_ids, invalid_items):
        if isinstance(x, Rankings):
            if invalid_items is not None:
                raise TypeError("invalid_items applies to scores; these are Rankings already")
            return x
        x = _host_array(x, "y_pred")
        if invalid_items is None and self._invalid is not None:
            if query_ids is None:
                raise ValueError("the accumulator's invalid_items has one row per query id: give the "
                                 "batch's query_ids to update()")
            rows = np.asarray(_host_array(query_ids, "query_ids"))
            if rows.dtype.kind not in "iu":
                raise TypeError("the accumulator's invalid_items is indexed by query id: query_ids must be "
                                f"integers, got dtype {rows.dtype}")
            if rows.size and (rows.min() < 0 or rows.max() >= self._invalid.shape[0]):
                raise ValueError(f"query_ids must be row numbers of invalid_items (0 .. "
                                 f"{self._invalid.shape[0] - 1}), got ids from {rows.min()} to {rows.max()}")
            invalid_items = self._invalid[rows]
        try:
            return Rankings.from_scores(x, invalid_items=invalid_items, k=self.k,
                                        ties="break" if self._ties is None else "keep")
        except (TypeError, ValueError) as exc:  # named by update()'s argument, not from_scores'
            raise type(exc)(str(exc).replace("raw_scores", "y_pred")) from None

    @staticmethod
    def _labels(labels, n):
        if not isinstance(labels, Labels):
            import scipy.sparse as sp

            labels = _host_array(labels, "labels")
            if isinstance(labels, (list, tuple)):
                raise TypeError("labels: give a matrix (dense, sparse or a CPU tensor) or Labels; for lists "
                                "of relevant items use BinaryLabels.from_positive_indices")
            if not (isinstance(labels, np.ndarray) or sp.issparse(labels)):
                raise TypeError("labels must be BinaryLabels, NumericLabels, a 2-D array, a SciPy sparse "
                                f"matrix or a CPU tensor, got {type(labels).__name__}")
            labels = (BinaryLabels if labels.dtype == np.bool_ else NumericLabels).from_matrix(labels)
        if labels.n_rows != n:
            raise ValueError(f"labels has {labels.n_rows} rows but the batch has {n} rankings; give one "
                             "row of labels per ranking")
        if isinstance(labels, NumericLabels):
            return None, labels
        return labels, None

    def _keys(self, query_ids, n):
        from rankereval.stats._resampling import id_kind, query_key_hashes

        if query_ids is None:
            if self._id_kind not in (None, "row"):
                raise ValueError("query_ids: earlier batches had query ids; give them in every batch")
            if not self._conf_interval:
                return "row", None, None
            start = self.n_rankings
            return "row", None, query_key_hashes(np.arange(start, start + n, dtype=np.int64))
        ids = np.asarray(_host_array(query_ids, "query_ids"))
        if ids.ndim != 1 or ids.shape[0] != n:
            raise ValueError(f"query_ids must have one id per ranking ({n}), got shape {ids.shape}")
        kind = id_kind(ids, "query_ids") if n else (self._id_kind if self._id_kind not in (None, "row") else None)
        if self._id_kind == "row" and self.n_rankings:
            raise ValueError("query_ids: earlier batches had none (their rows are keyed by row number); "
                             "give query ids in every batch or in none")
        if kind is not None and self._id_kind not in (None, "row", kind):
            raise TypeError(f"query_ids are {kind}s in this batch but {self._id_kind}s before; use one type "
                            "for every id")
        return kind or self._id_kind, ids, query_key_hashes(ids, n) if n else np.empty(0, np.uint64)

    # -- the check that no query comes twice ---------------------------------------------------
    def _seen_hashes(self):
        return np.concatenate(self._seen) if self._seen else np.empty(0, np.uint64)

    def _check_new(self, hashes, ids=None, where="this batch"):
        """``hashes`` sorted, after checking none repeats or was seen (ValueError naming the id)."""
        order = np.argsort(hashes, kind="stable")
        srt = hashes[order]
        same = np.flatnonzero(srt[1:] == srt[:-1])
        if same.size:
            raise ValueError(f"query id {self._name(ids, order[same[0]], srt[same[0]])} is twice in {where}; "
                             "every query must be evaluated once (or use check_query_ids=False)")
        for chunk in self._seen:
            pos = np.searchsorted(chunk, srt)
            hit = (pos < chunk.size) & (chunk[np.minimum(pos, chunk.size - 1)] == srt)
            if hit.any():
                i = int(np.argmax(hit))
                raise ValueError(f"query id {self._name(ids, order[i], srt[i])} was seen before ({where} "
                                 "repeats it); every query must be evaluated once: a sampler that pads "
                                 "the last batches repeats queries (or use check_query_ids=False)")
        return srt

    @staticmethod
    def _name(ids, i, h):
        if ids is None:
            return f"with key hash {int(h):#018x}"
        v = ids[i]
        return repr(v.item() if isinstance(v, np.generic) else v)

    def _add_seen(self, srt):
        """Keep sorted chunks of hashes; merge neighbours of similar size (amortised n log n)."""
        if srt.size:
            self._seen.append(srt)
        while len(self._seen) > 1 and self._seen[-2].size <= 2 * self._seen[-1].size:
            b, a = self._seen.pop(), self._seen.pop()
            self._seen.append(np.sort(np.concatenate([a, b]), kind="stable"))

    # -- merge, state --------------------------------------------------------------------
    def merge(self, other):
        """Add the batches of another accumulator (or its :meth:`state_dict`) to this one.

        Exact: merging in any grouping and order gives the same :meth:`compute`. Both must
        have the same metrics and options (and int ``random_state`` with intervals), and
        hold disjoint queries. Per-query scores (``keep_scores``) are appended after this
        accumulator's. Returns ``self``.
        """
        if isinstance(other, dict):
            other = self._from_state(other)
        elif not isinstance(other, Accumulator):
            raise TypeError(f"merge() takes an Accumulator or a state_dict(), got {type(other).__name__}")
        elif other._config() != self._config():
            raise ValueError("cannot merge accumulators with different metrics or options "
                             f"(this one: {self._config()}; the other: {other._config()})")
        kinds = {self._id_kind, other._id_kind} - {None}
        if len(kinds) > 1:
            if "row" in kinds:
                raise ValueError("cannot merge an accumulator whose batches had query_ids with one whose "
                                 "batches had none: give query_ids in every update() or in none")
            raise TypeError(f"query ids are {self._id_kind}s in one accumulator and {other._id_kind}s in "
                            "the other; use one type for every id")
        if kinds == {"row"} and self._conf_interval and self.n_rankings and other.n_rankings:
            raise ValueError("cannot merge accumulators whose batches had no query_ids: their rows are keyed "
                             "by row number, so the bootstrap keys would repeat; give query_ids in update()")
        if self._check_ids and other._seen:
            ids = other._joined_ids() if other._keep_scores else None
            hashes = other._seen_hashes()
            if ids is not None:
                from rankereval.stats._resampling import query_key_hashes

                hashes = query_key_hashes(ids)
            new = self._check_new(hashes, ids, where="the merged accumulator")
        else:
            new = None
        self._part = _merge_partials(self._part, other._part)
        self._id_kind = self._id_kind if other._id_kind is None else (
            other._id_kind if self._id_kind in (None, "row") else self._id_kind)
        if new is not None:
            self._add_seen(new)
        if self._keep_scores:
            self._scores += other._scores
            self._ids += other._ids
        return self

    def _joined_ids(self):
        """The query ids of the per-query scores kept (``keep_scores``), in order, or None
        when the rows have none (row numbers) or there is no row: batches (or merged states)
        without rows hold no ids, whichever way they were merged."""
        parts = [i for s, i in zip(self._scores, self._ids) if len(s)]
        if not parts or self._id_kind in (None, "row") or any(i is None for i in parts):
            return None
        return np.concatenate([np.asarray(i) for i in parts])

    def state_dict(self):
        """The state as a dict of plain NumPy arrays (picklable; no rankings or scores
        unless ``keep_scores``): send it to another process and :meth:`merge` it there, or
        :meth:`load_state_dict` it."""
        p = self._part
        state = {"config": np.array(self._config()), "id_kind": np.array(self._id_kind or ""),
                 "n": np.array(p["n"], dtype=np.int64), "n_undefined": np.asarray(p["n_undefined"]),
                 "n_used": np.asarray(p["n_used"]), "min": p["min"], "max": p["max"],
                 **{f"sum.{k}": v for k, v in p["sum"].state().items()}}
        if "sums" in p:
            state.update({f"sums.{k}": v for k, v in p["sums"].state().items()})
            state["weights"] = p["weights"]
        for key in ("wsum", "wsums"):  # a weighted mean's sums of the query weights (GAUC)
            if key in p:
                state.update({f"{key}.{k}": v for k, v in p[key].state().items()})
        if self._check_ids:
            state["seen"] = np.sort(self._seen_hashes())
        if self._keep_scores:
            m = len(self._columns)
            state["scores"] = np.concatenate(self._scores) if self._scores else np.empty((0, m))
            ids = self._joined_ids()
            if ids is not None:
                state["query_ids"] = ids
        return {k: (v.copy() if isinstance(v, np.ndarray) else np.asarray(v)) for k, v in state.items()}

    def load_state_dict(self, state):
        """Replace the state by one from :meth:`state_dict` (same metrics and options)."""
        other = self._from_state(state)
        self._part, self._id_kind, self._seen = other._part, other._id_kind, other._seen
        self._scores, self._ids = other._scores, other._ids

    def _from_state(self, state):
        if not isinstance(state, dict):
            raise TypeError(f"state: expected a dict from Accumulator.state_dict(), got {type(state).__name__}")
        if "config" not in state:
            raise ValueError("state: not a dict from Accumulator.state_dict() (it has no 'config' entry)")
        config = str(np.asarray(state["config"]))
        if config != self._config():
            raise ValueError("the state comes from an accumulator with other metrics or options "
                             f"(its: {config}; this one: {self._config()})")
        needed = ["id_kind", "n", "n_undefined", "n_used", "min", "max", "sum.lo", "sum.limbs", "sum.inf"]
        if self._conf_interval:
            needed += ["sums.lo", "sums.limbs", "sums.inf", "weights"]
        if self._weighted:
            needed += ["wsum.lo", "wsum.limbs", "wsum.inf"]
            if self._conf_interval:
                needed += ["wsums.lo", "wsums.limbs", "wsums.inf"]
        if self._keep_scores:
            needed.append("scores")
        missing = [k for k in needed if k not in state]
        if missing:
            raise ValueError(f"state: entries {missing} are missing (not a complete Accumulator.state_dict())")
        try:
            return self._state_parts(state)
        except (TypeError, ValueError, OverflowError) as exc:
            if str(exc).startswith("state"):
                raise
            raise ValueError(f"state: an entry of the wrong kind or shape ({exc})") from None

    def _state_parts(self, state):
        m = len(self._columns)
        if np.asarray(state["id_kind"]).ndim or str(np.asarray(state["id_kind"])) not in ("", "row", "int", "str"):
            raise ValueError(f"state entry 'id_kind' must be '', 'row', 'int' or 'str', got {state['id_kind']!r}")
        other = object.__new__(Accumulator)
        other.__dict__.update(self.__dict__)
        part = {"n": np.int64(state["n"]), "n_undefined": np.array(state["n_undefined"], dtype=np.int64),
                "n_used": np.array(state["n_used"], dtype=np.int64),
                "sum": ExactSum.from_state({k: state[f"sum.{k}"] for k in ("lo", "limbs", "inf")}, (m,)),
                "min": np.array(state["min"], dtype=np.float64), "max": np.array(state["max"], dtype=np.float64)}
        if self._conf_interval:
            part["sums"] = ExactSum.from_state({k: state[f"sums.{k}"] for k in ("lo", "limbs", "inf")},
                                               (m, self._n_boot))
            part["weights"] = np.array(state["weights"], dtype=np.float64)
            if part["weights"].shape != (m, self._n_boot):
                raise ValueError(f"state_dict entry 'weights' has shape {part['weights'].shape}, expected "
                                 f"({m}, {self._n_boot})")
        if self._weighted:
            part["wsum"] = ExactSum.from_state({k: state[f"wsum.{k}"] for k in ("lo", "limbs", "inf")}, (m,))
            if self._conf_interval:
                part["wsums"] = ExactSum.from_state({k: state[f"wsums.{k}"] for k in ("lo", "limbs", "inf")},
                                                    (m, self._n_boot))
        for key in ("n_undefined", "n_used", "min", "max"):
            if part[key].shape != (m,):
                raise ValueError(f"state_dict entry {key!r} has shape {part[key].shape}, expected ({m},)")
        if self._keep_scores:
            scores = np.array(state["scores"], dtype=np.float64)
            if scores.ndim != 2 or scores.shape[1] != m or scores.shape[0] != part["n"]:
                raise ValueError(f"state_dict entry 'scores' has shape {scores.shape}, expected "
                                 f"({int(part['n'])}, {m})")
            if "query_ids" in state and np.asarray(state["query_ids"]).shape != (scores.shape[0],):
                raise ValueError(f"state_dict entry 'query_ids' has shape {np.asarray(state['query_ids']).shape}, "
                                 f"expected ({scores.shape[0]},)")
        other._part = part
        other._id_kind = str(np.asarray(state["id_kind"])) or None
        seen = np.array(state.get("seen", np.empty(0, np.uint64)), dtype=np.uint64)
        other._seen = [np.sort(seen)] if seen.size else []
        other._scores, other._ids = [], []
        if self._keep_scores:
            other._scores = [np.array(state["scores"], dtype=np.float64)]
            other._ids = [np.asarray(state["query_ids"]) if "query_ids" in state else None]
        return other

    # -- the result ----------------------------------------------------------------------
    def compute(self):
        """The :class:`~rankereval.Evaluation` of every batch so far: what
        :func:`rankereval.evaluate` gives on the concatenated batches (``resampling='poisson'``
        and the same ``random_state`` for the intervals), bit for bit. ``scores`` and
        ``query_ids`` are None unless ``keep_scores``. The state is kept (call
        :meth:`reset` for the next epoch).

        Warns
        -----
        UndefinedMetricWarning
            With ``nan_handling='propagate'``, for metrics undefined on some ranking, as
            ``evaluate``.
        """
        import warnings

        from rankereval.exceptions import UndefinedMetricWarning

        means, intervals, n_used, n_undefined, notes = _summarise(
            self._part, self._columns, self._nan_handling, self._n_boot, self._confidence)
        if notes:
            warnings.warn("\n".join(notes), UndefinedMetricWarning, stacklevel=user_stacklevel())
        scores = query_ids = None
        if self._keep_scores:
            scores = (np.concatenate(self._scores) if self._scores else np.empty((0, len(self._columns))))
            scores.flags.writeable = False
            query_ids = self._joined_ids()
        return Evaluation(scores, self.names, [m for _, m in self._columns], query_ids, means,
                          intervals if self._conf_interval else None, n_used, n_undefined,
                          self._nan_handling, self._confidence if self._conf_interval else None,
                          n_rankings=self.n_rankings)

    def __repr__(self):
        ci = f", conf_interval with {self._n_boot} resamples" if self._conf_interval else ""
        return f"Accumulator({', '.join(self.names)}; {self.n_rankings} rankings{ci})"


def _data_first(y_true, y_pred):
    """``(labels, scores or rankings)`` of an ``update(y_true, y_pred)`` call: the old order
    (scores or rankings, labels) where the types tell it (with a DeprecationWarning), a
    TypeError naming both arguments where two matrices look swapped."""
    true_labels, pred_labels = isinstance(y_true, Labels), isinstance(y_pred, Labels)
    if true_labels and pred_labels:
        raise TypeError("y_true and y_pred are both Labels; update(y_true, y_pred) takes the labels, "
                        "then the scores or Rankings")
    if isinstance(y_true, Rankings) and isinstance(y_pred, Rankings):
        raise TypeError("y_true and y_pred are both Rankings; update(y_true, y_pred) takes the labels, "
                        "then the scores or Rankings")
    if isinstance(y_true, Rankings) or (pred_labels and not true_labels):
        warnings.warn("Accumulator.update(scores_or_rankings, labels) is deprecated: pass the data first, "
                      "update(y_true, y_pred), as Metric.score, evaluate and compare (the old order is "
                      "recognised from the Labels/Rankings types for one release)",
                      DeprecationWarning, stacklevel=user_stacklevel())
        return y_pred, y_true
    if true_labels or isinstance(y_pred, Rankings):
        return y_true, y_pred
    import scipy.sparse as sp

    t = _host_array(y_true, "y_true")
    p = _host_array(y_pred, "y_pred")
    values = t.data if sp.issparse(t) else t
    if isinstance(values, np.ndarray) and values.dtype.kind == "f" and values.size:
        with np.errstate(invalid="ignore"):
            not_grades = bool(((values != np.floor(values)) | (values < 0)).any())
    else:
        not_grades = isinstance(values, np.ndarray) and values.dtype.kind == "i" and values.size \
            and bool((values < 0).any())
    pred_values = p.data if sp.issparse(p) else p
    if not_grades or (isinstance(pred_values, np.ndarray) and pred_values.dtype == np.bool_):
        raise TypeError(
            "y_true and y_pred look swapped: update(y_true, y_pred) takes the labels first (boolean, or "
            "whole-number grades >= 0) and the scores second, but "
            + ("y_true holds values that are not grades (fractions or negative numbers: scores?)"
               if not_grades else "y_pred is boolean (labels?)")
            + ". Call update(labels, scores) (the order of Metric.score and evaluate); give fractional "
            "grades as NumericLabels")
    return t, p


Accumulator.__module__ = "rankereval"  # documented and pickled under the public name (rankereval/__init__.py)
