"""rankereval.Accumulator: batch by batch, merged across processes, equal to evaluate bit for bit."""
import math
import multiprocessing
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

from rankereval import (Accumulator, BinaryLabels, NumericLabels, Rankings, UndefinedMetricWarning,
                        evaluate)
from helpers import assert_same_evaluation

# undefined means are expected in the random data; test_undefined_means_warn_as_evaluate checks the warning
pytestmark = pytest.mark.filterwarnings("ignore::rankereval.UndefinedMetricWarning")

METRICS = ["ndcg@5", "recall@10", "mrr@5", "p@3", "map", "gmap", "dcg@4", "rprec"]


def data(seed, n=60, n_items=30, graded=False, p=0.15):
    rng = np.random.default_rng(seed)
    scores = rng.random((n, n_items)).astype(np.float32)
    scores[rng.random(scores.shape) < 0.2] = 0.5          # ties, broken by item id
    rel = rng.random((n, n_items)) < p
    rel[rng.random(n) < 0.1] = False                       # some queries without a relevant item
    labels = np.where(rel, rng.integers(1, 4, rel.shape), 0).astype(np.float64) if graded else rel
    return scores, labels


def reference(metrics, scores, labels, k, query_ids=None, **options):
    y_true = (NumericLabels if labels.dtype != np.bool_ else BinaryLabels).from_matrix(labels)
    y_pred = Rankings.from_scores(scores, k=k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return evaluate(y_true, y_pred, metrics, query_ids=query_ids, resampling="poisson", **options)


def run(acc, scores, labels, cuts, query_ids=None):
    for a, b in zip(cuts[:-1], cuts[1:]):
        acc.update(labels[a:b], scores[a:b], query_ids=None if query_ids is None else query_ids[a:b])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)
        return acc.compute()


@st.composite
def splits(draw, n=60):
    points = draw(st.lists(st.integers(0, n), max_size=8))
    return [0] + sorted(points) + [n]


@given(cuts=splits(), seed=st.integers(0, 2**32 - 1), graded=st.booleans(),
       nan_handling=st.sampled_from(["propagate", "drop", "zerofill"]), conf=st.booleans(),
       ids=st.sampled_from(["int", "str", "none"]))
def test_batches_equal_evaluate_on_the_concatenation(cuts, seed, graded, nan_handling, conf, ids):
    scores, labels = data(seed, graded=graded)
    rng = np.random.default_rng(seed)
    query_ids = {"int": rng.permutation(10**6)[:60], "str": np.array([f"q{i}" for i in rng.permutation(60)]),
                 "none": None}[ids]
    options = dict(nan_handling=nan_handling, conf_interval=conf, n_resamples=50, random_state=seed)
    acc = Accumulator(METRICS, keep_scores=True, **options)
    got = run(acc, scores, labels, cuts, query_ids)
    assert acc.k is None                                  # map and rprec rank every item
    assert_same_evaluation(got, reference(METRICS, scores, labels, None, query_ids, **options))
    if query_ids is not None:
        np.testing.assert_array_equal(got.query_ids, query_ids)


def test_rankings_and_a_cutoff_from_the_metrics():
    scores, labels = data(1, n=80)
    acc = Accumulator(["ndcg@10", "recall@20", "mrr@10"], conf_interval=True, random_state=4)
    assert acc.k == 20
    y_pred = Rankings.from_scores(scores, k=20)
    for a, b in [(0, 33), (33, 33), (33, 80)]:
        acc.update(BinaryLabels.from_matrix(labels[a:b]), y_pred[a:b], query_ids=np.arange(a, b))
    ref = reference(["ndcg@10", "recall@20", "mrr@10"], scores, labels, 20, conf_interval=True, random_state=4)
    assert_same_evaluation(acc.compute(), ref, scores=False)
    # rows without ids are keyed by their row number: the same keys as ids 0 .. n - 1
    again = Accumulator(["ndcg@10", "recall@20", "mrr@10"], conf_interval=True, random_state=4)
    run(again, scores, labels, [0, 5, 80])
    assert_same_evaluation(again.compute(), ref, scores=False)


def _three(seed, conf=True):
    scores, labels = data(seed, n=90)
    ids = np.random.default_rng(seed).permutation(1000)[:90]
    parts = []
    for a, b in [(0, 20), (20, 21), (21, 90)]:
        acc = Accumulator(METRICS, conf_interval=conf, n_resamples=64, random_state=9, nan_handling="drop")
        run(acc, scores, labels, [a, (a + b) // 2, b], ids)
        parts.append(acc)
    return parts, scores, labels, ids


def _copy(acc):
    return pickle.loads(pickle.dumps(acc))


def test_merge_is_associative_and_commutative_exactly():
    (a, b, c), scores, labels, ids = _three(2)
    orders = [
        _copy(a).merge(_copy(b)).merge(_copy(c)),                 # (a + b) + c
        _copy(a).merge(_copy(b).merge(_copy(c))),                 # a + (b + c)
        _copy(c).merge(_copy(a)).merge(_copy(b)),                 # (c + a) + b
        _copy(b).merge(_copy(c).state_dict()).merge(a.state_dict()),
    ]
    states = [o.state_dict() for o in orders]
    for s in states[1:]:
        assert s.keys() == states[0].keys()
        for key in s:                                       # the very same digits, not just values
            np.testing.assert_array_equal(s[key], states[0][key], err_msg=key)
    ref = reference(METRICS, scores, labels, None, ids, conf_interval=True, n_resamples=64,
                    random_state=9, nan_handling="drop")
    for o in orders:
        assert_same_evaluation(o.compute(), ref, scores=False)


def test_state_dict_is_plain_numpy_and_round_trips():
    (a, b, c), *_ = _three(3)
    state = a.state_dict()
    assert all(type(v) is np.ndarray for v in state.values())
    fresh = Accumulator(METRICS, conf_interval=True, n_resamples=64, random_state=9, nan_handling="drop")
    fresh.load_state_dict(pickle.loads(pickle.dumps(state)))
    assert_same_evaluation(fresh.compute(), a.compute(), scores=False)
    for key, v in fresh.state_dict().items():
        np.testing.assert_array_equal(v, state[key])
    # the state is O(metrics x resamples): independent of the number of queries
    small = Accumulator(METRICS, conf_interval=True, n_resamples=64, random_state=9, check_query_ids=False)
    big = Accumulator(METRICS, conf_interval=True, n_resamples=64, random_state=9, check_query_ids=False)
    s, lab = data(5, n=400)
    run(small, s, lab, [0, 40])
    run(big, s, lab, [0, 100, 200, 300, 400])
    size = lambda acc: sum(v.nbytes for k, v in acc.state_dict().items() if k != "config")  # noqa: E731
    assert size(big) <= size(small) + 8 * len(METRICS) * 64   # at most one more digit per sum


def test_options_must_match_to_merge():
    (a, b, _), *_ = _three(4)
    other = Accumulator(METRICS, conf_interval=True, n_resamples=64, random_state=10, nan_handling="drop")
    with pytest.raises(ValueError, match="different metrics or options"):
        a.merge(other)
    with pytest.raises(ValueError, match="other metrics or options"):
        other.load_state_dict(b.state_dict())
    unseeded = [Accumulator(["p@3"], conf_interval=True) for _ in range(2)]
    with pytest.raises(ValueError, match="different metrics or options"):
        unseeded[0].merge(unseeded[1])                     # two random seeds: not one bootstrap
    with pytest.raises(TypeError, match="Accumulator or a state_dict"):
        a.merge([1, 2])


def test_reset_forgets_the_batches():
    scores, labels = data(6)
    acc = Accumulator(["ndcg@5", "p@3"], conf_interval=True, random_state=1)
    run(acc, scores, labels, [0, 30], np.arange(30))
    acc.reset()
    assert acc.n_rankings == 0
    got = run(acc, scores, labels, [0, 10, 60], np.arange(60))   # the same ids again: a new epoch
    ref = reference(["ndcg@5", "p@3"], scores, labels, 5, np.arange(60), conf_interval=True, random_state=1)
    assert_same_evaluation(got, ref, scores=False)


def test_undefined_means_warn_as_evaluate():
    scores, labels = data(7)
    labels[:3] = False
    acc = Accumulator(["ndcg@5", "p@3"])
    acc.update(labels, scores)
    with pytest.warns(UndefinedMetricWarning) as got:
        ev = acc.compute()
    with pytest.warns(UndefinedMetricWarning) as ref:
        evaluate(BinaryLabels.from_matrix(labels), Rankings.from_scores(scores, k=5), ["ndcg@5", "p@3"])
    assert str(got[0].message) == str(ref[0].message)
    assert math.isnan(ev.mean("ndcg@5")) and ev.n_undefined["ndcg@5"] == int((~labels.any(axis=1)).sum()) >= 3
    with pytest.raises(ValueError, match="not kept"):
        ev["ndcg@5"]


def test_empty_accumulator():
    acc = Accumulator(["ndcg@5"], conf_interval=True, random_state=0, nan_handling="drop")
    acc.update(np.empty((0, 4), dtype=bool), np.empty((0, 4)), query_ids=[])
    ev = acc.compute()
    assert ev.n_rankings == 0 and math.isnan(ev.mean("ndcg@5"))
    assert all(math.isnan(v) for v in ev.conf_intervals["ndcg@5"])


def test_a_query_id_seen_twice_is_an_error():
    scores, labels = data(8)
    ids = np.arange(100, 160)
    acc = Accumulator(["p@3"], conf_interval=True, random_state=0)
    acc.update(labels[:30], scores[:30], query_ids=ids[:30])
    before = acc.state_dict()
    with pytest.raises(ValueError, match="query id 105 was seen before"):
        acc.update(labels[30:40], scores[30:40], query_ids=np.r_[ids[31:40], 105])
    with pytest.raises(ValueError, match="query id 135 is twice in this batch"):
        acc.update(labels[30:40], scores[30:40], query_ids=np.r_[ids[30:39], 135])
    for key, v in acc.state_dict().items():                    # a refused batch changes nothing
        np.testing.assert_array_equal(v, before[key])
    other = Accumulator(["p@3"], conf_interval=True, random_state=0)
    other.update(labels[30:40], scores[30:40], query_ids=np.r_[ids[31:40], 129])
    with pytest.raises(ValueError, match="seen before"):
        acc.merge(other)
    with pytest.raises(ValueError, match="seen before"):
        acc.merge(other.state_dict())
    strs = Accumulator(["p@3"], keep_scores=True)
    strs.update(labels[:2], scores[:2], query_ids=["a", "b"])
    with pytest.raises(ValueError, match="query id 'b' was seen before"):
        strs.update(labels[2:3], scores[2:3], query_ids=["b"])


def test_without_the_check_a_repeated_id_counts_as_evaluate_counts_it():
    scores, labels = data(9)
    ids = np.r_[np.arange(30), np.arange(30)]                    # every id twice
    acc = Accumulator(["ndcg@5", "p@3"], conf_interval=True, random_state=2, check_query_ids=False)
    got = run(acc, scores, labels, [0, 30, 60], ids)
    assert "seen" not in acc.state_dict()
    ref = reference(["ndcg@5", "p@3"], scores, labels, 5, ids, conf_interval=True, random_state=2)
    assert_same_evaluation(got, ref, scores=False)


def test_query_ids_in_every_batch_or_none():
    scores, labels = data(10)
    acc = Accumulator(["p@3"], conf_interval=True, random_state=0)
    acc.update(labels[:5], scores[:5])
    with pytest.raises(ValueError, match="in every batch or in none"):
        acc.update(labels[5:9], scores[5:9], query_ids=[5, 6, 7, 8])
    other = Accumulator(["p@3"], conf_interval=True, random_state=0)
    other.update(labels[5:9], scores[5:9])
    with pytest.raises(ValueError, match="give query_ids"):
        acc.merge(other)                                       # both keyed 0, 1, ...: keys would repeat
    ints = Accumulator(["p@3"])
    ints.update(labels[:2], scores[:2], query_ids=[1, 2])
    with pytest.raises(TypeError, match="strs in this batch but ints before"):
        ints.update(labels[2:3], scores[2:3], query_ids=["x"])
    with pytest.raises(ValueError, match="one id per ranking"):
        ints.update(labels[2:4], scores[2:4], query_ids=[3])
    with_ids = Accumulator(["p@3"], conf_interval=True, random_state=0)
    with_ids.update(labels[9:12], scores[9:12], query_ids=[9, 10, 11])
    with pytest.raises(ValueError, match="query_ids in every update"):
        with_ids.merge(other)
    strs = Accumulator(["p@3"])
    strs.update(labels[:1], scores[:1], query_ids=["a"])
    with pytest.raises(TypeError, match="ints in one accumulator and strs in the other"):
        ints.merge(strs)
    # without intervals the keys do not matter: rows without ids merge
    plain = [Accumulator(["p@3", "ndcg@5"]) for _ in range(2)]
    run(plain[0], scores, labels, [0, 25])
    plain[1].update(labels[25:], scores[25:])
    ref = reference(["p@3", "ndcg@5"], scores, labels, 5)
    assert_same_evaluation(plain[0].merge(plain[1]).compute(), ref, scores=False)


def test_bad_inputs():
    scores, labels = data(11)
    with pytest.raises(ValueError, match="resampling must be 'poisson'"):
        Accumulator(["p@3"], resampling="multinomial")
    with pytest.raises(ValueError, match="metrics is empty"):
        Accumulator([])
    with pytest.raises(ValueError, match="k=10 ranks fewer items than recall@20"):
        Accumulator(["ndcg@5", "recall@20"], k=10)
    with pytest.raises(ValueError, match="ap reads .the whole ranking"):
        Accumulator(["map"], k=10)
    assert Accumulator(["ndcg@5"], k=30).k == 30
    acc = Accumulator(["p@3"])
    with pytest.raises(ValueError, match="labels has 4 rows but the batch has 5"):
        acc.update(labels[:4], scores[:5])
    with pytest.raises(TypeError, match="from_positive_indices"):
        acc.update([[1], [2]], scores[:2])
    with pytest.raises(TypeError, match="scores are Rankings already|Rankings already"):
        acc.update(labels[:2], Rankings.from_scores(scores[:2], k=3), invalid_items=[[0], [1]])
    assert acc.n_rankings == 0


class _DeviceArray:
    """An array that says, as a CUDA tensor does through DLPack, that it lives on a GPU
    (there is no GPU here: this checks the message, not a CUDA path)."""

    def __dlpack_device__(self):
        return (2, 0)                # kDLCUDA, device 0

    def __dlpack__(self, stream=None):
        raise AssertionError("a device array must not be read")


def test_gpu_arrays_are_refused_with_a_clear_message():
    acc = Accumulator(["p@3"])
    with pytest.raises(TypeError, match=r"y_pred: the _DeviceArray is in CUDA memory; move it to the host"):
        acc.update(np.zeros((1, 3), dtype=bool), _DeviceArray())
    with pytest.raises(TypeError, match=r"y_true: the _DeviceArray is in CUDA memory.*\.cpu\(\)"):
        acc.update(_DeviceArray(), np.zeros((1, 3)))


def test_invalid_items_per_query_id_or_per_batch():
    scores, labels = data(12, n=50)
    rng = np.random.default_rng(12)
    train = sp.csr_array(rng.random((50, 30)) < 0.2)
    ids = rng.permutation(50)
    per_id = Accumulator(["ndcg@5", "recall@10"], invalid_items=train, conf_interval=True, random_state=1)
    per_batch = Accumulator(["ndcg@5", "recall@10"], conf_interval=True, random_state=1)
    for a, b in [(0, 17), (17, 50)]:
        per_id.update(labels[ids[a:b]], scores[ids[a:b]], query_ids=ids[a:b])
        per_batch.update(labels[ids[a:b]], scores[ids[a:b]], query_ids=ids[a:b], invalid_items=train[ids[a:b]])
    y_pred = Rankings.from_scores(scores[ids], k=10, invalid_items=train[ids])
    ref = evaluate(BinaryLabels.from_matrix(labels[ids]), y_pred, ["ndcg@5", "recall@10"], conf_interval=True,
                   random_state=1, resampling="poisson", query_ids=ids)
    assert_same_evaluation(per_id.compute(), ref, scores=False)
    assert_same_evaluation(per_batch.compute(), ref, scores=False)
    with pytest.raises(ValueError, match="give the batch's query_ids"):
        per_id.update(labels[:2], scores[:2])
    with pytest.raises(ValueError, match="row numbers of invalid_items"):
        per_id.update(labels[:2], scores[:2], query_ids=[3, 50])


# ------------------------------------------------------------------------------------------
# Several processes
# ------------------------------------------------------------------------------------------

def _shard_state(args):
    """One process's work: its shard of queries, batch by batch -> the state to send."""
    seed, rank, world = args
    scores, labels = data(seed, n=120)
    ids = np.arange(120)[rank::world]
    acc = Accumulator(METRICS, conf_interval=True, n_resamples=80, random_state=5)
    run(acc, scores[ids], labels[ids], [0, 7, 7, len(ids)], ids)
    return acc.state_dict()


def test_multiprocessing_shards_merge_to_the_one_process_result():
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        states = pool.map(_shard_state, [(13, r, 3) for r in range(3)])
    total = Accumulator(METRICS, conf_interval=True, n_resamples=80, random_state=5)
    for s in states:
        total.merge(s)
    scores, labels = data(13, n=120)
    order = np.concatenate([np.arange(120)[r::3] for r in range(3)])
    ref = reference(METRICS, scores[order], labels[order], None, order, conf_interval=True,
                    n_resamples=80, random_state=5)
    assert_same_evaluation(total.compute(), ref, scores=False)


def _distributed_worker(rank, world, init, out):
    import torch
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    try:
        scores, labels = data(14, n=100)
        ids = np.arange(100)[rank::world]
        acc = Accumulator(["ndcg@5", "recall@10", "mrr@5"], conf_interval=True, n_resamples=100,
                          random_state=3)
        for a in range(0, len(ids), 16):                  # a validation loop over tensors
            batch = ids[a:a + 16]
            acc.update(torch.from_numpy(labels[batch]), torch.from_numpy(scores[batch]),
                       query_ids=torch.from_numpy(batch))
        states = [None] * world
        dist.all_gather_object(states, acc.state_dict())
        acc.reset()
        for s in states:
            acc.merge(s)
        with open(f"{out}.{rank}", "wb") as fh:
            pickle.dump(acc.compute().to_dict(), fh)
    finally:
        dist.destroy_process_group()


def test_torch_distributed_all_gather_of_the_state(tmp_path):
    torch = pytest.importorskip("torch", reason="torch is not installed (.ci/run installs the CPU wheel)")
    import torch.multiprocessing as tmp

    world = 2
    tmp.spawn(_distributed_worker, args=(world, f"file://{tmp_path}/rendezvous", str(tmp_path / "result")),
              nprocs=world, join=True)
    scores, labels = data(14, n=100)
    order = np.concatenate([np.arange(100)[r::world] for r in range(world)])
    ref = reference(["ndcg@5", "recall@10", "mrr@5"], scores[order], labels[order], 10, order,
                    conf_interval=True, n_resamples=100, random_state=3)
    for rank in range(world):                              # every rank has the whole result
        with open(tmp_path / f"result.{rank}", "rb") as fh:
            assert pickle.load(fh) == ref.to_dict()
    assert torch.distributed.is_available()


def test_torch_tensors_read_as_arrays():
    torch = pytest.importorskip("torch", reason="torch is not installed (.ci/run installs the CPU wheel)")
    scores, labels = data(15)
    a = Accumulator(["ndcg@5", "p@3"], keep_scores=True)
    b = Accumulator(["ndcg@5", "p@3"], keep_scores=True)
    a.update(torch.from_numpy(labels), torch.from_numpy(scores), query_ids=torch.arange(60))
    b.update(labels, scores, query_ids=np.arange(60))
    assert_same_evaluation(a.compute(), b.compute())


@pytest.mark.parametrize("conf", [False, True])
@pytest.mark.parametrize("with_ids", [False, True])
def test_merges_with_empty_accumulators_in_any_order_keep_scores(conf, with_ids):
    """keep_scores: merging an empty accumulator (or its state) into a used one, or a used
    one into an empty one, gives the used one's result: scores and query ids included."""
    scores, labels = data(11, n=30)
    ids = np.arange(100, 130) if with_ids else None

    def make():
        return Accumulator(METRICS, keep_scores=True, conf_interval=conf, n_resamples=32, random_state=3,
                           nan_handling="drop")

    used = make()
    expected = run(used, scores, labels, [0, 10, 30], ids)
    assert (expected.query_ids is None) == (not with_ids)
    variants = {
        "used + empty": _copy(used).merge(make()),
        "used + empty state": _copy(used).merge(make().state_dict()),
        "empty + used": make().merge(_copy(used)),
        "empty + used state": make().merge(used.state_dict()),
        "empty state + used": _load(make, make().state_dict()).merge(_copy(used)),
        "used state + empty state": _load(make, used.state_dict()).merge(make().state_dict()),
        "empty + empty + used": make().merge(make()).merge(used.state_dict()),
    }
    for name, acc in variants.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UndefinedMetricWarning)
            got = acc.compute()
        assert_same_evaluation(got, expected, scores=False)
        np.testing.assert_array_equal(got.scores, expected.scores, err_msg=name)
        if with_ids:
            np.testing.assert_array_equal(got.query_ids, expected.query_ids, err_msg=name)
        else:
            assert got.query_ids is None, name
        state = acc.state_dict()
        assert ("query_ids" in state) == with_ids, name
    # two used halves, in either order: the same means; scores follow the merge order
    first, second = make(), make()
    run(first, scores[:12], labels[:12], [0, 12], None if ids is None else ids[:12])
    run(second, scores[12:], labels[12:], [0, 18], None if ids is None else ids[12:])
    if not (conf and not with_ids):  # rows keyed by row number cannot be merged with intervals
        ab = _copy(first).merge(_copy(second).state_dict()).compute()
        ba = _copy(second).merge(_copy(first)).compute()
        assert_same_evaluation(ab, ba, scores=False)
        if with_ids:
            order = np.argsort(np.concatenate([ids[12:], ids[:12]]))
            np.testing.assert_array_equal(ba.scores[order], ab.scores)


def _load(make, state):
    acc = make()
    acc.load_state_dict(state)
    return acc


@pytest.mark.parametrize("keep_scores", [False, True])
def test_load_state_dict_names_a_missing_or_wrong_entry(keep_scores):
    acc = Accumulator(["p@3", "map"], conf_interval=True, n_resamples=16, random_state=1,
                      keep_scores=keep_scores)
    scores, labels = data(12, n=8)
    run(acc, scores, labels, [0, 8], np.arange(8))
    state = acc.state_dict()
    for key in [k for k in state if k != "config"]:
        broken = dict(state)
        del broken[key]
        if key in ("seen", "query_ids"):  # optional: the rows have no ids / are not checked
            continue
        with pytest.raises(ValueError, match=f"state: entries \\['{key}'\\] are missing"):
            Accumulator(["p@3", "map"], conf_interval=True, n_resamples=16, random_state=1,
                        keep_scores=keep_scores).load_state_dict(broken)
    fresh = Accumulator(["p@3", "map"], conf_interval=True, n_resamples=16, random_state=1,
                        keep_scores=keep_scores)
    for key, value, match in [("n_used", np.zeros(3), "'n_used' has shape"), ("weights", np.zeros(2), "'weights'"),
                              ("min", "x", "state"), ("id_kind", np.array(["float"]), "'id_kind'")]:
        with pytest.raises(ValueError, match=match):
            fresh.load_state_dict({**state, key: value})
    if keep_scores:
        with pytest.raises(ValueError, match="'scores' has shape"):
            fresh.load_state_dict({**state, "scores": np.zeros((3, 2))})
    with pytest.raises(TypeError, match="state: expected a dict"):
        fresh.load_state_dict([state])
    with pytest.raises(ValueError, match="no 'config' entry"):
        fresh.load_state_dict({"n": 1})
    fresh.load_state_dict(state)  # still usable after the refusals
    assert fresh.n_rankings == 8
