"""The ``rankereval compare`` subcommand (hooked into ``rankereval.cli`` in two lines).

::

    rankereval compare QRELS RUN RUN [RUN ...] -m ndcg@10 map [--baseline NAME|INDEX]
        [--test t|permutation|bootstrap|tukey] [--correction holm|bonferroni|bh|none]
        [--alpha A] [--n-resamples B] [--seed S] [-f table|json|csv|markdown|latex]
        [--plot FILE.png|.pdf|.svg] [--plot-per-query FILE.png|.pdf|.svg]

Wiring, in ``rankereval/cli/_main.py``::

    from rankereval.cli._compare import add_compare_subparser, run_compare
    # build_parser(): next to "evaluate" (and "compare" in the subparsers' metavar)
    parser.subcommands["compare"] = add_compare_subparser(sub)
    # main(), before the evaluate/example branch
    if args.command == "compare": return run_compare(args, out, err)

It takes what it shares with the other subcommands (default metrics, the metric-name reader,
argument types, the error guard) from ``rankereval.cli._common``; ``rankereval.cli`` imports
this module, never the other way round.

``run_compare`` handles its own errors and returns the exit status, as ``evaluate`` does: 0
on success, 2 for usage errors (unknown metric, bad option), 1 when an input cannot be read
or is invalid (the message names the file and line); messages go to ``err``.
"""
import csv
import io
import os

from rankereval.cli._common import DEFAULT_METRICS, DEFAULT_SEED

__all__ = ["add_compare_subparser", "run_compare"]

FORMATS = ("table", "json", "csv", "markdown", "latex")


def add_compare_subparser(sub):
    """Add ``compare`` to an ``argparse`` subparsers object; returns the new parser."""
    from rankereval.cli._common import _confidence, _finite_float, _positive_int
    from rankereval._utils._choices import ALTERNATIVES, CORRECTIONS, NAN_HANDLING, QUERIES, TESTS

    p = sub.add_parser(
        "compare", help="compare TREC runs with paired significance tests",
        description="Score every run with every metric on the same queries (aligned by query "
                    "id), test each pair of runs (or each run against --baseline) and correct "
                    "the p-values for the comparisons of each metric.")
    p.add_argument("qrels", help="qrels file")
    p.add_argument("runs", nargs="+", metavar="RUN", help="run files (at least two)")
    p.add_argument("-m", "--metrics", nargs="+", action="extend", metavar="METRIC", default=None,
                   help=f"metrics, e.g. ndcg@10 map; -m may be repeated, as in 'rankereval evaluate' "
                        f"(default: {' '.join(DEFAULT_METRICS)})")
    p.add_argument("--names", nargs="+", metavar="NAME", default=None,
                   help="run names (default: the file names without extension)")
    p.add_argument("--baseline", metavar="NAME|INDEX", default=None,
                   help="compare every run with this one (a name, or a 0-based position); "
                        "default: all pairs")
    p.add_argument("--test", choices=TESTS, default="t",
                   help="t (paired t-test, default), permutation (randomization), bootstrap, or "
                        "tukey (randomized Tukey HSD over all runs)")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm",
                   help="multiple-testing correction over the comparisons of each metric (default: holm)")
    p.add_argument("--alpha", type=_confidence, default=0.05, help="significance level (default: 0.05)")
    p.add_argument("--alternative", choices=ALTERNATIVES, default="two-sided",
                   help="two-sided (default), greater (run > baseline) or less")
    p.add_argument("--n-resamples", type=_positive_int, default=10_000, metavar="B",
                   help="resamples of the resampling tests, > 1 (default: 10000)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help=f"random seed of the resampling tests and intervals (default: {DEFAULT_SEED}, so "
                        "that the output is the same from run to run; the output states the seed)")
    p.add_argument("--queries", choices=QUERIES, default="error",
                   help="runs ranking different queries: error (default), intersection, or "
                        "union (missing queries scored as empty rankings, as trec_eval -c)")
    p.add_argument("--nan-handling", choices=NAN_HANDLING, default="drop",
                   help="queries whose metric is undefined (e.g. no relevant document): drop "
                        "(default), zerofill (count as 0), onefill (count as 1), or propagate (that "
                        "metric's results are NaN)")
    p.add_argument("-l", "--relevance-level", type=_finite_float, default=1, metavar="LEVEL",
                   help="grade from which a document is relevant for binary metrics (default: 1)")
    p.add_argument("--intents", action="store_true",
                   help="read the qrels as diversity qrels (query subtopic docid grade, as ndeval), for "
                        "alpha_nDCG@k, ERR_IA@k, ... (implied when such a metric is asked for)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table",
                   help="output format (default: table)")
    p.add_argument("--plot", metavar="FILE", default=None,
                   help="also save a forest plot of the differences (.png, .pdf or .svg; needs matplotlib)")
    p.add_argument("--leaderboard", action="store_true",
                   help="show a leaderboard per metric instead of the pairs: each run's rank with "
                        "its confidence interval (at 1 - alpha), p_best, and the runs that cannot be "
                        "separated from the best; runs given the same name by --names are runs of "
                        "one system (e.g. seeds)")
    p.add_argument("--plot-per-query", metavar="FILE", default=None,
                   help="also save the per-query differences of the first metric and the first pair "
                        "(Comparison.plot('per-query'); .png, .pdf or .svg; needs matplotlib)")
    p.add_argument("--quiet", action="store_true", help="no notes on stderr")
    p.set_defaults(_compare_parser=p)
    return p


def _run_names(paths, names):
    from rankereval.cli._common import UsageError

    if names is not None:
        if len(names) != len(paths):
            raise UsageError(f"--names gives {len(names)} names for {len(paths)} runs")
        return list(names)   # a repeated name: several runs of one system
    out = []
    for path in paths:
        base = os.path.basename(path)
        if base.endswith(".gz"):
            base = base[:-3]
        stem = os.path.splitext(base)[0] or base
        name, k = stem, 2
        while name in out:
            name, k = f"{stem}-{k}", k + 1
        out.append(name)
    return out


def _baseline(text, names):
    from rankereval.cli._common import UsageError

    if text is None or text in names:
        return text
    try:
        i = int(text)
    except ValueError:
        raise UsageError(f"--baseline {text!r} is neither a run name ({', '.join(names)}) nor a position") from None
    if not 0 <= i < len(names):
        raise UsageError(f"--baseline {i} is not a position of the {len(names)} runs (0-based)")
    return names[i]


def _metrics(texts):
    """{column name: Metric}, parsed as ``rankereval evaluate`` parses them (trec_eval's
    names included)."""
    from argparse import Namespace

    from rankereval.cli._common import parse_metrics

    return parse_metrics(texts, Namespace(truncated=False, log_base="e", relevance_scaling="identity"))[0]


def render(cmp, fmt, seed=None):
    """The output text of a Comparison in format ``fmt`` (the table names the resampling
    ``seed`` when the test resamples)."""
    from rankereval._utils import _render
    from rankereval.stats._comparison import LONG_COLUMNS

    if fmt == "json":
        return cmp.to_json(indent=2) + "\n"
    if fmt == "markdown":
        return cmp.to_markdown()
    if fmt == "latex":
        return cmp.to_latex()
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(LONG_COLUMNS)
        for row in cmp.rows():
            w.writerow([_render.csv_number(v) if isinstance(v, float) else v for v in row.values()])
        return buf.getvalue()
    # table: the runs x metrics summary, then one line per comparison
    summary = repr(cmp).split("\n", 1)[1]
    conf = f"{100 * (1 - cmp.alpha):g}% CI"
    header = ["metric", "comparison", "diff", conf, "p", "p corr.", "sig.", "W/T/L"]
    rows = []
    for r in cmp.rows():
        rows.append([r["metric"], f"{r['run']} - {r['baseline']}", _render.fmt(r["diff"]),
                     f"[{_render.fmt(r['ci_low'])}, {_render.fmt(r['ci_high'])}]", f"{r['p_value']:.4g}",
                     f"{r['p_corrected']:.4g}", "*" if r["significant"] else "",
                     f"{r['wins']}/{r['ties']}/{r['losses']}"])
    note = "" if cmp.test == "t" or seed is None else f"\nresampling seed: {seed} (--seed)"
    return summary + "\n\n" + _render.table(header, rows) + "\n" + cmp.caption() + note + "\n"


def render_leaderboards(cmp, fmt, seed):
    """The leaderboard of every metric of ``cmp`` in format ``fmt``."""
    import json

    from rankereval._utils import _render
    from rankereval.stats._leaderboard import COLUMNS

    boards = [cmp.leaderboard(m, random_state=seed) for m in cmp.metrics]
    if fmt == "json":
        return json.dumps({"leaderboards": [json.loads(b.to_json()) for b in boards]}, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["metric", *COLUMNS])
        for b in boards:
            for row in b.rows():
                w.writerow([b.metric, *(_render.csv_number(v) if isinstance(v, float) else v
                                        for v in row.values())])
        return buf.getvalue()
    if fmt == "markdown":
        return "\n".join(b.to_markdown() for b in boards)
    if fmt == "latex":
        return "\n".join(b.to_latex() for b in boards)
    return "\n".join(repr(b) + "\n" + b.caption() + "\n" for b in boards)


def _compare(args, out, err):
    from rankereval.cli._common import UsageError
    from rankereval.stats._compare_runs import compare
    from rankereval.io import read_trec

    if len(args.runs) < 2:
        raise UsageError("give at least two run files to compare")
    names = _run_names(args.runs, args.names)
    baseline = _baseline(args.baseline, names)
    metrics = _metrics(args.metrics or DEFAULT_METRICS)
    intents = args.intents or any(m.info.labels == "intents" for m in metrics.values())
    datas = {}
    for name, path in zip(names, args.runs):
        data = read_trec(args.qrels, path, relevance_level=args.relevance_level, missing="empty", intents=intents)
        if not args.quiet:
            for note in data.report.notes():
                if "not in the run" not in note:        # reported below, after alignment
                    print(f"rankereval: note: {name}: {note}", file=err)
        datas.setdefault(name, []).append(data)
    if len(datas) < 2:
        raise UsageError(f"--names gives every run the name {names[0]!r}: give at least two systems")
    # a name given to several runs: the runs of one system (seeds, folds)
    datas = {name: runs[0] if len(runs) == 1 else runs for name, runs in datas.items()}
    cmp = compare(None, datas, metrics, baseline=baseline, test=args.test, correction=args.correction,
                  alpha=args.alpha, n_resamples=args.n_resamples, alternative=args.alternative,
                  nan_handling=args.nan_handling, queries=args.queries, random_state=args.seed)
    if not args.quiet:
        rep = cmp.report
        for name, ids in rep["missing"].items():
            if ids:
                what = "scored as empty rankings" if args.queries == "union" else "not compared"
                print(f"rankereval: note: {name} does not rank {len(ids)} of the {rep['n_union']} "
                      f"queries ranked by some run ({what})", file=err)
        if rep["n_qrels_not_ranked"]:
            print(f"rankereval: note: {rep['n_qrels_not_ranked']} judged queries are ranked by no "
                  "run and not compared (as trec_eval)", file=err)
    if args.leaderboard:
        out.write(render_leaderboards(cmp, args.format, args.seed))
    else:
        out.write(render(cmp, args.format, args.seed))
    for kind, path in (("forest", args.plot), ("per-query", args.plot_per_query)):
        if path:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt

            fig = cmp.plot(kind)
            fig.savefig(path)  # the figures are laid out to fit (constrained layout)
            plt.close(fig)
    return 0


def run_compare(args, out, err):
    """Run ``rankereval compare`` for parsed ``args``; returns the exit status (errors are
    handled as ``rankereval evaluate`` handles them)."""
    from rankereval.cli._common import guarded

    return guarded(lambda: _compare(args, out, err), args._compare_parser, "compare", err)
