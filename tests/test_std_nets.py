"""Whole nets of std-pack layers: MLP gradient by finite differences, siamese sharing, net-level refusals."""

import numpy as np
import pytest

from caffe_core.errors import CaffeError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text

MLP = """
name: "mlp"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 4 dim: 6 } } }
layer { name: "label" type: "Input" top: "label" input_param { shape { dim: 4 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: 5 weight_filler { type: "gaussian" std: 0.5 }
                              bias_filler { type: "constant" value: 0.1 } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.5 }
                              bias_filler { type: "constant" value: -0.1 } } }
layer { name: "loss" type: "SoftmaxWithLoss" bottom: "ip2" bottom: "label" top: "loss" }
"""

TOWER = """
layer {{ name: "ip1{s}" type: "InnerProduct" bottom: "data{s}" top: "ip1{s}"
        param {{ name: "{w1}" lr_mult: 1 }} param {{ name: "{b1}" lr_mult: 2 }}
        inner_product_param {{ num_output: 6 weight_filler {{ type: "gaussian" std: 0.5 }}
                               bias_filler {{ type: "constant" value: 0.05 }} }} }}
layer {{ name: "relu1{s}" type: "ReLU" bottom: "ip1{s}" top: "ip1{s}" }}
layer {{ name: "feat{s}" type: "InnerProduct" bottom: "ip1{s}" top: "feat{s}"
        param {{ name: "{w2}" lr_mult: 1 }} param {{ name: "{b2}" lr_mult: 2 }}
        inner_product_param {{ num_output: 2 weight_filler {{ type: "gaussian" std: 0.5 }}
                               bias_filler {{ type: "constant" value: 0 }} }} }}
"""

SIAMESE_HEAD = """
name: "siamese"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 6 dim: 8 } } }
layer { name: "data_p" type: "Input" top: "data_p" input_param { shape { dim: 6 dim: 8 } } }
layer { name: "sim" type: "Input" top: "sim" input_param { shape { dim: 6 } } }
"""

SIAMESE_LOSS = """
layer { name: "loss" type: "ContrastiveLoss" bottom: "feat" bottom: "feat_p" bottom: "sim" top: "loss"
        contrastive_loss_param { margin: 1 } }
"""


def build(text: str) -> Net:
    return Net(parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)


def siamese(shared: bool) -> Net:
    names = ["ip1_w", "ip1_b", "feat_w", "feat_b"]
    towers = "".join(
        TOWER.format(s=s, **dict(zip(["w1", "b1", "w2", "b2"],
                                     [n if shared else n + s for n in names], strict=True)))
        for s in ("", "_p"))
    return build(SIAMESE_HEAD + towers + SIAMESE_LOSS)


def test_mlp_loss_gradient_matches_finite_differences():
    net = build(MLP)
    rng = np.random.default_rng(1701)
    net.blob_by_name("data").data[...] = rng.standard_normal((4, 6))
    net.blob_by_name("label").data[...] = [0, 2, 1, 2]
    loss = net.forward()
    assert np.isclose(loss, float(net.blob_by_name("loss").data))
    assert 0 < loss < 10
    net.clear_param_diffs()
    net.backward()
    step = 1e-3
    for layer_name, blob_id, flat_index in [("ip1", 0, 1), ("ip1", 0, 22), ("ip1", 1, 3),
                                            ("ip2", 0, 4), ("ip2", 0, 13), ("ip2", 1, 2)]:
        blob = net.layer_by_name(layer_name).blobs[blob_id]
        analytic = float(blob.diff.reshape(-1)[flat_index])
        original = float(blob.data.reshape(-1)[flat_index])
        # pycaffe's .data marks the host copy current on each access, so GPU mode sees each change.
        blob.data.reshape(-1)[flat_index] = original + step
        plus = net.forward()
        blob.data.reshape(-1)[flat_index] = original - step
        minus = net.forward()
        blob.data.reshape(-1)[flat_index] = original
        numeric = (plus - minus) / (2 * step)
        assert abs(analytic - numeric) <= 2e-3 * max(abs(numeric), 1e-1), (layer_name, blob_id, flat_index)


def test_siamese_towers_share_weights_and_accumulate_both_diffs():
    rng = np.random.default_rng(7)
    inputs = {"data": rng.standard_normal((6, 8)), "data_p": rng.standard_normal((6, 8)),
              "sim": np.array([1, 0, 1, 0, 0, 1])}
    shared, separate = siamese(shared=True), siamese(shared=False)
    for layer in ("ip1", "feat"):
        for i in (0, 1):
            one, other = shared.layer_by_name(layer).blobs[i], shared.layer_by_name(layer + "_p").blobs[i]
            assert one.data_memory is other.data_memory
            assert one.diff_memory is other.diff_memory
            for tower in ("", "_p"):
                separate.layer_by_name(layer + tower).blobs[i].data[...] = one.data
    assert len(shared.learnable_params) == 4
    for net in (shared, separate):
        for name, value in inputs.items():
            net.blob_by_name(name).data[...] = value
        net.clear_param_diffs()
    loss = shared.forward()
    assert loss == pytest.approx(separate.forward(), rel=1e-6)
    np.testing.assert_array_equal(shared.blob_by_name("feat").data.shape, (6, 2))
    shared.backward()
    separate.backward()
    for layer in ("ip1", "feat"):
        for i in (0, 1):
            tower_a = separate.layer_by_name(layer).blobs[i].diff
            tower_b = separate.layer_by_name(layer + "_p").blobs[i].diff
            assert np.abs(tower_a).sum() > 0 and np.abs(tower_b).sum() > 0
            np.testing.assert_allclose(shared.layer_by_name(layer).blobs[i].diff, tower_a + tower_b,
                                       rtol=1e-5, atol=1e-7)


def test_softmax_with_loss_prob_top_in_a_net():
    net = build(MLP.replace('top: "loss" }', 'top: "loss" top: "prob" }'))
    net.blob_by_name("data").data[...] = np.random.default_rng(3).standard_normal((4, 6))
    loss = net.forward()
    assert loss == pytest.approx(float(net.blob_by_name("loss").data))
    np.testing.assert_allclose(net.blob_by_name("prob").data.sum(axis=1), np.ones(4), rtol=1e-6)
    net.backward()
    assert np.abs(net.layer_by_name("ip1").blobs[0].diff).sum() > 0


def test_force_backward_into_a_filter_selector_is_refused():
    net = build("""
        force_backward: true
        layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 3 dim: 2 } } }
        layer { name: "sel" type: "Input" top: "sel" input_param { shape { dim: 3 } } }
        layer { name: "filter" type: "Filter" bottom: "x" bottom: "sel" top: "y" }
        layer { name: "loss" type: "Reduction" bottom: "y" top: "loss" loss_weight: 1 }
    """)
    net.blob_by_name("sel").data[...] = [1, 0, 1]
    net.forward()
    with pytest.raises(CaffeError, match="selector"):
        net.backward()


def test_a_prob_top_feeding_a_loss_gets_no_gradient_and_a_warning(caplog):
    text = MLP.replace('top: "loss" }', 'top: "loss" top: "prob" loss_weight: 1 loss_weight: 0 }') + """
    layer { name: "target" type: "Input" top: "target" input_param { shape { dim: 4 dim: 3 } } }
    layer { name: "l2" type: "EuclideanLoss" bottom: "prob" bottom: "target" top: "l2" }
    """
    net = Net(parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    assert any("its top 'prob' feeds 'l2'" in m and "ignores that top's diff" in m for m in caplog.messages)
    alone = Net(parse_text(MLP, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    data = np.random.default_rng(5).standard_normal((4, 6))
    for built in (net, alone):
        built.blob_by_name("data").data[...] = data
        built.blob_by_name("label").data[...] = [0, 2, 1, 2]
    net.share_trained_layers_with(alone)
    net.blob_by_name("target").data[...] = 1
    net.forward_backward()
    alone.forward_backward()
    np.testing.assert_array_equal(net.blob_by_name("ip2").diff, alone.blob_by_name("ip2").diff)
