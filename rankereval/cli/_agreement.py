"""The ``rankereval agreement`` subcommand: how similar two TREC runs' rankings are.

::

    rankereval agreement RUN_A RUN_B [-p P] [-k K] [--depth D] [--ties a|b|w] [-f table|json|csv]

Per query ranked by both runs: RBO (extrapolated, with its bounds RBO_min and RBO_max) at
persistence ``p`` and the Jaccard index of the top-k sets; then their means. The runs are
read by the package's TREC reader (``read_trec`` with no judgements, ``extra='keep'``, so
every ranked query is kept and ordered as trec_eval orders it); documents are matched by id
across the runs and queries by query id (the queries only one run ranks are counted on
stderr and left out). ``--ties``: the documents of equal score are read as tied groups
(``ties="keep"``) and RBO is the tie-aware variant of Corsi and Urbano (SIGIR 2024).
"""
import csv
import io
import json

__all__ = ["add_agreement_subparser", "run_agreement"]

FORMATS = ("table", "json", "csv")


def add_agreement_subparser(sub):
    """Add ``agreement`` to an ``argparse`` subparsers object; returns the new parser."""
    from rankereval.cli._common import _count

    p = sub.add_parser(
        "agreement", help="agreement of two runs' rankings (RBO, Jaccard) per query",
        description="Rank-biased overlap (extrapolated, with its bounds; Webber, Moffat and Zobel "
                    "2010) and the Jaccard index of the top-k sets of two TREC runs, per query "
                    "ranked by both, and their means. No judgements are needed.")
    p.add_argument("run_a", metavar="RUN_A", help="run file")
    p.add_argument("run_b", metavar="RUN_B", help="run file")
    p.add_argument("-p", "--persistence", type=float, default=0.9, metavar="P",
                   help="RBO persistence p in (0, 1) (default: 0.9)")
    p.add_argument("-k", type=_count, default=10, metavar="K",
                   help="depth of the Jaccard top-k sets (default: 10)")
    p.add_argument("--depth", type=_count, default=None, metavar="D",
                   help="cut both rankings at depth D for RBO (default: whole rankings)")
    p.add_argument("--ties", choices=("a", "b", "w"), default=None,
                   help="tie-aware RBO (Corsi and Urbano 2024) over the documents of equal score: "
                        "'a' the mean over their orders, 'b' corrected for the ties, 'w' ties as "
                        "equality (default: the order trec_eval gives them)")
    p.add_argument("-f", "--format", choices=FORMATS, default="table", help="output format (default: table)")
    p.add_argument("--quiet", action="store_true", help="no notes on stderr")
    p.set_defaults(_agreement_parser=p)
    return p


def _read(path, ties=None):
    from rankereval.io import read_trec

    return read_trec(io.BytesIO(b""), path, extra="keep", ties="break" if ties is None else "keep")


def aligned(a, b):
    """``(query ids, rankings of a, rankings of b, only in a, only in b)`` for the queries
    both TrecData rank, with b's documents renumbered into a's document ids."""
    import numpy as np

    from rankereval.data import Rankings

    common = [q for q in a.query_ids if q in set(b.query_ids)]
    only_a = len(a.query_ids) - len(common)
    only_b = len(b.query_ids) - len(common)
    docs = a.doc_ids.append(b.doc_ids.difference(a.doc_ids))
    remap = docs.get_indexer(b.doc_ids).astype(np.int64)               # b's item id -> a's
    ra = a.rankings[a.query_ids.get_indexer(common)]
    rb = b.rankings[b.query_ids.get_indexer(common)]
    ib = rb.indices
    mapped = np.where(ib >= 0, remap[np.maximum(ib, 0)], -1)
    tie_flags = rb.ties
    rb = Rankings.from_ranked_indices(mapped, lengths=rb.lengths)
    if tie_flags is not None:   # the same positions: the tied groups stay as read
        rb = Rankings._from_padded(rb.indices, rb.lengths, ties=tie_flags[:, :rb.indices.shape[1]])
    return common, ra, rb, only_a, only_b


def _agreement(args, out, err):
    import numpy as np

    from rankereval._utils import _render
    from rankereval.cli._common import UsageError
    from rankereval.agreement import jaccard, rbo

    if not 0.0 < args.persistence < 1.0:
        raise UsageError(f"-p/--persistence must be strictly between 0 and 1, got {args.persistence:g}")
    a, b = _read(args.run_a, args.ties), _read(args.run_b, args.ties)
    queries, ra, rb, only_a, only_b = aligned(a, b)
    if not args.quiet and (only_a or only_b):
        print(f"rankereval: note: {only_a} queries ranked only by {args.run_a} and {only_b} only by "
              f"{args.run_b} are left out; {len(queries)} compared", file=err)
    if not queries:
        raise ValueError(f"{args.run_a} and {args.run_b} rank no query in common")
    r = rbo(ra, rb, p=args.persistence, k=args.depth, ties=args.ties)
    jac = jaccard(ra, rb, args.k)
    jname = f"jaccard@{args.k}"
    columns = {"rbo": r.ext, "rbo_min": r.min, "rbo_max": r.max, jname: jac}
    means = {name: (float(np.nanmean(v)) if not np.isnan(v).all() else float("nan"))
             for name, v in columns.items()}
    if args.format == "json":
        doc = {"p": args.persistence, "k": args.k, "depth": args.depth, "n_queries": len(queries),
               "mean": {k: _render.json_number(v) for k, v in means.items()},
               "queries": [{"query": str(q), **{k: _render.json_number(v[i]) for k, v in columns.items()}}
                           for i, q in enumerate(queries)]}
        out.write(json.dumps(doc, indent=2) + "\n")
        return 0
    rows = [[str(q), *(_render.fmt(v[i]) for v in columns.values())] for i, q in enumerate(queries)]
    mean_row = ["mean", *(_render.fmt(v) for v in means.values())]
    if args.format == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["query", *columns])
        for i, q in enumerate(queries):
            w.writerow([q, *(_render.csv_number(v[i]) for v in columns.values())])
        out.write(buf.getvalue())
        return 0
    out.write(_render.table(["query", *columns], rows, foot=[mean_row]))
    tie_note = "" if args.ties is None else f", ties: RBO^{args.ties}"
    out.write(f"RBO at p = {args.persistence:g} (extrapolated, with its bounds{tie_note}), "
              f"{'whole rankings' if args.depth is None else f'depth {args.depth}'}; "
              f"{len(queries)} queries ranked by both runs\n")
    return 0


def run_agreement(args, out, err):
    """Run ``rankereval agreement`` for parsed ``args``; returns the exit status."""
    from rankereval.cli._common import guarded

    return guarded(lambda: _agreement(args, out, err), args._agreement_parser, "agreement", err)
