"""The result of :func:`rankereval.compare`: :class:`Comparison`, with its tables (pandas,
Markdown, LaTeX), JSON, HTML and plots, and the leaderboard it builds."""
from dataclasses import dataclass, field
import json
import math
import warnings

import numpy as np

from rankereval._stack import user_stacklevel
from rankereval.stats._checks import _check_resamples
from rankereval.stats._corrections import _CORRECTION_NAMES
from rankereval.stats._paired_tests import CI_RESAMPLES, _TEST_NAMES


# the long format of Comparison.summary / to_json
LONG_COLUMNS = ("metric", "run", "baseline", "mean", "baseline_mean", "diff", "ci_low", "ci_high",
                "effect_size", "p_value", "p_corrected", "significant", "wins", "ties", "losses")


# keys of the runs in tables: 'q' has no superscript letter in Unicode, so it is skipped
_KEYS = "abcdefghijklmnoprstuvwxyz"


_SUPERSCRIPT = dict(zip(_KEYS, "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ"))


def _latex_escape(text):
    from rankereval._utils._render import latex_escape

    return latex_escape(text)


def _markdown_escape(text):
    from rankereval._utils._render import markdown_escape

    return markdown_escape(text)


def _json_value(x):
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    return x


@dataclass(frozen=True, eq=False)
class Comparison:
    """Result of :func:`compare`: every comparison's statistics, and ways to show them.

    Attributes
    ----------
    metrics : tuple of str
        Metric names, in the order given.
    runs : tuple of str
        Run names, in the order given; run ``i`` has key letter ``keys[i]`` in tables.
    baseline : str or None
        The baseline run, or None (all pairs).
    test, correction, alternative, nan_handling : str
        As passed to :func:`compare`; ``correction`` is ``'tukey'`` for Tukey's HSD.
    alpha : float
    n_resamples : int
        B of the test (unused by ``'t'``).
    ci_resamples : int
        Bootstrap resamples of the intervals (0: t intervals).
    higher_is_better : tuple of bool
        Per metric, from its registry entry (``MetricInfo.higher_is_better``; False for
        MeanRanks and FirstRelevantRank).
    pairs : tuple of (int, int)
        ``(run index, baseline index)`` of each comparison.
    means : ndarray, shape (n_metrics, n_runs)
        Mean score of each run over the queries compared for that metric.
    n_queries : ndarray of int, shape (n_metrics,)
        Queries compared for each metric (after NaN handling).
    results : dict of ndarray
        The long format, one entry per (metric, pair), metric-major: see :meth:`summary`.
    scores : ndarray, shape (n_queries, n_metrics, n_runs)
        Per-query scores (NaN: undefined).
    valid : ndarray of bool, shape (n_queries, n_metrics)
        Whether a query is compared for a metric.
    query_ids : ndarray or None
        Query id of each row (TREC inputs), or None (rows by position).
    report : dict
        What was aligned, dropped or filled, in counts: ``aligned_by``, ``queries``,
        ``n_queries``, and with TREC inputs ``n_union``, ``n_common``,
        ``n_qrels_not_ranked``, ``missing`` (per run, ids), ``n_filled`` (per run),
        ``n_dropped``; ``n_undefined`` (per metric, queries with a NaN/infinite score).
    seed_scores : ndarray or None
        With several runs per system: every run's per-query scores, shape (n_queries,
        n_metrics, total runs), prepared as ``scores`` (NaN handling, logs of geometric
        metrics); None with one run per system.
    seed_groups : tuple of tuple of int or None
        Per system, the positions of its runs in ``seed_scores``.
    geometric : tuple of bool or None
        Per metric, whether it is averaged geometrically (its ``scores`` are then logs).
    weighted : tuple of bool or None
        Per metric, whether its mean is weighted by a weight of each query (GAUC: the number
        of relevant items); ``means`` and ``diff`` are then weighted means.
    query_weights : ndarray or None
        The weights, (n_queries, n_metrics), 1 for the other metrics; None without a
        weighted metric.
    """

    metrics: tuple
    runs: tuple
    baseline: object
    test: str
    correction: str
    alpha: float
    n_resamples: int
    alternative: str
    nan_handling: str
    ci_resamples: int
    higher_is_better: tuple
    pairs: tuple
    means: np.ndarray = field(repr=False)
    n_queries: np.ndarray = field(repr=False)
    results: dict = field(repr=False)
    scores: np.ndarray = field(repr=False)
    valid: np.ndarray = field(repr=False)
    query_ids: object = field(repr=False)
    report: dict = field(repr=False)
    #: several runs per system: the runs' scores (n_queries, n_metrics, n_runs_total) and, per
    #: system, the positions of its runs there (None: one run per system)
    seed_scores: object = field(default=None, repr=False)
    seed_groups: object = field(default=None, repr=False)
    #: per metric, whether it is averaged geometrically (its scores here are logs)
    geometric: object = field(default=None, repr=False)
    #: per metric, whether its mean is weighted by a weight of each query (GAUC)
    weighted: object = field(default=None, repr=False)
    #: the query weights (n_queries, n_metrics) of the weighted metrics (1 elsewhere), or None
    query_weights: object = field(default=None, repr=False)

    # -- rows ------------------------------------------------------------------------------
    @property
    def keys(self):
        """Key of each run in tables: ``a``, ``b``, ... (no ``q``), two letters beyond 25."""
        n = len(self.runs)
        if n <= len(_KEYS):
            return tuple(_KEYS[:n])
        return tuple(_KEYS[i // len(_KEYS)] + _KEYS[i % len(_KEYS)] for i in range(n))

    def rows(self):
        """The long format as a list of dicts (see :meth:`summary`)."""
        n = len(self.results["metric"])
        out = []
        for i in range(n):
            row = {}
            for col in LONG_COLUMNS:
                v = self.results[col][i]
                if isinstance(v, np.bool_):
                    v = bool(v)
                elif isinstance(v, np.integer):
                    v = int(v)
                elif isinstance(v, np.floating):
                    v = float(v)
                row[col] = v
            out.append(row)
        return out

    def summary(self):
        """Long format DataFrame: one row per (metric, comparison).

        Columns: ``metric, run, baseline, mean, baseline_mean, diff, ci_low, ci_high,
        effect_size, p_value, p_corrected, significant, wins, ties, losses``. ``diff`` is
        ``mean - baseline_mean`` over the compared queries, ``effect_size`` the mean
        difference over the standard deviation of the differences, ``wins``/``losses``
        count queries where the run is better/worse than the baseline (lower is better where
        the metric's registry entry says so: MeanRanks and FirstRelevantRank). For a
        metric averaged geometrically (:class:`~rankereval.GMAP`) the means are geometric
        and the tests, ``diff`` and its interval are on the log scale: ``diff`` is the mean
        of the per-query differences of log(max(AP, 1e-5)), the log of the ratio of the two
        GMAPs.
        """
        pd = _pandas()
        return pd.DataFrame({col: np.asarray(self.results[col]) for col in LONG_COLUMNS},
                            columns=list(LONG_COLUMNS))

    def to_pandas(self, per_query=None):
        """Per-query scores as a DataFrame, as :meth:`rankereval.Evaluation.to_pandas`.

        ``to_pandas(per_query=True)``: one row per query (indexed by query id with TREC
        inputs), one column per (metric, run) (a two-level column index); NaN where a query
        is not compared for a metric (see ``valid``). For a metric averaged geometrically the
        scores are logs, as in ``scores``.

        Until the next release, ``to_pandas()`` without ``per_query=True`` still returns the
        summary table (one row per metric and comparison) with a ``DeprecationWarning``: that
        table is :meth:`summary` now, and ``to_pandas()`` will mean the per-query scores.
        """
        if per_query is None or per_query is False:
            warnings.warn("Comparison.to_pandas() returning the table of comparisons is "
                          "deprecated: call Comparison.summary() for it; from the next release "
                          "to_pandas() returns the per-query scores (as Evaluation.to_pandas()), "
                          "available now as to_pandas(per_query=True)",
                          DeprecationWarning, stacklevel=user_stacklevel())
            return self.summary()
        if per_query is not True:
            raise TypeError(f"per_query must be True or False, got {per_query!r}")
        if self.scores is None:
            raise ValueError("the per-query scores of this comparison stayed on the cluster "
                             "(rankereval.spark.compare): summary() has its statistics")
        pd = _pandas()
        n_q, n_m, n_r = self.scores.shape
        values = np.where(self.valid[:, :, None], self.scores, np.nan).reshape(n_q, n_m * n_r)
        columns = pd.MultiIndex.from_product([list(self.metrics), list(self.runs)],
                                             names=["metric", "run"])
        index = (pd.Index(self.query_ids, name="query") if self.query_ids is not None
                 else pd.RangeIndex(n_q, name="query"))
        return pd.DataFrame(values, index=index, columns=columns)

    # -- significance marks ------------------------------------------------------------------
    def _beaten(self):
        """``beaten[m][r]``: indices of the runs run r is significantly better than (metric m)."""
        n_pairs = len(self.pairs)
        beaten = [[[] for _ in self.runs] for _ in self.metrics]
        for m, higher in enumerate(self.higher_is_better):
            for j, (r, b) in enumerate(self.pairs):
                k = m * n_pairs + j
                if not self.results["significant"][k]:
                    continue
                d = self.results["diff"][k]
                if d == 0 or math.isnan(d):
                    continue
                winner, loser = (r, b) if (d > 0) == higher else (b, r)
                beaten[m][winner].append(loser)
        for m in range(len(self.metrics)):
            for r in range(len(self.runs)):
                beaten[m][r].sort()
        return beaten

    def _best(self):
        """``best[m]``: runs with the best mean for metric m (ties: all of them)."""
        out = []
        for m, higher in enumerate(self.higher_is_better):
            row = self.means[m]
            if np.isnan(row).all():
                out.append(set())
                continue
            target = np.nanmax(row) if higher else np.nanmin(row)
            out.append({r for r in range(len(self.runs)) if row[r] == target})
        return out

    def _cells(self, digits, bold, mark, phantom=None):
        """Cell strings (runs x metrics) built by the given formatters."""
        from rankereval._utils import _render

        keys = self.keys
        beaten = self._beaten()
        best = self._best()
        cells = [[None] * len(self.metrics) for _ in self.runs]
        for m in range(len(self.metrics)):
            used = sorted({k for r in range(len(self.runs)) for k in beaten[m][r]})
            for r in range(len(self.runs)):
                text = _render.fmt(self.means[m, r], digits)
                if r in best[m]:
                    text = bold(text)
                marks = [keys[k] for k in beaten[m][r]]
                if marks:
                    text += mark(marks)
                if phantom is not None:
                    rest = [keys[k] for k in used if k not in beaten[m][r]]
                    if rest:
                        text += phantom(rest)
                cells[r][m] = text
        return cells

    def caption(self):
        """One sentence on what the marks mean: test, correction, alpha and B."""
        test = _TEST_NAMES[self.test]
        if self.alternative != "two-sided" and self.test != "tukey":
            test = f"one-sided ({self.alternative}) {test}"
        resamples = f", B = {self.n_resamples:,} resamples" if self.test != "t" else ""
        return (f"Mean scores over {self._queries_text()}; a superscript marks a run that is "
                f"significantly better than the run with that key ({test}, "
                f"{_CORRECTION_NAMES[self.correction]}, alpha = {self.alpha:g}{resamples}). "
                "The best value of each metric is in bold.")

    def _queries_text(self):
        counts = sorted(set(int(n) for n in self.n_queries))
        if len(counts) == 1:
            return f"{counts[0]} queries"
        return f"{counts[0]}-{counts[-1]} queries (depending on the metric)"

    def table(self, digits=4):
        """Wide DataFrame, runs x metrics: each run's mean with its significance marks.

        Each cell is the run's mean followed by the keys (Unicode superscripts, as in ranx's
        report) of the runs it is significantly better than; column ``key`` gives each run's
        key. A DataFrame has no bold: :meth:`to_markdown` and :meth:`to_latex` mark the best
        value. The caption is in ``.attrs["caption"]``.
        """
        pd = _pandas()
        cells = self._cells(digits, bold=lambda s: s,
                            mark=lambda ks: "".join(_SUPERSCRIPT.get(ch, ch) for ch in "".join(ks)))
        df = pd.DataFrame(cells, index=pd.Index(list(self.runs), name="run"),
                          columns=list(self.metrics))
        df.insert(0, "key", list(self.keys))
        df.attrs["caption"] = self.caption()
        return df

    def to_markdown(self, digits=4):
        """A Markdown table (runs x metrics; best in bold, ``<sup>`` marks) and its caption."""
        cells = self._cells(digits, bold=lambda s: f"**{s}**",
                            mark=lambda ks: f"<sup>{','.join(ks)}</sup>")
        head = "| key | run | " + " | ".join(_markdown_escape(m) for m in self.metrics) + " |"
        rule = "|---|---|" + "---:|" * len(self.metrics)
        body = [f"| {k} | {_markdown_escape(r)} | " + " | ".join(row) + " |"
                for k, r, row in zip(self.keys, self.runs, cells)]
        return "\n".join([head, rule, *body, "", self.caption()]) + "\n"

    def to_latex(self, digits=4, caption=None, label=None):
        """A booktabs LaTeX table: best value bold, significance as superscript keys.

        Missing keys are padded with ``\\hphantom`` so that the numbers of a column align.
        The default caption states the test, the correction, alpha and B.
        """
        cells = self._cells(
            digits, bold=lambda s: rf"\textbf{{{s}}}",
            mark=lambda ks: "$^{" + "".join(ks) + "}$",
            phantom=lambda ks: r"\hphantom{$^{" + "".join(ks) + "}$}")
        text = caption if caption is not None else self.caption()
        lines = [r"\begin{table}", r"\centering",
                 r"\caption{" + _latex_escape(text) + "}"]
        if label is not None:
            lines.append(r"\label{" + str(label) + "}")
        lines += [r"\begin{tabular}{ll" + "r" * len(self.metrics) + "}", r"\toprule",
                  " & Run & " + " & ".join(_latex_escape(m) for m in self.metrics) + r" \\",
                  r"\midrule"]
        for k, r, row in zip(self.keys, self.runs, cells):
            lines.append(f"{k} & {_latex_escape(r)} & " + " & ".join(row) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
        return "\n".join(lines) + "\n"

    def to_json(self, indent=None):
        """JSON: ``{"comparisons": [rows of the long format], "test", "correction", "alpha",
        "n_resamples", ...}``; NaN and infinite values are ``null``."""
        doc = {
            "comparisons": [{k: _json_value(v) for k, v in row.items()} for row in self.rows()],
            "test": self.test,
            "correction": self.correction,
            "alpha": self.alpha,
            "n_resamples": self.n_resamples,
            "ci_resamples": self.ci_resamples,
            "alternative": self.alternative,
            "nan_handling": self.nan_handling,
            "baseline": self.baseline,
            "runs": list(self.runs),
            "metrics": list(self.metrics),
            "n_queries": {m: int(n) for m, n in zip(self.metrics, self.n_queries)},
            "alignment": json.loads(json.dumps(self.report, default=str)),
        }
        return json.dumps(doc, indent=indent, allow_nan=False)

    def __repr__(self):
        head = (f"Comparison(test={self.test!r}, correction={self.correction!r}, "
                f"alpha={self.alpha:g}, alternative={self.alternative!r}, "
                f"baseline={self.baseline!r}, {len(self.runs)} runs, {len(self.metrics)} metrics, "
                f"{self._queries_text()})")
        cells = self._cells(4, bold=lambda s: s, mark=lambda ks: "^" + ",".join(ks))
        widths = [max(len(m), *(len(c[i]) for c in cells)) for i, m in enumerate(self.metrics)]
        name_w = max(3, *(len(r) for r in self.runs))
        lines = [head, "    " + "run".ljust(name_w) + "".join(f"  {m:>{w}}" for m, w in
                                                              zip(self.metrics, widths))]
        for k, r, row in zip(self.keys, self.runs, cells):
            lines.append(f"{k:<3} " + r.ljust(name_w) + "".join(f"  {c:>{w}}" for c, w in
                                                                zip(row, widths)))
        n_sig = int(np.count_nonzero(self.results["significant"]))
        lines.append(f"^x: significantly better than run x; {n_sig} of "
                     f"{len(self.results['metric'])} comparisons significant")
        return "\n".join(lines)

    def _repr_html_(self):
        """Two plain HTML tables (Jupyter shows them; no JavaScript): the runs' means with
        the best in bold and superscript keys of the runs each is significantly better than
        (as :meth:`to_markdown`), then every comparison with its difference, the confidence
        interval of the difference and the p-values."""
        import html

        from rankereval._utils import _render

        cells = self._cells(4, bold=lambda s: f"<strong>{s}</strong>",
                            mark=lambda ks: f"<sup>{html.escape(','.join(ks))}</sup>")
        means = _render.html_table(
            ["key", "run", *self.metrics],
            [[html.escape(k), html.escape(r), *row] for k, r, row in zip(self.keys, self.runs, cells)],
            caption=self.caption(), left=2)
        level = f"{(1 - self.alpha) * 100:g}% CI of diff"
        rows = []
        for row in self.rows():
            rows.append([html.escape(str(row["metric"])), html.escape(str(row["run"])),
                         html.escape(str(row["baseline"])), _render.fmt(row["diff"]),
                         f"[{_render.fmt(row['ci_low'])}, {_render.fmt(row['ci_high'])}]",
                         _render.fmt(row["p_value"]), _render.fmt(row["p_corrected"]),
                         "yes" if row["significant"] else "no"])
        pairs = _render.html_table(["metric", "run", "baseline", "diff", level, "p", "p corrected", "significant"],
                                   rows, caption=f"{len(rows)} comparisons ({self.correction} correction)", left=3)
        return f"<div>\n{means}\n{pairs}\n</div>"

    # -- leaderboard -----------------------------------------------------------------------
    def leaderboard(self, metric=None, *, n_resamples=None, random_state=None):
        """The runs ordered by one metric, with confidence intervals of their ranks.

        Parameters
        ----------
        metric : str, optional
            The metric (default: the first).
        n_resamples : int, optional
            Bootstrap resamples (default: ``min(n_resamples of the comparison, 1000)``).
        random_state : None, int or numpy.random.Generator, default=None
            Seed of the resampling.

        Returns
        -------
        Leaderboard
            One row per run (system), best first: ``mean``, the interval of the mean,
            ``rank``, ``rank_low``/``rank_high`` (the confidence interval of the rank at the
            comparison's confidence ``1 - alpha``, from the paired bootstrap of the queries,
            simultaneous over the run's differences to the others), ``p_best`` (share of
            resamples in which it has the best mean), ``may_be_best`` (no run is surely
            better), and with several runs per system ``n_seeds`` and ``seed_sd``. Renders as
            text, HTML, Markdown, LaTeX, pandas (``summary``, ``to_pandas``) and a plot (``plot``). The
            method is in the guide "Leaderboards and agreement".
        """
        import rankereval.stats._resampling as bootstrap
        from rankereval.stats._leaderboard import leaderboard

        if self.scores is None:
            raise ValueError("this Comparison holds no per-query scores: a leaderboard needs them")
        m = 0 if metric is None else self._metric_index(metric)
        n_resamples = _check_resamples(min(self.n_resamples, CI_RESAMPLES) if n_resamples is None
                                       else n_resamples)
        return leaderboard(self, m, n_resamples, bootstrap._rng(random_state))

    # -- plots -----------------------------------------------------------------------------
    def plot(self, kind="forest", *, metric=None, run=None, baseline=None, ax=None):
        """Draw the comparison with matplotlib; returns the Figure (never calls ``show``).

        Parameters
        ----------
        kind : {'forest', 'per-query'}, default='forest'
            ``'forest'``: the mean difference of each comparison with its confidence
            interval, one panel per metric (filled markers: significant). ``'per-query'``:
            the per-query differences of one metric and one pair, sorted.
        metric : str, optional
            The metric to draw (forest: all by default; per-query: the first by default).
        run, baseline : str, optional
            The pair of ``'per-query'`` (default: the first comparison).
        ax : matplotlib Axes, optional
            Draw into it (forest: only with one metric).

        Returns
        -------
        matplotlib.figure.Figure
        """
        if kind == "forest":
            return self._plot_forest(metric, ax)
        if kind == "per-query":
            return self._plot_per_query(metric, run, baseline, ax)
        raise ValueError(f"kind must be 'forest' or 'per-query', got {kind!r}")

    def _metric_index(self, metric):
        if metric not in self.metrics:
            raise ValueError(f"metric must be one of {list(self.metrics)}, got {metric!r}")
        return self.metrics.index(metric)

    def _plot_forest(self, metric, ax):
        plt = _pyplot()
        chosen = list(range(len(self.metrics))) if metric is None else [self._metric_index(metric)]
        if ax is None:
            # constrained layout: the figure title, panel titles and axis labels neither overlap
            # nor leave the figure when saved with a plain savefig (no bbox_inches="tight")
            fig, axes = plt.subplots(1, len(chosen), squeeze=False, sharey=True, layout="constrained",
                                     figsize=(3.2 * len(chosen) + 1.5, 0.45 * len(self.pairs) + 1.9))
            axes = list(axes[0])
        else:
            if len(chosen) != 1:
                raise ValueError("ax= draws one metric: pass metric=...")
            fig, axes = ax.figure, [ax]
        n_pairs = len(self.pairs)
        y = np.arange(n_pairs)[::-1].astype(float)
        labels = [f"{self.runs[r]} − {self.runs[b]}" for r, b in self.pairs]
        for a, m in zip(axes, chosen):
            sl = slice(m * n_pairs, (m + 1) * n_pairs)
            diff = np.asarray(self.results["diff"][sl], dtype=float)
            low = np.asarray(self.results["ci_low"][sl], dtype=float)
            high = np.asarray(self.results["ci_high"][sl], dtype=float)
            sig = np.asarray(self.results["significant"][sl], dtype=bool)
            finite = np.concatenate([v[np.isfinite(v)] for v in (diff, low, high)] + [[0.0]])
            span = max(float(finite.max() - finite.min()), 1e-12)
            # one-sided intervals: the open end is drawn to the edge of the panel
            low = np.where(np.isneginf(low), finite.min() - 0.1 * span, low)
            high = np.where(np.isposinf(high), finite.max() + 0.1 * span, high)
            a.hlines(y, low, high, color="C0", linewidth=2)
            a.scatter(diff, y, s=36, zorder=3, edgecolors="C0",
                      facecolors=np.where(sig, "C0", "white").tolist())
            a.axvline(0.0, color="0.5", linestyle="--", linewidth=1)
            a.set_title(self.metrics[m])
            a.set_xlabel("difference of means")
        axes[0].set_yticks(y)
        axes[0].set_yticklabels(labels)
        test = _TEST_NAMES[self.test]
        fig.suptitle(f"{test}, {int(round(100 * (1 - self.alpha)))}% intervals; "
                     "filled: significant", fontsize="small")
        return fig

    def _plot_per_query(self, metric, run, baseline, ax):
        plt = _pyplot()
        m = 0 if metric is None else self._metric_index(metric)
        j = self._pair_index(run, baseline)
        r, b = self.pairs[j]
        rows = self.valid[:, m]
        d = np.sort(self.scores[rows, m, r] - self.scores[rows, m, b])[::-1]
        if ax is None:
            fig, ax = plt.subplots(figsize=(6.4, 3.6), layout="constrained")
        else:
            fig = ax.figure
        from matplotlib.ticker import MaxNLocator

        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # queries are counted: 0, 1, 2, ...
        x = np.arange(d.size)
        ax.plot(x, d, drawstyle="steps-mid", color="0.2", linewidth=1)
        ax.fill_between(x, 0.0, d, where=d > 0, step="mid", color="C2", alpha=0.5)
        ax.fill_between(x, 0.0, d, where=d < 0, step="mid", color="C3", alpha=0.5)
        ax.axhline(0.0, color="0.5", linewidth=1)
        k = m * len(self.pairs) + j
        ax.axhline(float(self.results["diff"][k]), color="C0", linestyle="--", linewidth=1,
                   label=f"mean {float(self.results['diff'][k]):+.4f}")
        ax.set_xlabel("queries, sorted by difference")
        ax.set_ylabel(f"{self.metrics[m]}: {self.runs[r]} − {self.runs[b]}")
        ax.set_title(f"wins {int(self.results['wins'][k])}, ties {int(self.results['ties'][k])}, "
                     f"losses {int(self.results['losses'][k])}")
        ax.legend(loc="upper right", fontsize="small")
        return fig

    def _pair_index(self, run, baseline):
        if run is None and baseline is None:
            return 0
        for j, (r, b) in enumerate(self.pairs):
            if ((run is None or self.runs[r] == run) and (baseline is None or self.runs[b] == baseline)):
                return j
        pairs = [(self.runs[r], self.runs[b]) for r, b in self.pairs]
        raise ValueError(f"no comparison of run={run!r} with baseline={baseline!r}; the "
                         f"comparisons (run, baseline) are {pairs}")


def _optional(module, extra, purpose):
    """Import an optional dependency, or an ImportError that names the extra to install."""
    from rankereval._utils._optional import require

    return require(module, extra, purpose)


def _pandas():
    return _optional("pandas", "io", "Comparison tables")


def _pyplot():
    return _optional("matplotlib.pyplot", "plot", "Comparison.plot")


Comparison.__module__ = "rankereval"  # documented and pickled under the public name (rankereval/__init__.py)
