"""Slow, literal reference implementation of the rankereval metrics.

Every function here is a direct transcription of the definitions in the API
contract (``metrics-reference`` plus the project's documented decisions).  They
are written for readability, not speed: plain Python loops, no numpy.

Each metric function takes

* ``labels``: a ``dict`` mapping item id -> label value for ONE label row.
  Items that are missing from the dict have label 0 (not relevant).  For the
  binary-only metrics an item is relevant when its label is > 0 (binary labels
  only ever hold the value 1).
* ``ranking``: a ``list`` of item ids, best first.
* keyword parameters of the metric (``k``, ``truncated``, ...).

and returns one Python ``float``.

Conventions shared by all metrics (from the contract):

* ``n_rel`` is the number of items with a label > 0 in the label row.
  ``n_rel == 0`` always gives NaN.
* "hits in the first k'" means: the number of relevant items among the first
  ``k' = min(k, len(ranking))`` items of the ranking.
"""
import inspect
import math

NAN = float("nan")
INF = float("inf")


# --------------------------------------------------------------------------- #
# small helpers
# --------------------------------------------------------------------------- #
def relevance(labels, item):
    """Label value of ``item`` (0 when the item is not in the label row)."""
    return labels.get(item, 0)


def is_relevant(labels, item):
    return relevance(labels, item) > 0


def count_relevant(labels):
    """n_rel: number of items with a label > 0."""
    n = 0
    for value in labels.values():
        if value > 0:
            n += 1
    return n


def hits_in_top(labels, ranking, cutoff):
    """Number of relevant items among the first ``cutoff`` ranked items."""
    hits = 0
    for position in range(min(cutoff, len(ranking))):
        if is_relevant(labels, ranking[position]):
            hits += 1
    return hits


# --------------------------------------------------------------------------- #
# binary metrics
# --------------------------------------------------------------------------- #
def precision(labels, ranking, k, truncated=False):
    """Precision@k = hits in the first k' / k'.

    k' = min(k, |y|) if truncated else k.  n_rel == 0 -> NaN.
    truncated and an empty ranking -> NaN (k' would be 0).
    Non-truncated and an empty ranking -> 0 / k = 0.
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    if truncated:
        k_prime = min(k, len(ranking))
    else:
        k_prime = k
    if k_prime == 0:
        return NAN
    hits = hits_in_top(labels, ranking, k)
    return hits / k_prime


def recall(labels, ranking, k, truncated=False):
    """Recall@k = hits in the first min(k, |y|) / denominator.

    denominator = min(n_rel, k) if truncated else n_rel.  n_rel == 0 -> NaN.
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    hits = hits_in_top(labels, ranking, k)
    if truncated:
        denominator = min(n_rel, k)
    else:
        denominator = n_rel
    return hits / denominator


def f1(labels, ranking, k, truncated=False):
    """Harmonic mean of Precision@k and Recall@k (same ``truncated``).

    n_rel == 0 -> NaN; no hit in the first min(k, |y|) -> 0 (this includes the
    empty ranking, also when truncated makes Precision NaN).
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    hits = hits_in_top(labels, ranking, k)
    if hits == 0:
        return 0.0
    p = precision(labels, ranking, k, truncated=truncated)
    r = recall(labels, ranking, k, truncated=truncated)
    return 2 * p * r / (p + r)


def hit_rate(labels, ranking, k, truncated=False):
    """1.0 if the single relevant item is in the first min(k, |y|), else 0.0.

    NaN unless the label row has exactly one relevant item.  ``truncated`` has
    no effect (it is accepted for signature compatibility).
    """
    n_rel = count_relevant(labels)
    if n_rel != 1:
        return NAN
    if hits_in_top(labels, ranking, k) > 0:
        return 1.0
    return 0.0


def success(labels, ranking, k):
    """1.0 if any relevant item is in the first min(k, |y|), else 0.0; n_rel == 0 -> NaN."""
    if count_relevant(labels) == 0:
        return NAN
    return 1.0 if hits_in_top(labels, ranking, k) > 0 else 0.0


def reciprocal_rank(labels, ranking, k=None):
    """1 / (1-based rank of the first relevant item in the first min(k, |y|)).

    0 if there is none there; n_rel == 0 -> NaN. k=None: the whole ranking.
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    if k is None:
        k = len(ranking)
    for position in range(min(k, len(ranking))):
        if is_relevant(labels, ranking[position]):
            rank = position + 1
            return 1.0 / rank
    return 0.0


def average_precision(labels, ranking, k=None, denominator="min"):
    """AP@k = sum_{i <= k', rel(y_i)} Precision@i / Z, Z = min(k, n_rel) ('min') or n_rel
    ('relevant', trec_eval's map_cut_k).

    k' = min(k, |y|); Precision@i = (hits in first i) / i; n_rel == 0 -> NaN.
    k=None: the whole ranking, divided by n_rel (trec_eval's map).
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    if k is None:
        k = max(len(ranking), n_rel)  # min(k, n_rel) = n_rel, every rank counts
    total = 0.0
    hits = 0
    for position in range(min(k, len(ranking))):
        rank = position + 1
        if is_relevant(labels, ranking[position]):
            hits += 1
            precision_at_rank = hits / rank
            total += precision_at_rank
    if denominator == "relevant":
        return total / n_rel
    return total / min(k, n_rel)


def mean_ranks(labels, ranking):
    """Mean 1-based rank of the relevant items found anywhere in the ranking.

    n_rel == 0 -> NaN; no relevant item in the ranking -> +inf.
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    ranks = []
    for position, item in enumerate(ranking):
        if is_relevant(labels, item):
            ranks.append(position + 1)
    if not ranks:
        return INF
    return sum(ranks) / len(ranks)


def first_relevant_rank(labels, ranking):
    """1-based rank of the first relevant item in the whole ranking.

    n_rel == 0 -> NaN; no relevant item in the ranking -> +inf.
    """
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    for position, item in enumerate(ranking):
        if is_relevant(labels, item):
            return float(position + 1)
    return INF


# --------------------------------------------------------------------------- #
# trec_eval's other measures (binary)
# --------------------------------------------------------------------------- #
def r_precision(labels, ranking):
    """Relevant items in the first R = n_rel ranks, over R.  n_rel == 0 -> NaN."""
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    return hits_in_top(labels, ranking, n_rel) / n_rel


def num_relevant(labels, ranking):
    """n_rel, whatever the ranking (never NaN)."""
    return float(count_relevant(labels))


def num_retrieved(labels, ranking, k=None):
    """min(k, |y|) (k None: |y|); never NaN."""
    if k is None:
        return float(len(ranking))
    return float(min(k, len(ranking)))


def num_relevant_retrieved(labels, ranking, k=None):
    """Relevant items in the first min(k, |y|); never NaN."""
    if k is None:
        k = len(ranking)
    return float(hits_in_top(labels, ranking, k))


def round_half_away(x):
    """C's lround for x >= 0: to the nearest integer, halves away from zero."""
    whole = math.floor(x)
    if x - whole >= 0.5:
        return whole + 1
    return whole


def interpolated_precision(labels, ranking, recall_level):
    """trec_eval 10's iprec_at_recall: c = lround(level * n_rel) relevant items; the
    highest Precision@i over the ranks i where at least max(c, 1) relevant items have been
    seen (every rank, relevant or not), 0 if there is none.  n_rel == 0 -> NaN."""
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    needed = max(round_half_away(recall_level * n_rel), 1)
    best = 0.0
    hits = 0
    for position, item in enumerate(ranking):
        if is_relevant(labels, item):
            hits += 1
        if hits >= needed:
            best = max(best, hits / (position + 1))
    return best


def gmap(labels, ranking):
    """Per ranking: AP over the whole ranking (the mean is geometric, see geometric_mean)."""
    return average_precision(labels, ranking)


def geometric_mean(scores, floor=1e-5):
    """exp(mean(log(max(s, floor)))), trec_eval's gm_map summary."""
    logs = [math.log(max(s, floor)) for s in scores]
    return math.exp(sum(logs) / len(logs))


def _need_judged(judged, name):
    if judged is None:
        raise ValueError(name + " needs judgments")


def bpref(labels, ranking, judged=None):
    """trec_eval's bpref: R relevant, N judged non-relevant items; walking the ranking and
    skipping unjudged items, each relevant item adds 1 - min(n, R) / min(N, R), with n the
    judged non-relevant items seen before it (1 when n == 0); the sum over R.
    n_rel == 0 -> NaN."""
    _need_judged(judged, "Bpref")
    n_rel = count_relevant(labels)
    if n_rel == 0:
        return NAN
    n_nonrel = sum(1 for item in judged if not is_relevant(labels, item))
    total = 0.0
    nonrel_seen = 0
    for item in ranking:
        if item not in judged:
            continue
        if is_relevant(labels, item):
            if nonrel_seen > 0:
                total += 1.0 - min(nonrel_seen, n_rel) / min(n_nonrel, n_rel)
            else:
                total += 1.0
        else:
            nonrel_seen += 1
    return total / n_rel


def judged_at(labels, ranking, k=None, judged=None):
    """Judged@k: judged items in the first k' = min(k, |y|) over k' (ir_measures).
    No judged item in the row, or k' == 0 -> NaN."""
    _need_judged(judged, "Judged")
    if not judged:
        return NAN
    top = ranking if k is None else ranking[:k]
    if not top:
        return NAN
    return sum(1 for item in top if item in judged) / len(top)


# --------------------------------------------------------------------------- #
# graded metrics
# --------------------------------------------------------------------------- #
def gain(value, relevance_scaling):
    """f(rel): 'identity' -> rel; 'power' -> 2**rel - 1 (so f(0) == 0)."""
    if relevance_scaling == "identity":
        return float(value)
    if relevance_scaling == "power":
        return 2.0 ** value - 1.0
    raise ValueError(relevance_scaling)


def discount(rank, log_base):
    """log_b(rank + 1) for a 1-based rank; b = e ('e'), 2 ('2') or any number > 1 (its
    string, or the number)."""
    if log_base == "e":
        return math.log(rank + 1)
    if log_base == "2":
        return math.log2(rank + 1)
    return math.log(rank + 1, float(log_base))


def _dcg_of_gains(values_in_rank_order, k, relevance_scaling, log_base):
    """sum_{i <= k'} f(value_i) / log_b(i + 1), k' = min(k, len) (k None = all)."""
    if k is None:
        cutoff = len(values_in_rank_order)
    else:
        cutoff = min(k, len(values_in_rank_order))
    total = 0.0
    for position in range(cutoff):
        rank = position + 1
        total += gain(values_in_rank_order[position], relevance_scaling) / discount(rank, log_base)
    return total


def dcg(labels, ranking, k=None, relevance_scaling="identity", log_base="e"):
    """DCG@k = sum_{i <= k'} f(rel(y_i)) / log_b(i + 1).  n_rel == 0 -> NaN."""
    if count_relevant(labels) == 0:
        return NAN
    values = [relevance(labels, item) for item in ranking]
    return _dcg_of_gains(values, k, relevance_scaling, log_base)


def ideal_dcg(labels, k=None, relevance_scaling="identity", log_base="e"):
    """DCG of the row's own positive label values sorted descending, cut at k."""
    values = sorted((v for v in labels.values() if v > 0), reverse=True)
    return _dcg_of_gains(values, k, relevance_scaling, log_base)


def ndcg(labels, ranking, k=None, relevance_scaling="identity", log_base="e"):
    """NDCG@k = DCG@k / IDCG@k.  n_rel == 0 -> NaN."""
    if count_relevant(labels) == 0:
        return NAN
    actual = dcg(labels, ranking, k, relevance_scaling, log_base)
    ideal = ideal_dcg(labels, k, relevance_scaling, log_base)
    return actual / ideal


def rbp(labels, ranking, p=0.8, k=None, residual=False, judged=None, normalize=False):
    """RBP = (1 - p) * sum_{i <= k'} rel(y_i) p^(i-1), rel the label value.
    residual: the weight of the unjudged ranks within the top k' plus p^k' (all ranks after).
    normalize: RBP over the RBP of the ideal ranking (the positive labels sorted descending,
    cut at k). n_rel == 0 -> NaN."""
    if normalize:
        if count_relevant(labels) == 0:
            return NAN
        ideal = sorted((v for v in labels.values() if v > 0), reverse=True)
        ideal = ideal if k is None else ideal[:k]
        best = sum((1 - p) * g * p ** i for i, g in enumerate(ideal))
        return rbp(labels, ranking, p, k) / best
    if residual:
        _need_judged(judged, "RBP(residual=True)")
    if count_relevant(labels) == 0:
        return NAN
    cutoff = len(ranking) if k is None else min(k, len(ranking))
    if residual:
        unknown = 0.0
        for position in range(cutoff):
            if ranking[position] not in judged:
                unknown += (1 - p) * p ** position
        return unknown + p ** cutoff
    total = 0.0
    for position in range(cutoff):
        total += (1 - p) * relevance(labels, ranking[position]) * p ** position
    return total


def err(labels, ranking, k=None, max_grade=4.0):
    """ERR@k = sum_i R_i / i * prod_{j<i} (1 - R_j), R = (2^g - 1) / 2^max_grade.
    A label above max_grade -> ValueError; n_rel == 0 -> NaN."""
    if any(v > max_grade for v in labels.values()):
        raise ValueError("label above max_grade")
    if count_relevant(labels) == 0:
        return NAN
    cutoff = len(ranking) if k is None else min(k, len(ranking))
    total = 0.0
    still_looking = 1.0
    for position in range(cutoff):
        stop = (2.0 ** relevance(labels, ranking[position]) - 1) / 2.0 ** max_grade
        total += stop * still_looking / (position + 1)
        still_looking *= 1 - stop
    return total


# --------------------------------------------------------------------------- #
# name -> function (names are the rankereval class names)
# --------------------------------------------------------------------------- #
def _catalogue_ranks(ranking, k, n_items):
    """The catalogue 0 .. N - 1, N = max(n_items, largest ranked id + 1), and the rank of
    each of its items as scores whose order is the ranking give it: 1 .. k' for the first
    k' = min(k, |y|) ranked items, k' + 1 (tied) for every other item. Returns (N, k',
    {item: rank} of the first k' items)."""
    n = max([n_items] + [item + 1 for item in ranking])
    kk = len(ranking) if k is None else min(k, len(ranking))
    return n, kk, {item: i + 1 for i, item in enumerate(ranking[:kk])}


def coverage_error(labels, ranking, k=None, n_items=0):
    """scikit-learn's coverage error of scores s whose order is the ranking:
    |{j : s_j >= min_{r relevant} s_r}| over the N items, i.e. the items ranked at or above
    the worst-ranked relevant item (a tie counts as above).  n_rel == 0 -> NaN."""
    relevant = [item for item, v in labels.items() if v > 0]
    if not relevant:
        return NAN
    n, kk, rank = _catalogue_ranks(ranking, k, n_items)
    worst = max(rank.get(item, kk + 1) for item in relevant)
    ranked_at_or_above = sum(1 for r in rank.values() if r <= worst)
    unranked = n - kk  # every item outside the top k' has rank k' + 1
    return float(ranked_at_or_above + (unranked if worst >= kk + 1 else 0))


def label_ranking_loss(labels, ranking, k=None, n_items=0):
    """scikit-learn's label ranking loss of scores s whose order is the ranking: the pairs
    (relevant r, non-relevant j) with s_r <= s_j, over |R| (N - |R|).  No relevant item, or
    no non-relevant one -> NaN."""
    relevant = {item for item, v in labels.items() if v > 0}
    n, kk, rank = _catalogue_ranks(ranking, k, n_items)
    n_rel = len(relevant)
    if n_rel == 0 or n_rel == n:
        return NAN
    ranked_nonrel = [item for item in rank if item not in relevant]
    unranked_nonrel = (n - n_rel) - len(ranked_nonrel)  # non-relevant items at rank k' + 1
    wrong = 0
    for r in relevant:
        rr = rank.get(r, kk + 1)
        wrong += sum(1 for j in ranked_nonrel if rank[j] <= rr)
        if rr == kk + 1:
            wrong += unranked_nonrel  # tied with it
    return wrong / (n_rel * (n - n_rel))


REFERENCE = {
    "Precision": precision,
    "Recall": recall,
    "F1": f1,
    "HitRate": hit_rate,
    "Success": success,
    "ReciprocalRank": reciprocal_rank,
    "AP": average_precision,
    "MeanRanks": mean_ranks,
    "FirstRelevantRank": first_relevant_rank,
    "DCG": dcg,
    "NDCG": ndcg,
    "RPrecision": r_precision,
    "NumRelevant": num_relevant,
    "NumRetrieved": num_retrieved,
    "NumRelevantRetrieved": num_relevant_retrieved,
    "InterpolatedPrecision": interpolated_precision,
    "GMAP": gmap,
    "Bpref": bpref,
    "Judged": judged_at,
    "RBP": rbp,
    "ERR": err,
    "CoverageError": coverage_error,
    "LabelRankingLoss": label_ranking_loss,
}


def score_rows(metric_fn, label_rows, rankings, judged_rows=None, n_items=0, **params):
    """Apply a reference metric row by row, with label broadcasting.

    ``label_rows`` is a list of dicts (one per label row), ``rankings`` a list of
    lists.  A single label row serves every ranking; otherwise the counts must
    match.  ``judged_rows`` (a set of judged items per label row, or None) goes to the
    metrics that take ``judged``, ``n_items`` (the labels' number of items) to those that
    take it.  Returns a list of floats, one per ranking.
    """
    if len(label_rows) == 1:
        label_rows = [label_rows[0]] * len(rankings)
        if judged_rows is not None:
            judged_rows = [judged_rows[0]] * len(rankings)
    if len(label_rows) != len(rankings):
        raise ValueError(
            "%d label rows for %d rankings" % (len(label_rows), len(rankings))
        )
    takes_judged = "judged" in inspect.signature(metric_fn).parameters
    takes_n_items = "n_items" in inspect.signature(metric_fn).parameters
    scores = []
    for i, (labels, ranking) in enumerate(zip(label_rows, rankings)):
        extra = {"n_items": n_items} if takes_n_items else {}
        if takes_judged:
            extra["judged"] = None if judged_rows is None else set(judged_rows[i])
        scores.append(float(metric_fn(labels, list(ranking), **extra, **params)))
    return scores


# ---- trec_eval 10.0's other measures (rankereval.metrics._profile): the literal loops of
# tests/reference_trec.py over trec_eval's view of the query; NaN where rankereval documents
# NaN (no relevant item; trec_eval leaves 0 there)
import reference_trec as _rt  # noqa: E402


def _nan_if_no_relevant(labels, value):
    return math.nan if not any(v > 0 for v in labels.values()) else value


def _binary_profile(labels, ranking, judged):
    return _rt.profile(labels, ranking, judged)


def _judged_profile(labels, ranking, judged):
    if judged is None:
        raise ValueError("needs judgments")
    return _rt.profile(labels, ranking, judged)


def _graded_profile(labels, ranking):
    return _rt.profile({i: v for i, v in labels.items() if v > 0}, ranking, None, binary=False)


def ref_infap(labels, ranking, judged=None):
    return _nan_if_no_relevant(labels, _rt.infap(*_judged_profile(labels, ranking, judged)))


def ref_gmbpref(labels, ranking, judged=None):
    return _nan_if_no_relevant(labels, _rt.bpref(*_judged_profile(labels, ranking, judged)))


def ref_rprec_mult(labels, ranking, multiplier):
    return _nan_if_no_relevant(labels, _rt.rprec_mult(*_binary_profile(labels, ranking, None), multiplier))


def ref_utility(labels, ranking):
    return float(_rt.utility(*_binary_profile(labels, ranking, None)))


def ref_11pt(labels, ranking):
    return _nan_if_no_relevant(labels, _rt.pt11(*_binary_profile(labels, ranking, None)))


def ref_bing(labels, ranking):
    return _nan_if_no_relevant(labels, _rt.bin_g(*_binary_profile(labels, ranking, None)))


def ref_g(labels, ranking):
    return _nan_if_no_relevant(labels, _rt.g(*_graded_profile(labels, ranking)))


def _scaled(labels):
    """The grades divided by the largest: NDCG-like ratios are the same, and no sum of huge
    grades overflows (as the metrics compute them)."""
    top = max((v for v in labels.values() if v > 0), default=0.0)
    return {i: v / top for i, v in labels.items()} if top > 0 else labels


def ref_ndcg_rel(labels, ranking):
    return _nan_if_no_relevant(labels, _rt.ndcg_rel(*_graded_profile(_scaled(labels), ranking)))


def ref_rndcg(labels, ranking, relevance_level=1.0):
    if not any(v >= relevance_level for v in labels.values()):
        return math.nan
    # the grades at or above the level, before scaling: the level only decides NaN
    return _rt.rndcg(*_graded_profile(_scaled(labels), ranking), level=0.0)


def ref_relative_p(labels, ranking, k):
    return _nan_if_no_relevant(labels, _rt.relative_p(*_binary_profile(labels, ranking, None), k))


def _set(labels, ranking, which, beta=1.0):
    value = _rt.set_measures(*_binary_profile(labels, ranking, None), beta=beta)[which]
    if which in (0, 1, 3) and not ranking:
        return math.nan
    return _nan_if_no_relevant(labels, value)


def ref_unjudged(labels, ranking, k, judged=None):
    return _rt.unj(_judged_profile(labels, ranking, judged)[0], k)


def ref_scaled_rbp(labels, ranking, p=0.9):
    return _nan_if_no_relevant(labels, _rt.rbp(*_graded_profile(labels, ranking), p=p))


def ref_scaled_rbp_resid(labels, ranking, p=0.9, judged=None):
    return _rt.rbp_resid(_judged_profile(labels, ranking, judged)[0], p=p)


REFERENCE.update({
    "InfAP": ref_infap,
    "GMBpref": ref_gmbpref,
    "RPrecisionMultiple": ref_rprec_mult,
    "Utility": ref_utility,
    "ElevenPointAP": ref_11pt,
    "BinG": ref_bing,
    "NormalizedGain": ref_g,
    "NDCGRel": ref_ndcg_rel,
    "RNDCG": ref_rndcg,
    "RelativePrecision": ref_relative_p,
    "SetP": lambda labels, ranking: _set(labels, ranking, 0),
    "SetRelativeP": lambda labels, ranking: _set(labels, ranking, 1),
    "SetR": lambda labels, ranking: _set(labels, ranking, 2),
    "SetAP": lambda labels, ranking: _set(labels, ranking, 3),
    "SetF": lambda labels, ranking, beta=1.0: _set(labels, ranking, 4, beta),
    "NumNonRelevantJudgedRetrieved": lambda labels, ranking, judged=None: float(
        _rt.num_nonrel_judged_ret(*_judged_profile(labels, ranking, judged))),
    "Unjudged": ref_unjudged,
    "ScaledRBP": ref_scaled_rbp,
    "ScaledRBPResidual": ref_scaled_rbp_resid,
})


def ref_fallout(labels, ranking, k=None):
    """Non-relevant items of the top k over those of the whole ranking (torchmetrics)."""
    nonrel = [item not in labels or labels[item] <= 0 for item in ranking]
    total = sum(nonrel)
    if total == 0:
        return math.nan
    return sum(nonrel[:len(ranking) if k is None else k]) / total


def ref_auroc(labels, ranking, k=None):
    """Pairs (relevant above non-relevant) of the top k, counted one by one."""
    top = list(ranking[:len(ranking) if k is None else k])
    rel = [item in labels and labels[item] > 0 for item in top]
    pos = [i for i, r in enumerate(rel) if r]
    neg = [i for i, r in enumerate(rel) if not r]
    if not pos or not neg:
        return math.nan
    return sum(1 for i in pos for j in neg if i < j) / (len(pos) * len(neg))


REFERENCE.update({"FallOut": ref_fallout, "AUROC": ref_auroc})


def weighted_mean(scores, weights):
    """sum(w x) / sum(w), term by term (NaN for no scores, a NaN score or a zero total weight)."""
    scores, weights = [float(s) for s in scores], [float(w) for w in weights]
    if not scores or any(math.isnan(s) for s in scores) or sum(weights) == 0:
        return math.nan
    return math.fsum(w * s for w, s in zip(weights, scores)) / math.fsum(weights)


def ref_gauc_user(positive, scores):
    """One user's AUC as RecBole defines it: the share of (positive, negative) pairs where the
    positive scores higher, a tie counting 1/2 (RecBole's average ranks); NaN without a
    positive or without a negative. ``positive``: a bool per item; ``scores``: one per item."""
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    if not pos or not neg:
        return math.nan
    wins = sum(1.0 if a > b else 0.5 if a == b else 0.0 for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def ref_gauc(positive_rows, score_rows):
    """RecBole's GAUC: each user's AUC (:func:`ref_gauc_user`) weighted by the user's number of
    positive items, over the users with a positive and a negative item."""
    aucs, weights = [], []
    for positive, scores in zip(positive_rows, score_rows):
        auc = ref_gauc_user(positive, scores)
        if not math.isnan(auc):
            aucs.append(auc)
            weights.append(sum(bool(p) for p in positive))
    return weighted_mean(aucs, weights)


# GAUC's score per ranking is AUROC's (its mean is weighted: weighted_mean, ref_gauc)
REFERENCE["GAUC"] = ref_auroc


def ref_num_queries(labels, ranking):
    """ir_measures' NumQ per query: every evaluated query counts once."""
    return 1.0


REFERENCE.update({"NumQueries": ref_num_queries})


# ---- the C/W/L family (rankereval.metrics._cwl): tests/reference_cwl.py
import reference_cwl as _rc  # noqa: E402

REFERENCE.update(_rc.REFERENCE)
