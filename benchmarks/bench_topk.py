"""Top-k selection from a dense score matrix: ``Rankings.from_scores(scores, k=...)``.

Run from the repository root after building the extensions::

    python benchmarks/bench_topk.py                       # 20k users x 20k items, float32
    python benchmarks/bench_topk.py --users 2000 --items 5000 --repeats 3
    python benchmarks/bench_topk.py --table benchmarks/results/topk.json   # the docs' table

The workload is what a recommender evaluation starts from: a dense ``float32`` score matrix
(standard normal scores, NumPy ``PCG64`` seed 0) and the users' training interactions, which
must not be recommended, as a SciPy CSR matrix (``--exclusions`` random (user, item) pairs,
seed 1). For each ``k`` it times, side by side in one run (median of ``--repeats`` calls):

* the floor, one read of the matrix -- no selection can be faster than reading its input
  once: ``floor (read, 1 thread)`` and ``floor (read, N threads)``, ``np.max`` over the
  matrix (a vectorised reduction that runs at memory speed: the fastest NumPy read) on one
  thread and over N row blocks on N threads (as many as rankereval uses), taking turns with
  the rankereval calls below; ``floor (numpy sum)``: ``scores.sum()`` (one thread; float32
  pairwise summation is slower than memory, the floor the issue named first);
  ``floor (torch sum)``: ``torch.sum`` of the same memory (all threads);
* ``rankereval``: ``Rankings.from_scores(scores, k=k)``, without and with
  ``invalid_items=train``; with them on all threads and (``threadpoolctl``) on one, all the
  ``k`` and both thread counts taking turns call by call (first, before the other cases),
  so that a slow spell of a shared machine falls on all of them alike;
* ``torch.topk``: ``torch.topk(t, k, dim=1)`` on a tensor sharing the matrix's memory,
  without any masking (it cannot exclude items), and ``torch copy+mask+topk``: clone,
  set the training entries to ``-inf``, ``topk`` -- what excluding them costs in PyTorch;
* ``numpy argpartition``: ``np.argpartition(-s, k - 1, axis=1)`` on blocks of 1000 rows,
  then the k winners sorted (no exclusions; one call, it takes seconds).

Then ``rankereval`` at the middle ``k`` on the same scores as float16, float64, int32 and int64
(read in their own dtype), and the extra memory of one ``from_scores`` call: the peak
resident memory above the state before (Linux ``/proc/self/clear_refs``), next to the size
of the result (``n_users x k`` int32).

Everything (all repeats, versions, thread counts, load average) goes to ``--json``
(default ``benchmarks/results/topk.json``). ``--table FILE`` prints the reStructuredText
table of ``docs/guide/performance.rst`` from such a file.

``--paths`` measures instead what each instruction-set path of the kernel (``_topk.h``)
buys over its portable core: the same workloads (``--users`` x ``--items`` standard normal
scores as float32, float64, float16, int32 and int64 -- the integers scaled by 10^6 and
10^12 --, k = ``--k``, without and with the exclusions) in child processes that each take
one path -- ``RANKEREVAL_DISABLE_AVX2`` (the portable core, compiled for the baseline
instruction set), ``RANKEREVAL_DISABLE_AVX512`` (AVX2), neither (AVX-512 where the CPU has
it) -- taking turns for ``--rounds`` rounds, the order reversed every other round; the
median over the rounds of each process's median of ``--repeats`` calls. Its JSON (default
``benchmarks/results/topk_paths.json``) prints as a table with ``--paths-table FILE``.

``--builds LABEL=SO[,LABEL=SO...]`` compares the kernel of this checkout with other builds of
it (the compiled ``rankereval.data._topk`` modules named, e.g. of an older commit built in a
worktree: ``git worktree add /tmp/old 9d75bd2 && cd /tmp/old && python setup.py build_ext
--inplace``): for each instruction-set path (``--isa``, child processes as above) all the
modules are loaded side by side in one process and called in turns, the order reversed every
other repeat, on the ``--paths`` workloads (``--dtypes``; results checked equal); the median
of ``--repeats`` calls. Its JSON (default ``benchmarks/results/topk_builds.json``) prints as
a table with ``--builds-table FILE``.
"""
import argparse
import contextlib
import glob
import json
import os
import platform
import sys
import time
from concurrent.futures import ThreadPoolExecutor

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
# benchmark the in-place build of this checkout if there is one, else the installed package
if glob.glob(os.path.join(ROOT, "rankereval", "data", "_topk*.so")) + glob.glob(os.path.join(ROOT, "rankereval", "data", "_topk*.pyd")):
    sys.path.insert(0, ROOT)
elif sys.path and os.path.abspath(sys.path[0] or ".") == os.path.abspath(ROOT):
    sys.path.pop(0)


def thread_limit(threads):
    if not threads:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads)


def timed(func, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
        del out
    return times


_MEMORY_CHILD = """
import sys
sys.path[:0] = {path!r}
import numpy as np, scipy.sparse as sp
from rankereval import Rankings
n, m, n_ex, k, what = {n}, {m}, {n_ex}, {k}, {what!r}
scores = np.random.default_rng(0).standard_normal((n, m), dtype=np.float32)
r2 = np.random.default_rng(1)
rows, cols = r2.integers(0, n, n_ex), r2.integers(0, m, n_ex)
train = sp.csr_array((np.ones(n_ex, dtype=np.float32), (rows, cols)), shape=(n, m))
train.sum_duplicates()
if what == "torch":
    import torch
    t = torch.from_numpy(scores)
    tr = (torch.from_numpy(np.repeat(np.arange(n), np.diff(train.indptr))), torch.from_numpy(train.indices.astype(np.int64)))
    def call():
        c = t.clone()
        c[tr] = -float("inf")
        return torch.topk(c, k, dim=1)
else:
    def call():
        return Rankings.from_scores(scores, k=k, invalid_items=train)
call()  # warm-up (thread pools, first allocations)
def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
with open("/proc/self/clear_refs", "w") as fh:
    fh.write("5")
before = status("VmRSS:")
out = call()
print(status("VmHWM:") - before)
"""


def peak_extra_mib_subprocess(what, args, k):
    """Peak resident memory of one call above the state before it, in a new process (Linux;
    None elsewhere): what the call allocates, including C++ scratch that tracemalloc misses."""
    import subprocess

    if not os.path.exists("/proc/self/clear_refs"):
        return None
    code = _MEMORY_CHILD.format(path=[p for p in sys.path if p], n=args.users, m=args.items,
                                n_ex=args.exclusions, k=k, what=what)
    try:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        return float(out.stdout.strip().splitlines()[-1])
    except (subprocess.CalledProcessError, ValueError, IndexError) as exc:
        print(f"  memory of {what}: failed ({exc})")
        return None


_PATHS_CHILD = """
import json, sys, time
sys.path[:0] = {path!r}
import numpy as np, scipy.sparse as sp
from rankereval import Rankings
n, m, n_ex, ks, repeats = {n}, {m}, {n_ex}, {ks!r}, {repeats}
base = np.random.default_rng(0).standard_normal((n, m), dtype=np.float32)
r2 = np.random.default_rng(1)
train = sp.csr_array((np.ones(n_ex, dtype=np.float32), (r2.integers(0, n, n_ex), r2.integers(0, m, n_ex))),
                     shape=(n, m))
train.sum_duplicates()
out = {{}}
for dt in ("float32", "float64", "float16", "int32", "int64"):
    if dt.startswith("int"):
        s = np.round(base.astype(np.float64) * (1e6 if dt == "int32" else 1e12)).astype(dt)
    else:
        s = base.astype(dt)
    for k in ks:
        for ex in (False, True):
            kw = dict(k=k, invalid_items=train) if ex else dict(k=k)
            Rankings.from_scores(s, **kw)  # warm-up
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                Rankings.from_scores(s, **kw)
                times.append(time.perf_counter() - t0)
            out[f"{{dt}} k={{k}} {{'excl' if ex else 'none'}}"] = float(np.median(times))
print(json.dumps(out))
"""

PATHS = (("portable", "RANKEREVAL_DISABLE_AVX2"), ("AVX2", "RANKEREVAL_DISABLE_AVX512"), ("AVX-512", None))

_BUILDS_CHILD = """
import importlib.util, json, sys, time
sys.path[:0] = {path!r}
import numpy as np, scipy.sparse as sp
import rankereval.data._rankings as kernel_user
from rankereval import Rankings
n, m, n_ex, ks, repeats = {n}, {m}, {n_ex}, {ks!r}, {repeats}
mods = [kernel_user._topk]
for i, so in enumerate({sos!r}):
    spec = importlib.util.spec_from_file_location(f"build{{i}}._topk", so)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mods.insert(i, mod)
base = np.random.default_rng(0).standard_normal((n, m), dtype=np.float32)
r2 = np.random.default_rng(1)
train = sp.csr_array((np.ones(n_ex, dtype=np.float32), (r2.integers(0, n, n_ex), r2.integers(0, m, n_ex))),
                     shape=(n, m))
train.sum_duplicates()
out = {{}}
for dt in {dtypes!r}:
    if dt.startswith("int"):
        s = np.round(base.astype(np.float64) * (1e6 if dt == "int32" else 1e12)).astype(dt)
    else:
        s = base.astype(dt)
    for k in ks:
        for ex in (False, True):
            kw = dict(k=k, invalid_items=train) if ex else dict(k=k)
            first = None
            for mod in mods:  # warm-up, and the same result from every build
                kernel_user._topk = mod
                r = Rankings.from_scores(s, **kw)
                if first is None:
                    first = r
                elif not (np.array_equal(r.indices, first.indices) and np.array_equal(r.lengths, first.lengths)):
                    raise SystemExit(f"builds disagree: {{dt}} k={{k}} ex={{ex}}")
            del first, r
            times = [[] for _ in mods]
            for rep in range(repeats):
                for i in (range(len(mods)) if rep % 2 == 0 else reversed(range(len(mods)))):
                    kernel_user._topk = mods[i]
                    t0 = time.perf_counter()
                    Rankings.from_scores(s, **kw)
                    times[i].append(time.perf_counter() - t0)
            out[f"{{dt}} k={{k}} {{'excl' if ex else 'none'}}"] = [float(np.median(t)) for t in times]
print(json.dumps(out))
"""


def run_builds(args):
    """This checkout's kernel against other builds, per instruction-set path (see above)."""
    import subprocess

    builds = [b.split("=", 1) for b in args.builds.split(",")]
    if any(len(b) != 2 or not os.path.exists(b[1]) for b in builds):
        raise SystemExit("--builds: expected LABEL=PATH pairs of existing compiled _topk modules")
    code = _BUILDS_CHILD.format(path=[p for p in sys.path if p], n=args.users, m=args.items,
                                n_ex=args.users * args.items // 400, ks=args.k, repeats=args.repeats,
                                sos=[so for _, so in builds], dtypes=args.dtypes.split(","))
    load_start = loadavg()
    paths = {}
    for name, var in PATHS:
        if name not in args.isa.split(","):
            continue
        env = {key: val for key, val in os.environ.items() if not key.startswith("RANKEREVAL_DISABLE_AVX")}
        if var:
            env[var] = "1"
        res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        if res.returncode:
            raise SystemExit(f"{name}: {res.stderr.strip() or res.stdout.strip()}")
        paths[name] = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"{name}: done", flush=True)
    return {"config": {"users": args.users, "items": args.items, "exclusions": args.users * args.items // 400,
                       "ks": args.k, "repeats": args.repeats, "builds": [label for label, _ in builds] + ["now"]},
            "machine": {"cpus": os.cpu_count(), "load_start": load_start, "load_end": loadavg(),
                        "processor": platform.processor() or platform.machine()},
            "paths": paths}


def builds_table(res):
    """The reStructuredText table of a builds run: per path, the seconds of each build and
    this checkout's time over each other build's."""
    cfg, paths = res["config"], res["paths"]
    labels = cfg["builds"]
    head = [f"{path} {label}" for path in paths for label in labels]
    head += [f"{path} now / {label}" for path in paths for label in labels[:-1]]
    lines = [
        f".. list-table:: This kernel against earlier builds: {cfg['users']:_} x {cfg['items']:_} scores, "
        f"exclusions {cfg['exclusions']:_} or none (ms, median of {cfg['repeats']} calls taking turns "
        f"in one process)".replace("_", " "),
        "   :header-rows: 1",
        "",
        "   * - workload",
    ] + [f"     - {h}" for h in head]
    first = next(iter(paths.values()))
    for w in first:
        lines.append(f"   * - {w}")
        lines += [f"     - {t * 1e3:.1f}" for path in paths for t in paths[path][w]]
        lines += [f"     - {paths[path][w][-1] / t:.2f}x" for path in paths for t in paths[path][w][:-1]]
    return "\n".join(lines)


def run_paths(args):
    """What each instruction-set path buys over the portable core (see the module docstring)."""
    import subprocess

    import numpy as np

    code = _PATHS_CHILD.format(path=[p for p in sys.path if p], n=args.users, m=args.items,
                               n_ex=args.users * args.items // 400, ks=args.k, repeats=args.repeats)
    runs = {name: [] for name, _ in PATHS}
    load_start = loadavg()
    for r in range(args.rounds):
        for name, var in (PATHS if r % 2 == 0 else PATHS[::-1]):
            env = {key: val for key, val in os.environ.items() if not key.startswith("RANKEREVAL_DISABLE_AVX")}
            if var:
                env[var] = "1"
            res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            runs[name].append(json.loads(res.stdout.strip().splitlines()[-1]))
            print(f"round {r + 1} {name}: done", flush=True)
    medians = {name: {w: float(np.median([run[w] for run in rs])) for w in rs[0]} for name, rs in runs.items()}
    return {"config": {"users": args.users, "items": args.items, "exclusions": args.users * args.items // 400,
                       "ks": args.k, "repeats": args.repeats, "rounds": args.rounds},
            "machine": {"cpus": os.cpu_count(), "load_start": load_start, "load_end": loadavg()},
            "runs": runs, "median_s": medians}


def paths_table(res):
    """The reStructuredText table of the paths run: seconds of each path, and the portable
    core's time over each other path's (what the path buys)."""
    med = res["median_s"]
    names = [name for name, _ in PATHS if name in med]
    cfg = res["config"]
    lines = [
        f".. list-table:: What each path buys: {cfg['users']:_} x {cfg['items']:_} scores, exclusions "
        f"{cfg['exclusions']:_} or none (ms, median of {cfg['rounds']} rounds of {cfg['repeats']} calls)".replace("_", " "),
        "   :header-rows: 1",
        "",
        "   * - workload",
    ] + [f"     - {name}" for name in names] + [f"     - portable / {name}" for name in names[1:]]
    for w in med[names[0]]:
        lines.append(f"   * - {w}")
        lines += [f"     - {med[name][w] * 1e3:.1f}" for name in names]
        lines += [f"     - {med[names[0]][w] / med[name][w]:.2f}x" for name in names[1:]]
    return "\n".join(lines)


def argpartition_topk(s, k, block=1000):
    import numpy as np

    out = np.empty((s.shape[0], k), dtype=np.int64)
    for i in range(0, s.shape[0], block):
        neg = -s[i:i + block]
        part = np.argpartition(neg, k - 1, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(neg, part, axis=1), axis=1, kind="stable")
        out[i:i + block] = np.take_along_axis(part, order, axis=1)
    return out


def loadavg():
    try:
        return os.getloadavg()
    except OSError:
        return None


def run(args):
    import numpy as np
    import scipy.sparse as sp

    import rankereval
    import rankereval._threads
    from rankereval import Rankings

    rng = np.random.default_rng(0)
    n, m = args.users, args.items
    log = print
    log(f"rankereval {rankereval.__version__} ({os.path.dirname(rankereval.__file__)}), numpy {np.__version__}, "
        f"{os.cpu_count()} CPUs, load {loadavg()}")
    scores = rng.standard_normal((n, m), dtype=np.float32)
    r2 = np.random.default_rng(1)
    rows, cols = r2.integers(0, n, args.exclusions), r2.integers(0, m, args.exclusions)
    train = sp.csr_array((np.ones(args.exclusions, dtype=np.float32), (rows, cols)), shape=(n, m))
    train.sum_duplicates()
    log(f"scores {n} x {m} float32 ({scores.nbytes / 2**20:.0f} MiB), exclusions {train.nnz} (CSR)")
    try:
        import torch
    except ImportError:
        torch = None
    res = {
        "config": {"users": n, "items": m, "exclusions": int(train.nnz), "ks": args.k, "repeats": args.repeats,
                   "dtype": "float32", "scores": "standard normal, PCG64 seed 0"},
        "versions": {"python": platform.python_version(), "numpy": np.__version__, "rankereval": rankereval.__version__,
                     "torch": None if torch is None else torch.__version__},
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                    "load_start": loadavg()},
        "threads": {"rankereval": rankereval._threads.effective_n_threads(),
                    "torch": None if torch is None else torch.get_num_threads()},
        "cases": [],
    }

    def record(case, k, times, **extra):
        entry = {"case": case, "k": k, "times_s": times, "median_s": float(np.median(times)), **extra}
        res["cases"].append(entry)
        log(f"  {case:<34} k={k!s:<5} median {entry['median_s']:.3f} s  (min {min(times):.3f})")
        return entry

    t = torch.from_numpy(scores) if torch is not None else None
    Rankings.from_scores(scores[:100], k=10)  # warm-up: thread pool start
    rep = args.repeats
    # with the exclusions: every k and both thread counts take turns call by call, so that a
    # slow spell of a shared machine falls on all of them alike (the ratios between k and
    # between thread counts are targets)
    one = {k: [] for k in args.k}
    two = {k: [] for k in args.k}
    n_threads = res["threads"]["rankereval"]
    pool = ThreadPoolExecutor(n_threads)  # NumPy releases the GIL in the reduction
    blocks = [scores[i * n // n_threads:(i + 1) * n // n_threads] for i in range(n_threads)]
    read1, read_n = [], []
    log("rankereval + exclusions, all k and 1 or all threads taking turns, with the read floor")
    for _ in range(rep):
        for k in args.k:
            with thread_limit(1):
                one[k] += timed(lambda: Rankings.from_scores(scores, k=k, invalid_items=train), 1)
            two[k] += timed(lambda: Rankings.from_scores(scores, k=k, invalid_items=train), 1)
        read1 += timed(lambda: scores.max(), 1)
        read_n += timed(lambda: list(pool.map(np.max, blocks)), 1)
    pool.shutdown()
    for k in args.k:
        record("rankereval + exclusions", k, two[k])
        record("rankereval + exclusions, 1 thread", k, one[k])
    record("floor (read, 1 thread)", None, read1)
    record(f"floor (read, {n_threads} threads)", None, read_n, threads=n_threads)
    for k in args.k:
        log(f"k = {k}")
        record("floor (numpy sum)", k, timed(lambda: scores.sum(), rep))
        if torch is not None:
            record("floor (torch sum)", k, timed(lambda: t.sum(), rep))
        record("rankereval", k, timed(lambda: Rankings.from_scores(scores, k=k), rep))
        if torch is not None:
            record("torch.topk (no exclusions)", k, timed(lambda: torch.topk(t, k, dim=1), rep))
            tr_rows = torch.from_numpy(np.repeat(np.arange(n), np.diff(train.indptr)))
            tr_cols = torch.from_numpy(train.indices.astype(np.int64))

            def masked():
                c = t.clone()
                c[tr_rows, tr_cols] = -float("inf")
                return torch.topk(c, k, dim=1)

            record("torch copy+mask+topk", k, timed(masked, rep))
        if not args.skip_argpartition:
            record("numpy argpartition (no exclusions)", k, timed(lambda: argpartition_topk(scores, k), 1))
    # reading each dtype as it is
    k = args.k[len(args.k) // 2]
    log(f"score dtypes, k = {k}, with exclusions")
    for dt in ("float16", "float64", "int32", "int64"):
        conv = (scores * 1000).astype(dt) if dt.startswith("int") else scores.astype(dt)
        record(f"rankereval + exclusions, {dt}", k,
               timed(lambda: Rankings.from_scores(conv, k=k, invalid_items=train), rep), dtype=dt)
        del conv
    # memory, each in a fresh process (a warm allocator would hide it)
    res["memory"] = {"k": k, "result_mib": n * k * 4 / 2**20, "input_mib": scores.nbytes / 2**20,
                     "exclusions_mib": (train.indices.nbytes + train.indptr.nbytes) / 2**20}
    for what in ("rankereval", "torch") if torch is not None else ("rankereval",):
        res["memory"][f"{what}_extra_peak_mib"] = peak_extra_mib_subprocess(what, args, k)
    log(f"memory at k = {k}: {res['memory']}")
    res["machine"]["load_end"] = loadavg()
    return res


def _fmt(s):
    return f"{s:.3f}"


def table(res):
    """The reStructuredText table of docs/guide/performance.rst."""
    cases = {}
    for c in res["cases"]:
        cases[(c["case"], c["k"])] = c["median_s"]
    ks = res["config"]["ks"]
    rows = [
        ("rankereval, train items excluded", "rankereval + exclusions"),
        ("same, 1 thread", "rankereval + exclusions, 1 thread"),
        ("rankereval, no exclusions", "rankereval"),
        ("torch.topk, no exclusions", "torch.topk (no exclusions)"),
        ("torch copy + mask + topk", "torch copy+mask+topk"),
        ("NumPy argpartition + sort, no exclusions", "numpy argpartition (no exclusions)"),
        ("floor: NumPy sum (1 thread)", "floor (numpy sum)"),
        ("floor: torch sum", "floor (torch sum)"),
    ]
    reads = {c["case"]: c for c in res["cases"] if c["case"].startswith("floor (read")}
    read1 = reads.get("floor (read, 1 thread)")
    read_n = next((c for name, c in reads.items() if name != "floor (read, 1 thread)"), None)
    cfg = res["config"]
    lines = [
        f".. list-table:: Top-k of {cfg['users']:_} users x {cfg['items']:_} items, float32, "
        f"{cfg['exclusions']:_} training items excluded (seconds, median of {cfg['repeats']})".replace("_", " "),
        "   :header-rows: 1",
        "   :widths: 40 " + " ".join(["14"] * len(ks)),
        "",
        "   * - s",
    ] + [f"     - k = {k}" for k in ks]
    for label, key in rows:
        if not any((key, k) in cases for k in ks):
            continue
        lines.append(f"   * - {label}")
        for k in ks:
            lines.append(f"     - {_fmt(cases[key, k]) if (key, k) in cases else '—'}")
    if read_n is not None:
        lines.append(f"   * - rankereval / read floor ({read_n['threads']} threads)")
        for k in ks:
            lines.append(f"     - {cases['rankereval + exclusions', k] / read_n['median_s']:.2f}x")
        lines.append("   * - same, 1 thread / read floor (1 thread)")
        for k in ks:
            lines.append(f"     - {cases['rankereval + exclusions, 1 thread', k] / read1['median_s']:.2f}x")
    lines.append("   * - rankereval / NumPy-sum floor")
    for k in ks:
        lines.append(f"     - {cases['rankereval + exclusions', k] / cases['floor (numpy sum)', k]:.2f}x")
    lines.append("   * - 1 thread / 2 threads")
    for k in ks:
        a = cases["rankereval + exclusions, 1 thread", k] / cases["rankereval + exclusions", k]
        lines.append(f"     - {a:.2f}x")
    if read_n is not None:
        lines.append("")
        lines.append(f"The read floor, taking turns with the rankereval calls: one read of the matrix takes "
                     f"{_fmt(read1['median_s'])} s on one thread and {_fmt(read_n['median_s'])} s on "
                     f"{read_n['threads']} ({read1['median_s'] / read_n['median_s']:.2f}x).")
    mach = res.get("machine", {})
    if mach.get("load_start") and mach.get("load_end"):
        lines.append("")
        lines.append(f"Load average of the machine ({mach.get('cpus')} CPUs): {mach['load_start'][0]:.1f} at the start "
                     f"of the run, {mach['load_end'][0]:.1f} at the end.")
    spreads = sorted(max(c["times_s"]) / min(c["times_s"]) for c in res["cases"] if len(c["times_s"]) > 1)
    if spreads:
        lines.append(f"Noise: the slowest of the repeats of a case took {spreads[len(spreads) // 2]:.2f}x the fastest "
                     f"(median over the cases; at most {spreads[-1]:.2f}x).")
    base = ("rankereval + exclusions", ks[0])
    if base in cases and len(ks) > 1:
        lines.append(f"rankereval with exclusions, time relative to k = {ks[0]} in the same run: "
                     + ", ".join(f"k = {k} {cases['rankereval + exclusions', k] / cases[base]:.2f}x"
                                 for k in ks[1:] if ("rankereval + exclusions", k) in cases) + ".")
    mem = res.get("memory", {})
    dtypes = [c for c in res["cases"] if "dtype" in c]
    lines.append("")
    if dtypes:
        lines.append(f"Other score dtypes at k = {dtypes[0]['k']} with the exclusions (read as they are, "
                     "no converted copy): " + ", ".join(f"{c['dtype']} {_fmt(c['median_s'])} s" for c in dtypes)
                     + f" (float32: {_fmt(cases['rankereval + exclusions', dtypes[0]['k']])} s).")
    if mem.get("rankereval_extra_peak_mib") is not None:
        torch_mem = mem.get("torch_extra_peak_mib")
        lines.append(f"Extra memory of one call at k = {mem['k']}: {mem['rankereval_extra_peak_mib']:.1f} MiB peak above the "
                     f"state before (the result itself is {mem['result_mib']:.1f} MiB; the scores are "
                     f"{mem['input_mib']:.0f} MiB)"
                     + (f"; torch copy + mask + topk: {torch_mem:.0f} MiB." if torch_mem is not None else "."))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--exclusions", type=int, default=1_000_000)
    parser.add_argument("--k", type=lambda s: [int(x) for x in s.split(",")], default=[10, 100, 1000])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-argpartition", action="store_true")
    parser.add_argument("--json", help="default: benchmarks/results/topk.json, with --paths topk_paths.json")
    parser.add_argument("--table", metavar="FILE", help="print the docs table from a results file and exit")
    parser.add_argument("--paths", action="store_true", help="what each instruction-set path buys (see above)")
    parser.add_argument("--rounds", type=int, default=3, help="--paths: rounds of the three paths")
    parser.add_argument("--paths-table", metavar="FILE", help="print the table of a --paths results file and exit")
    parser.add_argument("--builds", metavar="LABEL=SO,...", help="this kernel against other builds (see above)")
    parser.add_argument("--isa", default="AVX2,AVX-512", help="--builds: the paths, of portable,AVX2,AVX-512")
    parser.add_argument("--dtypes", default="float32,float64,float16,int32,int64", help="--builds: score dtypes")
    parser.add_argument("--builds-table", metavar="FILE", help="print the table of a --builds results file and exit")
    args = parser.parse_args(argv)
    if args.builds_table:
        with open(args.builds_table) as fh:
            print(builds_table(json.load(fh)))
        return
    if args.paths_table:
        with open(args.paths_table) as fh:
            print(paths_table(json.load(fh)))
        return
    if args.table:
        with open(args.table) as fh:
            print(table(json.load(fh)))
        return
    kind = "builds" if args.builds else "paths" if args.paths else None
    res = run_builds(args) if kind == "builds" else run_paths(args) if kind == "paths" else run(args)
    path = args.json or os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                     f"topk_{kind}.json" if kind else "topk.json")
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"wrote {path}")
    print(builds_table(res) if kind == "builds" else paths_table(res) if kind == "paths" else table(res))


if __name__ == "__main__":
    main()
