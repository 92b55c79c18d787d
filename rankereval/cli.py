"""Command line: ``rankereval evaluate QRELS RUN -m ndcg@10 ...`` (also ``python -m rankereval``).

Subcommands
-----------
``evaluate QRELS RUN``
    Read a TREC qrels and run file (plain or gzip) and print the mean of each metric, with
    ``--ci`` a bootstrap confidence interval, with ``--per-query`` one row per query.
``example``
    The same on the small synthetic TREC pair shipped with the package (see
    ``rankereval/_sample/make_sample.py``): real output right after installing.
``metrics``
    List the metric names and their aliases.

Metric names are case-insensitive, ``name@k`` sets the cutoff: ``p``/``precision``,
``r``/``recall``, ``f1``, ``hr``/``hitrate``, ``rr``/``mrr``/``reciprocal_rank``,
``ap``/``map``, ``dcg``, ``ndcg``, ``meanranks``, ``firstrelevantrank``. ``rr``, ``ap``,
``dcg`` and ``ndcg`` without ``@k`` use the whole ranking (``map`` is trec_eval's MAP).

Exit status: 0 on success, 2 for usage errors (unknown metric, bad option), 1 when an input
cannot be read or is invalid (the message names the file and line); messages go to stderr.

Examples
--------
>>> from rankereval.cli import parse_metric
>>> parse_metric("NDCG@10")
MetricSpec(name='NDCG@10', kind='ndcg', k=10)
>>> parse_metric("map").kind
'ap'
"""
import argparse
import json
import math
import os
import sys
from dataclasses import dataclass

__all__ = ["main", "parse_metric", "MetricSpec", "DEFAULT_METRICS"]

DEFAULT_METRICS = ("ndcg@10", "p@10", "recall@100", "map", "mrr@10")

# canonical kind -> (aliases, needs k, accepts k, description)
_KINDS = {
    "precision": (("p", "precision", "prec"), True, True, "Precision@k"),
    "recall": (("r", "recall"), True, True, "Recall@k"),
    "f1": (("f1", "f"), True, True, "F1@k: harmonic mean of precision and recall"),
    "hitrate": (("hr", "hitrate", "hit"), True, True, "HitRate@k (one relevant item per query)"),
    "rr": (("rr", "mrr", "reciprocalrank", "recip_rank"), False, True,
           "ReciprocalRank@k (no @k: whole ranking, trec_eval's recip_rank)"),
    "ap": (("ap", "map", "averageprecision"), False, True,
           "AP@k, average precision (no @k: whole ranking, trec_eval's map)"),
    "dcg": (("dcg",), False, True, "DCG@k (graded; no @k: whole ranking)"),
    "ndcg": (("ndcg",), False, True, "NDCG@k (graded; no @k: whole ranking)"),
    "meanranks": (("meanranks", "meanrank"), False, False, "MeanRanks: mean rank of the relevant items"),
    "firstrelevantrank": (("firstrelevantrank", "frr"), False, False,
                          "FirstRelevantRank: rank of the first relevant item"),
}
_ALIAS = {alias.replace("_", ""): kind for kind, (aliases, *_rest) in _KINDS.items() for alias in aliases}


class UsageError(Exception):
    """A command-line argument is invalid (exit status 2)."""


@dataclass(frozen=True)
class MetricSpec:
    """A metric as named on the command line: ``name`` (as written), ``kind`` and ``k``."""

    name: str
    kind: str
    k: object = None

    def build(self, data=None, truncated=False, log_base="e", gain="identity"):
        """The :class:`~rankereval.metrics.Metric` object (``data`` resolves a missing k)."""
        import rankereval as rk

        k = self.k
        if self.kind in ("precision", "recall", "f1", "hitrate"):
            cls = {"precision": rk.Precision, "recall": rk.Recall, "f1": rk.F1, "hitrate": rk.HitRate}[self.kind]
            return cls(k, truncated=truncated)
        if self.kind in ("rr", "ap"):
            if k is None:  # whole ranking: a cutoff no ranking or relevant set exceeds
                k = _whole_ranking_k(data)
            return rk.ReciprocalRank(k) if self.kind == "rr" else rk.AP(k)
        if self.kind in ("dcg", "ndcg"):
            cls = rk.DCG if self.kind == "dcg" else rk.NDCG
            return cls(k, relevance_scaling=gain, log_base=log_base)
        return rk.MeanRanks() if self.kind == "meanranks" else rk.FirstRelevantRank()


def _whole_ranking_k(data):
    import numpy as np

    longest = int(data.rankings.lengths.max()) if data is not None and data.n_queries else 0
    most_relevant = int(np.diff(data.binary_labels.indptr).max()) if data is not None and data.n_queries else 0
    return max(1, longest, most_relevant)


def parse_metric(text):
    """Parse ``name`` or ``name@k`` (case-insensitive, aliases allowed) into a MetricSpec.

    Raises
    ------
    UsageError
        For an unknown name, a missing/unexpected cutoff or a cutoff that is not an integer > 0.
    """
    raw = text.strip()
    base, sep, cut = raw.partition("@")
    key = base.strip().lower().replace("_", "").replace("-", "")
    kind = _ALIAS.get(key)
    if kind is None:
        known = ", ".join(a for aliases, *_rest in _KINDS.values() for a in aliases)
        raise UsageError(f"unknown metric {text!r}; known: {known} (see 'rankereval metrics')")
    _aliases, needs_k, accepts_k, _desc = _KINDS[kind]
    k = None
    if sep:
        if not accepts_k:
            raise UsageError(f"metric {text!r}: {base} takes no cutoff (write {base} without @k)")
        try:
            k = int(cut)
        except ValueError:
            raise UsageError(f"metric {text!r}: the cutoff after @ must be an integer > 0") from None
        if k <= 0:
            raise UsageError(f"metric {text!r}: the cutoff after @ must be an integer > 0")
    elif needs_k:
        raise UsageError(f"metric {text!r} needs a cutoff, e.g. {base}@10")
    return MetricSpec(raw, kind, k)


# ----------------------------------------------------------------------------------------
# argument parsing
# ----------------------------------------------------------------------------------------

def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v <= 1:
        raise argparse.ArgumentTypeError(f"expected an integer > 1, got {v}")
    return v


def _confidence(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number strictly between 0 and 1, got {text}")
    return v


def _finite_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not math.isfinite(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text}")
    return v


def _add_eval_options(p, default_seed=None):
    p.add_argument("-m", "--metrics", nargs="+", metavar="METRIC", default=None,
                   help=f"metrics, e.g. ndcg@10 recall@100 map (default: {' '.join(DEFAULT_METRICS)})")
    p.add_argument("-l", "--relevance-level", type=_finite_float, default=1, metavar="LEVEL",
                   help="grade from which a document is relevant for binary metrics (default: 1, as trec_eval -l)")
    p.add_argument("--nan-handling", choices=("propagate", "drop", "zerofill"), default="propagate",
                   help="queries whose metric is undefined (NaN, e.g. no relevant document): "
                        "propagate (mean is NaN; default), drop, or count as 0")
    p.add_argument("--truncated", action="store_true",
                   help="precision/recall/f1/hitrate: clip k at the ranking length (precision) or "
                        "the number of relevant documents (recall)")
    p.add_argument("--log-base", choices=("e", "2"), default="e",
                   help="logarithm of the DCG discount (default: e; trec_eval uses 2; NDCG does not depend on it)")
    p.add_argument("--gain", choices=("identity", "power"), default="identity",
                   help="DCG/NDCG gain of a grade g: g (identity, default, as trec_eval) or 2**g - 1 (power)")
    p.add_argument("--tie-break", choices=("trec_eval", "docid", "input"), default="trec_eval",
                   help="order of equal scores: trec_eval (default: 32-bit scores, larger docid first), "
                        "docid (exact scores, smaller docid first), input (exact scores, file order)")
    p.add_argument("--order-by", choices=("score", "rank"), default="score",
                   help="rank documents by descending score (default, as trec_eval) or ascending rank column")
    p.add_argument("--missing", choices=("drop", "empty", "error"), default="drop",
                   help="judged queries without a ranking: drop (default, as trec_eval), evaluate with an "
                        "empty ranking (as trec_eval -c), or fail")
    p.add_argument("-c", dest="missing", action="store_const", const="empty",
                   help="same as --missing empty (trec_eval -c)")
    p.add_argument("--extra", choices=("drop", "keep", "error"), default="drop",
                   help="ranked queries without judgements: drop (default, as trec_eval), keep (metrics "
                        "NaN), or fail")
    p.add_argument("--ci", action="store_true", help="add a bootstrap confidence interval of each mean")
    p.add_argument("--n-bootstrap", type=_positive_int, default=1000, metavar="N",
                   help="bootstrap resamples (default: 1000)")
    p.add_argument("--confidence", type=_confidence, default=0.95, metavar="LEVEL",
                   help="confidence level of the interval (default: 0.95)")
    p.add_argument("--ci-method", choices=("percentile", "bca"), default="percentile",
                   help="bootstrap interval: percentile (default) or bca (bias-corrected and accelerated)")
    p.add_argument("--seed", type=int, default=default_seed,
                   help="random seed of the bootstrap (default: "
                        + ("fresh randomness" if default_seed is None else str(default_seed)) + ")")
    p.add_argument("-q", "--per-query", action="store_true", help="one row per query id")
    p.add_argument("-f", "--format", choices=("table", "json", "csv"), default="table",
                   help="output format (default: table)")
    p.add_argument("--quiet", action="store_true", help="no notes on stderr")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")


def build_parser():
    from rankereval import __version__

    parser = argparse.ArgumentParser(
        prog="rankereval",
        description="Evaluate rankings (TREC runs) against relevance judgements (TREC qrels).",
        epilog="Run 'rankereval example' to see it work on the bundled sample.",
    )
    parser.add_argument("--version", action="version", version=f"rankereval {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="{evaluate,example,metrics}")
    sub.required = True
    ev = sub.add_parser("evaluate", help="evaluate a TREC run against TREC qrels",
                        description="Evaluate a TREC run (query Q0 docid rank score tag) against TREC "
                                    "qrels (query iteration docid relevance); plain or gzip files.")
    ev.add_argument("qrels", help="qrels file")
    ev.add_argument("run", help="run file")
    _add_eval_options(ev)
    ex = sub.add_parser("example", help="evaluate the sample qrels/run shipped with rankereval",
                        description="Evaluate the small synthetic TREC pair shipped with rankereval "
                                    "(made by rankereval/_sample/make_sample.py).")
    _add_eval_options(ex, default_seed=0)
    ls = sub.add_parser("metrics", help="list metric names and aliases")
    parser.subcommands = {"evaluate": ev, "example": ex, "metrics": ls}
    return parser


# ----------------------------------------------------------------------------------------
# evaluation and output
# ----------------------------------------------------------------------------------------

def evaluate(data, specs, args):
    """{name: result dict} for the metric specs on TrecData ``data``, using the Python API."""
    import numpy as np

    results = {}
    for spec in specs:
        metric = spec.build(data, truncated=args.truncated, log_base=args.log_base, gain=args.gain)
        labels = data.labels_for(metric)
        scores = metric.score(labels, data.rankings)
        n_nan = int(np.count_nonzero(np.isnan(scores)))
        n_used = scores.size - n_nan if args.nan_handling == "drop" else scores.size
        kwargs = dict(nan_handling=args.nan_handling)
        if args.ci:
            out = metric.mean(labels, data.rankings, conf_interval=True, n_bootstrap_samples=args.n_bootstrap,
                              confidence=args.confidence, random_state=args.seed, method=args.ci_method, **kwargs)
            res = {"mean": out["score"], "ci": list(out["conf_interval"])}
        else:
            res = {"mean": metric.mean(labels, data.rankings, **kwargs)}
        res["n_queries"] = int(n_used)
        res["n_nan"] = n_nan
        res["per_query_scores"] = scores
        res["metric"] = repr(metric)
        results[spec.name] = res
    return results


def _json_number(x):
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def _fmt(x, digits=4):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def _csv_number(x):
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return repr(x)


def render(results, data, args):
    """The output text for ``args.format`` (table, json or csv)."""
    names = list(results)
    qids = [str(q) for q in data.query_ids]
    if args.format == "json":
        obj = {}
        for name, res in results.items():
            entry = {"mean": _json_number(res["mean"])}
            if "ci" in res:
                entry["ci"] = [_json_number(v) for v in res["ci"]]
            entry["n_queries"] = res["n_queries"]
            entry["n_nan"] = res["n_nan"]
            if args.per_query:
                entry["per_query"] = {q: _json_number(v) for q, v in zip(qids, res["per_query_scores"])}
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
                w.writerow([q] + [_csv_number(results[n]["per_query_scores"][i]) for n in names])
        else:
            w.writerow(["metric", "mean"] + (["ci_lower", "ci_upper"] if args.ci else []) + ["n_queries", "n_nan"])
            for name, res in results.items():
                ci = [_csv_number(v) for v in res["ci"]] if args.ci else []
                w.writerow([name, _csv_number(res["mean"])] + ci + [res["n_queries"], res["n_nan"]])
        return buf.getvalue()
    # table
    ci_head = f"{args.confidence * 100:g}% CI"
    if args.per_query:
        header = ["query"] + names
        rows = [[q] + [_fmt(results[n]["per_query_scores"][i]) for n in names] for i, q in enumerate(qids)]
        foot = [["mean"] + [_fmt(results[n]["mean"]) for n in names]]
        if args.ci:
            foot.append([ci_head] + [f"[{_fmt(results[n]['ci'][0])}, {_fmt(results[n]['ci'][1])}]" for n in names])
        return _table(header, rows, foot)
    header = ["metric", "mean"] + ([ci_head] if args.ci else []) + ["queries"]
    rows = []
    for name, res in results.items():
        row = [name, _fmt(res["mean"])]
        if args.ci:
            row.append(f"[{_fmt(res['ci'][0])}, {_fmt(res['ci'][1])}]")
        row.append(str(res["n_queries"]))
        rows.append(row)
    return _table(header, rows)


def _table(header, rows, foot=()):
    widths = [max(len(str(r[i])) for r in [header, *rows, *foot]) for i in range(len(header))]

    def line(r):
        cells = [str(c).ljust(w) if i == 0 else str(c).rjust(w) for i, (c, w) in enumerate(zip(r, widths))]
        return "  ".join(cells).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in rows]
    if foot:
        out.append("  ".join("-" * w for w in widths))
        out += [line(r) for r in foot]
    return "\n".join(out) + "\n"


def _metrics_listing():
    lines = ["metric names (case-insensitive; name@k sets the cutoff k):", ""]
    for kind, (aliases, needs_k, accepts_k, desc) in _KINDS.items():
        form = f"{aliases[0]}@k" if needs_k else (f"{aliases[0]}[@k]" if accepts_k else aliases[0])
        lines.append(f"  {form:<22} {desc}")
        if len(aliases) > 1:
            lines.append(f"  {'':<22} aliases: {', '.join(aliases[1:])}")
    return "\n".join(lines) + "\n"


def _run(args, qrels, run, out, err):
    from rankereval.io import read_trec

    specs, seen = [], set()
    for text in args.metrics or DEFAULT_METRICS:
        spec = parse_metric(text)  # UsageError before any file is read
        if spec.name not in seen:
            seen.add(spec.name)
            specs.append(spec)
    data = read_trec(qrels, run, relevance_level=args.relevance_level, tie_break=args.tie_break,
                     order_by=args.order_by, missing=args.missing, extra=args.extra,
                     progress=False if args.no_progress else None)
    if not args.quiet:
        for note in data.report.notes():
            print(f"rankereval: note: {note}", file=err)
    results = evaluate(data, specs, args)
    out.write(render(results, data, args))
    return 0


def main(argv=None):
    """Entry point of the ``rankereval`` command; returns the exit status."""
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors (status 2)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    try:
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
            qrels, run = args.qrels, args.run
        return _run(args, qrels, run, out, err)
    except UsageError as exc:
        parser.subcommands.get(args.command, parser).print_usage(err)
        print(f"rankereval {args.command}: error: {exc}", file=err)
        return 2
    except (OSError, ValueError, TypeError, ImportError) as exc:
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return 1
        print(f"rankereval: error: {_describe(exc)}", file=err)
        return 1
    except KeyboardInterrupt:
        print("rankereval: interrupted", file=err)
        return 130


def _describe(exc):
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"cannot read {exc.filename!r}: {exc.strerror or exc}"
    return str(exc)


def _silence_stdout():
    # Python's recipe for a closed pipe (e.g. '| head'): no second error at interpreter exit
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
