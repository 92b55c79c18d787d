"""The metric registry: names, the one name grammar, the public lists and pickling.

Every test here is parametrised from the registry, so a new metric is covered without
editing this file.
"""
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import rankereval
import rankereval.metrics as rm
from rankereval import BinaryLabels, NumericLabels, Rankings
from rankereval.metrics import Metric, from_name, metric_names
from rankereval.metrics._base import MetricInfo, RealParam, _registered

REGISTRY = _registered()
ALL = [cls(**p) for cls in REGISTRY for p in cls._param_space(cutoffs=(1, 10))]


def test_kernel_ids_come_from_one_enum_and_every_registered_kernel_is_one():
    """The metric kernel's names, the sets it and the tie kernel use, and the registry's
    kernels all derive from the one enum of ``_metric_ids.pxd``."""
    import rankereval.metrics._kernels as kernels
    import rankereval.metrics._metric_ids as ids
    import rankereval.metrics._ties_fast as ties

    n = len(ids.TRAITS)
    assert sorted(set(ids.METRIC_IDS.values())) == list(range(n))  # every id has a name, none is skipped
    assert all(ids.METRIC_IDS[m.name.lower()] == m for m in ids.MetricId if m < n)
    assert kernels.METRIC_IDS is ids.METRIC_IDS
    assert kernels.JUDGED_IDS == ids.ids_with("judged_items")
    assert set(ties.TIE_IDS.values()) == ids.ids_with("tie_expected")
    kernel_names = {cls.info.kernel for cls in _registered() if cls.info.kernel != "profile"}
    assert kernel_names <= set(ids.METRIC_IDS)
    # every reduction is some registered metric's (no dead id); a reduction chosen by a
    # metric's options (AP's denominator, RBP's residual) appears through its kernel arguments
    y = BinaryLabels.from_positive_indices([[0, 1]]).with_judged([[0, 1, 2]])
    r = Rankings.from_ranked_indices([[2, 0, 3]])
    used = set()
    for cls in _registered():
        if cls.info.kernel == "profile":
            continue
        for params in cls._param_space(cutoffs=(3,)):
            args = cls(**params)._kernel_args(y, r)
            used.add(ids.METRIC_IDS[args.get("kernel", cls.info.kernel)])
    assert used == set(range(n))


def test_registry_and_public_lists_agree():
    # everything=True adds the beyond-accuracy metrics, which need data inputs (test_beyond.py)
    names = {cls.__name__ for cls in _registered(everything=True)}
    assert names == set(rm.__all__) - {"Metric", "MetricInfo", "from_name", "metric_names", "SystemMetric",
                                       "popularity_from", "long_tail_items", "Adjusted",
                                       "cooccurrence_similarity", "feature_similarity"}
    assert set(REGISTRY) <= set(_registered(everything=True))
    assert names <= set(rankereval.__all__)
    metric_exports = set(rm.__all__) - {"MetricInfo", "from_name", "metric_names", "Adjusted"}
    assert metric_exports == set(rankereval._METRICS)  # the root's lazy table of the metrics
    for name in names:
        assert getattr(rankereval, name) is getattr(rm, name)
    assert metric_names() == [cls.info.name for cls in _registered(everything=True)]


@pytest.mark.parametrize("cls", REGISTRY, ids=lambda c: c.__name__)
def test_public_classes_name_the_public_module(cls):
    assert cls.__module__ == "rankereval.metrics"
    assert pickle.loads(pickle.dumps(cls)) is cls


@pytest.mark.parametrize("metric", ALL, ids=repr)
def test_name_round_trips_and_pickles(metric):
    assert from_name(metric.name) == metric
    if metric.name.upper() != f"AP@{getattr(metric, 'k', None)}":  # AP@k: ir_measures' (test_ir_measures_names.py)
        assert from_name(metric.name.upper()) == metric
    assert pickle.loads(pickle.dumps(metric)) == metric
    assert hash(pickle.loads(pickle.dumps(metric))) == hash(metric)


@given(cls=st.sampled_from(REGISTRY), data=st.data())
def test_name_round_trips_for_any_cutoff(cls, data):
    params = data.draw(st.sampled_from(cls._param_space(cutoffs=(1,))))
    if params.get("k") is not None:
        params["k"] = data.draw(st.integers(1, 2**62))
    metric = cls(**params)
    assert from_name(metric.name) == metric
    assert metric.name.startswith(cls.info.name)


# What 0.3.0 (rankereval/metrics.py, commit 7e5b69e) wrote for pickle.dumps(m, protocol=4),
# printed by that installed version: the stream names rankereval.metrics._restore_metric and
# rankereval.metrics.<Class>, which must keep loading (and new pickles must stay the same).
PICKLES_0_3_0 = {
    rankereval.NDCG(10): (
        b"\x80\x04\x95q\x00\x00\x00\x00\x00\x00\x00\x8c\x12rankereval.metrics\x94\x8c\x0f_restore_metric"
        b"\x94\x93\x94h\x00\x8c\x04NDCG\x94\x93\x94}\x94(\x8c\x01k\x94K\n\x8c\x11relevance_scaling\x94"
        b"\x8c\x08identity\x94\x8c\x08log_base\x94\x8c\x01e\x94u\x86\x94R\x94."),
    rankereval.Precision(5, truncated=True): (
        b"\x80\x04\x95U\x00\x00\x00\x00\x00\x00\x00\x8c\x12rankereval.metrics\x94\x8c\x0f_restore_metric"
        b"\x94\x93\x94h\x00\x8c\tPrecision\x94\x93\x94}\x94(\x8c\x01k\x94K\x05\x8c\ttruncated\x94\x88u"
        b"\x86\x94R\x94."),
}


@pytest.mark.parametrize("metric", list(PICKLES_0_3_0), ids=repr)
def test_pickles_written_by_0_3_0_load_and_new_ones_match(metric):
    assert pickle.loads(PICKLES_0_3_0[metric]) == metric
    assert pickle.dumps(metric, protocol=4) == PICKLES_0_3_0[metric]


@pytest.mark.parametrize("text, expected", [
    ("ndcg@10", rankereval.NDCG(10)), ("NDCG@10", rankereval.NDCG(10)), ("p@5", rankereval.Precision(5)),
    ("precision@5", rankereval.Precision(5)), ("map", rankereval.AP()), ("map@100", rankereval.AP(100)),
    ("mrr@10", rankereval.ReciprocalRank(10)), ("recip_rank", rankereval.ReciprocalRank()),
    ("recall@100", rankereval.Recall(100)), ("r@3[truncated]", rankereval.Recall(3, truncated=True)),
    ("ndcg@10[power]", rankereval.NDCG(10, "power")), ("dcg[log2]", rankereval.DCG(log_base="2")),
    ("dcg@3[relevance_scaling=power, log_base=2]", rankereval.DCG(3, "power", "2")),
    ("hr@10", rankereval.HitRate(10)), ("meanranks", rankereval.MeanRanks()), ("frr", rankereval.FirstRelevantRank()),
    ("  F1@2  ", rankereval.F1(2)), ("p@1[truncated=false]", rankereval.Precision(1)),
])
def test_from_name(text, expected):
    assert from_name(text) == expected


@pytest.mark.parametrize("text, match", [
    ("ndgc@10", r"unknown metric 'ndgc@10'; did you mean 'ndcg@10'\?"),
    ("p", "needs a cutoff, e.g. p@10"),
    ("meanranks@3", "takes no cutoff"),
    ("p@0", "integer > 0"), ("p@x", "integer > 0"), ("p@-1", "integer > 0"),
    ("p@3[power]", "unknown option 'power'"), ("ndcg@3[log_base=1]", "log_base must be '2', 'e' or a number > 1"),
    ("p@3[truncated,truncated]", "set twice"), ("p@3]", "without"), ("ap@2[k=3]", "no option 'k'"),
])
def test_from_name_errors(text, match):
    with pytest.raises(ValueError, match=match):
        from_name(text)


def test_from_name_type_error_and_defaults():
    with pytest.raises(TypeError, match="must be a str"):
        from_name(rankereval.NDCG(3))
    assert from_name("p@3", defaults={"truncated": True, "log_base": "2"}) == rankereval.Precision(3, truncated=True)
    assert from_name("p@3[truncated=false]", defaults={"truncated": True}) == rankereval.Precision(3)
    assert from_name("dcg@3", defaults={"log_base": "2"}) == rankereval.DCG(3, log_base="2")


def test_an_unregistered_metric_cannot_reach_the_kernel():
    class Unregistered(Metric):
        def _score(self, y_true, y_pred):
            return self._run(y_true, y_pred, None)

    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_ranked_indices([[0, 1]])
    with pytest.raises(TypeError, match="not a registered metric"):
        Unregistered().score(y, r)


def test_the_kernel_refuses_unknown_metric_ids():
    from rankereval.metrics import _kernels

    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_ranked_indices([[0, 1]])
    out = np.empty((1, 1))
    bad = max(_kernels.METRIC_IDS.values()) + 1
    one = np.zeros(1, dtype=np.int8)
    with pytest.raises(ValueError, match="unknown metric id"):
        _kernels.score(np.array([bad], dtype=np.int32), np.array([-1]), one, one, y.indptr, y.indices,
                       np.empty(0), True, y.n_items, r.indices, r.lengths, np.zeros((1, 0)),
                       np.zeros((1, 0)), one, True, 0, out, 1, np.zeros(1), y.indptr[:0], y.indices[:0])


def test_the_kernel_needs_judged_rows_for_judged_reductions():
    from rankereval.metrics import _kernels

    y = BinaryLabels.from_positive_indices([[0]])
    r = Rankings.from_ranked_indices([[0, 1]])
    out = np.empty((1, 1))
    one = np.zeros(1, dtype=np.int8)
    with pytest.raises(ValueError, match="judged items need one CSR row per label row"):
        _kernels.score(np.array([_kernels.METRIC_IDS["bpref"]], dtype=np.int32), np.array([-1]), one, one,
                       y.indptr, y.indices, np.empty(0), True, y.n_items, r.indices, r.lengths,
                       np.zeros((1, 0)), np.zeros((1, 0)), one, True, 0, out, 1, np.zeros(1),
                       y.indptr[:0], y.indices[:0])


def test_registry_entries_are_checked():
    with pytest.raises(ValueError, match="labels must be one of"):
        MetricInfo(name="x", kernel="dcg", summary="", labels="graded-ish")
    with pytest.raises(ValueError, match="not a reduction"):
        MetricInfo(name="x", kernel="no-such-kernel", summary="")
    with pytest.raises(ValueError, match="aggregate must be one of"):
        MetricInfo(name="x", kernel="ap", summary="", aggregate="median")
    with pytest.raises(ValueError, match="at must be 'k' or a real parameter"):
        MetricInfo(name="x", kernel="ap", summary="", at="level")
    with pytest.raises(ValueError, match=r"example must be a number in \[0, 1\]"):
        RealParam(0.0, 1.0, (0.5, 2.0))
    with pytest.raises(ValueError, match="already taken"):
        class Clash(Metric):  # noqa: F841
            info = MetricInfo(name="map", kernel="ap", summary="")


@pytest.mark.parametrize("cls", REGISTRY, ids=lambda c: c.__name__)
def test_labels_declaration_matches_behaviour(cls):
    metric = cls(**cls._param_space(cutoffs=(2,))[0])
    y_num = NumericLabels.from_matrix([[0, 2, 1]])
    r = Rankings.from_ranked_indices([[1, 2, 0]])
    if cls.info.labels == "binary":
        with pytest.raises(TypeError, match="needs BinaryLabels"):
            metric.score(y_num, r)
    else:
        assert np.isfinite(metric.score(y_num, r)).all()


@pytest.mark.parametrize("cls", REGISTRY, ids=lambda c: c.__name__)
def test_undefined_warning_names_metric_count_and_reason(cls):
    metric = cls(**cls._param_space(cutoffs=(2,))[0])
    y = BinaryLabels.from_positive_indices([[0], [], [1]])
    if cls.info.judged:  # judged = the relevant items: the second row has none
        y = y.with_judged(y)
    r = Rankings.from_ranked_indices([[0, 1], [1, 0], [1, 2]])
    if cls.info.undefined is None or cls.__name__ == "FallOut":  # never NaN here (FallOut: NaN
        # only for a ranking without a non-relevant item; see test_metrics_api)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert np.isfinite(metric.mean(y, r))
        return
    with pytest.warns(rankereval.UndefinedMetricWarning) as rec:
        assert np.isnan(metric.mean(y, r))
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert metric.name in msg and "1 of 3 rankings" in msg and cls.info.undefined in msg
    assert "nan_handling='drop'" in msg and "nan_handling='zerofill'" in msg
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        metric.score(y, r)  # never from score
        metric.mean(y, r, nan_handling="drop")
        metric.mean(y, r, nan_handling="zerofill")
        one = BinaryLabels.from_positive_indices([[0]])
        metric.mean(one.with_judged(one) if cls.info.judged else one, Rankings.from_ranked_indices([[0, 1]]))


@pytest.mark.parametrize("cls", REGISTRY, ids=lambda c: c.__name__)
def test_direction_matches_the_value_range(cls):
    # rank positions (1 is best, +inf is not found) are the metrics where lower is better
    # (and the losses: FallOut, the share of the non-relevant items ranked high;
    # LabelRankingLoss, the share of the pairs in the wrong order)
    losses = ("FallOut", "LabelRankingLoss")
    assert cls.info.higher_is_better == (cls.info.value_range != (1.0, float("inf")) and cls.__name__ not in losses)
