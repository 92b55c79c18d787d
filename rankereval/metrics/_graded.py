"""Graded-relevance metrics: DCG and NDCG (they read the label values)."""
import numpy as np

from rankereval import _kernels
from rankereval._threads import effective_n_threads
from rankereval._validation import check_choice, check_k
from rankereval.data import BinaryLabels
from rankereval.metrics._base import Metric, MetricInfo

_SCALINGS = {"identity": 0, "power": 1}
_LOG_BASES = {"e": np.log, "2": np.log2}

class DCG(Metric):
    r"""Discounted Cumulative Gain at k (DCG@k).

    Parameters
    ----------
    k : int or None, default=None
        Number of top results of each ranking to evaluate (an integer > 0); None evaluates
        the whole ranking.
    relevance_scaling : {'identity', 'power'}, default='identity'
        How relevance labels are transformed: 'identity' uses
        :math:`f(\mathrm{rel}) = \mathrm{rel}`, 'power' uses
        :math:`f(\mathrm{rel}) = 2^{\mathrm{rel}} - 1`.
    log_base : {'e', '2'}, default='e'
        Base of the logarithm in the discount. The smaller, the heavier the emphasis on the
        top ranks.

    Raises
    ------
    ValueError
        If k is not an integer > 0 or None, or relevance_scaling or log_base are invalid.

    Notes
    -----
    A weighted sum of the relevance labels of the top k results [KJ]_:

    .. math::

        \mathrm{DCG}@k(y) = \sum_{i=1}^{k'} \frac{f(\mathrm{rel}(y_i))}{\log_b(i + 1)},
        \qquad k' = \min(k, |y|),

    with f the ``relevance_scaling`` and b the ``log_base``. The original definition uses
    'identity' and leaves the base open; trec_eval's ``ndcg_cut`` uses 'identity' with base 2.
    'power' is :math:`2^{\mathrm{rel}} - 1` exactly (the original rankerEval computed
    :math:`\mathrm{rel}^2 - 1`).

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: 0.
    2. There are no items with relevance > 0 in ``y_true``: NaN, consistent with the other
       metrics.

    References
    ----------
    .. [KJ] K. Järvelin, J. Kekäläinen: "Cumulated gain-based evaluation of IR
       techniques". ACM Transactions on Information Systems 20(4), 422-446 (2002).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, DCG
    >>> # use separate labels for each ranking
    >>> y_true = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    >>> y_pred = Rankings.from_ranked_indices([[0,2,1], [1,0]])
    >>> DCG(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([ 5.61610776, 10.85443211])
    """

    info = MetricInfo(
        name="dcg", kernel="dcg", labels="graded", cutoff="optional",
        choices={"relevance_scaling": tuple(_SCALINGS), "log_base": tuple(_LOG_BASES)},
        tokens={"power": ("relevance_scaling", "power"), "log2": ("log_base", "2")},
        summary="DCG@k: discounted cumulative gain (graded); no @k: the whole ranking",
        undefined="its labels have no item with relevance > 0",
        value_range=(0.0, float("inf")),
    )

    def __init__(self, k=None, relevance_scaling="identity", log_base="e"):
        self.k = check_k(k, allow_none=True)
        self.relevance_scaling = check_choice(relevance_scaling, tuple(_SCALINGS), "relevance_scaling")
        self.log_base = check_choice(log_base, tuple(_LOG_BASES), "log_base")

    def _discounts(self, n):
        """1 / log_b(i + 1) for ranks i = 1 .. n."""
        return 1.0 / _LOG_BASES[self.log_base](np.arange(2, n + 2, dtype=np.float64))

    def _kernel_args(self, y_true, y_pred):
        return {"k": self.k, "disc": self._discounts(y_pred.indices.shape[1] + 1),
                "power": _SCALINGS[self.relevance_scaling]}


class NDCG(DCG):
    r"""Normalized Discounted Cumulative Gain at k (nDCG@k), in [0, 1].

    Takes the same arguments as :class:`DCG`.

    Notes
    -----
    DCG@k normalised by the best DCG@k achievable with the row's labels [KJ]_:

    .. math::

        \mathrm{nDCG}@k(y) = \frac{\mathrm{DCG}@k(y)}{\mathrm{IDCG}@k(y)},

    where :math:`\mathrm{IDCG}@k(y)` is the DCG@k of the label row's own values sorted in
    decreasing order (with ``k=None``, of all of them). IDCG is defined by all relevance
    labels, not by the retrieved items only: the latter would let nDCG be inflated by
    returning one relevant item at the top and filling up with irrelevant ones. IDCG is
    positive whenever the row has an item with relevance > 0; a row without one is NaN (edge
    case 2), and an IDCG that underflows to 0 for tiny positive labels gives 0.

    Edge cases:

    1. The ranking is empty, :math:`|y| = 0`: DCG@k is 0, so nDCG@k is 0.
    2. There are no items with relevance > 0 in ``y_true``: NaN, consistent with the other
       metrics.
    3. There are no items with relevance > 0 in the top k of the ranking: 0.

    References
    ----------
    .. [KJ] K. Järvelin, J. Kekäläinen: "Cumulated gain-based evaluation of IR
       techniques". ACM Transactions on Information Systems 20(4), 422-446 (2002).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, NDCG
    >>> # use separate labels for each ranking
    >>> y_true = NumericLabels.from_matrix([[1, 2, 3], [4, 5]])
    >>> y_pred = Rankings.from_ranked_indices([[0,2,1], [1,0]])
    >>> NDCG(3).score(y_true, y_pred) # doctest: +NORMALIZE_WHITESPACE
    array([0.81749351, 1.        ])
    """

    info = MetricInfo(
        name="ndcg", kernel="dcg", labels="graded", cutoff="optional",
        choices=DCG.info.choices, tokens=DCG.info.tokens,
        summary="NDCG@k: DCG@k / ideal DCG@k, in [0, 1] (graded); no @k: the whole ranking",
        undefined=DCG.info.undefined,
    )

    def _ideal(self, y_true):
        """IDCG@k of every label row, from the row's own values (top k selected, not sorted)."""
        n_pos = y_true.n_positives
        longest = int(n_pos.max()) if n_pos.size else 0
        m = longest if self.k is None else min(self.k, longest)
        disc = self._discounts(m + 1)
        if isinstance(y_true, BinaryLabels):
            # every gain is 1: IDCG is a prefix sum of the discounts
            prefix = np.concatenate(([np.nan], np.cumsum(disc)))
            cut = n_pos if self.k is None else np.minimum(n_pos, self.k)
            return prefix[cut]
        out = np.empty(y_true.n_rows, dtype=np.float64)
        _kernels.ideal_dcg(
            y_true.indptr, y_true.values, -1 if self.k is None else self.k, disc,
            _SCALINGS[self.relevance_scaling], out, effective_n_threads(y_true.values.size),
        )
        if np.isinf(out).any():
            row = int(np.flatnonzero(np.isinf(out))[0])
            raise ValueError(
                f"the ideal DCG of label row {row} overflows float64 (labels up to "
                f"{y_true.values[y_true.indptr[row]:y_true.indptr[row + 1]].max():g} with "
                f"relevance_scaling={self.relevance_scaling!r}); NDCG is undefined there"
            )
        return out

    def _kernel_args(self, y_true, y_pred):
        return dict(super()._kernel_args(y_true, y_pred), norm=self._ideal(y_true))
