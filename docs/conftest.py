"""pytest configuration for the documentation's doctests.

``python -m pytest docs`` runs every ``>>>`` example of the guide pages
(``--doctest-glob='*.rst'`` comes from pyproject.toml).  Sphinx's own files are
not test modules: importing ``conf.py`` would change ``sys.path`` for the rest
of the session, and build output or templates hold no examples to run.
"""
collect_ignore = ["conf.py"]
collect_ignore_glob = ["_build/*", "_templates/*", "_static/*", "_tools/*", "api/generated/*"]

try:  # the cluster page needs the dask and spark extras
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
    import pyarrow  # noqa: F401
    import pyspark  # noqa: F401
except ImportError:
    collect_ignore.append("guide/cluster.rst")
else:
    import os
    import sys

    import rankereval

    # Spark's Python workers: this interpreter, importing the rankereval under test
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    _root = os.path.dirname(os.path.dirname(os.path.abspath(rankereval.__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join([_root] + [p for p in [os.environ.get("PYTHONPATH")] if p])

# guide/training.rst skips itself (pytest.importorskip, reason printed by -ra) without torch
