"""Slow literal references of the intent-aware diversity measures, written from the papers'
formulas (and ndeval's normalisations, which the papers leave open), for tests/test_diversity.py.

A label row is ``{intent: {item: grade}}``; an item is relevant to an intent when its grade
is at least ``rel``. ``S``: the intents with a relevant item. The gain of the item at rank i
for intent s is :math:`(1 - \\alpha)^{c_s(i)}` (``c_s(i)``: items above it relevant to s),
computed as a running product and summed over the intents in their sorted order, as ndeval
does (so that ties of the greedy ideal fall the same way). ``tie_key(item)`` orders items of
equal gain in the greedy ideal (larger first).

* Clarke et al. 2008 (SIGIR): alpha-DCG / alpha-nDCG.
* Chapelle et al. 2009 (CIKM): ERR-IA, with binary relevance per intent and stopping
  probability alpha (ndeval's form).
* Agrawal et al. 2009 (WSDM): P-IA, MAP-IA (uniform intent weights).
* Zhai et al. 2003 (SIGIR): S-recall.
* Clarke et al. 2009 (ICTIR): NRBP.
"""
import math


def _sets(row, rel):
    """{intent: set of relevant items} for the intents with a relevant item, sorted by intent."""
    keys = list(row)
    try:
        keys = sorted(keys)
    except TypeError:
        pass
    out = {}
    for s in keys:
        items = {d for d, g in row[s].items() if g >= rel}
        if items:
            out[s] = items
    return out


def _gains(ranking, sets, alpha):
    """The gain of each rank of ``ranking``."""
    weight = {s: 1.0 for s in sets}
    out = []
    for item in ranking:
        g = 0.0
        for s, items in sets.items():
            if item in items:
                g += weight[s]
                weight[s] *= 1.0 - alpha
        out.append(g)
    return out


def greedy_ideal(row, alpha, rel=1.0, tie_key=None):
    """ndeval's greedy ideal ranking of the items relevant to some intent: at each rank the
    item of largest gain given those above it (ties: the larger ``tie_key``, or item id)."""
    sets = _sets(row, rel)
    key = tie_key or (lambda item: item)
    left = sorted(set().union(*sets.values())) if sets else []
    weight = {s: 1.0 for s in sets}
    ideal = []
    while left:
        def gain(item):
            return sum(weight[s] for s, items in sets.items() if item in items)
        best = None
        for item in left:
            if best is None or gain(item) > gain(best) or (gain(item) == gain(best) and key(item) > key(best)):
                best = item
        ideal.append(best)
        left.remove(best)
        for s, items in sets.items():
            if best in items:
                weight[s] *= 1.0 - alpha
    return ideal


def _depth(ranking, k):
    return len(ranking) if k is None else k


def alpha_dcg_raw(ranking, sets, k, alpha):
    g = _gains(ranking, sets, alpha)
    return sum(g[i] / math.log2(i + 2) for i in range(min(_depth(ranking, k), len(g))))


def _ideal_ideal(n_sets, kk, alpha, discount):
    total, w = 0.0, float(n_sets)
    for i in range(kk):
        total += w * discount(i)
        w *= 1.0 - alpha
    return total


def _over_ideal_ideal(raw, discount):
    """The measure ``raw`` divided by that of an "ideal ideal" ranking whose every item is
    relevant to every intent (ndeval's collection-independent normalisation)."""
    def measure(row, ranking, k=None, alpha=0.5, rel=1.0):
        sets = _sets(row, rel)
        if not sets:
            return math.nan
        kk = _depth(ranking, k)
        if kk == 0:
            return 0.0
        return raw(ranking, sets, k, alpha) / _ideal_ideal(len(sets), kk, alpha, discount)
    return measure


def _over_greedy_ideal(raw):
    """The measure ``raw`` divided by that of the greedy ideal ranking (0 without gain)."""
    def measure(row, ranking, k=None, alpha=0.5, rel=1.0, tie_key=None):
        sets = _sets(row, rel)
        if not sets:
            return math.nan
        num = raw(ranking, sets, k, alpha)
        if num == 0:
            return 0.0
        return num / raw(greedy_ideal(row, alpha, rel, tie_key), sets, k, alpha)
    return measure


def err_ia_raw(ranking, sets, k, alpha):
    g = _gains(ranking, sets, alpha)
    return sum(g[i] / (i + 1) for i in range(min(_depth(ranking, k), len(g))))


alpha_dcg = _over_ideal_ideal(alpha_dcg_raw, lambda i: 1 / math.log2(i + 2))
alpha_ndcg = _over_greedy_ideal(alpha_dcg_raw)
err_ia = _over_ideal_ideal(err_ia_raw, lambda i: 1 / (i + 1))
nerr_ia = _over_greedy_ideal(err_ia_raw)


def p_ia(row, ranking, k=None, rel=1.0):
    sets = _sets(row, rel)
    if not sets:
        return math.nan
    kk = _depth(ranking, k)
    if kk == 0:
        return 0.0
    top = ranking[:kk]
    return sum(sum(1 for item in top if item in items) / kk for items in sets.values()) / len(sets)


def s_recall(row, ranking, k=None, rel=1.0):
    sets = _sets(row, rel)
    if not sets:
        return math.nan
    top = set(ranking[:_depth(ranking, k)])
    return sum(1 for items in sets.values() if top & items) / len(sets)


def ap_ia(row, ranking, rel=1.0):
    sets = _sets(row, rel)
    if not sets:
        return math.nan
    total = 0.0
    for items in sets.values():
        found, ap = 0, 0.0
        for i, item in enumerate(ranking):
            if item in items:
                found += 1
                ap += found / (i + 1)
        total += ap / len(items)
    return total / len(sets)


def nrbp_raw(ranking, sets, alpha, beta):
    g = _gains(ranking, sets, alpha)
    total, w = 0.0, 1.0
    for x in g:
        total += x * w
        w *= beta
    return total * (1 - (1 - alpha) * beta) / len(sets)


def nrbp(row, ranking, alpha=0.5, beta=0.5, rel=1.0):
    sets = _sets(row, rel)
    if not sets:
        return math.nan
    return nrbp_raw(ranking, sets, alpha, beta)


def nnrbp(row, ranking, alpha=0.5, beta=0.5, rel=1.0, tie_key=None):
    return _over_greedy_ideal(lambda r, sets, k, a: nrbp_raw(r, sets, a, beta))(row, ranking, None, alpha, rel, tie_key)
