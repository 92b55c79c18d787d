"""Metrics over tied scores: the expected value over every order of each tied group, and the
best (optimistic) and worst (pessimistic) orders (``Metric.score(..., ties=...)``).

The rankings must keep their ties (``Rankings.from_scores(..., ties="keep")`` and the
readers' ``ties="keep"``); the kernels are in :mod:`rankereval._ties`.
"""
import numpy as np

import rankereval._ties as _tk
from rankereval._threads import effective_n_threads
from rankereval.data import BinaryLabels, Rankings

#: the values of ``ties=``; None keeps the recorded order (equal scores by item id)
TIE_MODES = ("expected", "optimistic", "pessimistic")

#: why a reduction of the metric kernel has no expected value over tied orders here
_REFUSED = {
    "err": "its cascade multiplies the stopping probabilities of the items above each one, so "
           "its expectation over the orders of a group is not a sum over positions; no "
           "one-pass form is implemented",
    "iprec": "interpolated precision is a maximum over ranks, whose expectation over tied orders "
             "has no one-pass form implemented",
    "bpref": "bpref counts judged non-relevant items above each relevant one; its expectation "
             "over tied orders (which needs the judged items of every group) is not implemented",
    "judged": "Judged@k reads the judged items of every tied group, which the tie kernels do "
              "not look up",
    "rbp_residual": "RBP's residual reads the judged items of every tied group, which the tie "
                    "kernels do not look up",
}


def check_ties(ties, name="ties"):
    """``ties`` as given: None, or one of :data:`TIE_MODES`."""
    if ties is not None and (not isinstance(ties, str) or ties not in TIE_MODES):
        raise ValueError(f"{name} must be None (the recorded order), 'expected', 'optimistic' or "
                         f"'pessimistic', got {ties!r}")
    return ties


def refusal(metric):
    """Why ``metric`` has no value over tied orders (None when it has one)."""
    if metric.info.labels == "none":
        return (f"{metric.name} reads the items of each ranking, not their relevance: its value over "
                "tied orders (which items of a group crossing the cutoff are in) is not implemented")
    wrapped = getattr(metric, "_tie_refusal", None)  # Adjusted: its own reason, or its metric's
    if wrapped is not None:
        return wrapped()
    # RBP's residual is another reduction of the same class
    kernel = "rbp_residual" if getattr(metric, "residual", False) else metric.info.kernel
    if kernel in _REFUSED:
        return f"{metric.name}: {_REFUSED[kernel]}"
    return None


def _kernel_name(metric, args):
    if "kernel" in args:
        return args["kernel"]
    return metric.info.kernel


def tied_scores(metric, y_true, y_pred, ties):
    """``metric``'s score of every ranking of ``y_pred`` (checked inputs) under ``ties``
    ('expected', 'optimistic' or 'pessimistic'); rankings without recorded ties score as
    they are."""
    if y_pred._ties is None or not y_pred._ties.any():
        return metric._score(y_true, y_pred)
    why = refusal(metric)
    if why is None:
        args = metric._kernel_args(y_true, y_pred)
        kernel = _kernel_name(metric, args)
        if kernel in _REFUSED:
            why = f"{metric.name}: {_REFUSED[kernel]}"
    if why is not None:
        raise ValueError(f"ties={ties!r}: {why}. Score it with ties=None (the recorded order)")
    if ties != "expected":
        return metric._score(y_true, best_order(y_true, y_pred, ties == "optimistic"))
    n = y_pred.n_rows
    out = np.empty(n, dtype=np.float64)
    disc = args.get("disc")
    norm = args.get("norm")
    _tk.expected(
        _tk.TIE_IDS[kernel], -1 if args["k"] is None else int(args["k"]), bool(args.get("truncated", False)),
        int(args.get("power", 0)), y_true.indptr, y_true.indices,
        np.empty(0) if isinstance(y_true, BinaryLabels) else y_true.values,
        isinstance(y_true, BinaryLabels), y_pred.indices, y_pred.lengths, y_pred._ties.view(np.int8),
        np.empty(0) if disc is None else np.ascontiguousarray(disc, dtype=np.float64),
        np.empty(0) if norm is None else np.ascontiguousarray(norm, dtype=np.float64),
        out, effective_n_threads(y_pred.indices.size),
    )
    return out


def best_order(y_true, y_pred, best):
    """``y_pred`` with each tied group in its best order (``best``: relevant items first, by
    decreasing label value) or its worst (the reverse), ties dropped."""
    ranks = y_pred.indices
    out = np.empty(ranks.shape, dtype=np.int64)
    _tk.reorder(y_true.indptr, y_true.indices,
                np.empty(0) if isinstance(y_true, BinaryLabels) else y_true.values,
                isinstance(y_true, BinaryLabels), ranks, y_pred.lengths, y_pred._ties.view(np.int8),
                bool(best), out, effective_n_threads(ranks.size))
    return Rankings._from_padded(out.astype(ranks.dtype, copy=False), y_pred.lengths)
