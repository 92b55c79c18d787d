"""The Python side of the metric kernel's ids (``_metric_ids.pxd``): the names, derived from
the one enum, and the traits of each id."""
from rankereval.metrics._metric_ids cimport (CATALOGUE, FIRST_HIT, HIT_VALUES, JUDGED_ITEMS, N_METRIC_IDS, RANK_WEIGHTS,
                                     TIE_EXPECTED, DCG, MetricId, metric_traits)

#: reductions known under a second name: rank-biased precision is DCG's reduction with the
#: discounts (1 - p) p^(i - 1)
_SAME_AS = {"rbp": DCG}

#: {name: id} of every reduction (the id's name in lower case), as ``MetricInfo.kernel`` names it
METRIC_IDS = {**{m.name.lower(): int(m) for m in MetricId if int(m) != N_METRIC_IDS},
              **{name: int(i) for name, i in _SAME_AS.items()}}

#: {id: trait flags} (``metric_traits``); the flags by name below
TRAITS = {i: metric_traits(i) for i in range(N_METRIC_IDS)}
TRAIT_FLAGS = {"hit_values": HIT_VALUES, "first_hit": FIRST_HIT, "judged_items": JUDGED_ITEMS,
               "rank_weights": RANK_WEIGHTS, "tie_expected": TIE_EXPECTED, "catalogue": CATALOGUE}


def ids_with(str trait):
    """The ids that have ``trait`` (a key of TRAIT_FLAGS)."""
    flag = TRAIT_FLAGS[trait]
    return frozenset(i for i, t in TRAITS.items() if t & flag)
