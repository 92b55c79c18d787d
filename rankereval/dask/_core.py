"""Partitioned inputs, the per-partition work and the tree reduction of rankereval.dask."""
import math
import os
from dataclasses import dataclass

import numpy as np

try:
    import dask
    import dask.array as da
    import dask.dataframe as dd
    from dask import delayed
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("rankereval.dask needs Dask: pip install 'rankereval[dask]' "
                      "(dask[array,dataframe] and distributed)") from exc

from rankereval.stats import _engine
from rankereval.stats._engine import geometric_columns as _geometric, merge_partials as _merge_partials
from rankereval.stats._engine import partials as _partials, summarise as _summarise
from rankereval.evaluation._columns import check_relevance_level, metric_columns as _metric_columns
from rankereval.evaluation._columns import refuse_catalogue_metrics as _refuse_catalogue_metrics
from rankereval.evaluation._columns import column_weights as _column_weights
from rankereval.evaluation._columns import columns_for_items as _columns_for_items
from rankereval.evaluation._columns import score_columns as _score_columns
from rankereval.evaluation._evaluate import Evaluation
from rankereval._stack import user_stacklevel
from rankereval._validation import check_flag
from rankereval.stats._resampling import id_kind, query_key_hashes
from rankereval.data import BinaryLabels, NumericLabels, Rankings
from rankereval.io._arrow import RepeatedQueryError, list_column, nested_queries, one_array

__all__ = ["evaluate", "DaskEvaluation", "PartitionedData", "from_dataframes", "from_arrays",
           "read_parquet", "repartition_by_query"]

#: partial sums merged per node of the reduction tree
SPLIT_EVERY = 8


class PartitionError(ValueError):
    """Bad input found in one partition (the message names it)."""


@dataclass(frozen=True)
class _Block:
    """One partition, loaded: labels, rankings and the key of each row."""

    binary: object      # BinaryLabels or None
    numeric: object     # NumericLabels or None
    rankings: Rankings
    keys: np.ndarray    # query ids (int or str), one per row
    kinds: dict         # id column -> 'int' | 'str' (checked across partitions)
    seen: object = None  # every query id of the partition's input, evaluated or not (None: keys)
    doc_ids: object = None  # item j is the user's item doc_ids[j] (None: the ids as given)


def _empty_block(kinds, seen, graded):
    """A partition without a query to evaluate (its ids still take part in the split check)."""
    import scipy.sparse as sp

    empty = sp.csr_matrix((0, 0))
    judged = BinaryLabels.from_matrix(empty)  # (no rows: nothing judged, as in every other block's form)
    return _Block(None if graded else judged.with_judged(judged),
                  NumericLabels.from_matrix(empty).with_judged(judged) if graded else None,
                  Rankings.from_ranked_indices(np.empty((0, 0), dtype=np.int64), pad=-1),
                  np.empty(0, dtype=np.int64 if kinds.get("query") != "str" else str), kinds, seen)


class PartitionedData:
    """Labels and rankings split into partitions of whole queries, not yet loaded.

    Made by :func:`from_dataframes`, :func:`from_arrays` or :func:`read_parquet`, and
    evaluated by :func:`evaluate`. Partition ``p`` is a function call that loads a
    :class:`_Block`, made by the task that evaluates it; nothing is read before ``compute``.

    Attributes
    ----------
    npartitions : int
    source : str
        What the partitions come from (for error messages and ``repr``).
    """

    def __init__(self, loads, source, check_split):
        # per partition (function, args, key): function(*args) -> _Block; args may hold Dask
        # Delayed objects (partitions of the inputs); key names the load (unique to its input)
        self._loads = list(loads)
        self.source = source
        self._check_split = check_split

    @property
    def npartitions(self):
        return len(self._loads)

    def _block(self, p):
        """Partition ``p`` loaded by a task of its own (a Dask Delayed _Block)."""
        load, args, key = self._loads[p]
        return delayed(load, pure=True)(*args, dask_key_name=key)

    def __repr__(self):
        return f"PartitionedData(npartitions={self.npartitions}, source={self.source!r})"


# ------------------------------------------------------------------------------------------
# Inputs
# ------------------------------------------------------------------------------------------

def _id_kind(values, what, p):
    """'int' or 'str' for a column of ids; PartitionError for floats, bools or a mix."""
    try:
        return id_kind(values, f"{what} ids")
    except TypeError as exc:
        raise PartitionError(f"partition {p}: {exc}") from None


def _load_frames(labels, run, p, options):
    """Partition ``p`` of two long-format pandas frames -> _Block (the in-memory reader)."""
    from rankereval.io import from_dataframes as read_frames

    q, it = options["query_col"], options["item_col"]
    kinds = {}
    for df, what in ((labels, "labels"), (run, "run")):
        for col, name in ((q, "query"), (it, "item")):
            if col in df.columns:
                kind = _id_kind(df[col].to_numpy(), f"{what} {name}", p)
                if kinds.setdefault(name, kind) != kind:
                    raise PartitionError(f"partition {p}: {name} ids are {kinds[name]}s in one frame and "
                                         f"{kind}s in the other; use one type for every id")
    lq, rq = labels[q].unique(), run[q].unique()
    seen = np.asarray(_union_ids(lq, rq))
    evaluable = len(set(lq) & set(rq))
    if options.get("missing") == "empty":
        evaluable += len(lq)
    if options.get("extra") == "keep":
        evaluable += len(rq)
    if not evaluable:
        return _empty_block(kinds, seen, graded=True)
    try:
        data = read_frames(labels, run, **options)
    except (TypeError, ValueError) as exc:
        raise PartitionError(f"partition {p}: {exc}") from exc
    return _Block(None, data.numeric_labels, data.rankings, np.asarray(data.query_ids), kinds, seen,
                  data.doc_ids)


def _union_ids(a, b):
    """The distinct values of two arrays of ids, in first-appearance order."""
    import pandas as pd

    return pd.unique(np.concatenate([np.asarray(a, dtype=object), np.asarray(b, dtype=object)]))


def from_dataframes(labels, run, query_col="query", item_col="item", label_col="label", score_col=None,
                    rank_col=None, tie_break="trec_eval", missing="drop", extra="drop", *, ties="break"):
    """Partitioned data from two long-format Dask DataFrames, partitioned by query.

    Parameters
    ----------
    labels, run : dask.dataframe.DataFrame
        As the pandas frames of :func:`rankereval.io.from_dataframes`: ``labels`` has
        ``(query_col, item_col, label_col)``, ``run`` has ``(query_col, item_col)`` and a
        score or rank column. Both have the same number of partitions, and partition ``p``
        of both holds every row of the queries it holds (:func:`repartition_by_query` makes
        it so). A query found in two partitions is an error, not a wrong number.
    query_col, item_col, label_col, score_col, rank_col, tie_break, missing, extra, ties
        As in :func:`rankereval.io.from_dataframes`, which reads each partition.

    Returns
    -------
    PartitionedData
        Whose query keys (for the Poisson bootstrap) are the query ids.
    """
    for df, what in ((labels, "labels"), (run, "run")):
        if not isinstance(df, dd.DataFrame):
            raise TypeError(f"{what} must be a dask.dataframe.DataFrame, got {type(df).__name__}")
    if labels.npartitions != run.npartitions:
        raise ValueError(f"labels has {labels.npartitions} partitions but run has {run.npartitions}; "
                         "partition both by query the same way (rankereval.dask.repartition_by_query)")
    from rankereval.data._rankings import check_ties_keep

    options = dict(query_col=query_col, item_col=item_col, label_col=label_col, score_col=score_col,
                   rank_col=rank_col, tie_break=tie_break, missing=missing, extra=extra)
    if check_ties_keep(ties):  # (the options of the default stay as they were: the same task keys)
        options["ties"] = "keep"
    loads = [(_load_frames, (lab, r, p, options), f"rankereval-load-{p}-{dask.base.tokenize(lab.key, r.key, options)}")
              for p, (lab, r) in enumerate(zip(labels.to_delayed(), run.to_delayed()))]
    return PartitionedData(loads, "dask DataFrames", check_split=True)


def repartition_by_query(labels, run, query_col="query", npartitions=None):
    """Shuffle two long-format Dask DataFrames so that each query is in one partition.

    Rows move to partition ``hash(query) % npartitions`` of both frames (Dask's
    ``DataFrame.shuffle``), so partition ``p`` of the labels and of the run hold the same
    queries.

    Cost: a full shuffle. Every row of both frames is hashed and sent over the network to
    its new partition (an all-to-all exchange of the whole data set, which Dask's P2P
    shuffle spills to disk when it does not fit in memory); budget about one extra pass
    over the data in time and the data set's size in transient memory or disk across the
    cluster. Data written partitioned by query (e.g. Parquet files per query range) needs
    none of it: use :func:`read_parquet` or ``dask.dataframe.read_parquet`` directly.

    Parameters
    ----------
    labels, run : dask.dataframe.DataFrame
    query_col : str, default='query'
        The query id column, of the same dtype in both frames (hashes depend on it).
    npartitions : int, optional
        Partitions of the result (default: the larger of the two frames' counts).

    Returns
    -------
    (labels, run) : tuple of dask.dataframe.DataFrame
    """
    for df, what in ((labels, "labels"), (run, "run")):
        if not isinstance(df, dd.DataFrame):
            raise TypeError(f"{what} must be a dask.dataframe.DataFrame, got {type(df).__name__}")
        if query_col not in df.columns:
            raise ValueError(f"{what} has no column {query_col!r} (columns: {list(df.columns)})")
    if labels[query_col].dtype != run[query_col].dtype:
        raise TypeError(f"the query columns have different dtypes ({labels[query_col].dtype} in labels, "
                        f"{run[query_col].dtype} in run): their hashes would differ; cast one first")
    if npartitions is None:
        npartitions = max(labels.npartitions, run.npartitions)
    return (labels.shuffle(on=query_col, npartitions=npartitions),
            run.shuffle(on=query_col, npartitions=npartitions))


def _padded_labels(ids, grades, p, offset):
    """Labels from a padded 2-D array of item ids (-1 after the last) and optional grades."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise PartitionError(f"partition {p}: label item ids must be integers, got dtype {ids.dtype}")
    mask = ids >= 0
    if (ids < -1).any():
        r = int(np.argmax((ids < -1).any(axis=1)))
        raise PartitionError(f"partition {p}, row {offset + r}: label item ids must be >= 0 (-1 pads)")
    if grades is not None:
        grades = np.asarray(grades, dtype=np.float64)
        if grades.shape != ids.shape:
            raise PartitionError(f"partition {p}: grades have shape {grades.shape}, label ids {ids.shape}")
    n = ids.shape[0]
    big = np.iinfo(np.int64).max
    keyed = np.where(mask, ids, big).astype(np.int64)
    order = np.argsort(keyed, axis=1, kind="stable")
    srt = np.take_along_axis(keyed, order, axis=1)
    dup = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] != big)
    if dup.any():
        r = int(np.argmax(dup.any(axis=1)))
        item = int(srt[r, 1:][dup[r]][0])
        raise PartitionError(f"partition {p}, row {offset + r}: duplicate label item {item}")
    keep = srt != big
    counts = keep.sum(axis=1)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = srt[keep]
    n_items = int(indices.max()) + 1 if indices.size else 0
    import scipy.sparse as sp

    # every listed item is judged (grade 0: judged not relevant), as rankereval.io reads them
    judged = BinaryLabels.from_matrix(sp.csr_matrix((np.ones(indices.size), indices, indptr), shape=(n, n_items)))
    if grades is None:
        return judged.with_judged(judged), None
    vals = np.take_along_axis(grades, order, axis=1)[keep]
    m = sp.csr_matrix((vals, indices, indptr), shape=(n, n_items))
    return None, NumericLabels.from_matrix(m).with_judged(judged)


def _load_arrays(label_ids, grades, rankings, p, offset):
    try:
        binary, numeric = _padded_labels(label_ids, grades, p, offset)
        ranks = Rankings.from_ranked_indices(np.asarray(rankings), pad=-1)
    except PartitionError:
        raise
    except (TypeError, ValueError) as exc:
        raise PartitionError(f"partition {p} (rows {offset}..): {exc}") from exc
    if ranks.n_rows != np.asarray(label_ids).shape[0]:
        raise PartitionError(f"partition {p}: {np.asarray(label_ids).shape[0]} label rows, "
                             f"{ranks.n_rows} rankings")
    keys = np.arange(offset, offset + ranks.n_rows, dtype=np.int64)
    return _Block(binary, numeric, ranks, keys, {"query": "int"})


def from_arrays(labels, rankings, grades=None):
    """Partitioned data from row-chunked 2-D Dask arrays; row ``i`` is query ``i``.

    Parameters
    ----------
    labels : dask.array.Array of int, shape (n, m)
        Row ``i``: the relevant item ids of query ``i``, padded with ``-1``.
    rankings : dask.array.Array of int, shape (n, k)
        Row ``i``: the ranked item ids of query ``i``, best first, padded with ``-1``.
    grades : dask.array.Array of float, shape (n, m), optional
        Grades of the items of ``labels`` (graded labels, as :class:`~rankereval.NumericLabels`;
        binary metrics then threshold them at ``relevance_level``).

    All three must have the same row chunks; each is rechunked to one chunk along its
    columns if needed. The query key of row ``i`` is ``i`` (the in-memory default).
    """
    arrays = {"labels": labels, "rankings": rankings}
    if grades is not None:
        arrays["grades"] = grades
    for name, a in arrays.items():
        if not isinstance(a, da.Array) or a.ndim != 2:
            raise TypeError(f"{name} must be a 2-D dask.array.Array, got {type(a).__name__}"
                            + (f" with {a.ndim} dimensions" if isinstance(a, da.Array) else ""))
        if any(math.isnan(c) for c in a.chunks[0]):
            raise ValueError(f"{name} has unknown chunk sizes; call {name}.compute_chunk_sizes() first")
    for name, a in arrays.items():
        if a.chunks[0] != rankings.chunks[0]:
            raise ValueError(f"{name} has row chunks {a.chunks[0]} but rankings has {rankings.chunks[0]}; "
                             "rechunk them alike (row i of every array is query i)")
    arrays = {k: (a.rechunk({1: -1}) if len(a.chunks[1]) > 1 else a) for k, a in arrays.items()}
    offsets = np.concatenate([[0], np.cumsum(rankings.chunks[0])]).astype(np.int64)
    lab = arrays["labels"].to_delayed().ravel()
    run = arrays["rankings"].to_delayed().ravel()
    gr = arrays["grades"].to_delayed().ravel() if grades is not None else [None] * len(run)
    loads = [(_load_arrays, (lab[p], gr[p], run[p], p, int(offsets[p])),
              f"rankereval-arrays-{p}-{dask.base.tokenize(lab[p].key, gr[p] is not None and gr[p].key, run[p].key, int(offsets[p]))}")
             for p in range(len(run))]
    return PartitionedData(loads, "dask arrays", check_split=False)


def _list_files(path, what):
    if os.path.isdir(path):
        files = sorted(os.path.join(root, f) for root, _, names in os.walk(path) for f in names
                       if f.endswith(".parquet") or f.endswith(".parq"))
        if not files:
            raise ValueError(f"{what}: no .parquet files under {path!r}")
        return files
    if os.path.isfile(path):
        return [path]
    raise ValueError(f"{what}: {path!r} is neither a Parquet file nor a directory")


def _read_pair(labels_file, run_file, options):
    """The columns that a partition needs of its two Parquet files: ``(labels, run, nested)``,
    two :class:`pyarrow.Table` and whether the run's item column is a list column.

    All of a partition's Parquet I/O (benchmarks/bench_dask.py times it alone). Files are
    memory-mapped (no copy of their bytes through read buffers) and decoded on the calling
    thread: a Dask worker's thread is its core, and pyarrow's own pool would compete with
    the other workers.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    q, it, lab_col = options["query_col"], options["item_col"], options["label_col"]
    # ParquetFile reads a row group as one chunk (read_table's scanner cuts batches of 128k
    # rows, which a list column then pays a copy to join)
    lab_file, run_file = pq.ParquetFile(labels_file, memory_map=True), pq.ParquetFile(run_file, memory_map=True)
    run_schema, lab_schema = run_file.schema_arrow, lab_file.schema_arrow
    item_type = run_schema.field(it).type if it in run_schema.names else None
    nested = item_type is not None and (pa.types.is_list(item_type) or pa.types.is_large_list(item_type))
    lab_cols = [q, it] + ([lab_col] if lab_col in lab_schema.names else [])
    if nested:
        run_cols = [q, it]
    else:
        rank_side = [c for c in (options["score_col"], options["rank_col"]) if c is not None]
        run_cols = [q, it] + (rank_side or [c for c in ("score", "rank") if c in run_schema.names][:1])
    return (lab_file.read(columns=lab_cols, use_threads=False),
            run_file.read(columns=run_cols, use_threads=False), nested)


def _load_parquet(labels_file, run_file, p, options):
    """Partition ``p``: a pair of Parquet files, long or nested layout -> _Block."""
    q, it, lab_col = options["query_col"], options["item_col"], options["label_col"]
    try:
        lab, run, nested = _read_pair(labels_file, run_file, options)
    except (KeyError, ValueError) as exc:   # pyarrow's errors of a missing column are both
        raise PartitionError(f"partition {p} ({labels_file}, {run_file}): {exc}") from exc
    if not nested:
        labels, run = lab.to_pandas(), run.to_pandas()
        if lab_col not in labels.columns:
            labels[lab_col] = 1
        frame_opts = {k: v for k, v in options.items() if k != "relevance_level"}
        return _load_frames(labels, run, p, frame_opts)
    try:
        lq, rq = np.asarray(one_array(lab.column(q))), np.asarray(one_array(run.column(q)))
        kinds = {"query": _id_kind(rq, "run query", p)}
        if _id_kind(lq, "labels query", p) != kinds["query"]:
            raise PartitionError(f"partition {p}: query ids are of different types in labels and run")
        l_off, l_items = list_column(lab.column(it))
        r_off, r_items = list_column(run.column(it))
        for name, a in (("labels", l_items), ("run", r_items)):
            if a.dtype.kind not in "iu":
                raise PartitionError(f"partition {p}: nested {name} item ids must be integers, "
                                     f"got {a.dtype}")
        grades = None
        if lab_col in lab.column_names:
            g_off, grades = list_column(lab.column(lab_col))
            if not np.array_equal(g_off, l_off):
                raise PartitionError(f"partition {p}: the lists of {lab_col!r} and {it!r} differ in length")
        try:
            binary, numeric, rankings, common, seen = nested_queries(lq, rq, l_off, l_items, grades,
                                                                     r_off, r_items)
        except RepeatedQueryError as exc:
            raise PartitionError(f"partition {p}: query {exc.query!r} has two rows in the {exc.side} file") from None
        if rankings is None:
            return _empty_block(kinds, seen, graded=grades is not None)
    except PartitionError:
        raise
    except (TypeError, ValueError, KeyError) as exc:
        raise PartitionError(f"partition {p} ({labels_file}, {run_file}): {exc}") from exc
    return _Block(binary, numeric, rankings, common, kinds, seen)


def read_parquet(labels_path, run_path, *, query_col="query", item_col="item", label_col="label",
                 score_col=None, rank_col=None, tie_break="trec_eval", missing="drop", extra="drop"):
    """Partitioned data from two Parquet datasets written partitioned by query.

    Each dataset is a Parquet file or a directory of them; the ``i``-th file of the labels
    (in sorted path order) and the ``i``-th file of the run form partition ``i``, so both
    must hold the same queries, file by file (:func:`evaluate` checks that no query is in
    two partitions). Each file is read by one task with :mod:`pyarrow` (only the named
    columns). Two layouts, told apart by the run's item column:

    * **long**: one row per (query, item), as :func:`from_dataframes`: labels
      ``(query_col, item_col[, label_col])`` (without ``label_col`` every row is relevant),
      run ``(query_col, item_col, score or rank)``. Any id types.
    * **nested**: one row per query; the run's ``item_col`` is a list of integer item ids
      in ranked order (best first), the labels' ``item_col`` a list of the relevant (or
      judged) item ids and, optionally, ``label_col`` a list of their grades. No ids to
      map and no ranking to sort: the lists become the kernels' arrays directly, which is
      what makes 20 million queries x 100 items fast (see :doc:`/guide/cluster`). Queries
      of one side only are dropped (as ``missing='drop', extra='drop'``).

    Parameters
    ----------
    labels_path, run_path : str or os.PathLike
    query_col, item_col, label_col, score_col, rank_col, tie_break, missing, extra
        Column names and reading options, as in :func:`rankereval.io.from_dataframes`
        (the reading options apply to the long layout).

    Returns
    -------
    PartitionedData
        Whose query keys (for the Poisson bootstrap) are the query ids.
    """
    lab = _list_files(os.fspath(labels_path), "labels_path")
    run = _list_files(os.fspath(run_path), "run_path")
    if len(lab) != len(run):
        raise ValueError(f"labels_path has {len(lab)} Parquet files but run_path has {len(run)}; file i "
                         "of both must hold the same queries")
    options = dict(query_col=query_col, item_col=item_col, label_col=label_col, score_col=score_col,
                   rank_col=rank_col, tie_break=tie_break, missing=missing, extra=extra)
    loads = [(_load_parquet, (lf, rf, p, options), f"rankereval-parquet-{p}-{_tokenize_paths(lf, rf, options=options)}")
             for p, (lf, rf) in enumerate(zip(lab, run))]
    return PartitionedData(loads, f"Parquet {os.fspath(labels_path)!r}, {os.fspath(run_path)!r}",
                           check_split=True)


def _tokenize_paths(*paths, options=None):
    """A token of files' paths, sizes and modification times (a changed file is reread)."""
    return dask.base.tokenize(*[(p, os.stat(p).st_size, os.stat(p).st_mtime_ns) for p in paths], options)


# ------------------------------------------------------------------------------------------
# Per partition, and the reduction
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Table:
    """The per-query scores of one partition, with their keys."""

    keys: np.ndarray        # query ids
    hashes: np.ndarray      # query_key_hashes(keys)
    scores: np.ndarray      # (n, n_columns)
    kinds: dict
    seen: np.ndarray        # every query id of the partition's input
    seen_hashes: np.ndarray
    weights: object = None  # (n, n_columns) query weights of weighted means (GAUC), or None


def _score_block(block, p, columns, relevance_level, ties=None):
    """Partition ``p``'s scores: the in-memory fused kernel call on its arrays (``ties``: a
    mode of ``Metric.score``, for rankings read with ties kept)."""
    try:
        scores = _score_columns(_columns_for_items(columns, block.doc_ids, block.rankings), block.binary,
                                block.numeric, block.rankings, relevance_level, ties)
        # a weighted mean's query weights come from the partition's labels (a property of the query)
        weights = _column_weights(columns, block.binary, block.numeric, block.rankings, relevance_level)
        hashes = query_key_hashes(block.keys, scores.shape[0])
        seen, seen_hashes = block.keys, hashes
        if block.seen is not None:
            seen = block.seen
            seen_hashes = query_key_hashes(seen)
    except PartitionError:
        raise
    except (TypeError, ValueError) as exc:
        raise PartitionError(f"partition {p}: {exc}") from exc
    return _Table(block.keys, hashes, scores, block.kinds, seen, seen_hashes, weights)


def _partition_partials(load, args, p, score_options, sum_options):
    """Partition ``p`` from its input to its partial sums: ``load(*args)``, scores, sums."""
    table = _score_block(load(*args), p, *score_options)   # (the loaded arrays are freed here)
    return _table_partials(table, p, *sum_options)


def _table_partials(table, p, nan_handling, seed, n_boot, geometric=None):
    """Partial sums of partition ``p`` (``rankereval.evaluation._evaluate._partials``), plus the sorted
    hashes of its query keys for the check that no query is in two partitions."""
    part = _partials(table.scores, nan_handling, table.hashes if n_boot else None, seed, n_boot,
                     geometric=geometric, weights=table.weights)
    part["_keys"] = (np.sort(table.seen_hashes), np.full(table.seen_hashes.shape[0], p, dtype=np.int32))
    part["_kinds"] = {k: {v: p} for k, v in table.kinds.items()}
    return part


def _table_frame(table, names):
    """Partition scores as a pandas DataFrame indexed by query id."""
    import pandas as pd

    return pd.DataFrame(table.scores, columns=names, index=pd.Index(table.keys, name="query"))


def _merge(parts, check_split):
    """Merge the partial sums of several partitions (one node of the tree)."""
    parts = [q for q in parts]
    total = {k: v for k, v in parts[0].items() if not k.startswith("_")}
    for q in parts[1:]:
        total = _merge_partials(total, {k: v for k, v in q.items() if not k.startswith("_")})
    kinds = {}
    for q in parts:
        for col, seen in q["_kinds"].items():
            mine = kinds.setdefault(col, {})
            for kind, p in seen.items():
                mine.setdefault(kind, p)
            if len(mine) > 1:
                (k1, p1), (k2, p2) = sorted(mine.items(), key=lambda kv: kv[1])[:2]
                raise PartitionError(f"{col} ids are {k1}s in partition {p1} but {k2}s in partition {p2}; "
                                     "use one type for every id")
    total["_kinds"] = kinds
    if check_split:
        hashes = np.concatenate([q["_keys"][0] for q in parts])
        owner = np.concatenate([q["_keys"][1] for q in parts])
        order = np.argsort(hashes, kind="stable")      # runs of sorted keys: a merge
        hashes, owner = hashes[order], owner[order]
        same = np.flatnonzero(hashes[1:] == hashes[:-1])
        if same.size:
            i = int(same[0])
            p1, p2 = sorted((int(owner[i]), int(owner[i + 1])))
            err = PartitionError(_split_message(p1, p2, f"with key hash {int(hashes[i]):#018x}"))
            err.split = (p1, p2, int(hashes[i]))      # kept through pickling (__dict__)
            raise err
        total["_keys"] = (hashes, owner)
    else:
        total["_keys"] = (np.empty(0, np.uint64), np.empty(0, np.int32))
    return total


def _split_message(p1, p2, which):
    return (f"a query ({which}) is in partitions {p1} and {p2}: every partition must hold whole "
            "queries (rankereval.dask.repartition_by_query shuffles rows by query)")


def _tree(parts, check_split, split_every=SPLIT_EVERY):
    merge = delayed(_merge, pure=True)
    level = 0
    while len(parts) > 1:
        parts = [merge(parts[i:i + split_every], check_split,
                       dask_key_name=f"rankereval-merge-{level}-{i}-{dask.base.tokenize(parts[i:i + split_every])}")
                 for i in range(0, len(parts), split_every)]
        level += 1
    if len(parts) == 1 and level == 0:
        parts = [merge(parts, check_split)]
    return parts[0]


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------

def evaluate(labels, run=None, metrics=None, *, relevance_level=1, nan_handling="propagate",
             conf_interval=False, n_resamples=1000, confidence=0.95, random_state=None,
             n_bootstrap_samples=None, ties=None):
    """Evaluate partitioned rankings on a Dask cluster; lazy until ``.compute()``.

    The counterpart of :func:`rankereval.evaluate` with ``resampling='poisson'``: the same
    kernels run on each partition, and ``evaluate(...).compute()`` returns the
    :class:`~rankereval.Evaluation` that :func:`rankereval.evaluate` gives on the same
    queries, bit for bit (the sums are exact, so the partitioning does not change them).

    Parameters
    ----------
    labels : dask.dataframe.DataFrame, dask.array.Array or PartitionedData
        (a) long-format labels ``(query, item, label)`` with ``run`` a long-format run,
        both partitioned by query (see :func:`from_dataframes`, whose defaults are used;
        call it yourself for other column names); (b) a 2-D array of relevant item ids
        padded with -1 with ``run`` a 2-D array of rankings in the same row chunks (see
        :func:`from_arrays`; graded labels through it); (c) the result of
        :func:`read_parquet`, :func:`from_dataframes` or :func:`from_arrays`, with ``run``
        left out.
    run : dask.dataframe.DataFrame, dask.array.Array or None
    metrics : list or dict
        As in :func:`rankereval.evaluate`.
    relevance_level, nan_handling, conf_interval, n_resamples, confidence
        As in :func:`rankereval.evaluate`.
    random_state : None, int or numpy.random.Generator
        Seed of the Poisson bootstrap. With an int, ``rankereval.evaluate(...,
        resampling='poisson', random_state=seed)`` on the same queries (keyed by the same
        query ids, or row numbers for arrays) gives the same intervals.
    ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
        As in :func:`rankereval.evaluate`, for data read with ``ties="keep"``
        (:func:`from_dataframes`); the tie report is left to :func:`rankereval.evaluate`.

    Returns
    -------
    DaskEvaluation
        ``.compute()`` -> :class:`~rankereval.Evaluation`; ``.scores``: the per-query
        scores as a lazy Dask DataFrame indexed by query id.

    Notes
    -----
    The intervals come from the Poisson bootstrap (Chamandy et al. 2012), the one whose
    resamples merge across partitions; see :doc:`/guide/confidence_intervals`.
    """
    if isinstance(labels, PartitionedData):
        if metrics is None and run is not None and not isinstance(run, (dd.DataFrame, da.Array)):
            run, metrics = None, run                       # evaluate(data, metrics)
        if run is not None:
            raise TypeError("run must be None when labels is a PartitionedData (it holds the run)")
        data = labels
    elif isinstance(labels, dd.DataFrame):
        data = from_dataframes(labels, run)
    elif isinstance(labels, da.Array):
        data = from_arrays(labels, run)
    else:
        raise TypeError("labels must be a dask DataFrame, a dask Array or a rankereval.dask.PartitionedData "
                        f"(from read_parquet, from_dataframes or from_arrays), got {type(labels).__name__}")
    if metrics is None:
        raise TypeError("evaluate() needs metrics, e.g. evaluate(labels, run, ['ndcg@10', 'map'])")
    columns = _metric_columns(metrics)
    _refuse_catalogue_metrics(columns, "Dask")
    opts, seed = _engine.merged_options("evaluate", nan_handling=nan_handling, conf_interval=conf_interval,
                                        n_resamples=n_resamples, n_bootstrap_samples=n_bootstrap_samples,
                                        confidence=confidence, random_state=random_state)
    nan_handling, conf_interval = opts.nan_handling, opts.conf_interval
    n_boot, conf = opts.n_resamples, opts.confidence
    if any(m.info.labels == "binary" for _, m in columns):
        check_relevance_level(relevance_level)
    from rankereval.metrics._ties import check_ties

    score_options = (columns, relevance_level) if check_ties(ties) is None else (columns, relevance_level, ties)
    sum_options = (nan_handling, seed, n_boot if conf_interval else 0, _geometric(columns))
    # the means and intervals: one task per partition from its input to its partial sums
    # (the loaded arrays never wait in a worker's memory or travel to another worker)
    token = dask.base.tokenize(score_options, sum_options)
    fused = delayed(_partition_partials, pure=True)
    root = _tree([fused(load, args, p, score_options, sum_options,
                        dask_key_name=f"rankereval-partials-{p}-{dask.base.tokenize(key, token)}")
                  for p, (load, args, key) in enumerate(data._loads)], data._check_split)
    # the per-query scores, only if asked for: load, score (kept), then sum
    score = delayed(_score_block, pure=True)
    tables = [score(data._block(p), p, *score_options) for p in range(data.npartitions)]
    partials = delayed(_table_partials, pure=True)
    with_tables = _tree([partials(t, p, *sum_options) for p, t in enumerate(tables)], data._check_split)
    return DaskEvaluation(data, columns, tables, root, with_tables, nan_handling,
                          (n_boot, conf) if conf_interval else None)


class DaskEvaluation:
    """The lazy result of :func:`rankereval.dask.evaluate`.

    Attributes
    ----------
    names : list of str
        Column names, as :attr:`rankereval.Evaluation.names`.
    data : PartitionedData
        What is evaluated.
    """

    def __init__(self, data, columns, tables, root, with_tables, nan_handling, bootstrap):
        self.data = data
        self._columns = columns
        self.names = [c for c, _ in columns]
        self._tables = tables
        self._root = root                   # the partial sums, one task per partition
        self._with_tables = with_tables     # the same from the tasks of self._tables
        self._nan_handling = nan_handling
        self._bootstrap = bootstrap

    @property
    def scores(self):
        """Per-query scores: a lazy Dask DataFrame, one partition per input partition,
        indexed by query id (the row number for arrays), one column per metric."""
        import pandas as pd

        frame = delayed(_table_frame, pure=True)
        meta = pd.DataFrame({n: pd.Series(dtype="float64") for n in self.names},
                            index=pd.Index([], name="query", dtype=object))
        return dd.from_delayed([frame(t, self.names) for t in self._tables], meta=meta,
                               verify_meta=False)

    def partials(self):
        """The merged partial sums as a Dask Delayed (advanced use: a dict of arrays).

        ``n``; per column ``n_used``, ``n_undefined``, ``sum``, ``min``, ``max``; with
        intervals ``sums`` and ``weights`` of shape ``(n_columns, n_resamples)``.
        Every entry adds up over disjoint sets of queries (``min``/``max`` combine), which
        is how partitions merge, and how paired statistics (differences of two runs per
        query, their squares, sign-flip sums) would merge, keyed by the same query hashes.
        """
        return self._root

    def compute(self, scores=False, **kwargs):
        """Run the graph; return an :class:`~rankereval.Evaluation`.

        Parameters
        ----------
        scores : bool, default=False
            Also gather the per-query scores to the client (``Evaluation.scores`` and
            ``query_ids``, rows in partition order). By default they stay on the cluster:
            the result has ``scores=None`` and only means, intervals and counts reach the
            client (use :attr:`scores` for the distributed per-query table).
        **kwargs
            Passed to :func:`dask.compute` (e.g. ``scheduler=``).
        """
        import warnings

        from rankereval.exceptions import UndefinedMetricWarning

        scores = check_flag(scores, "scores")
        try:
            if scores:
                total, tables = dask.compute(self._with_tables, self._tables, **kwargs)
            else:
                (total,) = dask.compute(self._root, **kwargs)
        except PartitionError as exc:
            split = getattr(exc, "split", None)
            if split is None:
                raise
            # name the query: read the two partitions' keys again (only those two)
            p1, p2, key_hash = split
            a, b = dask.compute(self._tables[p1], self._tables[p2], **kwargs)
            query = a.seen[a.seen_hashes == key_hash]
            q = query[0].item() if query.size and isinstance(query[0], np.generic) else (query[0] if query.size else None)
            which = f"query id {q!r}" if query.size else f"key hash {key_hash:#018x}"
            raise PartitionError(_split_message(p1, p2, which)) from None
        n_boot, conf = self._bootstrap if self._bootstrap is not None else (None, None)
        means, intervals, n_used, n_undefined, notes = _summarise(
            total, self._columns, self._nan_handling, n_boot, conf)
        if notes:
            warnings.warn("\n".join(notes), UndefinedMetricWarning, stacklevel=user_stacklevel())
        table, query_ids = None, None
        if scores:
            table = (np.concatenate([t.scores for t in tables]) if tables
                     else np.empty((0, len(self._columns))))
            table.flags.writeable = False
            query_ids = np.concatenate([np.asarray(t.keys, dtype=object) for t in tables]) if tables else None
            if tables and all(np.asarray(t.keys).dtype.kind in "iu" for t in tables):
                query_ids = query_ids.astype(np.int64)
        return Evaluation(table, self.names, [m for _, m in self._columns], query_ids, means,
                          intervals, n_used, n_undefined, self._nan_handling, conf,
                          n_rankings=int(total["n"]))

    def __repr__(self):
        return (f"DaskEvaluation({', '.join(self.names)}; {self.data.npartitions} partitions of "
                f"{self.data.source}; call .compute())")
