"""Command line: ``rankereval evaluate QRELS RUN -m ndcg@10 ...`` (also ``python -m rankereval``).

Subcommands
-----------
``evaluate QRELS RUN``
    Read a TREC qrels and run file (plain or gzip) and print the mean of each metric, with
    ``--ci`` a bootstrap confidence interval, with ``--per-query`` one row per query.
``compare QRELS RUN RUN [RUN ...]``
    Paired significance tests between runs, corrected for multiple comparisons
    (:func:`rankereval.compare`); tables, JSON, CSV, Markdown, LaTeX and a plot.
``example``
    The same on the small synthetic TREC pair shipped with the package (see
    ``rankereval/_sample/make_sample.py``): real output right after installing.
``metrics``
    List the metric names and their aliases.

Metric names follow the one grammar of the package (:func:`rankereval.metrics.from_name`):
case-insensitive, ``name@k`` sets the cutoff, ``rankereval metrics`` lists names and aliases.
Names spelt as trec_eval's (``P_10``, ``P.5,10``, ``ndcg_cut_10``, ``official``) are read by
trec_eval's table (:mod:`rankereval.metrics._trec_names`) with trec_eval's definitions; with
``-f trec``, ``-q``, ``-c``, ``-l`` and ``-M`` a trec_eval command line carries over. As in
trec_eval, a query without relevant documents scores 0 (``--nan-handling zerofill``).
The command line only parses arguments, calls the library and renders its results.

Exit status: 0 on success, 2 for usage errors (unknown metric, bad option), 1 when an input
cannot be read or is invalid (the message names the file and line); messages go to stderr.

Examples
--------
>>> from rankereval.cli import main
>>> main(["metrics"])  # doctest: +ELLIPSIS
metric names (case-insensitive; name@k sets the cutoff k; [options] set parameters):
...
0

Modules: ``_main`` parses the arguments and runs ``evaluate``, ``example`` and ``metrics``;
``_compare`` and ``_agreement`` are the ``compare`` and ``agreement`` subcommands;
``_common`` holds what they share. The command line only parses arguments, calls the
library and renders its results.
"""
from rankereval.cli._main import main

__all__ = ["main"]
