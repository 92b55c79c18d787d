"""Pickles of the public objects survive the package's layout (issue 43): the streams that
today's main (b486d45, before the move of the modules into ``evaluation/``, ``stats/``,
``cli/``...) wrote load and equal the same objects built now, and new streams name the same
globals. The data classes' streams of 0.3.0's single-module ``data.py`` are
``tests/test_data_pickles.py``'s.

The streams are ``tests/data/pickles/<name>.pkl``, written by running this file with main's
build (``/work/venv/bin/python tests/test_pickles.py tests/data/pickles``) under NumPy 2:
they name ``numpy._core`` for the arrays, which NumPy 1.x cannot import.
"""
import json
import os
import pickle
import pickletools
import sys
import warnings

import numpy as np
import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pickles")


def objects():
    """{name: object} built from the public API only, the same in every version."""
    from rankereval import AP, NDCG, BinaryLabels, NumericLabels, Precision, Rankings, compare, evaluate
    from rankereval.agreement import rbo
    from rankereval.bootstrap import bootstrap_mean

    binary = BinaryLabels.from_positive_indices([[0, 5], [1, 2, 3], [4]])
    numeric = NumericLabels.from_matrix([[0, 2.5, 1, 0, 0, 3], [3, 0, 0, 1, 0, 0], [0, 0, 0, 0, 2, 0]])
    a = Rankings.from_ranked_indices([[3, 2, 1, 0], [1, 2, 5], [4, 0]])
    b = Rankings.from_ranked_indices([[0, 5, 1], [3, 2, 1], [0, 4]])
    metrics = [NDCG(3), AP(), Precision(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        comparison = compare(numeric, {"a": a, "b": b}, [NDCG(3), AP()], nan_handling="propagate",
                             random_state=0, n_resamples=99)
    return {
        "binary": binary, "numeric": numeric, "rankings": a, "metrics": metrics,
        "evaluation": evaluate(numeric, a, metrics, conf_interval=True, confidence=0.9, n_resamples=99,
                               random_state=0),
        "comparison": comparison,
        "bootstrap_result": bootstrap_mean(np.array([0.1, 0.5, 0.25, 1.0]), n_resamples=99, random_state=0),
        "rbo_result": rbo(a, b, p=0.9),
    }


def _globals(stream):
    """The (module, name) pairs of rankereval that a pickle stream imports."""
    strings, found = [], []
    for op, arg, _ in pickletools.genops(stream):
        if op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            found.append((strings[-2], strings[-1]))
    return sorted({g for g in found if g[0].startswith("rankereval")})


def _equal_public(x, y):
    """Equality of two objects of the public API (Evaluation and Comparison by their dicts)."""
    assert type(x) is type(y)
    if type(x).__name__ == "Evaluation":
        return json.dumps(x.to_dict(per_query=True), sort_keys=True, default=repr) == \
            json.dumps(y.to_dict(per_query=True), sort_keys=True, default=repr)
    if type(x).__name__ == "Comparison":
        return x.to_json() == y.to_json()
    if type(x).__name__ == "BootstrapResult":
        return (x.mean == y.mean and x.confidence_interval == y.confidence_interval
                and np.array_equal(x.bootstrap_distribution, y.bootstrap_distribution))
    if type(x).__name__ == "RBOResult":
        return all(np.array_equal(u, v, equal_nan=True) for u, v in zip(x, y))
    return x == y


def _stored(name):
    with open(os.path.join(HERE, f"{name}.pkl"), "rb") as fh:
        return fh.read()


NAMES = ["binary", "numeric", "rankings", "metrics", "evaluation", "comparison", "bootstrap_result", "rbo_result"]


@pytest.mark.parametrize("name", NAMES)
def test_new_pickles_name_the_globals_mains_named(name):
    assert _globals(pickle.dumps(objects()[name], protocol=4)) == _globals(_stored(name))


@pytest.mark.skipif(int(np.__version__.split(".")[0]) < 2, reason="the stored streams name numpy._core (NumPy 2)")
@pytest.mark.parametrize("name", NAMES)
def test_mains_pickles_load_and_equal_the_objects_built_now(name):
    loaded, now = pickle.loads(_stored(name)), objects()[name]
    if isinstance(now, list):
        assert len(loaded) == len(now) and all(_equal_public(x, y) for x, y in zip(loaded, now))
    else:
        assert _equal_public(loaded, now)


def test_the_globals_are_public_paths():
    """What a stream names is a public module (the package, ``rankereval.data``,
    ``rankereval.metrics``, ``rankereval.bootstrap``, ``rankereval.agreement``), not the
    module that defines it: moving a module leaves the streams valid."""
    public = {"rankereval", "rankereval.data", "rankereval.metrics", "rankereval.bootstrap", "rankereval.agreement"}
    for name in NAMES:
        assert {m for m, _ in _globals(_stored(name))} <= public, name


if __name__ == "__main__":  # write the streams of the running version
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, obj in objects().items():
        with open(os.path.join(sys.argv[1], f"{name}.pkl"), "wb") as fh:
            fh.write(pickle.dumps(obj, protocol=4))
        print(name, _globals(pickle.dumps(obj, protocol=4)))
