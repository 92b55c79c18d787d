"""Statistics: bootstrap intervals, exact sums, paired tests and the comparison of systems.

Compare systems: paired significance tests, multiple-testing corrections, reports and plots.

:func:`compare` scores every run with every metric on the same queries, tests each pair of
runs (or each run against a baseline) on the per-query differences, corrects the p-values
for the number of comparisons of each metric, and returns a :class:`Comparison` that renders
as a table (pandas, Markdown, LaTeX, JSON) or a plot.

>>> from rankereval import BinaryLabels, Rankings, AP, ReciprocalRank
>>> from rankereval import compare
>>> y_true = BinaryLabels.from_positive_indices([[0, 1], [2], [3, 4], [5], [6, 7], [8]] * 5)
>>> runs = {
...     "bm25": Rankings.from_ranked_indices([[9, 0, 1], [2, 9], [9, 8, 3], [5], [6, 9], [9, 8]] * 5),
...     "dense": Rankings.from_ranked_indices([[0, 1, 9], [2, 9], [3, 4, 9], [5], [6, 7], [8]] * 5),
... }
>>> cmp = compare(y_true, runs, {"AP@3": AP(3), "RR@3": ReciprocalRank(3)}, baseline="bm25")
>>> cmp
Comparison(test='t', correction='holm', alpha=0.05, alternative='two-sided', baseline='bm25', 2 runs, 2 metrics, 30 queries)
    run        AP@3      RR@3
a   bm25     0.6250    0.7222
b   dense  1.0000^a  1.0000^a
^x: significantly better than run x; 2 of 2 comparisons significant
>>> cmp.summary()[["metric", "run", "baseline", "diff", "p_value", "significant"]]
  metric    run baseline      diff       p_value  significant
0   AP@3  dense     bm25  0.375000  1.675256e-07         True
1   RR@3  dense     bm25  0.277778  1.163013e-05         True

Statistics (see the "Comparing systems" guide for which test to choose and why):

* ``test="t"``: paired t-test; p-values equal :func:`scipy.stats.ttest_rel`, intervals are
  the t intervals of the mean difference.
* ``test="permutation"``: paired randomization test (random sign flips of the per-query
  differences), ``p = (count + 1) / (B + 1)``.
* ``test="bootstrap"``: paired bootstrap test of the mean difference (bootstrap-t: the t
  statistics of resamples of the centred differences are the null distribution), percentile
  interval.
* ``test="tukey"``: randomized Tukey HSD over all runs at once (Carterette 2012): the null
  distribution of the *largest* difference between run means when every query's scores are
  permuted among the runs; its p-values are family-wise over all pairs of runs.

Resampling runs in typed kernels (``rankereval.stats._compare``) that share the random streams of
the bootstrap (one 64-bit key per resample): memory O(n + B), every metric and pair of a call
in one pass over the per-query differences per resample, and the same result for any number
of threads.

Layout
------

The layer above the metrics' per-query scores: ``_resampling`` (the bootstrap engine, public as
:mod:`rankereval.bootstrap`) with its kernel ``_bootstrap.pyx``; ``_engine`` (the one way from
per-query scores to means and intervals, options and NaN policy included); ``_exact``
(correctly rounded sums); ``_random`` (the seed derivation); ``_paired_sums`` (the paired tests
from mergeable sums, for Spark); ``_seeds`` (several runs per system); ``_leaderboard``; and
:func:`compare`, split by job: ``_checks`` (arguments), ``_corrections`` (multiple testing),
``_paired_tests`` (test statistics) with the kernel ``_compare.pyx``, ``_alignment`` (metrics,
runs and TREC files aligned by query id), ``_outcomes`` (NaN policy, sums, wins and losses),
``_compare_runs`` (:func:`compare` itself) and ``_comparison`` (the :class:`Comparison` result
and its renderings: tables, Markdown, LaTeX, JSON, HTML and plots).
"""
from rankereval._utils._choices import ALTERNATIVES, CORRECTIONS, TESTS
from rankereval.stats._comparison import Comparison
from rankereval.stats._corrections import adjust_pvalues
from rankereval.stats._compare_runs import compare
from rankereval.stats._leaderboard import Leaderboard

__all__ = ["compare", "Comparison", "Leaderboard", "adjust_pvalues", "TESTS", "CORRECTIONS", "ALTERNATIVES"]
