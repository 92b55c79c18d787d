r"""Measures of the whole relevance profile of a ranking: the rest of trec_eval 10.0.

Each reads, per ranking, the code of every ranked item (its grade or 1 when relevant, 0 when
judged not relevant, -2 in the pool but not judged, -1 not in the pool; see
``rankereval/metrics/_profile_fast.pyx``), made by one typed pass for all the profile metrics of a call.
The formulas are trec_eval 10.0's (``m_*.c`` of usnistgov/trec_eval), written as array
operations over the rankings; the edge cases are trec_eval's, except that a value trec_eval
leaves at 0 because it is undefined (a query without relevant documents) is NaN here, as for
every metric of the package (``nan_handling="zerofill"`` gives trec_eval's mean).

The pool: an item with a negative grade in a qrels file is in the pool but not judged
(trec_eval's ``RELVALUE_UNJUDGED``). :mod:`rankereval.io` keeps those items as the judgments
of the judged items (``y_true.judged.judged``); labels without them have no such items, so
every unjudged item counts as outside the pool (exact whenever the qrels has no negative
grade). Only :class:`InfAP` tells the two apart.
"""
import math

import numpy as np

from rankereval._validation import bitset_fits, check_k
from rankereval.data import BinaryLabels
from rankereval.metrics._base import _LOOKUP, _PROFILE_SCORER, Metric, MetricInfo, RealParam

#: the pseudo-kernel of the profile metrics (``MetricInfo.kernel``): they are scored by
#: :func:`score_profiles`, not by the hit reductions of ``rankereval.metrics._kernels``
KERNEL = "profile"

_INFAP_EPSILON = 1e-5  # trec_eval's INFAP_EPSILON


class _Profile:
    """The profile of the rankings of one call, and what the formulas need of the labels."""

    def __init__(self, y_true, y_pred, width):
        import rankereval.metrics._profile_fast as _kernel
        from rankereval._threads import effective_n_threads

        ranks = y_pred.indices
        width = min(width, ranks.shape[1])
        n = ranks.shape[0]
        dt = y_true.indptr.dtype
        none = np.empty(0, dtype=dt)
        judged = y_true.judged
        pool = judged.judged if judged is not None else None
        codes = np.empty((n, width), dtype=np.float64)
        _kernel.gather(
            y_true.indptr, y_true.indices,
            np.empty(0) if isinstance(y_true, BinaryLabels) else y_true.values,
            none if judged is None else judged.indptr.astype(dt, copy=False),
            none if judged is None else judged.indices.astype(dt, copy=False),
            none if pool is None else pool.indptr.astype(dt, copy=False),
            none if pool is None else pool.indices.astype(dt, copy=False),
            ranks, y_pred.lengths, codes, effective_n_threads(n * max(width, 1)))
        self.codes = codes
        self.lengths = np.minimum(np.maximum(y_pred.lengths, 0), width).astype(np.int64)
        self.n = n
        self.width = width
        self._labels = y_true
        rows = np.zeros(n, dtype=np.int64) if y_true.n_rows == 1 else np.arange(n)
        self._rows = rows
        self.n_rel = np.diff(y_true.indptr).astype(np.float64)[rows] if n else np.zeros(0)

    def gains(self):
        """The grade of each rank (0 for anything not stored, and past the end)."""
        c = self.codes
        return np.where(c > 0, c, 0.0)

    def relevant(self):
        return self.codes > 0

    def ideal(self, width):
        """``(n, width)``: each ranking's label values sorted descending, padded with 0."""
        lab = self._labels
        counts = np.diff(lab.indptr).astype(np.int64)
        values = np.ones(lab.indices.shape[0]) if isinstance(lab, BinaryLabels) else np.asarray(lab.values, float)
        row_of = np.repeat(np.arange(lab.n_rows), counts)
        order = np.lexsort((-values, row_of))
        sorted_values = values[order]
        pos = np.arange(values.shape[0]) - np.repeat(lab.indptr[:-1].astype(np.int64), counts)
        keep = pos < width
        table = np.zeros((lab.n_rows, width))
        table[row_of[keep], pos[keep]] = sorted_values[keep]
        return table[self._rows]


def score_profiles(metrics, y_true, y_pred):
    """Scores of the profile metrics ``metrics`` (checked inputs), one column each, from one
    pass of the profile kernel up to the largest depth any of them reads."""
    widths = [m._depth() for m in metrics]
    width = y_pred.indices.shape[1] if any(w is None for w in widths) else max(widths)
    if any(m.info.judged for m in metrics) and y_true.judged is None:
        who = next(m for m in metrics if m.info.judged)
        raise ValueError(
            f"{who.name} needs to tell judged non-relevant items from unjudged ones, but "
            f"y_true has no judgments: build it with y_true.with_judged(judged_ids), or read "
            "it with rankereval.io (read_trec, from_dataframes), which keeps every judged item")
    if _LOOKUP.get() == "bitset" and not bitset_fits(y_true.n_items, y_pred.indices.size):
        # (the profile always searches; a forced strategy that cannot apply refuses, as in
        # rankereval.metrics._base._score_many)
        raise ValueError(f"the bitset lookup cannot be forced here: {y_true.n_items} item ids "
                         f"need more than the bitset limit for {y_pred.indices.size} ranked ids")
    prof = _Profile(y_true, y_pred, width)
    out = np.empty((prof.n, len(metrics)))
    with np.errstate(divide="ignore", invalid="ignore"):
        for j, m in enumerate(metrics):
            out[:, j] = m._from_profile(prof)
    return out


def relevance_strings(y_true, y_pred, depth):
    """trec_eval's ``relstring`` of each ranking: the codes of its top ``depth`` items as
    characters (the grade 0-9, ``>`` above 9, ``-`` outside the pool, ``.`` pooled but
    unjudged), quoted."""
    prof = _Profile(y_true, y_pred, depth)
    out = []
    for row, length in zip(prof.codes.tolist(), prof.lengths.tolist()):
        chars = []
        for code in row[:length]:
            if code == -1:
                chars.append("-")
            elif code == -2:
                chars.append(".")
            elif code > 9:
                chars.append(">")
            else:
                chars.append(str(int(code)))
        out.append("'" + "".join(chars) + "'")
    return out


_PROFILE_SCORER[0] = score_profiles


class _ProfileMetric(Metric):
    """A metric computed from the relevance profile (``score_profiles``)."""

    _profile = True

    def _depth(self):
        """How many ranks the metric reads (None: the whole ranking)."""
        return getattr(self, "k", None)

    def _kernel_args(self, y_true, y_pred):  # (scored by score_profiles, not the hit kernel)
        return {"k": self._depth()}

    def _from_profile(self, prof):
        raise NotImplementedError


def _counts(prof):
    """Per ranking: relevant retrieved, retrieved."""
    rel = prof.relevant()
    return rel.sum(axis=1).astype(np.float64), prof.lengths.astype(np.float64)


def _nan_without_relevant(values, prof):
    return np.where(prof.n_rel > 0, values, np.nan)


class InfAP(_ProfileMetric):
    r"""Inferred average precision (trec_eval's and ir_measures' ``infAP``), for judgements
    of a sample of the pool. Needs labels with judgments.

    Notes
    -----
    With :math:`R` relevant items, and for the relevant item at rank :math:`j + 1`
    (:math:`j \ge 0`) with :math:`r, n, u` the relevant, judged non-relevant and pooled but
    unjudged items among the first :math:`j + 1` ranks (the item itself included in
    :math:`r`) [YA06]_:

    .. math::

        \mathrm{infAP}(y) = \frac{1}{R} \sum_{\text{relevant at } j + 1} \Big(
        \frac{1}{j + 1} + \frac{j}{j + 1} \cdot \frac{r - 1 + n + u}{j} \cdot
        \frac{r - 1 + \epsilon}{r - 1 + n + 2\epsilon} \Big),

    the term being 1 at the first rank, :math:`\epsilon = 10^{-5}` (trec_eval's
    ``INFAP_EPSILON``). Items outside the pool are skipped (they only move the ranks);
    pooled but unjudged items are those of negative grade in a qrels file (see the module
    notes). With complete judgements it is AP.

    Edge cases:

    1. The ranking is empty: 0.
    2. There are no relevant items in ``y_true``: NaN (trec_eval: 0).
    3. The labels carry no judgments: ValueError.

    References
    ----------
    .. [YA06] E. Yilmaz and J. A. Aslam: "Estimating average precision with incomplete and
       imperfect judgments". CIKM 2006.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, InfAP
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2]]).with_judged([[1, 2, 7]])
    >>> # 7 judged non-relevant, 1 relevant, 5 unjudged (outside the pool), 2 relevant
    >>> # 1 at rank 2: 1/2 + 1/2 * 1 * (eps / (1 + 2 eps)); 2 at rank 4: 1/4 + 3/4 * 2/3 * 1/2
    >>> InfAP().score(y_true, Rankings.from_ranked_indices([[7, 1, 5, 2]]))
    array([0.5000025])
    """

    info = MetricInfo(
        name="infap", kernel=KERNEL, cutoff="none", judged=True, aliases=("inferredap",),
        summary="infAP: inferred AP from a sampled pool (trec_eval and ir_measures infAP)",
    )

    def __init__(self):
        pass

    def _from_profile(self, prof):
        c = prof.codes
        rel = c > 0
        r = np.cumsum(rel, axis=1)
        nonrel = np.cumsum(c == 0, axis=1)
        unj = np.cumsum(c == -2, axis=1)
        j = np.arange(c.shape[1], dtype=np.float64)[None, :]
        rm1 = r - 1.0
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rm1 + nonrel + unj) / np.maximum(j, 1.0)) * (
            (rm1 + _INFAP_EPSILON) / (rm1 + nonrel + 2 * _INFAP_EPSILON))
        term[:, :1] = 1.0
        total = np.where(rel, term, 0.0).sum(axis=1)
        return _nan_without_relevant(total / prof.n_rel, prof)


class RPrecisionMultiple(_ProfileMetric):
    r"""Precision at a multiple of R (trec_eval's ``Rprec_mult_x``).

    Parameters
    ----------
    multiplier : float
        The multiple x of R, the number of relevant items (> 0; trec_eval reports 0.2, 0.4,
        ..., 2.0).

    Notes
    -----
    With :math:`c = \lfloor x R + 0.9 \rfloor` (trec_eval's rounding),
    :math:`\frac{1}{c} \sum_{i \le \min(c, |y|)} \mathrm{rel}(y_i)`: precision at c, the
    missing ranks of a shorter ranking counting as not relevant. ``multiplier=1`` is
    :class:`RPrecision`.

    Edge cases: NaN without relevant items (trec_eval: 0); 0 for an empty ranking.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, RPrecisionMultiple
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2, 3, 4, 5]])
    >>> # c = floor(0.4 * 5 + 0.9) = 2
    >>> RPrecisionMultiple(0.4).score(y_true, Rankings.from_ranked_indices([[1, 9, 2]]))
    array([0.5])
    """

    info = MetricInfo(
        name="rprecmult", kernel=KERNEL, cutoff="none", aliases=("rprecisionmultiple",),
        summary="Precision at a multiple of R, rprecmult@2.0 (trec_eval Rprec_mult_x)",
        reals={"multiplier": RealParam(0.0, math.inf, (0.2, 1.0, 2.0), low_open=True)},
        at="multiplier",
    )

    def __init__(self, multiplier):
        self.multiplier = self.info.reals["multiplier"].check(multiplier, "multiplier")

    def _depth(self):
        return None

    def _from_profile(self, prof):
        cut = np.floor(self.multiplier * prof.n_rel + 0.9)
        rel = np.cumsum(prof.relevant(), axis=1)
        upto = np.minimum(cut, prof.lengths).astype(np.int64)
        found = np.where(upto > 0, rel[np.arange(prof.n), np.maximum(upto - 1, 0)] if prof.width else 0, 0)
        return _nan_without_relevant(found / np.maximum(cut, 1.0), prof)


class Utility(_ProfileMetric):
    r"""Set utility with trec_eval's default coefficients (trec_eval's ``utility``): the
    relevant retrieved items minus the non-relevant ones.

    Notes
    -----
    :math:`|\{i : \mathrm{rel}(y_i)\}| - |\{i : \lnot \mathrm{rel}(y_i)\}|` over the whole
    ranking (trec_eval's coefficients 1, -1, 0, 0: relevant retrieved, non-relevant
    retrieved, relevant missed, non-relevant missed). Always defined; unbounded (from
    :math:`-|y|` to :math:`|y|`), not an average.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Utility
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2]])
    >>> Utility().score(y_true, Rankings.from_ranked_indices([[1, 9, 8]]))
    array([-1.])
    """

    info = MetricInfo(
        name="utility", kernel=KERNEL, cutoff="none",
        summary="Utility: relevant minus non-relevant retrieved (trec_eval utility)",
        undefined=None, value_range=(-math.inf, math.inf),
    )

    def __init__(self):
        pass

    def _from_profile(self, prof):
        relret, ret = _counts(prof)
        return relret - (ret - relret)


class ElevenPointAP(_ProfileMetric):
    r"""Interpolated precision averaged over the 11 recall levels 0.0, 0.1, ..., 1.0
    (trec_eval's ``11pt_avg``).

    Notes
    -----
    :math:`\frac{1}{11} \sum_{\ell \in \{0, 0.1, \dots, 1\}} \mathrm{iprec}_\ell(y)`, with
    :class:`InterpolatedPrecision` as trec_eval 10 defines it (recall levels rounded with
    lround).

    Edge cases: NaN without relevant items (trec_eval: 0); 0 for a ranking without relevant
    items retrieved.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, ElevenPointAP
    >>> y_true = BinaryLabels.from_positive_indices([[1]])
    >>> ElevenPointAP().score(y_true, Rankings.from_ranked_indices([[9, 1]]))
    array([0.5])
    """

    info = MetricInfo(
        name="11ptavg", kernel=KERNEL, cutoff="none", aliases=("elevenpointap", "11pt"),
        summary="11-point interpolated average precision (trec_eval 11pt_avg)",
    )

    def __init__(self):
        pass

    def _depth(self):
        return None

    def _from_profile(self, prof):
        return _nan_without_relevant(
            np.mean([_iprec(prof, level) for level in np.linspace(0.0, 1.0, 11).round(1)], axis=0), prof)


def _iprec(prof, level):
    """trec_eval 10's iprec_at_recall of every ranking (0 where no level is reached)."""
    if prof.width == 0:
        return np.zeros(prof.n)
    rel = prof.relevant()
    cum = np.cumsum(rel, axis=1)
    ranks = np.arange(1, prof.width + 1, dtype=np.float64)
    prec = np.where(np.isnan(prof.codes), 0.0, cum / ranks)
    best = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
    need = np.maximum(np.floor(level * prof.n_rel + 0.5), 1.0)  # lround of a number >= 0
    reached = cum >= need[:, None]
    first = reached.argmax(axis=1)
    return np.where(reached.any(axis=1), best[np.arange(prof.n), first], 0.0)


class BinG(_ProfileMetric):
    r"""Binary G (trec_eval's ``binG``): each relevant item discounted by the non-relevant
    ones above it.

    Notes
    -----
    .. math::

        \mathrm{binG}(y) = \frac{1}{R} \sum_{i : \mathrm{rel}(y_i)} \frac{1}{\log_2(2 + n_i)},

    :math:`n_i` the non-relevant (or unjudged) items above rank i. NaN without relevant
    items (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, BinG
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2]])
    >>> BinG().score(y_true, Rankings.from_ranked_indices([[1, 9, 8, 2]]))
    array([0.75])
    """

    info = MetricInfo(
        name="bing", kernel=KERNEL, cutoff="none", aliases=("binaryg",),
        summary="binG: relevant items discounted by the non-relevant above (trec_eval binG)",
    )

    def __init__(self):
        pass

    def _from_profile(self, prof):
        rel = prof.relevant()
        nonrel_above = np.arange(prof.width)[None, :] + 1 - np.cumsum(rel, axis=1)
        terms = np.where(rel, 1.0 / np.log2(2.0 + nonrel_above), 0.0)
        return _nan_without_relevant(terms.sum(axis=1) / prof.n_rel, prof)


class NormalizedGain(_ProfileMetric):
    r"""trec_eval's G: gain discounted by how far the gain so far lags the ideal's.

    Notes
    -----
    With :math:`g_i` the grade of the item at rank i (0 when not relevant), :math:`I_i` the
    i-th largest grade of the labels (0 past them), :math:`C_i = \sum_{t \le i} \max(I_t, 1)`
    and :math:`S_i = \sum_{t \le i} g_t`:

    .. math::

        G(y) = \frac{1}{\sum_t I_t} \sum_{i : g_i \ne 0} \frac{g_i}{\log_2(2 + C_i - S_i)}.

    The grades are the gains (trec_eval's default). NaN without relevant items
    (trec_eval: 0); a ValueError when a sum of the grades overflows float64.

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, NormalizedGain
    >>> y_true = NumericLabels.from_matrix([[0, 2, 1]])
    >>> NormalizedGain().score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([1.])
    """

    info = MetricInfo(
        name="g", kernel=KERNEL, cutoff="none", labels="graded", aliases=("normalizedgain", "trecg"),
        summary="G: gain discounted by the lag behind the ideal gain (trec_eval G)",
    )

    def __init__(self):
        pass

    def _from_profile(self, prof):
        g = prof.gains()
        ideal = prof.ideal(prof.width)
        cost = np.cumsum(np.maximum(ideal, 1.0), axis=1)
        got = np.cumsum(g, axis=1)
        total = _grade_sums(prof)
        if not (np.isfinite(total).all() and np.isfinite(cost).all()):
            raise ValueError("NormalizedGain (trec_eval's G) is undefined here: a sum of the grades of a "
                             "label row overflows float64")
        # the lag cost - got is >= 0; rounding of huge grades must not make it negative
        terms = np.where(g != 0, g / np.log2(2.0 + np.maximum(cost - got, 0.0)), 0.0)
        return np.where(total > 0, terms.sum(axis=1) / total, np.nan) + 0.0  # (no -0.0)


def _grade_sums(prof):
    lab = prof._labels
    if isinstance(lab, BinaryLabels):
        sums = np.diff(lab.indptr).astype(np.float64)
    else:
        sums = np.add.reduceat(np.append(np.asarray(lab.values, float), 0.0),
                               lab.indptr[:-1].astype(np.int64)) if lab.n_rows else np.zeros(0)
        sums = np.where(np.diff(lab.indptr) > 0, sums, 0.0)
    return sums[prof._rows] if prof.n else np.zeros(0)


def _dcg_parts(prof, width):
    """Per ranking, over ``width`` ranks: the cumulative DCG of the ranking and of the ideal
    (grades as gains, log2 discount)."""
    disc = 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))
    g = np.zeros((prof.n, width))
    g[:, :prof.width] = prof.gains()
    ideal = prof.ideal(width)
    # the ratios of the two do not depend on the grades' scale: divide each row by its largest
    # grade, so that no sum overflows
    top = ideal[:, :1] if width else np.ones((prof.n, 1))
    scale = np.where(top > 0, top, 1.0)
    g, ideal = g / scale, ideal / scale
    return np.cumsum(g * disc, axis=1), np.cumsum(ideal * disc, axis=1), g, ideal


class NDCGRel(_ProfileMetric):
    r"""NDCG averaged over the relevant items (trec_eval's ``ndcg_rel``).

    Notes
    -----
    With :math:`R_g` the items of positive grade in the labels, NDCG@i (grades as gains,
    log2 discount) is averaged over the ranks i of the relevant items retrieved, each item
    not retrieved counting the NDCG of the whole ranking:

    .. math::

        \mathrm{ndcg\_rel}(y) = \frac{1}{R_g} \Big( \sum_{i : g_i > 0} \frac{DCG@i}{IDCG@i}
        + (R_g - |\{i : g_i > 0\}|) \frac{DCG@|y|}{IDCG} \Big).

    NaN without relevant items (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, NDCGRel
    >>> y_true = NumericLabels.from_matrix([[0, 1, 1]])
    >>> # item 1 at rank 1: NDCG@1 = 1; item 2 not retrieved: NDCG of the ranking, 1 / (1 + 1/log2(3))
    >>> NDCGRel().score(y_true, Rankings.from_ranked_indices([[1, 0]]))
    array([0.8065736])
    """

    info = MetricInfo(
        name="ndcgrel", kernel=KERNEL, cutoff="none", labels="graded",
        summary="NDCG averaged over the relevant items (trec_eval ndcg_rel)",
    )

    def __init__(self):
        pass

    def _from_profile(self, prof):
        n_pos = _positive_counts(prof)
        width = max(prof.width, int(n_pos.max()) if prof.n else 0, 1)
        dcg, idcg, g, ideal = _dcg_parts(prof, width)
        n_pos = np.where(n_pos > 0, (ideal > 0).sum(axis=1), 0.0)  # (after the scaling: a subnormal grade may vanish)
        rel = g > 0
        ideal_total = idcg[:, -1]
        at_rel = np.where(rel, dcg / np.where(idcg > 0, idcg, 1.0), 0.0).sum(axis=1)
        final = dcg[:, -1]
        s = at_rel + (n_pos - rel.sum(axis=1)) * final / np.where(ideal_total > 0, ideal_total, 1.0)
        return np.where(n_pos > 0, np.where(s > 0, s / np.maximum(n_pos, 1), 0.0), np.nan)


def _positive_counts(prof, level=None):
    """Per ranking, the items of its label row with a positive grade (or one >= ``level``)."""
    lab = prof._labels
    if isinstance(lab, BinaryLabels):  # every value 1
        counts = np.diff(lab.indptr) * (level is None or level <= 1.0)
    else:
        vals = np.asarray(lab.values, float) > 0 if level is None else np.asarray(lab.values, float) >= level
        counts = np.add.reduceat(np.append(vals, False).astype(np.int64),
                                 lab.indptr[:-1].astype(np.int64)) if lab.n_rows else np.zeros(0)
        counts = np.where(np.diff(lab.indptr) > 0, counts, 0)
    return counts.astype(np.float64)[prof._rows] if prof.n else np.zeros(0)


class RNDCG(_ProfileMetric):
    r"""NDCG averaged at the R levels (trec_eval's ``Rndcg``).

    Notes
    -----
    The R levels are the ranks where the ideal ranking's grade changes: with 5 items of
    grade 3, 3 of grade 2 and 10 of grade 1, ranks 5, 8 and 18. Rndcg averages NDCG@b (grades
    as gains, log2 discount; a ranking shorter than b counts its whole DCG) over those ranks
    b, and, when the ranking is longer than the last of them plus one, also NDCG at the end
    of the ranking (trec_eval 10's loop exactly: a ranking of exactly :math:`R_g + 1` items,
    :math:`R_g` the items of positive grade, adds no term for its end).

    NaN without an item graded ``relevance_level`` or more (trec_eval: 0, with its
    relevance level ``-l``).

    Parameters
    ----------
    relevance_level : float, default=1.0
        The grade from which an item counts as relevant for the edge case above (the gains
        are the grades whatever it is).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, RNDCG
    >>> y_true = NumericLabels.from_matrix([[0, 2, 1]])
    >>> RNDCG().score(y_true, Rankings.from_ranked_indices([[1, 2]]))
    array([1.])
    """

    info = MetricInfo(
        name="rndcg", kernel=KERNEL, cutoff="none", labels="graded",
        summary="NDCG averaged at the R levels of the grades (trec_eval Rndcg)",
        reals={"relevance_level": RealParam(0.0, math.inf, (1.0, 2.0), low_open=True)},
    )

    def __init__(self, relevance_level=1.0):
        self.relevance_level = self.info.reals["relevance_level"].check(relevance_level, "relevance_level")

    def _from_profile(self, prof):
        n_pos = _positive_counts(prof)
        defined = _positive_counts(prof, self.relevance_level) > 0
        width = max(prof.width, int(n_pos.max()) if prof.n else 0, 1) + 1
        dcg, idcg, g, ideal = _dcg_parts(prof, width)
        n_pos = np.where(n_pos > 0, (ideal > 0).sum(axis=1), 0.0)  # (after the scaling, as NDCGRel)
        out = np.full(prof.n, np.nan)
        lengths = prof.lengths
        for i in np.flatnonzero((n_pos > 0) & defined):
            rg = int(n_pos[i])
            row = ideal[i, :rg + 1]
            bounds = np.flatnonzero(row[1:] != row[:-1]) + 1  # ranks b: ideal[b] != ideal[b - 1]
            length = int(lengths[i])
            total = 0.0
            count = 0
            for b in bounds:
                top = min(b, length)
                total += (dcg[i, top - 1] if top > 0 else 0.0) / idcg[i, b - 1]
                count += 1
            if length > rg + 1:  # (trec_eval's loop: a ranking one longer than rg adds nothing)
                total += dcg[i, length - 1] / idcg[i, rg - 1]
                count += 1
            out[i] = total / count
        return out


class RelativePrecision(_ProfileMetric):
    r"""RelativeP@k: precision at k divided by the largest it can be, :math:`\min(k, R)`
    (trec_eval's ``relative_P_k``).

    Parameters
    ----------
    k : int
        Cutoff (an integer > 0).

    Notes
    -----
    :math:`\frac{1}{\min(k, R)} \sum_{i \le \min(k, |y|)} \mathrm{rel}(y_i)`, R the number of
    relevant items. NaN without relevant items (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, RelativePrecision
    >>> y_true = BinaryLabels.from_positive_indices([[1]])
    >>> RelativePrecision(5).score(y_true, Rankings.from_ranked_indices([[9, 1]]))
    array([1.])
    """

    info = MetricInfo(
        name="relp", kernel=KERNEL, aliases=("relativep", "relativeprecision"),
        summary="RelativeP@k: precision at k over its maximum min(k, R) (trec_eval relative_P_k)",
    )

    def __init__(self, k):
        self.k = check_k(k)

    def _from_profile(self, prof):
        relret = prof.relevant()[:, :self.k].sum(axis=1)
        return _nan_without_relevant(relret / np.minimum(self.k, prof.n_rel), prof)


class _SetMetric(_ProfileMetric):
    def __init__(self):
        pass

    def _depth(self):
        return None


class SetP(_SetMetric):
    r"""Set precision: the relevant share of the whole ranking (trec_eval's ``set_P``,
    ir_measures' ``SetP``).

    Notes
    -----
    :math:`\frac{1}{|y|} \sum_{i \le |y|} \mathrm{rel}(y_i)`. NaN without relevant items and
    for an empty ranking (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, SetP
    >>> SetP().score(BinaryLabels.from_positive_indices([[1]]), Rankings.from_ranked_indices([[9, 1]]))
    array([0.5])
    """

    info = MetricInfo(
        name="setp", kernel=KERNEL, cutoff="none", aliases=("setprecision",),
        summary="SetP: precision of the whole ranking (trec_eval set_P)",
        undefined="its labels have no relevant item or its ranking is empty",
    )

    def _from_profile(self, prof):
        relret, ret = _counts(prof)
        return _nan_without_relevant(np.where(ret > 0, relret / ret, np.nan), prof)


class SetRelativeP(_SetMetric):
    r"""Relative set precision (trec_eval's ``set_relative_P``).

    Notes
    -----
    :math:`\frac{1}{\min(|y|, R)} \sum_{i \le |y|} \mathrm{rel}(y_i)`. NaN without relevant
    items and for an empty ranking (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, SetRelativeP
    >>> y_true = BinaryLabels.from_positive_indices([[1]])
    >>> SetRelativeP().score(y_true, Rankings.from_ranked_indices([[9, 1]]))
    array([1.])
    """

    info = MetricInfo(
        name="setrelp", kernel=KERNEL, cutoff="none", aliases=("setrelativep",),
        summary="SetRelativeP: set precision over its maximum (trec_eval set_relative_P)",
        undefined="its labels have no relevant item or its ranking is empty",
    )

    def _from_profile(self, prof):
        relret, ret = _counts(prof)
        return _nan_without_relevant(np.where(ret > 0, relret / np.minimum(ret, prof.n_rel), np.nan), prof)


class SetR(_SetMetric):
    r"""Set recall: the share of the relevant items in the whole ranking (trec_eval's
    ``set_recall``, ir_measures' ``SetR``).

    Notes
    -----
    :math:`\frac{1}{R} \sum_{i \le |y|} \mathrm{rel}(y_i)`. NaN without relevant items
    (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, SetR
    >>> SetR().score(BinaryLabels.from_positive_indices([[1, 2]]), Rankings.from_ranked_indices([[9, 1]]))
    array([0.5])
    """

    info = MetricInfo(
        name="setr", kernel=KERNEL, cutoff="none", aliases=("setrecall",),
        summary="SetR: recall of the whole ranking (trec_eval set_recall)",
    )

    def _from_profile(self, prof):
        relret, _ = _counts(prof)
        return _nan_without_relevant(relret / prof.n_rel, prof)


class SetAP(_SetMetric):
    r"""Unranked set AP: set precision times set recall (trec_eval's ``set_map``,
    ir_measures' ``SetAP``).

    Notes
    -----
    :math:`\frac{r^2}{|y| R}` with r the relevant items of the ranking. NaN without relevant
    items and for an empty ranking (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, SetAP
    >>> SetAP().score(BinaryLabels.from_positive_indices([[1, 2]]), Rankings.from_ranked_indices([[9, 1]]))
    array([0.25])
    """

    info = MetricInfo(
        name="setap", kernel=KERNEL, cutoff="none", aliases=("setmap",),
        summary="SetAP: set precision times set recall (trec_eval set_map)",
        undefined="its labels have no relevant item or its ranking is empty",
    )

    def _from_profile(self, prof):
        relret, ret = _counts(prof)
        return _nan_without_relevant(np.where(ret > 0, relret * relret / (ret * prof.n_rel), np.nan), prof)


class SetF(_SetMetric):
    r"""Set F-measure (trec_eval's ``set_F``, ir_measures' ``SetF``).

    Parameters
    ----------
    beta : float, default=1.0
        The weight of recall, > 0, as trec_eval takes it (the formula's x below; ir_measures
        passes its ``beta`` through unchanged).

    Notes
    -----
    With P and R the set precision and recall,
    :math:`\frac{(\beta + 1) P R}{\beta P + R}`, and 0 when no relevant item is retrieved.
    NaN without relevant items (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, SetF
    >>> SetF().score(BinaryLabels.from_positive_indices([[1, 2]]), Rankings.from_ranked_indices([[9, 1]]))
    array([0.5])
    """

    info = MetricInfo(
        name="setf", kernel=KERNEL, cutoff="none", aliases=("setfmeasure",),
        summary="SetF: F-measure of set precision and recall (trec_eval set_F)",
        reals={"beta": RealParam(0.0, math.inf, (0.5, 1.0, 2.0), low_open=True)},
    )

    def __init__(self, beta=1.0):
        self.beta = self.info.reals["beta"].check(beta, "beta")

    def _from_profile(self, prof):
        relret, ret = _counts(prof)
        p = relret / np.maximum(ret, 1.0)
        r = relret / prof.n_rel
        f = np.where(relret > 0, (self.beta + 1.0) * p * r / (self.beta * p + r), 0.0)
        return _nan_without_relevant(f, prof)


class NumNonRelevantJudgedRetrieved(_SetMetric):
    r"""The number of judged non-relevant items in the ranking (trec_eval's
    ``num_nonrel_judged_ret``). Needs labels with judgments.

    Notes
    -----
    Always defined. (trec_eval's summary line is the sum over queries.)

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NumNonRelevantJudgedRetrieved
    >>> y_true = BinaryLabels.from_positive_indices([[1]]).with_judged([[1, 7]])
    >>> NumNonRelevantJudgedRetrieved().score(y_true, Rankings.from_ranked_indices([[7, 1, 9]]))
    array([1.])
    """

    info = MetricInfo(
        name="numnonreljudgedret", kernel=KERNEL, cutoff="none", judged=True,
        summary="Number of judged non-relevant items retrieved (trec_eval num_nonrel_judged_ret)",
        undefined=None, value_range=(0.0, math.inf),
    )

    def _from_profile(self, prof):
        return (prof.codes == 0).sum(axis=1).astype(np.float64)


class Unjudged(_ProfileMetric):
    r"""Unjudged@k: the share of the top k that is not judged (trec_eval's ``unj_k``).
    Needs labels with judgments.

    Parameters
    ----------
    k : int
        Cutoff (an integer > 0).

    Notes
    -----
    :math:`\frac{1}{k} |\{ i \le \min(k, |y|) : y_i \text{ not judged} \}|` (divided by k
    also for a shorter ranking, as trec_eval). Always defined.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, Unjudged
    >>> y_true = BinaryLabels.from_positive_indices([[1]]).with_judged([[1, 7]])
    >>> Unjudged(4).score(y_true, Rankings.from_ranked_indices([[7, 1, 9]]))
    array([0.25])
    """

    info = MetricInfo(
        name="unj", kernel=KERNEL, judged=True, aliases=("unjudged",),
        summary="Unjudged@k: share of the top k not judged (trec_eval unj_k)",
        undefined=None,
    )

    def __init__(self, k):
        self.k = check_k(k)

    def _from_profile(self, prof):
        return (prof.codes[:, :self.k] < 0).sum(axis=1) / float(self.k)


class ScaledRBP(_ProfileMetric):
    r"""trec_eval's ``rbp``: rank-biased precision with each query's grades scaled into
    [0, 1].

    Parameters
    ----------
    p : float, default=0.9
        Persistence, in (0, 1).

    Notes
    -----
    :math:`(1 - p) \sum_i \gamma(y_i)\, p^{i - 1}`, where :math:`\gamma` is the grade divided
    by the query's largest grade when that exceeds 1 (else the grade itself): with 0/1
    grades this is :class:`RBP`. NaN without relevant items (trec_eval: 0).

    Examples
    --------
    >>> from rankereval import NumericLabels, Rankings, ScaledRBP
    >>> y_true = NumericLabels.from_matrix([[0, 2, 1]])
    >>> ScaledRBP(0.5).score(y_true, Rankings.from_ranked_indices([[2, 1]]))
    array([0.5])
    """

    info = MetricInfo(
        name="scaledrbp", kernel=KERNEL, cutoff="none", labels="graded", aliases=("trecrbp",),
        summary="RBP with each query's grades scaled into [0, 1] (trec_eval rbp)",
        reals={"p": RealParam(0.0, 1.0, (0.5, 0.8, 0.9), low_open=True, high_open=True)},
    )

    def __init__(self, p=0.9):
        self.p = self.info.reals["p"].check(p, "p")

    def _depth(self):
        return None

    def _from_profile(self, prof):
        g = prof.gains()
        top = prof.ideal(1)[:, 0] if prof.n else np.zeros(0)
        scale = np.where(top > 1, top, 1.0)
        weights = (1.0 - self.p) * self.p ** np.arange(prof.width, dtype=np.float64)
        return _nan_without_relevant(((g / scale[:, None]) * weights).sum(axis=1), prof)


class ScaledRBPResidual(_ProfileMetric):
    r"""trec_eval's ``rbp_resid``: how much trec_eval's ``rbp`` could grow if every unjudged
    item of the ranking had the largest gain. Needs labels with judgments.

    Parameters
    ----------
    p : float, default=0.9
        Persistence, in (0, 1).

    Notes
    -----
    :math:`p^{|y|} + (1 - p) \sum_{i : y_i \text{ unjudged}} p^{i - 1}` when the ranking has
    an unjudged item, else 0 (trec_eval's rule: the tail :math:`p^{|y|}` beyond the ranking
    counts only then). Always defined.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, ScaledRBPResidual
    >>> y_true = BinaryLabels.from_positive_indices([[1]]).with_judged([[1, 7]])
    >>> ScaledRBPResidual(0.5).score(y_true, Rankings.from_ranked_indices([[7, 9]]))
    array([0.5])
    """

    info = MetricInfo(
        name="scaledrbpresid", kernel=KERNEL, cutoff="none", judged=True, aliases=("trecrbpresid",),
        summary="trec_eval rbp_resid: RBP's room for the unjudged items (0 without any)",
        undefined=None,
        reals={"p": RealParam(0.0, 1.0, (0.5, 0.8, 0.9), low_open=True, high_open=True)},
    )

    def __init__(self, p=0.9):
        self.p = self.info.reals["p"].check(p, "p")

    def _depth(self):
        return None

    def _from_profile(self, prof):
        unj = prof.codes < 0
        weights = (1.0 - self.p) * self.p ** np.arange(prof.width, dtype=np.float64)
        resid = self.p ** prof.lengths.astype(np.float64) + (unj * weights).sum(axis=1)
        return np.where(unj.any(axis=1), resid, 0.0)


class FallOut(_ProfileMetric):
    r"""FallOut@k: the share of the non-relevant items of the ranking that are in its top k
    (torchmetrics' ``RetrievalFallOut``). Lower is better.

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (an integer > 0); None: the whole ranking (then 1 whenever defined).

    Notes
    -----
    With :math:`N` the non-relevant items of the whole ranking (every item not among the
    relevant ones, as torchmetrics counts a query's documents: a ranking from scores ranks
    them all),

    .. math::

        \mathrm{FallOut}@k(y) = \frac{|\{ i \le \min(k, |y|) : \lnot \mathrm{rel}(y_i) \}|}{N}.

    Edge cases: NaN when the ranking has no non-relevant item (torchmetrics' empty target
    action, default ``'neg'``: 0); defined without relevant items.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, FallOut
    >>> y_true = BinaryLabels.from_positive_indices([[1]])
    >>> FallOut(2).score(y_true, Rankings.from_ranked_indices([[9, 1, 8, 7]]))
    array([0.33333333])
    """

    info = MetricInfo(
        name="fallout", kernel=KERNEL, cutoff="optional", aliases=("falloutrate",),
        summary="FallOut@k: share of the ranking's non-relevant items in its top k (torchmetrics)",
        undefined="its ranking has no non-relevant item", higher_is_better=False,
    )

    def __init__(self, k=None):
        self.k = check_k(k, allow_none=True)

    def _depth(self):
        return None

    def _from_profile(self, prof):
        nonrel = (prof.codes <= 0)
        total = nonrel.sum(axis=1)
        top = nonrel[:, :prof.width if self.k is None else self.k].sum(axis=1)
        return np.where(total > 0, top / np.maximum(total, 1), np.nan)


class AUROC(_ProfileMetric):
    r"""AUROC@k: the area under the ROC curve of one ranking, the share of (relevant,
    non-relevant) pairs of its top k ordered relevant first (torchmetrics'
    ``RetrievalAUROC``, scikit-learn's ``roc_auc_score`` per query).

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (an integer > 0); None: the whole ranking.

    Notes
    -----
    With :math:`P` and :math:`N` the relevant and non-relevant items of the top
    :math:`k' = \min(k, |y|)`,

    .. math::

        \mathrm{AUROC}@k(y) = \frac{1}{|P|\,|N|} \sum_{i \in P} |\{ j \in N : j > i \}|,

    the ranks being positions in :math:`y`. A ranking from scores without ties gives
    scikit-learn's ``roc_auc_score`` of the row. Edge cases: NaN when the top k has no
    relevant or no non-relevant item.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, AUROC
    >>> y_true = BinaryLabels.from_positive_indices([[1, 2]])
    >>> AUROC().score(y_true, Rankings.from_ranked_indices([[1, 9, 2, 8]]))
    array([0.75])
    """

    info = MetricInfo(
        name="auroc", kernel=KERNEL, cutoff="optional", aliases=("auc", "rocauc"),
        summary="AUROC@k: share of (relevant, non-relevant) pairs ordered relevant first",
        undefined="its top k has no relevant or no non-relevant item",
    )

    def __init__(self, k=None):
        self.k = check_k(k, allow_none=True)

    def _tie_refusal(self):
        """Why this metric has no value over tied orders (None: it has one, :meth:`_tied`)."""
        if self.k is not None:
            return (f"{self.name}: which items of a tied group crossing the cutoff enter the top k changes "
                    "both counts of its pairs, so its value over tied orders is implemented for the whole "
                    "ranking only (k=None)")
        return None

    def _tied(self, y_true, y_pred, ties):
        """The score over the orders of each tied group (the whole ranking): 'expected' counts
        each (relevant, non-relevant) pair inside a group as 1/2 (the Mann-Whitney statistic
        with average ranks, RecBole's AUC); 'optimistic'/'pessimistic' the best/worst order."""
        from rankereval.metrics._ties import best_order

        if ties != "expected":
            return self._score(y_true, best_order(y_true, y_pred, ties == "optimistic"))
        c = _Profile(y_true, y_pred, y_pred.indices.shape[1]).codes
        n, width = c.shape
        rel, nonrel = c > 0, c <= 0                     # (NaN past the end: neither)
        tied = np.asarray(y_pred._ties[:, :width], dtype=bool) & (rel | nonrel)
        start = np.ones((n, width), dtype=bool)
        start[:, 1:] = ~tied[:, :-1]
        group = (np.cumsum(start, axis=1) - 1 + (np.arange(n) * width)[:, None]).ravel()
        r = np.bincount(group, weights=rel.ravel(), minlength=n * width).reshape(n, width)
        q = np.bincount(group, weights=nonrel.ravel(), minlength=n * width).reshape(n, width)
        below = q[:, ::-1].cumsum(axis=1)[:, ::-1] - q  # non-relevant items in the later groups
        pairs = (r * below).sum(axis=1) + 0.5 * (r * q).sum(axis=1)
        p, m = rel.sum(axis=1), nonrel.sum(axis=1)
        return np.where((p > 0) & (m > 0), pairs / np.maximum(p * m, 1), np.nan)

    def _from_profile(self, prof):
        c = prof.codes if self.k is None else prof.codes[:, :self.k]  # (the profile may be deeper)
        rel = c > 0
        nonrel = c <= 0
        below = nonrel[:, ::-1].cumsum(axis=1)[:, ::-1]  # non-relevant at or below each rank
        p = rel.sum(axis=1)
        n = nonrel.sum(axis=1)
        pairs = np.where(rel, below, 0).sum(axis=1)
        return np.where((p > 0) & (n > 0), pairs / np.maximum(p * n, 1), np.nan)


class GAUC(AUROC):
    r"""GAUC@k: grouped AUC, the mean of each query's :class:`AUROC`\@k weighted by its number of
    relevant items (RecBole's ``GAUC``; Zhu et al., KDD 2018, as "group AUC").

    Parameters
    ----------
    k : int or None, default=None
        Cutoff (an integer > 0); None: the whole ranking (RecBole's GAUC, which ranks every
        candidate item of the user).

    Notes
    -----
    The score of each ranking is :class:`AUROC`\@k's. The mean (:meth:`~Metric.mean`,
    :func:`rankereval.evaluate` and every other entry point) is not the plain mean of those
    scores but their mean weighted by :math:`w_q = |R_q|`, the number of relevant items in the
    labels of the query,

    .. math::

        \mathrm{GAUC}@k = \frac{\sum_q w_q \,\mathrm{AUROC}@k(y_q)}{\sum_q w_q},

    over the queries the NaN policy keeps. The weight is a property of the query (its labels),
    never of the ranking, so two runs compared on the same queries weigh each query alike;
    with rankings of the whole catalogue, as RecBole ranks it, it is RecBole's number of
    positive items of the user. Edge cases: a query whose top k has no relevant or no
    non-relevant item is NaN (RecBole leaves such users out: ``nan_handling='drop'`` gives
    its value); ``'zerofill'``/``'onefill'`` count it as 0/1 with its weight (0 without a
    relevant item in the labels, so such a query changes nothing); a total weight of 0 gives
    a NaN mean. Tied scores: ``ties="expected"`` (rankings that keep their ties, whole
    ranking) counts a (relevant, non-relevant) pair inside a tied group as 1/2, RecBole's
    average ranks; ``ties=None`` scores the recorded order; with a cutoff ``ties=`` is
    refused.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, GAUC
    >>> y_true = BinaryLabels.from_positive_indices([[1], [0, 2]])
    >>> y_pred = Rankings.from_ranked_indices([[1, 0, 2], [0, 1, 2]])
    >>> GAUC().score(y_true, y_pred)
    array([1. , 0.5])
    >>> GAUC().mean(y_true, y_pred)  # (1 * 1 + 2 * 0.5) / (1 + 2)
    0.6666666666666666
    """

    info = MetricInfo(
        name="gauc", kernel=KERNEL, cutoff="optional", aliases=("groupauc", "groupedauc"),
        summary="GAUC@k: AUROC@k per ranking, averaged weighted by each query's number of relevant items "
                "(RecBole GAUC)",
        undefined="its top k has no relevant or no non-relevant item",
        aggregate="weighted",
    )

    def _query_weights(self, y_true, y_pred):
        counts = np.diff(y_true.indptr).astype(np.float64)
        return np.full(y_pred.n_rows, counts[0]) if y_true.n_rows == 1 else counts


class NumQueries(_ProfileMetric):
    r"""NumQ: 1 for every ranking evaluated, so that the sum over queries is their number
    (ir_measures' ``NumQ``, trec_eval's ``num_q``).

    Notes
    -----
    ir_measures gives every query of the run that the qrels judge the value 1 and sums the
    values (its ``NumQ`` aggregates by sum, as trec_eval's ``num_q``). Here the per-query value
    is the same 1 and the mean, as every mean here, is over the queries: 1 whenever there is a
    query; the number of queries is the sum, :attr:`Evaluation.n_used
    <rankereval.Evaluation.n_used>` (and the ``num_q`` line of ``rankereval evaluate -f trec``).
    Edge cases: never NaN; an empty ranking of a judged query (``missing='empty'``, trec_eval's
    ``-c``) counts, as in trec_eval.

    Examples
    --------
    >>> from rankereval import BinaryLabels, Rankings, NumQueries
    >>> y_true = BinaryLabels.from_positive_indices([[1], []])
    >>> NumQueries().score(y_true, Rankings.from_ranked_indices([[1, 9], []]))
    array([1., 1.])
    """

    info = MetricInfo(
        name="numq", kernel=KERNEL, cutoff="none", aliases=("numqueries",),
        summary="NumQ: 1 per ranking evaluated (summed: the number of queries; ir_measures NumQ)",
        undefined=None, value_range=(1.0, 1.0),
    )

    def __init__(self):
        pass  # no parameter

    def _depth(self):
        return 1  # reads no rank: the shallowest profile

    def _from_profile(self, prof):
        return np.ones(prof.n)


__all__ = ["InfAP", "RPrecisionMultiple", "Utility", "ElevenPointAP", "BinG", "NormalizedGain", "NDCGRel",
           "RNDCG", "RelativePrecision", "SetP", "SetRelativeP", "SetR", "SetAP", "SetF",
           "NumNonRelevantJudgedRetrieved", "Unjudged", "ScaledRBP", "ScaledRBPResidual", "FallOut", "AUROC",
           "NumQueries"]
