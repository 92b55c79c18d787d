"""Literal reference of the C/W/L family (rankereval.metrics._cwl), from the published formulas.

Moffat et al.'s C/W/L framework (Moffat, Bailey, Scholer and Thomas, "Incorporating user
expectations and behavior into the measurement of search effectiveness", TOIS 2017;
cwl_eval, Azzopardi, Thomas and Moffat, SIGIR 2019): a continuation probability C(i) after
each rank, the weight W(i) = prod_{j<i} C(j) / sum_t prod_{j<t} C(j), and the expected rate of
gain sum_i W(i) g(i). Each measure is its continuation function, written out here one rank
at a time with plain floats:

* SDCG@k (scaled DCG): C(i) = log2(i+1) / log2(i+2) for i < k, else 0;
* INST (Moffat et al., ADCS 2015): C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2 with
  T_i = T - (gain of ranks 1..i);
* INSQ (Moffat et al., ADCS 2012): C(i) = ((i + 2T - 1) / (i + 2T))^2;
* BPM (Zhang et al., SIGIR 2017): the user goes on while the gain so far is below T and
  the items read are below K; the dynamic model moves T by hb (g - median) and K by
  hc (g - median) after each rank;
* NERR eq. 8-11 (Azzopardi, Mackenzie and Moffat, ICTIR 2021): ERR's (1 - g(i)) times
  1 (to k), i / (i + 1) (to k), phi, or INSQ's factor.

The ranking is read to ``depth`` ranks (cwl_eval's max_depth), padded with gain 0.
Gains: (min(max(grade, min_grade), max_grade) - min_grade) / (max_grade - min_grade) for a
stored grade (ir_measures' clipping), 0 for anything else.
"""
import math


def gains_of(labels, ranking, depth, min_grade, max_grade):
    out = []
    for i in range(depth):
        grade = labels.get(ranking[i], 0.0) if i < len(ranking) else 0.0
        grade = min(max(grade, 0.0, min_grade), max_grade)
        out.append((grade - min_grade) / (max_grade - min_grade))
    return out


def expected_rate(cont, gains):
    """sum_i W(i) g(i) for the continuation probabilities ``cont`` (C(1), C(2), ...)."""
    reach = [1.0]  # probability of reaching rank 1, 2, ...
    for c in cont[:-1]:
        reach.append(reach[-1] * c)
    total = sum(reach)
    return sum(r / total * g for r, g in zip(reach, gains))


def sdcg(labels, ranking, k, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    cont = [math.log2(i + 1) / math.log2(i + 2) if i < k else 0.0 for i in range(1, len(g) + 1)]
    return expected_rate(cont, g)


def inst(labels, ranking, T=1.0, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    cont = []
    seen = 0.0
    for i in range(1, len(g) + 1):
        seen += g[i - 1]
        t_i = T - seen
        cont.append(((i + T + t_i - 1) / (i + T + t_i)) ** 2)
    return expected_rate(cont, g)


def insq(labels, ranking, T=1.0, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    cont = [((i + 2 * T - 1) / (i + 2 * T)) ** 2 for i in range(1, len(g) + 1)]
    return expected_rate(cont, g)


def bpm(labels, ranking, k, T=1.0, hb=0.0, hc=0.0, median=0.5, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    cont = []
    benefit_goal, cost_budget = T, float(k)
    seen = 0.0
    stopped = False
    for i in range(1, len(g) + 1):
        seen += g[i - 1]
        if stopped or not (seen < benefit_goal and i < cost_budget):
            stopped = True
            cont.append(0.0)
            continue
        cont.append(1.0)
        benefit_goal += hb * (g[i - 1] - median)
        cost_budget += hc * (g[i - 1] - median)
    return expected_rate(cont, g)


def nerr8(labels, ranking, k, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    return expected_rate([(1 - g[i - 1]) if i < k else 0.0 for i in range(1, len(g) + 1)], g)


def nerr9(labels, ranking, k, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    return expected_rate([i / (i + 1) * (1 - g[i - 1]) if i < k else 0.0 for i in range(1, len(g) + 1)], g)


def nerr10(labels, ranking, p=0.9, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    return expected_rate([p * (1 - x) for x in g], g)


def nerr11(labels, ranking, T=1.0, min_grade=0.0, max_grade=1.0, depth=1000):
    g = gains_of(labels, ranking, int(depth), min_grade, max_grade)
    return expected_rate([((i + 2 * T - 1) / (i + 2 * T)) ** 2 * (1 - g[i - 1]) for i in range(1, len(g) + 1)], g)


REFERENCE = {"SDCG": sdcg, "INST": inst, "INSQ": insq, "BPM": bpm, "NERR8": nerr8, "NERR9": nerr9,
             "NERR10": nerr10, "NERR11": nerr11}


def compat(labels, ranking, p=0.95, normalize=True):
    """Clarke, Vtyurina and Smucker's compatibility (TOIS 2021) as ir_measures computes it: the
    RBO of the ranking with the ideal ranking over max(|ranking|, |ideal|) depths, normalised
    by the ideal's own. The ideal: relevant items by decreasing grade, equal grades retrieved
    first in the ranking's order. NaN without relevant items."""
    relevant = [i for i, v in labels.items() if v > 0]
    if not relevant:
        return math.nan
    position = {item: r for r, item in enumerate(ranking)}
    ideal = sorted(relevant, key=lambda i: (-labels[i], position.get(i, len(ranking)), i))

    def rbo(run, target):
        depth = max(len(ranking), len(ideal))
        score = norm = 0.0
        for d in range(1, depth + 1):
            overlap = len(set(run[:d]) & set(target[:d]))
            score += p ** (d - 1) * overlap / d
            norm += p ** (d - 1)
        return score / norm

    value = rbo(list(ranking), ideal)
    return value / rbo(ideal, ideal) if normalize else value


REFERENCE["Compat"] = compat
