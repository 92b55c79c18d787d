"""Labels with judgements per intent (subtopic): :class:`IntentLabels`, for the
intent-aware diversity measures (alpha-nDCG, ERR-IA, ...; ``rankereval.metrics._diversity``).

Storage, a three-level index the kernels read with one lookup per ranked item:

* the label rows as every :class:`NumericLabels` stores them: a CSR of the judged items of
  each query (sorted ids), whose value is the item's largest grade over the intents (what
  every other metric reads: the *collapsed* labels);
* for each stored entry ``e`` of that CSR, ``entry_ptr[e]:entry_ptr[e + 1]`` delimits its
  intents: ``entry_intents`` (the query's intent numbers ``0 .. n_intents[row] - 1``,
  ascending) and ``entry_grades`` (the grade of the item for that intent, > 0);
* ``n_intents[row]``: the number of intents of the query (every intent with a positive grade);
* ``order`` (optional): a key per entry that breaks ties in the greedy ideal ranking (larger
  first), ndeval's comparison of document names; without it, the larger item id first.

Grades of 0 and below are not stored, as in every label class.
"""
from numbers import Real

import numpy as np

from rankereval.data._conversion import _frozen_view, _id_dtype, _readonly, _row_selection
from rankereval.data._labels import Labels, NumericLabels, _restore_labels

_INTENT_READERS = ("rankereval.io.read_trec(qrels, run, intents=True) (the TREC Web diversity qrels "
                   "'query subtopic docid grade'), rankereval.io.from_dataframes(..., intent_col=...), "
                   "rankereval.io.from_dicts with qrels {query: {intent: {doc: grade}}}, or "
                   "IntentLabels.from_rows(...)")


class IntentLabels(NumericLabels):
    """Graded labels with a judgement per intent (subtopic) of each query.

    A :class:`NumericLabels` whose value of an item is its largest grade over the query's
    intents (so every metric reads them: NDCG, AP, ...), which also keeps each intent's
    grades for the intent-aware diversity measures (:class:`~rankereval.AlphaNDCG`,
    :class:`~rankereval.ERRIA`, ...). Build them with :meth:`from_rows`, or read them with
    :func:`rankereval.io.read_trec` (``intents=True``), :func:`~rankereval.io.from_dataframes`
    (``intent_col=``) or :func:`~rankereval.io.from_dicts`.

    Examples
    --------
    >>> from rankereval import IntentLabels
    >>> y = IntentLabels.from_rows([{"a": {0: 1, 2: 1}, "b": {2: 1, 5: 2}}])
    >>> y.indices_to_list(), y.labels_to_list()
    ([[0, 2, 5]], [[1.0, 1.0, 2.0]])
    >>> y.n_intents
    array([2])
    >>> y.intents_to_list()
    [[{0: 1.0}, {0: 1.0, 1: 1.0}, {1: 2.0}]]
    """

    __slots__ = ("_entry_ptr", "_entry_intents", "_entry_grades", "_n_intents", "_order")

    @classmethod
    def from_matrix(cls, labels):
        raise TypeError(f"IntentLabels hold a judgement per intent, which a matrix cannot; build them with "
                        f"IntentLabels.from_rows(...) or read them with {_INTENT_READERS.split(', ', 1)[0]}")

    @classmethod
    def from_groups(cls, y, qid=None, *, group=None):
        raise TypeError("IntentLabels hold a judgement per intent, which flat arrays cannot; build them with "
                        "IntentLabels.from_rows(...)")

    @classmethod
    def from_rows(cls, rows, n_items=None):
        """Labels from one dict per query: ``{intent: {item id: grade}}``.

        Parameters
        ----------
        rows : sequence of dict
            Row ``i``: the judgements of query ``i``, by intent (any hashable, local to the
            query; intents are numbered in sorted order when they can be sorted, else in order
            of appearance), then by item id (a non-negative integer). Grades of 0 and below are
            not stored (not relevant).
        n_items : int, optional
            The number of items (default: the largest id + 1).

        Raises
        ------
        TypeError
            If ``rows`` is not a sequence of dicts of dicts.
        ValueError
            If an item id is negative or not an integer, or a grade is not a finite number.
        """
        if isinstance(rows, (dict, str, bytes)) or not hasattr(rows, "__len__"):
            raise TypeError(f"rows must be a sequence of dicts {{intent: {{item: grade}}}}, one per query, "
                            f"got {type(rows).__name__}")
        row_l, item_l, intent_l, grade_l = [], [], [], []
        for i, row in enumerate(rows):
            if not isinstance(row, dict):
                raise TypeError(f"rows[{i}] must be a dict {{intent: {{item: grade}}}}, got {type(row).__name__}")
            keys = list(row)
            try:
                keys = sorted(keys)
            except TypeError:
                pass
            for number, intent in enumerate(keys):
                judged = row[intent]
                if not isinstance(judged, dict):
                    raise TypeError(f"rows[{i}][{intent!r}] must be a dict {{item: grade}}, "
                                    f"got {type(judged).__name__}")
                for item, grade in judged.items():
                    if isinstance(item, (bool, np.bool_)) or not isinstance(item, (int, np.integer)) or item < 0:
                        raise ValueError(f"rows[{i}][{intent!r}]: item ids must be non-negative integers, "
                                         f"got {item!r}")
                    if isinstance(grade, (bool, np.bool_)) or not isinstance(grade, (Real, np.number)) \
                            or not np.isfinite(float(grade)):
                        raise ValueError(f"rows[{i}][{intent!r}][{item!r}]: a grade must be a finite number, "
                                         f"got {grade!r}")
                    row_l.append(i)
                    item_l.append(int(item))
                    intent_l.append(number)
                    grade_l.append(float(grade))
        n_rows = len(rows)
        items = np.array(item_l, dtype=np.int64)
        width = int(items.max()) + 1 if items.size else 0
        if n_items is not None:
            if isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, (int, np.integer)) \
                    or n_items < width:
                raise ValueError(f"n_items must be an integer of at least the largest item id + 1 ({width}), "
                                 f"got {n_items!r}")
            width = int(n_items)
        return cls._from_lines(np.array(row_l, dtype=np.int64), items, np.array(intent_l, dtype=np.int64),
                               np.array(grade_l, dtype=np.float64), n_rows, width)

    @classmethod
    def _from_lines(cls, rows, items, intents, grades, n_rows, n_items, order=None):
        """From judgement lines ``(row, item, intent number, grade)`` without repeated
        ``(row, intent, item)`` (any order); ``order``: a tie key per line's item (larger
        first in the greedy ideal), or None (item ids). Lines of grade <= 0 are not stored."""
        keep = grades > 0
        rows, items, intents, grades = rows[keep], items[keep], intents[keep], grades[keep]
        if order is not None:
            order = order[keep]
        by = np.lexsort((intents, items, rows))
        rows, items, intents, grades = rows[by], items[by], intents[by], grades[by]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (items[1:] != items[:-1])
        starts = np.flatnonzero(new)
        collapsed = np.maximum.reduceat(grades, starts) if starts.size else np.zeros(0)
        entry_rows, entry_items = rows[starts], items[starts]
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(entry_rows, minlength=n_rows), out=indptr[1:])
        dt = _id_dtype(max(n_items, starts.size))
        entry_ptr = np.append(starts, rows.size).astype(np.int64)
        n_intents = np.zeros(n_rows, dtype=np.int64)
        if rows.size:
            np.maximum.at(n_intents, rows, intents + 1)
        if n_intents.size and n_intents.max() > np.iinfo(np.int32).max:
            raise ValueError("a query has more than 2**31 - 1 intents")
        out = cls._with_intents(indptr.astype(dt), entry_items.astype(dt), collapsed, n_items, entry_ptr,
                                intents.astype(np.int32), grades, n_intents,
                                None if order is None else np.asarray(order, dtype=np.int64)[starts])
        return out

    @classmethod
    def _with_intents(cls, indptr, indices, values, n_items, entry_ptr, entry_intents, entry_grades, n_intents,
                      order, shared=False):
        out = cls._from_canonical(indptr, indices, values, n_items, shared=shared)
        freeze = _frozen_view if shared else _readonly
        out._entry_ptr = freeze(np.ascontiguousarray(entry_ptr, dtype=np.int64))
        out._entry_intents = freeze(np.ascontiguousarray(entry_intents, dtype=np.int32))
        out._entry_grades = freeze(np.ascontiguousarray(entry_grades, dtype=np.float64))
        out._n_intents = freeze(np.ascontiguousarray(n_intents, dtype=np.int64))
        out._order = None if order is None else freeze(np.ascontiguousarray(order, dtype=np.int64))
        return out

    # -- read-only views -----------------------------------------------------------------
    @property
    def n_intents(self):
        """The number of intents of each query (those with a positive grade), shape ``(n_rows,)``."""
        return self._n_intents.view()

    @property
    def entry_ptr(self):
        """Where the intents of each stored label start: ``entry_intents[entry_ptr[e]:entry_ptr[e + 1]]``
        are those of the ``e``-th stored (row, item), shape ``(nnz + 1,)``."""
        return self._entry_ptr.view()

    @property
    def entry_intents(self):
        """The intent numbers of each stored label (ascending within it), read-only."""
        return self._entry_intents.view()

    @property
    def entry_grades(self):
        """The grade of each stored label for each of its intents, aligned with :attr:`entry_intents`."""
        return self._entry_grades.view()

    @property
    def order(self):
        """A tie key per stored label for the greedy ideal ranking (larger first), or None (larger
        item id first). The readers of :mod:`rankereval.io` set it to the rank of the document
        name, as ndeval compares names."""
        return None if self._order is None else self._order.view()

    def intents_to_list(self):
        """Per row, per stored item (as :meth:`indices_to_list`): ``{intent number: grade}``."""
        out = []
        ptr = self._entry_ptr
        for r in range(self.n_rows):
            row = []
            for e in range(int(self._indptr[r]), int(self._indptr[r + 1])):
                a, b = int(ptr[e]), int(ptr[e + 1])
                row.append(dict(zip(self._entry_intents[a:b].tolist(), self._entry_grades[a:b].tolist())))
            out.append(row)
        return out

    def collapsed(self):
        """These labels without their intents: :class:`NumericLabels` of each item's largest
        grade (sharing the storage)."""
        out = NumericLabels._from_canonical(self._indptr, self._indices, self._values, self._n_items, shared=True)
        out._judged = self._judged
        return out

    # -- what every label class does, with the intents ---------------------------------------
    def _intent_parts(self):
        return (self._entry_ptr, self._entry_intents, self._entry_grades, self._n_intents, self._order)

    def _take_entries(self, out, pos, rows):
        """``out`` (labels of rows ``rows`` whose stored entries are this object's ``pos``)
        with their intents."""
        counts = np.diff(self._entry_ptr)[pos]
        ptr = np.zeros(pos.size + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        src = np.arange(int(ptr[-1]), dtype=np.int64) + np.repeat(self._entry_ptr[pos] - ptr[:-1], counts)
        order = None if self._order is None else self._order[pos]
        judged = out._judged
        res = type(self)._with_intents(out._indptr, out._indices, out._values, out._n_items, ptr,
                                       self._entry_intents[src], self._entry_grades[src], self._n_intents[rows],
                                       order)
        res._judged = judged
        return res

    def __getitem__(self, key):
        out = NumericLabels.__getitem__(self.collapsed(), key)
        step1, rows = _row_selection(key, self.n_rows, type(self).__name__)
        indptr = self._indptr.astype(np.int64)
        if step1 is not None:
            rows = np.arange(step1[0], step1[1], dtype=np.int64)
        counts = indptr[rows + 1] - indptr[rows]
        pos = np.arange(int(counts.sum()), dtype=np.int64) + np.repeat(
            indptr[rows] - np.concatenate(([0], np.cumsum(counts)[:-1])), counts)
        return self._take_entries(out, pos, rows)

    __getitem__.__doc__ = Labels.__getitem__.__doc__

    @classmethod
    def concatenate(cls, labels, n_items=None):
        """Stack the rows of several :class:`IntentLabels` (as :meth:`Labels.concatenate`)."""
        parts = list(labels) if not isinstance(labels, Labels) else [labels]
        for i, p in enumerate(parts):
            if not isinstance(p, IntentLabels):
                raise TypeError(f"labels[{i}] is {type(p).__name__}, not IntentLabels: concatenate labels of "
                                "one class")
        out = NumericLabels.concatenate([p.collapsed() for p in parts], n_items=n_items)
        offsets = np.cumsum([0] + [p._entry_intents.shape[0] for p in parts[:-1]])
        ptr = np.concatenate([parts[0]._entry_ptr[:1]] + [p._entry_ptr[1:] + o for p, o in zip(parts, offsets)])
        with_order = [p._order is not None for p in parts]
        if any(with_order) and not all(with_order):
            raise ValueError(f"labels[{with_order.index(False)}] has no tie order but labels["
                             f"{with_order.index(True)}] has: give it to all parts or none")
        res = cls._with_intents(out._indptr, out._indices, out._values, out._n_items, ptr,
                                np.concatenate([p._entry_intents for p in parts]),
                                np.concatenate([p._entry_grades for p in parts]),
                                np.concatenate([p._n_intents for p in parts]),
                                np.concatenate([p._order for p in parts]) if all(with_order) else None)
        res._judged = out._judged
        return res

    def with_judged(self, judged):
        out = self.collapsed().with_judged(judged)
        res = type(self)._with_intents(out._indptr, out._indices, out._values, out._n_items, *self._intent_parts(),
                                       shared=True)
        res._judged = out._judged
        return res

    with_judged.__doc__ = Labels.with_judged.__doc__

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        if not self.collapsed() == other.collapsed():
            return False
        mine, theirs = self._intent_parts(), other._intent_parts()
        return all((a is None and b is None) or (a is not None and b is not None and np.array_equal(a, b))
                   for a, b in zip(mine, theirs))

    __hash__ = None

    def __reduce__(self):
        base = NumericLabels.__reduce__(self.collapsed())[1][1:]
        return (_restore_intent_labels, (base, self._intent_parts()))

    def __repr__(self):
        return NumericLabels.__repr__(self).replace(
            "nnz=", f"n_intents={int(self._n_intents.sum())}, nnz=", 1)


def _restore_intent_labels(base, parts):
    collapsed = _restore_labels(NumericLabels, *base)
    out = IntentLabels._with_intents(collapsed._indptr, collapsed._indices, collapsed._values, collapsed._n_items,
                                     *parts)
    out._judged = collapsed._judged
    return out


def check_intent_labels(y_true, who):
    """TypeError unless ``y_true`` is :class:`IntentLabels` (the message names the readers)."""
    if not isinstance(y_true, IntentLabels):
        raise TypeError(f"{who} is an intent-aware measure: it needs labels with a judgement per intent "
                        f"(IntentLabels), got {type(y_true).__name__}; read them with {_INTENT_READERS}")
