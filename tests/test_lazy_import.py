"""``import rankereval`` imports its public names on first use (rankereval/__init__.py).

Each check that depends on what a process imported first runs in a fresh interpreter
(``PYTHONPATH`` and the working directory come from tests/conftest.py, so the child imports
the package under test).
"""
import ast
import importlib
import os
import pickle
import pickletools
import pkgutil
import shutil
import subprocess
import sys
import textwrap

import pytest

import rankereval

PACKAGE_DIR = os.path.dirname(os.path.abspath(rankereval.__file__))

# what rankereval/__init__.py renamed before its imports were lazy (pickles and the docs use it)
PUBLIC_MODULE = ["evaluate", "Evaluation", "Accumulator", "UndefinedMetricWarning", "Comparison", "compare",
                 "dcg_score", "map_score", "mrr_score", "ndcg_score", "precision_at_k", "recall_at_k"]


def run(code, env=None):
    """Run ``code`` in a fresh interpreter; returns its stdout (it must exit with 0)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_import_loads_neither_numpy_nor_the_kernels():
    out = run("""
        import sys
        import rankereval
        print(rankereval.__version__)
        print(sorted(m for m in sys.modules if m == "numpy" or m.startswith("rankereval")))
        rankereval.NDCG
        print("numpy" in sys.modules, "rankereval.metrics._kernels" in sys.modules)
    """).splitlines()
    from rankereval._version import __version__

    assert out[0] == __version__
    # (rankereval.compare: the old module path's stand-in of one release, no import behind it)
    assert out[1] == "['rankereval', 'rankereval._version', 'rankereval.compare']"
    assert out[2] == "True True"  # a name's first use imports what it needs


def test_all_and_dir_hold_every_public_name():
    names = set(rankereval.__all__)
    assert len(names) == len(rankereval.__all__)
    assert names == set(rankereval._LAZY) | {"__version__"}
    assert names <= set(dir(rankereval))
    assert {"data", "metrics", "exceptions"} <= set(dir(rankereval))
    namespace = {}
    exec("from rankereval import *", namespace)
    assert names <= set(namespace)
    for name in names - {"__version__"}:
        obj = getattr(rankereval, name)
        assert obj is getattr(sys.modules[rankereval._LAZY[name]], name)
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        rankereval.nope
    assert not hasattr(rankereval, "io_nope")


def test_the_submodules_that_import_rankereval_made_attributes_still_are():
    out = run("""
        import rankereval
        print(rankereval.metrics.from_name("ndcg@10").name, rankereval.data.Rankings.__name__,
              rankereval.exceptions.UndefinedMetricWarning.__name__)
    """)
    assert out.split() == ["ndcg@10", "Rankings", "UndefinedMetricWarning"]


@pytest.mark.parametrize("first", ["rankereval", "private"])
def test_public_module_of_the_renamed_names(first):
    """``__module__`` is ``rankereval`` however the object was reached (the defining modules
    set it), so pickles name ``rankereval.X`` and load with the lazy package."""
    import_line = ("import rankereval; objs = [getattr(rankereval, n) for n in names]" if first == "rankereval" else
                   "import importlib, rankereval; "
                   "objs = [getattr(importlib.import_module(rankereval._LAZY[n]), n) for n in names]")
    out = run(f"""
        names = {PUBLIC_MODULE!r}
        {import_line}
        print(sorted(set(o.__module__ for o in objs)))
    """)
    assert out.strip() == "['rankereval']"


def test_pickles_of_public_objects_load_in_a_fresh_process():
    from rankereval import BinaryLabels, Rankings, evaluate, NDCG, Accumulator

    y_true = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3]])
    y_pred = Rankings.from_ranked_indices([[3, 2, 1], [1, 2]])
    ev = evaluate(y_true, y_pred, {"ndcg": NDCG(3)})
    for obj, name in ((ev, "Evaluation"), (Accumulator, "Accumulator"), (rankereval.ndcg_score, "ndcg_score"),
                      (rankereval.UndefinedMetricWarning, "UndefinedMetricWarning"), (rankereval.compare, "compare")):
        strings = [arg for op, arg, _ in pickletools.genops(pickle.dumps(obj, protocol=4)) if "UNICODE" in op.name]
        assert strings[:2] == ["rankereval", name]
    out = run(f"""
        import pickle, sys
        ev = pickle.loads({pickle.dumps(ev)!r})
        print(type(ev).__module__, type(ev).__name__, round(float(ev.means["ndcg"]), 6))
    """)
    assert out.split() == ["rankereval", "Evaluation", str(round(float(ev.means["ndcg"]), 6))]


# ---- no module is named like a function it exports -----------------------------------------

def test_no_module_is_named_like_a_public_name_it_holds():
    """``rankereval.compare`` is the function, as every public name is the object itself:
    importing a submodule makes the import system set the package's attribute of that name,
    so a module named like a function it exports would replace it (issue 43)."""
    for package in ("rankereval", "rankereval.stats", "rankereval.evaluation", "rankereval.metrics",
                    "rankereval.data", "rankereval.io", "rankereval.cli", "rankereval.agreement"):
        module = importlib.import_module(package)
        submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
        assert not submodules & set(getattr(module, "__all__", ())), package


@pytest.mark.parametrize("first", [
    "import rankereval; rankereval.compare",
    "import rankereval.stats",
    "from rankereval.stats import Comparison; import rankereval",
    "import rankereval; rankereval.Comparison",
    "import rankereval.cli._compare; import rankereval",
])
def test_compare_is_the_function_whichever_module_came_first(first):
    out = run(first + "\n" + textwrap.dedent("""
        import inspect, rankereval, rankereval.stats
        from rankereval import compare
        assert inspect.isfunction(rankereval.compare) and compare is rankereval.compare is rankereval.stats.compare
        print(rankereval.compare.__module__, rankereval.compare.__name__, rankereval.Comparison.__name__)
    """))
    assert out.split() == ["rankereval", "compare", "Comparison"]


def test_the_old_compare_module_path_works_for_one_release_with_a_warning():
    """``from rankereval.compare import ...`` (before issue 43's layout) gives rankereval.stats's
    names with a DeprecationWarning naming the new module, and leaves the function in place;
    a Leaderboard pickled under the old module path loads."""
    out = run(textwrap.dedent("""
        import inspect, pickle, warnings, rankereval, rankereval.stats
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            from rankereval.compare import Comparison, adjust_pvalues
            import rankereval.compare
        assert Comparison is rankereval.stats.Comparison and adjust_pvalues is rankereval.stats.adjust_pvalues
        assert [x.category for x in w] == [DeprecationWarning] * 2
        assert "import it from rankereval.stats" in str(w[0].message) and w[0].filename == "<string>"
        assert inspect.isfunction(rankereval.compare)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            cls = pickle.loads(pickle.dumps(rankereval.stats.Leaderboard, protocol=0).replace(
                b"crankereval.stats\\nLeaderboard", b"crankereval.compare\\nLeaderboard"))
        assert cls is rankereval.stats.Leaderboard
        print("ok")
    """))
    assert out.split() == ["ok"]


# ---- static view and missing extensions ---------------------------------------------------

def test_the_type_checking_block_imports_the_lazy_names():
    """Type checkers and IDEs read the ``if TYPE_CHECKING:`` block; it must name the same
    objects, from the same modules, as the lazy table."""
    with open(os.path.join(PACKAGE_DIR, "__init__.py"), encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    blocks = [node for node in tree.body if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"]
    assert len(blocks) == 1
    static, submodules = {}, set()
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom)
        for alias in node.names:
            if node.module == "rankereval":
                submodules.add(alias.name)
            else:
                static[alias.asname or alias.name] = node.module
    assert static == rankereval._LAZY
    assert submodules == set(rankereval._SUBMODULES)


def test_a_type_checker_sees_the_names_and_only_them(tmp_path):
    """mypy reads the ``TYPE_CHECKING`` block (``TYPE_CHECKING = False``, without importing
    typing) and not the module ``__getattr__``, which would make any attribute valid."""
    api = pytest.importorskip("mypy.api")
    (tmp_path / "use.py").write_text(textwrap.dedent("""
        import rankereval
        from rankereval import NDCG, compare
        reveal_type(rankereval.compare)
        reveal_type(NDCG(10).score)
        reveal_type(rankereval.Evaluation)
        rankereval.no_such_name
    """))
    # the package's Python sources, copied: mypy refuses a site-packages directory in
    # MYPYPATH (the installed wheel's tests run from there)
    src = tmp_path / "src"
    shutil.copytree(PACKAGE_DIR, src / "rankereval",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "*.c", "*.cpp", "*.h", "*.pyx"))
    old = os.environ.get("MYPYPATH")
    os.environ["MYPYPATH"] = str(src)
    try:
        out, err, status = api.run([str(tmp_path / "use.py"), "--follow-imports=silent", "--ignore-missing-imports",
                                    "--no-incremental", "--cache-dir", os.devnull])
    finally:
        if old is None:
            del os.environ["MYPYPATH"]
        else:
            os.environ["MYPYPATH"] = old
    lines = [line.replace(str(tmp_path) + os.sep, "") for line in out.splitlines()]
    assert status == 1, out + err
    assert 'use.py:4: note: Revealed type is "def (y_true: Any, runs: Any, metrics: Any' in lines[0]
    assert "use.py:5: note: Revealed type is" in lines[1] and "Any" in lines[1]
    assert lines[2].endswith('-> rankereval.evaluation._evaluate.Evaluation"')
    assert lines[3] == 'use.py:7: error: Module has no attribute "no_such_name"  [attr-defined]'


def test_missing_compiled_extensions_give_the_friendly_error(tmp_path):
    """A source tree without the built extensions (a fresh clone) fails at ``import
    rankereval`` with the instructions, not at the first use of a name."""
    shutil.copytree(PACKAGE_DIR, tmp_path / "rankereval",
                    ignore=lambda folder, names: [n for n in names if n.endswith((".so", ".pyd")) or n == "__pycache__"])
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    # -S: without site-packages, where an editable install's finder would find another build
    proc = subprocess.run([sys.executable, "-S", "-c", "import rankereval"], capture_output=True, text=True,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 1
    assert "ImportError: rankereval's compiled extensions could not be imported" in proc.stderr
    assert "build_ext --inplace" in proc.stderr


# ---- the program's start-up ----------------------------------------------------------------
def test_the_program_starts_openblas_with_one_thread():
    """Run as a program (``main()`` without arguments, before NumPy is imported) the command
    line sets ``OPENBLAS_NUM_THREADS=1`` unless the user set it (or ``GOTO_NUM_THREADS``);
    called with arguments, or after NumPy was imported, it leaves the environment alone."""
    pytest.importorskip("threadpoolctl")
    code = ("import os, sys, io, contextlib\n"
            "if sys.argv[1] == 'numpy-first':\n"
            "    import numpy\n"
            "from rankereval.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    if sys.argv[1] == 'argv':\n"
            "        assert main(['metrics']) == 0\n"
            "    else:\n"
            "        sys.argv = ['rankereval', 'metrics']\n"
            "        assert main() == 0\n"
            "import threadpoolctl\n"
            "blas = [p['num_threads'] for p in threadpoolctl.threadpool_info() if p['internal_api'] == 'openblas']\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS'), blas[0] if blas else None)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS",
                                                            "OMP_NUM_THREADS")}

    def child(how, **extra):
        out = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, check=True,
                             env=dict(env, **extra)).stdout
        return out.split()

    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    openblas = child("program")[1] != "None"
    if not openblas:
        pytest.skip("NumPy is not linked to OpenBLAS here")
    assert child("program") == ["1", "1"]
    assert child("program", OPENBLAS_NUM_THREADS="2") == ["2", "2"]
    assert child("program", GOTO_NUM_THREADS="2") == ["None", "2"]
    if cores > 1:  # OpenBLAS's own choice: one thread per core
        assert child("argv") == ["None", str(cores)]
        assert child("numpy-first") == ["None", str(cores)]
