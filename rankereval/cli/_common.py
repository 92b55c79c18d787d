"""What the subcommands of the command line share (``rankereval.cli`` and
``rankereval.cli._compare`` both import from here; this module imports neither): the default
metrics, the usage error, the metric-name reader of the command line, argparse types, and the
guard that turns errors into messages and exit statuses."""
import argparse
import math
import os
import sys

DEFAULT_METRICS = ("ndcg@10", "p@10", "recall@100", "map", "mrr@10")
#: the seed of the bootstrap intervals and resampling tests unless --seed is given: the
#: output is the same from run to run (and says which seed it used)
DEFAULT_SEED = 0


class UsageError(Exception):
    """A command-line argument is invalid (exit status 2)."""


def _split_names(texts):
    """Metric names from ``-m`` values: each value may hold several names separated by spaces
    or commas (``-m "map ndcg@10"``, ``-m map,P.5,10``); commas and spaces inside brackets
    (``ndcg@10[power,log2]``) or parentheses (ir_measures' ``P(rel=2, judged_only=True)@5``)
    and commas in trec_eval's parameter lists (``P.5,10,20``) stay."""
    from rankereval.metrics._trec_names import is_trec_name

    names = []
    text = " ".join(texts) + ","
    depth, start = 0, 0
    for i, ch in enumerate(text):
        depth += (ch in "[(") - (ch in "])")
        if depth or not (ch == "," or ch.isspace()):
            continue
        piece = text[start:i]
        start = i + 1
        if (piece[:1].isdigit() or piece[:1] == ".") and names and "." in names[-1] \
                and "@" not in names[-1] and is_trec_name(names[-1]):
            names[-1] += "," + piece  # P.5,10: a parameter of the name before
            continue
        if piece:
            names.append(piece)
    return names


def parse_metrics(texts, args, n_items=None):
    """``({column name: Metric}, {column name: TrecMeasure})`` of the names given: every
    column, and those named the trec_eval way with their
    :class:`~rankereval.metrics._trec_names.TrecMeasure` (summary rule, integer printing).

    A name is read by the package's grammar (:func:`rankereval.metrics.from_name`; the
    options --truncated, --log-base and --relevance-scaling apply to every metric that has the parameter)
    unless it is spelt as a trec_eval measure or set (``P_10``, ``P.5,10``, ``ndcg_cut_10``,
    ``official``): then trec_eval's table gives trec_eval's definitions, one column per
    measure, named as trec_eval prints it. Names both grammars know (``map``, ``ndcg``,
    ``recip_rank``) mean the same metric in both (tests/test_trec_names.py checks it).
    ``n_items`` (--n-items, else the documents of the data) is the catalogue of the
    system-level metrics (coverage@k, gini@k, entropy@k[normalize]); before the data is read
    a placeholder serves to check the names.
    """
    from rankereval.metrics import from_name
    from rankereval.metrics._trec_names import is_trec_name, trec_measures

    defaults = {"truncated": args.truncated, "log_base": args.log_base, "relevance_scaling": args.relevance_scaling,
                "n_items": n_items if n_items is not None else 1}
    metrics, trec = {}, {}
    for name in _split_names(texts):
        if name in metrics:
            continue
        try:
            metrics[name] = from_name(name, defaults=defaults)
            shared = _trec_twin(name, metrics[name])
            if shared is not None:  # e.g. num_rel: trec_eval's summary (a sum) and printing
                trec[name] = shared
            continue
        except ValueError as exc:
            if not is_trec_name(name):
                raise UsageError(f"{exc} (see 'rankereval metrics')") from None
        try:
            measures = trec_measures(name, relevance_level=getattr(args, "relevance_level", 1))
        except ValueError as exc:
            raise UsageError(f"{exc}") from None
        for m in measures:
            if m.special:  # runid, num_q, relstring: lines the trec output writes, not metrics
                trec.setdefault(m.column, m)
            elif m.column not in metrics:
                metrics[m.column] = m.metric
                trec[m.column] = m
    return metrics, trec


def _trec_twin(name, metric):
    """The TrecMeasure of ``name`` when trec_eval spells a measure so and it is ``metric``."""
    from rankereval.metrics._trec_names import is_trec_name, trec_measures

    if not is_trec_name(name):
        return None
    try:
        measures = trec_measures(name)
    except ValueError:
        return None
    return measures[0] if len(measures) == 1 and measures[0].metric == metric else None


def _int_above(low):
    """An argparse type: an integer > ``low``."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if v <= low:
            raise argparse.ArgumentTypeError(f"expected an integer > {low}, got {v}")
        return v
    return parse


_positive_int = _int_above(1)  # resample counts
_count = _int_above(0)  # depths


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


def _log_base(text):
    """``--log-base``: 'e', '2' or any number > 1 (as ``DCG(log_base=...)`` reads it)."""
    from rankereval._validation import check_log_base

    try:
        return check_log_base(text, "--log-base")
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("--log-base must be", "expected")) from None


def guarded(call, usage_parser, command, err):
    """Run a subcommand; turn its errors into a message on ``err`` and the exit status: 2
    for usage errors (with the subcommand's usage), 1 for input and environment problems
    (files, formats, missing optional dependencies, memory), 130 on Ctrl-C. Anything else is a bug
    and propagates with its traceback."""
    try:
        return call()
    except UsageError as exc:
        usage_parser.print_usage(err)
        print(f"rankereval {command}: error: {exc}", file=err)
        return 2
    except (OSError, ValueError, ImportError) as exc:  # input and environment problems only
        if isinstance(exc, BrokenPipeError):
            _silence_stdout()
            return 1
        print(f"rankereval: error: {_describe(exc, usage_parser)}", file=err)
        return 1
    except MemoryError as exc:  # a file or a request too large for this machine's memory
        detail = f" ({exc})" if str(exc) else ""
        print(f"rankereval: error: out of memory{detail}", file=err)
        return 1
    except KeyboardInterrupt:
        print("rankereval: interrupted", file=err)
        return 130


#: the Python API's argument names that the command line spells otherwise
_API_FLAGS = {"n_bootstrap_samples": "--n-resamples", "method": "--ci-method", "random_state": "--seed",
              "conf_interval": "--ci", "missing": "-c/--missing"}


def _flags(parser):
    """{argument name: flag} of a subcommand's parser: its options' destinations (the API's
    names where they agree, ``--queries``), then the API's names that differ."""
    out = {}
    for action in getattr(parser, "_actions", ()):
        longs = [o for o in action.option_strings if o.startswith("--")]
        if longs and action.dest not in out:
            out[action.dest] = longs[0]
    dests = set(out)
    out.update({k: v for k, v in _API_FLAGS.items() if v.split("/")[-1] in {out.get(d) for d in dests}})
    return out


def _describe(exc, parser=None):
    if isinstance(exc, OSError) and exc.filename is not None:
        return f"cannot read {exc.filename!r}: {exc.strerror or exc}"
    if isinstance(exc, ValueError) and parser is not None:
        from rankereval.stats._engine import cli_message

        return cli_message(exc, _flags(parser))
    return str(exc)


def _silence_stdout():
    # Python's recipe for a closed pipe (e.g. '| head'): no second error at interpreter exit
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
