# The reductions of the metric kernel (rankereval.metrics._kernels) and their traits, in one place.
#
# One id per reduction; its Python name (a key of METRIC_IDS, what ``MetricInfo.kernel``
# names) is the id's name in lower case. The kernel dispatches on the id with one switch
# (``_kernels._reduce``); nothing depends on the ids' numeric order. The tie kernel
# (rankereval.metrics._ties_fast) cimports the same ids. Adding a reduction: a line here, its traits in
# ``metric_traits`` (when it has any), its branch of ``_kernels._reduce``, and its rule in
# ``_kernels._undefined`` when it is not "NaN without a relevant item".
cpdef enum MetricId:
    PRECISION
    RECALL
    F1
    HITRATE
    RECIPROCAL_RANK
    AP
    MEAN_RANKS
    FIRST_RELEVANT_RANK
    DCG
    SUCCESS
    AP_RELEVANT
    RPREC
    NUM_REL
    NUM_RET
    NUM_REL_RET
    IPREC
    BPREF
    JUDGED
    RBP_RESIDUAL
    ERR
    COVERAGE_ERROR
    LABEL_RANKING_LOSS
    N_METRIC_IDS  # the number of ids (not an id)

# Traits of a reduction (bit flags; what the kernel reads besides the ranks of the hits)
cdef enum:
    HIT_VALUES = 1      # the label value of each hit (graded labels): where each hit's label is
    FIRST_HIT = 2       # only the first hit: the lookup may stop there
    JUDGED_ITEMS = 4    # the ranks of the judged items of the row (labels with judgments)
    RANK_WEIGHTS = 8    # a weight per rank (DCG's discounts, RBP's weights): one for every rank
    TIE_EXPECTED = 16   # has an expected value over tied orders (rankereval.metrics._ties_fast)
    CATALOGUE = 32      # the size of the row's catalogue: the labels' items and every ranked id


cdef inline int metric_traits(int metric) noexcept nogil:
    """The traits of reduction ``metric`` (0: only the ranks of the hits, no tie form)."""
    if metric == PRECISION or metric == RECALL or metric == F1 or metric == HITRATE \
            or metric == AP or metric == MEAN_RANKS or metric == AP_RELEVANT or metric == RPREC \
            or metric == NUM_REL or metric == NUM_RET or metric == NUM_REL_RET:
        return TIE_EXPECTED
    elif metric == RECIPROCAL_RANK or metric == FIRST_RELEVANT_RANK or metric == SUCCESS:
        return FIRST_HIT | TIE_EXPECTED
    elif metric == DCG:
        return HIT_VALUES | RANK_WEIGHTS | TIE_EXPECTED
    elif metric == ERR:
        return HIT_VALUES
    elif metric == BPREF or metric == JUDGED:
        return JUDGED_ITEMS
    elif metric == RBP_RESIDUAL:
        return JUDGED_ITEMS | RANK_WEIGHTS
    elif metric == COVERAGE_ERROR or metric == LABEL_RANKING_LOSS:
        return CATALOGUE
    return 0
