"""pytest configuration for the documentation's doctests.

``python -m pytest docs`` runs every ``>>>`` example of the guide pages
(``--doctest-glob='*.rst'`` comes from pyproject.toml).  Sphinx's own files are
not test modules: importing ``conf.py`` would change ``sys.path`` for the rest
of the session, and build output or templates hold no examples to run.
"""
collect_ignore = ["conf.py"]
collect_ignore_glob = ["_build/*", "_templates/*", "_static/*", "_tools/*", "api/generated/*"]

try:  # the cluster page needs the dask extra
    import dask.dataframe  # noqa: F401
    import distributed  # noqa: F401
    import pyarrow  # noqa: F401
except ImportError:
    collect_ignore.append("guide/cluster.rst")

# guide/training.rst skips itself (pytest.importorskip, reason printed by -ra) without torch
