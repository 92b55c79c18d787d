"""Smoke test of the benchmark suite (``benchmarks/run.py``), so that it never rots.

Runs the suite at ``--size tiny`` with one repeat, in this process, against the peers of
the test extras that are installed (pytrec_eval, scikit-learn), and checks the structure of
the JSON it writes and that every agreement check with the peers passed. The subprocess
parts (peak memory, cold-start latency) and thread scaling run in a second, rankereval-only
run on one workload (subprocesses importing peers are slow on busy CI machines).
"""
import importlib.util
import json
import os
import sys

import pytest

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "benchmarks")
RUN_PY = os.path.join(BENCH, "run.py")

pytestmark = pytest.mark.skipif(not os.path.exists(RUN_PY), reason="benchmarks/ not shipped")


@pytest.fixture(scope="module")
def bench():
    saved = list(sys.path)
    spec = importlib.util.spec_from_file_location("rankereval_benchmarks_run", RUN_PY)
    module = importlib.util.module_from_spec(spec)
    try:
        # puts benchmarks/ on sys.path for its helper modules, and the checkout if it holds
        # an in-place build (run.py benchmarks that one); keep only the latter
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = [p for p in sys.path if p in saved or p == getattr(module, "ROOT", None)]
    return module


def _installed(name):
    return importlib.util.find_spec(name) is not None


def _run(bench, tmp_path, *args):
    code = bench.main(["--size", "tiny", "--repeats", "1", "--quiet", "--results-dir", str(tmp_path),
                       "--name", "smoke", *args])
    with open(tmp_path / "smoke.json") as fh:
        return code, json.load(fh)


def test_workloads_with_peers(bench, tmp_path, capsys):
    peers = [p for p, mod in (("pytrec_eval", "pytrec_eval"), ("sklearn", "sklearn")) if _installed(mod)]
    # the peers on 100 rows a workload (the rest extrapolated): the agreement checks and the
    # report's shape are the point here, not the peers' speed on 1,000 users
    code, res = _run(bench, tmp_path, "--peers", ",".join(peers) or "none", "--skip", "memory,latency,scaling",
                     "--row-cap", "100")
    out = capsys.readouterr().out
    assert code == 0, out

    assert {"name", "size", "repeats", "peers", "environment", "workloads", "agreement",
            "agreement_passed"} <= set(res)
    assert res["size"] == "tiny" and res["peers"] == peers
    assert set(res["workloads"]) == {"recsys", "ir"}
    for w in res["workloads"].values():
        assert {"description", "n_rows", "input_nbytes", "libraries", "speedup"} <= set(w)
        assert {"rankereval", "rankereval[1 thread]", *peers} == set(w["libraries"])
        re_ = w["libraries"]["rankereval"]
        assert re_["rows"] == w["n_rows"] and not re_["extrapolated"]
        c = re_["construction"]
        assert c["median_s"] > 0 and re_["warmup_s"] >= 0
        # the fresh-memory write printed next to the conversion is of the rankings' bytes:
        # one int32 per ranked item of each row
        assert c["fresh_write_bytes"] > 0 and c["fresh_write_bytes"] % (4 * w["n_rows"]) == 0
        assert c["fresh_write_s"] > 0 and len(c["rankings_times_s"]) == len(c["fresh_write_times_s"]) == 1
        assert "NDCG@10" in re_["metrics"] and "Recall@100" in re_["metrics"]
        for m in re_["metrics"].values():
            assert m["median_s"] > 0 and len(m["times_s"]) == 1
        assert set(w["speedup"]) == set(peers)

    # every comparison that was made passed, and each installed peer was compared
    assert res["agreement_passed"] is True
    compared = {(e["workload"], e["peer"]) for e in res["agreement"] if e["passed"]}
    for peer in peers + ["rankereval[1 thread]"]:
        assert {("recsys", peer), ("ir", peer)} <= compared
    assert all(e["passed"] is not False for e in res["agreement"])
    if "pytrec_eval" in peers:
        trec = {(e["workload"], e["peer_measure"]) for e in res["agreement"] if e["peer"] == "pytrec_eval" and e["passed"]}
        assert {("ir", "ndcg_cut.10"), ("ir", "P.10"), ("ir", "recall.100"), ("ir", "recip_rank"),
                ("ir", "map_cut.100")} <= trec
    assert "agreement checks: all passed" in out


def test_memory_latency_and_thread_scaling(bench, tmp_path):
    code, res = _run(bench, tmp_path, "--peers", "none", "--workloads", "ir")
    assert code == 0
    assert set(res["workloads"]) == {"ir"}
    mem = res["workloads"]["ir"]["memory"]
    assert set(mem) == {"rankereval"}
    assert mem["rankereval"]["peak_extra_bytes"] >= 0 and mem["rankereval"]["input_nbytes"] > 0
    lat = res["latency"]
    assert lat["n_queries"] == 100 and {"none", "rankereval"} == set(lat["libraries"])
    r = lat["libraries"]["rankereval"]
    assert r["import_s"] > 0 and r["first_call_s"] > 0 and r["wall_s"] > r["total_s"]
    sc = res["thread_scaling"]
    assert set(sc["threads"]) == {"1", "2"} and sc["speedup_2_vs_1"] > 0
    assert all(len(sc["threads"][n]["times_s"]) == res["repeats"] for n in ("1", "2"))
    # threadpoolctl must reach rankereval's OpenMP runtime (when it was built with OpenMP)
    if sc["openmp"]:
        assert sc["threads"]["1"]["omp_max_threads_seen"] == 1


def _run_script(filename, argv):
    """Load benchmarks/<filename> as a module and run its main(argv); sys.path (which the
    script extends with benchmarks/) is restored. Returns (module, main's return value)."""
    saved = list(sys.path)
    spec = importlib.util.spec_from_file_location("rankereval_" + filename[:-3], os.path.join(BENCH, filename))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        return module, module.main(argv)
    finally:
        sys.path[:] = saved


def test_compare_benchmark(tmp_path, capsys):
    """benchmarks/bench_compare.py at --size tiny against scipy (ranx: numba compiles too long)."""
    _, code = _run_script("bench_compare.py", [
        "--size", "tiny", "--repeats", "1", "--peers", "scipy", "--scipy-b", "20,200", "--resamples", "999",
        "--quiet", "--results-dir", str(tmp_path), "--name", "cmp"])
    assert code == 0
    with open(tmp_path / "cmp.json") as fh:
        res = json.load(fh)
    assert res["resamples"] == 999 and set(res["workloads"]) == {"ir", "recsys"}
    for w in res["workloads"].values():
        libs = w["libraries"]
        assert libs["rankereval"]["comparisons"] == 15 and libs["rankereval_2runs"]["comparisons"] == 5
        assert libs["rankereval"]["median_s"] > 0
        assert libs["scipy"]["comparisons"] == 15 and libs["scipy"]["pvalues_agree"]
        assert set(libs["scipy"]["measured"]) == {"20", "200"} and w["speedup"]["scipy"] > 0


def test_beyond_benchmark(tmp_path, capsys):
    """benchmarks/bench_beyond.py at --size tiny (Microsoft Recommenders, if importable, on 50 users)."""
    module, _ = _run_script("bench_beyond.py", ["--size", "tiny", "--repeats", "1", "--recs-rows", "50",
                                                "--recs-div-rows", "5", "--results-dir", str(tmp_path)])
    with open(tmp_path / "beyond.json") as fh:
        res = json.load(fh)
    assert "ild@10 (64-d dense)" in module.table(res) and "serendipity@10 (co-occurrence)" in module.table(res)
    assert res["n_rows"] == 1000 and set(res["ratio_to_ndcg10"]) == set(res["per_ranking_s"])
    assert res["ratio_to_ndcg10"]["ndcg@10"] == 1.0
    assert {"coverage@10", "entropy@10", "gini@10", "gini[log2]@100"} <= set(res["system_s"])
    assert 0 < res["values"]["coverage@10"] <= 1 and 0 <= res["values"]["gini@10"] < 1
    if os.environ.get("RANKEREVAL_REQUIRE_RECOMMENDERS"):  # .ci/run's step with recommenders and pandas < 3
        assert res["recommenders"] is not None
    for case in ("catalog_coverage", "distributional_coverage", "novelty", "diversity", "serendipity",
                 "serendipity (item_feature_vector)"):
        if res["recommenders"] is not None:
            got = res["recommenders"][case]
            assert got["rankereval_value"] == pytest.approx(got["recommenders_value"], rel=1e-9)


def test_trec_eval_benchmark(tmp_path, capsys):
    """benchmarks/bench_trec_eval.py on a tiny run, with rankereval itself standing in for the
    trec_eval binary (a script taking trec_eval's arguments: -m official QRELS RUN)."""
    pytest.importorskip("pandas")
    fake = tmp_path / "fake_trec_eval"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} -m rankereval evaluate -f trec --quiet \"$@\"\n")
    fake.chmod(0o755)
    module, code = _run_script("bench_trec_eval.py", [
        "--trec-eval", str(fake), "--queries", "20", "--docs", "10", "--repeats", "1",
        "--dir", str(tmp_path / "data"), "--results-dir", str(tmp_path), "--name", "te"])
    assert code == 0
    with open(tmp_path / "te.json") as fh:
        res = json.load(fh)
    (other,) = [n for n in res["median"] if n != "rankereval"]
    assert res["agreement"][other]["measures"] and not res["agreement"][other]["differences"]
    assert res["median"]["rankereval"]["peak_rss_bytes"] > 0 and res["run_file_bytes"] > 0
    assert "list-table" in module.table(res)


def test_groups_benchmark(tmp_path, capsys):
    """benchmarks/bench_groups.py on a small workload: it runs and records every case."""
    _run_script("bench_groups.py", ["--rows", "20000", "--queries", "300", "--repeats", "1",
                                    "--json", str(tmp_path / "groups.json")])
    with open(tmp_path / "groups.json") as fh:
        res = json.load(fh)
    assert res["rows"] == 20000 and len(res["times"]) == 12
    assert all(len(t) == 1 and t[0] > 0 for t in res["times"].values())
    assert "x argsort" in capsys.readouterr().out


def test_accumulator_benchmark(tmp_path, capsys):
    """benchmarks/bench_accumulator.py on 300 users x 400 items in batches of 50 (memory in
    child processes, torchmetrics if installed): the accumulator equals the one call."""
    module, code = _run_script("bench_accumulator.py", [
        "--users", "300", "--items", "400", "--exclusions", "2000", "--batch", "50", "--long-batches", "12",
        "--boot", "50", "--repeats", "1", "--json", str(tmp_path / "acc.json")])
    assert code == 0
    with open(tmp_path / "acc.json") as fh:
        res = json.load(fh)
    assert res["values"]["accumulator_equals_one_call_bit_for_bit"]
    assert res["cases"]["accumulator, long"]["rankings"] == 600
    if "torchmetrics" in res["cases"]:
        assert res["values"]["max_abs_diff_torchmetrics"] < 1e-6     # float32 in torchmetrics
    assert "list-table" in module.table(res)


def test_performance_page_shows_the_published_accumulator_run():
    """The accumulator's table of docs/guide/performance.rst is what the benchmark prints from
    the run kept in benchmarks/published/accumulator.json (generated, not typed in)."""
    import subprocess

    script = os.path.join(BENCH, "bench_accumulator.py")
    page = os.path.join(BENCH, os.pardir, "docs", "guide", "performance.rst")
    run = os.path.join(BENCH, "published", "accumulator.json")
    if not all(os.path.exists(p) for p in (script, page, run)):
        pytest.skip("benchmarks/ and docs/ not shipped")
    printed = subprocess.run([sys.executable, script, "--table", run], capture_output=True, text=True,
                             check=True).stdout
    with open(page, encoding="utf-8") as fh:
        assert printed.count("list-table") == 1 and printed.strip() in fh.read()


def test_ties_benchmark(tmp_path, capsys):
    """benchmarks/bench_ties.py at --size tiny: the tie-aware scores of workload (a), side by
    side with the tie-breaking ones."""
    _, code = _run_script("bench_ties.py", ["--size", "tiny", "--repeats", "1", "--results-dir", str(tmp_path),
                                            "--name", "ties"])
    assert code == 0
    with open(tmp_path / "ties.json") as fh:
        res = json.load(fh)
    assert res["n_rows"] == 1000 and abs(res["tied_positions_share"] - 1 / 3) < 0.05
    assert set(res["ratio_expected_to_break"]) == {"ndcg@10", "ap@100", "rr@10"}
    for name, means in res["means"].items():
        # the expected mean lies between the pessimistic and optimistic ones
        assert means["pessimistic"] - 1e-12 <= means["expected"] <= means["optimistic"] + 1e-12, name
    assert "expected" in capsys.readouterr().out
