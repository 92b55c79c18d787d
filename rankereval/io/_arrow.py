"""Arrow list columns (one row per query) to the kernels' arrays, without mapping ids.

The *nested* layout of :func:`rankereval.dask.read_parquet` and :func:`rankereval.spark.evaluate`:
one row per query, the run's items a list of integer item ids in ranked order, the labels'
items a list of relevant (or judged) item ids and optionally a list of their grades. The
lists become :class:`~rankereval.Rankings` and labels directly; nothing here imports an engine.
"""
import numpy as np

from rankereval.data import BinaryLabels, NumericLabels, Rankings


class RepeatedQueryError(ValueError):
    """A query id with two rows on one side (``side``: 'labels' or 'run')."""

    def __init__(self, query, side):
        super().__init__(f"query {query!r} has two rows in the {side}")
        self.query, self.side = query, side


def nested_queries(lq, rq, l_off, l_items, grades, r_off, r_items):
    """Labels and rankings of the queries found on both sides of a nested layout.

    ``lq``/``rq``: the query id of each labels/run row; ``(l_off, l_items)``,
    ``(r_off, r_items)``: their list columns as offsets and values (:func:`list_column`);
    ``grades``: the values of the labels' grade lists (same offsets) or None.

    Returns ``(binary, numeric, rankings, common, seen)``: one of the labels (the other
    None), the rankings and the query ids of the rows (queries of one side only are
    dropped, as ``missing='drop', extra='drop'``), and every query id of the input (None:
    ``common``). ``rankings`` is None when no query is on both sides. Raises
    :class:`RepeatedQueryError` for a query with two rows on one side.
    """
    same = lq.shape == rq.shape and np.array_equal(lq, rq)
    for ids, name in ((lq, "labels"), (rq, "run")) if not same else ((rq, "run"),):
        repeated = _first_repeated(ids)
        if repeated is not None:
            raise RepeatedQueryError(repeated, name)
    if same:
        common, li, ri, seen = rq, None, None, None
    else:
        # as trec_eval and from_dataframes(missing='drop', extra='drop'): only queries in both
        common, li, ri = np.intersect1d(lq, rq, assume_unique=True, return_indices=True)
        seen = np.union1d(lq, rq)
    if common.shape[0] == 0:
        return None, None, None, common, seen
    rankings = _ragged_rankings(r_off, r_items, ri)
    binary, numeric = _ragged_labels(l_off, l_items, grades, li, rankings)
    return binary, numeric, rankings, common, seen


def one_array(column):
    """A pyarrow ChunkedArray as one Array, without a copy when it has one chunk (as
    ``combine_chunks`` makes even then)."""
    return column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()


def list_column(column):
    """(offsets, values) of a list column of a pyarrow table."""
    arr = one_array(column)
    if arr.null_count:
        raise ValueError("list column has null entries")
    offsets = np.asarray(arr.offsets, dtype=np.int64)
    values = np.asarray(arr.flatten())
    return offsets - offsets[0], values



def _first_repeated(ids):
    """An id that occurs twice in ``ids``, or None (ids written in order need no sort)."""
    if ids.shape[0] < 2 or (ids.dtype.kind in "iu" and (ids[1:] > ids[:-1]).all()):
        return None
    s = np.sort(ids)
    dup = np.flatnonzero(s[1:] == s[:-1])
    return s[dup[0]].item() if dup.size else None


def _select(offsets, rows, *columns):
    """Lists ``rows`` (None: all) of list columns sharing ``offsets``: (offsets, [values...])."""
    if rows is None:
        return offsets, list(columns)
    lengths = np.diff(offsets)[rows]
    starts = offsets[:-1][rows]
    new = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=new[1:])
    take = np.repeat(starts - new[:-1], lengths) + np.arange(new[-1])
    return new, [c[take] for c in columns]


def _ragged_rankings(offsets, values, rows):
    """Rankings from a list column (offsets, values), rows ``rows`` (None: all)."""
    offsets, (values,) = _select(offsets, rows, values)
    lengths = np.diff(offsets)
    n = lengths.shape[0]
    width = int(lengths.max()) if n else 0
    if n and (lengths == width).all():
        # every list of the same length (top-k runs): the values are the rankings, no padding
        return Rankings.from_ranked_indices(values.reshape(n, width))
    else:
        padded = np.full((n, width), -1, dtype=values.dtype if values.size else np.int64)
        pos = np.arange(values.shape[0]) - np.repeat(offsets[:-1], lengths)
        padded[np.repeat(np.arange(n), lengths), pos] = values
    return Rankings.from_ranked_indices(padded, pad=-1)


def _ragged_labels(offsets, items, grades, rows, rankings):
    """(BinaryLabels, None) or (None, NumericLabels) from list columns of item ids (and grades)."""
    import scipy.sparse as sp

    columns = (items,) if grades is None else (items, grades)
    offsets, selected = _select(offsets, rows, *columns)
    items = selected[0]
    n = offsets.shape[0] - 1
    if items.size and items.min() < 0:
        raise ValueError("label item ids must be >= 0")
    n_items = max(int(items.max()) + 1 if items.size else 0,
                  int(rankings.indices.max()) + 1 if rankings.indices.size else 0)
    if grades is None:
        # the common case: each list sorted without repeats, as writers of ids usually leave
        # them; checked and copied in one typed pass, and every listed item is judged
        labels = BinaryLabels._from_ragged_fast(offsets, items, None, n_items)
        if labels is not None:
            return labels.with_judged(labels), None
    values = np.ones(items.shape[0]) if grades is None else np.asarray(selected[1], dtype=np.float64)
    # a copy: Arrow's buffers are read-only, and sum_duplicates works in place
    m = sp.csr_matrix((values, items, offsets), shape=(n, n_items), copy=True)
    before = m.nnz
    m.sum_duplicates()
    if m.nnz != before:
        rows_of = np.repeat(np.arange(n), np.diff(offsets))
        order = np.lexsort((items, rows_of))
        same = (rows_of[order][1:] == rows_of[order][:-1]) & (items[order][1:] == items[order][:-1])
        r = int(rows_of[order][1:][same][0])
        raise ValueError(f"duplicate label item {int(items[order][1:][same][0])} in the labels of row {r}")
    # every listed item is judged (grade 0: judged not relevant), as rankereval.io reads them
    judged = BinaryLabels.from_matrix(sp.csr_matrix((np.ones(m.nnz), m.indices, m.indptr), shape=m.shape))
    if grades is None:
        return BinaryLabels.from_matrix(m).with_judged(judged), None
    return None, NumericLabels.from_matrix(m).with_judged(judged)
