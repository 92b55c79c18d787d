"""A new user's first steps (issue 44): names borrowed from other tools, warnings that point at
the user's line, the all-undefined warning, empty inputs, ranx-style dicts in ``compare``, the
plots' layout, and the Spark worker check."""
import ast
import inspect
import os
import pathlib
import sys
import types
import warnings

import numpy as np
import pytest

from rankereval import (DCG, NDCG, BinaryLabels, HitRate, NumericLabels, Rankings, Success,
                        evaluate)
from rankereval.exceptions import InvalidValuesWarning, UndefinedMetricWarning
from rankereval.metrics import from_name
from rankereval.metrics._trec_names import name_differences


# -- names ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, spelling", [
    ("hit_rate@10", "success@10"), ("hit-rate@5", "success@5"), ("HIT_RATE@3", "success@3"),
    ("ndcg_burges@10", "ndcg@10[power]"),
])
def test_peer_names_with_another_meaning_here_are_refused_naming_the_spelling(name, spelling):
    with pytest.raises(ValueError) as err:
        from_name(name)
    assert spelling in str(err.value)
    # and the spelling it names reads
    from_name(spelling)


def test_hitrate_keeps_the_references_meaning_and_success_is_rankers_hit_rate():
    assert from_name("hitrate@10") == HitRate(10) == from_name("hr@10")
    assert from_name("success@10") == Success(10)


@pytest.mark.parametrize("typo, suggestion", [
    ("ndgc@10", "'ndcg@10'"), ("nDGC@10", "'ndcg@10'"), ("precsion@5", "'precision@5'"),
    ("recal@100", "'recall@100'"), ("mapp", "'map'"),
])
def test_unknown_names_get_a_short_did_you_mean(typo, suggestion):
    with pytest.raises(ValueError, match="did you mean") as err:
        from_name(typo)
    message = str(err.value)
    assert suggestion in message
    assert len(message) < 250, message  # not the list of every name (about 600 characters)


def test_unknown_name_without_a_close_match_says_where_the_names_are():
    with pytest.raises(ValueError) as err:
        from_name("zzzz@3")
    assert "did you mean" not in str(err.value) and "rankereval metrics" in str(err.value)


def test_r_precision_spelt_as_ranx_is_rprec():
    from rankereval import RPrecision

    assert from_name("r-precision") == RPrecision() == from_name("r_precision")


def test_dcg_says_which_logarithm_it_uses():
    note = name_differences(DCG(10))
    assert note is not None and "natural logarithm" in note and "dcg@10[log2]" in note
    assert name_differences(DCG(10, log_base="2")) is None  # ranx' and dcg_score's base: no note
    assert "log2" in name_differences(DCG())
    assert name_differences(NDCG(10)) is None  # NDCG does not depend on the base


def test_cli_footnotes_and_the_real_reason_of_undefined_values(capsys):
    pytest.importorskip("pandas")
    from rankereval.cli import main

    code = main(["example", "-m", "hitrate@10", "dcg@10", "ndcg@10"])
    out = capsys.readouterr().out
    assert code == 0
    assert "* dcg@10: discount 1/ln(1 + rank), the natural logarithm" in out
    # every sample query has several relevant documents: HitRate's own reason, not "no relevant document"
    assert "undefined queries: hitrate@10 20 (its labels do not hold exactly one relevant item" in out
    assert "no relevant document" not in out


# -- warnings point at the user's line -------------------------------------------------------

def _data():
    y = BinaryLabels.from_positive_indices([[0], []])
    p = Rankings.from_ranked_indices([[0, 1], [1, 0]])
    return y, p


def _check_points_here(record, line, category=UndefinedMetricWarning):
    hits = [w for w in record if issubclass(w.category, category)]
    assert hits, [str(w.message) for w in record]
    for w in hits:
        assert (w.filename, w.lineno) == (__file__, line), (w.filename, w.lineno, str(w.message))


def test_warnings_point_at_the_callers_line_from_every_entry_point():
    from rankereval import map_score

    y, p = _data()
    metric = NDCG(2)
    here = inspect.currentframe
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        metric.mean(y, p)
    _check_points_here(rec, line)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        metric.mean(y, p, conf_interval=True, n_bootstrap_samples=20, random_state=0)
    _check_points_here(rec, line)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        metric.bootstrap(y, p, n_resamples=20, random_state=0)
    _check_points_here(rec, line)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        evaluate(y, p, ["ndcg@2"])
    _check_points_here(rec, line)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        map_score(np.array([[1, 0], [0, 0]]), np.array([[0.5, 0.2], [0.1, 0.3]]), nan_handling="propagate")
    _check_points_here(rec, line)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        Rankings.from_scores(np.array([[0.5, np.nan, 0.2]]))
    _check_points_here(rec, line, InvalidValuesWarning)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = here().f_lineno + 1
        Rankings.from_ranked_indices([[0, 1], []])
    _check_points_here(rec, line, InvalidValuesWarning)


# -- an all-undefined metric warns whatever the NaN policy -----------------------------------

def test_all_undefined_mean_warns_with_drop():
    y = NumericLabels.from_matrix([[0, 0], [0, 0, 0]])
    p = Rankings.from_ranked_indices([[0, 1], [2, 1]])
    with pytest.warns(UndefinedMetricWarning, match="for all 2 rankings.*nan_handling='drop' leaves nothing"):
        assert np.isnan(NDCG(10).mean(y, p, nan_handling="drop"))
    with pytest.warns(UndefinedMetricWarning, match="ndcg@10 is undefined \\(NaN\\) for all 2 rankings"):
        ev = evaluate(y, p, ["ndcg@10"], nan_handling="drop")
    assert np.isnan(ev.means["ndcg@10"])
    # some rankings defined: dropping them leaves a mean, and no warning
    y2 = NumericLabels.from_matrix([[0, 1], [0, 0, 0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert NDCG(10).mean(y2, p, nan_handling="drop") == NDCG(10).score(y2, p)[0]


def test_novelty_on_unseen_items_warns_with_drop():
    from rankereval import Novelty

    popularity = np.array([0.5, 0.5, 0.0, 0.0])  # items 2 and 3 never seen in training
    p = Rankings.from_ranked_indices([[2, 3], [3, 2]])
    with pytest.warns(UndefinedMetricWarning, match="for all 2 rankings"):
        assert np.isnan(Novelty(2, popularity).mean(None, p, nan_handling="drop"))


def test_functional_all_undefined_warns_with_drop():
    from rankereval import map_score

    with pytest.warns(UndefinedMetricWarning, match="for all 2 rankings"):
        assert np.isnan(map_score(np.zeros((2, 3)), np.ones((2, 3)), nan_handling="drop"))


# -- empty inputs ----------------------------------------------------------------------------

@pytest.mark.parametrize("build", [
    lambda: BinaryLabels.from_positive_indices([]), lambda: BinaryLabels.from_matrix([]),
    lambda: NumericLabels.from_matrix([]), lambda: Rankings.from_ranked_indices([]),
    lambda: Rankings.from_scores([]),
])
def test_an_empty_list_makes_zero_rows(build):
    assert build().n_rows == 0


def test_zero_rows_score_to_nothing():
    y = BinaryLabels.from_positive_indices([])
    p = Rankings.from_ranked_indices([])
    assert NDCG(3).score(y, p).shape == (0,)


# -- compare with ranx-style dicts -----------------------------------------------------------

def test_compare_takes_ranx_style_dicts():
    pytest.importorskip("pandas")
    from rankereval import compare
    from rankereval.io import from_dicts

    rng = np.random.default_rng(3)
    qrels = {f"q{i}": {f"d{j}": int(rng.integers(0, 3)) for j in range(6)} for i in range(12)}
    runs = {name: {q: {f"d{j}": float(rng.random()) for j in range(8)} for q in qrels}
            for name in ("bm25", "dense")}
    got = compare(qrels, runs, ["ndcg@5", "p@3"], random_state=0)
    want = compare(None, {name: from_dicts(qrels, run) for name, run in runs.items()}, ["ndcg@5", "p@3"],
                   random_state=0)
    assert got.rows() == want.rows()
    with pytest.raises(TypeError, match="ranx-style qrels"):
        compare(42, runs, ["ndcg@5"])


# -- plots: nothing overlaps, nothing leaves the figure --------------------------------------

def _texts(fig):
    """The window extents of every visible, non-empty text of ``fig``, drawn with Agg."""
    from matplotlib.text import Text

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    drawn, ticks = [], set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            lo, hi = sorted(axis.get_view_interval())
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                ticks.update((id(tick.label1), id(tick.label2)))
                if lo - 1e-9 <= tick.get_loc() <= hi + 1e-9:  # the tick labels drawn: those in view
                    drawn += [t for t in (tick.label1, tick.label2) if t.get_visible()]
    drawn += [t for t in fig.findobj(Text) if id(t) not in ticks and t.get_visible()]
    return [(t.get_text(), t.get_window_extent(renderer)) for t in drawn if t.get_text().strip()]


def _check_layout(fig):
    from matplotlib.transforms import Bbox

    box = Bbox.from_bounds(0, 0, *fig.canvas.get_width_height())
    texts = _texts(fig)
    assert texts
    for text, ext in texts:
        assert box.x0 - 0.5 <= ext.x0 and ext.x1 <= box.x1 + 0.5 and box.y0 - 0.5 <= ext.y0 \
            and ext.y1 <= box.y1 + 0.5, (text, ext, box)
    for i, (a, ea) in enumerate(texts):
        for b, eb in texts[i + 1:]:
            assert not ea.overlaps(eb), (a, b, ea, eb)
    return texts


@pytest.fixture
def comparison():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from rankereval import compare

    rng = np.random.default_rng(0)
    y = BinaryLabels.from_positive_indices([list(rng.choice(20, 3, replace=False)) for _ in range(7)])
    runs = {name: Rankings.from_ranked_indices([list(rng.permutation(20)[:10]) for _ in range(7)])
            for name in ("bm25 baseline", "dense retriever", "hybrid")}
    return compare(y, runs, ["ndcg@10", "recall@10"], baseline="bm25 baseline", random_state=0)


def test_forest_plot_fits_its_figure(comparison):
    import matplotlib.pyplot as plt

    fig = comparison.plot("forest")
    try:
        texts = dict(_check_layout(fig))
        assert "difference of means" in texts and "ndcg@10" in texts
    finally:
        plt.close(fig)


def test_per_query_plot_fits_and_counts_queries_in_integers(comparison):
    import matplotlib.pyplot as plt

    fig = comparison.plot("per-query")
    try:
        texts = dict(_check_layout(fig))
        assert "queries, sorted by difference" in texts
        ticks = [t for t in fig.axes[0].get_xticks() if fig.axes[0].get_xlim()[0] <= t <= fig.axes[0].get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks
    finally:
        plt.close(fig)


def test_cli_saves_the_per_query_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    pytest.importorskip("pandas")
    from matplotlib.image import imread

    from rankereval.cli import main

    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 d{j} {(i + j) % 3}\n" for i in range(8) for j in range(5)))
    runs = []
    for r in range(2):
        run = tmp_path / f"run{r}.txt"
        run.write_text("".join(f"q{i} Q0 d{(j + r * i) % 5} {j + 1} {10 - j} sys{r}\n"
                               for i in range(8) for j in range(5)))
        runs.append(str(run))
    forest, per_query = tmp_path / "forest.png", tmp_path / "per-query.png"
    code = main(["compare", str(qrels), *runs, "-m", "ndcg@5", "--plot", str(forest),
                 "--plot-per-query", str(per_query)])
    capsys.readouterr()
    assert code == 0
    assert imread(str(per_query)).shape[:2] == (360, 640)  # 6.4 x 3.6 inches at 100 dpi, not trimmed
    assert imread(str(forest)).ndim == 3


# -- Spark: a local master whose worker Python cannot import rankereval ----------------------

def test_spark_local_master_with_a_worker_python_that_lacks_rankereval():
    pytest.importorskip("pyspark")
    from rankereval.spark import _core

    def frame(master, exe):
        sc = types.SimpleNamespace(master=master, pythonExec=exe)
        return types.SimpleNamespace(sparkSession=types.SimpleNamespace(sparkContext=sc))

    missing = os.path.join(os.sep, "nonexistent", "bin", "python3")
    with pytest.raises(RuntimeError, match="Set PYSPARK_PYTHON to this Python") as err:
        _core._check_local_workers(frame("local[2]", missing))
    assert sys.executable in str(err.value)
    _core._check_local_workers(frame("spark://cluster:7077", missing))  # remote workers: not ours to test
    _core._check_local_workers(frame("local[*]", sys.executable))  # this Python imports rankereval


# -- the docs build with the docs extra alone ------------------------------------------------

_here = pathlib.Path(__file__).resolve().parent.parent
SOURCE = pathlib.Path(os.environ.get("RANKEREVAL_SOURCE_TREE", _here)).resolve()


@pytest.mark.skipif(not (SOURCE / "docs" / "conf.py").is_file(),
                    reason=f"no rankereval source tree at {SOURCE} (set RANKEREVAL_SOURCE_TREE)")
def test_docs_conf_mocks_every_third_party_import_of_spark_and_dask():
    """What rankereval.spark and rankereval.dask import at module level, beyond NumPy, the
    standard library and the package, is what docs/conf.py mocks when it is missing (the docs
    extra holds none of it); .ci/run builds the docs in a venv of that extra alone."""
    conf = ast.parse((SOURCE / "docs" / "conf.py").read_text(encoding="utf-8"))
    mocked = next(ast.literal_eval(node.value) for node in conf.body if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", None) == "OPTIONAL_RUNTIME_MODULES" for t in node.targets))
    needed = set()
    for module in ("spark", "dask"):
        for path in (SOURCE / "rankereval" / module).glob("*.py"):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in tree.body:  # module level, and the try: of an optional import
                for sub in ([node] + list(node.body) if isinstance(node, ast.Try) else [node]):
                    names = ([a.name for a in sub.names] if isinstance(sub, ast.Import)
                             else [sub.module] if isinstance(sub, ast.ImportFrom) and sub.level == 0 else [])
                    needed.update(n.split(".")[0] for n in names)
    third_party = {n for n in needed if n not in sys.stdlib_module_names and n not in ("numpy", "rankereval")}
    assert third_party and third_party <= set(mocked), (third_party, mocked)


@pytest.mark.skipif(not (SOURCE / "docs" / "conf.py").is_file(),
                    reason=f"no rankereval source tree at {SOURCE} (set RANKEREVAL_SOURCE_TREE)")
def test_docs_pages_show_one_table_of_contents():
    """The theme shows each page's contents in its sidebar ("On this page",
    ``secondary_sidebar_items`` of docs/conf.py): a ``.. contents::`` directive would show them
    a second time."""
    conf = (SOURCE / "docs" / "conf.py").read_text(encoding="utf-8")
    assert '"secondary_sidebar_items": ["page-toc"]' in conf
    pages = [p for p in (SOURCE / "docs").rglob("*.rst") if "_build" not in p.parts]
    assert len(pages) > 10
    twice = [str(p.relative_to(SOURCE)) for p in pages if ".. contents::" in p.read_text(encoding="utf-8")]
    assert not twice, twice
