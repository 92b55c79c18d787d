"""Sphinx configuration for the rankereval documentation.

Build (from the repository root, after ``python setup.py build_ext --inplace``
or ``pip install .``)::

    sphinx-build -W --keep-going -b html docs docs/_build/html

The build is meant to work without network access (CI has none):

* **Intersphinx** links to Python, NumPy, SciPy and pandas come from their online
  inventories.  When an inventory cannot be fetched, Sphinx falls back to a
  local copy (Debian's ``python3.11-doc`` for Python, or a file named
  ``<name>.inv`` in ``$RANKEREVAL_INTERSPHINX_DIR``) and finally to an empty
  inventory written at build time, so an offline build simply has no links
  into those projects instead of failing.
* **Formulas** are rendered by MathJax.  If ``docs/_static/mathjax/`` holds a
  local MathJax 3 (``bash docs/_tools/fetch_mathjax.sh`` puts it there from
  the npm registry), the pages use it and render formulas offline; otherwise
  they load MathJax from its CDN.
"""
import os
import re
import sys
import tempfile
import zlib
from pathlib import Path

DOCS_DIR = Path(__file__).resolve().parent
ROOT_DIR = DOCS_DIR.parent

# Document the working tree when its extensions are built in place
# (``python setup.py build_ext --inplace``); otherwise the installed package
# (``pip install .``), since a source tree without compiled kernels cannot be
# imported.
if any((ROOT_DIR / "rankereval").glob("_kernels*.so")) or any(
    (ROOT_DIR / "rankereval").glob("_kernels*.pyd")
):
    sys.path.insert(0, str(ROOT_DIR))

# -- Project information -----------------------------------------------------

project = "rankereval"
author = "rankereval developers"
copyright = "rankereval developers"


def _version():
    """The version written in rankereval/_version.py (its one source), read without importing
    the package, so that the pages name the version of the sources they document."""
    text = (ROOT_DIR / "rankereval" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__\s*=\s*"([^"]+)"', text, flags=re.MULTILINE)
    if match is None:
        raise RuntimeError("no __version__ = \"...\" line in rankereval/_version.py")
    return match.group(1)


release = _version()
version = ".".join(release.split(".")[:2])

# -- General configuration ---------------------------------------------------

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    "numpydoc",
    # figures made at build time (``.. plot::``, docs/guide/comparing_systems.rst); matplotlib
    # is in the docs extra
    "matplotlib.sphinxext.plot_directive",
]
plot_html_show_source_link = False
plot_html_show_formats = False
plot_formats = [("png", 110)]
plot_rcparams = {"figure.autolayout": True}

templates_path = ["_templates"]
exclude_patterns = ["_build", "_tools", "_metric_*.rst", "Thumbs.db", ".DS_Store"]
root_doc = "index"
language = "en"
default_role = "autolink"
pygments_style = "sphinx"

# -- autodoc / autosummary / numpydoc ----------------------------------------

# every page, plus the generated (excluded, included-by-api.rst) list of metric classes
autosummary_generate = sorted(
    os.path.relpath(os.path.join(d, f), os.path.dirname(os.path.abspath(__file__)))
    for d, _, files in os.walk(os.path.dirname(os.path.abspath(__file__)))
    if "_build" not in d
    for f in files if f.endswith(".rst") and not f.startswith("_metric_")
) + ["_metric_autosummary.rst"]
autosummary_imported_members = False
autodoc_default_options = {"member-order": "bysource"}
autodoc_typehints = "none"
autodoc_inherit_docstrings = True


def _missing(modules):
    """The modules of ``modules`` that cannot be imported here (found without importing)."""
    import importlib.util

    return [m for m in modules if importlib.util.find_spec(m) is None]


# The docs extra alone builds the docs: rankereval.spark and rankereval.dask import PySpark and
# Dask (their own extras) at import; where those are not installed autodoc imports the modules
# against mocks (only their docstrings and signatures are read). Installed, the real ones are used.
OPTIONAL_RUNTIME_MODULES = ["pyspark", "dask", "distributed"]
autodoc_mock_imports = _missing(OPTIONAL_RUNTIME_MODULES)

numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = True
numpydoc_xref_aliases = {
    # Plain targets for builtins (numpydoc's defaults spell them "python:int"
    # etc., which an offline build would print verbatim); intersphinx resolves
    # them into the Python documentation when its inventory is available.
    "int": "int",
    "float": "float",
    "str": "str",
    "string": "str",
    "dict": "dict",
    "list": "list",
    "tuple": "tuple",
    "None": "None",
    "True": "True",
    "False": "False",
    "callable": "callable",
    "float64": "numpy.float64",
    "ndarrays": "numpy.ndarray",
    "ndarray": "numpy.ndarray",
    "Generator": "numpy.random.Generator",
    "RandomState": "numpy.random.RandomState",
    "sparse matrix": "scipy.sparse.spmatrix",
    "csr_array": "scipy.sparse.csr_array",
    "Labels": "rankereval.data.Labels",
    "BinaryLabels": "rankereval.BinaryLabels",
    "NumericLabels": "rankereval.NumericLabels",
    "Rankings": "rankereval.Rankings",
    "BootstrapResult": "rankereval.bootstrap.BootstrapResult",
    "Comparison": "rankereval.stats.Comparison",
    "Metric": "rankereval.Metric",
}
numpydoc_xref_ignore = {
    "scipy",
    "sparse",
    "path",
    "file",
    "binary",
    "object",
    "number",
    "of",
    "or",
    "and",
    "optional",
    "default",
    "shape",
    "n_rankings",
    "n_rows",
    "n_items",
    "max_len",
    "lists",
    "list of",
    "int or None",
    "None",
}

# -- doctest (``sphinx-build -b doctest docs docs/_build/doctest``) ----------
# The same ``>>>`` blocks are run by pytest (``--doctest-glob='*.rst'``) with
# the option flags configured in pyproject.toml; keep both in agreement.
import doctest  # noqa: E402

doctest_default_flags = (
    doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE | doctest.DONT_ACCEPT_TRUE_FOR_1
)
doctest_test_doctest_blocks = "default"

# -- intersphinx -------------------------------------------------------------

intersphinx_timeout = 10


def _empty_inventory():
    """Write an inventory with no entries: the offline fallback of last resort."""
    path = Path(tempfile.gettempdir()) / "rankereval-docs-empty-objects.inv"
    header = (
        b"# Sphinx inventory version 2\n"
        b"# Project: empty offline fallback\n"
        b"# Version: 0\n"
        b"# The remainder of this file is compressed using zlib.\n"
    )
    data = header + zlib.compress(b"")
    if not path.is_file() or path.read_bytes() != data:
        path.write_bytes(data)
    return str(path)


def _inventory(name, url, local_candidates=()):
    """Online inventory first, then local copies, then the empty fallback."""
    locations = [None]
    user_dir = os.environ.get("RANKEREVAL_INTERSPHINX_DIR")
    if user_dir:
        local_candidates = [os.path.join(user_dir, f"{name}.inv"), *local_candidates]
    locations += [p for p in local_candidates if os.path.isfile(p)]
    locations.append(_empty_inventory())
    return (url, tuple(locations))


intersphinx_mapping = {
    "python": _inventory(
        "python",
        "https://docs.python.org/3/",
        [
            f"/usr/share/doc/python{sys.version_info[0]}.{sys.version_info[1]}/html/objects.inv",
            "/usr/share/doc/python3/html/objects.inv",
        ],
    ),
    "numpy": _inventory("numpy", "https://numpy.org/doc/stable/"),
    "scipy": _inventory("scipy", "https://docs.scipy.org/doc/scipy/"),
    "pandas": _inventory("pandas", "https://pandas.pydata.org/docs/"),
}

# -- math --------------------------------------------------------------------

_LOCAL_MATHJAX = DOCS_DIR / "_static" / "mathjax" / "tex-chtml.js"
if _LOCAL_MATHJAX.is_file():
    # relative paths are served from _static/
    mathjax_path = "mathjax/tex-chtml.js"

# -- HTML output -------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"rankereval {release}"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
html_show_sourcelink = False
html_theme_options = {
    "navbar_align": "left",
    "header_links_before_dropdown": 7,
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
# pages without sub-pages need no section navigation: give the text the width
html_sidebars = {
    page: []
    for page in ("index", "installation", "quickstart", "definitions", "api", "changelog")
}
html_context = {"default_mode": "light"}


# -- offline builds ----------------------------------------------------------


def _skip_unavailable_external_refs(app, env, node, contnode):
    """Render ``:ref:``/``:term:`` targets of an unloaded inventory as plain text.

    numpydoc links types such as ``bool`` or ``array_like`` to labels of the
    Python and NumPy documentation. Without their inventories (an offline
    build) those references cannot resolve; they are shown unlinked instead of
    failing the build. References into inventories that did load, and all
    references inside this project, are untouched.
    """
    target = node.get("reftarget", "")
    if node.get("reftype") not in ("ref", "term") or ":" not in target:
        return None
    project = target.split(":", 1)[0]
    if project not in app.config.intersphinx_mapping:
        return None
    try:
        from sphinx.ext.intersphinx._shared import InventoryAdapter
    except ImportError:  # Sphinx < 7.3
        from sphinx.ext.intersphinx import InventoryAdapter

    if InventoryAdapter(env).named_inventory.get(project):
        return None  # loaded: a genuinely wrong target still warns
    return contnode


def _public_bases(app, name, obj, options, bases):
    """Show the nearest public classes instead of private helper bases."""

    def public(cls):
        if not cls.__name__.startswith("_"):
            return [cls]
        found = []
        for base in cls.__bases__:
            if base is not object:
                found.extend(b for b in public(base) if b not in found)
        return found

    new = []
    for base in bases:
        for b in public(base) if isinstance(base, type) else [base]:
            if b not in new:
                new.append(b)
    bases[:] = new or [object]


_REEXPORTING_MODULES = ("rankereval.data.", "rankereval.metrics.")


def _resolve_reexported(app, env, node, contnode):
    """Resolve ``rankereval.data.X`` / ``rankereval.metrics.X`` to ``rankereval.X``.

    The classes are documented under their public top-level names
    (``rankereval.NDCG``); autodoc registers the defining module's name as an
    alias for the classes themselves, but not for their methods and
    attributes, which docstrings also reference by the module path (or
    relative to it).
    """
    if node.get("refdomain") != "py":
        return None
    target = node.get("reftarget", "")
    module = node.get("py:module") or ""
    if target.startswith(_REEXPORTING_MODULES):
        new_target = "rankereval." + target.split(".", 2)[2]
    elif module + "." in _REEXPORTING_MODULES and not target.startswith("rankereval"):
        new_target = "rankereval." + target
    else:
        return None
    domain = env.get_domain("py")
    return domain.resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], new_target, node, contnode
    )


def _write_metric_table(app):
    """docs/_metric_*.rst: the table of metrics and the API list of metric classes, from the
    metric registry (a new metric appears in the docs without editing any page)."""
    from rankereval.metrics._base import _registered

    rows = []
    for cls in _registered(everything=True):
        info = cls.info
        form = info.name_form()
        aliases = ", ".join(f"``{a}``" for a in info.aliases) or "--"
        rows.append(f"   * - :class:`~rankereval.{cls.__name__}`\n     - ``{form}``\n     - {aliases}\n"
                    f"     - {info.labels}\n     - {info.summary}")
    text = (".. list-table:: Metrics and their names (generated from the metric registry)\n"
            "   :header-rows: 1\n   :widths: 14 12 18 8 48\n\n"
            "   * - class\n     - name\n     - aliases\n     - labels\n     - summary\n"
            + "\n".join(rows) + "\n")
    autosummary = (".. currentmodule:: rankereval\n\n"
                   ".. autosummary::\n   :toctree: api/generated\n   :nosignatures:\n\n"
                   + "".join(f"   {cls.__name__}\n" for cls in _registered(everything=True)))
    from rankereval.metrics._ir_names import table_rows

    ir_rows = "".join(f"   * - ``{names}``\n     - {params}\n     - {target}\n     - {note}\n"
                      for names, params, target, note in table_rows())
    ir_table = (".. list-table:: ir_measures names (generated from rankereval/metrics/_ir_names.py)\n"
                "   :header-rows: 1\n   :widths: 22 14 34 30\n\n"
                "   * - ir_measures\n     - parameters read\n     - rankereval\n     - note\n" + ir_rows)
    # next to the pages that include them (docs/), so that autosummary resolves the stubs'
    # directory the same way when it generates them and when api.rst includes the list
    for name, content in (("_metric_table.rst", text), ("_metric_autosummary.rst", autosummary),
                          ("_metric_ir_measures.rst", ir_table)):
        path = os.path.join(app.srcdir, name)
        if not os.path.exists(path) or open(path).read() != content:
            with open(path, "w") as fh:
                fh.write(content)


def setup(app):
    # before autosummary's own builder-inited handler reads the sources
    app.connect("builder-inited", _write_metric_table, priority=100)
    app.connect("autodoc-process-bases", _public_bases)
    app.connect("missing-reference", _resolve_reexported)
    # after intersphinx's own handler
    app.connect("missing-reference", _skip_unavailable_external_refs, priority=900)
