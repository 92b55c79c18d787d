"""Input conversion: ``BinaryLabels``/``Rankings`` construction, first call and warm.

On workload (a) (``workloads.recsys``: 200,000 users x top-100 ``int64`` ids, binary labels
as a SciPy CSR matrix of 100,000 items) each construction is timed in a fresh process: the
first call (what a script that builds its inputs once pays), then warm calls, next to one
NumPy copy of the same input (``np.copy`` of the rankings; of the CSR's three arrays for the
labels). For the first call the process's minor page faults are counted too, and the same
number of fresh pages is timed on its own (``np.ones`` of the result's size: the kernel
zeroing and mapping each page at first touch), once as the first large allocation of a fresh
process and once recycled (after the warm calls), which tells whether the first call's extra
time is the result's fresh memory or the conversion itself. ``OMP_NUM_THREADS=1`` gives
steadier numbers on a busy machine (no wait for a second thread to be scheduled).

    python benchmarks/bench_convert.py                       # full size, 5 fresh processes
    python benchmarks/bench_convert.py --users 20000 --repeats 3
    python benchmarks/bench_convert.py --table benchmarks/published/convert.json

Goals (issue 36): first call at most 2x the warm call; warm call at most 1.5x one NumPy
copy of the input. Writes ``--results-dir/NAME.json`` (all repeats, medians, machine load).
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
WARM_CALLS = 5


def _child(what, n_users):
    """Run in a fresh process: time ``what`` and print one JSON line."""
    sys.path[:0] = [HERE, os.path.dirname(HERE)]  # this checkout's rankereval (built in place) first
    import numpy as np

    import workloads

    w = workloads.recsys(n_users=n_users)
    labels, rankings = w.labels, w.rankings
    import rankereval
    from rankereval import BinaryLabels, Rankings

    if what == "rankings":
        build = lambda: Rankings.from_ranked_indices(rankings)  # noqa: E731
        copy = lambda: np.copy(rankings)  # noqa: E731
    else:
        build = lambda: BinaryLabels.from_matrix(labels)  # noqa: E731
        copy = lambda: (np.copy(labels.data), np.copy(labels.indices), np.copy(labels.indptr))  # noqa: E731

    cpu = {}

    def timed(fn, key=None):
        """(wall s, minor page faults, result); the CPU seconds (all threads) go to cpu[key]."""
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        wall, used = time.perf_counter() - t0, time.process_time() - c0
        if key is not None:
            cpu.setdefault(key, []).append(used)
        return wall, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults, out

    if os.environ.get("BENCH_CONVERT_PAGES_FIRST"):  # the result's size of fresh memory, before anything
        result_bytes = int(os.environ["BENCH_CONVERT_PAGES_FIRST"])
        wall, faults, _ = timed(lambda: np.ones(result_bytes, dtype=np.uint8), "fresh_pages_first")
        print(json.dumps({"fresh_pages_first_s": wall, "cpu_s": cpu["fresh_pages_first"][0], "faults": faults}))
        return
    first, first_faults, out = timed(build, "first")
    result_bytes = (out.indices.nbytes + out.lengths.nbytes if what == "rankings"
                    else out.indptr.nbytes + out.indices.nbytes)
    del out
    warm = [timed(build, "warm")[0] for _ in range(WARM_CALLS)]
    copies = [timed(copy, "numpy_copy")[0] for _ in range(WARM_CALLS)]
    pages, page_faults, _ = timed(lambda: np.ones(result_bytes, dtype=np.uint8), "fresh_pages")
    print(json.dumps({"what": what, "first_s": first, "first_minor_faults": first_faults, "warm_s": warm,
                      "numpy_copy_s": copies, "result_bytes": result_bytes, "fresh_pages_s": pages,
                      "fresh_pages_faults": page_faults, "rankereval": rankereval.__file__, "cpu_s": cpu,
                      "input_bytes": int(rankings.nbytes if what == "rankings"
                                         else labels.data.nbytes + labels.indices.nbytes + labels.indptr.nbytes)}))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--users", type=int, default=200_000)
    p.add_argument("--repeats", type=int, default=5, help="fresh processes per construction")
    p.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--name", default="convert")
    p.add_argument("--table", metavar="JSON", help="print the docs' table of a results file and exit")
    p.add_argument("--child", nargs=2, metavar=("WHAT", "USERS"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    if args.table:
        with open(args.table) as fh:
            print(table(json.load(fh)))
        return 0
    runs = {"rankings": [], "labels": []}
    for rep in range(args.repeats):
        for what in (runs if rep % 2 == 0 else list(runs)[::-1]):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", what, str(args.users)],
                                 capture_output=True, text=True, check=True, cwd=os.getcwd())
            r = json.loads(out.stdout.strip().splitlines()[-1])
            runs[what].append(r)
            c = r["cpu_s"]
            print(f"  {what:<9} first {r['first_s'] * 1e3:7.1f} ms  warm {min(r['warm_s']) * 1e3:7.1f} ms  "
                  f"numpy copy {min(r['numpy_copy_s']) * 1e3:7.1f} ms  fresh pages {r['fresh_pages_s'] * 1e3:6.1f} ms"
                  f"  | CPU first {c['first'][0] * 1e3:6.1f} warm {min(c['warm']) * 1e3:6.1f} "
                  f"copy {min(c['numpy_copy']) * 1e3:6.1f} pages {c['fresh_pages'][0] * 1e3:6.1f} ms", flush=True)
    # the first fresh memory of a process (as much as the result), before any conversion: what
    # a first call pays for its result's pages, next to the warm calls' recycled ones
    for what, rs in runs.items():
        env = dict(os.environ, BENCH_CONVERT_PAGES_FIRST=str(rs[0]["result_bytes"]))
        for _ in range(args.repeats):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", what, str(args.users)],
                                 capture_output=True, text=True, check=True, env=env)
            rs[0].setdefault("fresh_pages_first", []).append(json.loads(out.stdout.strip().splitlines()[-1]))
    summary = {}
    for what, rs in runs.items():
        first = statistics.median(r["first_s"] for r in rs)
        warm = statistics.median(statistics.median(r["warm_s"]) for r in rs)
        copy = statistics.median(statistics.median(r["numpy_copy_s"]) for r in rs)
        pages = statistics.median(r["fresh_pages_s"] for r in rs)
        cpu = {k: statistics.median(min(r["cpu_s"][k]) if k != "first" else r["cpu_s"][k][0] for r in rs)
               for k in ("first", "warm", "numpy_copy", "fresh_pages")}
        pages_first = rs[0]["fresh_pages_first"]
        cpu["fresh_pages_first"] = statistics.median(p["cpu_s"] for p in pages_first)
        summary[what] = {"first_s": first, "warm_s": warm, "numpy_copy_s": copy, "fresh_pages_s": pages,
                         "fresh_pages_first_s": statistics.median(p["fresh_pages_first_s"] for p in pages_first),
                         "cpu_s": cpu, "cpu_first_over_warm": cpu["first"] / cpu["warm"],
                         "cpu_warm_over_copy": cpu["warm"] / cpu["numpy_copy"],
                         "first_over_warm": first / warm, "warm_over_copy": warm / copy,
                         "first_minus_warm_s": first - warm,
                         "first_minor_faults": statistics.median(r["first_minor_faults"] for r in rs),
                         "result_bytes": rs[0]["result_bytes"], "input_bytes": rs[0]["input_bytes"]}
    result = {"benchmark": "bench_convert", "users": args.users, "repeats": args.repeats,
              "warm_calls": WARM_CALLS, "runs": runs, "median": summary,
              "rankereval": runs["rankings"][0]["rankereval"],
              "machine": {"cpus": os.cpu_count(), "load_average": os.getloadavg(),
                          "python": platform.python_version(), "platform": platform.platform()}}
    os.makedirs(args.results_dir, exist_ok=True)
    path = os.path.join(args.results_dir, f"{args.name}.json")
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1)
    print(table(result))
    print(f"wrote {path}")
    return 0


def table(res):
    """The reStructuredText list-table of the performance page."""
    lines = [f".. list-table:: Construction on workload (a), {res['users']:,} users x top-100 (milliseconds, "
             f"wall / CPU of all threads; median of {res['repeats']} fresh processes, warm: of {res['warm_calls']} "
             "calls)",
             "   :header-rows: 1", "   :widths: 22 12 12 12 12 12 12 12", "",
             "   * - ", "     - first call", "     - warm call", "     - one NumPy copy of the input",
             "     - the result's size of fresh memory, first in a process", "     - the same, recycled",
             "     - first / warm", "     - warm / copy"]
    names = {"rankings": "``Rankings.from_ranked_indices``", "labels": "``BinaryLabels.from_matrix``"}
    for what, m in res["median"].items():
        c = m["cpu_s"]
        lines += [f"   * - {names[what]}", f"     - {m['first_s'] * 1e3:.1f} / {c['first'] * 1e3:.1f}",
                  f"     - {m['warm_s'] * 1e3:.1f} / {c['warm'] * 1e3:.1f}",
                  f"     - {m['numpy_copy_s'] * 1e3:.1f} / {c['numpy_copy'] * 1e3:.1f}",
                  f"     - {m['fresh_pages_first_s'] * 1e3:.1f} / {c['fresh_pages_first'] * 1e3:.1f}",
                  f"     - {m['fresh_pages_s'] * 1e3:.1f} / {c['fresh_pages'] * 1e3:.1f}",
                  f"     - {m['first_over_warm']:.2f}x / {m['cpu_first_over_warm']:.2f}x",
                  f"     - {m['warm_over_copy']:.2f}x / {m['cpu_warm_over_copy']:.2f}x"]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
