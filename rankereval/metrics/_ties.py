"""Metrics over tied scores: the expected value over every order of each tied group, and the
best (optimistic) and worst (pessimistic) orders (``Metric.score(..., ties=...)``).

The rankings must keep their ties (``Rankings.from_scores(..., ties="keep")`` and the
readers' ``ties="keep"``); the kernels are in :mod:`rankereval.metrics._ties_fast`.
"""
import numpy as np

import rankereval.metrics._ties_fast as _tk
from rankereval._stack import user_stacklevel
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
    if kernel not in _tk.TIE_IDS:
        return f"{metric.name}: {_unsupported_kernel(kernel)}"
    return None


def _unsupported_kernel(kernel):
    if kernel == "profile":
        return ("the measures read from a ranking's relevance profile (rankereval/metrics/_profile_fast.pyx: "
                "trec_eval's, the C/W/L family) have no tie-aware form implemented")
    if kernel == "diversity":
        return ("the intent-aware diversity measures (their gains depend on the items above each one) "
                "have no tie-aware form implemented")
    return f"the {kernel!r} kernel has no tie-aware form implemented"


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
    if why is None and getattr(metric, "_tied", None) is None:
        args = metric._kernel_args(y_true, y_pred)
        kernel = _kernel_name(metric, args)
        if kernel in _REFUSED:
            why = f"{metric.name}: {_REFUSED[kernel]}"
        elif kernel not in _tk.TIE_IDS:
            why = f"{metric.name}: {_unsupported_kernel(kernel)}"
    if why is not None:
        raise ValueError(f"ties={ties!r}: {why}. Score it with ties=None (the recorded order)")
    own = getattr(metric, "_tied", None)  # a metric outside the kernels' reductions (AUROC, GAUC)
    if own is not None:
        return own(y_true, y_pred, ties)
    if ties != "expected":
        return metric._score(y_true, best_order(y_true, y_pred, ties == "optimistic", args["k"]))
    n = y_pred.n_rows
    out = np.empty(n, dtype=np.float64)
    disc = args.get("disc")
    norm = args.get("norm")
    _tk.expected(
        _tk.TIE_IDS[kernel], -1 if args["k"] is None else int(args["k"]), bool(args.get("truncated", False)),
        int(args.get("power", 0)), y_true.indptr, y_true.indices,
        np.empty(0) if isinstance(y_true, BinaryLabels) else y_true.values,
        isinstance(y_true, BinaryLabels), y_true.n_items, y_pred.indices, y_pred.lengths,
        y_pred._ties.view(np.int8),
        np.empty(0) if disc is None else np.ascontiguousarray(disc, dtype=np.float64),
        np.empty(0) if norm is None else np.ascontiguousarray(norm, dtype=np.float64),
        out, _threads(y_pred, args["k"]),
    )
    return out


def _threads(y_pred, k):
    """Threads for a pass over the rankings up to the cutoff ``k``: the metric kernel's work
    estimate, rankings times the positions read."""
    n, width = y_pred.indices.shape
    return effective_n_threads(n * (width if k is None else min(int(k), width)))


def best_order(y_true, y_pred, best, k=None):
    """``y_pred`` with each tied group in its best order (``best``: relevant items first, by
    decreasing label value) or its worst (the reverse), ties dropped; only the groups that
    start within the cutoff ``k`` (None: all) are reordered, the others change nothing."""
    ranks = y_pred.indices
    out = np.empty(ranks.shape, dtype=np.int64)
    _tk.reorder(y_true.indptr, y_true.indices,
                np.empty(0) if isinstance(y_true, BinaryLabels) else y_true.values,
                isinstance(y_true, BinaryLabels), ranks, y_pred.lengths, y_pred._ties.view(np.int8),
                bool(best), -1 if k is None else int(k), out, _threads(y_pred, k))
    return Rankings._from_padded(out.astype(ranks.dtype, copy=False), y_pred.lengths)


#: the spread of a mean, [pessimistic, optimistic], above which ``evaluate`` warns when no
#: ``ties=`` mode was chosen (relative to the mean for means above 1)
SPREAD_WARNING = 1e-3


class TieReport:
    """What the ties of an evaluation's rankings can do to its means
    (:attr:`rankereval.Evaluation.tie_report`).

    Attributes
    ----------
    mode : str or None
        The ``ties=`` of the evaluation (None: the recorded order).
    positions, tied_positions : int
        Ranked positions in all, and those in a group of equal scores.
    tied_rankings : dict
        Column -> rankings with a tie inside the metric's cutoff (two equal scores in the
        top k, or a group crossing it).
    ranges : dict
        Column -> ``(pessimistic mean, optimistic mean)``: the means over the worst and the
        best order of every tied group (for metrics where lower is better, the worst is the
        larger); ``(None, None)`` for a metric without values over tied orders.
    refused : dict
        Column -> why the metric has no values over tied orders (refused columns only).
    """

    def __init__(self, mode, positions, tied_positions, tied_rankings, ranges, refused):
        self.mode = mode
        self.positions = int(positions)
        self.tied_positions = int(tied_positions)
        self.tied_rankings = dict(tied_rankings)
        self.ranges = dict(ranges)
        self.refused = dict(refused)

    def row(self, name):
        """The report of column ``name`` as a flat dict (the columns of ``summary()``)."""
        lo, hi = self.ranges[name]
        return {"tied_rankings": self.tied_rankings[name], "pessimistic": lo, "optimistic": hi}

    def __repr__(self):
        return (f"TieReport(mode={self.mode!r}, tied_positions={self.tied_positions} of {self.positions}, "
                f"ranges={self.ranges!r})")


def _cutoff(metric):
    inner = getattr(metric, "metric", metric)  # Adjusted: its metric's cutoff
    return getattr(inner, "k", None)


def tie_report(columns, score_columns, aggregate, y_pred, nan_handling, mode, means, weights=None):
    """The :class:`TieReport` of ``evaluate``'s columns over ``y_pred`` (which records ties),
    warning (:class:`~rankereval.exceptions.TiedScoresWarning`) when ``mode`` is None and a
    mean could move by more than :data:`SPREAD_WARNING`. ``score_columns(columns, ties)``:
    evaluate's scores of some of its columns under a ``ties`` mode; ``aggregate(info, scores)``:
    its mean (``rankereval.metrics._base._aggregate``, passed in: this module is below it);
    ``weights``: the query weights of the columns (weighted means, e.g. GAUC), or None."""
    import warnings

    from rankereval.exceptions import TiedScoresWarning

    ties, lengths = y_pred._ties, y_pred.lengths
    width = ties.shape[1]
    in_group = ties.copy()
    if width > 1:
        in_group[:, 1:] |= ties[:, :-1]
    tied_rankings, ranges, refused = {}, {}, {}
    ok = []
    for col, m in columns:
        k = _cutoff(m)
        tied_rankings[col] = int(np.count_nonzero(ties[:, :width if k is None else min(k, width)].any(axis=1)))
        why = refusal(m)
        if why is None:
            ok.append((col, m))
            continue
        refused[col] = why
        ranges[col] = (None, None)
    if not ties.any():  # nothing tied: every order is the recorded one
        ranges.update({col: (means[col], means[col]) for col, _ in ok})
        ok = []
    worst, best = ((score_columns(ok, t) for t in ("pessimistic", "optimistic")) if ok else (None, None))
    position = {col: j for j, (col, _) in enumerate(columns)}
    for j, (col, m) in enumerate(ok):
        pair = []
        w = None if weights is None or m.info.aggregate != "weighted" else weights[:, position[col]]
        for s in (worst[:, j], best[:, j]):
            kept = w
            if nan_handling == "drop":
                kept = None if w is None else w[~np.isnan(s)]
                s = s[~np.isnan(s)]
            else:
                from rankereval.stats._engine import fill_undefined

                s = fill_undefined(s, nan_handling)
            pair.append(float(aggregate(m.info, s, kept)))
        ranges[col] = tuple(pair) if m.info.higher_is_better else tuple(pair[::-1])
    report = TieReport(mode, lengths.sum(), np.count_nonzero(in_group), tied_rankings, ranges, refused)
    if mode is None:
        wide = []
        for col, (lo, hi) in ranges.items():
            if lo is None or not np.isfinite(lo) or not np.isfinite(hi):
                continue
            spread = abs(hi - lo)
            if spread > SPREAD_WARNING * max(1.0, abs(means[col])):
                wide.append(f"{col}: {means[col]:.4g} in the recorded order, between {min(lo, hi):.4g} and "
                            f"{max(lo, hi):.4g} over the orders of the tied scores")
        if wide:
            warnings.warn(
                f"ties inside the cutoff of {len(wide)} metrics could change their means (the rankings hold "
                f"{report.tied_positions} tied positions):\n  " + "\n  ".join(wide) + "\nPass ties='expected' "
                "for the mean over every order of the tied scores (or 'optimistic'/'pessimistic' for the "
                "bounds).", TiedScoresWarning, stacklevel=user_stacklevel())
    return report
