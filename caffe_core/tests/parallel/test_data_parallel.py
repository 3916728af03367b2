"""DataParallel: broadcast, layer-wise sums during the last backward pass, the mean, the root's action."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.parallel.data_parallel import DataParallel
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.solvers import SolverAction
from caffe_core.solvers.factory import create_solver

pytestmark = pytest.mark.requires_layer_types("InnerProduct", "EuclideanLoss")

NET = """
name: "tiny"
layer { name: "in" type: "Input" top: "x" top: "y"
        input_param { shape { dim: 4 dim: 5 } shape { dim: 4 dim: 2 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "z"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "z" bottom: "y" top: "loss" }
"""


class MirrorComm:
    """A two-rank job whose other rank always holds the same arrays: a sum doubles, a broadcast keeps."""

    rank, size = 0, 2

    def __init__(self, root_action=SolverAction.NONE):
        self.sums, self.root_action = [], root_action
        self.layer = None

    def start_sum(self, array):
        self.sums.append((self.layer, array.size))
        array *= 2
        return "pending"

    def finish(self, pending):
        assert all(p == "pending" for p in pending)

    def broadcast(self, array, root=0):
        pass

    def broadcast_object(self, value, root=0):
        return self.root_action.value if isinstance(value, str) else value

    def abort(self, code):
        raise AssertionError("no abort expected")


def solver(iter_size=1):
    param = caffe_pb2.SolverParameter(base_lr=0.1, lr_policy="fixed", iter_size=iter_size, display=0,
                                      max_iter=10)
    param.net_param.CopyFrom(parse_text(NET, caffe_pb2.NetParameter()))
    made = create_solver(param)
    rng = np.random.default_rng(3)
    made.net.blob_by_name("x").mutable_cpu_data()[...] = rng.normal(size=(4, 5))
    made.net.blob_by_name("y").mutable_cpu_data()[...] = rng.normal(size=(4, 2))
    return made


def attach(made, comm):
    parallel = DataParallel(made, comm)
    made.add_callback(parallel)

    def tracking(layer_id):
        comm.layer = layer_id
        parallel(layer_id)

    made.net.add_after_backward(tracking)
    return parallel


@pytest.mark.parametrize("iter_size", [1, 2])
def test_the_mean_of_identical_ranks_is_the_single_rank_update(iter_size):
    alone, together = solver(iter_size), solver(iter_size)
    together.net.share_trained_layers_with(alone.net)
    for blob_a, blob_b in zip(alone.net.learnable_params, together.net.learnable_params, strict=True):
        blob_b.data[...] = blob_a.data.copy()
    comm = MirrorComm()
    attach(together, comm)
    alone.step(3)
    together.step(3)
    for a, b in zip(alone.net.learnable_params, together.net.learnable_params, strict=True):
        np.testing.assert_array_equal(a.cpu_data(), b.cpu_data())
    # Per iteration, one bucket per layer (min size aside, all fit in one here), sent during the last pass.
    assert comm.sums == [(1, 26)] * 3


def test_buckets_go_out_as_their_layers_finish_backward():
    made = solver()
    comm = MirrorComm()
    parallel = attach(made, comm)
    parallel.flat.__init__(made.net, parallel.side, min_bucket_bytes=1)
    made.step(1)
    assert comm.sums == [(2, 8), (1, 18)]


def test_every_rank_takes_the_roots_action():
    made = solver()
    parallel = DataParallel(made, MirrorComm(root_action=SolverAction.SNAPSHOT))
    assert parallel.agree_on_action(SolverAction.NONE) is SolverAction.SNAPSHOT


def test_a_non_root_solver_has_no_test_nets_and_never_snapshots(tmp_path, monkeypatch):
    monkeypatch.setattr(runtime, "_solver_count", 2)
    monkeypatch.setattr(runtime, "_solver_rank", 1)
    param = caffe_pb2.SolverParameter(base_lr=0.1, lr_policy="fixed", display=1, max_iter=2, snapshot=1,
                                      snapshot_prefix=str(tmp_path / "s"), test_iter=[1], test_interval=1)
    param.net_param.CopyFrom(parse_text(NET, caffe_pb2.NetParameter()))
    made = create_solver(param)
    assert made.test_nets == []
    made.solve()
    assert list(tmp_path.iterdir()) == []
