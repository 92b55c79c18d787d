"""The installed distribution ships every module of the source tree, and every place that
states the version states the same one.

These tests compare the package that is imported (the installed one: see conftest.py) with the
source tree it was built from. The source tree is the checkout holding this tests/ folder, or
the one named by ``RANKEREVAL_SOURCE_TREE`` when the tests run from a copy elsewhere (as CI
does for the built wheel). Without a source tree they are skipped.
"""
import importlib.machinery
import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys

import pytest

import rankereval

_here = pathlib.Path(__file__).resolve().parents[1]
SOURCE = pathlib.Path(os.environ.get("RANKEREVAL_SOURCE_TREE", _here)).resolve()
PACKAGE_DIR = pathlib.Path(rankereval.__file__).resolve().parent

needs_source = pytest.mark.skipif(
    not (SOURCE / "rankereval" / "_version.py").is_file(),
    reason=f"no rankereval source tree at {SOURCE} (set RANKEREVAL_SOURCE_TREE)",
)


def _source_version():
    text = (SOURCE / "rankereval" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^__version__ = "([^"]+)"$', text, flags=re.MULTILINE)
    assert match, "rankereval/_version.py must assign __version__ a plain string literal"
    return match.group(1)


def _source_files(*patterns):
    root = SOURCE / "rankereval"
    found = set()
    for pattern in patterns:
        for path in root.rglob(pattern):
            rel = path.relative_to(SOURCE)
            if "__pycache__" not in rel.parts and not rel.name.startswith("."):
                found.add(rel.as_posix())
    return found


def _installed_files():
    dist = importlib.metadata.distribution("rankereval")
    if SOURCE in PACKAGE_DIR.parents:
        pytest.skip(f"rankereval is imported from the source tree ({PACKAGE_DIR}), not installed")
    files = dist.files
    assert files, "the installed rankereval has no RECORD: installed by a tool that wrote none?"
    shipped = {f.as_posix() for f in files}  # PackagePath: paths relative to site-packages
    if not any(name.startswith("rankereval/") for name in shipped):
        pytest.skip("rankereval is installed in editable mode (no package files in its RECORD)")
    return dist, shipped


@needs_source
def test_every_module_of_the_source_tree_is_installed():
    dist, shipped = _installed_files()
    missing = sorted(_source_files("*.py") - shipped)
    assert not missing, f"modules of the source tree missing from the installed distribution: {missing}"
    # and they are on disk where the imported package lives, not only listed
    for name in _source_files("*.py"):
        assert (PACKAGE_DIR.parent / name).is_file(), name
    assert PACKAGE_DIR == pathlib.Path(dist.locate_file("rankereval")).resolve()


@needs_source
def test_every_cython_module_is_compiled_and_its_sources_shipped():
    _, shipped = _installed_files()
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    for pyx in sorted(_source_files("*.pyx")):
        stem = pyx[: -len(".pyx")]
        compiled = [name for name in shipped if name.startswith(stem + ".") and name.endswith(suffixes)]
        assert compiled, f"{pyx} has no compiled extension module in the installed distribution"
        module = importlib.import_module(stem.replace("/", "."))
        assert pathlib.Path(module.__file__).resolve().parent.is_relative_to(PACKAGE_DIR)
    data = _source_files("*.pyx", "*.pxd", "*.h") | _source_files("_sample/*.txt")
    missing = sorted(data - shipped)
    assert not missing, f"package data missing from the installed distribution: {missing}"


@needs_source
def test_installed_metadata_matches_the_source_version():
    version = _source_version()
    assert rankereval.__version__ == version
    assert importlib.metadata.version("rankereval") == version


@needs_source
@pytest.mark.parametrize(
    "command",
    [["rankereval", "--version"], [sys.executable, "-m", "rankereval", "--version"]],
    ids=["console-script", "python-m"],
)
def test_command_line_reports_the_version(command):
    if command[0] == "rankereval":
        script = pathlib.Path(sys.executable).parent / "rankereval"
        if not script.exists():
            pytest.skip(f"no rankereval console script beside {sys.executable}")
        command = [str(script)] + command[1:]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert out.strip() == f"rankereval {_source_version()}"


@needs_source
def test_docs_and_changelog_state_the_version():
    version = _source_version()
    if not (SOURCE / "docs" / "conf.py").is_file():
        pytest.skip("no docs/ in the source tree")
    code = (
        "import runpy, sys; conf = runpy.run_path(sys.argv[1]); "
        "print(conf['release']); print(conf['version'])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(SOURCE / "docs" / "conf.py")],
        capture_output=True, text=True, check=True,
    ).stdout.split()
    assert out[-2:] == [version, ".".join(version.split(".")[:2])]
    # the changelog's newest entry is this version
    changelog = (SOURCE / "docs" / "changelog.rst").read_text(encoding="utf-8")
    headings = re.findall(r"^(\d+\.\d+\.\d+\S*) \((.+)\)\n-+$", changelog, flags=re.MULTILINE)
    assert headings, "docs/changelog.rst has no 'X.Y.Z (date or unreleased)' section"
    assert headings[0][0] == version


@needs_source
def test_build_configuration_discovers_subpackages():
    """pyproject.toml finds packages rather than listing them, ships the Cython sources of
    subpackages too, and reads the version from rankereval/_version.py without importing the
    (compiled) package."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((SOURCE / "pyproject.toml").read_text(encoding="utf-8"))
    setuptools_config = config["tool"]["setuptools"]
    assert setuptools_config["packages"] == {"find": {"include": ["rankereval*"]}}
    assert sorted(setuptools_config["package-data"]["*"]) == ["*.h", "*.pxd", "*.pyx"]
    assert "version" not in config["project"] and config["project"]["dynamic"] == ["version"]
    assert setuptools_config["dynamic"]["version"] == {"attr": "rankereval._version.__version__"}


@needs_source
def test_setup_compiles_cython_modules_of_subpackages(tmp_path):
    """setup.py turns every .pyx under rankereval/, at any depth, into an extension module
    named by its path."""
    import runpy

    pytest.importorskip("setuptools")  # setup.py imports it (venvs of Python 3.12+ lack it)
    for rel in ["_a.pyx", "metrics/_b.pyx", "io/deep/_c.pyx", "metrics/helper.py", "_d.pxd"]:
        path = tmp_path / "rankereval" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
    setup_py = runpy.run_path(str(SOURCE / "setup.py"), run_name="rankereval_setup")
    assert setup_py["cython_modules"](str(tmp_path)) == [
        ("rankereval._a", os.path.join("rankereval", "_a.pyx")),
        ("rankereval.io.deep._c", os.path.join("rankereval", "io", "deep", "_c.pyx")),
        ("rankereval.metrics._b", os.path.join("rankereval", "metrics", "_b.pyx")),
    ]
    # and in the real tree: the three kernel modules at least, each importable once installed
    names = [name for name, _ in setup_py["cython_modules"](str(SOURCE))]
    assert {"rankereval.stats._bootstrap", "rankereval.data._convert", "rankereval.metrics._kernels"} <= set(names)
