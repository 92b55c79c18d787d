r"""Beyond-accuracy metrics of each ranking: novelty, popularity, long-tail share, diversity.

They read the rankings only (``MetricInfo.labels == "none"``): ``score(y_true, y_pred)`` keeps
the signature of every metric, so :meth:`~rankereval.Metric.mean`, the bootstrap,
:func:`rankereval.evaluate` and :func:`rankereval.compare` work unchanged, but ``y_true`` may
be None and is not read. What they need besides the rankings is data, given to the
constructor (``MetricInfo.inputs``): item popularity (:func:`popularity_from`), a set of
long-tail items, item features.
"""
import numpy as np

import rankereval.metrics._beyond_fast as _beyond
from rankereval._threads import effective_n_threads
from rankereval._validation import (check_choice, check_item_features, check_item_set,
                                    check_item_values, check_k)
from rankereval.data import Labels, Rankings
from rankereval.metrics._base import Metric, MetricInfo


class _ArrayInputMetric(Metric):
    """A metric whose data inputs (``MetricInfo.inputs``) are arrays or labels: compared by
    value, hashed and shown by their options only."""

    def _options(self):
        return {k: v for k, v in self._params().items() if k not in self.info.inputs}

    def __eq__(self, other):
        if type(other) is not type(self):
            return NotImplemented
        if self._options() != other._options():
            return False
        return all(_same_input(getattr(self, n), getattr(other, n)) for n in self.info.inputs)

    def __hash__(self):
        return hash((type(self).__name__, tuple(self._options().items())))

    def __repr__(self):
        args = ", ".join(f"{k}={_short(v) if k in self.info.inputs else repr(v)}"
                         for k, v in self._params().items())
        return f"{type(self).__name__}({args})"

    def _raise_bad_id(self, bad, what, size):
        if bad[0] != -1:
            raise ValueError(f"y_pred: item id {int(bad[0])} is outside {what} of "
                             f"{type(self).__name__} (it covers item ids 0..{size - 1})")

    def _on_items(self, doc_ids, ranked):
        """This metric with its item-indexed inputs in the numbering of data read from files
        or frames (:class:`rankereval.io.TrecData`), whose item ``j`` is the user's item
        ``doc_ids[j]``: the inputs are indexed by the user's integer item ids. ``ranked``:
        the item numbers the rankings hold (an id of them outside an input is the error a
        ranking of it gives). Metrics whose inputs cannot follow a renumbering refuse."""
        raise ValueError(f"{type(self).__name__}'s {' and '.join(self.info.inputs)} cannot follow the item "
                         "numbering of data read from files or frames; evaluate Labels and Rankings that "
                         "hold the item ids the inputs are indexed by")

    def _items_of(self, doc_ids, ranked, what, size):
        """``doc_ids`` as an int64 array of the user's item ids (the kernels' error when one
        that the rankings hold is outside an input of ``size`` items), with the ids outside
        it set to 0 (never read)."""
        ids = np.asarray(doc_ids)
        if ids.dtype.kind not in "iu":
            example = ids[0] if ids.size else ""
            raise ValueError(
                f"{type(self).__name__}'s {what} is indexed by integer item ids, but the data's item ids "
                f"are not integers (e.g. {example!r}); build it in the data's own numbering (item j is "
                "data.doc_ids[j]) and evaluate data.numeric_labels with data.rankings")
        ids = ids.astype(np.int64)
        outside = (ids < 0) | (ids >= size)
        if outside.any():
            hit = outside[ranked] if ranked.size else outside[:0]
            if hit.any():
                self._raise_bad_id(np.array([ids[ranked[np.argmax(hit)]]]), f"the {what}", size)
            ids = np.where(outside, 0, ids)
        return ids


class _RankingsOnlyMetric(_ArrayInputMetric):
    """A per-ranking metric of the top k that reads the rankings and per-item data only."""

    def _check_inputs(self, y_true, y_pred):
        if y_true is not None and not isinstance(y_true, Labels):
            raise TypeError(f"y_true must be None or labels (which {type(self).__name__} does not read), "
                            f"got {type(y_true).__name__}")
        if not isinstance(y_pred, Rankings):
            raise TypeError(f"y_pred must be Rankings, got {type(y_pred).__name__}; build it with "
                            "Rankings.from_ranked_indices(...) or Rankings.from_scores(...)")


def _same_input(a, b):
    import scipy.sparse as sp

    if isinstance(a, Labels) or isinstance(b, Labels):
        return type(a) is type(b) and a.n_items == b.n_items and a == b
    if sp.issparse(a) or sp.issparse(b):
        return sp.issparse(a) and sp.issparse(b) and a.shape == b.shape and (a != b).nnz == 0
    return np.array_equal(np.asarray(a), np.asarray(b))


def _short(value):
    if isinstance(value, Labels):
        return f"<{type(value).__name__} {value.n_rows}x{value.n_items}>"
    shape = "x".join(map(str, getattr(value, "shape", ())))
    return f"<{type(value).__name__} {shape} {getattr(value, 'dtype', '')}>".replace("  ", " ")


class _ItemValueMetric(_RankingsOnlyMetric):
    """The mean of a per-item value over the top k (one typed kernel for all of them)."""

    _input = None  # name of the input the values come from (for error messages)

    def _score(self, y_true, y_pred):
        ranks = y_pred.indices
        values, beyond_ok = self._values()
        out = np.empty(ranks.shape[0], dtype=np.float64)
        bad = np.full(1, -1, dtype=np.int64)
        _beyond.mean_values(ranks, y_pred.lengths, self.k, values, beyond_ok, 0.0, out, bad,
                            effective_n_threads(ranks.shape[0] * min(self.k, ranks.shape[1])))
        self._raise_bad_id(bad, f"the {self._input}", values.shape[0])
        return out

    def _values(self):
        raise NotImplementedError


class Novelty(_ItemValueMetric):
    r"""Novelty@k: mean self-information of the top k items, :math:`-\log_2 p(i)`.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0); shorter rankings use all their
        items.
    popularity : array of float, shape (n_items,)
        :math:`p(i)` in [0, 1], indexed by item id: the probability that a user knows item
        ``i``, the fraction of users who interacted with it in the training data
        (:func:`popularity_from`, Zhou et al.); or its share of all interactions
        (``popularity_from(train, scale="interactions")``, the choice model of Castells et
        al. and Microsoft Recommenders).
    method : {'self_information', 'complement'}, default='self_information'
        'self_information': :math:`-\log_2 p(i)` (Zhou et al. 2010); 'complement' (name
        token ``epc``): :math:`1 - p(i)`, the expected popularity complement of Vargas and
        Castells (2011) without rank discount or relevance weighting.

    Notes
    -----
    For a ranking :math:`y` with top :math:`k' = \min(k, |y|)` items [Zhou10]_ [VC11]_

    .. math::

        \mathrm{Novelty}@k(y) = \frac{1}{k'} \sum_{j=1}^{k'} -\log_2 p(y_j).

    NaN when the ranking is empty, and, for self-information, when an item of the top k has
    popularity 0 (its self-information is infinite: an item nobody interacted with; smooth
    the popularity, or drop those rankings with ``nan_handling='drop'``). The value does not
    depend on the order inside the top k. Microsoft Recommenders' ``novelty`` uses the
    choice-model popularity, averages over all recommendations instead of per user first,
    and counts an item absent from the training data as 0 instead of undefined.

    References
    ----------
    .. [Zhou10] T. Zhou, Z. Kuscsik, J.-G. Liu, M. Medo, J. R. Wakeling and Y.-C. Zhang:
       "Solving the apparent diversity-accuracy dilemma of recommender systems". PNAS 107(10),
       4511-4515 (2010).
    .. [VC11] S. Vargas and P. Castells: "Rank and relevance in novelty and diversity metrics
       for recommender systems". RecSys 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import Rankings, Novelty
    >>> popularity = np.array([0.5, 0.25, 0.125, 1.0])
    >>> Novelty(2, popularity).score(None, Rankings.from_ranked_indices([[0, 1], [2, 3, 0]]))
    array([1.5, 1.5])
    """

    info = MetricInfo(
        name="novelty", kernel="mean_values", labels="none", inputs=("popularity",),
        choices={"method": ("self_information", "complement")},
        tokens={"epc": ("method", "complement")},
        summary="Novelty@k: mean self-information -log2 p(i) of the top k (needs popularity)",
        undefined="its top k is empty or holds an item of popularity 0 (infinite self-information)",
        value_range=(0.0, float("inf")),
    )
    _input = "popularity"

    def __init__(self, k, popularity, method="self_information"):
        self.k = check_k(k)
        self.method = check_choice(method, self.info.choices["method"], "method")
        self.popularity = check_item_values(popularity, "popularity", high=1.0)
        if self.method == "self_information":
            with np.errstate(divide="ignore"):
                values = -np.log2(self.popularity)
            values[np.isinf(values)] = np.nan  # p = 0: undefined, not an infinite mean
        else:
            values = 1.0 - self.popularity
        self._item_values = values

    def _values(self):
        return self._item_values, False

    def _on_items(self, doc_ids, ranked):
        ids = self._items_of(doc_ids, ranked, "popularity", self.popularity.shape[0])
        return type(self)(self.k, self.popularity[ids], self.method)


class AveragePopularity(_ItemValueMetric):
    r"""AveragePopularity@k (ARP): mean popularity of the top k items.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0); shorter rankings use all their
        items.
    popularity : array of float, shape (n_items,)
        Popularity of each item id, >= 0, on any scale: counts of users (as Elliot's and
        RecBole's ARP: ``popularity_from(train, scale="count")``) or fractions.

    Notes
    -----
    .. math::

        \mathrm{ARP}@k(y) = \frac{1}{k'} \sum_{j=1}^{k'} \phi(y_j), \quad k' = \min(k, |y|),

    with :math:`\phi` the popularity [AB19]_. NaN for an empty ranking.

    References
    ----------
    .. [AB19] H. Abdollahpouri, R. Burke and B. Mobasher: "Managing popularity bias in
       recommender systems with personalized re-ranking". FLAIRS 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import Rankings, AveragePopularity
    >>> counts = np.array([10, 4, 1, 0])
    >>> AveragePopularity(2, counts).score(None, Rankings.from_ranked_indices([[0, 1], [3]]))
    array([7., 0.])
    """

    info = MetricInfo(
        name="arp", kernel="mean_values", labels="none", inputs=("popularity",),
        aliases=("averagepopularity",),
        summary="AveragePopularity@k (ARP): mean popularity of the top k (needs popularity)",
        undefined="its ranking is empty", value_range=(0.0, float("inf")), higher_is_better=False,
    )
    _input = "popularity"

    def __init__(self, k, popularity):
        self.k = check_k(k)
        self.popularity = check_item_values(popularity, "popularity")

    def _values(self):
        return self.popularity, False

    def _on_items(self, doc_ids, ranked):
        ids = self._items_of(doc_ids, ranked, "popularity", self.popularity.shape[0])
        return type(self)(self.k, self.popularity[ids])


class TailShare(_ItemValueMetric):
    r"""TailShare@k (APLT): the fraction of the top k items that are long-tail items.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 0); shorter rankings use all their
        items.
    tail_items : array
        The long-tail items: a bool mask over the catalogue's item ids (a ranked id past its
        end is an error), or an array of item ids (any other id is not in the tail).
        :func:`long_tail_items` splits a catalogue by popularity.

    Notes
    -----
    .. math::

        \mathrm{APLT}@k(y) = \frac{|\{j \le k' : y_j \in \Gamma\}|}{k'}, \quad k' = \min(k, |y|),

    with :math:`\Gamma` the long tail (Abdollahpouri et al. 2019). NaN for an empty ranking.

    Examples
    --------
    >>> from rankereval import Rankings, TailShare
    >>> TailShare(4, tail_items=[2, 3]).score(None, Rankings.from_ranked_indices([[0, 2, 3, 1], [5]]))
    array([0.5, 0. ])
    """

    info = MetricInfo(
        name="tailshare", kernel="mean_values", labels="none", inputs=("tail_items",),
        aliases=("aplt",),
        summary="TailShare@k (APLT): fraction of the top k in the long tail (needs tail_items)",
        undefined="its ranking is empty",
    )
    _input = "tail_items"

    def __init__(self, k, tail_items):
        self.k = check_k(k)
        self._mask, self._beyond_ok = check_item_set(tail_items, "tail_items")
        self.tail_items = np.array(tail_items)
        self.tail_items.setflags(write=False)

    def _values(self):
        return self._mask, self._beyond_ok

    def _on_items(self, doc_ids, ranked):
        if self._beyond_ok:  # a set of ids: every item of the data that is in it
            ids = self._items_of(doc_ids, ranked[:0], "tail_items", np.iinfo(np.int64).max)
            return type(self)(self.k, np.flatnonzero(np.isin(ids, self.tail_items)))
        ids = self._items_of(doc_ids, ranked, "tail_items", self._mask.shape[0])
        return type(self)(self.k, self._mask[ids] > 0)


class IntraListDiversity(_RankingsOnlyMetric):
    r"""IntraListDiversity@k (ILD): 1 - mean pairwise cosine similarity of the top k items.

    Parameters
    ----------
    k : int
        Number of top items of each ranking (an integer > 1 to be defined); shorter rankings
        use all their items.
    item_features : array or scipy sparse matrix, shape (n_items, n_features)
        One feature vector per item id (dense, or sparse, e.g. CSR of tags). Every row must
        be finite and non-zero: the cosine similarity of a zero vector is 0/0, so a zero row
        is an error (scikit-learn's ``cosine_similarity`` counts it as similarity 0 instead).
    similarity : {'cosine'}, default='cosine'
        The item similarity.

    Notes
    -----
    With :math:`k' = \min(k, |y|)` and :math:`\cos(a, b) = a \cdot b / (\|a\| \|b\|)`
    [ZI05]_

    .. math::

        \mathrm{ILD}@k(y) = 1 - \frac{2}{k'(k'-1)} \sum_{1 \le j < l \le k'} \cos(x_{y_j}, x_{y_l}),

    in [0, 2] (0 for identical feature directions). NaN for fewer than two items. The kernel
    sums the k' unit vectors once, :math:`\sum_{j<l} u_j \cdot u_l = (\|\sum_j u_j\|^2 -
    \sum_j \|u_j\|^2) / 2`: O(k d) per ranking instead of O(k^2 d).

    References
    ----------
    .. [ZI05] C.-N. Ziegler, S. M. McNee, J. A. Konstan and G. Lausen: "Improving
       recommendation lists through topic diversification". WWW 2005.

    Examples
    --------
    >>> import numpy as np
    >>> from rankereval import Rankings, IntraListDiversity
    >>> features = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> IntraListDiversity(2, features).score(None, Rankings.from_ranked_indices([[0, 1], [0, 2]])).round(4)
    array([1.    , 0.2929])
    """

    info = MetricInfo(
        name="ild", kernel="ild", labels="none", inputs=("item_features",),
        aliases=("intralistdiversity",), choices={"similarity": ("cosine",)},
        summary="IntraListDiversity@k: 1 - mean pairwise cosine of the top k (needs item_features)",
        undefined="its top k has fewer than two items", value_range=(0.0, 2.0),
    )

    def __init__(self, k, item_features, similarity="cosine"):
        import scipy.sparse as sp

        self.k = check_k(k)
        self.similarity = check_choice(similarity, self.info.choices["similarity"], "similarity")
        self.item_features = item_features
        m, sq = check_item_features(item_features)
        norms = np.sqrt(sq)
        if sp.issparse(m):
            m.data /= np.repeat(norms, np.diff(m.indptr))
            self._unit = m
            self._sq = np.asarray(m.multiply(m).sum(axis=1), dtype=np.float64).ravel()
        else:
            self._unit = m / norms[:, None]
            self._sq = np.einsum("ij,ij->i", self._unit, self._unit)

    def _score(self, y_true, y_pred):
        ranks = y_pred.indices
        out = np.empty(ranks.shape[0], dtype=np.float64)
        bad = np.full(1, -1, dtype=np.int64)
        threads = effective_n_threads(ranks.shape[0] * min(self.k, ranks.shape[1]) * 8)
        u = self._unit
        if isinstance(u, np.ndarray):
            _beyond.ild_dense(ranks, y_pred.lengths, self.k, u, self._sq, out, bad, threads)
        else:
            idx = u.indices.astype(np.int64) if u.indices.dtype != u.indptr.dtype else u.indices
            _beyond.ild_csr(ranks, y_pred.lengths, self.k, u.indptr.astype(idx.dtype, copy=False), idx,
                            u.data, u.shape[1], self._sq, out, bad, threads)
        self._raise_bad_id(bad, "the item_features", u.shape[0])
        return out

    def _on_items(self, doc_ids, ranked):
        ids = self._items_of(doc_ids, ranked, "item_features", self._unit.shape[0])
        # the unit rows: the cosine does not depend on the rows' norms
        return type(self)(self.k, self._unit[ids], self.similarity)


_SCALES = ("users", "interactions", "count")


def popularity_from(train, n_items=None, scale="users"):
    """Item popularity from training interactions.

    Parameters
    ----------
    train : BinaryLabels, NumericLabels, scipy sparse matrix or 2-D array
        One row per user; each item a row stores (labels), or where the matrix is non-zero,
        is one interaction of that user with that item.
    n_items : int, optional
        Size of the catalogue (item ids ``0 .. n_items - 1``), at least the number of
        columns of ``train``; items beyond those get popularity 0. Default: the columns of
        ``train``.
    scale : {'users', 'interactions', 'count'}, default='users'
        'users': the fraction of users who interacted with the item, the probability that
        a random user knows it (Zhou et al. 2010; the "discovery" model of Castells et al.
        2011); 'interactions': its share of all interactions, the probability that a random
        interaction picks it (the "choice" model; Microsoft Recommenders' ``novelty``);
        'count': the number of users who interacted with it, as Elliot's and RecBole's ARP.

    Returns
    -------
    ndarray of float64, shape (n_items,)

    Examples
    --------
    >>> from rankereval import BinaryLabels, popularity_from
    >>> train = BinaryLabels.from_positive_indices([[0, 1], [0], [0, 2]])
    >>> popularity_from(train, n_items=4)
    array([1.        , 0.33333333, 0.33333333, 0.        ])
    >>> popularity_from(train, scale="interactions")
    array([0.6, 0.2, 0.2])
    >>> popularity_from(train, scale="count")
    array([3., 1., 1.])
    """
    scale = check_choice(scale, _SCALES, "scale")
    m = interactions(train, "train")
    n_rows, n_cols, cols = m.shape[0], m.shape[1], m.indices
    if n_items is None:
        n_items = n_cols
    elif isinstance(n_items, (bool, np.bool_)) or not isinstance(n_items, (int, np.integer)) or n_items < n_cols:
        raise ValueError(f"n_items must be an integer >= the {n_cols} items of train, got {n_items!r}")
    if n_rows == 0 or (scale == "interactions" and len(cols) == 0):
        raise ValueError(f"train has no {'users' if n_rows == 0 else 'interactions'}: popularity is undefined")
    counts = np.bincount(np.asarray(cols, dtype=np.int64), minlength=int(n_items)).astype(np.float64)
    if scale == "users":
        return counts / n_rows
    if scale == "interactions":
        return counts / counts.sum()
    return counts


def interactions(train, name):
    """Users' interactions as a canonical CSR matrix (sorted int64 ids, no duplicates, no
    zeros) of 1.0: the items each row of labels stores, or where a scipy sparse matrix or
    2-D array is non-zero. ``name`` names the argument in errors."""
    import scipy.sparse as sp

    if isinstance(train, Labels):
        m = sp.csr_matrix((np.ones(train.indices.shape[0]), train.indices, train.indptr),
                          shape=(train.n_rows, train.n_items))
    elif sp.issparse(train) or isinstance(train, np.ndarray):
        if train.ndim != 2:
            raise ValueError(f"{name} must be 2-D (users x items), got shape {train.shape}")
        if train.dtype.kind not in "biuf":
            raise TypeError(f"{name} must hold numbers, got dtype {train.dtype}")
        m = sp.csr_matrix(train, dtype=np.float64, copy=True)
        m.sum_duplicates()
        m.eliminate_zeros()
        m.data[:] = 1.0
    else:
        raise TypeError(f"{name} must be BinaryLabels, NumericLabels, a scipy sparse matrix or a 2-D "
                        f"array of users x items, got {type(train).__name__}")
    m.indptr = m.indptr.astype(np.int64)
    m.indices = m.indices.astype(np.int64)
    return m


def long_tail_items(popularity, head_share=0.2):
    """The long tail of a catalogue: every item outside the short head, the most popular
    items that together hold ``head_share`` of all interactions (Abdollahpouri et al. 2019
    use 20%).

    Parameters
    ----------
    popularity : array of float, shape (n_items,)
        Popularity of each item id (counts or fractions, >= 0; not all 0).
    head_share : float, default=0.2
        Share of the interactions the short head holds, in (0, 1).

    Returns
    -------
    ndarray of bool, shape (n_items,)
        True for long-tail items (a mask for :class:`TailShare`). The head is the fewest
        most popular items whose popularity reaches ``head_share`` of the total (ties broken
        by item id).

    Examples
    --------
    >>> from rankereval import long_tail_items
    >>> long_tail_items([50, 5, 30, 10, 5], head_share=0.5)
    array([False,  True,  True,  True,  True])
    """
    from rankereval._validation import check_real

    pop = check_item_values(popularity, "popularity")
    check_real(head_share, "head_share")
    if not 0.0 < head_share < 1.0:
        raise ValueError(f"head_share must be strictly between 0 and 1, got {head_share!r}")
    total = pop.sum()
    if not total > 0:
        raise ValueError("popularity is 0 for every item: there is no short head")
    order = np.argsort(-pop, kind="stable")
    n_head = int(np.searchsorted(np.cumsum(pop[order]), head_share * total, side="left")) + 1
    tail = np.ones(pop.size, dtype=bool)
    tail[order[:n_head]] = False
    return tail
