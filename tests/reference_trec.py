"""Literal references of trec_eval 10.0's measures, one loop per measure as its m_*.c
describes it, over trec_eval's view of one query: ``rels``, the code of each retrieved
document in rank order (its grade, -1 outside the pool, -2 in the pool but unjudged), and
``levels``, how many judged documents the query has at each grade 0, 1, ... (grades >= 0).
``level`` is the relevance level (trec_eval -l). A value trec_eval leaves unset is 0 here,
as trec_eval prints it.
"""
import math

INFAP_EPSILON = 1e-5


def _log2(x):
    """C's log2: NaN below 0, -inf at 0 (math.log2 raises there)."""
    if x != x or x < 0:
        return math.nan
    return -math.inf if x == 0 else math.log2(x)


def _as_dict(levels):
    """``levels`` as {grade: count}: a list (index = grade, as trec_eval's rel_levels) or a
    dict already (grades may then be any numbers >= 0)."""
    return dict(levels) if isinstance(levels, dict) else dict(enumerate(levels))


def num_rel(levels, level=1):
    return sum(c for g, c in _as_dict(levels).items() if g >= level)


def _gains(levels):
    """trec_eval's default gains: (grade, gain = grade, count) sorted by gain; grade 0 is
    always one (trec_eval's levels run from 0 to the largest grade)."""
    d = _as_dict(levels)
    d.setdefault(0, 0)
    return sorted(((g, float(g), c) for g, c in d.items()), key=lambda t: t[1])


def _gain(rel, gains):
    for g, gain, _ in gains:
        if rel == g:
            return gain
    return 0.0


def _ideal_walk(gains):
    """trec_eval's walk down the ideal ranking: the ideal gain at each rank, then 0."""
    cur = len(gains) - 1
    num_at = 0
    ideal = gains[cur][1] if cur >= 0 else 0.0

    def step():
        nonlocal cur, num_at, ideal
        num_at += 1
        while cur >= 0 and num_at > gains[cur][2]:
            num_at = 1
            cur -= 1
            ideal = gains[cur][1] if cur >= 0 else 0.0
        return ideal
    return ideal, step


def infap(rels, levels, level=1):
    nonrel = rel = unj = 0
    total = 0.0
    for j, r in enumerate(rels):
        if r == -1:
            continue
        if r == -2:
            unj += 1
            continue
        if 0 <= r < level:
            nonrel += 1
        else:
            rel += 1
            if j == 0:
                total += 1.0
            else:
                fj = float(j)
                total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unj) / fj) * (
                    (rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON))
    nr = num_rel(levels, level)
    return total / nr if nr else total


def rprec_mult(rels, levels, mult, level=1):
    nr = num_rel(levels, level)
    cut = int(mult * nr + 0.9)
    if cut == 0:
        return 0.0
    found = sum(1 for r in rels[:cut] if r >= level)
    return found / cut


def utility(rels, levels, level=1):
    relret = sum(1 for r in rels if r >= level)
    return relret - (len(rels) - relret)


def iprec(rels, levels, x, level=1):
    nr = num_rel(levels, level)
    need = max(int(math.floor(x * nr + 0.5)), 1)
    best, found = 0.0, 0
    seen = False
    for i, r in enumerate(rels):
        if r >= level:
            found += 1
        if found >= need:
            seen = True
            best = max(best, found / (i + 1))
    return best if seen else 0.0


def pt11(rels, levels, level=1):
    return sum(iprec(rels, levels, x / 10, level) for x in range(11)) / 11


def bin_g(rels, levels, level=1):
    s, so_far = 0.0, 0
    for i, r in enumerate(rels):
        if r >= level:
            so_far += 1
            s += 1.0 / math.log2(3 + i - so_far)
    nr = num_rel(levels, level)
    return s / nr if so_far else 0.0


def g(rels, levels):
    gains = _gains(levels)
    ideal, step = _ideal_walk(gains)
    res_g = sum_res = sum_ideal = sum_cost = 0.0
    i = 0
    while i < len(rels) and ideal > 0.0:
        rg = _gain(rels[i], gains)
        sum_res += rg
        ideal = step()
        if ideal > 0.0:
            sum_ideal += ideal
        sum_cost += ideal if ideal >= 1.0 else 1.0
        if rg != 0:
            res_g += rg / _log2(2 + max(sum_cost - sum_res, 0.0))  # (>= 0 but for rounding)
        i += 1
    while i < len(rels):
        rg = _gain(rels[i], gains)
        sum_res += rg
        sum_cost += 1.0
        if rg != 0:
            res_g += rg / _log2(2 + max(sum_cost - sum_res, 0.0))  # (>= 0 but for rounding)
        i += 1
    while ideal > 0.0:
        ideal = step()
        if ideal > 0.0:
            sum_ideal += ideal
    return res_g / sum_ideal if sum_ideal > 0.0 else 0.0


def ndcg_rel(rels, levels):
    gains = _gains(levels)
    ideal, step = _ideal_walk(gains)
    rdcg = idcg = s = 0.0
    n_rel = n_rel_ret = 0
    i = 0
    while i < len(rels) and ideal > 0.0:
        rg = _gain(rels[i], gains)
        if rg != 0:
            rdcg += rg / math.log2(i + 2)
        ideal = step()
        if ideal > 0.0:
            n_rel += 1
            idcg += ideal / math.log2(i + 2)
        if rg > 0:
            s += rdcg / idcg
            n_rel_ret += 1
        i += 1
    while i < len(rels):
        rg = _gain(rels[i], gains)
        if rg != 0:
            rdcg += rg / math.log2(i + 2)
        if rg > 0:
            s += rdcg / idcg
            n_rel_ret += 1
        i += 1
    while ideal > 0.0:
        ideal = step()
        if ideal > 0.0:
            n_rel += 1
            idcg += ideal / math.log2(i + 2)
        i += 1
    s += (n_rel - n_rel_ret) * rdcg / idcg if idcg else 0.0
    return s / n_rel if s > 0.0 else 0.0


def rndcg(rels, levels, level=1):
    gains = _gains(levels)
    if num_rel(levels, level) == 0:
        return 0.0
    ideal, step = _ideal_walk(gains)
    old = ideal
    rdcg = idcg = s = 0.0
    changed = 0
    i = 0
    while i < len(rels) and ideal > 0.0:
        rg = _gain(rels[i], gains)
        ideal = step()
        if old != ideal:
            if idcg > 0.0:
                s += rdcg / idcg
                changed += 1
            old = ideal
        if rg != 0:
            rdcg += rg / math.log2(i + 2)
        if ideal > 0.0:
            idcg += ideal / math.log2(i + 2)
        i += 1
    if i < len(rels):
        while i < len(rels):
            rg = _gain(rels[i], gains)
            if rg != 0:
                rdcg += rg / math.log2(i + 2)
            i += 1
        if idcg > 0.0:
            s += rdcg / idcg
            changed += 1
    while ideal > 0.0:
        ideal = step()
        if old != ideal:
            if idcg > 0.0:
                s += rdcg / idcg
                changed += 1
            old = ideal
        if ideal > 0.0:
            idcg += ideal / math.log2(i + 2)
        i += 1
    return s / changed if changed else math.nan


def relative_p(rels, levels, k, level=1):
    nr = num_rel(levels, level)
    if nr == 0:
        return 0.0
    return sum(1 for r in rels[:k] if r >= level) / min(k, nr)


def set_measures(rels, levels, level=1, beta=1.0):
    """(set_P, set_relative_P, set_recall, set_map, set_F)"""
    nr = num_rel(levels, level)
    ret = len(rels)
    relret = sum(1 for r in rels if r >= level)
    p = relret / ret if ret else 0.0
    relp = relret / min(ret, nr) if ret and nr else 0.0
    rec = relret / nr if nr else 0.0
    smap = relret * relret / (ret * nr) if ret and nr else 0.0
    f = 0.0
    if relret:
        pp, rr = relret / ret, relret / nr
        f = (beta + 1.0) * pp * rr / (beta * pp + rr)
    return p, relp, rec, smap, f


def num_nonrel_judged_ret(rels, levels, level=1):
    return sum(1 for r in rels if 0 <= r < level)


def unj(rels, k):
    return sum(1 for r in rels[:k] if r < 0) / k


def rbp(rels, levels, p=0.9):
    gains = [(gr, gain) for gr, gain, _ in _gains(levels)]
    hi = max((gain for _, gain in gains), default=0.0)
    lo = min((gain for _, gain in gains), default=0.0)
    if lo < 0 or hi > 1:
        gains = [(gr, (gain - lo) / (hi - lo)) for gr, gain in gains]
    s, cur = 0.0, 1.0
    for r in rels:
        gain = next((gn for gr, gn in gains if gr == r), 0.0)
        s += gain * cur
        cur *= p
    return (1.0 - p) * s


def rbp_resid(rels, p=0.9):
    s, cur, n = 0.0, 1.0, 0
    for r in rels:
        if r < 0:
            n += 1
            s += cur
        cur *= p
    return cur + (1 - p) * s if n else 0.0


def bpref(rels, levels, level=1):
    nr = num_rel(levels, level)
    n_nonrel = sum(c for gr, c in _as_dict(levels).items() if gr < level)
    nonrel = 0
    s = 0.0
    for r in rels:
        if r < 0:
            continue
        if r < level:
            nonrel += 1
        else:
            s += 1.0 - min(nonrel, nr) / min(n_nonrel, nr) if nonrel > 0 else 1.0
    return s / nr if nr else s


def profile(labels, ranking, judged=None, pool=None, binary=True):
    """trec_eval's (rels, levels) of one query from rankereval's view of it: ``labels``
    {item: value > 0}, ``judged`` the set of judged items (None: no judgments), ``pool``
    the pooled items (None: the judged ones). Binary labels count as grade 1."""
    rels = []
    for item in ranking:
        if item in labels:
            rels.append(1 if binary else labels[item])
        elif judged is not None and item in judged:
            rels.append(0)
        elif pool is not None and item in pool:
            rels.append(-2)
        else:
            rels.append(-1)
    levels = {}
    for v in labels.values():
        g = 1 if binary else v
        levels[g] = levels.get(g, 0) + 1
    if judged is not None:
        levels[0] = len(set(judged) - set(labels))
    return rels, levels
