"""Slow, literal references of the beyond-accuracy metrics (docs/definitions.rst).

Plain Python, written from the formulas for readability, not speed: no numpy, no shortcut
(the diversity kernel's O(k d) sum identity is not used here; every pair is visited).

Per-ranking functions take one ranking (a list of item ids, best first) and return a float;
system-level functions take the list of rankings.
"""
import math
from collections import Counter

NAN = float("nan")


def top(ranking, k):
    return list(ranking[:k])


def novelty(ranking, k, popularity, method="self_information"):
    """Mean of -log2 p(i) (Zhou et al. 2010) or 1 - p(i) (Vargas & Castells 2011) over the top k."""
    items = top(ranking, k)
    if not items:
        return NAN
    total = 0.0
    for i in items:
        p = popularity[i]
        if method == "self_information":
            if p == 0:
                return NAN  # infinite self-information: undefined
            total += -math.log2(p)
        else:
            total += 1.0 - p
    return total / len(items)


def average_popularity(ranking, k, popularity):
    items = top(ranking, k)
    if not items:
        return NAN
    return sum(popularity[i] for i in items) / len(items)


def tail_share(ranking, k, tail):
    """``tail``: a Python set of the long-tail item ids."""
    items = top(ranking, k)
    if not items:
        return NAN
    return sum(1 for i in items if i in tail) / len(items)


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def intra_list_diversity(ranking, k, features):
    """1 - mean cosine similarity over every unordered pair of the top k (Ziegler et al. 2005).
    ``features``: a list of feature lists, one per item id."""
    items = top(ranking, k)
    if len(items) < 2:
        return NAN
    sims = []
    for a in range(len(items)):
        for b in range(a + 1, len(items)):
            sims.append(cosine(features[items[a]], features[items[b]]))
    return 1.0 - sum(sims) / len(sims)


def exposure(rankings, k, discount="none"):
    """Counter item -> exposure in the top k of all rankings (rank j >= 1 weighs
    1 / log2(j + 1) with the 'log2' discount)."""
    counts = Counter()
    for ranking in rankings:
        for j, item in enumerate(top(ranking, k), start=1):
            counts[item] += 1.0 if discount == "none" else 1.0 / math.log2(j + 1)
    return counts


def catalog_coverage(rankings, k, n_items):
    recommended = set()
    for ranking in rankings:
        recommended.update(top(ranking, k))
    return len(recommended) / n_items


def distributional_coverage(rankings, k, n_items=None, normalize=False):
    counts = exposure(rankings, k)
    total = sum(counts.values())
    if total == 0:
        return NAN
    h = 0.0
    for c in counts.values():
        p = c / total
        h -= p * math.log2(p)
    if normalize:
        return h / math.log2(n_items) if n_items > 1 else NAN
    return h


def gini_index(rankings, k, n_items, discount="none"):
    counts = exposure(rankings, k, discount)
    values = sorted(counts.get(i, 0.0) for i in range(n_items))
    total = sum(values)
    if total == 0:
        return NAN
    n = len(values)
    return sum((2 * j - n - 1) * c for j, c in enumerate(values, start=1)) / (n * total)


def serendipity(ranking, k, history, sim, relevance=None):
    """Microsoft Recommenders' user_serendipity (Zhang et al. 2012): the mean over the top k
    items i of (1 - mean over the history items h of sim[i][h]) * rel(i). ``history``: the
    user's training items; ``sim``: a list of lists (sim[i][h]); ``relevance``: a dict item ->
    value (an item it lacks has 0), or None for 1 everywhere. NaN for an empty top k or history."""
    items = top(ranking, k)
    if not items or not history:
        return NAN
    total = 0.0
    for i in items:
        mean_sim = sum(sim[i][h] for h in history) / len(history)
        rel = 1.0 if relevance is None else relevance.get(i, 0.0)
        total += (1.0 - mean_sim) * rel
    return total / len(items)


def cooccurrence_similarity(users, n_items):
    """Recommenders' item_cooccurrence_count: sim[i][j] = |U_i & U_j| / sqrt(|U_i| |U_j|), with
    U_i the users (``users``: a list of sets of item ids) who hold item i; 0 for an item nobody holds."""
    holders = [{u for u, items in enumerate(users) if i in items} for i in range(n_items)]
    sim = [[0.0] * n_items for _ in range(n_items)]
    for i in range(n_items):
        for j in range(n_items):
            both = len(holders[i] & holders[j])
            if both:
                sim[i][j] = both / math.sqrt(len(holders[i]) * len(holders[j]))
    return sim


def feature_similarity(features):
    """Recommenders' item_feature_vector: the cosine of every pair of feature vectors."""
    return [[cosine(a, b) for b in features] for a in features]
