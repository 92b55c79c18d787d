"""The command-line and conversion tables of docs/guide/performance.rst are what the
benchmarks print (``--table``) from the runs kept in benchmarks/published/ (generated, not
typed in)."""
import os
import subprocess
import sys

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)

TABLES = [
    ("bench_trec_eval.py", "trec_eval_2M.json"),
    ("bench_trec_eval.py", "trec_eval_200k.json"),
    ("bench_convert.py", "convert.json"),
]


@pytest.mark.parametrize("script, run", TABLES, ids=[r for _, r in TABLES])
def test_performance_page_shows_the_published_run(script, run):
    script = os.path.join(ROOT, "benchmarks", script)
    run = os.path.join(ROOT, "benchmarks", "published", run)
    page = os.path.join(ROOT, "docs", "guide", "performance.rst")
    if not all(os.path.exists(p) for p in (script, page, run)):
        pytest.skip("benchmarks/ and docs/ not shipped")
    printed = subprocess.run([sys.executable, script, "--table", run], capture_output=True, text=True,
                             check=True).stdout
    with open(page, encoding="utf-8") as f:
        text = f.read()
    assert printed.count("list-table") == 1 and printed.strip() in text
