"""Leaderboards with rank intervals: :meth:`rankereval.stats.Comparison.leaderboard`.

The method (Mogstad, Romano, Shaikh and Wilhelm, "Inference for ranks", REStud 2024, with the
paired bootstrap of queries that :func:`rankereval.compare` uses):

1. Resample the queries B times (``compare._bootstrap_means``: the typed kernel
   ``_compare.bootstrap_sums``, the same rows for every system, so the resamples are paired).
   With several runs per system (seeds), each resample also draws the seeds of every system
   with replacement (a two-level bootstrap: queries, then seeds within a system).
2. For system r, the differences ``m_r - m_j`` to every other system j, their bootstrap
   standard errors ``se_rj``, and the critical value ``c_r``: the ``1 - alpha`` quantile
   over the resamples of ``max_j |(d*_rj - d_rj) / se_rj|`` (simultaneous intervals for the
   R - 1 differences of r).
3. ``rank_low = 1 + #{j : m_j - m_r > c_r se_rj}`` (systems surely better),
   ``rank_high = R - #{j : m_r - m_j > c_r se_rj}`` (systems surely worse). Each system's
   interval covers its true rank with probability at least ``1 - alpha`` (asymptotically;
   conservative when several systems are close).

``p_best`` is the share of resamples in which the system has the best mean (tied best
counts for every system tied), and ``may_be_best`` marks the systems no other system is
surely better than (``rank_low == 1``): those that cannot be separated from the best.
"""
from dataclasses import dataclass, field

import numpy as np

#: the columns of :meth:`Leaderboard.to_pandas`, in order
COLUMNS = ("system", "mean", "mean_low", "mean_high", "seed_sd", "n_seeds", "rank", "rank_low",
           "rank_high", "p_best", "may_be_best")


def competition_ranks(values, higher):
    """Rank of each entry of the last axis: 1 + the number of entries strictly better."""
    v = values if higher else -values
    return 1 + (v[..., None, :] > v[..., :, None]).sum(axis=-1)


def resampled_means(seed_scores, groups, n_resamples, rng, weights=None):
    """Bootstrap means of each system, (B, R): queries resampled (paired), then seeds.

    ``seed_scores``: (n, S) per-query scores of every run (no NaN); ``groups``: for each
    system, the column indices of its runs. The queries come from the package's paired
    bootstrap kernel (``_compare.bootstrap_sums``, one key drawn from ``rng`` first); then
    per resample and system the seeds are drawn with replacement from ``rng``. A system with
    one run, or identical runs, gets exactly the query-only bootstrap mean. ``weights`` (n,):
    the query weights of a weighted mean (GAUC); each resampled run mean is then the ratio of
    the resample's sums, ``sum(c w x) / sum(c w)`` (``c``: the draws of each query).
    """
    import rankereval.stats._compare as _compare
    from rankereval._threads import effective_n_threads

    # the paired bootstrap of compare (``compare._bootstrap_means``): centred columns, one
    # 64-bit key, the same rows for every column
    if weights is None:
        centre = seed_scores.mean(axis=0)
        block = np.ascontiguousarray(seed_scores - centre)
    else:
        centre = weighted_means(seed_scores, weights)
        block = np.ascontiguousarray(np.column_stack([weights[:, None] * (seed_scores - centre), weights]))
    key = int(rng.integers(0, 2 ** 64, dtype=np.uint64))
    sums = _compare.bootstrap_sums(block, n_resamples, key, effective_n_threads(block.size * n_resamples))
    if weights is None:
        per_seed = centre + sums / seed_scores.shape[0]                   # (B, S)
    else:
        den = sums[:, -1:]
        with np.errstate(invalid="ignore", divide="ignore"):
            per_seed = centre + np.where(den > 0, sums[:, :-1] / np.where(den > 0, den, 1.0), 0.0)
    out = np.empty((n_resamples, len(groups)))
    for r, cols in enumerate(groups):
        block = per_seed[:, cols]
        if len(cols) == 1:
            out[:, r] = block[:, 0]
            continue
        counts = rng.multinomial(len(cols), np.full(len(cols), 1.0 / len(cols)), size=n_resamples)
        # first run + the mean deviation of the drawn runs from it: exact for identical runs
        out[:, r] = block[:, 0] + (counts * (block - block[:, :1])).sum(axis=1) / len(cols)
    return out


def weighted_means(scores, weights):
    """``sum(w x) / sum(w)`` of each column of ``scores`` (n, S), exact sums (the engine's)."""
    from rankereval.stats._exact import ratio_mean

    return np.array([ratio_mean(scores[:, j], weights) for j in range(scores.shape[1])])


def seed_mean(x, axis):
    """Mean over ``axis`` as the first entry plus the mean deviation from it (identical
    entries give the entry back exactly)."""
    first = np.take(x, [0], axis=axis)
    return np.squeeze(first, axis=axis) + (x - first).mean(axis=axis)


def rank_intervals(means, boot, higher, alpha):
    """``(rank, rank_low, rank_high, p_best)`` of each system from the observed means (R,)
    and their bootstrap means (B, R) (see the module docstring)."""
    n_sys = means.size
    sign = 1.0 if higher else -1.0
    m = sign * means
    bm = sign * boot
    rank_low = np.ones(n_sys, dtype=np.int64)
    rank_high = np.full(n_sys, n_sys, dtype=np.int64)
    eps = np.finfo(np.float64).eps
    for r in range(n_sys):
        others = np.array([j for j in range(n_sys) if j != r], dtype=np.intp)
        if others.size == 0:
            continue
        d = m[r] - m[others]                                   # (R - 1,) r minus j
        bd = bm[:, [r]] - bm[:, others]                        # (B, R - 1)
        se = bd.std(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            t = np.where(se > 0, np.abs(bd - d) / np.where(se > 0, se, 1.0), 0.0)
        crit = float(np.quantile(t.max(axis=1), 1.0 - alpha))
        # a difference that does not vary over the resamples (the same on every query) is
        # certain, unless it is rounding noise
        tol = 64.0 * eps * np.maximum(abs(m[r]), np.abs(m[others]))
        better = np.where(se > 0, d < -crit * se, d < -tol)    # j surely better than r
        worse = np.where(se > 0, d > crit * se, d > tol)
        rank_low[r] += int(better.sum())
        rank_high[r] -= int(worse.sum())
    rank = competition_ranks(means, higher)
    best = bm.max(axis=1, keepdims=True)
    p_best = (bm == best).mean(axis=0)
    return rank, rank_low, rank_high, p_best


def leaderboard(cmp, m, n_resamples, rng):
    """The :class:`Leaderboard` of metric ``m`` (index) of a Comparison ``cmp``, from
    ``n_resamples`` resamples drawn with the Generator ``rng`` (checked by the caller)."""
    higher = bool(cmp.higher_is_better[m])
    rows = np.asarray(cmp.valid[:, m], dtype=bool)
    runs = list(cmp.runs)
    seeds = cmp.seed_scores
    if seeds is None:
        groups = [[r] for r in range(len(runs))]
        per_seed = cmp.scores[:, m, :]
    else:
        groups = [list(g) for g in cmp.seed_groups]
        per_seed = seeds[:, m, :]
    per_seed = np.ascontiguousarray(per_seed[rows], dtype=np.float64)
    n = per_seed.shape[0]
    geometric = bool(cmp.geometric is not None and cmp.geometric[m])
    if n == 0 or np.isnan(per_seed).any():
        raise ValueError(f"metric {cmp.metrics[m]!r} has no query where every run's score is defined "
                         "(no leaderboard; with nan_handling='propagate' a single undefined score "
                         "makes the metric's results NaN)")
    weighted = cmp.weighted is not None and cmp.weighted[m]
    weights = np.ascontiguousarray(cmp.query_weights[rows, m], dtype=np.float64) if weighted else None
    if weighted and not weights.sum() > 0:
        raise ValueError(f"metric {cmp.metrics[m]!r} is a weighted mean whose queries weigh 0 in all "
                         "(no leaderboard)")
    boot = resampled_means(per_seed, groups, n_resamples, rng, weights)
    run_means = weighted_means(per_seed, weights) if weighted else per_seed.mean(axis=0)
    means = np.array([seed_mean(run_means[g], 0) if len(g) > 1 else run_means[g[0]] for g in groups])
    rank, low, high, p_best = rank_intervals(means, boot, higher, cmp.alpha)
    level = cmp.alpha / 2.0
    mean_low, mean_high = np.quantile(boot, [level, 1.0 - level], axis=0)
    seed_sd = np.array([per_seed[:, g].mean(axis=0).std(ddof=1) if len(g) > 1 else np.nan
                        for g in groups])
    shown = np.asarray(cmp.means[m], dtype=np.float64)   # as the comparison shows them
    if geometric:
        mean_low, mean_high = np.exp(mean_low), np.exp(mean_high)
    columns = {"mean": shown, "mean_low": mean_low, "mean_high": mean_high, "seed_sd": seed_sd,
               "n_seeds": np.array([len(g) for g in groups]), "rank": rank, "rank_low": low,
               "rank_high": high, "p_best": p_best, "may_be_best": low == 1}
    return Leaderboard(cmp.metrics[m], tuple(runs), higher, cmp.alpha, n_resamples, n, columns)


@dataclass(frozen=True, eq=False, repr=False)
class Leaderboard:
    """Systems ordered by their mean on one metric, with rank intervals.

    Built by :meth:`rankereval.stats.Comparison.leaderboard`; rows in the order of the
    comparison's runs, shown best first. Columns (:meth:`to_pandas`): ``system``, ``mean``,
    ``mean_low``/``mean_high`` (bootstrap percentile interval of the mean; over queries and
    seeds with several runs per system), ``seed_sd`` (standard deviation of the per-run
    means across a system's runs; NaN with one run), ``n_seeds``, ``rank`` (1 = best; tied
    means share the better rank), ``rank_low``/``rank_high`` (the confidence interval of the
    rank), ``p_best``, ``may_be_best``.
    """

    metric: str
    systems: tuple
    higher_is_better: bool
    alpha: float
    n_resamples: int
    n_queries: int
    columns: dict = field(repr=False)

    @property
    def order(self):
        """Row indices best first (by rank, then as given)."""
        return [int(i) for i in np.lexsort((np.arange(len(self.systems)), self.columns["rank"]))]

    def rows(self):
        """One dict per system, best first (see the class docstring for the keys)."""
        out = []
        for i in self.order:
            row = {"system": self.systems[i]}
            for col in COLUMNS[1:]:
                v = self.columns[col][i]
                row[col] = bool(v) if isinstance(v, (bool, np.bool_)) else (
                    int(v) if isinstance(v, np.integer) else float(v))
            out.append(row)
        return out

    def to_pandas(self):
        """A DataFrame, one row per system, best first; the caption in ``.attrs["caption"]``."""
        from rankereval._utils._optional import require as optional

        pd = optional("pandas", "io", "Leaderboard tables")
        df = pd.DataFrame(self.rows(), columns=list(COLUMNS))
        df.attrs["caption"] = self.caption()
        return df

    def summary(self):
        """The board, as :meth:`to_pandas` (a leaderboard holds statistics only, no per-query
        scores): ``summary()`` is the table of statistics of every result object."""
        return self.to_pandas()

    def caption(self):
        level = f"{(1 - self.alpha) * 100:g}%"
        return (f"{self.metric}: mean over {self.n_queries} queries; rank interval at "
                f"{level} confidence from {self.n_resamples:,} paired bootstrap resamples "
                "(simultaneous over each system's differences); p_best: share of resamples "
                "with the best mean; * marks the systems that cannot be separated from the best.")

    def _cells(self, digits=4):
        from rankereval._utils import _render

        seeds = bool((self.columns["n_seeds"] > 1).any())
        head = ["rank", "system", self.metric, "interval of mean", "rank interval", "p_best"]
        if seeds:
            head += ["seeds", "seed sd"]
        body = []
        for row in self.rows():
            cells = [str(row["rank"]) + ("*" if row["may_be_best"] else ""), row["system"],
                     _render.fmt(row["mean"], digits),
                     f"[{_render.fmt(row['mean_low'], digits)}, {_render.fmt(row['mean_high'], digits)}]",
                     f"{row['rank_low']}-{row['rank_high']}", _render.fmt(row["p_best"], 3)]
            if seeds:
                cells += [str(row["n_seeds"]), _render.fmt(row["seed_sd"], digits)]
            body.append(cells)
        return head, body

    def __repr__(self):
        head, body = self._cells()
        widths = [max(len(h), *(len(r[i]) for r in body)) for i, h in enumerate(head)]
        lines = [f"Leaderboard(metric={self.metric!r}, {len(self.systems)} systems, "
                 f"{self.n_queries} queries, confidence={1 - self.alpha:g})"]
        for cells in [head, *body]:
            lines.append("  ".join(c.ljust(w) if i == 1 else c.rjust(w)
                                   for i, (c, w) in enumerate(zip(cells, widths))).rstrip())
        return "\n".join(lines)

    def to_markdown(self, digits=4):
        """A Markdown table, best first, and its caption."""
        from rankereval._utils._render import markdown_escape as _markdown_escape

        head, body = self._cells(digits)
        lines = ["| " + " | ".join(_markdown_escape(h) for h in head) + " |",
                 "|---:|---|" + "---:|" * (len(head) - 2)]
        lines += ["| " + " | ".join(_markdown_escape(c) for c in row) + " |" for row in body]
        return "\n".join(lines + ["", self.caption()]) + "\n"

    def to_latex(self, digits=4, caption=None, label=None):
        """A booktabs LaTeX table, best first; the default caption states the method."""
        from rankereval._utils._render import latex_escape as _latex_escape

        head, body = self._cells(digits)
        lines = [r"\begin{table}", r"\centering",
                 r"\caption{" + _latex_escape(caption if caption is not None else self.caption()) + "}"]
        if label is not None:
            lines.append(r"\label{" + str(label) + "}")
        lines += [r"\begin{tabular}{rl" + "r" * (len(head) - 2) + "}", r"\toprule",
                  " & ".join(_latex_escape(h) for h in head) + r" \\", r"\midrule"]
        lines += [" & ".join(_latex_escape(c) for c in row) + r" \\" for row in body]
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def _repr_html_(self):
        import html

        from rankereval._utils import _render

        head, body = self._cells()
        return _render.html_table(head, [[html.escape(c) for c in row] for row in body],
                                  caption=self.caption(), left=2)

    def to_json(self, indent=None):
        import json

        from rankereval._utils._render import json_number

        doc = {"metric": self.metric, "alpha": self.alpha, "n_resamples": self.n_resamples,
               "n_queries": self.n_queries, "higher_is_better": self.higher_is_better,
               "systems": [{k: (json_number(v) if isinstance(v, float) else v) for k, v in row.items()}
                           for row in self.rows()]}
        return json.dumps(doc, indent=indent, allow_nan=False)

    def plot(self, ax=None):
        """Each system's rank with its interval, best at the top; returns the Figure.

        The figure is sized by the number of systems and laid out with
        ``constrained_layout``, so ``savefig`` keeps every label.
        """
        from rankereval._utils._optional import require as optional

        plt = optional("matplotlib.pyplot", "plot", "Leaderboard.plot")
        order = self.order
        n = len(order)
        if ax is None:
            width = 4.0 + 0.08 * max(len(s) for s in self.systems)
            fig, ax = plt.subplots(figsize=(width, 0.4 * n + 1.4), layout="constrained")
        else:
            fig = ax.figure
        y = np.arange(n)[::-1].astype(float)
        rank = np.array([self.columns["rank"][i] for i in order], dtype=float)
        low = np.array([self.columns["rank_low"][i] for i in order], dtype=float)
        high = np.array([self.columns["rank_high"][i] for i in order], dtype=float)
        best = np.array([bool(self.columns["may_be_best"][i]) for i in order])
        ax.hlines(y, low - 0.25, high + 0.25, color="C0", linewidth=6, alpha=0.35)
        ax.scatter(rank, y, s=36, zorder=3, color=np.where(best, "C3", "C0").tolist())
        ax.set_yticks(y)
        ax.set_yticklabels([self.systems[i] for i in order])
        ax.set_xlim(0.4, len(self.systems) + 0.6)
        ax.set_xticks(np.arange(1, len(self.systems) + 1))
        ax.set_xlabel("rank (1 = best)")
        ax.set_title(f"{self.metric}: ranks, {(1 - self.alpha) * 100:g}% intervals; red: may be best",
                     fontsize="small")
        return fig


Leaderboard.__module__ = "rankereval.stats"  # documented and pickled under the public name
