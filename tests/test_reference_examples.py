"""Every example of the API reference (shared/spec/metrics-reference.txt) prints what it shows.

The examples are read from the reference text itself, so this test does not depend on our
docstrings. Outputs are compared with all whitespace removed: the reference shows
``array([2., 1. ])`` for FirstRelevantRank, which NumPy prints as ``array([2., 1.])``
(NumPy pads a column only to the width of its widest element); the values are the same.
"""
import contextlib
import io
import pathlib
import re

import pytest

SPEC_CANDIDATES = [
    pathlib.Path(__file__).resolve().parents[2] / "shared" / "spec" / "metrics-reference.txt",
    pathlib.Path(__file__).resolve().parent / "data" / "metrics-reference.txt",
]
SPEC = next((p for p in SPEC_CANDIDATES if p.exists()), None)


def _examples():
    if SPEC is None:
        return []
    lines = SPEC.read_text(encoding="utf-8").splitlines()
    blocks, current = [], None
    for line in lines:
        if line.startswith(">>> "):
            if current is None:
                current = []
            current.append(["", line[4:], []])
        elif current is not None and line.strip() and not line.startswith(">>>"):
            current[-1][2].append(line)
        elif current is not None and not line.strip():
            blocks.append(current)
            current = None
    if current:
        blocks.append(current)
    return blocks


EXAMPLES = _examples()


def test_reference_found():
    assert SPEC is not None, "metrics-reference.txt not found"
    assert len(EXAMPLES) == 10  # one example per metric


@pytest.mark.parametrize("block", EXAMPLES, ids=lambda b: re.sub(r"\W", "", b[0][1])[:40])
def test_reference_example(block):
    namespace = {}
    for _, source, expected in block:
        source = source.split("#")[0].strip() if source.lstrip().startswith("#") else source
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            try:
                value = eval(compile(source, "<example>", "eval"), namespace)
            except SyntaxError:
                exec(compile(source, "<example>", "exec"), namespace)
                value = None
        if value is not None:
            print(repr(value), file=out)
        got = re.sub(r"\s+", "", out.getvalue())
        want = re.sub(r"\s+", "", "".join(expected))
        assert got == want, f"{source}\n got: {out.getvalue()!r}\nwant: {expected!r}"
