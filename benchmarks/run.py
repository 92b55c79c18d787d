#!/usr/bin/env python
"""The rankereval benchmark suite: one command, see ``benchmarks/README.md``.

    python benchmarks/run.py --size small            # ~1 min on 2 cores
    python benchmarks/run.py --size full             # the sizes of the README (minutes)
    python benchmarks/run.py --size tiny --peers ranx,pytrec_eval --repeats 3

Generates the workloads deterministically, runs rankereval and every installed peer on the
same data in this process, checks that their values agree where the definitions coincide,
prints tables and writes ``benchmarks/results/<name>.json``. Exit status 1 if an agreement
check fails.
"""
import argparse
import contextlib
import gc
import glob
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# benchmark the in-place build of this checkout if there is one, else the installed package
if glob.glob(os.path.join(ROOT, "rankereval", "_kernels*.so")) + glob.glob(os.path.join(ROOT, "rankereval", "_kernels*.pyd")):
    sys.path.insert(0, ROOT)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import peers as P  # noqa: E402
import workloads as W  # noqa: E402

RESULTS_DIR = os.path.join(HERE, "results")
WARMUP_ROWS = 20
SERIAL = "rankereval[1 thread]"  # rankereval again, OpenMP limited to one thread
DEFAULT_ROW_CAPS = {  # per peer and --size: rows evaluated (the rest is extrapolated)
    "tiny": {},
    "small": {"torchmetrics": 2_000},
    "full": {"pytrec_eval": 20_000, "ranx": 20_000, "sklearn": 50_000, "torchmetrics": 2_000},
}
TOLERANCE = {"torchmetrics": 1e-5}  # computes in float32; everything else in float64
DEFAULT_TOLERANCE = 1e-9


# ------------------------------------------------------------------------------------------
# what is measured
# ------------------------------------------------------------------------------------------

@dataclass
class PeerMeasure:
    """How a peer computes (something close to) a rankereval metric.

    ``check`` says on which queries the values must agree: 'all' (every query with a relevant
    item), 'n_rel==1', 'n_rel<=k' (at most k relevant items), 'top_k_full' (the top k holds
    min(k, n_rel) relevant items, i.e. no relevant item is missing from it), or None (the
    definitions differ everywhere: timed, not compared). ``versus`` names another rankereval
    metric to compare with, when the peer lacks this one's cutoff.
    """

    measure: str
    check: str = "all"
    versus: object = None
    note: str = ""


@dataclass
class Spec:
    label: str
    kind: str                      # 'binary' or 'graded' labels
    metric: object                 # rankereval metric object
    k: int
    peers: dict = field(default_factory=dict)


def specs(workload):
    from rankereval import AP, F1, NDCG, HitRate, Precision, Recall, ReciprocalRank

    length = workload.rankings.shape[1]
    torch_ap = PeerMeasure("map@100", "top_k_full", note="torchmetrics divides by the relevant items found in the top k")
    trec_ap = PeerMeasure("map_cut.100", "n_rel<=k", note="trec_eval divides by all relevant items")
    ranx_ap = PeerMeasure("map@100", "n_rel<=k", note="ranx divides by all relevant items")
    if workload.name == "recsys":
        one = "n_rel==1"
        return [
            Spec("NDCG@10", "binary", NDCG(10, log_base="2"), 10, {
                "pytrec_eval": PeerMeasure("ndcg_cut.10"), "ranx": PeerMeasure("ndcg@10"),
                "sklearn": PeerMeasure("ndcg@10"), "torchmetrics": PeerMeasure("ndcg@10")}),
            Spec("Precision@10", "binary", Precision(10), 10, {
                "pytrec_eval": PeerMeasure("P.10"), "ranx": PeerMeasure("precision@10"),
                "torchmetrics": PeerMeasure("precision@10")}),
            Spec("ReciprocalRank@10", "binary", ReciprocalRank(10), 10, {
                "pytrec_eval": PeerMeasure("recip_rank", versus=ReciprocalRank(length),
                                           note=f"no cutoff in trec_eval: compared with ReciprocalRank({length})"),
                "ranx": PeerMeasure("mrr@10"), "torchmetrics": PeerMeasure("mrr@10")}),
            Spec("HitRate@10", "binary", HitRate(10), 10, {
                "pytrec_eval": PeerMeasure("success.10", one, note="1 if any hit: equal when 1 relevant item"),
                "ranx": PeerMeasure("hit_rate@10", one, note="1 if any hit: equal when 1 relevant item"),
                "torchmetrics": PeerMeasure("hit_rate@10", one, note="1 if any hit: equal when 1 relevant item")}),
            Spec("Recall@100", "binary", Recall(100), 100, {
                "pytrec_eval": PeerMeasure("recall.100"), "ranx": PeerMeasure("recall@100"),
                "torchmetrics": PeerMeasure("recall@100")}),
            Spec("AP@100", "binary", AP(100), 100, {
                "pytrec_eval": trec_ap, "ranx": ranx_ap, "torchmetrics": torch_ap}),
            Spec("F1@100", "binary", F1(100), 100, {"ranx": PeerMeasure("f1@100")}),
        ]
    return [
        Spec("NDCG@10", "graded", NDCG(10, log_base="2"), 10, {
            "pytrec_eval": PeerMeasure("ndcg_cut.10"), "ranx": PeerMeasure("ndcg@10"),
            "sklearn": PeerMeasure("ndcg@10"), "torchmetrics": PeerMeasure("ndcg@10")}),
        Spec("AP@100", "binary", AP(100), 100, {
            "pytrec_eval": trec_ap, "ranx": ranx_ap, "torchmetrics": torch_ap}),
        Spec("Precision@10", "binary", Precision(10), 10, {
            "pytrec_eval": PeerMeasure("P.10"), "ranx": PeerMeasure("precision@10"),
            "torchmetrics": PeerMeasure("precision@10")}),
        Spec("Recall@100", "binary", Recall(100), 100, {
            "pytrec_eval": PeerMeasure("recall.100"), "ranx": PeerMeasure("recall@100"),
            "torchmetrics": PeerMeasure("recall@100")}),
        Spec("ReciprocalRank", "binary", ReciprocalRank(length), length, {
            "pytrec_eval": PeerMeasure("recip_rank"), "ranx": PeerMeasure("mrr"),
            "torchmetrics": PeerMeasure("mrr")}),
    ]


# ------------------------------------------------------------------------------------------
# timing and memory helpers
# ------------------------------------------------------------------------------------------

def timed(func, repeats):
    """``(median seconds, all times, last result)`` of ``repeats`` calls."""
    times, out = [], None
    for _ in range(repeats):
        out = None  # free the previous result first
        t0 = time.perf_counter()
        out = func()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times, out


def _proc_status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return None


@contextlib.contextmanager
def peak_memory():
    """Peak resident memory above the current one while the block runs, in bytes.

    Linux: resets the high-water mark (``/proc/self/clear_refs``) and reads ``VmHWM``.
    Elsewhere: ``resource.getrusage`` max RSS delta, which misses peaks below an earlier one.
    Yields a dict filled in on exit. Unlike tracemalloc this sees the C/C++ allocations.
    """
    gc.collect()
    res = {}
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base, method = _proc_status("VmRSS"), "VmHWM"
    except OSError:
        base, method = None, "ru_maxrss"
    if base is None:
        method = "ru_maxrss"
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
    try:
        yield res
    finally:
        if method == "VmHWM":
            peak = _proc_status("VmHWM")
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        res.update(peak_extra_bytes=max(0, peak - base), base_rss_bytes=base, method=method)


def child_env():
    """Environment for subprocesses: they import the same rankereval as this process."""
    import rankereval

    env = dict(os.environ)
    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(rankereval.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([pkg_parent, HERE] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    return env


def run_child(args, timeout=3600):
    """Run ``python <args>``; returns (wall seconds, last stdout line parsed as JSON)."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable] + args, capture_output=True, text=True, env=child_env(), timeout=timeout)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"subprocess {args[:3]} failed:\n{proc.stderr[-3000:]}")
    return wall, json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------------
# one library on one workload
# ------------------------------------------------------------------------------------------

def measures_of(lib_name, spec_list):
    """``[(spec, measure)]`` that the library computes (rankereval: all)."""
    if lib_name == "rankereval":
        return [(s, (s.kind, s.metric)) for s in spec_list]
    return [(s, s.peers[lib_name].measure) for s in spec_list if lib_name in s.peers]


def convert(lib, w, spec_list):
    if lib.name == "rankereval":
        return lib.convert(w)
    return lib.convert(w, [m for _, m in measures_of(lib.name, spec_list)])


def warm_up(lib, w, spec_list):
    """Seconds to convert and evaluate everything once on a tiny slice (JIT compile/load)."""
    t0 = time.perf_counter()
    state = convert(lib, w.head(WARMUP_ROWS), spec_list)
    for _, m in measures_of(lib.name, spec_list):
        lib.evaluate(state, m)
    return time.perf_counter() - t0


def bench_library(lib, w, rows, spec_list, repeats, log, label=None):
    """Time conversion and every metric of one library on the first ``rows`` rows of ``w``."""
    ws = w.head(rows)
    out = {"version": lib.version(), "threads": lib.threads(), "rows": ws.n_rows, "rows_total": w.n_rows,
           "extrapolated": ws.n_rows < w.n_rows, "per_query_output": lib.per_query}
    out["warmup_s"] = warm_up(lib, w, spec_list)
    scale = w.n_rows / ws.n_rows
    if lib.name == "rankereval":
        tl, tls, labels = timed(lambda: lib.convert_labels(ws), repeats)
        tr, trs, rankings = timed(lambda: lib.convert_rankings(ws), repeats)
        state = {**labels, **rankings}
        out["construction"] = {"labels_s": tl, "rankings_s": tr, "median_s": tl + tr, "times_s": [a + b for a, b in zip(tls, trs)]}
        # context for the conversion times: the rankings' storage is new memory at every call,
        # and what a first write to new memory costs varies with the machine (on a VM, with
        # whether the host still backs the pages); the same bytes, written fresh, right after
        nbytes = rankings["rankings"].indices.nbytes
        tf, tfs, _ = timed(lambda: np.full(nbytes, 1, dtype=np.uint8), repeats)
        out["construction"] |= {"rankings_times_s": trs, "fresh_write_bytes": nbytes,
                                "fresh_write_s": tf, "fresh_write_times_s": tfs}
    else:  # slow dict building: at most 3 repeats
        t, ts, state = timed(lambda: convert(lib, ws, spec_list), min(repeats, 3))
        out["construction"] = {"median_s": t, "times_s": ts}
    out["construction"]["extrapolated_s"] = out["construction"]["median_s"] * scale
    log(f"  {label or lib.name:<13} rows={ws.n_rows:,} convert {out['construction']['median_s']:.3f}s warm-up {out['warmup_s']:.3f}s")
    out["metrics"], values = {}, {}
    for spec, m in measures_of(lib.name, spec_list):
        t0 = time.perf_counter()
        lib.evaluate(state, m)
        first = time.perf_counter() - t0
        t, ts, v = timed(lambda: lib.evaluate(state, m), repeats)
        out["metrics"][spec.label] = {"measure": m if isinstance(m, str) else repr(m[1]), "median_s": t,
                                      "times_s": ts, "first_call_s": first, "extrapolated_s": t * scale,
                                      "us_per_query": 1e6 * t / ws.n_rows}
        values[spec.label] = v
        log(f"    {spec.label:<18} {t * 1e3:10.2f} ms")
    out["total_metrics_s"] = sum(x["median_s"] for x in out["metrics"].values())
    out["total_metrics_extrapolated_s"] = out["total_metrics_s"] * scale
    del state
    gc.collect()
    return out, values, ws


# ------------------------------------------------------------------------------------------
# agreement
# ------------------------------------------------------------------------------------------

def _check_mask(check, n_rel, hits_k, k):
    if check == "all":
        return np.ones(n_rel.size, bool)
    if check == "n_rel==1":
        return n_rel == 1
    if check == "n_rel<=k":
        return n_rel <= k
    if check == "top_k_full":
        return hits_k == np.minimum(n_rel, k)
    raise ValueError(check)


def agreement(w_name, ws, lib_name, spec_list, peer_values, re_state, re_values):
    """Compare a peer's values with rankereval's on the first ``ws.n_rows`` rows."""
    rows = P.relevant_rows(ws)
    n_rel = np.diff(ws.labels.indptr)[rows]
    ranked_labels = P.join(ws)[0][rows] > 0
    results = []
    for spec in spec_list:
        pm = spec.peers.get(lib_name)
        if pm is None:
            continue
        entry = {"workload": w_name, "peer": lib_name, "metric": spec.label, "peer_measure": pm.measure,
                 "note": pm.note}
        ref_metric = pm.versus or spec.metric
        entry["rankereval"] = repr(ref_metric)
        if pm.versus is None:
            ref = re_values[spec.label][: ws.n_rows][rows]
        else:
            kind_state = re_state[spec.kind]
            ref = ref_metric.score(kind_state, re_state["rankings"])[: ws.n_rows][rows]
        got = peer_values[spec.label]
        tol = TOLERANCE.get(lib_name, DEFAULT_TOLERANCE)
        entry["tolerance"] = tol
        if pm.check is None:
            entry.update(status="not comparable", passed=None, n_compared=0)
        elif np.ndim(got) == 0:  # a mean (scikit-learn)
            diff = abs(float(got) - float(np.mean(ref)))
            entry.update(n_compared=int(rows.size), compared="mean", max_abs_diff=diff, passed=bool(diff <= tol))
        else:
            got = np.asarray(got, dtype=np.float64)
            if got.shape != ref.shape:
                entry.update(passed=False, n_compared=0, max_abs_diff=None,
                             status=f"shape mismatch: peer {got.shape} vs rankereval {ref.shape}")
                results.append(entry)
                continue
            mask = _check_mask(pm.check, n_rel, ranked_labels[:, : spec.k].sum(axis=1), spec.k)
            diff = np.abs(got[mask] - ref[mask])
            max_diff = float(diff.max()) if diff.size else 0.0
            entry.update(n_compared=int(mask.sum()), compared=f"per query ({pm.check})", max_abs_diff=max_diff,
                         n_mismatch=int((diff > tol).sum()), passed=bool(max_diff <= tol and not np.isnan(diff).any()))
            if not mask.any():
                entry.update(passed=None, max_abs_diff=None, status="n/a: no query where the definitions coincide")
            if not mask.all():
                other = ~mask
                entry["max_abs_diff_elsewhere"] = float(np.abs(got[other] - ref[other]).max())
        entry.setdefault("status", "ok" if entry["passed"] else "MISMATCH")
        results.append(entry)
    return results


# ------------------------------------------------------------------------------------------
# subprocess measurements: memory, latency
# ------------------------------------------------------------------------------------------

def worker_memory(args):
    """(subprocess) Peak memory of conversion + all metrics of one library on one workload."""
    with np.load(args.data) as z:
        w = W.Workload.from_arrays(args.workload, args.graded, {k: z[k] for k in z.files})
    w = w.head(args.rows)
    w.labels = w.labels.copy()
    w.rankings = np.ascontiguousarray(w.rankings).copy()
    spec_list = specs(w)
    lib = P.LIBRARIES[args.lib]
    warm_up(lib, w, spec_list)  # imports and JIT compilation are not the library's working memory
    with peak_memory() as mem:
        state = convert(lib, w, spec_list)
        for _, m in measures_of(lib.name, spec_list):
            lib.evaluate(state, m)
    mem.update(rows=w.n_rows, input_nbytes=w.input_nbytes)
    print(json.dumps(mem))


LATENCY_CODE = r"""
import json, sys, time
import numpy as np, scipy.sparse  # the input data: loaded before the clock starts
import peers as P, workloads as W
with np.load(sys.argv[1]) as z:
    w = W.Workload.from_arrays("ir", True, {{k: z[k] for k in z.files}})
t0 = time.perf_counter()
{body}
t2 = time.perf_counter()
print(json.dumps({{"import_s": t1 - t0, "first_call_s": t2 - t1, "total_s": t2 - t0}}))
"""

LATENCY_BODY = {
    "none": "t1 = time.perf_counter()",
    "rankereval": """import rankereval
t1 = time.perf_counter()
lib = P.LIBRARIES["rankereval"]
lib.evaluate(lib.convert(w), ("graded", rankereval.NDCG(10, log_base="2")))""",
}
for _name, _module in (("pytrec_eval", "pytrec_eval"), ("ranx", "ranx"), ("sklearn", "sklearn.metrics"),
                       ("torchmetrics", "torchmetrics.retrieval")):
    LATENCY_BODY[_name] = f"""import {_module}
t1 = time.perf_counter()
lib = P.LIBRARIES["{_name}"]
m = "ndcg_cut.10" if "{_name}" == "pytrec_eval" else "ndcg@10"
lib.evaluate(lib.convert(w, [m]), m)"""


def latency(libs, n_queries, repeats, tmp, log):
    """Cold ``python -c``: import + first NDCG@10 on ``n_queries`` IR queries."""
    w = W.ir(n_queries=n_queries, collection=100_000, seed=2)
    path = os.path.join(tmp, "latency.npz")
    np.savez(path, **w.arrays())
    out = {"n_queries": n_queries, "metric": "NDCG@10", "repeats": repeats,
           "input": "IR-like: 1000 ranked docs per query, graded labels as CSR (loaded before the clock starts)"}
    results = {}
    for name in ["none"] + libs:
        code = LATENCY_CODE.format(body=LATENCY_BODY[name])
        runs = []
        for _ in range(repeats):
            wall, res = run_child(["-c", code, path])
            res["wall_s"] = wall
            runs.append(res)
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        med["runs"] = runs
        results[name] = med
        log(f"  {name:<13} import {med['import_s']:.3f}s first call {med['first_call_s']:.3f}s wall {med['wall_s']:.3f}s")
    out["libraries"] = results
    return out


# ------------------------------------------------------------------------------------------
# thread scaling
# ------------------------------------------------------------------------------------------

def thread_scaling(n_users, repeats, log):
    """Recall@100 on workload (a) with ``n_users`` users on 1 thread vs 2 (threadpoolctl)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from rankereval import BinaryLabels, Rankings, Recall
    from rankereval._threads import effective_n_threads

    t0 = time.perf_counter()
    w = W.recsys(n_users=n_users, seed=3)
    gen = time.perf_counter() - t0
    t_lab, _, y_true = timed(lambda: BinaryLabels.from_matrix(w.labels), 1)
    t_rank, _, y_pred = timed(lambda: Rankings.from_ranked_indices(w.rankings), 1)
    metric = Recall(100)
    out = {"workload": w.description, "metric": "Recall@100", "generate_s": gen,
           "construction_s": {"labels": t_lab, "rankings": t_rank},
           "openmp": [i for i in threadpool_info() if i["user_api"] == "openmp"], "threads": {}}
    metric.score(y_true, y_pred)
    # 1 and 2 threads take turns, so that a slow spell of a noisy machine hits both alike
    times, seen = {1: [], 2: []}, {}
    for _ in range(repeats):
        for n in (1, 2):
            with threadpool_limits(limits=n, user_api="openmp"):
                seen[n] = effective_n_threads()
                times[n].append(timed(lambda: metric.score(y_true, y_pred), 1)[0])
    for n in (1, 2):
        t = statistics.median(times[n])
        out["threads"][str(n)] = {"median_s": t, "times_s": times[n], "omp_max_threads_seen": seen[n],
                                  "limit_effective": seen[n] == n}
        log(f"  {n} thread(s): {t * 1e3:.1f} ms (omp_get_max_threads() inside the limit: {seen[n]})")
    out["speedup_2_vs_1"] = out["threads"]["1"]["median_s"] / out["threads"]["2"]["median_s"]
    out["limit_effective"] = all(v["limit_effective"] for v in out["threads"].values())
    del w, y_true, y_pred
    gc.collect()
    return out


# ------------------------------------------------------------------------------------------
# report
# ------------------------------------------------------------------------------------------

def _ms(s):
    if s is None:
        return "-"
    ms = s * 1e3
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.2f}" if ms < 10 else f"{ms:.1f}"


def print_workload_table(res, out=print):
    libs = res["libraries"]
    names = list(libs)
    re_ = libs["rankereval"]
    width = 22
    out(f"\n== ({res['key']}) {res['description']}  [input {res['input_nbytes'] / 2**20:,.1f} MiB]")
    out("   time per call in ms, median of {} (peer conversions: of up to 3); (xN) = time / rankereval's time;"
        .format(res["repeats"]))
    out("   * = ran on the first `rows` rows, time extrapolated linearly to all rows")
    head = f"{'':<22}" + "".join(f"{n + ('*' if libs[n]['extrapolated'] else ''):>{width}}" for n in names)
    out(head)

    def row(label, cell):
        out(f"{label:<22}" + "".join(f"{cell(n):>{width}}" for n in names))

    row("rows", lambda n: f"{libs[n]['rows']:,}")
    row("threads", lambda n: str(libs[n]["threads"]))

    def tcell(n, get, ref):
        v = get(libs[n])
        if v is None:
            return "-"
        s = _ms(v)
        if n != "rankereval" and ref:
            s += f" (x{v / ref:,.0f})" if v / ref >= 10 else f" (x{v / ref:.1f})"
        return s

    ref_c = re_["construction"]["median_s"]
    row("construct/convert", lambda n: tcell(n, lambda d: d["construction"]["extrapolated_s"], ref_c))
    row("warm-up (20 rows)", lambda n: _ms(libs[n]["warmup_s"]))
    for label in re_["metrics"]:
        ref = re_["metrics"][label]["median_s"]
        row(label, lambda n: tcell(n, lambda d: d["metrics"][label]["extrapolated_s"] if label in d["metrics"] else None, ref))
    ref_t = re_["total_metrics_s"]
    row("sum of the metrics", lambda n: tcell(n, lambda d: d["total_metrics_extrapolated_s"], ref_t)
        if set(libs[n]["metrics"]) == set(re_["metrics"]) else "-")
    mem = res.get("memory", {})
    if mem:
        def mcell(n):
            m = mem.get(n)
            if not m:
                return "-"
            return f"{m['peak_extra_bytes'] / 2**20:,.0f} ({m['peak_extra_bytes'] / m['input_nbytes']:.1f}x)"
        row("peak MiB (x input)", mcell)
    c = re_["construction"]
    if "fresh_write_s" in c:
        calls = ", ".join(_ms(t) for t in c["rankings_times_s"])
        fresh = ", ".join(_ms(t) for t in c["fresh_write_times_s"])
        out(f"   rankereval construction: labels {_ms(c['labels_s'])} ms + rankings {_ms(c['rankings_s'])} ms "
            f"(calls: {calls}); for context, np.full of {c['fresh_write_bytes'] / 2**20:,.0f} MiB (the "
            f"rankings' storage; new memory, one thread) took {_ms(c['fresh_write_s'])} ms (calls: {fresh})")


def print_agreement(entries, out=print):
    out("\n== agreement with rankereval (per query unless noted)")
    out(f"{'workload':<8} {'peer':<20} {'metric':<18} {'peer measure':<13} {'compared on':<26} {'n':>7} {'max |diff|':>10}  status")
    for e in entries:
        diff = e.get("max_abs_diff")
        out(f"{e['workload']:<8} {e['peer']:<20} {e['metric']:<18} {e['peer_measure']:<13} "
            f"{e.get('compared', '-'):<26} {e['n_compared']:>7,} {'-' if diff is None else f'{diff:.1e}':>10}  {e['status']}"
            + (f"  [{e['note']}]" if e.get("note") else ""))


def print_latency(lat, out=print):
    out(f"\n== (c) latency: cold `python -c`, {lat['n_queries']} queries, first {lat['metric']} "
        f"(median of {lat['repeats']}; seconds)")
    out(f"{'':<26}{'import':>10}{'first call':>12}{'import+call':>13}{'process wall':>14}")
    for name, r in lat["libraries"].items():
        if name == "none":
            out(f"{'(python + numpy + scipy)':<26}{'-':>10}{'-':>12}{'-':>13}{r['wall_s']:>14.3f}")
            continue
        out(f"{name:<26}{r['import_s']:>10.3f}{r['first_call_s']:>12.3f}{r['total_s']:>13.3f}{r['wall_s']:>14.3f}")


def print_scaling(sc, out=print):
    t1, t2 = sc["threads"]["1"]["median_s"], sc["threads"]["2"]["median_s"]
    out(f"\n== thread scaling: {sc['metric']} on {sc['workload']}")
    out(f"   1 thread {t1 * 1e3:.1f} ms, 2 threads {t2 * 1e3:.1f} ms: speed-up {sc['speedup_2_vs_1']:.2f}; "
        f"threadpoolctl limit effective: {sc['limit_effective']}")


# ------------------------------------------------------------------------------------------
# main
# ------------------------------------------------------------------------------------------

def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", choices=sorted(W.SIZES), default="small", help="workload sizes (default: small)")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats per measurement; the median is reported")
    p.add_argument("--peers", default="all",
                   help=f"comma-separated peers to run ({', '.join(P.PEERS)}), 'all' (the installed ones) or 'none'")
    p.add_argument("--row-cap", action="append", default=[], metavar="[PEER=]N",
                   help="evaluate a peer on its first N rows only and extrapolate (repeatable; "
                        "without PEER= it applies to every peer)")
    p.add_argument("--workloads", default="recsys,ir", help="comma-separated: recsys (a), ir (b)")
    p.add_argument("--skip", default="", help="comma-separated parts to skip: memory, latency, scaling")
    p.add_argument("--name", default=None, help="results file name (default: the size)")
    p.add_argument("--results-dir", default=RESULTS_DIR)
    p.add_argument("--no-serial", action="store_true",
                   help=f"do not time the '{SERIAL}' column (rankereval with OpenMP limited to 1 thread)")
    p.add_argument("--quiet", action="store_true", help="print the tables only")
    # internal: memory measurement in a subprocess
    p.add_argument("--worker", choices=["memory"], help=argparse.SUPPRESS)
    p.add_argument("--workload", help=argparse.SUPPRESS)
    p.add_argument("--graded", type=int, default=0, help=argparse.SUPPRESS)
    p.add_argument("--data", help=argparse.SUPPRESS)
    p.add_argument("--lib", help=argparse.SUPPRESS)
    p.add_argument("--rows", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be >= 1")
    return args


def select_peers(spec):
    if spec == "none":
        return [], []
    wanted = P.PEERS if spec == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    unknown = [n for n in wanted if n not in P.LIBRARIES or n == "rankereval"]
    if unknown:
        raise SystemExit(f"unknown peer(s) {unknown}; choose from {P.PEERS}")
    have = [n for n in wanted if P.LIBRARIES[n].installed()]
    return have, [n for n in wanted if n not in have]


def row_caps(args):
    caps = dict(DEFAULT_ROW_CAPS[args.size])
    for item in args.row_cap:
        name, _, n = item.rpartition("=")
        if name:
            caps[name] = int(n)
        else:
            caps = {p: int(n) for p in P.PEERS}
    return caps


def environment():
    import scipy

    import rankereval

    env = {"python": platform.python_version(), "platform": platform.platform(), "numpy": np.__version__,
           "scipy": scipy.__version__, "rankereval": rankereval.__version__,
           "rankereval_path": os.path.dirname(os.path.abspath(rankereval.__file__)),
           "cpu_count": os.cpu_count(), "loadavg_start": os.getloadavg()}
    try:
        from threadpoolctl import threadpool_info

        env["threadpools"] = [{k: i.get(k) for k in ("user_api", "internal_api", "prefix", "num_threads")}
                              for i in threadpool_info()]
    except Exception:  # pragma: no cover
        pass
    return env


def main(argv=None):
    args = parse_args(argv)
    if args.worker == "memory":
        return worker_memory(args)

    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a, flush=True))
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    peers, missing = select_peers(args.peers)
    caps = row_caps(args)
    size = W.SIZES[args.size]
    t_start = time.perf_counter()
    result = {"name": args.name or args.size, "size": args.size, "repeats": args.repeats, "peers": peers,
              "peers_not_installed": missing, "row_caps": caps, "environment": environment(), "workloads": {},
              "agreement": []}
    log(f"rankereval {result['environment']['rankereval']} from {result['environment']['rankereval_path']}; "
        f"peers: {', '.join(peers) or 'none'}" + (f" (not installed: {', '.join(missing)})" if missing else ""))
    imports = {}
    for name in peers:
        t0 = time.perf_counter()
        __import__(P.LIBRARIES[name].module)
        if name == "torchmetrics":
            import torchmetrics.retrieval  # noqa: F401
        imports[name] = time.perf_counter() - t0
    result["import_s"] = imports

    with tempfile.TemporaryDirectory(prefix="rankereval-bench-") as tmp:
        for key, wname in (("a", "recsys"), ("b", "ir")):
            if wname not in args.workloads.split(","):
                continue
            t0 = time.perf_counter()
            w = W.make(wname, args.size)
            gen = time.perf_counter() - t0
            log(f"\n({key}) {w.description}: generated in {gen:.2f}s, input {w.input_nbytes / 2**20:.1f} MiB")
            spec_list = specs(w)
            res = {"key": key, "description": w.description, "params": w.params, "n_rows": w.n_rows,
                   "input_nbytes": w.input_nbytes, "generate_s": gen, "repeats": args.repeats,
                   "n_rows_without_relevant": int((w.n_relevant() == 0).sum()), "libraries": {}}
            re_lib = P.LIBRARIES["rankereval"]
            re_res, re_values, _ = bench_library(re_lib, w, w.n_rows, spec_list, args.repeats, log)
            res["libraries"]["rankereval"] = re_res
            re_state = re_lib.convert(w)
            if not args.no_serial:
                from threadpoolctl import threadpool_limits

                with threadpool_limits(limits=1, user_api="openmp"):
                    ser_res, ser_values, _ = bench_library(re_lib, w, w.n_rows, spec_list, args.repeats, log, SERIAL)
                res["libraries"][SERIAL] = ser_res
                result["agreement"] += [{
                    "workload": wname, "peer": SERIAL, "metric": label, "peer_measure": "same", "note": "",
                    "compared": "bit-identical (NaN = NaN)", "n_compared": int(w.n_rows), "tolerance": 0.0,
                    "max_abs_diff": float(np.nanmax(np.abs(ser_values[label] - re_values[label]), initial=0.0)),
                    "passed": bool(np.array_equal(ser_values[label], re_values[label], equal_nan=True)),
                } for label in re_values]
                for e in result["agreement"][-len(re_values):]:
                    e["status"] = "ok" if e["passed"] else "MISMATCH"
            for name in peers:
                lib = P.LIBRARIES[name]
                lib_specs = [s for s in spec_list if name in s.peers]
                if not lib_specs:
                    continue
                rows = min(caps.get(name, w.n_rows), w.n_rows)
                lib_res, values, ws = bench_library(lib, w, rows, lib_specs, args.repeats, log)
                res["libraries"][name] = lib_res
                result["agreement"] += agreement(wname, ws, name, lib_specs, values, re_state, re_values)
                del values, ws
                gc.collect()
            del re_state
            res["speedup"] = {
                name: {label: lib["metrics"][label]["extrapolated_s"] / re_res["metrics"][label]["median_s"]
                       for label in lib["metrics"]}
                | {"construction": lib["construction"]["extrapolated_s"] / re_res["construction"]["median_s"],
                   "sum_of_shared_metrics": sum(lib["metrics"][label]["extrapolated_s"] for label in lib["metrics"])
                   / sum(re_res["metrics"][label]["median_s"] for label in lib["metrics"])}
                for name, lib in res["libraries"].items() if name not in ("rankereval", SERIAL)}
            if "memory" not in skip:
                log("  peak memory (subprocess per library) ...")
                path = os.path.join(tmp, f"{wname}.npz")
                np.savez(path, **w.arrays())
                res["memory"] = {}
                for name in res["libraries"]:
                    if name == SERIAL:
                        continue
                    rows = res["libraries"][name]["rows"]
                    _, mem = run_child([os.path.abspath(__file__), "--worker", "memory", "--workload", wname,
                                        "--graded", str(int(w.graded)), "--data", path, "--lib", name,
                                        "--rows", str(rows)])
                    mem["peak_over_input"] = mem["peak_extra_bytes"] / mem["input_nbytes"]
                    res["memory"][name] = mem
                    log(f"    {name:<13} {mem['peak_extra_bytes'] / 2**20:8.1f} MiB over {mem['input_nbytes'] / 2**20:.1f} MiB input")
                os.remove(path)
            result["workloads"][wname] = res
            del w
            gc.collect()

        if "latency" not in skip:
            log("\n(c) latency (cold subprocesses) ...")
            result["latency"] = latency(["rankereval"] + peers, size["latency_queries"], min(args.repeats, 3), tmp, log)
    if "scaling" not in skip:
        log(f"\nthread scaling on {size['scaling_users']:,} users ...")
        result["thread_scaling"] = thread_scaling(size["scaling_users"], args.repeats, log)

    result["agreement_passed"] = all(e["passed"] is not False for e in result["agreement"])
    result["environment"]["loadavg_end"] = os.getloadavg()
    result["elapsed_s"] = time.perf_counter() - t_start

    print(f"\nrankereval {result['environment']['rankereval']}, size={args.size}, {os.cpu_count()} CPUs, "
          f"load average at start {result['environment']['loadavg_start'][0]:.2f}, at end "
          f"{result['environment']['loadavg_end'][0]:.2f}; peers not installed: {', '.join(missing) or 'none'}")
    for res in result["workloads"].values():
        print_workload_table(res)
    if result["agreement"]:
        print_agreement(result["agreement"])
    if "latency" in result:
        print_latency(result["latency"])
    if "thread_scaling" in result:
        print_scaling(result["thread_scaling"])
    os.makedirs(args.results_dir, exist_ok=True)
    path = os.path.join(args.results_dir, f"{result['name']}.json")
    with open(path, "w") as fh:
        json.dump(result, fh, indent=1, default=_json_default)
    print(f"\nagreement checks: {'all passed' if result['agreement_passed'] else 'FAILED'}; "
          f"results written to {path} ({result['elapsed_s']:.0f}s)")
    return 0 if result["agreement_passed"] else 1


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    return repr(o)


if __name__ == "__main__":
    sys.exit(main())
