"""R-CNN nets: py-faster-rcnn's public ZF test net (from the folder CAFFE_PUBLIC_MODELS names; ROIPooling,
the Python proposal layer, scale_train Dropout) and a small Fast R-CNN training net (ROIPooling into
SmoothL1Loss with inside/outside weights)."""

import pathlib

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.public_models import public_model
from caffe_core.testing.wire import wire_fields

HERE = pathlib.Path(__file__).parent
ZF = "external/faster_rcnn_zf_test.prototxt"
ZF_TYPES = ("Convolution", "LRN", "Pooling", "ReLU", "Reshape", "Softmax", "Python", "ROIPooling",
            "InnerProduct", "Dropout")


@pytest.fixture
def rpn_module(monkeypatch):
    """Puts tests/rcnn_support (the stand-in `rpn` package) on sys.path, as py-faster-rcnn's lib/ would be."""
    monkeypatch.syspath_prepend(str(HERE / "rcnn_support"))


def zf_net() -> Net:
    """The ZF test net with seeded random weights and a seeded random 224 x 224 image."""
    net = Net(public_model(ZF), phase=caffe_pb2.TEST)
    values = np.random.default_rng(0).standard_normal(100_003, dtype=np.float32)
    for layer in net.layers:
        for blob in layer.blobs:
            fan_in = blob.count // blob.shape[0] if blob.num_axes > 1 else 1
            blob.mutable_cpu_data()[...] = np.resize(values, blob.shape) / np.sqrt(fan_in)
    feed(net)
    return net


def feed(net: Net) -> None:
    image = np.random.default_rng(1).normal(0, 60, (1, 3, 224, 224))
    net.blob_by_name("data").mutable_cpu_data()[...] = image
    net.blob_by_name("im_info").mutable_cpu_data()[...] = [[224, 224, 1.0]]


def outputs(net: Net) -> dict[str, np.ndarray]:
    return {name: net.blob_by_name(name).cpu_data().copy() for name in ("rois", "cls_prob", "bbox_pred")}


@pytest.mark.requires_layer_types(*ZF_TYPES)
def test_zf_test_net_forward(rpn_module):
    net = zf_net()
    fc6 = {}
    drop6, drop7 = net.layer_names.index("drop6"), net.layer_names.index("drop7")

    def capture(layer_id):
        if layer_id in (drop6 - 1, drop6, drop7 - 1, drop7):
            fc6[net.layer_names[layer_id]] = net.top_vecs[layer_id][0].cpu_data().copy()

    net.add_after_forward(capture)
    net.forward()
    out = outputs(net)
    rois = out["rois"]
    assert rois.ndim == 2 and rois.shape[1] == 5 and 0 < rois.shape[0] <= 300
    count = rois.shape[0]
    assert (rois[:, 0] == 0).all() and (rois[:, 1:] >= 0).all() and (rois[:, 1:] <= 223).all()
    assert out["cls_prob"].shape == (count, 21) and out["bbox_pred"].shape == (count, 84)
    np.testing.assert_allclose(out["cls_prob"].sum(axis=1), 1.0, rtol=1e-5)
    assert net.blob_by_name("roi_pool_conv5").shape == (count, 256, 6, 6)
    # scale_train: false, TEST phase: the dropout layers multiply by 1 - 0.5.
    assert type(net.layers[drop6]).__name__ == "ScaleTrainDropoutLayer"
    assert fc6["relu6"].any()
    np.testing.assert_array_equal(fc6["drop6"], 0.5 * fc6["relu6"])
    np.testing.assert_array_equal(fc6["drop7"], 0.5 * fc6["relu7"])


@pytest.mark.slow
@pytest.mark.requires_layer_types(*ZF_TYPES)
def test_zf_save_and_reload(rpn_module, tmp_path):
    net = zf_net()
    net.forward()
    before = outputs(net)
    path = tmp_path / "zf.caffemodel"
    net.save(path)
    stored = {}
    for layer in wire_fields(path.read_bytes())[100]:
        fields = wire_fields(layer)
        stored[fields[1][0].decode()] = fields
    assert 8266711 in stored["roi_pool_conv5"]
    assert wire_fields(stored["roi_pool_conv5"][8266711][0]) == {1: [6], 2: [6], 3: [0x3D800000]}
    for name in ("drop6", "drop7"):
        assert wire_fields(stored[name][108][0])[2] == [0]
    reloaded = Net(public_model(ZF), phase=caffe_pb2.TEST)
    reloaded.copy_trained_layers_from(path)
    feed(reloaded)
    reloaded.forward()
    for name, value in outputs(reloaded).items():
        np.testing.assert_array_equal(value, before[name], err_msg=name)


FAST_RCNN = """
name: "tiny_fast_rcnn"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 16 dim: 16 } } }
layer { name: "rois" type: "Input" top: "rois" input_param { shape { dim: 5 dim: 5 } } }
layer { name: "labels" type: "Input" top: "labels" input_param { shape { dim: 5 } } }
layer { name: "targets" type: "Input" top: "bbox_targets" top: "bbox_inside_weights"
        top: "bbox_outside_weights" input_param { shape { dim: 5 dim: 12 } } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        convolution_param { num_output: 6 kernel_size: 3 pad: 1 stride: 2
                            weight_filler { type: "gaussian" std: 0.3 }
                            bias_filler { type: "constant" value: 0.1 } } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "roi_pool" type: "ROIPooling" bottom: "conv1" bottom: "rois" top: "pool"
        roi_pooling_param { pooled_w: 3 pooled_h: 3 spatial_scale: 0.5 } }
layer { name: "fc" type: "InnerProduct" bottom: "pool" top: "fc"
        inner_product_param { num_output: 16 weight_filler { type: "gaussian" std: 0.2 } } }
layer { name: "relu_fc" type: "ReLU" bottom: "fc" top: "fc" }
layer { name: "drop" type: "Dropout" bottom: "fc" top: "fc"
        dropout_param { dropout_ratio: 0.25 scale_train: false } }
layer { name: "cls_score" type: "InnerProduct" bottom: "fc" top: "cls_score"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.2 } } }
layer { name: "bbox_pred" type: "InnerProduct" bottom: "fc" top: "bbox_pred"
        inner_product_param { num_output: 12 weight_filler { type: "gaussian" std: 0.2 } } }
layer { name: "loss_cls" type: "SoftmaxWithLoss" bottom: "cls_score" bottom: "labels" top: "loss_cls" }
layer { name: "loss_bbox" type: "SmoothL1Loss" bottom: "bbox_pred" bottom: "bbox_targets"
        bottom: "bbox_inside_weights" bottom: "bbox_outside_weights" top: "loss_bbox"
        smooth_l1_loss_param { sigma: 2 } loss_weight: 1 }
"""


def fast_rcnn_net() -> Net:
    runtime.set_random_seed(5)
    net = Net(parse_text(FAST_RCNN, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    rng = np.random.default_rng(6)
    net.blob_by_name("data").mutable_cpu_data()[...] = rng.normal(size=(2, 3, 16, 16))
    net.blob_by_name("rois").mutable_cpu_data()[...] = [[0, 0, 0, 15, 15], [1, 2, 3, 9, 12], [0, 4, 4, 7, 5],
                                                         [1, 10, 0, 15, 6], [0, 6, 6, 6, 6]]
    net.blob_by_name("labels").mutable_cpu_data()[...] = [1, 2, 0, 1, 0]
    targets = np.zeros((5, 12), dtype=np.float32)
    inside = np.zeros((5, 12), dtype=np.float32)
    for roi, label in enumerate([1, 2, 0, 1, 0]):
        if label:
            targets[roi, 4 * label: 4 * label + 4] = rng.normal(0, 0.5, 4)
            inside[roi, 4 * label: 4 * label + 4] = 1
    net.blob_by_name("bbox_targets").mutable_cpu_data()[...] = targets
    net.blob_by_name("bbox_inside_weights").mutable_cpu_data()[...] = inside
    net.blob_by_name("bbox_outside_weights").mutable_cpu_data()[...] = inside > 0
    return net


def total_loss(net: Net) -> float:
    runtime.set_random_seed(9)
    return net.forward()


@pytest.mark.requires_layer_types("Convolution", "ReLU", "ROIPooling", "InnerProduct", "Dropout",
                                  "SoftmaxWithLoss", "SmoothL1Loss")
def test_small_fast_rcnn_forward_backward():
    net = fast_rcnn_net()
    loss = total_loss(net)
    net.clear_param_diffs()
    net.backward()
    pred = net.blob_by_name("bbox_pred").cpu_data().astype(np.float64)
    inside, outside, targets = (net.blob_by_name(f"bbox_{n}").cpu_data()
                                for n in ("inside_weights", "outside_weights", "targets"))
    d = inside * (pred - targets)
    smooth = np.where(np.abs(d) < 0.25, 2 * d * d, np.abs(d) - 0.125) * outside
    assert net.blob_by_name("loss_bbox").cpu_data() == pytest.approx(smooth.sum() / 5, rel=1e-5)
    assert loss == pytest.approx(float(net.blob_by_name("loss_cls").cpu_data()) + smooth.sum() / 5, rel=1e-5)
    # The gradient reaches conv1 through ROIPooling; check its largest entries by central differences
    # (a step small enough not to move any ROI max to another cell).
    weights = net.layer_by_name("conv1").blobs[0]
    analytic = weights.cpu_diff().ravel().copy()
    assert np.abs(analytic).max() > 0
    for index in np.argsort(-np.abs(analytic))[:4]:
        original = weights.cpu_data().reshape(-1)[index]
        weights.mutable_cpu_data().reshape(-1)[index] = original + np.float32(1e-3)
        plus = total_loss(net)
        weights.mutable_cpu_data().reshape(-1)[index] = original - np.float32(1e-3)
        minus = total_loss(net)
        weights.mutable_cpu_data().reshape(-1)[index] = original
        assert (plus - minus) / 2e-3 == pytest.approx(analytic[index], rel=2e-2, abs=1e-3)


PVANET_RPN = """
name: "tiny_pvanet_rpn"
layer { name: "input" type: "Input" top: "features" top: "rpn_cls_prob_reshape" top: "rpn_bbox_pred"
        top: "im_info"
        input_param { shape { dim: 2 dim: 3 dim: 5 dim: 6 } shape { dim: 2 dim: 50 dim: 5 dim: 6 }
                      shape { dim: 2 dim: 100 dim: 5 dim: 6 } shape { dim: 1 dim: 6 } } }
layer { name: "proposal" type: "Proposal" bottom: "rpn_cls_prob_reshape" bottom: "rpn_bbox_pred"
        bottom: "im_info" top: "rois" top: "scores"
        proposal_param { feat_stride: 16 base_size: 16 min_size: 16 ratio: 0.5 ratio: 0.667 ratio: 1
                         ratio: 1.5 ratio: 2 scale: 3 scale: 6 scale: 9 scale: 16 scale: 32
                         pre_nms_topn: 200 post_nms_topn: 30 } }
layer { name: "roi_pool" type: "ROIPooling" bottom: "features" bottom: "rois" top: "pool"
        roi_pooling_param { pooled_w: 2 pooled_h: 2 spatial_scale: 0.0625 } }
"""


@pytest.mark.requires_layer_types("Input", "Proposal", "ROIPooling")
def test_pvanet_style_proposals_for_a_batch_feed_roi_pooling():
    net = Net(parse_text(PVANET_RPN, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    rng = np.random.default_rng(4)
    features = rng.random((2, 3, 5, 6)) + 0.5
    features[0] *= -1
    net.blob_by_name("features").mutable_cpu_data()[...] = features
    net.blob_by_name("rpn_cls_prob_reshape").mutable_cpu_data()[...] = rng.random((2, 50, 5, 6))
    net.blob_by_name("rpn_bbox_pred").mutable_cpu_data()[...] = rng.normal(0, 0.2, (2, 100, 5, 6))
    net.blob_by_name("im_info").mutable_cpu_data()[...] = [[80, 96, 1.0, 1.0, 1.0, 1.0]]
    net.forward()
    rois, scores = net.blob_by_name("rois").cpu_data(), net.blob_by_name("scores").cpu_data()
    count = rois.shape[0]
    assert rois.shape == (count, 5) and scores.shape == (count,)
    items = rois[:, 0]
    assert (items[:30] == 0).all() and (items[30:] == 1).all() and count == 60
    assert (rois[:, [1, 3]] <= 95).all() and (rois[:, [2, 4]] <= 79).all() and (rois[:, 1:] >= 0).all()
    pool = net.blob_by_name("pool").cpu_data()
    assert pool.shape == (count, 3, 2, 2)
    # Each roi pools its own image: image 0's features are all negative, image 1's all positive (an empty
    # bin gives 0).
    first, second = pool[items == 0], pool[items == 1]
    assert (first <= 0).all() and (first < 0).mean() > 0.5
    assert (second >= 0).all() and (second > 0).mean() > 0.5
