"""The values of the library's string options, in a module that imports nothing.

The modules that take these options import them from here, and so does the command line,
whose parser (``rankereval --help``, ``rankereval evaluate --help``) shows them without
importing NumPy or the compiled kernels.
"""
#: nan_handling of the metrics, evaluate and compare (rankereval._validation)
NAN_HANDLING = ("propagate", "drop", "zerofill", "onefill")
#: the value an undefined score counts as under the policies that fill it (rankereval.stats._engine):
#: 'onefill' is torchmetrics' empty_target_action='pos', 'zerofill' its 'neg' and trec_eval's 0
NAN_FILLS = {"zerofill": 0.0, "onefill": 1.0}
#: bootstrap interval methods (rankereval.bootstrap)
CI_METHODS = ("percentile", "bca")
#: bootstrap resampling schemes (rankereval.bootstrap)
RESAMPLINGS = ("multinomial", "poisson")
#: the TREC readers' options (rankereval.io)
TIE_BREAKS = ("trec_eval", "trec_eval9", "docid", "input")
MISSING = ("drop", "empty", "error")
EXTRA = ("drop", "keep", "error")
ORDER_BY = ("score", "rank")
#: rankereval.compare's options
TESTS = ("t", "permutation", "bootstrap", "tukey")
CORRECTIONS = ("holm", "bonferroni", "bh", "none")
ALTERNATIVES = ("two-sided", "greater", "less")
QUERIES = ("error", "intersection", "union")
#: DCG and NDCG: the gain of a grade (its position is the kernels' code) and the logarithm's base
DCG_GAINS = ("identity", "power")
DCG_LOG_BASES = ("e", "2")
#: the floor of the scores of a geometric mean (GMAP): log(max(score, floor)) (rankereval.stats._engine)
GEOMETRIC_FLOOR = 1e-5
