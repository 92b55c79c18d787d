"""Run every docstring example of the installed package as a test.

pytest's ``--doctest-modules`` would import the source tree, which holds no compiled
extensions in a fresh clone; collecting the doctests from the imported package tests what
users install.
"""
import doctest
import importlib
import inspect

import numpy as np
import pytest

MODULES = ["rankereval", "rankereval.data", "rankereval.metrics", "rankereval.bootstrap", "rankereval.io", "rankereval.cli",
           "rankereval.stats", "rankereval.dask", "rankereval.agreement"]


class _Finder(doctest.DocTestFinder):
    """doctest's finder, which also takes the methods of a class that a package shows under
    its own name but defines in a private submodule (``rankereval.data.Rankings`` lives in
    ``rankereval/data/_rankings.py``; ``rankereval.bootstrap.bootstrap_mean`` in
    ``rankereval/stats/_resampling.py``): doctest tells a function's module by its globals, so
    it would skip those methods."""

    def _from_module(self, module, object):
        if inspect.isfunction(object) and object.__globals__.get("__name__", "").startswith(module.__name__ + "._"):
            return True
        if inspect.isfunction(object) and object.__module__ == module.__name__:  # shown under a public module
            return True
        if inspect.isfunction(object) and "." in object.__qualname__:  # a method of a class shown so
            owner = object.__globals__.get(object.__qualname__.split(".")[0])
            if inspect.isclass(owner) and owner.__module__ == module.__name__:
                return True
        return super()._from_module(module, object)


def _doctests():
    finder = _Finder(exclude_empty=True)
    tests = []
    for name in MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError as exc:  # optional dependency of an optional module
            if name in ("rankereval", "rankereval.data", "rankereval.metrics"):
                raise
            tests.append(pytest.param(None, marks=pytest.mark.skip(reason=str(exc)), id=name))
            continue
        for attr in getattr(module, "__all__", ()):  # a package that imports its names on first use
            getattr(module, attr)
        for test in finder.find(module, name):
            if test.examples:
                tests.append(pytest.param(test, id=test.name))
    return tests


@pytest.mark.parametrize("test", _doctests())
def test_docstring_examples(test):
    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    runner = doctest.DocTestRunner(optionflags=flags)
    with np.printoptions(legacy=False):
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples failed in {test.name}"
