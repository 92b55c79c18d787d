"""Rules of the test suite itself, read from the source of ``tests/`` (wherever it is copied):

* a test module never imports another test module (importing one runs its module-level code
  and brings its autouse fixtures along); what several modules share lives in ``helpers.py``
  (functions, strategies, data), ``fuzzing.py`` (the fuzzing machinery) or ``conftest.py``
  (fixtures);
* a test module does not define its own copy of a helper of ``helpers.py`` (under the same
  name, with or without a leading underscore).
"""
import ast
import os

import pytest

TESTS = os.path.dirname(os.path.abspath(__file__))
TEST_MODULES = sorted(f for f in os.listdir(TESTS) if f.startswith("test_") and f.endswith(".py"))


def _tree(name):
    with open(os.path.join(TESTS, name), encoding="utf-8") as fh:
        return ast.parse(fh.read(), filename=name)


def imported_modules(tree):
    """Top-level names of the modules a module imports: ``import a.b``, ``from a import b``,
    and ``importlib.import_module("a")`` / ``__import__("a")`` with a literal name."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level > 0:  # from . import test_x
            found.update(alias.name for alias in node.names)
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and ((isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                   or (isinstance(node.func, ast.Name) and node.func.id == "__import__"))):
            found.add(node.args[0].value.split(".")[0])
    return found


def test_the_rules_see_the_suite():
    assert "test_suite_rules.py" in TEST_MODULES and len(TEST_MODULES) > 40
    tree = ast.parse("import test_a\nfrom test_b import x\nimport importlib\n"
                     "importlib.import_module('test_c.d')\n__import__('test_e')\nfrom . import test_f\n"
                     "from helpers import quiet\n")
    assert {m for m in imported_modules(tree) if m.startswith("test_")} == {
        "test_a", "test_b", "test_c", "test_e", "test_f"}


@pytest.mark.parametrize("name", TEST_MODULES)
def test_no_test_module_imports_another(name):
    others = {m for m in imported_modules(_tree(name)) if m.startswith("test_")}
    assert not others, (f"{name} imports the test module(s) {sorted(others)}: move what they share "
                        "to tests/helpers.py (or fixtures to tests/conftest.py)")


def _helper_names():
    tree = _tree("helpers.py")
    return {node.name for node in tree.body
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")}


def test_no_copy_of_a_helper():
    helpers = _helper_names()
    assert {"quiet", "ranked", "trec_eval", "same", "assert_same_evaluation"} <= helpers
    copies = []
    for name in TEST_MODULES + ["fuzzing.py"]:
        for node in _tree(name).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node.name.lstrip("_") in helpers:
                copies.append(f"{name}:{node.lineno} {node.name}")
    assert not copies, f"copies of helpers.py's functions (import them instead): {copies}"
