"""Evaluating during training: rankereval.Accumulator batch by batch, next to one call and torchmetrics.

Workload (issue 34): ``--users`` x ``--items`` float32 scores (standard normal, PCG64 seed 0,
plus 2.0 on each user's relevant items), ``--exclusions`` training interactions excluded (CSR,
seed 1), 1-20 relevant test items per user (seed 2, never a training item); NDCG@10,
Recall@100 and MRR@10 with 95% Poisson-bootstrap intervals (``--boot`` resamples), every
user's query id its row number. Cases, in turns (``--repeats`` rounds, the median reported):

* **one call**: ``Rankings.from_scores`` over the whole matrix (k = 100, training items
  excluded) + ``evaluate(..., conf_interval=True, resampling="poisson")``;
* **accumulator**: the same matrix in batches of ``--batch`` rows, each ranked by
  ``Accumulator.update`` (its ``invalid_items`` is the training matrix, rows picked by query
  id), then ``compute()``; its means and intervals must equal the one call's bit for bit;
* **torchmetrics** ``RetrievalNormalizedDCG(top_k=10)``, ``RetrievalRecall(top_k=100)``,
  ``RetrievalMRR(top_k=10)`` on the same batches, fed the cheapest correct way: per batch a
  copy of the scores with the training items set to -inf, ``torch.topk`` (k = 100), the
  labels of the 100 items, and each user's relevant items outside the top 100 with a score
  below them (Recall's and NDCG's denominators need them); ``update`` per batch, ``compute``
  at the end. No intervals (torchmetrics has none). Its means are compared with rankereval's
  (the definitions coincide for binary labels: linear gains, ideal DCG over every relevant
  item, reciprocal rank 0 beyond the cutoff).

Time: wall seconds and the CPU seconds of the process (all threads; less disturbed by other
processes on a shared machine than the wall time). Peak memory, each case in a fresh process after the inputs are made (memory freed by an
earlier case would hide a peak): the resident high-water mark above the resident memory before
the case (``/proc/self/clear_refs``, ``VmHWM``: it sees C/C++ allocations, but not what reuses
pages the process already had), and the peak of the allocations ``tracemalloc`` traces (NumPy
arrays and Python objects, not C++ scratch). The accumulator's is also measured with ``--long-batches`` batches of the same size
(the batches' rows taken again with new query ids): its state does not grow with the number of
batches, apart from 8 bytes per query id for the check that no query comes twice.

The machine may be shared: ratios come from the same run, cases taking turns.

Usage::

    python benchmarks/bench_accumulator.py                     # the issue's workload
    python benchmarks/bench_accumulator.py --users 2000 --items 3000 --batch 100 --repeats 1
    python benchmarks/bench_accumulator.py --table benchmarks/published/accumulator.json
"""
import argparse
import gc
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

METRICS = ["ndcg@10", "recall@100", "mrr@10"]
K = 100


def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return None


def peak_extra(func):
    """``(wall seconds, CPU seconds of the process, peak resident bytes above the start,
    result)`` of one call (the peak on Linux; None elsewhere)."""
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        base = status("VmRSS")
    except OSError:
        base = None
    c0, t0 = time.process_time(), time.perf_counter()
    out = func()
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = status("VmHWM") if base is not None else None
    return seconds, cpu, (None if base is None else max(0, peak - base)), out


def memory_child(args):
    """``--memory-case``: the case's peak extra memory in this fresh process (freed memory of
    earlier cases would hide it), printed as the last line."""
    from rankereval import BinaryLabels

    scores, train, rel = make_data(args)
    labels = BinaryLabels.from_matrix(rel)
    func = {"one call": lambda: one_call(scores, train, labels, args),
            "accumulator": lambda: accumulate(scores, train, labels, args),
            "accumulator, long": lambda: accumulate(scores, train, labels, args, n_batches=args.long_batches),
            "torchmetrics": lambda: torchmetrics_batches(scores, train, rel, args)}[args.memory_case]
    # imports and thread pools first, by a call on a tiny problem (5 users x 200 items, 10
    # resamples: no buffer of the case's sizes is left in the heap), not counted
    tiny = argparse.Namespace(**{**vars(args), "boot": 10, "batch": 2})
    if args.memory_case == "torchmetrics":
        torchmetrics_batches(scores[:5, :200], train[:5, :200], rel[:5, :200], tiny)
    else:
        one_call(scores[:5, :200], train[:5, :200], labels[:5], tiny)
        accumulate(scores[:5, :200], train[:5, :200], labels[:5], tiny)
    import tracemalloc

    tracemalloc.start()
    rss = peak_extra(func)[2]
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    print(json.dumps([rss, traced]))
    return 0


def memory_in_child(args, case):
    import subprocess

    if not os.path.exists("/proc/self/clear_refs"):
        return None
    argv = [sys.executable, os.path.abspath(__file__), "--memory-case", case, "--users", str(args.users),
            "--items", str(args.items), "--exclusions", str(args.exclusions), "--batch", str(args.batch),
            "--long-batches", str(args.long_batches), "--boot", str(args.boot)]
    out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode:
        print(f"  memory of {case}: failed\n{out.stderr[-2000:]}")
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_data(args):
    import scipy.sparse as sp

    n, m = args.users, args.items
    scores = np.random.default_rng(0).standard_normal((n, m), dtype=np.float32)
    r1 = np.random.default_rng(1)
    rows, cols = r1.integers(0, n, args.exclusions), r1.integers(0, m, args.exclusions)
    train = sp.csr_array((np.ones(args.exclusions, dtype=np.float32), (rows, cols)), shape=(n, m))
    train.sum_duplicates()
    r2 = np.random.default_rng(2)
    counts = r2.integers(1, 21, n)
    lab_rows = np.repeat(np.arange(n), counts)
    lab_cols = r2.integers(0, m, lab_rows.size)
    keep = np.asarray(train[lab_rows, lab_cols]).ravel() == 0          # never a training item
    rel = sp.csr_array((np.ones(int(keep.sum()), dtype=bool), (lab_rows[keep], lab_cols[keep])), shape=(n, m))
    rel.sum_duplicates()
    missing = np.flatnonzero(np.diff(rel.indptr) == 0)                # every user has one relevant item
    if missing.size:
        extra = sp.csr_array((np.ones(missing.size, dtype=bool), (missing, np.zeros(missing.size, dtype=np.int64))),
                             shape=(n, m))
        rel = (rel + extra).astype(bool)
        train = train.tolil()
        train[missing, 0] = 0
        train = sp.csr_array(train)
        train.eliminate_zeros()
    r, c = rel.nonzero()
    scores[r, c] += 2.0
    return scores, train, rel


def one_call(scores, train, labels, args):
    from rankereval import Rankings, evaluate

    y_pred = Rankings.from_scores(scores, k=K, invalid_items=train)
    return evaluate(labels, y_pred, METRICS, conf_interval=True, n_resamples=args.boot,
                    resampling="poisson", random_state=0, query_ids=np.arange(scores.shape[0]))


def accumulate(scores, train, labels, args, n_batches=None):
    from rankereval import Accumulator

    n, b = scores.shape[0], args.batch
    blocks = [(a, min(a + b, n)) for a in range(0, n, b)]
    n_batches = len(blocks) if n_batches is None else n_batches
    acc = Accumulator(METRICS, invalid_items=None if n_batches > len(blocks) else train, conf_interval=True,
                      n_resamples=args.boot, random_state=0)
    for i in range(n_batches):
        a, z = blocks[i % len(blocks)]
        ids = np.arange(a, z) + (i // len(blocks)) * n      # new ids when the rows come again
        if n_batches > len(blocks):
            acc.update(scores[a:z], labels[a:z], query_ids=ids, invalid_items=train[a:z])
        else:
            acc.update(scores[a:z], labels[a:z], query_ids=ids)
    return acc.compute(), sum(v.nbytes for v in acc.state_dict().values())


def torchmetrics_batches(scores, train, rel, args):
    import torch
    import torchmetrics.retrieval as tr

    n, b = scores.shape[0], args.batch
    metrics = {"ndcg@10": tr.RetrievalNormalizedDCG(top_k=10), "recall@100": tr.RetrievalRecall(top_k=K),
               "mrr@10": tr.RetrievalMRR(top_k=10)}
    for a in range(0, n, b):
        z = min(a + b, n)
        s = torch.from_numpy(scores[a:z]).clone()
        t = train[a:z]
        s[torch.from_numpy(np.repeat(np.arange(z - a), np.diff(t.indptr))), torch.from_numpy(t.indices.astype(np.int64))] = -np.inf
        values, items = torch.topk(s, K, dim=1)
        lab = rel[a:z]
        dense = torch.from_numpy(lab.toarray())
        hit = torch.gather(dense, 1, items)
        # relevant items outside the top 100, scored below every ranked one
        in_top = torch.zeros_like(dense)
        in_top.scatter_(1, items, True)
        out_r, out_c = torch.nonzero(dense & ~in_top, as_tuple=True)
        preds = torch.cat([values.reshape(-1), torch.full((out_r.numel(),), -1e30)])
        target = torch.cat([hit.reshape(-1), torch.ones(out_r.numel(), dtype=torch.bool)])
        indexes = torch.cat([torch.arange(a, z).repeat_interleave(K), out_r + a])
        del out_c
        for metric in metrics.values():
            metric.update(preds, target, indexes=indexes)
    return {name: float(metric.compute()) for name, metric in metrics.items()}


def loadavg():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def run(args):
    from rankereval import BinaryLabels
    import rankereval

    print(f"rankereval {rankereval.__version__} ({os.path.dirname(rankereval.__file__)}), numpy {np.__version__}, "
          f"{os.cpu_count()} CPUs, load {loadavg()}")
    scores, train, rel = make_data(args)
    labels = BinaryLabels.from_matrix(rel)
    print(f"scores {scores.shape[0]} x {scores.shape[1]} float32 ({scores.nbytes / 2**20:.0f} MiB), "
          f"{train.nnz} training items excluded, {rel.nnz} relevant items; batches of {args.batch}")
    try:
        import torch
        import torchmetrics
        versions = {"torch": torch.__version__, "torchmetrics": torchmetrics.__version__}
        torch_threads = torch.get_num_threads()
    except ImportError:
        torch = None
        versions, torch_threads = {}, None
    if args.skip_torchmetrics:
        torch = None
    res = {"config": {"users": args.users, "items": args.items, "exclusions": int(train.nnz), "relevant": int(rel.nnz),
                      "batch": args.batch, "long_batches": args.long_batches, "boot": args.boot, "k": K,
                      "metrics": METRICS, "repeats": args.repeats},
           "versions": {"python": platform.python_version(), "numpy": np.__version__,
                        "rankereval": rankereval.__version__, **versions},
           "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine(),
                       "torch_threads": torch_threads, "load_start": loadavg()},
           "cases": {}}
    cases = {
        "one call": lambda: one_call(scores, train, labels, args),
        "accumulator": lambda: accumulate(scores, train, labels, args),
    }
    if not args.skip_one_thread:
        from threadpoolctl import threadpool_limits

        def one_thread(func):
            def call():
                with threadpool_limits(1, user_api="openmp"):
                    return func()
            return call

        cases["one call, 1 thread"] = one_thread(cases["one call"])
        cases["accumulator, 1 thread"] = one_thread(cases["accumulator"])
    if torch is not None:
        cases["torchmetrics"] = lambda: torchmetrics_batches(scores, train, rel, args)
    one_call(scores[:200], train[:200], labels[:200], args)            # warm-up: thread pools, imports
    out = {}
    for r in range(args.repeats):
        for name, func in cases.items():
            seconds, cpu, _, result = peak_extra(func)
            entry = res["cases"].setdefault(name, {"times_s": [], "cpu_s": []})
            entry["times_s"].append(seconds)
            entry["cpu_s"].append(cpu)
            out[name] = result
            print(f"  round {r + 1}: {name:12s} {seconds:7.3f} s (CPU {cpu:.3f} s)", flush=True)
    seconds, cpu, _, (ev_long, state_long) = peak_extra(
        lambda: accumulate(scores, train, labels, args, n_batches=args.long_batches))
    res["cases"]["accumulator, long"] = {"times_s": [seconds], "cpu_s": [cpu], "batches": args.long_batches,
                                         "rankings": ev_long.n_rankings, "state_bytes": state_long}
    print(f"  accumulator over {args.long_batches} batches: {seconds:.3f} s (CPU {cpu:.3f} s), "
          f"state {state_long / 2**20:.2f} MiB", flush=True)
    del scores, train, rel, labels
    gc.collect()
    for name, entry in res["cases"].items():
        entry["median_s"] = statistics.median(entry["times_s"])
        entry["median_cpu_s"] = statistics.median(entry["cpu_s"])
        if name.endswith("1 thread"):
            continue
        rss, traced = memory_in_child(args, name) or (None, None)
        entry["peak_extra_mib"] = None if rss is None else rss / 2**20
        entry["traced_peak_mib"] = None if traced is None else traced / 2**20
        print(f"  peak extra memory of {name} (a fresh process): resident "
              f"{'?' if rss is None else f'{rss / 2**20:.1f} MiB'}, traced "
              f"{'?' if traced is None else f'{traced / 2**20:.1f} MiB'}", flush=True)
    ref = out["one call"]
    ev, state_bytes = out["accumulator"]
    res["cases"]["accumulator"]["state_bytes"] = state_bytes
    res["cases"]["accumulator"]["batches"] = -(-args.users // args.batch)
    same = all(ev.means[c] == ref.means[c] and ev.conf_intervals[c] == ref.conf_intervals[c] for c in ref.names)
    res["values"] = {"rankereval": {c: {"mean": ref.means[c], "conf_interval": list(ref.conf_intervals[c])}
                                    for c in ref.names},
                     "accumulator_equals_one_call_bit_for_bit": bool(same)}
    if "torchmetrics" in out:
        # the columns of the one call, in the order of METRICS (named as given, or canonically)
        res["values"]["torchmetrics"] = out["torchmetrics"]
        res["values"]["max_abs_diff_torchmetrics"] = max(abs(out["torchmetrics"][c] - ref.means[name])
                                                          for c, name in zip(METRICS, ref.names))
    res["machine"]["load_end"] = loadavg()
    print(table(res))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump(res, fh, indent=1)
        print(f"wrote {args.json}")
    return 0 if same else 1


def table(res):
    """The reStructuredText table of docs/guide/performance.rst."""
    cfg, cases = res["config"], res["cases"]
    one, one_cpu = cases["one call"]["median_s"], cases["one call"]["median_cpu_s"]
    rows = [("one call: from_scores + evaluate", "one call", None),
            (f"Accumulator, {cases['accumulator']['batches']} batches of {cfg['batch']:_}".replace("_", " "),
             "accumulator", None),
            (f"Accumulator, {cases['accumulator, long']['batches']} batches (the rows again, new ids)",
             "accumulator, long", None)]
    if "one call, 1 thread" in cases:
        rows += [("one call, 1 thread", "one call, 1 thread", None),
                 ("Accumulator, 1 thread", "accumulator, 1 thread", None)]
    if "torchmetrics" in cases:
        rows.append((f"torchmetrics, {cases['accumulator']['batches']} batches (no intervals)", "torchmetrics", None))
    lines = [
        f".. list-table:: {cfg['users']:_} users x {cfg['items']:_} items, float32, {cfg['exclusions']:_} training "
        f"items excluded; NDCG@10, Recall@100, MRR@10 with {cfg['boot']:_}-resample intervals "
        f"(median of {cfg['repeats']})".replace("_", " "),
        "   :header-rows: 1",
        "   :widths: 40 12 14 20 14",
        "",
        "   * - case",
        "     - seconds",
        "     - per ranking / one call's",
        "     - CPU s (per ranking / one call's)",
        "     - peak extra memory: resident / traced",
    ]
    for label, key, _ in rows:
        c = cases[key]
        mib, traced = c.get("peak_extra_mib"), c.get("traced_peak_mib")
        rankings = c.get("rankings", cfg["users"])
        per = (c["median_s"] / rankings) / (one / cfg["users"])
        per_cpu = (c["median_cpu_s"] / rankings) / (one_cpu / cfg["users"])
        lines += [f"   * - {label}", f"     - {c['median_s']:.2f}", f"     - {per:.2f}x",
                  f"     - {c['median_cpu_s']:.2f} ({per_cpu:.2f}x)",
                  f"     - {'—' if mib is None else f'{mib:.1f} / {traced:.1f} MiB'}"]
    lines.append("")
    if "one call, 1 thread" in cases:
        a1, o1 = cases["accumulator, 1 thread"], cases["one call, 1 thread"]
        lines.append(f"On one thread the accumulator takes {a1['median_s'] / o1['median_s']:.2f}x the one call's "
                     f"time ({a1['median_cpu_s'] / o1['median_cpu_s']:.2f}x its CPU time).")
    acc, long = cases["accumulator"], cases["accumulator, long"]
    lines.append(f"The accumulator's state: {acc['state_bytes'] / 2**20:.2f} MiB after {acc['batches']} batches, "
                 f"{long['state_bytes'] / 2**20:.2f} MiB after {long['batches']} (of which 8 bytes per query id "
                 "for the check that no query comes twice). Its means and intervals "
                 + ("equal the one call's bit for bit." if res["values"]["accumulator_equals_one_call_bit_for_bit"]
                    else "DIFFER from the one call's."))
    if "max_abs_diff_torchmetrics" in res["values"]:
        lines.append(f"torchmetrics' means differ from rankereval's by at most "
                     f"{res['values']['max_abs_diff_torchmetrics']:.1e}.")
    mach, ver = res["machine"], res["versions"]
    if mach.get("load_start") and mach.get("load_end"):
        lines.append(f"Load average of the machine ({mach['cpus']} CPUs): {mach['load_start'][0]:.1f} at the start "
                     f"of the run, {mach['load_end'][0]:.1f} at the end"
                     + (f"; torch {ver['torch']} ({mach['torch_threads']} threads), torchmetrics "
                        f"{ver['torchmetrics']}." if "torch" in ver else "."))
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--users", type=int, default=20000)
    p.add_argument("--items", type=int, default=20000)
    p.add_argument("--exclusions", type=int, default=1_000_000)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--long-batches", type=int, default=200)
    p.add_argument("--boot", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--skip-torchmetrics", action="store_true")
    p.add_argument("--skip-one-thread", action="store_true", help="no 1-thread rows (threadpoolctl)")
    p.add_argument("--json", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                                                  "accumulator.json"))
    p.add_argument("--table", metavar="JSON", help="print the docs' table from a run's JSON and exit")
    p.add_argument("--memory-case", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.memory_case:
        return memory_child(args)
    if args.table:
        with open(args.table) as fh:
            print(table(json.load(fh)))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
