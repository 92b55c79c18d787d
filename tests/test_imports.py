"""The import graph of the package: no circles, and no module imports a package that holds it.

Data flows one way (io -> data -> metrics -> evaluate/compare -> command line): a module that
needs a compiled kernel imports it directly (``import rankereval.data._convert as _convert``), never
through ``rankereval/__init__.py``, and a lower module never imports a higher one, so the
modules form a graph without cycles. Imports inside functions count too: a lazy import only
hides a circle from the interpreter, not from the reader.

The graph is read from the source with :mod:`ast`. A library such as grimp (import-linter's
engine) indexes ``.py`` files only, so it attributes ``import rankereval.data._convert`` (a compiled
extension) to the package ``rankereval`` itself and cannot tell it from the upward imports this
test forbids; the reader here knows the extension modules from the files beside the sources.
"""
import ast
import importlib.machinery
import os
import re
import sys

import pytest

import rankereval


def modules_of(package_dir):
    """{module name: path of its source, or None for a compiled extension} of the package at
    ``package_dir`` (its ``__init__.py``'s folder), subpackages included."""
    top = os.path.dirname(package_dir)
    found = {}
    for folder, dirs, files in os.walk(package_dir):
        dirs[:] = [d for d in dirs if os.path.exists(os.path.join(folder, d, "__init__.py"))]
        for f in files:
            rel = os.path.relpath(os.path.join(folder, f), top)
            if f.endswith(".py"):
                name = rel[:-3].replace(os.sep, ".")
                found[name.removesuffix(".__init__")] = os.path.join(folder, f)
            else:
                for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                    if f.endswith(suffix):
                        found[rel[:-len(suffix)].replace(os.sep, ".")] = None
    return found


def import_graph(package_dir):
    """{importer: {imported: line}} over the modules of the package, each import resolved to
    the module it loads (``from a import b`` is ``a.b`` when that is a module, else ``a``)."""
    modules = modules_of(package_dir)
    top = os.path.basename(package_dir)

    def resolve(target):
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target

    graph = {}
    for name, path in modules.items():
        if path is None:
            continue
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        edges = graph.setdefault(name, {})
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
            else:
                continue
            for target in map(resolve, targets):
                if target and target.split(".")[0] == top and target != name:
                    edges.setdefault(target, node.lineno)
    return graph


def upward_imports(graph):
    """``importer:line -> package`` for every module importing a package that contains it."""
    return sorted(f"{m}:{line} -> {t}" for m, edges in graph.items() for t, line in edges.items()
                  if m.startswith(t + "."))


def cycles(graph):
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return sorted(found)


def _cycle_path(graph, component):
    """One circle through ``component``, as ``a -> b -> ... -> a`` with the import lines."""
    members = set(component)
    start = component[0]
    path, seen = [start], {start}
    while True:
        here = path[-1]
        nxt = sorted(t for t in graph[here] if t in members)
        back = [t for t in nxt if t == start]
        step = back[0] if back and len(path) > 1 else next((t for t in nxt if t not in seen), start)
        path.append(step)
        if step == start or step in seen:
            break
        seen.add(step)
    return " -> ".join(f"{a} (line {graph[a][b]})" for a, b in zip(path, path[1:])) + f" -> {path[-1]}"


#: shared-internals modules (scikit-learn's ``sklearn/utils`` is the model): any feature may
#: import their names, private ones included. Each holds code used by several features and no
#: feature of its own: the argument checks, the thread policy, warnings' stack level and the
#: version at the root; ``_utils`` (option values, optional imports, forced paths, rendering);
#: the statistics layer's averaging engine, seed derivation and exact sums; the evaluation
#: layer's metric columns; and the data layer's input checks, array conversions and flat
#: (qid/group) layout.
SHARED = {"_validation", "_threads", "_stack", "_version",
          "_utils._choices", "_utils._optional", "_utils._render", "_utils._switches",
          "stats._engine", "stats._random", "stats._exact", "evaluation._columns",
          "data._checks", "data._conversion", "data._groups"}
#: modules outside a subpackage that belong to one (the others are their subpackage's)
FEATURES = {"__main__": "cli", "bootstrap": "stats"}


def feature_of(module, package_dir):
    """The feature a module belongs to: its subpackage (``io``, ``data``, ``metrics``,
    ``dask``, ``spark``), its group in :data:`FEATURES`, else the module itself."""
    parts = module.split(".")
    rel = ".".join(parts[1:])
    if rel in FEATURES:
        return FEATURES[rel]
    if len(parts) > 2 or (len(parts) == 2 and os.path.isdir(os.path.join(package_dir, parts[1]))):
        return parts[1]
    return rel


def private_imports(package_dir):
    """``importer:line imports module._name`` for every import of an underscore name from a
    module of another feature that is not a shared-internals module (:data:`SHARED`;
    compiled kernels count as shared)."""
    modules = modules_of(package_dir)
    top = os.path.basename(package_dir)
    shared = {f"{top}.{m}" for m in SHARED} | {m for m, path in modules.items() if path is None}
    found = []
    for name, path in modules.items():
        if path is None:
            continue
        package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            if base.split(".")[0] != top or base in shared or base not in modules:
                continue
            if feature_of(base, package_dir) == feature_of(name, package_dir):
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and f"{base}.{alias.name}" not in modules:
                    found.append(f"{name}:{node.lineno} imports {base}.{alias.name}")
    return sorted(found)


PACKAGE_DIR = os.path.dirname(rankereval.__file__)


def test_the_reader_sees_every_module():
    modules = modules_of(PACKAGE_DIR)
    for name in ("rankereval", "rankereval.cli", "rankereval.data", "rankereval.metrics._base",
                 "rankereval.io._trec", "rankereval.data._convert", "rankereval.metrics._kernels"):
        assert name in modules, name
    assert modules["rankereval.data._convert"] is None  # compiled
    graph = import_graph(PACKAGE_DIR)
    assert "rankereval._utils._runtime" in graph["rankereval._validation"]
    assert "rankereval.evaluation._evaluate" in graph["rankereval.stats._alignment"]


def test_the_thread_policy_and_the_checks_import_no_layers_kernel():
    """``_threads`` and ``_validation`` read the OpenMP thread count and the bitset limit from
    ``_utils/_runtime.pyx``, not from the conversion kernel of the data layer."""
    graph = import_graph(PACKAGE_DIR)
    for name in ("rankereval._threads", "rankereval._validation"):
        assert set(graph[name]) <= {"rankereval._utils._runtime", "rankereval._utils._choices"}, graph[name]


#: what the package root may hold besides subpackages (issue 43: a handful of files)
ROOT_FILES = {"__init__.py", "__main__.py", "_version.py", "exceptions.py", "_threads.py", "_validation.py",
              "_stack.py", "bootstrap.py", "_typedefs.pxd"}


def test_the_package_root_holds_a_handful_of_files():
    """Every module, kernel and header lives in the package of its layer; the root keeps the
    package's entry points, version, exceptions, the thread policy, the argument checks, the
    stack level of warnings, the public module ``rankereval.bootstrap`` and the C types."""
    found = {f for f in os.listdir(PACKAGE_DIR) if os.path.isfile(os.path.join(PACKAGE_DIR, f))
             and f.endswith((".py", ".pyx", ".pxd", ".h"))}
    assert found == ROOT_FILES


#: the public modules and the names they export (before the layout of issue 43, and after it)
PUBLIC = {
    "rankereval.bootstrap": ["BootstrapResult", "bootstrap_mean", "query_key_hashes"],
    "rankereval.agreement": ["rbo", "RBOResult", "jaccard", "kendall_tau", "tau_ap"],
    "rankereval.stats": ["compare", "Comparison", "Leaderboard", "adjust_pvalues", "TESTS", "CORRECTIONS",
                         "ALTERNATIVES"],
    "rankereval.cli": ["main"],
}


@pytest.mark.parametrize("module", ["rankereval", "rankereval.data", "rankereval.metrics", "rankereval.io",
                                    "rankereval.dask", *PUBLIC])
def test_the_public_import_paths(module):
    """Every public module imports and holds every name of its ``__all__``; the moved
    modules keep their public paths (``rankereval.bootstrap``, ``rankereval.agreement``, the
    console script ``rankereval.cli:main``)."""
    import importlib
    import importlib.metadata

    if module == "rankereval.dask":
        pytest.importorskip("dask")
    mod = importlib.import_module(module)
    for name in PUBLIC.get(module, []):
        assert name in mod.__all__, (module, name)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, (module, name)
    if module == "rankereval":
        assert rankereval.metrics.NDCG is rankereval.NDCG
        assert rankereval.compare is importlib.import_module("rankereval.stats").compare
        scripts = [e for e in importlib.metadata.entry_points(group="console_scripts") if e.name == "rankereval"]
        assert [e.value for e in scripts] == ["rankereval.cli:main"] and scripts[0].load() is mod.cli.main


# ---- the C side: includes of the headers and kernels ------------------------------------------

#: the package's C symbols (functions, macros, types of the headers) carry one of these prefixes
_C_SYMBOL = r"(?:re|RE|rankereval|RANKEREVAL)_\w+"


def _c_text(path):
    """The text of a header or Cython file without its C comments (a comment may name a file)."""
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if path.endswith(".h"):
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
    return text


def c_graph(package_dir):
    """``({file: {file it depends on: line}}, [unresolved includes])`` over the ``.h``, ``.pyx``
    and ``.pxd`` files of the package (paths relative to it). A file depends on what it
    includes (``#include "..."``, ``cdef extern from "..."``, resolved as the C compiler does
    for quotes: beside the including file, where the generated C++ of a ``.pyx`` is) and a
    header also on every header that defines a package symbol it uses: a header that uses
    another's internals without including it needs that one included first."""
    files = {}
    for folder, dirs, names in os.walk(package_dir):
        dirs[:] = [d for d in dirs if not d.startswith((".", "__"))]
        for name in names:
            if name.endswith((".h", ".pyx", ".pxd")):
                files[os.path.relpath(os.path.join(folder, name), package_dir)] = _c_text(os.path.join(folder, name))
    defined = {}
    for rel, text in files.items():
        if rel.endswith(".h"):
            for pattern in (rf"#\s*define\s+({_C_SYMBOL})", rf"\b({_C_SYMBOL})\s*\([^;{{]*\)\s*(?:noexcept\s*)?\{{",
                            rf"\b(?:struct|class|enum|union)\s+({_C_SYMBOL})\b"):
                for symbol in re.findall(pattern, text):
                    defined.setdefault(symbol, set()).add(rel)
    graph, unresolved = {}, []
    for rel, text in files.items():
        edges = graph.setdefault(rel, {})
        for lineno, line in enumerate(text.splitlines(), 1):
            for target in re.findall(r'#\s*include\s+"([^"]+)"|cdef\s+extern\s+from\s+"([^"]+)"', line):
                target = target[0] or target[1]
                path = os.path.normpath(os.path.join(os.path.dirname(rel), target))
                if path in files:
                    edges.setdefault(path, lineno)
                else:
                    unresolved.append(f"{rel}:{lineno} includes {target!r}")
            if rel.endswith(".h"):
                for symbol in re.findall(rf"\b({_C_SYMBOL})\b", line):
                    for home in defined.get(symbol, ()):
                        if home != rel and rel not in defined[symbol]:
                            edges.setdefault(home, lineno)
    return graph, sorted(unresolved)


def test_every_c_include_resolves():
    graph, unresolved = c_graph(PACKAGE_DIR)
    assert any(f.endswith("_lookup.h") for f in graph) and any(f.endswith("_kernels.pyx") for f in graph)
    assert unresolved == []


def test_the_c_includes_form_no_cycle():
    """No header includes one that (directly or not) includes it or uses its symbols back: the
    top-k's instruction-set headers depend on the traits interface only (issue 43)."""
    graph, _ = c_graph(PACKAGE_DIR)
    assert any(f.endswith("_topk_algo.h") for f in graph)
    found = cycles(graph)
    assert not found, "include cycles:\n" + "\n".join(_cycle_path(graph, c) for c in found)


def test_the_c_checks_find_a_cycle_and_a_missing_header(tmp_path):
    _write(tmp_path, {
        "pkg/a.h": '#include "b.h"\nstatic int re_a(int x) { return re_b(x); }\n',
        "pkg/b.h": "/* uses re_a of a.h, which includes this file */\nstatic int re_b(int x) { return x; }\n"
                   "static int re_c(int x) { return re_a(x); }\n",
        "pkg/sub/_k.pyx": 'cdef extern from "../a.h":\n    int re_a(int)\ncdef extern from "gone.h":\n    pass\n',
    })
    graph, unresolved = c_graph(str(tmp_path / "pkg"))
    assert graph["b.h"] == {"a.h": 3} and graph["a.h"] == {"b.h": 1}
    assert graph[os.path.join("sub", "_k.pyx")] == {"a.h": 1}
    assert cycles(graph) == [["a.h", "b.h"]]
    assert unresolved == [f"{os.path.join('sub', '_k.pyx')}:3 includes 'gone.h'"]


def test_no_module_imports_a_package_that_contains_it():
    assert upward_imports(import_graph(PACKAGE_DIR)) == []


def test_no_feature_imports_another_features_private_names():
    """Feature modules import shared internals and each other's public names, never each
    other's private helpers: what two features share lives in a shared-internals module."""
    assert private_imports(PACKAGE_DIR) == []


def test_no_import_cycles():
    graph = import_graph(PACKAGE_DIR)
    found = cycles(graph)
    assert not found, "import cycles:\n" + "\n".join(_cycle_path(graph, c) for c in found)


# ---- the checks themselves fail on a package with the faults they look for -----------------

def _write(root, files):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_checks_find_a_lazy_cycle_and_an_upward_import(tmp_path):
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    _write(tmp_path, {
        "pkg/__init__.py": "from pkg.low import f\nfrom pkg import _kernel  # the package's own\n",
        f"pkg/_kernel{ext}": "",
        "pkg/low.py": "import pkg._kernel as _kernel\n\ndef f():\n    from . import high\n",
        "pkg/high.py": "from pkg.low import f\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/leaf.py": "from pkg import _kernel\nfrom .. import sub\n",
        "pkg/up.py": "from pkg import f\n",
    })
    graph = import_graph(str(tmp_path / "pkg"))
    assert graph["pkg.low"] == {"pkg._kernel": 1, "pkg.high": 4}
    assert cycles(graph) == [["pkg.high", "pkg.low"]]
    assert "pkg.high" in _cycle_path(graph, ["pkg.high", "pkg.low"])
    assert upward_imports(graph) == ["pkg.sub.leaf:2 -> pkg.sub", "pkg.up:1 -> pkg"]


def test_the_private_import_check_finds_one(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/_validation.py": "def _shared():\n    pass\n",
        "pkg/feature.py": "def _helper():\n    pass\n",
        "pkg/other.py": ("from pkg.feature import _helper, public\nfrom pkg._validation import _shared\n"
                         "from pkg.sub._a import _b\n"),
        "pkg/sub/__init__.py": "",
        "pkg/sub/_a.py": "def _b():\n    pass\n",
        "pkg/sub/_c.py": "from ._a import _b\nfrom pkg.feature import _helper\n",
    })
    assert private_imports(str(tmp_path / "pkg")) == [
        "pkg.other:1 imports pkg.feature._helper", "pkg.other:3 imports pkg.sub._a._b",
        "pkg.sub._c:2 imports pkg.feature._helper"]



def test_the_command_line_starts_without_scipy_or_pandas():
    """``import rankereval``, ``rankereval --help`` and ``rankereval metrics`` load NumPy and
    the package only: SciPy's sparse module (about 0.13 s of CPU to import) comes with the
    first sparse input, pandas and pyarrow with the first file read."""
    import subprocess

    code = ("import sys, io, contextlib, rankereval, rankereval.metrics\n"
            "from rankereval.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    assert main(['--help']) == 0 and main(['metrics']) == 0\n"
            "bad = [m for m in ('scipy', 'pandas', 'pyarrow') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(PACKAGE_DIR))


def test_evaluating_plain_files_loads_neither_pandas_pyarrow_nor_scipy():
    """``rankereval evaluate`` on plain TREC files with short ids (the bundled sample) reads
    them with the package's own parser and builds the labels without SciPy."""
    import subprocess

    code = ("import sys, io, contextlib\n"
            "from rankereval.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "    assert main(['example', '--quiet', '-q', '-m', 'official']) == 0\n"
            "assert 'map' in out.getvalue()\n"
            "bad = [m for m in ('scipy', 'pandas', 'pyarrow') if m in sys.modules]\n"
            "assert not bad, bad\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(PACKAGE_DIR))


def test_the_command_line_help_imports_no_numpy():
    """``rankereval --help`` and each subcommand's ``--help`` (and ``--version``) need the
    parser only: the option values come from ``rankereval._utils._choices``, NumPy and the compiled
    kernels come with the first command that computes."""
    import subprocess

    code = ("import sys, io, contextlib\n"
            "from rankereval.cli import main\n"
            "for argv in (['--help'], ['evaluate', '--help'], ['compare', '--help'], ['example', '--help'],\n"
            "             ['metrics', '--help'], ['--version']):\n"
            "    with contextlib.redirect_stdout(io.StringIO()) as out:\n"
            "        assert main(argv) == 0, argv\n"
            "    assert 'usage: rankereval' in out.getvalue() or argv == ['--version'], argv\n"
            "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'scipy', 'pandas', 'pyarrow')\n"
            "                or m in ('rankereval.data._convert', 'rankereval.metrics._kernels', 'rankereval.metrics'))\n"
            "assert not loaded, loaded\n")
    subprocess.run([sys.executable, "-c", code], check=True)
    # the program itself, as the shell starts it
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "rankereval", "evaluate", "--help"],
                          capture_output=True, text=True, check=True)
    assert "--tie-break" in proc.stdout
    imported = [line.rpartition("|")[2].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")]
    assert "rankereval.cli" in imported and "argparse" in imported
    assert not [m for m in imported if m.split(".")[0] == "numpy"]

