"""The parser of the command line and the ``evaluate``, ``example`` and ``metrics``
subcommands; :mod:`rankereval.cli` describes them."""
import argparse
import json
import math
import os
import sys

from rankereval._utils._choices import (CI_METHODS, DCG_GAINS, DCG_LOG_BASES, EXTRA, MISSING, NAN_HANDLING, ORDER_BY,
                                TIE_BREAKS)
from rankereval.cli._common import (DEFAULT_METRICS, DEFAULT_SEED, UsageError, _confidence, _count, _finite_float,  # noqa: F401
                                    _log_base, _positive_int, guarded, parse_metrics)

__all__ = ["main", "DEFAULT_METRICS"]


class _Renamed(argparse.Action):
    """A flag with a deprecated second spelling: a note on stderr when the old one is used."""

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string != self.option_strings[0]:
            print(f"rankereval: note: {option_string} is deprecated; use {self.option_strings[0]}",
                  file=sys.stderr)
        setattr(namespace, self.dest, values)


def _add_eval_options(p, default_seed=DEFAULT_SEED):
    p.add_argument("-m", "--metrics", nargs="+", action="extend", metavar="METRIC", default=None,
                   help="metrics: our names (ndcg@10 recall@100 map) or trec_eval's (P_10, P.5,10,20, "
                        "ndcg_cut_10, map_cut_100, official, all_trec); -m may be repeated, names may be "
                        f"separated by commas (default: {' '.join(DEFAULT_METRICS)}; see 'rankereval metrics')")
    p.add_argument("-M", "--depth", type=_count, default=None, metavar="N",
                   help="evaluate only the first N documents of each ranking (trec_eval -M)")
    p.add_argument("-l", "--relevance-level", type=_finite_float, default=1, metavar="LEVEL",
                   help="grade from which a document is relevant for binary metrics (default: 1, as trec_eval -l)")
    p.add_argument("--nan-handling", choices=NAN_HANDLING, default="zerofill",
                   help="queries whose metric is undefined (NaN, e.g. no relevant document): count "
                        "as 0 (zerofill; default, as trec_eval), as 1 (onefill; torchmetrics' "
                        "empty_target_action='pos'), drop, or propagate (the mean is NaN; the Python "
                        "API's default)")
    p.add_argument("--truncated", action="store_true",
                   help="precision/recall/f1/hitrate: clip k at the ranking length (precision) or "
                        "the number of relevant documents (recall)")
    p.add_argument("--log-base", type=_log_base, default="e", metavar="{e,2,NUMBER}",
                   help="logarithm of the DCG discount: e (default), 2 (trec_eval) or any number > 1 "
                        "(scikit-learn's log_base); NDCG does not depend on it")
    p.add_argument("--relevance-scaling", "--gain", choices=DCG_GAINS, default="identity",
                   action=_Renamed,
                   help="DCG/NDCG gain of a grade g: g (identity, default, as trec_eval) or 2**g - 1 "
                        "(power); relevance_scaling= of DCG/NDCG (--gain is its deprecated spelling)")
    p.add_argument("--tie-break", choices=TIE_BREAKS, default="trec_eval",
                   help="order of equal scores: trec_eval (default: scores as doubles, larger docid first, "
                        "as trec_eval 10), trec_eval9 (scores as 32-bit floats first, as trec_eval 9 and "
                        "pytrec_eval), docid (smaller docid first), input (file order)")
    p.add_argument("--ties", choices=("expected", "optimistic", "pessimistic"), default=None,
                   help="score documents with equal scores over every order of each tied group: "
                        "expected (the mean over the orders, exact), optimistic (the best order) or "
                        "pessimistic (the worst); default: the --tie-break order only")
    p.add_argument("--intents", action="store_true",
                   help="read the qrels as diversity qrels (query subtopic docid grade, as ndeval): the "
                        "second field is the intent, for alpha_nDCG@k, ERR_IA@k, ...; other metrics read "
                        "each document's largest grade (implied when such a metric is asked for)")
    p.add_argument("--order-by", choices=ORDER_BY, default="score",
                   help="rank documents by descending score (default, as trec_eval) or ascending rank column")
    p.add_argument("--missing", choices=MISSING, default="drop",
                   help="judged queries without a ranking: drop (default, as trec_eval), evaluate with an "
                        "empty ranking (as trec_eval -c), or fail")
    p.add_argument("-c", dest="missing", action="store_const", const="empty",
                   help="same as --missing empty (trec_eval -c)")
    p.add_argument("--extra", choices=EXTRA, default="drop",
                   help="ranked queries without judgements: drop (default, as trec_eval), keep (metrics "
                        "NaN), or fail")
    p.add_argument("--ci", action="store_true", help="add a bootstrap confidence interval of each mean")
    p.add_argument("--n-resamples", "--n-bootstrap", type=_positive_int, default=1000, metavar="N",
                   action=_Renamed,
                   help="bootstrap resamples, > 1 (default: 1000; as 'rankereval compare --n-resamples'; "
                        "--n-bootstrap is its deprecated spelling)")
    p.add_argument("--confidence", type=_confidence, default=0.95, metavar="LEVEL",
                   help="confidence level of the interval (default: 0.95)")
    p.add_argument("--ci-method", choices=CI_METHODS, default="percentile",
                   help="bootstrap interval: percentile (default) or bca (bias-corrected and accelerated)")
    p.add_argument("--seed", type=int, default=default_seed,
                   help=f"random seed of the bootstrap (default: {default_seed}, so that intervals are "
                        "the same from run to run; the output states the seed)")
    p.add_argument("--n-items", type=_count, default=None, metavar="N",
                   help="catalogue size of coverage@k, gini@k and entropy@k[normalize] (default: the "
                        "documents that occur in the qrels or the run)")
    p.add_argument("-q", "--per-query", action="store_true", help="one row per query id")
    p.add_argument("-f", "--format", choices=("table", "json", "csv", "trec"), default="table",
                   help="output format (default: table; trec: trec_eval's 'measure<TAB>query<TAB>value' "
                        "lines, query 'all' for the summary)")
    p.add_argument("--quiet", action="store_true", help="no notes on stderr")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def build_parser():
    from rankereval._version import __version__

    parser = argparse.ArgumentParser(
        prog="rankereval",
        description="Evaluate rankings (TREC runs) against relevance judgements (TREC qrels).",
        epilog="Run 'rankereval example' to see it work on the bundled sample.",
    )
    parser.add_argument("--version", action="version", version=f"rankereval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{evaluate,compare,agreement,example,metrics}")
    sub.required = True
    ev = sub.add_parser("evaluate", help="evaluate a TREC run against TREC qrels",
                        description="Evaluate a TREC run (query Q0 docid rank score tag) against TREC "
                                    "qrels (query iteration docid relevance); plain or gzip files. "
                                    "Options may come before or after the files.")
    ev.add_argument("qrels", nargs="?", help="qrels file ('-': standard input)")
    ev.add_argument("run", nargs="?", help="run file ('-': standard input)")
    _add_eval_options(ev)
    ex = sub.add_parser("example", help="evaluate the sample qrels/run shipped with rankereval",
                        description="Evaluate the small synthetic TREC pair shipped with rankereval "
                                    "(made by rankereval/_sample/make_sample.py).")
    _add_eval_options(ex)
    ls = sub.add_parser("metrics", help="list metric names and aliases")
    from rankereval.cli._compare import add_compare_subparser

    from rankereval.cli._agreement import add_agreement_subparser

    parser.subcommands = {"evaluate": ev, "compare": add_compare_subparser(sub), "example": ex, "metrics": ls,
                          "agreement": add_agreement_subparser(sub)}
    return parser


# ----------------------------------------------------------------------------------------
# evaluation and output
# ----------------------------------------------------------------------------------------

def evaluate(data, metrics, args, err):
    """The :class:`~rankereval.Evaluation` of ``metrics`` on TrecData ``data`` (each metric
    scored once); the library's warning about undefined values becomes a note on stderr."""
    import warnings

    from rankereval.evaluation._evaluate import evaluate as rk_evaluate
    from rankereval.exceptions import UndefinedMetricWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UndefinedMetricWarning)
        ev = rk_evaluate(data, None, metrics, relevance_level=args.relevance_level,
                         nan_handling=args.nan_handling, conf_interval=args.ci,
                         n_resamples=args.n_resamples, confidence=args.confidence,
                         random_state=args.seed, method=args.ci_method, ties=args.ties)
    for w in caught:
        if not issubclass(w.category, UndefinedMetricWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        elif not args.quiet:
            for line in str(w.message).splitlines():
                print(f"rankereval: note: {line}", file=err)
    report = ev.tie_report
    if report is not None and not args.quiet:
        print(f"rankereval: note: {report.tied_positions} of {report.positions} ranked documents share their "
              f"score with another; scored with --ties {args.ties}", file=err)
        for name, (lo, hi) in report.ranges.items():
            if lo is not None:
                print(f"rankereval: note: {name}: {ev.means[name]:.4f}, between {lo:.4f} (pessimistic) and "
                      f"{hi:.4f} (optimistic)", file=err)
    return ev


def render(ev, args, trec=None, system=None):
    """The output text of Evaluation ``ev`` (None when only system-level metrics were
    asked for) for ``args.format`` (table, json, csv or trec), with the values of the
    system-level metrics ``system`` ({name: float}: one value for all queries, so no
    interval and no per-query value) after the per-query metrics; ``trec`` maps the columns
    named the trec_eval way to their TrecMeasure."""
    from rankereval._utils._render import csv_number, fmt, json_number, table

    system = system or {}
    text = _render_evaluation(ev, args, trec) if ev is not None else ""
    if not system:
        return text
    n = len(ev.query_ids) if ev is not None else args.n_queries
    if args.format == "trec":
        return text + "".join(f"{name:<22}\tall\t{value:6.4f}\n" for name, value in system.items())
    if args.format == "json":
        obj = json.loads(text) if text else {}
        for name, value in system.items():
            obj[name] = {"mean": json_number(value), "n_queries": n, "system_level": True}
        return json.dumps(obj, indent=2, allow_nan=False) + "\n"
    if args.format == "csv":
        rows = [[name, csv_number(v), n] for name, v in system.items()]
        return (text + ("\n" if text else "") + "system_metric,value,n_queries\n"
                + "".join(",".join(map(str, r)) + "\n" for r in rows))
    rows = [[name, fmt(v), str(n)] for name, v in system.items()]
    return text + ("\n" if text else "") + table(["system metric", "value", "queries"], rows)


def _treated(nan_handling):
    return {"zerofill": "scored 0 and counted in the mean (--nan-handling zerofill, as trec_eval)",
            "onefill": "scored 1 and counted in the mean (--nan-handling onefill, as torchmetrics' "
                       "empty_target_action='pos')",
            "drop": "left out of the mean (--nan-handling drop)",
            "propagate": "make the mean NaN (--nan-handling propagate)"}[nan_handling]


def _notes(ev):
    """Lines under a table: undefined queries per metric and what was done with them, and
    footnotes on names that differ from trec_eval's (or ranx / ir_measures')."""
    from rankereval.metrics._trec_names import name_differences

    lines = []
    undefined = {n: ev.n_undefined[n] for n in ev.names if ev.n_undefined[n]}
    if undefined:
        # each metric's own reason (MetricInfo.undefined): HitRate's is not "no relevant document"
        reason = {n: m.info.undefined or "undefined" for n, m in zip(ev.names, ev.metrics) if n in undefined}
        counts = set(undefined.values())
        if len(counts) == 1 and len(undefined) == len(ev.names):
            n = counts.pop()
            total = len(ev.query_ids)
            head = f"{n} of {total} {'query' if total == 1 else 'queries'} undefined for every metric"
        else:
            head = "undefined queries: " + ", ".join(f"{n} {c}" for n, c in undefined.items())
        if len(set(reason.values())) == 1:
            why = next(iter(reason.values()))
        else:
            why = "; ".join(f"{n}: {r}" for n, r in reason.items())
        lines.append(f"{head} ({why}): {_treated(ev.nan_handling)}")
    marks = []
    for name, metric in zip(ev.names, ev.metrics):
        why = name_differences(metric, name)
        if why is not None:
            marks.append(f"* {why}")
    return lines + marks


def _summary(ev, name, trec):
    """The summary of column ``name``: trec_eval's aggregate for a trec_eval measure (mean,
    sum or geometric mean, after the NaN handling), else the mean."""
    import numpy as np

    from rankereval.stats._engine import fill_undefined

    measure = trec.get(name)
    if measure is None or measure.aggregate.__name__ == "_mean":
        return ev.means[name]
    values = ev[name]
    values = fill_undefined(values, ev.nan_handling)
    if ev.nan_handling == "drop":
        values = values[~np.isnan(values)]
    return measure.aggregate(values)


def _trec_value(value, integer):
    if integer and math.isfinite(value):
        return str(int(round(value)))
    return f"{value:6.4f}"


def _trec_column(values, integer, nan_handling):
    """The per-query texts of one column of trec_eval's output (Python floats formatted
    column by column, not NumPy scalars cell by cell: 2,000 queries x 30 measures took
    0.17 s that way); None for a query left out (an undefined value, ``drop``)."""
    import numpy as np

    from rankereval.stats._engine import fill_undefined

    undefined = np.isnan(values)
    if nan_handling != "propagate":  # drop: 0 in the texts, then left out
        values = np.where(undefined, 0.0, values) if nan_handling == "drop" else fill_undefined(values, nan_handling)
    texts = [_trec_value(v, integer) for v in values.tolist()]
    if nan_handling == "drop":
        texts = [None if u else t for t, u in zip(texts, undefined.tolist())]
    return texts


def _trec_order(names, trec):
    """The columns ``names`` with trec_eval's lines that are not measures (runid, num_q,
    relstring: in ``trec`` with no column) put where trec_eval prints them: before the
    first column that follows them in ``trec``'s order."""
    specials = [n for n, m in trec.items() if m.special]
    if not specials:
        return list(names)
    position = {n: i for i, n in enumerate(trec)}
    out, pending = [], list(specials)
    for n in names:
        while pending and n in position and position[pending[0]] < position[n]:
            out.append(pending.pop(0))
        out.append(n)
    return out + pending


def _render_evaluation(ev, args, trec=None):
    """The output text of Evaluation ``ev`` for ``args.format`` (table, json, csv or trec);
    ``trec`` maps the columns named the trec_eval way to their TrecMeasure."""
    from rankereval._utils._render import csv_number, fmt, json_number, table

    trec = trec or {}
    names = ev.names
    qids = [str(q) for q in ev.query_ids]
    col = {n: ev[n] for n in names}
    ci = ev.conf_intervals
    means = {n: _summary(ev, n, trec) for n in names}
    if args.format == "trec":
        lines = []
        special = getattr(args, "trec_lines", {})
        order = _trec_order(names, trec)
        integer = {n: trec[n].integer if n in trec else False for n in order}
        if args.per_query:  # undefined values as the NaN handling says: 0 (trec_eval), left out, or nan
            # (gm_map: a summary only in trec_eval)
            shown = [n for n in order if not (n in trec and not trec[n].per_query)]
            texts = [special[n] if n in special else _trec_column(col[n], integer[n], ev.nan_handling)
                     for n in shown]
            heads = [f"{n:<22}\t" for n in shown]
            for i, q in enumerate(qids):
                lines.extend(f"{head}{q}\t{column[i]}" for head, column in zip(heads, texts) if column[i] is not None)
        for n in order:
            kind = trec[n].special if n in trec else ""
            if kind == "runid" and special.get(n) is not None:
                lines.append(f"{n:<22}\tall\t{special[n]}")
            elif kind == "num_q":
                lines.append(f"{n:<22}\tall\t{len(qids)}")
            elif not kind:
                lines.append(f"{n:<22}\tall\t{_trec_value(means[n], integer[n])}")
        return "\n".join(lines) + "\n"
    if args.format == "json":
        obj = {}
        for name in names:
            entry = {"mean": json_number(means[name])}
            if ci is not None:
                entry["ci"] = [json_number(v) for v in ci[name]]
            entry["n_queries"] = ev.n_used[name]
            entry["n_nan"] = ev.n_undefined[name]
            if args.per_query:
                entry["per_query"] = {q: json_number(v) for q, v in zip(qids, col[name])}
            obj[name] = entry
        return json.dumps(obj, indent=2, allow_nan=False) + "\n"
    if args.format == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        if args.per_query:
            w.writerow(["query"] + names)
            for i, q in enumerate(qids):
                w.writerow([q] + [csv_number(col[n][i]) for n in names])
        else:
            w.writerow(["metric", "mean"] + (["ci_lower", "ci_upper"] if ci is not None else []) + ["n_queries", "n_nan"])
            for name in names:
                bounds = [csv_number(v) for v in ci[name]] if ci is not None else []
                w.writerow([name, csv_number(means[name])] + bounds + [ev.n_used[name], ev.n_undefined[name]])
        return buf.getvalue()
    from rankereval.metrics._trec_names import name_differences

    shown = {n: n + ("*" if name_differences(m) is not None else "") for n, m in zip(names, ev.metrics)}
    notes = _notes(ev)
    if ci is not None:
        notes.append(f"bootstrap intervals: {args.n_resamples} resamples ({args.ci_method}), seed "
                     f"{args.seed} (--seed)")
    foot_text = "".join(line + "\n" for line in notes)
    ci_head = f"{args.confidence * 100:g}% CI"
    if args.per_query:
        header = ["query"] + [shown[n] for n in names]
        rows = [[q] + [fmt(col[n][i]) for n in names] for i, q in enumerate(qids)]
        foot = [["mean"] + [fmt(means[n]) for n in names]]
        if ci is not None:
            foot.append([ci_head] + [f"[{fmt(ci[n][0])}, {fmt(ci[n][1])}]" for n in names])
        return table(header, rows, foot) + foot_text
    header = ["metric", "mean"] + ([ci_head] if ci is not None else []) + ["queries"]
    rows = []
    for name in names:
        row = [shown[name], fmt(means[name])]
        if ci is not None:
            row.append(f"[{fmt(ci[name][0])}, {fmt(ci[name][1])}]")
        row.append(str(ev.n_used[name]))
        rows.append(row)
    return table(header, rows) + foot_text


def _metrics_listing():
    from rankereval.metrics._base import registered as _registered
    from rankereval.metrics._trec_names import listing

    lines = ["metric names (case-insensitive; name@k sets the cutoff k; [options] set parameters):", ""]
    for cls in _registered(everything=True):
        info = cls.info
        form = info.name_form()
        lines.append(f"  {form:<22} {info.summary}")
        if info.aliases:
            lines.append(f"  {'':<22} aliases: {', '.join(info.aliases)}")
        needs = [p for p in info.inputs if p != "n_items"]
        if needs:
            lines.append(f"  {'':<22} needs {', '.join(needs)}: Python API only (rankereval.{cls.__name__})")
        tokens = info.option_tokens(cls._param_space(cutoffs=(1,))[0])
        if tokens:
            if info.inputs:  # data a name cannot carry: the example shows the form
                example = f"{form.replace('[@k]', '@10').replace('@k', '@10')}[{tokens[0]}]"
            else:
                example = cls(**dict(cls._param_space(cutoffs=(10,))[-1])).name
            lines.append(f"  {'':<22} options: {', '.join(tokens)} (e.g. {example})")
    lines += [""] + listing()
    from rankereval.metrics._ir_names import table_rows

    lines += ["", "ir_measures measure names (case-sensitive; Name(param=value)@k; options in rankereval's "
              "grammar: [rel=x], [judged_only]):", ""]
    lines += [f"  {names:<22} = {target}" + (f" (parameters: {params})" if params != "-" else "")
              for names, params, target, _ in table_rows() if not target.startswith("not supported")]
    lines.append("  not supported: " + ", ".join(
        names.split(" ")[0] for names, _, target, _ in table_rows() if target.startswith("not supported")))
    return "\n".join(lines) + "\n"


def _run(args, qrels, run, out, err):
    from rankereval.io._trec import read_trec_for_printing as read_trec
    from rankereval.metrics import SystemMetric

    # UsageError before any file is read
    texts = args.metrics or DEFAULT_METRICS
    asked, _ = parse_metrics(texts, args)
    needs = [name for name, m in asked.items() if m.info.labels == "intents"]
    if needs and not args.intents and not args.quiet:
        print(f"rankereval: note: {needs[0]} reads judgements per intent: the qrels' second field is read as "
              "the intent (subtopic), as ndeval reads it (--intents)", file=err)
    if qrels == "-" and run == "-":
        raise UsageError("only one of the two files can be standard input ('-')")
    qrels, run = (sys.stdin.buffer if path == "-" else path for path in (qrels, run))
    data = read_trec(qrels, run, relevance_level=args.relevance_level, tie_break=args.tie_break,
                     order_by=args.order_by, missing=args.missing, extra=args.extra,
                     progress=False if args.no_progress else None, depth=args.depth,
                     ties="break" if args.ties is None else "keep", intents=bool(args.intents or needs))
    if not args.quiet:
        for note in data.report.notes():
            print(f"rankereval: note: {note}", file=err)
    n_items = args.n_items if args.n_items is not None else len(data.doc_ids)
    metrics, trec = parse_metrics(texts, args, n_items=n_items)
    system = {name: m.compute(data.rankings) for name, m in metrics.items() if isinstance(m, SystemMetric)}
    ranking = {name: m for name, m in metrics.items() if not isinstance(m, SystemMetric)}
    args.n_queries = data.rankings.n_rows
    args.trec_lines = _trec_lines(trec, data, run)
    ev = evaluate(data, ranking, args, err) if ranking else None
    out.write(render(ev, args, trec, system))
    return 0


def _trec_lines(trec, data, run):
    """The values of trec_eval's lines that are not measures (TrecMeasure.special), by
    column: runid's tag (None when the run came from standard input), relstring's string
    per query; num_q is the number of queries, which the output knows."""
    out = {}
    for column, m in trec.items():
        if m.special == "runid":
            out[column] = _run_tag(run)
        elif m.special == "relstring":
            from rankereval.metrics._profile import relevance_strings

            out[column] = relevance_strings(data.numeric_labels, data.rankings, m.param)
    return out


def _run_tag(run):
    """The tag of a run file's last line, as trec_eval prints it (runid); None for a stream."""
    if not isinstance(run, (str, os.PathLike)):
        return None
    import gzip

    with open(run, "rb") as fh:
        gz = fh.read(2) == b"\x1f\x8b"
    if gz:
        tag = None
        with gzip.open(run, "rb") as fh:
            for line in fh:
                tag = _line_tag(line, tag)
        return tag
    with open(run, "rb") as fh:  # the last lines only
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        block = 1 << 16
        while True:
            start = max(0, size - block)
            fh.seek(start)
            lines = fh.read().splitlines()[1 if start else 0:]
            tag = None
            for line in lines:
                tag = _line_tag(line, tag)
            if tag is not None or start == 0:
                return tag
            block *= 4


def _line_tag(line, tag):
    fields = line.split()
    if len(fields) >= 6 and not fields[0].startswith(b"#"):
        return fields[5].decode("utf-8", "replace")
    return tag


def main(argv=None):
    """Entry point of the ``rankereval`` command; returns the exit status.

    Called without ``argv`` (as the program ``rankereval`` or ``python -m rankereval``)
    before NumPy is imported, it has NumPy's BLAS (OpenBLAS) start with one thread unless
    ``OPENBLAS_NUM_THREADS`` or ``GOTO_NUM_THREADS`` is set (see :func:`_one_blas_thread`).
    """
    if argv is None:
        _one_blas_thread()
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args, leftover = parser.parse_known_args(argv)
        options = [a for a in leftover if a.startswith("-") and a != "-"]
        if options or (leftover and args.command != "evaluate"):
            parser.subcommands.get(args.command, parser).error(
                f"unrecognized arguments: {' '.join(options or leftover)}")
    except SystemExit as exc:  # --help, --version, usage errors (status 2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    args.leftover, args.argv = leftover, argv
    if args.command == "compare":
        from rankereval.cli._compare import run_compare

        return run_compare(args, out, err)
    if args.command == "agreement":
        from rankereval.cli._agreement import run_agreement

        return run_agreement(args, out, err)
    return guarded(lambda: _dispatch(args, out, err), parser.subcommands.get(args.command, parser),
                   args.command, err)


def _one_blas_thread():
    """Set ``OPENBLAS_NUM_THREADS=1`` for this process when NumPy is not imported yet and the
    user chose no OpenBLAS thread count. OpenBLAS starts one thread per core when NumPy is
    imported, half of the import's CPU time (about 0.07 s of 0.15 s on 2 cores), and the
    command line's BLAS calls are too small for threads to pay (the bootstrap's matrix-vector
    products of at most 2**20 cells, a dot product in gini@k); the kernels' OpenMP threads
    (``OMP_NUM_THREADS``) are not affected."""
    if "numpy" not in sys.modules and not any(
            name in os.environ for name in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS")):
        os.environ["OPENBLAS_NUM_THREADS"] = "1"


def _dispatch(args, out, err):
    if args.command == "metrics":
        out.write(_metrics_listing())
        return 0
    if args.command == "example":
        from rankereval.io import sample_paths

        qrels, run = sample_paths()
        if not args.quiet:
            metrics = " ".join(args.metrics or DEFAULT_METRICS)
            print(f"rankereval: evaluating the synthetic sample shipped with rankereval "
                  f"(rankereval/_sample/make_sample.py), i.e.\n"
                  f"  rankereval evaluate {qrels} {run} -m {metrics}", file=err)
    else:
        qrels, run = _files(args)
    return _run(args, qrels, run, out, err)


def _files(args):
    """(qrels, run) wherever they stood among the options. argparse leaves a file after an
    option out of the positionals (``qrels -c run``: ``run`` is left over) and ``-m`` takes
    every value up to the next option (``-m map ndcg@10 qrels run``); the command takes
    exactly two files, so they are the positionals, the leftovers, and when these are fewer
    than two the last values of ``-m``, in the order they were given."""
    found = [f for f in (args.qrels, args.run) if f is not None] + list(args.leftover)
    if len(found) < 2 and args.metrics:
        take = min(2 - len(found), len(args.metrics) - 1)
        if take > 0:
            found += args.metrics[-take:]
            args.metrics = args.metrics[:-take]
    if len(found) > 2:
        raise UsageError(f"unrecognized arguments: {' '.join(found[2:])} (give one qrels and one run file)")
    if len(found) < 2:
        raise UsageError("the following arguments are required: " + ("qrels, run" if not found else "run"))
    argv = args.argv
    return sorted(found, key=lambda f: argv.index(f) if f in argv else len(argv))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
