"""The memory planner: live ranges over the layer DAG, slot packing, and a planned net's behaviour."""

import logging
from types import SimpleNamespace

import numpy as np
import pytest

from caffe_core import proto_io, registry
from caffe_core.blob import Blob
from caffe_core.device import CPU
from caffe_core.errors import CaffeError, NetBuildError
from caffe_core.layer import Layer
from caffe_core.memory_plan import MemoryPlan, Storage, apply_plan, assign_offsets, live_storages
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.synced_memory import SyncedMemory


class AddOne(Layer):
    """Test layer: top = bottom + 1 (in place allowed); no backward needed by these tests."""

    type = "TestAddOne"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom, top):
        if top[0] is not bottom[0]:
            top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side) + 1


class Plus(Layer):
    """Test layer: top = sum of the bottoms."""

    type = "TestPlus"
    min_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom, top):
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        total = bottom[0].data_on(side).copy()
        for blob in bottom[1:]:
            total += blob.data_on(side)
        top[0].mutable_data_on(side)[...] = total


class AliasInForward(Layer):
    """Test layer that points its top at its bottom's memory only when forward runs (as Caffe's Permute)."""

    type = "TestAliasInForward"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom, top):
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        top[0].share_data(bottom[0])


class TopIsParam(Layer):
    """Test layer: its top is its own 2 x 3 parameter blob (as Caffe's Parameter layer), plus its bottom."""

    type = "TestTopIsParam"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        self.blobs = [Blob((2, 3))]

    def reshape(self, bottom, top):
        top[0].reshape_like(bottom[0])
        top[0].share_data(self.blobs[0])

    def forward_on(self, side, bottom, top):
        top[0].mutable_data_on(side)[...] += bottom[0].data_on(side)


LAYERS = (AddOne, Plus, AliasInForward, TopIsParam)


@pytest.fixture(autouse=True)
def test_layers():
    for cls in LAYERS:
        registry.register_layer(cls.type, cls)
    yield
    for cls in LAYERS:
        registry.unregister_layer(cls.type)


def build(text: str, **kwargs) -> Net:
    return Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST, **kwargs)


def storage(count: int, first: int, last: int, *blob_ids: int) -> Storage:
    return Storage(SyncedMemory(count), list(blob_ids), first, last)


# A chain x -> a -> b -> c -> d -> e, every blob 2 x 3 (6 values), plus a branch: "c" feeds "d" and "join".
CHAIN = """
layer { name: "data" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "l1" type: "TestAddOne" bottom: "x" top: "a" }
layer { name: "l2" type: "TestAddOne" bottom: "a" top: "b" }
layer { name: "l3" type: "TestAddOne" bottom: "b" top: "c" }
layer { name: "l3r" type: "TestAddOne" bottom: "c" top: "c" }
layer { name: "l4" type: "TestAddOne" bottom: "c" top: "d" }
layer { name: "l5" type: "TestAddOne" bottom: "d" top: "e" }
layer { name: "join" type: "TestPlus" bottom: "e" bottom: "c" top: "out" }
"""


def test_largest_first_packing_by_hand():
    # Sizes 4, 3, 2, 1 live over [0,1], [1,2], [2,3], [3,4]: 4 at 0; 3 is live with it at layer 1, so at 4;
    # 2 is live only with the 3, so back at 0; 1 is live with the 2, so right after it at 2.
    storages = [storage(4, 0, 1), storage(3, 1, 2), storage(2, 2, 3), storage(1, 3, 4)]
    assert assign_offsets(storages) == [0, 4, 0, 2]


def test_the_tightest_gap_wins():
    # P [0,4) and Q [4,7) are placed first; R (live with Q only) reuses P's place at 0; S (live with Q and R)
    # has the gap [2,4) left between R and Q, which fits it exactly.
    storages = [storage(4, 0, 0), storage(3, 0, 2), storage(2, 1, 1), storage(1, 1, 1)]
    offsets = assign_offsets(storages)
    assert offsets == [0, 4, 0, 2]
    plan = MemoryPlan(storages, offsets, kept_count=5)
    assert plan.arena_count == 7
    assert plan.bytes_with == (5 + 7) * 4 and plan.bytes_without == (5 + 10) * 4
    assert plan.overlaps(0, 2) and plan.overlaps(0, 3) and not plan.overlaps(1, 3)


def test_live_ranges_follow_in_place_layers_splits_and_kept_blobs():
    net = build(CHAIN, optimize_memory=True)
    plan = net._memory_plan
    ranges = {tuple(net.blob_names[i] for i in s.blob_ids): (s.first_layer, s.last_layer)
              for s in plan.storages}
    layer = net.layer_names.index
    # "c" is written by l3, rewritten in place by l3r, split (the Split's tops share its data) and last read
    # by the join; "x" (input) and "out" (output) are never planned.
    c_names = next(names for names in ranges if "c" in names)
    assert set(c_names) == {"c", *(n for n in net.blob_names if n.startswith("c_l3r_0_split"))}
    assert ranges[c_names] == (layer("l3"), layer("join"))
    assert ranges[("a",)] == (layer("l1"), layer("l2"))
    assert not any("x" in names or "out" in names for names in ranges)
    # a and b overlap at l2, b and d do not: a, d and e can take turns with b's slot partner.
    assert plan.bytes_without == 7 * 6 * 4
    assert plan.bytes_with < plan.bytes_without


def test_planned_outputs_equal_the_plain_nets_and_memory_is_reused():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    plain, planned = build(CHAIN), build(CHAIN, optimize_memory=True)
    for net in (plain, planned):
        net.blob_by_name("x").data[...] = x
        net.forward()
    # out = e + c = (x + 6) + (x + 4)
    np.testing.assert_array_equal(planned.blob_by_name("out").data, 2 * x + 10)
    np.testing.assert_array_equal(plain.blob_by_name("out").data, 2 * x + 10)
    # a's buffer was handed on once a was consumed, so its blob no longer holds x + 1.
    assert not planned.readable_after_forward("a")
    assert planned.readable_after_forward("a", end=planned.layer_names.index("l2"))
    assert planned.readable_after_forward("out") and plain.readable_after_forward("a")


def test_kept_blobs_stay_readable():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    net = build(CHAIN, optimize_memory=True, keep=("a", "d"))
    net.blob_by_name("x").data[...] = x
    net.forward()
    np.testing.assert_array_equal(net.blob_by_name("a").data, x + 1)
    np.testing.assert_array_equal(net.blob_by_name("d").data, x + 5)
    assert net.readable_after_forward("a") and net.readable_after_forward("d")


def test_unknown_kept_blob_is_refused_by_name():
    with pytest.raises(NetBuildError, match="keep names blob\\(s\\) 'nope'.*its blobs are x, a, b"):
        build(CHAIN, optimize_memory=True, keep=("nope",))


def test_backward_is_refused_on_a_planned_net():
    net = build(CHAIN, optimize_memory=True)
    with pytest.raises(CaffeError, match="built with optimize_memory.*cannot run"):
        net.backward()


def test_bigger_inputs_replan_before_forward():
    net = build(CHAIN, optimize_memory=True)
    net.blob_by_name("x").reshape(5, 3)
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    net.blob_by_name("x").data[...] = x
    net.forward()
    np.testing.assert_array_equal(net.blob_by_name("out").data, 2 * x + 10)
    assert net._memory_plan.bytes_without == 7 * 15 * 4


def test_the_log_gives_memory_with_and_without_the_planner(caplog):
    with caplog.at_level(logging.INFO, logger="caffe.net"):
        net = build(CHAIN, optimize_memory=True)
    plan = net._memory_plan
    assert (f"Memory required for data with optimize_memory: {plan.bytes_with} ({plan.bytes_without} "
            f"without)") in caplog.text


def test_a_layer_that_aliases_another_planned_blob_in_forward_is_refused():
    text = CHAIN.replace('"TestAddOne" bottom: "d"', '"TestAliasInForward" bottom: "d"')
    net = build(text, optimize_memory=True)
    with pytest.raises(CaffeError, match="layer 'l5' made its top 'e' share the memory of 'd' during"):
        net.forward()


def test_plain_nets_tell_layers_which_run_backward():
    # A deploy net has no loss: no layer runs backward, so layers need not keep what only backward reads.
    net = build(CHAIN)
    assert not any(layer.backward_needed for layer in net.layers)
    assert AddOne(caffe_pb2.LayerParameter()).backward_needed


def test_storages_are_packed_largest_first_whatever_their_order():
    # The same four storages as in test_largest_first_packing_by_hand, given smallest first.
    storages = [storage(1, 3, 4), storage(2, 2, 3), storage(3, 1, 2), storage(4, 0, 1)]
    assert assign_offsets(storages) == [2, 0, 4, 0]


def test_equal_sizes_are_placed_in_order_of_their_first_layer():
    # B [1,2] and C [2,3] are both 2 values and both live with A [0,3] (at 0); B starts first, so it takes
    # the place right after A and C the one after B.
    storages = [storage(2, 2, 3), storage(2, 1, 2), storage(3, 0, 3)]
    assert assign_offsets(storages) == [5, 3, 0]


def test_a_storage_is_live_with_one_that_starts_at_its_last_layer():
    # The big one [2,3] is placed first; the small one ends at layer 2, where the big one starts.
    assert assign_offsets([storage(5, 2, 3), storage(2, 0, 2)]) == [0, 5]
    assert assign_offsets([storage(5, 2, 3), storage(2, 0, 1)]) == [0, 0]


def test_a_gap_of_exactly_the_size_is_taken():
    # P [0,4) and Q [4,7) as in test_the_tightest_gap_wins; R (2, live with Q only) reuses [0,2); S (2, live
    # with Q and R) fits the 2 values [2,4) between R and Q exactly.
    storages = [storage(4, 0, 0), storage(3, 0, 2), storage(2, 1, 1), storage(2, 1, 1)]
    assert assign_offsets(storages) == [0, 4, 0, 2]


def test_a_gap_too_small_is_passed_over():
    # As above but R is 3 values: the gap [3,4) between R and Q is 1 value, too small for S, which goes after
    # Q.
    storages = [storage(4, 0, 0), storage(3, 0, 2), storage(3, 1, 1), storage(2, 1, 1)]
    assert assign_offsets(storages) == [0, 4, 0, 7]


def test_of_two_equal_gaps_the_first_is_taken():
    # G1, X, G2, Y (2 values each, all live at layer 3) are stacked at 0, 2, 4, 6. W (2 values, layers 4-5)
    # is live with X and Y only, so [0,2) and [4,6) are both free for it: the first one wins.
    storages = [storage(2, 0, 3), storage(2, 1, 4), storage(2, 2, 3), storage(2, 3, 5), storage(2, 4, 5)]
    assert assign_offsets(storages) == [0, 2, 4, 6, 0]


def test_storages_that_only_touch_do_not_overlap():
    plan = MemoryPlan([storage(2, 0, 1), storage(3, 0, 1)], [0, 2], kept_count=0)
    assert not plan.overlaps(0, 1) and not plan.overlaps(1, 0)
    assert plan.overlaps(0, 0) and plan.arena_count == 5


def test_overwritten_from_the_layer_where_the_next_storage_starts():
    # Blob 7's storage lives over layers 0-1 at [0,2); blob 8's over layers 3-4 at [1,3), blob 9's over 2-4
    # elsewhere. Blob 7 is intact through layer 2 and overwritten once layer 3 has run.
    storages = [storage(2, 0, 1, 7), storage(2, 3, 4, 8), storage(2, 2, 4, 9)]
    plan = MemoryPlan(storages, [0, 1, 3], kept_count=0)
    assert [plan.overwritten(7, end) for end in range(5)] == [False, False, False, True, True]
    # A storage live at one layer is not overwritten by itself, nor by a later one elsewhere in the arena.
    assert not plan.overwritten(9, 4)
    single = MemoryPlan([storage(3, 2, 2, 5)], [0], kept_count=0)
    assert not single.overwritten(5, 2) and not single.overwritten(5, 3)


def test_an_empty_plan_needs_no_arena():
    plan = MemoryPlan([], [], kept_count=6)
    assert plan.arena_count == 0 and plan.bytes_with == plan.bytes_without == 24


SMALL = """
layer { name: "data" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "own" type: "TestTopIsParam" bottom: "x" top: "p" }
layer { name: "l1" type: "TestAddOne" bottom: "p" top: "a" }
layer { name: "l2" type: "TestAddOne" bottom: "a" top: "out" }
"""


def test_a_top_sharing_a_parameters_memory_is_never_planned():
    net = build(SMALL)
    storages, kept = live_storages(net.graph, {net.blob_names_index["x"], net.blob_names_index["out"]})
    assert [[net.blob_names[i] for i in s.blob_ids] for s in storages] == [["a"]]
    # x, p (the parameter's buffer) and out are kept: 3 x 6 values.
    assert kept == 18
    # With nothing kept by name only the parameter's buffer stays out of the plan.
    storages, kept = live_storages(net.graph, [])
    assert [net.blob_names[s.blob_ids[0]] for s in storages] == ["x", "a", "out"] and kept == 6


def test_blobs_of_one_value_are_planned_and_empty_ones_are_not():
    one, empty = (build(CHAIN.replace("dim: 2 dim: 3", f"dim: {n} dim: 1")) for n in (1, 0))
    kept = {one.blob_names_index["x"], one.blob_names_index["out"]}
    storages, _ = live_storages(one.graph, kept)
    assert sorted(s.count for s in storages) == [1] * 5
    assert live_storages(empty.graph, kept) == ([], 0)


def test_the_arena_holds_exactly_the_plans_values():
    net = build(CHAIN.replace("dim: 2 dim: 3", "dim: 1 dim: 1"))
    # Only "a" (blob 1) is planned, alone: a one-value arena.
    plan = MemoryPlan([Storage(net.blobs[1].data_memory, [1], 1, 2)], [0], kept_count=0)
    views = apply_plan(net.graph, plan, CPU)
    assert list(views) == [1] and net.blobs[1].data_memory is views[1]
    assert views[1].cpu_data().base.size == 1


def test_apply_plan_refuses_a_plan_missing_an_offset():
    net = build(CHAIN)
    storages = [Storage(net.blobs[i].data_memory, [i], i, i + 1) for i in (1, 2)]
    with pytest.raises(ValueError):
        apply_plan(net.graph, MemoryPlan(storages, [0], kept_count=0), CPU)


def test_apply_plan_on_a_gpu_side_points_the_blobs_device_copies_into_the_arena():
    # A stand-in GPU side whose array module is numpy: the windows become the blobs' device copies.
    net = build(CHAIN)
    storages = [Storage(net.blobs[i].data_memory, [i], i, i + 1) for i in (1, 3)]
    plan = MemoryPlan(storages, [0, 0], kept_count=0)
    views = apply_plan(net.graph, plan, SimpleNamespace(name="gpu", xp=np))
    a, c = views[1].gpu_data(), views[3].gpu_data()
    assert a.size == c.size == 6 and np.shares_memory(a, c) and a.base.size == 6
