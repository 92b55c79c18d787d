"""The notebook tables (``Evaluation._repr_html_``, ``Comparison._repr_html_``): plain HTML,
escaped, without JavaScript; and rendered by a real headless Chromium, whose DOM gives the
numbers back and whose screenshot is a non-blank PNG.

The browser test runs wherever a Chromium is found (``chromium``, ``chromium-browser``,
``google-chrome`` on ``PATH``, or ``RANKEREVAL_CHROMIUM``). Where none is found it is skipped
with the reason printed (``pytest -ra``), so that the README's ``pytest`` passes on a fresh
machine; ``RANKEREVAL_REQUIRE_BROWSER=1`` (set by ``.ci/run``, which installs Debian's
``chromium``) makes a missing browser a failure instead. ``RANKEREVAL_NO_BROWSER=1`` skips it
even where a browser is found.
"""
import html.parser
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from rankereval import BinaryLabels, NumericLabels, Rankings, evaluate
from rankereval import compare
from rankereval.exceptions import UndefinedMetricWarning

HOSTILE = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script>&amp;'


class _Tables(html.parser.HTMLParser):
    """Every table of a document: caption, header cells and body rows (cell text, and
    whether the cell holds <strong>)."""

    def __init__(self):
        super().__init__()
        self.tables, self.scripts, self.handlers, self.title = [], 0, [], ""
        self._cell = self._where = None
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        if tag == "script":
            self.scripts += 1
        elif tag == "title":
            self._in_title = True
        elif tag == "table":
            self.tables.append({"caption": "", "header": [], "rows": []})
        elif tag == "caption":
            self._where = "caption"
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th"):
            self._cell = {"text": "", "strong": False, "sup": "", "in_sup": False, "tag": tag}
        elif tag == "strong" and self._cell is not None:
            self._cell["strong"] = True
        elif tag == "sup" and self._cell is not None:
            self._cell["in_sup"] = True

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag == "caption":
            self._where = None
        elif tag == "sup" and self._cell is not None:
            self._cell["in_sup"] = False
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self.tables:
            if self._row and all(c["tag"] == "th" for c in self._row):
                self.tables[-1]["header"] = [c["text"] for c in self._row]
            elif self._row:
                self.tables[-1]["rows"].append(self._row)

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        elif self._where == "caption":
            self.tables[-1]["caption"] += data
        elif self._cell is not None:
            self._cell["sup" if self._cell["in_sup"] else "text"] += data


def _parse(text):
    p = _Tables()
    p.feed(text)
    p.close()
    return p


def _number(text):
    return float(text)


def _results():
    rng = np.random.default_rng(3)
    n, items = 40, 25
    grades = (rng.random((n, items)) < 0.25) * rng.integers(1, 4, (n, items))
    y = NumericLabels.from_matrix(grades)
    runs = {name: Rankings.from_scores(rng.random((n, items)) + bias * grades)
            for name, bias in (("bm25", 0.0), ("splade & co", 0.4), (HOSTILE, 0.8))}
    ev = evaluate(y, runs["splade & co"], {"nDCG@10": "ndcg@10", HOSTILE: "p@5", "AP@100": "AP@100"},
                  conf_interval=True, n_resamples=200, random_state=0, nan_handling="drop")
    cmp = compare(y, runs, ["nDCG@10", "P(rel=2)@5"], baseline="bm25", nan_handling="zerofill")
    return ev, cmp


def _check_evaluation(ev, table):
    assert table["caption"] == f"Evaluation of {ev.n_rankings} rankings (nan_handling='drop')"
    assert table["header"] == ["metric", "mean", "95% CI", "rankings"]
    assert [r[0]["text"] for r in table["rows"]] == ev.names  # the hostile name as text
    for row, name in zip(table["rows"], ev.names):
        assert math.isclose(_number(row[1]["text"]), ev.means[name], abs_tol=5e-5)
        lo, hi = (_number(x) for x in row[2]["text"].strip("[]").split(","))
        assert math.isclose(lo, ev.conf_intervals[name][0], abs_tol=5e-5)
        assert math.isclose(hi, ev.conf_intervals[name][1], abs_tol=5e-5)
        assert int(row[3]["text"]) == ev.n_used[name]


def _check_comparison(cmp, means, pairs):
    assert means["header"] == ["key", "run", *cmp.metrics]
    assert means["caption"] == cmp.caption()
    beaten = cmp._beaten()
    best = cmp._best()
    for r, row in enumerate(means["rows"]):
        assert row[0]["text"] == cmp.keys[r] and row[1]["text"] == cmp.runs[r]
        for m in range(len(cmp.metrics)):
            cell = row[2 + m]
            assert math.isclose(_number(cell["text"]), cmp.means[m, r], abs_tol=5e-5)
            assert cell["strong"] == (r in best[m])
            assert cell["sup"] == ",".join(cmp.keys[k] for k in beaten[m][r])
    assert any(c["sup"] for row in means["rows"] for c in row)  # some marks are shown
    rows = cmp.rows()
    assert len(pairs["rows"]) == len(rows)
    for cells, want in zip(pairs["rows"], rows):
        assert [c["text"] for c in cells[:3]] == [want["metric"], want["run"], want["baseline"]]
        assert math.isclose(_number(cells[3]["text"]), want["diff"], abs_tol=5e-5)
        lo, hi = (_number(x) for x in cells[4]["text"].strip("[]").split(","))
        assert math.isclose(lo, want["ci_low"], abs_tol=5e-5) and math.isclose(hi, want["ci_high"], abs_tol=5e-5)
        assert math.isclose(_number(cells[5]["text"]), want["p_value"], abs_tol=5e-5)
        assert cells[7]["text"] == ("yes" if want["significant"] else "no")


def test_html_is_escaped_and_has_no_script():
    ev, cmp = _results()
    for obj in (ev, cmp):
        text = obj._repr_html_()
        parsed = _parse(text)
        assert parsed.scripts == 0 and parsed.handlers == []
        assert "<script" not in text and "onerror" not in text.replace("onerror=&quot;", "")
    _check_evaluation(ev, _parse(ev._repr_html_()).tables[0])
    _check_comparison(cmp, *_parse(cmp._repr_html_()).tables)


def test_html_of_undefined_values():
    y = BinaryLabels.from_positive_indices([[0], []])
    with pytest.warns(UndefinedMetricWarning):
        ev = evaluate(y, Rankings.from_ranked_indices([[0, 1], [1]]), ["rr"])
    table = _parse(ev._repr_html_()).tables[0]
    assert table["header"] == ["metric", "mean", "rankings", "undefined"]
    assert [c["text"] for c in table["rows"][0]] == ["rr", "nan", "2", "1"]


def _browser():
    for name in (os.environ.get("RANKEREVAL_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
          "--disable-background-networking", "--disable-component-update", "--disable-sync",
          "--disable-dev-shm-usage", "--hide-scrollbars"]


@pytest.mark.browser
@pytest.mark.skipif(os.environ.get("RANKEREVAL_NO_BROWSER") == "1",
                    reason="RANKEREVAL_NO_BROWSER=1: no browser in this environment")
def test_tables_render_in_headless_chromium(tmp_path):
    browser = _browser()
    if browser is None:
        why = ("no Chromium found on PATH (chromium, chromium-browser, google-chrome) nor in "
               "RANKEREVAL_CHROMIUM: install one (Debian: apt-get install chromium) to run this test")
        if os.environ.get("RANKEREVAL_REQUIRE_BROWSER") == "1":
            pytest.fail(f"{why}; RANKEREVAL_REQUIRE_BROWSER=1 requires it")
        pytest.skip(why)
    ev, cmp = _results()
    page = tmp_path / "tables.html"
    page.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>rankereval</title></head>"
                    f"<body>{ev._repr_html_()}\n{cmp._repr_html_()}</body></html>", encoding="utf-8")

    def run(*args):
        profile = tmp_path / f"profile{len(list(tmp_path.iterdir()))}"  # a fresh user data dir
        return subprocess.run([browser, *_FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
                              capture_output=True, text=True, timeout=120, check=True)

    dom = _parse(run("--dump-dom").stdout)
    assert dom.title == "rankereval"  # the hostile names ran nothing
    assert dom.scripts == 0 and len(dom.tables) == 3
    _check_evaluation(ev, dom.tables[0])
    _check_comparison(cmp, dom.tables[1], dom.tables[2])

    png = tmp_path / "tables.png"
    run(f"--screenshot={png}", "--window-size=1200,900")
    from matplotlib.image import imread

    pixels = imread(str(png))
    assert pixels.shape[:2] == (900, 1200)
    ink = (pixels[..., :3] < 0.5).all(axis=-1)  # dark pixels: the text of the tables
    assert 0.001 < ink.mean() < 0.5


def _run_browser_test_without_browser(tmp_path, **env):
    """The browser test in a child pytest whose PATH holds no browser (only an empty folder)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir(exist_ok=True)
    child = {k: v for k, v in os.environ.items()
             if k not in ("RANKEREVAL_CHROMIUM", "RANKEREVAL_NO_BROWSER", "RANKEREVAL_REQUIRE_BROWSER")}
    child.update(PATH=str(empty), **env)
    test = f"{os.path.abspath(__file__)}::test_tables_render_in_headless_chromium"
    return subprocess.run([sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider",
                           "--rootdir", os.path.dirname(os.path.abspath(__file__)), test],
                          capture_output=True, text=True, timeout=120, env=child, cwd=tmp_path)


def test_browser_test_skips_with_reason_where_no_browser_is_found(tmp_path):
    # the README's `pytest` on a machine without Chromium: skipped, the reason printed
    done = _run_browser_test_without_browser(tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 skipped" in done.stdout, done.stdout
    assert "SKIPPED" in done.stdout and "no Chromium found on PATH" in done.stdout, done.stdout


def test_browser_test_fails_where_ci_requires_a_browser(tmp_path, monkeypatch):
    # CI asks for the browser (RANKEREVAL_REQUIRE_BROWSER=1): without one the test fails
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("RANKEREVAL_CHROMIUM", raising=False)
    monkeypatch.setenv("RANKEREVAL_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="RANKEREVAL_REQUIRE_BROWSER=1 requires it"):
        test_tables_render_in_headless_chromium(tmp_path)
    monkeypatch.delenv("RANKEREVAL_REQUIRE_BROWSER")
    with pytest.raises(pytest.skip.Exception, match="no Chromium found on PATH"):
        test_tables_render_in_headless_chromium(tmp_path)
