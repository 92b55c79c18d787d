"""Speed and memory of the bootstrap engine (``rankereval.bootstrap.bootstrap_mean``).

Run from the repository root after building the extensions::

    python benchmarks/bench_bootstrap.py                 # 1M scores x 1000 resamples
    python benchmarks/bench_bootstrap.py --n 200000 --threads 1

Cases:

* ``continuous``: ``n`` uniform scores (all distinct): the general typed loop.
* ``few distinct``: ``n`` ReciprocalRank@10-like scores (11 distinct values): the exact
  multinomial shortcut.
* ``naive numpy``: the textbook ``x[rng.integers(n, size=(B, n))].mean(axis=1)``, on
  ``--n-small`` scores only (it needs 16 * n * B bytes), next to ``bootstrap_mean`` on the
  same data.

Time is the best of ``--repeat`` wall-clock runs, with the CPU time of that run (all threads:
on a busy machine, CPU time / threads estimates the wall time on an idle one); peak memory is
the peak of memory traced by ``tracemalloc`` during one run (NumPy reports its array buffers
to it), i.e. extra memory beyond the input scores. Compare numbers from one run, not across
machines.
"""
import argparse
import contextlib
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))

from rankereval.bootstrap import bootstrap_mean  # noqa: E402


def naive_bootstrap(x, n_resamples, confidence_level=0.95, random_state=None):
    """The O(n * B)-memory bootstrap that rankereval replaces."""
    rng = np.random.default_rng(random_state)
    means = x[rng.integers(0, x.size, size=(n_resamples, x.size))].mean(axis=1)
    alpha = (1 - confidence_level) / 2
    return np.percentile(means, [100 * alpha, 100 * (1 - alpha)])


def measure(func, repeat):
    """(best wall time in s, its CPU time in s, peak traced memory in MB) of ``func()``."""
    runs = []
    for _ in range(repeat):
        start, cpu_start = time.perf_counter(), time.process_time()
        func()
        runs.append((time.perf_counter() - start, time.process_time() - cpu_start))
    tracemalloc.start()
    try:
        func()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    wall, cpu = min(runs)
    return wall, cpu, peak / 2 ** 20


def reciprocal_ranks(n, rng):
    ranks = rng.geometric(0.3, size=n)
    return np.where(ranks <= 10, 1.0 / ranks, 0.0)


def thread_limit(threads):
    if not threads:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="openmp")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="scores (default 1e6)")
    parser.add_argument("--n-small", type=int, default=10_000,
                        help="scores for the naive comparison (default 1e4)")
    parser.add_argument("--resamples", type=int, default=1000, help="B (default 1000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs, best kept")
    parser.add_argument("--threads", type=int, default=0,
                        help="OpenMP threads (default: all available)")
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    big = rng.random(args.n)
    few = reciprocal_ranks(args.n, rng)
    small = rng.random(args.n_small)
    B = args.resamples

    cases = [
        ("continuous", "percentile", big, lambda: bootstrap_mean(big, B, random_state=1)),
        ("continuous", "bca", big, lambda: bootstrap_mean(big, B, method="bca", random_state=1)),
        ("few distinct (11)", "percentile", few, lambda: bootstrap_mean(few, B, random_state=1)),
        ("few distinct (11)", "bca", few,
         lambda: bootstrap_mean(few, B, method="bca", random_state=1)),
        ("continuous", "percentile", small, lambda: bootstrap_mean(small, B, random_state=1)),
        ("naive numpy n x B", "percentile", small, lambda: naive_bootstrap(small, B, random_state=1)),
    ]
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, threads: {args.threads or 'all'}, "
          f"B = {B}")
    header = (f"{'case':<20} {'method':<11} {'n':>10} {'wall (s)':>9} {'CPU (s)':>8} "
              f"{'peak MB':>8} {'wall ns/draw':>12}")
    print(header)
    print("-" * len(header))
    with thread_limit(args.threads):
        bootstrap_mean(small, 10, random_state=0)      # warm-up (thread pool start)
        for name, method, data, func in cases:
            wall, cpu, peak = measure(func, args.repeat)
            per_draw = wall / (data.size * B) * 1e9
            print(f"{name:<20} {method:<11} {data.size:>10} {wall:>9.3f} {cpu:>8.3f} "
                  f"{peak:>8.1f} {per_draw:>12.2f}")


if __name__ == "__main__":
    main()
