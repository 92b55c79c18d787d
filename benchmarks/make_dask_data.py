"""Write the seeded scale data set of ``bench_dask.py``: users x top-k rankings plus labels.

Layout (why): two Parquet datasets, ``labels/`` and ``run/``, with the same file names;
file ``part-NNNNN.parquet`` of both holds the same contiguous range of users, so that a
file pair is one partition of whole queries (no shuffle) and any slice of files is a
smaller data set. One row per user, *nested*: ``run`` has ``query`` (int64) and ``item``
(list<int32>, ranked, best first), ``labels`` has ``query`` and ``item`` (list<int32>, the
relevant items, sorted). Against the long layout (one row per (user, item)) this stores no
repeated user id and no rank column, and reads straight into the kernels' padded arrays
(an Arrow list's values are the ``(n_users, k)`` array) instead of mapping ids and sorting
2 billion (user, item) rows. Item ids are random, so the run compresses to about
2.6 bytes per id with zstd (~5.5 GB for 20M x 100).

Content, per user (NumPy ``PCG64`` seeded with ``(seed, file number)``, so every file, and
every slice of files, is reproducible on its own): ``k`` distinct items of ``n_items``
(``c + a * r`` modulo the largest prime below ``n_items`` for ranks ``r``, with a random
start ``c`` and step ``a`` per user: cheap to draw, distinct, spread over all items); the item at rank ``r`` (0-based) is relevant with probability
``0.2 * 0.97 ** r``; plus 4 relevant items drawn from all items (about 10 relevant items
per user, 6 of them ranked).

Usage::

    python benchmarks/make_dask_data.py --out /work/data-dask --users 20000000
    python benchmarks/make_dask_data.py --out /tmp/small --users 100000 --users-per-file 25000
"""
import argparse
import json
import os
import time

import numpy as np


def _largest_prime_below(n):
    p = n - 1
    while p > 2 and any(p % d == 0 for d in range(2, int(p ** 0.5) + 1)):
        p -= 1
    return p


def user_block(seed, file_no, first_user, n_users, n_items, k, extra=4):
    """(query ids, run items (n_users, k) int32, label offsets, label items) of one file."""
    rng = np.random.default_rng([seed, file_no])
    # k distinct items per user: c + a * r modulo the largest prime below n_items, for the
    # ranks r = 0 .. k - 1, with a random start c and a random step a != 0 per user (a step
    # is invertible modulo a prime, so the k items are distinct); one multiply per item
    prime = _largest_prime_below(n_items)
    a = rng.integers(1, prime, size=(n_users, 1), dtype=np.int64)
    c = rng.integers(0, prime, size=(n_users, 1), dtype=np.int64)
    run = ((c + a * np.arange(k, dtype=np.int64)) % prime).astype(np.int32)
    relevant = rng.random((n_users, k)) < 0.2 * 0.97 ** np.arange(k)
    rows = np.concatenate([np.nonzero(relevant)[0], np.repeat(np.arange(n_users), extra)])
    cols = np.concatenate([run[relevant], rng.integers(0, n_items, size=n_users * extra)])
    pairs = np.unique(rows.astype(np.int64) * n_items + cols)      # sorted, no duplicates
    lab_rows, lab_items = pairs // n_items, (pairs % n_items).astype(np.int32)
    offsets = np.zeros(n_users + 1, dtype=np.int32)
    np.cumsum(np.bincount(lab_rows, minlength=n_users), out=offsets[1:])
    queries = np.arange(first_user, first_user + n_users, dtype=np.int64)
    return queries, run, offsets, lab_items


def write(out, n_users, n_items, k, users_per_file, seed, compression="zstd"):
    import pyarrow as pa
    import pyarrow.parquet as pq

    for side in ("labels", "run"):
        os.makedirs(os.path.join(out, side), exist_ok=True)
    n_files = -(-n_users // users_per_file)
    t0 = time.perf_counter()
    for f in range(n_files):
        first = f * users_per_file
        n = min(users_per_file, n_users - first)
        queries, run, offsets, lab_items = user_block(seed, f, first, n, n_items, k)
        name = f"part-{f:05d}.parquet"
        run_items = pa.ListArray.from_arrays(
            pa.array(np.arange(0, n * k + 1, k, dtype=np.int32)), pa.array(run.ravel()))
        pq.write_table(pa.table({"query": queries, "item": run_items}),
                       os.path.join(out, "run", name), compression=compression)
        lab = pa.ListArray.from_arrays(pa.array(offsets), pa.array(lab_items))
        pq.write_table(pa.table({"query": queries, "item": lab}),
                       os.path.join(out, "labels", name), compression=compression)
        print(f"\r{f + 1}/{n_files} files, {time.perf_counter() - t0:.0f} s", end="", flush=True)
    print()
    size = sum(os.path.getsize(os.path.join(root, x)) for root, _, names in os.walk(out) for x in names)
    meta = {"n_users": n_users, "n_items": n_items, "k": k, "users_per_file": users_per_file,
            "n_files": n_files, "seed": seed, "compression": compression, "bytes": size,
            "write_seconds": time.perf_counter() - t0}
    with open(os.path.join(out, "dataset.json"), "w") as fh:
        json.dump(meta, fh, indent=2)
    return meta


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--users", type=int, default=20_000_000)
    p.add_argument("--items", type=int, default=1_000_000)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--users-per-file", type=int, default=250_000)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args(argv)
    meta = write(a.out, a.users, a.items, a.k, a.users_per_file, a.seed)
    print(json.dumps(meta, indent=2))


if __name__ == "__main__":
    main()
