"""Shared pytest configuration for the rankereval test suite.

Hypothesis profiles:

* ``ci`` (default): deterministic (``derandomize=True``), ~100 examples per
  property, no deadline (CI machines are shared and slow), failing examples are
  printed together with a reproduction blob.  No example database is written.
* ``long``: ~2000 examples per property, random seeds, for a thorough local
  run: ``HYPOTHESIS_PROFILE=long python -m pytest tests``.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=100,
    deadline=None,
    print_blob=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    max_examples=2000,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


import pytest  # noqa: E402


def pytest_configure(config):
    # here rather than in pyproject.toml: the suite also runs as a copy outside the checkout
    config.addinivalue_line(
        "markers", "spark: starts a local Spark session (about a minute; deselect with -m 'not spark'); "
        "skipped with the reason printed where pyspark is missing")
    config.addinivalue_line(
        "markers", "browser: renders HTML in a real headless Chromium (tests/test_html_repr.py); "
        "skipped (reason printed) where no browser is found or with RANKEREVAL_NO_BROWSER=1; "
        "RANKEREVAL_REQUIRE_BROWSER=1 makes a missing browser fail")


@pytest.fixture(autouse=True, scope="session")
def _subprocesses_import_the_tested_package(tmp_path_factory):
    """Child Pythons (``python -c``, ``python -m``) put their working directory first on
    ``sys.path``. Run them outside the checkout, with the package this process imported on
    ``PYTHONPATH``, so that they test the same build: the installed one in CI (the source
    tree of a fresh clone has no compiled extensions), the in-place build in development."""
    import rankereval

    pkg_parent = os.path.dirname(os.path.dirname(os.path.abspath(rankereval.__file__)))
    old_cwd, old_path = os.getcwd(), os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = pkg_parent + (os.pathsep + old_path if old_path else "")
    os.chdir(tmp_path_factory.mktemp("cwd"))
    try:
        yield
    finally:
        os.chdir(old_cwd)
        if old_path is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_path
