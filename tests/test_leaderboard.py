"""Comparison.leaderboard: rank intervals (coverage by simulation), p_best, the tables and the
plot; several runs per system in compare (identical copies equal the one-run comparison)."""
import json

import numpy as np
import pytest

from rankereval import AP, BinaryLabels, NDCG, Rankings, ReciprocalRank
from rankereval.stats._leaderboard import COLUMNS, rank_intervals, resampled_means
from rankereval import compare


def _simulate(rng, effects, n, query_sd=0.2, noise_sd=0.15):
    """Per-query scores (n, R): a query effect shared by all systems, the system effect,
    independent noise."""
    q = rng.normal(0.0, query_sd, size=(n, 1))
    return q + effects[None, :] + rng.normal(0.0, noise_sd, size=(n, effects.size))


def test_rank_intervals_cover_the_true_rank_at_the_nominal_rate():
    # known system effects: neighbours about one standard error of their difference apart
    # (0.02 vs sd 0.15 * sqrt(2 / 100) = 0.021), and one clearly best system
    effects = np.array([0.50, 0.52, 0.54, 0.58, 0.60, 0.75])
    true_rank = 1 + (effects[None, :] > effects[:, None]).sum(axis=1)
    rng = np.random.default_rng(12345)
    reps, alpha = 200, 0.05
    covered = np.zeros(effects.size)
    widths = []
    p_best_top = []
    for _ in range(reps):
        s = _simulate(rng, effects, 100)
        boot = resampled_means(s, [[r] for r in range(effects.size)], 200, rng)
        rank, low, high, p_best = rank_intervals(s.mean(axis=0), boot, True, alpha)
        covered += (low <= true_rank) & (true_rank <= high)
        widths.append(high - low)
        p_best_top.append(p_best[-1])
    coverage = covered / reps
    # at least the nominal rate, up to Monte Carlo error (sd of a share over 200 reps at
    # 0.95 is 0.015); simultaneous over each system's differences, the intervals are
    # conservative where systems are close (measured: 0.97-1.00 per system)
    assert coverage.mean() >= 1 - alpha - 0.02, coverage
    assert coverage.min() >= 1 - alpha - 0.05, coverage
    # ... and not trivially wide: the clearly best system is pinned to rank 1
    widths = np.array(widths)
    assert np.mean(widths[:, -1] == 0) > 0.95
    assert widths[:, :-1].mean() < effects.size - 2
    assert np.mean(p_best_top) > 0.99


def test_rank_intervals_cover_at_about_the_nominal_rate_when_systems_tie():
    # five systems with one effect: every true rank is 1 (ties share the better rank); an
    # interval misses it only when another system is wrongly found surely better, so the
    # coverage is close to the nominal rate (measured 0.96-0.98 per system at 0.95)
    effects = np.full(5, 0.5)
    rng = np.random.default_rng(1)
    reps = 300
    covered = np.zeros(effects.size)
    for _ in range(reps):
        s = _simulate(rng, effects, 100)
        boot = resampled_means(s, [[r] for r in range(effects.size)], 200, rng)
        _, low, high, _ = rank_intervals(s.mean(axis=0), boot, True, 0.05)
        covered += low == 1
    coverage = covered.mean() / reps
    assert 0.93 <= coverage <= 0.995, covered / reps


def test_rank_interval_is_exact_for_identical_and_constant_differences():
    s = np.array([[0.1, 0.1, 0.3], [0.5, 0.5, 0.7], [0.2, 0.2, 0.4]])
    boot = resampled_means(s, [[0], [1], [2]], 100, np.random.default_rng(0))
    rank, low, high, p_best = rank_intervals(s.mean(axis=0), boot, True, 0.05)
    # system 2 is 0.2 better on every query: surely first; 0 and 1 tie for second
    assert rank.tolist() == [2, 2, 1]
    assert low.tolist() == [2, 2, 1] and high.tolist() == [3, 3, 1]
    assert p_best.tolist() == [0.0, 0.0, 1.0]
    # lower is better: the order flips
    rank, low, high, _ = rank_intervals(s.mean(axis=0), boot, False, 0.05)
    assert rank.tolist() == [1, 1, 3] and low.tolist() == [1, 1, 3] and high.tolist() == [2, 2, 3]


def _data(n_queries=60, seed=0):
    rng = np.random.default_rng(seed)
    positives = [sorted(rng.choice(20, size=3, replace=False).tolist()) for _ in range(n_queries)]
    y_true = BinaryLabels.from_positive_indices(positives)

    def run(quality):
        rows = []
        for pos in positives:
            others = [i for i in rng.permutation(30).tolist() if i not in pos]
            hits = [p for p in pos if rng.random() < quality]
            rows.append((hits + others)[:10])
        return Rankings.from_ranked_indices(rows)

    return y_true, run


def test_leaderboard_through_compare():
    y_true, run = _data()
    runs = {"weak": run(0.1), "mid": run(0.4), "mid2": run(0.45), "strong": run(0.98)}
    cmp = compare(y_true, runs, {"AP@10": AP(10), "RR@10": ReciprocalRank(10)}, random_state=1)
    board = cmp.leaderboard(random_state=2)
    rows = board.rows()
    assert [r["system"] for r in rows][0] == "strong"
    top = rows[0]
    assert top["rank"] == 1 and top["rank_low"] == 1 and top["rank_high"] == 1
    assert top["p_best"] > 0.99 and top["may_be_best"]
    assert sum(r["may_be_best"] for r in rows) == 1
    # means as the comparison reports them
    for r in rows:
        i = cmp.runs.index(r["system"])
        assert r["mean"] == cmp.means[0, i]
        assert r["rank_low"] <= r["rank"] <= r["rank_high"]
        assert r["mean_low"] <= r["mean"] <= r["mean_high"]
        assert r["n_seeds"] == 1 and np.isnan(r["seed_sd"])
    # deterministic given random_state; another metric by name
    assert cmp.leaderboard(random_state=2).to_json() == board.to_json()
    assert cmp.leaderboard("RR@10", random_state=2).metric == "RR@10"
    with pytest.raises(ValueError, match="metric must be one of"):
        cmp.leaderboard("nDCG")
    with pytest.raises(ValueError, match="n_resamples"):
        cmp.leaderboard(n_resamples=0)
    # tables
    df = board.to_pandas()
    assert list(df.columns) == list(COLUMNS) and len(df) == 4
    assert "confidence" in df.attrs["caption"]
    text = repr(board)
    assert text.splitlines()[2].split()[:2] == ["1*", "strong"]
    assert "<table" in board._repr_html_()
    assert r"\toprule" in board.to_latex() and "rank interval" in board.to_latex()
    assert board.to_markdown().startswith("| rank | system |")
    doc = json.loads(board.to_json())
    assert doc["systems"][0]["system"] == "strong"


def test_leaderboard_of_a_metric_without_defined_queries():
    y_true = BinaryLabels.from_positive_indices([[0], [1], []])
    runs = {"a": Rankings.from_ranked_indices([[0, 1]] * 3), "b": Rankings.from_ranked_indices([[1, 0]] * 3)}
    cmp = compare(y_true, runs, [AP(2)], nan_handling="propagate")
    with pytest.raises(ValueError, match="no query where every run's score is defined"):
        cmp.leaderboard()


def test_leaderboard_lower_is_better_metric():
    from rankereval import FirstRelevantRank

    y_true = BinaryLabels.from_positive_indices([[0]] * 40)
    rng = np.random.default_rng(0)
    # 'strong' finds the relevant item at ranks 1-2, 'weak' at ranks 4-6
    strong = [[0, 9, 8, 7, 6, 5] if rng.random() < 0.5 else [9, 0, 8, 7, 6, 5] for _ in range(40)]
    weak = [[9, 8, 7] + ([0] if rng.random() < 0.5 else [6, 5, 0]) for _ in range(40)]
    cmp = compare(y_true, {"weak": Rankings.from_ranked_indices(weak),
                           "strong": Rankings.from_ranked_indices(strong)},
                  [FirstRelevantRank()], random_state=0)
    rows = cmp.leaderboard(random_state=0).rows()
    assert [r["system"] for r in rows] == ["strong", "weak"]
    assert rows[0]["p_best"] == 1.0 and (rows[0]["rank_low"], rows[0]["rank_high"]) == (1, 1)
    assert rows[0]["mean"] < rows[1]["mean"]


def test_leaderboard_plot_is_not_clipped(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    y_true, run = _data()
    runs = {f"a rather long system name {i}": run(q) for i, q in enumerate([0.1, 0.5, 0.9])}
    cmp = compare(y_true, runs, [NDCG(10)], random_state=0)
    fig = cmp.leaderboard(random_state=0).plot()
    fig.savefig(tmp_path / "ranks.png")
    fig.canvas.draw()
    tight = fig.get_tightbbox(fig.canvas.get_renderer())
    box = fig.bbox_inches
    assert tight.x0 >= box.x0 - 1e-6 and tight.y0 >= box.y0 - 1e-6
    assert tight.x1 <= box.x1 + 1e-6 and tight.y1 <= box.y1 + 1e-6
    import matplotlib.pyplot as plt

    plt.close(fig)


# ----------------------------------------------------------------------------------------
# several runs per system
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("test", ["t", "bootstrap", "permutation"])
def test_identical_copies_equal_the_one_run_comparison(test):
    y_true, run = _data()
    a, b, c = run(0.3), run(0.5), run(0.6)
    metrics = {"AP@10": AP(10), "NDCG@10": NDCG(10)}
    one = compare(y_true, {"A": a, "B": b, "C": c}, metrics, test=test, n_resamples=500,
                  random_state=7)
    many = compare(y_true, {"A": [a, a, a], "B": [b, b], "C": c}, metrics, test=test,
                   n_resamples=500, random_state=7)
    assert many.runs == one.runs
    np.testing.assert_array_equal(many.means, one.means)
    np.testing.assert_array_equal(many.scores, one.scores)
    for key in one.results:
        np.testing.assert_array_equal(many.results[key], one.results[key])
    for metric in metrics:
        x = one.leaderboard(metric, random_state=3).rows()
        y = many.leaderboard(metric, random_state=3).rows()
        for rx, ry in zip(x, y):
            for col in ("system", "mean", "mean_low", "mean_high", "rank", "rank_low", "rank_high",
                        "p_best", "may_be_best"):
                assert rx[col] == ry[col], col
        assert [r["n_seeds"] for r in y] == [{"A": 3, "B": 2, "C": 1}[r["system"]] for r in y]
        assert all(r["seed_sd"] == 0.0 or np.isnan(r["seed_sd"]) for r in y)


def test_several_seeds_means_and_spread():
    y_true, run = _data()
    seeds_a = [run(q) for q in (0.2, 0.3, 0.4)]
    seeds_b = [run(q) for q in (0.5, 0.6)]
    cmp = compare(y_true, {"A": seeds_a, "B": seeds_b}, [AP(10)], random_state=0)
    per_seed = [compare(y_true, {"x": r, "y": r}, [AP(10)]).means[0, 0] for r in seeds_a]
    assert cmp.means[0, 0] == pytest.approx(np.mean(per_seed))
    # the paired test sees the per-query means over seeds
    scores_a = np.mean([compare(y_true, {"x": r, "y": r}, [AP(10)]).scores[:, 0, 0]
                        for r in seeds_a], axis=0)
    np.testing.assert_allclose(cmp.scores[:, 0, 0], scores_a)
    rows = {r["system"]: r for r in cmp.leaderboard(random_state=0).rows()}
    assert rows["A"]["seed_sd"] == pytest.approx(np.std(per_seed, ddof=1))
    assert rows["A"]["n_seeds"] == 3
    assert "seed sd" in repr(cmp.leaderboard(random_state=0))


def test_two_level_interval_accounts_for_seeds():
    # one system whose seeds are shifted by a constant: the seed-level spread widens the
    # interval of its mean beyond the queries-only interval of a single seed
    rng = np.random.default_rng(0)
    base = rng.random((200, 1))
    shifts = np.array([[-0.05, 0.0, 0.05]])
    seeds = base + shifts
    groups = [[0, 1, 2]]
    boot_two = resampled_means(seeds, groups, 2000, np.random.default_rng(1))
    boot_one = resampled_means(seeds[:, 1:2], [[0]], 2000, np.random.default_rng(1))
    # independent levels: the variances add; a mean of 3 seeds drawn with replacement from
    # shifts of population variance v has variance v / 3
    expected = np.sqrt(boot_one[:, 0].var() + shifts.var() / 3)
    assert boot_two[:, 0].std() == pytest.approx(expected, rel=0.1)
    assert boot_two[:, 0].std() > 1.3 * boot_one[:, 0].std()


def test_several_runs_argument_errors():
    y_true, run = _data()
    with pytest.raises(ValueError, match="names 'A\\[0\\]' of two systems collide"):
        compare(y_true, {"A": [run(0.5), run(0.4)], "A[0]": run(0.5)}, [AP(10)])
    with pytest.raises(ValueError, match=r"runs\['A'\] is an empty list"):
        compare(y_true, {"A": [], "B": run(0.5)}, [AP(10)])
    with pytest.raises(TypeError, match=r"runs\['A\[1\]'\] must be Rankings"):
        compare(y_true, {"A": [run(0.5), "x"], "B": run(0.5)}, [AP(10)])


def test_resampling_is_the_paired_bootstrap_of_compare():
    import importlib

    compare_module = importlib.import_module("rankereval.stats._paired_tests")
    s = np.random.default_rng(3).random((57, 4))
    ours = resampled_means(s, [[0], [1], [2], [3]], 300, np.random.default_rng(5))
    theirs, _ = compare_module._bootstrap_means(s, 300, np.random.default_rng(5))
    np.testing.assert_array_equal(ours, theirs)
