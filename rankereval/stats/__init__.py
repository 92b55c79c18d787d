"""Statistics: bootstrap intervals, exact sums, paired tests and the comparison of systems.

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
