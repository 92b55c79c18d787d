r"""Serendipity as Microsoft Recommenders defines it, with its inputs: the users' histories
and an item-item similarity (:func:`cooccurrence_similarity`, :func:`feature_similarity`, or
any similarity matrix).

Validation and the formula's edge cases live here; ``_serendipity_kernel.pyx`` only loops.
"""
import numpy as np

import rankereval.metrics._serendipity_kernel as _kernel
from rankereval._threads import effective_n_threads
from rankereval._validation import check_choice, check_item_features, check_k
from rankereval.data import Labels, Rankings
from rankereval.metrics import _base
from rankereval.metrics._base import MetricInfo
from rankereval.metrics._beyond import _ArrayInputMetric, interactions

_RELEVANCE = ("labels", "ones")


class Serendipity(_ArrayInputMetric):
    r"""Serendipity@k: mean unexpectedness of the top k items, weighted by their relevance,
    as Microsoft Recommenders' ``user_serendipity`` computes it.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0); shorter rankings use all their
        items.
    history : BinaryLabels, NumericLabels, scipy sparse matrix or 2-D array
        The items each user interacted with in training (Recommenders' ``train_df``): one
        row per ranking, row ``i`` for ranking ``i`` (as label rows align with rankings;
        for a :class:`~rankereval.io.TrecData`, its rows in ``data.query_ids`` order), or a
        single row for every ranking. Every stored item (labels) or non-zero entry
        (matrices) is one interaction; the values are not read.
    similarity : 2-D array or scipy sparse matrix, shape (n_items, n_items)
        The item-item similarity, ``similarity[i, h]`` for a recommended item ``i`` and a
        history item ``h``; finite. An entry a sparse matrix does not store is 0, as
        Recommenders counts a pair its similarity table lacks. Recommenders' two measures:
        :func:`cooccurrence_similarity` (``item_cooccurrence_count``) and
        :func:`feature_similarity` (``item_feature_vector``).
    relevance : {'labels', 'ones'}, default='labels'
        'labels': the relevance of a recommended item is its value in ``y_true`` (1 for
        :class:`~rankereval.BinaryLabels`, the grade for
        :class:`~rankereval.NumericLabels`, 0 for an item its row does not hold):
        Recommenders' ``col_relevance``. 'ones': every item counts as relevant and
        ``y_true`` is not read (it may be None): Recommenders' default without
        ``col_relevance``.

    Notes
    -----
    For ranking :math:`y` of user :math:`u`, with history :math:`H_u`, top
    :math:`k' = \min(k, |y|)` items and relevance :math:`\mathrm{rel}(u, i)`
    [ZSQJ12]_

    .. math::

        \mathrm{Serendipity}@k(y) = \frac{1}{k'} \sum_{j=1}^{k'}
        \Bigl(1 - \frac{1}{|H_u|} \sum_{h \in H_u} \mathrm{sim}(y_j, h)\Bigr)\,
        \mathrm{rel}(u, y_j).

    NaN when the top k is empty or the history is empty (Recommenders leaves such a user
    out of its mean: ``nan_handling='drop'`` gives its ``serendipity``). A ranked item id
    outside the similarity is a ``ValueError``. Differences from Recommenders: it refuses a
    recommended item that is in the user's history (here its similarity to itself is read
    like any other pair's), rounds relevance to float16 (here float64: the two agree on 0,
    1 and small integer grades), and under pandas 3 its ``fillna(inplace=True)`` no longer
    fills missing pairs (1.2.1 requires pandas < 3). The kernel walks the similarity row of
    each relevant top-k item once: :math:`O(|H_u| + k \, \mathrm{nnz}(\mathrm{row}))` per ranking.

    References
    ----------
    .. [ZSQJ12] Y. C. Zhang, D. Ó Séaghdha, D. Quercia and T. Jambor: "Auralist: introducing
       serendipity into music recommendation". WSDM 2012.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import BinaryLabels, Rankings, Serendipity, cooccurrence_similarity
    >>> train = BinaryLabels.from_positive_indices([[1, 2], [0, 2], [0, 1, 3]])
    >>> sim = cooccurrence_similarity(train)
    >>> y_pred = Rankings.from_ranked_indices([[3, 0], [3], [2]])
    >>> Serendipity(2, train, sim, relevance="ones").score(None, y_pred).round(4)
    array([0.5732, 0.6464, 0.6667])

    The third: item 2 shares one of its two users with item 0 and with item 1 (similarity
    1/2 each) and none with item 3, so its serendipity is 1 - (1/2 + 1/2 + 0)/3 = 2/3.
    """

    info = MetricInfo(
        name="serendipity", kernel="serendipity", labels="graded", inputs=("history", "similarity"),
        row_inputs=("history",), choices={"relevance": _RELEVANCE},
        summary="Serendipity@k: mean (1 - similarity to the history) x relevance of the top k "
                "(Microsoft Recommenders; needs history and similarity)",
        undefined="its top k or its user's history is empty", value_range=(-float("inf"), float("inf")),
    )

    def __init__(self, k, history, similarity, relevance="labels"):
        self.k = check_k(k)
        self.relevance = check_choice(relevance, _RELEVANCE, "relevance")
        self.history = history
        self.similarity = similarity
        self._sim = _similarity_csr(similarity)
        self._hist = interactions(history, "history")
        if self._hist.shape[0] == 0:
            raise ValueError("history has no rows: give one row per ranking, or one row for all rankings")
        n_items = self._sim.shape[0]
        if self._hist.indices.size and int(self._hist.indices.max()) >= n_items:
            raise ValueError(f"history holds item id {int(self._hist.indices.max())}, outside the similarity "
                             f"(item ids 0..{n_items - 1}); give a similarity over the whole catalogue "
                             "(cooccurrence_similarity(train, n_items=...))")

    def _check_inputs(self, y_true, y_pred):
        if not isinstance(y_pred, Rankings):
            raise TypeError(f"y_pred must be Rankings, got {type(y_pred).__name__}; build it with "
                            "Rankings.from_ranked_indices(...) or Rankings.from_scores(...)")
        if y_true is None and self.relevance == "labels":
            raise TypeError("y_true must be labels: Serendipity weighs each recommended item by its label "
                            "(Recommenders' col_relevance); pass relevance='ones' to count every item as "
                            "relevant (Recommenders' default), which does not read y_true")
        if y_true is not None and not isinstance(y_true, Labels):
            allowed = "BinaryLabels, NumericLabels or None" if self.relevance == "ones" else \
                "BinaryLabels or NumericLabels"
            raise TypeError(f"y_true must be {allowed}, got {type(y_true).__name__}")
        self._check_rows(y_true, y_pred)

    def _check_rows(self, y_true, y_pred):
        n = y_pred.n_rows
        if self._hist.shape[0] not in (1, n):
            raise ValueError(f"history has {self._hist.shape[0]} rows but y_pred has {n} rankings; give one "
                             "row of history per ranking (row i for ranking i), or one row for all rankings")
        if self.relevance == "labels" and y_true.n_rows not in (1, n):
            raise ValueError(f"y_true has {y_true.n_rows} label rows but y_pred has {n} rankings; give one "
                             "label row per ranking, or a single label row for all rankings")

    def _score(self, y_true, y_pred):
        self._check_rows(y_true, y_pred)
        ranks = y_pred.indices
        out = np.empty(ranks.shape[0], dtype=np.float64)
        bad = np.full(1, -1, dtype=np.int64)
        ones = self.relevance == "ones"
        if ones:
            l_indptr, l_indices, l_values = np.zeros(2, np.int64), np.empty(0, np.int64), np.empty(0)
        else:
            l_indptr, l_indices, l_values = y_true.indptr, y_true.indices, y_true.values
        s, h = self._sim, self._hist
        _kernel.serendipity(ranks, y_pred.lengths, self.k, _ids(h.indptr), _ids(h.indices), s.indptr, s.indices, s.data,
                            l_indptr, l_indices, l_values, ones, out, bad,
                            effective_n_threads(ranks.shape[0] * min(self.k, ranks.shape[1]) * 8))
        self._raise_bad_id(bad, "the similarity", s.shape[0])
        return out

    def _on_items(self, doc_ids, ranked):
        """This metric over data that number their items apart (``TrecData.doc_ids``: item
        ``j`` is the user's item ``doc_ids[j]``): the similarity and the histories relabelled
        so that item ``j`` is that item, and the user's items the data do not hold (history
        items of no ranking still count in the mean over the history) take the numbers after
        the data's. The rankings and labels keep their numbers."""
        import scipy.sparse as sp

        n_sim = self._sim.shape[0]
        doc = self._items_of(doc_ids, ranked, "similarity", n_sim)
        inside = (np.asarray(doc_ids).astype(np.int64) >= 0) & (np.asarray(doc_ids).astype(np.int64) < n_sim)
        new = np.full(n_sim, -1, dtype=np.int64)
        new[doc[inside]] = np.flatnonzero(inside)
        rest = np.flatnonzero(new < 0)
        new[rest] = doc.shape[0] + np.arange(rest.shape[0])
        n_new = doc.shape[0] + rest.shape[0]
        sim = self._sim.tocoo()
        similarity = sp.csr_matrix((sim.data, (new[sim.row], new[sim.col])), shape=(n_new, n_new))
        h = self._hist
        history = sp.csr_matrix((h.data, new[h.indices], h.indptr), shape=(h.shape[0], n_new))
        return type(self)(self.k, history, similarity, self.relevance)

    def _for_rows(self, rows):
        """This metric with the history rows ``rows`` (a batch of rankings, for the Accumulator)."""
        if self._hist.shape[0] == 1:
            return self
        rows = np.asarray(rows, dtype=np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self._hist.shape[0]):
            raise ValueError(f"{self.name}: the batch's rows {int(rows.min())}..{int(rows.max())} are not all rows "
                             f"of its history (0..{self._hist.shape[0] - 1}); history row i belongs to query id "
                             "i (or to the i-th ranking of the stream without query ids)")
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out.history = out._hist = self._hist[rows]
        return out


def _ids(a):
    """``a`` as int64 (scipy narrows the ids of a row selection to int32)."""
    return a.astype(np.int64, copy=False)


def score_serendipity(metrics, y_true, y_pred):
    """Scores of Serendipity metrics over the same labels and rankings, one column each (the
    scorer of the pseudo-kernel ``"serendipity"`` in :func:`rankereval.metrics._base._score_many`)."""
    return np.column_stack([m._score(y_true, y_pred) for m in metrics])


_base._SERENDIPITY_SCORER[0] = score_serendipity


def _similarity_csr(similarity):
    """A square, finite item-item similarity as a canonical CSR of float64 with int64 ids."""
    import scipy.sparse as sp

    if not sp.issparse(similarity):
        similarity = np.asarray(similarity)
    if similarity.dtype.kind not in "biuf":
        raise TypeError(f"similarity must hold real numbers, got dtype {similarity.dtype}")
    if similarity.ndim != 2 or similarity.shape[0] != similarity.shape[1] or similarity.shape[0] == 0:
        raise ValueError("similarity must be a square 2-D matrix over the item ids (n_items x n_items), "
                         f"got shape {similarity.shape}")
    m = sp.csr_matrix(similarity, dtype=np.float64, copy=True)
    m.sum_duplicates()
    m.eliminate_zeros()
    if not np.isfinite(m.data).all():
        p = int(np.flatnonzero(~np.isfinite(m.data))[0])
        row = int(np.searchsorted(m.indptr, p, side="right") - 1)
        raise ValueError(f"similarity must be finite; entry ({row}, {int(m.indices[p])}) is {m.data[p]!r}")
    m.indptr = m.indptr.astype(np.int64)
    m.indices = m.indices.astype(np.int64)
    return m


def cooccurrence_similarity(train, n_items=None):
    r"""Item-item similarity from co-occurrence: Microsoft Recommenders' ``item_cooccurrence_count``.

    .. math::

        \mathrm{sim}(i, j) = \frac{|U_i \cap U_j|}{\sqrt{|U_i|\,|U_j|}},

    with :math:`U_i` the users who interacted with item :math:`i` (the cosine of the items'
    binary user vectors; 1 on the diagonal of every item someone interacted with).

    Parameters
    ----------
    train : BinaryLabels, NumericLabels, scipy sparse matrix or 2-D array
        One row per user; each stored item (labels) or non-zero entry is one interaction.
    n_items : int, optional
        Size of the catalogue (item ids ``0 .. n_items - 1``), at least the number of
        columns of ``train``; items nobody interacted with have similarity 0 to every item.
        Default: the columns of ``train``.

    Returns
    -------
    scipy.sparse.csr_matrix of float64, shape (n_items, n_items)
        Only co-occurring pairs are stored.

    Examples
    --------
    >>> from rankereval import BinaryLabels, cooccurrence_similarity
    >>> train = BinaryLabels.from_positive_indices([[0, 1], [0, 2], [0, 1]])
    >>> cooccurrence_similarity(train, n_items=4).toarray().round(4)
    array([[1.    , 0.8165, 0.5774, 0.    ],
           [0.8165, 1.    , 0.    , 0.    ],
           [0.5774, 0.    , 1.    , 0.    ],
           [0.    , 0.    , 0.    , 0.    ]])
    """
    import scipy.sparse as sp

    x = interactions(train, "train")
    n_cols = x.shape[1]
    if n_items is None:
        n_items = n_cols
    elif isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, (int, np.integer)) or n_items < n_cols:
        raise ValueError(f"n_items must be an integer >= the {n_cols} items of train, got {n_items!r}")
    if n_items == 0:
        raise ValueError("train has no items: the similarity is empty")
    x = sp.csr_matrix((x.data, x.indices, x.indptr), shape=(x.shape[0], int(n_items)))
    sim = sp.csr_matrix(x.T @ x)  # co-occurrence counts; the diagonal holds each item's count
    sim.sort_indices()
    root = np.sqrt(sim.diagonal())
    rows = np.repeat(np.arange(int(n_items)), np.diff(sim.indptr))
    sim.data = sim.data / (root[rows] * root[sim.indices])  # Recommenders' rounding: count / (sqrt * sqrt)
    return sim


def feature_similarity(item_features):
    r"""Item-item cosine similarity of feature vectors: Microsoft Recommenders'
    ``item_feature_vector``, :math:`\mathrm{sim}(i, j) = x_i \cdot x_j / (\|x_i\| \|x_j\|)`.

    Parameters
    ----------
    item_features : array or scipy sparse matrix, shape (n_items, n_features)
        One feature vector per item id, finite and non-zero (the cosine of a zero vector is
        0/0; Recommenders' NaN for it then counts as 0).

    Returns
    -------
    ndarray of float64 (dense features) or scipy.sparse.csr_matrix (sparse features), shape (n_items, n_items)

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import feature_similarity
    >>> feature_similarity(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 2.0]])).round(4)
    array([[1.    , 0.7071, 0.    ],
           [0.7071, 1.    , 0.7071],
           [0.    , 0.7071, 1.    ]])
    """
    import scipy.sparse as sp

    m, sq = check_item_features(item_features)
    inv = 1.0 / np.sqrt(sq)
    if sp.issparse(m):
        u = sp.csr_matrix(sp.diags(inv) @ m)
        sim = sp.csr_matrix(u @ u.T)
        sim.sort_indices()
        return sim
    u = m * inv[:, None]
    return u @ u.T
