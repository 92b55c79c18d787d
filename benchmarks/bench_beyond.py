"""Benchmark of the beyond-accuracy metrics on workload (a), next to NDCG@10 in the same run.

Times, from the same arrays (median of ``--repeats``, calls of the metrics alternating so a
slow spell of the machine falls on all of them):

* NDCG@10 (the reference point), and each per-ranking metric's ``score``: Novelty@10,
  AveragePopularity@10, TailShare@10, IntraListDiversity@10 with 64-d dense features and with
  sparse (CSR) features (targets: each at most 2x NDCG@10; dense ILD@10 at most 0.5 s);
* each system-level metric's ``compute``: CatalogCoverage, DistributionalCoverage, GiniIndex
  (and its log2 rank discount) at k = 10 and k = 100 (target: at most 20 ms at k = 10);
* Serendipity@10 with the co-occurrence similarity of a synthetic history (8 items per user,
  drawn by popularity); building that similarity is timed apart;
* side by side on the first ``--recs-rows`` users, Microsoft Recommenders' pandas functions
  (``recommenders.evaluation.python_evaluation``) with rankereval's on the same slice, and
  the values of both, when ``recommenders`` is installed with the pandas < 3 it requires
  (its serendipity with ``item_cooccurrence_count``; with ``item_feature_vector`` on
  ``--recs-div-rows`` users, since it pairs every item it is given).

Writes ``benchmarks/results/beyond.json``; ``--table FILE`` prints the reStructuredText table
of ``docs/guide/performance.rst`` from such a file.
Usage: ``python benchmarks/bench_beyond.py [--size small|full] [--repeats 5]``.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def loadavg():
    try:
        return list(os.getloadavg())
    except OSError:
        return None


def inputs(n_items, seed=0):
    """Zipf-like popularity (every item seen at least once), its long tail, and item
    features: 64-d dense Gaussian, and sparse tags (5 of 1,000 per item)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    counts = np.floor(20_000.0 / (1.0 + rng.permutation(n_items)) ** 0.9) + 1.0
    dense = rng.standard_normal((n_items, 64))
    cols = np.stack([rng.choice(1000, size=5, replace=False) for _ in range(n_items)]) if n_items <= 1000 else \
        np.sort(rng.integers(0, 1000, size=(n_items, 5)), axis=1)
    tags = sp.csr_matrix((np.ones(cols.size), cols.ravel(), np.arange(0, cols.size + 1, 5)), shape=(n_items, 1000))
    tags.sum_duplicates()
    return counts, dense, tags


def run(args):
    import rankereval as rk

    w = workloads.make("recsys", args.size)
    y = rk.BinaryLabels.from_matrix(w.labels)
    r = rk.Rankings.from_ranked_indices(w.rankings)
    n_items = w.labels.shape[1]
    counts, dense, tags = inputs(n_items)
    p = counts / counts.max()
    tail = rk.long_tail_items(counts)
    t0 = time.perf_counter()
    ild_dense = rk.IntraListDiversity(10, dense)
    build_dense = time.perf_counter() - t0
    t0 = time.perf_counter()
    ild_sparse = rk.IntraListDiversity(10, tags)
    build_sparse = time.perf_counter() - t0
    history = synthetic_history(rk, counts, w.n_rows)
    t0 = time.perf_counter()
    cooc = rk.cooccurrence_similarity(history, n_items=n_items)
    build_cooc = time.perf_counter() - t0
    per_ranking = {
        "ndcg@10": (rk.NDCG(10), y),
        "novelty@10": (rk.Novelty(10, p), None),
        "arp@10": (rk.AveragePopularity(10, counts), None),
        "tailshare@10": (rk.TailShare(10, tail), None),
        "ild@10 (64-d dense)": (ild_dense, None),
        "ild@10 (sparse tags)": (ild_sparse, None),
        "serendipity@10 (co-occurrence)": (rk.Serendipity(10, history, cooc), y),
    }
    system = {
        f"{name}@{k}": m
        for k in (10, 100)
        for name, m in (("coverage", rk.CatalogCoverage(k, n_items)),
                        ("entropy", rk.DistributionalCoverage(k, n_items, normalize=True)),
                        ("gini", rk.GiniIndex(k, n_items)),
                        ("gini[log2]", rk.GiniIndex(k, n_items, discount="log2")))
    }
    calls = {**{n: (lambda m=m, lab=lab: m.score(lab, r)) for n, (m, lab) in per_ranking.items()},
             **{n: (lambda m=m: m.compute(r)) for n, m in system.items()}}
    warnings.simplefilter("ignore", rk.UndefinedMetricWarning)
    for f in calls.values():  # warm up
        f()
    times = {n: [] for n in calls}
    cpu = {n: [] for n in calls}  # CPU time of the process (all threads): less disturbed by a busy machine
    load_start = loadavg()
    for _ in range(args.repeats):
        for n, f in calls.items():
            c0, t0 = time.process_time(), time.perf_counter()
            f()
            times[n].append(time.perf_counter() - t0)
            cpu[n].append(time.process_time() - c0)
    median = {n: statistics.median(t) for n, t in times.items()}
    median_cpu = {n: statistics.median(t) for n, t in cpu.items()}
    res = {
        "name": "beyond", "workload": w.name, "n_rows": w.n_rows, "width": int(w.rankings.shape[1]),
        "n_items": int(n_items), "repeats": args.repeats,
        "environment": {"python": platform.python_version(), "numpy": np.__version__,
                        "rankereval": rk.__version__, "cpus": os.cpu_count(),
                        "load_start": load_start, "load_end": loadavg()},
        "per_ranking_s": {n: median[n] for n in per_ranking},
        "system_s": {n: median[n] for n in system},
        "cpu_s": median_cpu, "threads": rk._threads.effective_n_threads(),
        "ratio_to_ndcg10": {n: median[n] / median["ndcg@10"] for n in per_ranking},
        "build_s": {"ild dense (normalise 64-d features)": build_dense,
                    "ild sparse (normalise tags)": build_sparse,
                    f"cooccurrence_similarity ({cooc.nnz:,} pairs)": build_cooc},
        "times": times, "cpu_times": cpu,
        "values": {**{n: float(np.nanmean(f())) for n, f in calls.items() if n in per_ranking},
                   **{n: float(f()) for n, f in calls.items() if n in system}},
    }
    res["recommenders"] = recommenders_side_by_side(w, counts, dense, args)
    return res


def synthetic_history(rk, counts, n_users, per_user=8, seed=1):
    """Training interactions for Serendipity: ``per_user`` distinct items per user, drawn with
    probability proportional to ``counts``."""
    rng = np.random.default_rng(seed)
    p = counts / counts.sum()
    draws = rng.choice(counts.size, size=(n_users, 2 * per_user), p=p)
    rows = [np.unique(d)[:per_user] for d in draws]
    return rk.BinaryLabels.from_positive_indices(rows)


def recommenders_side_by_side(w, counts, dense, args):
    """Microsoft Recommenders' pandas implementations on the first rows, with rankereval's."""
    try:
        from recommenders.evaluation import python_evaluation as pe
    except ImportError:
        return None
    import pandas as pd

    if int(pd.__version__.split(".")[0]) >= 3:  # 1.2.1 requires pandas < 3: its values would be wrong
        print(f"Microsoft Recommenders skipped: it requires pandas < 3, {pd.__version__} is installed")
        return None

    import rankereval as rk

    n = min(args.recs_rows, w.n_rows)
    k = 10
    wh = w.head(n)
    reco_items = wh.rankings[:, :k]
    reco = pd.DataFrame({"userID": np.repeat(np.arange(n), k), "itemID": reco_items.ravel(),
                         "prediction": np.tile(np.arange(k, 0, -1), n).astype(float)})
    # training interactions: the labels of the slice stand in for them, without the pairs that
    # are recommended (Recommenders refuses a recommendation of an item the user has in train)
    import scipy.sparse as sp

    lab = wh.labels.tocoo()
    n_cat = w.labels.shape[1]
    keep = ~np.isin(lab.row.astype(np.int64) * n_cat + lab.col,
                    np.repeat(np.arange(n, dtype=np.int64), k) * n_cat + reco_items.ravel())
    rows, cols = lab.row[keep], lab.col[keep]
    train = pd.DataFrame({"userID": rows, "itemID": cols, "rating": 1.0})
    out = {"rows": n, "k": k, "version": getattr(__import__("recommenders"), "__version__", "?")}
    r = rk.Rankings.from_ranked_indices(reco_items)
    y_train = rk.BinaryLabels.from_matrix(sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n, n_cat)))
    train_items = np.unique(cols)
    # rankereval's side takes the same inputs: popularity from the training labels, the catalogue
    # of Recommenders' coverage = the items of the training data
    in_train = np.isin(reco_items, train_items)
    r_train = rk.Rankings.from_ranked_indices(
        [row[m] for row, m in zip(reco_items, in_train)])  # Recommenders drops items not in train
    cases = {
        "catalog_coverage": (lambda: pe.catalog_coverage(train, reco),
                             lambda: rk.CatalogCoverage(k, w.labels.shape[1]).compute(r)
                             * w.labels.shape[1] / train_items.size),
        "distributional_coverage": (lambda: pe.distributional_coverage(train, reco),
                                    lambda: rk.DistributionalCoverage(k).compute(r)),
        "novelty": (lambda: pe.novelty(train, reco),
                    lambda: novelty_over_recommendations(rk, y_train, r_train, n * k)),
    }
    for name, (theirs, ours) in cases.items():
        theirs()  # warm up
        t_theirs = statistics.median(_time(theirs) for _ in range(min(args.repeats, 3)))
        t_ours = statistics.median(_time(ours) for _ in range(args.repeats))
        out[name] = {"recommenders_s": t_theirs, "rankereval_s": t_ours,
                     "recommenders_value": float(theirs()), "rankereval_value": float(ours())}
    # diversity: Recommenders builds every pair of the items it is given (a cross join with a
    # Python cosine per pair), so it runs on a small slice, with the features of its items only
    m = min(args.recs_div_rows, n)
    small = reco[reco.userID < m]
    items = np.unique(small.itemID)
    feats = pd.DataFrame({"itemID": items, "features": list(dense[items])})
    t0 = time.perf_counter()
    theirs = pe.diversity(train, small, item_feature_df=feats, item_sim_measure="item_feature_vector")
    t_theirs = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = rk.IntraListDiversity(k, dense).mean(None, rk.Rankings.from_ranked_indices(reco_items[:m]),
                                                  nan_handling="drop")
    t_ours = time.perf_counter() - t0
    out["diversity"] = {"rows": m, "recommenders_s": t_theirs, "rankereval_s": t_ours,
                        "recommenders_value": float(theirs), "rankereval_value": float(ours),
                        "note": "rankereval's time includes building the metric (normalising all features)"}
    # serendipity, every item counting as relevant (Recommenders' default), over the synthetic
    # history of the per-ranking benchmark (popular items: they co-occur) without the recommended
    # items: the co-occurrence similarity, then feature vectors on the small slice
    h = synthetic_history(rk, counts, n)
    h_rows = np.repeat(np.arange(n), np.diff(h.indptr))
    h_keep = ~np.isin(h_rows.astype(np.int64) * n_cat + h.indices,
                      np.repeat(np.arange(n, dtype=np.int64), k) * n_cat + reco_items.ravel())
    ser_train = pd.DataFrame({"userID": h_rows[h_keep], "itemID": h.indices[h_keep].astype(np.int64)})
    y_hist = rk.BinaryLabels.from_matrix(sp.csr_matrix(
        (np.ones(int(h_keep.sum())), (h_rows[h_keep], h.indices[h_keep])), shape=(n, n_cat)))

    def ours_cooc():
        sim = rk.cooccurrence_similarity(y_hist, n_items=n_cat)
        return rk.Serendipity(k, y_hist, sim, relevance="ones").mean(None, r, nan_handling="drop")

    def theirs_cooc():
        return pe.serendipity(ser_train, reco[["userID", "itemID"]])

    theirs_cooc()  # warm up (its caches hold one frame: the next call computes again)
    t_theirs = statistics.median(_time(theirs_cooc) for _ in range(min(args.repeats, 3)))
    t_ours = statistics.median(_time(ours_cooc) for _ in range(args.repeats))
    out["serendipity"] = {"recommenders_s": t_theirs, "rankereval_s": t_ours,
                          "recommenders_value": float(theirs_cooc()), "rankereval_value": float(ours_cooc()),
                          "note": "rankereval's time includes building the co-occurrence similarity"}
    m = min(args.recs_div_rows, n) // 5 or 1
    small_train = ser_train[ser_train.userID < m]
    items = np.unique(np.concatenate([reco_items[:m].ravel(), small_train.itemID.to_numpy()]))
    feats = pd.DataFrame({"itemID": items, "features": list(dense[items])})
    t0 = time.perf_counter()
    theirs = pe.serendipity(small_train, reco[reco.userID < m][["userID", "itemID"]], item_feature_df=feats,
                            item_sim_measure="item_feature_vector")
    t_theirs = time.perf_counter() - t0
    # rankereval on the same items, numbered 0 .. len(items) - 1 (their features only, as Recommenders')
    hist = [np.searchsorted(items, small_train.itemID[small_train.userID == u].to_numpy()) for u in range(m)]
    reco_small = np.searchsorted(items, reco_items[:m])
    t0 = time.perf_counter()
    ours = rk.Serendipity(k, rk.BinaryLabels.from_positive_indices(hist), rk.feature_similarity(dense[items]),
                          relevance="ones").mean(None, rk.Rankings.from_ranked_indices(reco_small), nan_handling="drop")
    t_ours = time.perf_counter() - t0
    out["serendipity (item_feature_vector)"] = {
        "rows": m, "recommenders_s": t_theirs, "rankereval_s": t_ours, "recommenders_value": float(theirs),
        "rankereval_value": float(ours),
        "note": "rankereval's time includes the cosine similarity of those items"}
    return out


def novelty_over_recommendations(rk, y_train, r, n_recommendations):
    """Recommenders' novelty: choice-model self-information summed over all recommendations
    of items seen in training (``r`` holds only those), divided by all recommendations."""
    k = r.indices.shape[1]
    per_user = rk.Novelty(k, rk.popularity_from(y_train, scale="interactions")).score(None, r)
    lengths = np.minimum(r.lengths, k)
    return float(np.nansum(per_user * lengths) / n_recommendations)


def _time(f):
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def table(res):
    """The reStructuredText table of docs/guide/performance.rst."""
    ms = lambda s: f"{s * 1e3:.1f}"  # noqa: E731
    lines = [
        f".. list-table:: Beyond-accuracy metrics on workload (a), {res['n_rows']:,} rankings x top-"
        f"{res['width']} of {res['n_items']:,} items (``results/beyond.json``, median of {res['repeats']})",
        "   :header-rows: 1",
        "   :widths: 40 15 15 15",
        "",
        "   * - metric",
        "     - ms",
        "     - x NDCG\\@10",
        f"     - CPU ms ({res.get('threads', '?')} threads)",
    ]
    cpu = res.get("cpu_s", {})
    for name, s in res["per_ranking_s"].items():
        lines += [f"   * - ``{name}``", f"     - {ms(s)}", f"     - {res['ratio_to_ndcg10'][name]:.2f}",
                  f"     - {ms(cpu[name]) if name in cpu else ''}"]
    for name, s in res["system_s"].items():
        lines += [f"   * - ``{name}`` (system-level)", f"     - {ms(s)}", "     - ",
                  f"     - {ms(cpu[name]) if name in cpu else ''}"]
    env = res["environment"]
    lines.append("")
    build = "; ".join(f"{k}: {ms(v)} ms" for k, v in res["build_s"].items())
    lines.append(f"Building the diversity metrics (once, not in the times above): {build}.")
    if env.get("load_start") and env.get("load_end"):
        lines.append(f"Load average of the machine ({env['cpus']} CPUs): {env['load_start'][0]:.1f} at the start, "
                     f"{env['load_end'][0]:.1f} at the end.")
    recs = res.get("recommenders")
    if recs:
        lines += ["", f".. list-table:: Microsoft Recommenders {recs['version']} (pandas) and rankereval on the "
                      f"first {recs['rows']:,} users, top {recs['k']}",
                  "   :header-rows: 1", "   :widths: 30 15 15 20 20", "",
                  "   * - function", "     - Recommenders ms", "     - rankereval ms",
                  "     - Recommenders value", "     - rankereval value"]
        for name in ("catalog_coverage", "distributional_coverage", "novelty", "diversity", "serendipity",
                     "serendipity (item_feature_vector)"):
            if name not in recs:  # (results written before serendipity)
                continue
            c = recs[name]
            rows = f" ({c['rows']:,} users)" if "rows" in c else ""
            lines += [f"   * - ``{name}``{rows}", f"     - {ms(c['recommenders_s'])}", f"     - {ms(c['rankereval_s'])}",
                      f"     - {c['recommenders_value']:.6f}", f"     - {c['rankereval_value']:.6f}"]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", choices=("tiny", "small", "full"), default="full")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--recs-rows", type=int, default=20_000,
                   help="users of the side-by-side run with Microsoft Recommenders")
    p.add_argument("--recs-div-rows", type=int, default=100,
                   help="users of the diversity comparison (Recommenders pairs every item it is given)")
    p.add_argument("--results-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    p.add_argument("--table", metavar="FILE", help="print the docs table from a results file and exit")
    args = p.parse_args(argv)
    if args.table:
        with open(args.table) as fh:
            print(table(json.load(fh)))
        return
    res = run(args)
    os.makedirs(args.results_dir, exist_ok=True)
    path = os.path.join(args.results_dir, "beyond.json")
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"wrote {path}")
    print(table(res))


if __name__ == "__main__":
    main()
