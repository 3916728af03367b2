"""One flat buffer behind every param diff, cut into buckets in the order backward completes them."""

import numpy as np
import pytest

from caffe_core.device import CPU
from caffe_core.net import Net
from caffe_core.parallel.flat_gradients import FlatGradients, ready_layers
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text

pytestmark = pytest.mark.requires_layer_types("InnerProduct", "ReLU", "EuclideanLoss")

MLP = """
name: "mlp"
layer { name: "in" type: "Input" top: "x" top: "y"
        input_param { shape { dim: 4 dim: 6 } shape { dim: 4 dim: 3 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "x" top: "h"
        param { name: "shared" } inner_product_param { num_output: 6 weight_filler { type: "gaussian" } } }
layer { name: "relu" type: "ReLU" bottom: "h" top: "h" }
layer { name: "ip2" type: "InnerProduct" bottom: "h" top: "h2"
        param { name: "shared" } inner_product_param { num_output: 6 bias_term: false
        weight_filler { type: "gaussian" } } }
layer { name: "ip3" type: "InnerProduct" bottom: "h2" top: "z"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "z" bottom: "y" top: "loss" }
"""


def build() -> Net:
    return Net(parse_text(MLP, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)


def test_a_shared_param_is_ready_only_below_its_first_user():
    net = build()
    # learnable params: ip1 weight (shared with ip2), ip1 bias, ip3 weight, ip3 bias
    assert ready_layers(net) == [1, 1, 4, 4]


def test_diffs_become_views_of_one_buffer_in_backward_order():
    net = build()
    before = [p.cpu_diff().copy() for p in net.learnable_params]
    flat = FlatGradients(net, CPU, min_bucket_bytes=1)
    sizes = [p.count for p in net.learnable_params]
    assert flat.buffer.size == sum(sizes)
    for blob, old in zip(net.learnable_params, before, strict=True):
        np.testing.assert_array_equal(blob.cpu_diff(), old)
        assert np.shares_memory(blob.cpu_diff(), flat.buffer)
    rng = np.random.default_rng(5)
    net.blob_by_name("x").data[...] = rng.normal(size=(4, 6))
    net.blob_by_name("y").data[...] = rng.normal(size=(4, 3))
    net.forward()
    net.clear_param_diffs()
    net.backward()
    ip3_weight = net.learnable_params[2]
    np.testing.assert_array_equal(flat.buffer[:ip3_weight.count], ip3_weight.cpu_diff().ravel())
    assert np.abs(flat.buffer).sum() > 0


def test_buckets_tile_the_buffer_and_open_when_their_layer_is_done():
    net = build()
    flat = FlatGradients(net, CPU, min_bucket_bytes=1)
    assert [(b.start, b.stop, b.ready_layer) for b in flat.buckets] == [(0, 21, 4), (21, 63, 1)]
    assert sorted(flat.launch_at) == [1, 4]
    one = FlatGradients(build(), CPU, min_bucket_bytes=10**9)
    assert [(b.start, b.stop, b.ready_layer) for b in one.buckets] == [(0, 63, 1)]
