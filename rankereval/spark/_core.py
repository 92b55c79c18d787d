"""rankereval.spark: the in-memory kernels per partition of Spark DataFrames, partial sums merged."""
import functools
import os
import pickle

import numpy as np

try:
    from pyspark.sql import DataFrame
    from pyspark.sql import functions as F
    from pyspark.sql import types as T
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("rankereval.spark needs PySpark: pip install 'rankereval[spark]'") from exc

from rankereval.stats import _engine
from rankereval.stats._engine import geometric_columns as _geometric, merge_partials as _merge_partials
from rankereval.stats._engine import partials as _partials, summarise as _summarise
from rankereval.evaluation._columns import check_relevance_level as _check_relevance_level
from rankereval.evaluation._columns import columns_for_items as _columns_for_items
from rankereval.evaluation._columns import metric_columns as _metric_columns, score_columns as _score_columns
from rankereval.evaluation._columns import refuse_catalogue_metrics as _refuse_catalogue_metrics
from rankereval.evaluation._columns import column_weights as _column_weights
from rankereval.evaluation._evaluate import Evaluation
from rankereval._stack import user_stacklevel
from rankereval._validation import check_flag
from rankereval.stats._resampling import query_key_hashes
from rankereval.io._trec import order_columns

__all__ = ["evaluate", "compare", "SparkInputError"]

#: test hook: a directory; the first task of each partition that finds no marker file there
#: writes one and kills its Python worker (Spark must rerun the task). Set by the tests only.
_TEST_FAIL_ONCE = None
# the executors' errors reach the driver inside Spark's own exception text: marked lines
_MARK = "[rankereval.spark] "
#: ``grade_col=`` not given (None is a value of its new name ``label_col``)
_UNSET = object()


class SparkInputError(ValueError):
    """Bad input found by a Spark task (a null grade, a duplicate item in a query, ...)."""


# ------------------------------------------------------------------------------------------
# the driver: checks of the schemas, one union of the two frames partitioned by query
# ------------------------------------------------------------------------------------------

def _column(df, col, what, arg):
    if not isinstance(col, str):
        raise TypeError(f"{arg} must be a column name (str), got {col!r}")
    if col not in df.columns:
        raise ValueError(f"{what} has no column {col!r} ({arg}); columns: {df.columns}")
    return df.schema[col].dataType


def _id_kind(dtype, what, col):
    """'int' or 'str' for the Spark type of an id column; TypeError naming it otherwise."""
    if isinstance(dtype, T.StringType):
        return "str"
    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "int"
    raise TypeError(f"{what} column {col!r} has type {dtype.simpleString()}: ids must be integers or "
                    "strings")


def _same_kind(lab_type, run_type, col, name):
    """The kind of an id column found in both frames; TypeError if they differ."""
    a, b = _id_kind(lab_type, "labels_df", col), _id_kind(run_type, "run_df", col)
    if a != b:
        raise TypeError(f"{name} column {col!r} holds {a}s in labels_df ({lab_type.simpleString()}) but "
                        f"{b}s in run_df ({run_type.simpleString()}): 1 and '1' would never match; "
                        "cast one of them")
    return a


def _numeric(dtype):
    return isinstance(dtype, T.NumericType)


def _id_expr(col, kind):
    return F.col(col).cast("long" if kind == "int" else "string").alias("q")


def _union(labels_df, run_df, query_col, item_col, grade_col, score_col, rank_col):
    """One DataFrame of both inputs (``side`` 0: labels, 1: run) and the layout's options."""
    lab, run, spec = _sides(labels_df, run_df, query_col, item_col, grade_col, score_col, rank_col)
    return lab.unionByName(run), spec


def _map_in_arrow(df, func, schema):
    """``df.mapInArrow(func, schema)``. PySpark builds it through ``pandas_udf``, whose pandas
    version check warns under pandas 3 ("PySpark does not yet fully support pandas >= 3.0.0",
    a FutureWarning per call) although these tasks use Arrow and no pandas: silenced here."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas",
                                category=FutureWarning)
        return df.mapInArrow(func, schema)


#: worker Pythons of local masters already checked: {executable: None or the error message}
_WORKER_PYTHONS = {}


def _check_local_workers(df):
    """On a local master, the Python that Spark starts for its workers (``PYSPARK_PYTHON``,
    ``spark.pyspark.python``, else ``python3`` on PATH) must import rankereval. In a virtual
    environment not on PATH it is another Python, and the task would fail deep in a Java stack
    trace (``ModuleNotFoundError: No module named 'rankereval'``): say what to set instead."""
    import subprocess
    import sys

    try:
        sc = df.sparkSession.sparkContext
        master = str(sc.master)
        conf = sc.getConf() if hasattr(sc, "getConf") else None
        exe = ((conf.get("spark.pyspark.python", None) if conf is not None else None)
               or getattr(sc, "pythonExec", None) or os.environ.get("PYSPARK_PYTHON") or "python3")
    except Exception:  # a Spark Connect session has no SparkContext: its workers are remote
        return
    if not master.startswith("local"):
        return
    if exe not in _WORKER_PYTHONS:
        try:
            done = subprocess.run([exe, "-c", "import rankereval"], capture_output=True, text=True,
                                  timeout=120)
            failed = done.returncode != 0 and (done.stderr.strip().splitlines() or ["failed"])[-1]
        except OSError as exc:
            failed = str(exc)
        except subprocess.TimeoutExpired:
            failed = None  # slow, not broken: let Spark try
        _WORKER_PYTHONS[exe] = failed and (
            f"the local Spark master ({master}) starts its Python workers with {exe!r}, which cannot "
            f"import rankereval ({failed}). Set PYSPARK_PYTHON to this Python before creating the "
            f"SparkSession (export PYSPARK_PYTHON={sys.executable}, or "
            f".config('spark.pyspark.python', sys.executable)); in a virtual environment "
            "Spark's default python3 is the system's Python")
    if _WORKER_PYTHONS[exe]:
        raise RuntimeError(_WORKER_PYTHONS[exe])


def _sides(labels_df, run_df, query_col, item_col, grade_col, score_col, rank_col):
    """The labels and the run in one schema (``side`` 0 and 1), and the layout's options."""
    for df, what in ((labels_df, "labels_df"), (run_df, "run_df")):
        if not isinstance(df, DataFrame):
            raise TypeError(f"{what} must be a pyspark.sql.DataFrame, got {type(df).__name__}")
    _check_local_workers(labels_df)
    q_kind = _same_kind(_column(labels_df, query_col, "labels_df", "query_col"),
                        _column(run_df, query_col, "run_df", "query_col"), query_col, "the query")
    lab_item = _column(labels_df, item_col, "labels_df", "item_col")
    run_item = _column(run_df, item_col, "run_df", "item_col")
    nested = isinstance(run_item, T.ArrayType)
    if nested != isinstance(lab_item, T.ArrayType):
        raise TypeError(f"item_col {item_col!r} is {'an array' if nested else 'not an array'} in run_df "
                        f"({run_item.simpleString()}) but {lab_item.simpleString()} in labels_df: give "
                        "both frames one row per (query, item), or both one row per query with arrays")
    grade_type = None if grade_col is None else _column(labels_df, grade_col, "labels_df", "label_col")
    spec = {"query_col": query_col, "item_col": item_col, "grade_col": grade_col, "nested": nested,
            "query_kind": q_kind}
    lab_q, run_q = _id_expr(query_col, q_kind), _id_expr(query_col, q_kind)
    if nested:
        for t, what in ((lab_item, "labels_df"), (run_item, "run_df")):
            if not isinstance(t.elementType, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
                raise TypeError(f"{what} column {item_col!r} has type {t.simpleString()}: the nested layout "
                                "needs arrays of integer item ids")
        if score_col is not None or rank_col is not None:
            raise ValueError("score_col and rank_col apply to one row per (query, item); with arrays the "
                             f"run's {item_col!r} lists the items in ranked order, best first")
        if grade_type is not None and not (isinstance(grade_type, T.ArrayType)
                                           and _numeric(grade_type.elementType)):
            raise TypeError(f"labels_df column {grade_col!r} (label_col) has type {grade_type.simpleString()}: "
                            "with arrays of items it must be an array of numbers (one grade per item)")
        # the other side's columns: empty arrays (null array columns made the conversion to
        # Arrow batches 4-5x slower, measured with Spark 4.3)
        grades = (F.col(grade_col).cast("array<double>") if grade_col is not None
                  else F.array().cast("array<double>"))
        # 32-bit ids stay 32-bit: half the bytes through the shuffle and the Arrow batches
        narrow = (T.ByteType, T.ShortType, T.IntegerType)
        items = ("array<int>" if all(isinstance(t.elementType, narrow) for t in (lab_item, run_item))
                 else "array<long>")
        lab = labels_df.select(lab_q, F.col(item_col).cast(items).alias("li"), grades.alias("g"),
                               F.array().cast(items).alias("ri"), F.lit(0).cast("byte").alias("side"))
        run = run_df.select(run_q, F.array().cast(items).alias("li"),
                            F.array().cast("array<double>").alias("g"),
                            F.col(item_col).cast(items).alias("ri"), F.lit(1).cast("byte").alias("side"))
        return lab, run, spec
    i_kind = _same_kind(lab_item, run_item, item_col, "the item")
    if grade_type is not None and not _numeric(grade_type):
        raise TypeError(f"labels_df column {grade_col!r} (label_col) has type {grade_type.simpleString()}: "
                        "grades must be numbers")
    score_col, rank_col = order_columns(list(run_df.columns), score_col, rank_col, "run_df")
    order_col, arg = (score_col, "score_col") if score_col is not None else (rank_col, "rank_col")
    order_type = _column(run_df, order_col, "run_df", arg)
    if not _numeric(order_type):
        raise TypeError(f"run_df column {order_col!r} ({arg}) has type {order_type.simpleString()}: "
                        f"{'scores' if score_col else 'ranks'} must be numbers")
    spec.update(score_col=score_col, rank_col=rank_col)
    item = F.col(item_col).cast("long" if i_kind == "int" else "string").alias("i")
    grade = F.col(grade_col).cast("double") if grade_col is not None else F.lit(1.0)
    value = F.col(order_col).cast("double" if score_col is not None else "long")
    lab = labels_df.select(lab_q, item, F.lit(0).cast("byte").alias("side"), grade.alias("g"),
                           F.lit(None).cast("double" if score_col is not None else "long").alias("v"))
    run = run_df.select(run_q, item,
                        F.lit(1).cast("byte").alias("side"), F.lit(None).cast("double").alias("g"),
                        value.alias("v"))
    return lab, run, spec


# ------------------------------------------------------------------------------------------
# a task: one partition (every row of its queries) -> kernels -> scores -> partial sums
# ------------------------------------------------------------------------------------------

def _fail(message):
    return SparkInputError(_MARK + message)


def _first_null_query(table, mask):
    import pyarrow.compute as pc

    q = pc.filter(table.column("q"), mask)
    return q[0].as_py() if len(q) else None


def _long_block(table, spec):
    """A partition of the long layout: the in-memory reader ``rankereval.io.from_dataframes``."""
    import pyarrow.compute as pc

    from rankereval.io import from_dataframes

    q, it = spec["query_col"], spec["item_col"]
    grade = spec["grade_col"] or "label"
    side = table.column("side")
    lab = table.filter(pc.equal(side, 0))
    run = table.filter(pc.equal(side, 1))
    if lab.column("g").null_count:
        query = _first_null_query(lab, pc.is_null(lab.column("g")))
        raise _fail(f"labels_df column {spec['grade_col']!r} (label_col) has a null grade (query {query!r}); "
                    "fill or drop it first")
    order = spec["score_col"] or spec["rank_col"]
    if run.column("v").null_count:
        query = _first_null_query(run, pc.is_null(run.column("v")))
        raise _fail(f"run_df column {order!r} has a null (query {query!r}); fill or drop it first")
    for t, what in ((lab, "labels_df"), (run, "run_df")):
        for c, col in (("q", q), ("i", it)):
            if t.column(c).null_count:
                raise _fail(f"{what} column {col!r} has a null id")
    if not len(lab) or not len(run):
        return _empty(spec)
    labels = lab.select(["q", "i", "g"]).rename_columns([q, it, grade]).to_pandas()
    run_pd = run.select(["q", "i", "v"]).rename_columns([q, it, order]).to_pandas()
    if not np.intersect1d(labels[q].to_numpy(), run_pd[q].to_numpy()).size:
        return _empty(spec)
    try:
        data = from_dataframes(labels, run_pd, query_col=q, item_col=it, label_col=grade,
                               score_col=spec["score_col"], rank_col=spec["rank_col"],
                               tie_break=spec["tie_break"], ties="keep" if spec.get("ties") else "break")
    except (TypeError, ValueError) as exc:
        raise _fail(f"{exc} (row numbers count within one Spark partition)") from exc
    # the partition numbers its items apart (item j is data.doc_ids[j])
    return None, data.numeric_labels, data.rankings, np.asarray(data.query_ids), data.doc_ids


def _nested_block(table, spec):
    """A partition of the nested layout: the list columns straight into the kernels' arrays."""
    import pyarrow.compute as pc

    from rankereval.io._arrow import RepeatedQueryError, list_column, nested_queries

    q, it, grade = spec["query_col"], spec["item_col"], spec["grade_col"]
    side = table.column("side")
    lab = table.filter(pc.equal(side, 0))
    run = table.filter(pc.equal(side, 1))
    lists = {}
    for t, what, c in ((lab, "labels_df", "li"), (run, "run_df", "ri")) + (((lab, "labels_df", "g"),) if grade else ()):
        col = grade if c == "g" else it
        arr = t.column(c)
        flat = pc.list_flatten(arr)
        if arr.null_count or flat.null_count:
            if arr.null_count:
                row = pc.index(pc.is_null(arr), True).as_py()
            else:
                row = pc.list_parent_indices(arr)[pc.index(pc.is_null(flat), True).as_py()].as_py()
            query = t.column("q")[row].as_py()
            raise _fail(f"{what} column {col!r} has a null{' grade' if c == 'g' else ''} (query {query!r})")
        lists[c] = list_column(arr)
    if grade and not np.array_equal(lists["g"][0], lists["li"][0]):
        raise _fail(f"labels_df columns {grade!r} and {it!r}: the lists differ in length in some query")
    lq = lab.column("q").to_numpy()
    rq = run.column("q").to_numpy()
    try:
        binary, numeric, rankings, common, _ = nested_queries(
            lq, rq, *lists["li"], lists["g"][1] if grade else None, *lists["ri"])
    except RepeatedQueryError as exc:
        which = "labels_df" if exc.side == "labels" else "run_df"
        raise _fail(f"{which} column {q!r}: query {exc.query!r} has two rows") from None
    except (TypeError, ValueError) as exc:
        raise _fail(f"{exc}") from exc
    if rankings is None:
        return _empty(spec)
    return binary, numeric, rankings, common, None  # the ids as given


def _empty(spec):
    return None


def _partition_table(batches, spec):
    """A partition's Arrow batches as one table (None: no row)."""
    import pyarrow as pa

    batches = list(batches)
    marker_dir = spec.get("fail_once")
    if marker_dir is not None:
        _fail_once(marker_dir)
    return pa.Table.from_batches(batches) if batches else None


def _partition_scores(batches, spec, weights=None):
    """The scores of one partition's queries: ``(query ids, scores)``; None: no query."""
    table = _partition_table(batches, spec)
    return None if table is None else _table_scores(table, spec, weights)


def _table_scores(table, spec, weights=None):
    """The scores of the queries of a table of both sides: ``(query ids, scores)`` or None.
    ``weights``: a list that receives the query weights of the weighted means (GAUC), from the
    partition's labels (``column_weights``)."""
    block = (_nested_block if spec["nested"] else _long_block)(table, spec)
    del table
    if block is None:
        return None
    binary, numeric, rankings, ids, doc_ids = block
    try:
        scores = _score_columns(_columns_for_items(spec["columns"], doc_ids, rankings), binary, numeric,
                                rankings, spec["relevance_level"],
                                spec.get("ties"))
        if weights is not None:
            weights.append(_column_weights(spec["columns"], binary, numeric, rankings, spec["relevance_level"]))
    except (TypeError, ValueError) as exc:
        raise _fail(str(exc)) from exc
    return ids, scores


def _fail_once(marker_dir):
    """The test hook: kill this Python worker once per partition (see _TEST_FAIL_ONCE)."""
    from pyspark import TaskContext

    ctx = TaskContext.get()
    marker = os.path.join(marker_dir, f"partition-{ctx.partitionId()}")
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    os._exit(17)


def _partials_task(batches, spec):
    """mapInArrow: a partition -> one row holding its partial sums (pickled)."""
    import pyarrow as pa

    weights = []
    res = _partition_scores(batches, spec, weights)
    weighted = _engine.weighted_columns(spec["columns"]).any()
    if res is None:
        ids, scores = np.empty(0, dtype=np.int64), np.empty((0, len(spec["columns"])))
        weights = np.empty((0, len(spec["columns"]))) if weighted else None
    else:
        ids, scores = res
        weights = weights[0]
    n_boot = spec["n_boot"]
    part = _partials(scores, spec["nan_handling"], query_key_hashes(ids, scores.shape[0]) if n_boot else None,
                     spec["seed"], n_boot, geometric=spec["geometric"], weights=weights)
    yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(part, protocol=4)], pa.binary())],
                                     names=["partials"])


def _scores_task(batches, spec, names):
    """mapInArrow: a partition -> its per-query scores (query id, one column per metric)."""
    import pyarrow as pa

    res = _partition_scores(batches, spec)
    if res is None:
        return
    ids, scores = res
    q_type = pa.int64() if spec["query_kind"] == "int" else pa.string()
    arrays = [pa.array(np.asarray(ids, dtype=np.int64) if spec["query_kind"] == "int" else ids.astype(object),
                       q_type)]
    arrays += [pa.array(scores[:, j]) for j in range(scores.shape[1])]
    yield pa.RecordBatch.from_arrays(arrays, names=[spec["query_col"]] + list(names))


# ------------------------------------------------------------------------------------------
# evaluate
# ------------------------------------------------------------------------------------------

def evaluate(labels_df, run_df, metrics, *, query_col="query", item_col="item", label_col="label",
             score_col=None, rank_col=None, relevance_level=1, nan_handling="propagate",
             conf_interval=False, n_resamples=1000, confidence=0.95, random_state=None,
             tie_break="trec_eval", npartitions=None, return_scores=False, n_bootstrap_samples=None,
             ties=None, grade_col=_UNSET):
    """Evaluate a run held in Spark DataFrames; the same :class:`~rankereval.Evaluation` as
    :func:`rankereval.evaluate`.

    The rows of both frames are partitioned by query (one shuffle); each Spark task turns its
    partition into the in-memory objects (through Arrow batches), runs the fused metric kernel
    and the Poisson bootstrap kernel, and returns *partial sums* (per metric: rankings used
    and undefined, sum of scores; per resample ``sum(w * score)`` and ``sum(w)``). Only those
    reach the driver, which merges them as :mod:`rankereval.dask` does. Queries found on one
    side only are left out (as ``missing='drop', extra='drop'`` in
    :func:`rankereval.io.from_dataframes`).

    Parameters
    ----------
    labels_df, run_df : pyspark.sql.DataFrame
        Two layouts, told apart by the type of ``item_col``:

        * **long**: one row per (query, item): labels ``(query_col, item_col[, label_col])``,
          run ``(query_col, item_col, score_col or rank_col)``; ids integers or strings.
        * **nested**: one row per query; ``item_col`` an array of integer item ids, in ranked
          order (best first) in the run, the relevant (or judged) items in the labels, with
          ``label_col`` an array of their grades (or None: every listed item is relevant).
    metrics : list or dict
        As in :func:`rankereval.evaluate` (``["ndcg@10", "recall@100", "ap@100"]``).
    query_col, item_col : str, default='query', 'item'
        Id columns, the same names in both frames (the same kind of id: integers or strings).
    label_col : str or None, default='label'
        Grades of the labels (numbers, no nulls); None: every labels row is relevant. The
        word of :func:`rankereval.io.from_dataframes` and :mod:`rankereval.dask`;
        ``grade_col=`` (its former name here) works for one release, with a
        ``DeprecationWarning``.
    score_col, rank_col : str or None
        Long layout: one of them (higher score / lower rank is better); both None: ``'score'``
        if run_df has it, else ``'rank'``.
    relevance_level, nan_handling, conf_interval, n_resamples, confidence
        As in :func:`rankereval.evaluate`.
    random_state : None, int or numpy.random.Generator
        Seed of the Poisson bootstrap; with an int, the intervals are those of
        ``rankereval.evaluate(..., resampling='poisson', random_state=seed)`` and of
        :func:`rankereval.dask.evaluate` on the same queries (keyed by the same query ids).
    tie_break : str, default='trec_eval'
        Long layout: how equal scores are ordered, as in :func:`rankereval.io.from_dataframes`.
    npartitions : int, optional
        Partitions of the shuffle by query (default: ``spark.sql.shuffle.partitions``).
    return_scores : bool, default=False
        Deprecated (removed in the next release): True returns the tuple ``(evaluation,
        evaluation.cluster_scores)``, with a ``DeprecationWarning``.
    ties : {None, 'expected', 'optimistic', 'pessimistic'}, default=None
        Long layout: each partition's run is read with its ties kept and scored over the
        orders of the tied items, as :func:`rankereval.evaluate` does with ``ties=``
        (the tie report is left to it). The nested layout ranks ids without scores: no
        ties to keep, so it refuses a mode.

    Returns
    -------
    Evaluation
        ``Evaluation.scores`` is None: the per-query scores stay on the cluster, as
        ``Evaluation.cluster_scores``, a lazy Spark DataFrame ``(query_col, one double column
        per metric)``, computed (once more, from the inputs) when used.

    Raises
    ------
    TypeError, ValueError
        On the driver, for a missing column, ids of different kinds in the two frames, non
        numeric grades or scores. :class:`SparkInputError` (a ValueError), from the tasks, for
        a null grade, score or id, a duplicate item in a query, a query with two rows (nested
        layout); the message names the column.
    """
    from rankereval.metrics._ties import check_ties

    grade_col, _ = _engine.renamed(label_col, grade_col, "label_col", "grade_col", "label",
                                   "rankereval.spark.evaluate", unset=_UNSET)
    columns = _metric_columns(metrics)
    _refuse_catalogue_metrics(columns, "Spark")
    opts, seed = _engine.merged_options("evaluate", nan_handling=nan_handling, conf_interval=conf_interval,
                                        n_resamples=n_resamples, n_bootstrap_samples=n_bootstrap_samples,
                                        confidence=confidence, random_state=random_state)
    nan_handling, conf_interval = opts.nan_handling, opts.conf_interval
    n_boot, conf = opts.n_resamples, opts.confidence
    ties = check_ties(ties)
    return_scores = check_flag(return_scores, "return_scores")
    if any(m.info.labels == "binary" for _, m in columns):
        _check_relevance_level(relevance_level)
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(npartitions, int)
                                    or npartitions < 1):
        raise ValueError(f"npartitions must be None or an integer >= 1, got {npartitions!r}")
    union, spec = _union(labels_df, run_df, query_col, item_col, grade_col, score_col, rank_col)
    if ties is not None:
        if spec["nested"]:
            raise ValueError(f"ties={ties!r}: the nested layout ranks item ids without scores, so it has no "
                             "ties to keep; give the run in the long layout with a score column")
        spec["ties"] = ties  # (absent by default: the same spec, and task, as before)
    spec.update(columns=columns, relevance_level=relevance_level, nan_handling=nan_handling,
                n_boot=n_boot if conf_interval else 0, seed=seed, geometric=_geometric(columns),
                tie_break=tie_break, fail_once=_TEST_FAIL_ONCE)
    parts = union.repartition(npartitions, "q") if npartitions else union.repartition("q")
    rows = _collect(_map_in_arrow(parts, functools.partial(_partials_task, spec=spec), "partials binary"))
    total = None
    for row in rows:
        part = pickle.loads(row[0])
        total = part if total is None else _merge_partials(total, part)
    if total is None:  # no partition at all (empty inputs)
        total = _partials(np.empty((0, len(columns))), nan_handling,
                          np.empty(0, np.uint64) if conf_interval else None, seed, spec["n_boot"],
                          geometric=spec["geometric"],
                          weights=np.empty((0, len(columns))) if _engine.weighted_columns(columns).any() else None)
    means, intervals, n_used, n_undefined, notes = _summarise(
        total, columns, nan_handling, n_boot if conf_interval else None, conf if conf_interval else None)
    if notes:
        import warnings

        from rankereval.exceptions import UndefinedMetricWarning

        warnings.warn("\n".join(notes), UndefinedMetricWarning, stacklevel=user_stacklevel())
    ev = Evaluation(None, [c for c, _ in columns], [m for _, m in columns], None, means, intervals,
                    n_used, n_undefined, nan_handling, conf if conf_interval else None,
                    n_rankings=int(total["n"]))
    names = [c for c, _ in columns]
    schema = T.StructType([T.StructField(query_col, T.LongType() if spec["query_kind"] == "int"
                                         else T.StringType())]
                          + [T.StructField(n, T.DoubleType()) for n in names])
    spec = dict(spec, fail_once=None)
    ev.cluster_scores = _map_in_arrow(parts, functools.partial(_scores_task, spec=spec, names=names),
                                      schema)
    if return_scores:
        warnings.warn("rankereval.spark.evaluate(return_scores=True) and its (Evaluation, "
                      "DataFrame) tuple are deprecated: evaluate returns an Evaluation, whose "
                      "per-query scores are Evaluation.cluster_scores",
                      DeprecationWarning, stacklevel=user_stacklevel())
        return ev, ev.cluster_scores
    return ev


def _collect(df):
    """``df.collect()``, with a task's input error raised as itself (SparkInputError)."""
    try:
        return df.collect()
    except Exception as exc:
        text = str(exc)
        if _MARK not in text:
            raise
        message = text[text.index(_MARK) + len(_MARK):].splitlines()[0]
        raise SparkInputError(message) from None


# ------------------------------------------------------------------------------------------
# compare
# ------------------------------------------------------------------------------------------

def _compare_task(batches, spec):
    """mapInArrow: a partition of labels and runs -> one row of its paired sums (pickled)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from rankereval.stats import _paired_sums

    table = _partition_table(batches, spec)
    n_runs, m = len(spec["run_names"]), len(spec["columns"])
    per_run = []
    first_weights = None
    lab_ids = np.empty(0, dtype=object)
    if table is not None:
        side = table.column("side")
        lab_ids = np.unique(pc.filter(table.column("q"), pc.equal(side, 0)).to_numpy())
        for r in range(n_runs):
            sub = table.filter(pc.or_(pc.equal(side, 0), pc.equal(side, r + 1)))
            sub = sub.set_column(sub.schema.get_field_index("side"), "side",
                                 pc.cast(pc.not_equal(sub.column("side"), 0), pa.int8()))
            weights = [] if r == 0 else None
            per_run.append(_table_scores(sub, spec, weights))
            if r == 0 and per_run[0] is not None:
                first_weights = weights[0]   # the labels' query weights (weighted means), by run 0's ids
    ids = [np.asarray(x[0]) if x is not None else np.empty(0, dtype=lab_ids.dtype) for x in per_run]
    if not ids:
        ids = [lab_ids[:0]] * n_runs
    union = functools.reduce(np.union1d, ids) if ids else lab_ids[:0]
    common = functools.reduce(np.intersect1d, ids) if ids else lab_ids[:0]
    scores = np.empty((common.shape[0], m, n_runs))
    for r, x in enumerate(per_run):
        order = np.argsort(ids[r], kind="stable")
        scores[:, :, r] = x[1][order[np.searchsorted(ids[r], common, sorter=order)]] if common.size else 0.0
    weights = None
    if _engine.weighted_columns(spec["columns"]).any():
        weights = np.ones((common.shape[0], m))
        if common.size and first_weights is not None:
            order = np.argsort(ids[0], kind="stable")
            weights = first_weights[order[np.searchsorted(ids[0], common, sorter=order)]]
    part = _paired_sums.partials(scores, common, spec["nan_handling"], [mm for _, mm in spec["columns"]],
                                 spec["run_names"], spec["baseline"], spec["test"], spec["seeds"],
                                 spec["n_resamples"], spec["ci_resamples"], weights=weights)
    part["n_union"] = np.int64(union.shape[0])
    part["n_qrels_not_ranked"] = np.int64(np.setdiff1d(lab_ids, union).shape[0])
    part["missing"] = [[_py(q) for q in np.setdiff1d(union, i)[:5]] for i in ids]
    yield pa.RecordBatch.from_arrays([pa.array([pickle.dumps(part, protocol=4)], pa.binary())],
                                     names=["partials"])


def _py(q):
    return q.item() if isinstance(q, np.generic) else q


def compare(labels_df, runs, metrics, *, baseline=None, test="t", correction="holm", alpha=0.05,
            n_resamples=10_000, alternative="two-sided", nan_handling=None, queries="error",
            random_state=None, relevance_level=1, query_col="query", item_col="item",
            label_col="label", score_col=None, rank_col=None, tie_break="trec_eval", npartitions=None,
            grade_col=_UNSET):
    """Compare runs held in Spark DataFrames with paired tests; a :class:`~rankereval.stats.Comparison`.

    As :func:`rankereval.stats.compare` with runs aligned by query id, for the tests whose
    statistics are sums: every partition (whole queries of the labels and of every run) sends
    its sums to the driver (see :mod:`rankereval.stats._paired_sums`).

    Parameters
    ----------
    labels_df : pyspark.sql.DataFrame
        The labels, as in :func:`evaluate`.
    runs : dict
        ``{name: pyspark.sql.DataFrame}``, at least two runs, each as ``run_df`` of
        :func:`evaluate` (one layout for all).
    metrics, baseline, correction, alpha, n_resamples, alternative, nan_handling, relevance_level
        As in :func:`rankereval.stats.compare`.
    test : {'t', 'permutation', 'bootstrap'}, default='t'
        ``'t'``: p-values and intervals equal those of :func:`rankereval.stats.compare`.
        ``'permutation'``: the sign of a query's difference in resample ``b`` is keyed by
        ``(seed, query id, b)`` (not by row position as in memory: the same test, other random
        signs). ``'bootstrap'``: bootstrap-t with Poisson(1) weights keyed by query. The
        intervals of both are Poisson percentile intervals (``min(n_resamples, 1000)``
        resamples with ``'permutation'``). ``'tukey'`` is refused: its statistic (the largest
        difference of run means under a permutation of each query's scores among the runs)
        is not a sum.
    queries : {'error', 'intersection'}, default='error'
        Queries (with labels) ranked by some runs but not by others: a ValueError naming
        some of them, or compare the queries every run ranks. (``'union'``, empty rankings
        for the missing ones, is not available on Spark.)
    random_state : None, int or numpy.random.Generator
        Seed of the resampling: the first two 64-bit integers drawn from it key the sign
        flips and the Poisson weights.
    query_col, item_col, label_col, score_col, rank_col, tie_break, npartitions
        As in :func:`evaluate` (``grade_col=``, the former name of ``label_col``, works for one
        release, with a ``DeprecationWarning``).

    Returns
    -------
    rankereval.stats.Comparison
        With ``scores``, ``valid`` and ``query_ids`` None (the per-query scores stay on the
        cluster); ``report['missing']`` lists at most 5 query ids per run and partition.
    """
    from rankereval.stats import _paired_sums
    from rankereval._validation import check_real
    from rankereval.stats._paired_sums import check_arguments as _check_arguments, finish as _finish
    from rankereval.stats._paired_sums import resolve_metrics as _resolve_metrics, run_means as _run_means
    from rankereval.stats._paired_tests import CI_RESAMPLES

    grade_col, _ = _engine.renamed(label_col, grade_col, "label_col", "grade_col", "label",
                                   "rankereval.spark.compare", unset=_UNSET)
    nan_handling, nan_default = _engine.compare_nan_handling(nan_handling)
    if test == "tukey":
        raise ValueError("test='tukey' is not available on Spark: its statistic (the largest difference of "
                         "run means when each query's scores are permuted among the runs) is not a sum of "
                         "per-query terms, so partitions cannot merge it; use test='t', 'permutation' or "
                         "'bootstrap', or rankereval.compare on per-query scores")
    test, correction, alternative, nan_handling, queries, alpha, n_resamples, run_names = _check_arguments(
        runs, baseline, test, _paired_sums.TESTS, correction, alternative, nan_handling, queries, alpha,
        n_resamples)
    if queries == "union":
        raise ValueError("queries='union' (missing rankings scored as empty) is not available on Spark; "
                         "use queries='intersection' or give every run every query")
    if len(runs) > 126:
        raise ValueError(f"runs: at most 126 runs in one call, got {len(runs)}")
    check_real(relevance_level, "relevance_level")
    metric_names, metric_objs = _resolve_metrics(metrics)
    columns = list(zip(metric_names, metric_objs))
    _refuse_catalogue_metrics(columns, "Spark")
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(npartitions, int)
                                    or npartitions < 1):
        raise ValueError(f"npartitions must be None or an integer >= 1, got {npartitions!r}")
    rng = _engine.rng(random_state)
    seeds = tuple(int(rng.integers(0, 2 ** 64, dtype=np.uint64)) for _ in range(2))
    ci_resamples = 0 if test == "t" else (n_resamples if test == "bootstrap" else min(n_resamples, CI_RESAMPLES))

    union, spec = None, None
    for r, (name, run_df) in enumerate(runs.items()):
        lab, run, s = _sides(labels_df, run_df, query_col, item_col, grade_col, score_col, rank_col)
        if spec is None:
            spec, union = s, lab
        elif s != spec:
            raise TypeError(f"runs[{name!r}] differs from runs[{run_names[0]!r}] in layout or column types "
                            f"({s} vs {spec}); give every run the same schema")
        union = union.unionByName(run.withColumn("side", F.lit(r + 1).cast("byte")))
    spec.update(columns=columns, relevance_level=relevance_level, nan_handling=nan_handling,
                tie_break=tie_break, fail_once=_TEST_FAIL_ONCE, run_names=run_names,
                baseline=baseline, test=test, seeds=seeds, n_resamples=n_resamples,
                ci_resamples=ci_resamples)
    parts = union.repartition(npartitions, "q") if npartitions else union.repartition("q")
    rows = _collect(_map_in_arrow(parts, functools.partial(_compare_task, spec=spec), "partials binary"))
    total = None
    lacking = {name: [] for name in run_names}      # a few query ids per run, for the message
    for row in rows:
        part = pickle.loads(row[0])
        for name, ids in zip(run_names, part.pop("missing")):
            lacking[name] = (lacking[name] + ids)[:5]
        total = part if total is None else _paired_sums.merge(total, part)
    if total is None:
        raise ValueError("labels_df and the runs are empty: nothing to compare")
    n_common = int(total["n_q"])
    if int(total["n_union"]) != n_common and queries == "error":
        detail = "; ".join(f"{name!r} lacks {', '.join(map(str, ids))}" for name, ids in lacking.items() if ids)
        raise ValueError(f"the runs rank different queries ({int(total['n_union']) - n_common} not ranked by "
                         f"every run; e.g. {detail}); pass queries='intersection' to compare the common "
                         "queries")
    counts = total["counts"]
    means = _run_means(total["score_sums"].to_float(), counts)
    weighted = _engine.weighted_columns(columns)
    means = _paired_sums.weighted_run_means(total, means, weighted)
    propagated = (total["undefined"] > 0) if nan_handling == "propagate" else np.zeros(len(columns), bool)
    n_pairs = len(run_names) - 1 if baseline is not None else len(run_names) * (len(run_names) - 1) // 2
    _, mean_diff, sd, p, low, high = _paired_sums.summarise(total, test, alternative, alpha, n_resamples,
                                                            np.repeat(weighted, n_pairs))
    b = None if baseline is None else run_names.index(str(baseline))
    pairs = ([(r, b) for r in range(len(run_names)) if r != b] if b is not None else
             [(j, i) for i in range(len(run_names)) for j in range(i + 1, len(run_names))])
    assert len(pairs) == n_pairs
    geometric = np.array([m.info.aggregate == "geometric" for m in metric_objs], dtype=bool)
    report = {"aligned_by": "query_id", "queries": queries, "n_queries": n_common,
              "n_union": int(total["n_union"]), "n_common": n_common,
              "n_qrels_not_ranked": int(total["n_qrels_not_ranked"]), "missing": lacking,
              "n_filled": {name: 0 for name in run_names}, "n_dropped": int(total["n_union"]) - n_common,
              "n_undefined": {name: int(total["undefined"][m]) for m, name in enumerate(metric_names)}}
    if nan_default:
        _engine.warn_compare_default(report["n_undefined"], "rankereval.spark.compare")
    return _finish(metric_names, metric_objs, run_names, baseline, pairs, test, correction, alpha,
                   n_resamples, alternative, nan_handling, ci_resamples, propagated, geometric, means,
                   counts, mean_diff, sd, low, high, p,
                   (total["better"], total["worse"], total["ties"]), None, None, None, report)
