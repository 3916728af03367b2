"""Small segmentation nets in the style of SegNet, ENet and PSPNet (std + vision + seg packs): they build with
the blob shapes worked out by hand, run forward (and the SegNet one backward), and a saved .caffemodel
reloads into a fresh net with identical outputs and the seg pack's field numbers on the wire."""

import numpy as np
import pytest
from google.protobuf.unknown_fields import UnknownFieldSet

from caffe_core import proto_io
from caffe_core.net import Net, read_net_binary
from caffe_core.proto import caffe_pb2

CONV = ("convolution_param {{ num_output: {n} kernel_size: {k} pad: {p} stride: {s} "
        "weight_filler {{ type: 'msra' }} bias_filler {{ type: 'constant' value: 0.1 }} }}")
SEGNET_BN = ("bn_param { scale_filler { type: 'constant' value: 1 } "
             "shift_filler { type: 'constant' value: 0.01 } bn_mode: {mode} }")
PSPNET_BN = ("bn_param { slope_filler { type: 'constant' value: 1 } "
             "bias_filler { type: 'constant' value: 0 } }")


def conv(name, bottom, n, k=3, p=1, s=1):
    """A Convolution layer."""
    params = CONV.format(n=n, k=k, p=p, s=s)
    links = f"bottom: '{bottom}' top: '{name}'"
    return f"layer {{ name: '{name}' type: 'Convolution' {links} {params} }}\n"


def segnet_bn(name, bottom, mode="INFERENCE"):
    """A SegNet/ENet BN layer (in place)."""
    bn = SEGNET_BN.replace("{mode}", mode)
    return f"layer {{ name: '{name}' type: 'BN' bottom: '{bottom}' top: '{bottom}' {bn} }}\n"


def layer(name, kind, bottoms, tops, params=""):
    """Any layer."""
    links = " ".join([f"bottom: '{b}'" for b in bottoms] + [f"top: '{t}'" for t in tops])
    return f"layer {{ name: '{name}' type: '{kind}' {links} {params} }}\n"


def input_layer(shape):
    """The Input layer of blob 'data'."""
    dims = " ".join(f"dim: {d}" for d in shape)
    return f"layer {{ name: 'data' type: 'Input' top: 'data' input_param {{ shape {{ {dims} }} }} }}\n"


POOL_MASK = "pooling_param { pool: MAX kernel_size: 2 stride: 2 }"
DECONV = "convolution_param {{ num_output: {n} kernel_size: 2 stride: 2 weight_filler {{ type: 'msra' }} }}"


def segnet_text(mode="INFERENCE"):
    """Two encoder stages (conv, BN, ReLU, pooling with mask) and two decoder stages (Upsample, conv...)."""
    text = "name: 'segnet_mini'\n" + input_layer((2, 3, 10, 12))
    bottom = "data"
    for stage, width in ((1, 4), (2, 8)):
        text += conv(f"conv{stage}", bottom, width) + segnet_bn(f"conv{stage}_bn", f"conv{stage}", mode)
        text += layer(f"relu{stage}", "ReLU", [f"conv{stage}"], [f"conv{stage}"])
        text += layer(f"pool{stage}", "Pooling", [f"conv{stage}"], [f"pool{stage}", f"pool{stage}_mask"],
                      POOL_MASK)
        bottom = f"pool{stage}"
    text += layer("upsample2", "Upsample", ["pool2", "pool2_mask"], ["pool2_D"],
                  "upsample_param { scale: 2 upsample_h: 5 upsample_w: 6 }")
    text += conv("conv2_D", "pool2_D", 4) + segnet_bn("conv2_D_bn", "conv2_D", mode)
    text += layer("relu2_D", "ReLU", ["conv2_D"], ["conv2_D"])
    text += layer("upsample1", "Upsample", ["conv2_D", "pool1_mask"], ["pool1_D"],
                  "upsample_param { scale: 2 }")
    text += conv("conv1_D", "pool1_D", 5)
    return text


def enet_text():
    """ENet's initial block, a downsampling bottleneck with the pooling mask, an upsampling bottleneck."""
    text = "name: 'enet_mini'\n" + input_layer((1, 3, 16, 16))
    text += conv("conv0", "data", 13, k=3, p=1, s=2)
    text += layer("pool0", "Pooling", ["data"], ["pool0"], POOL_MASK)
    text += layer("concat0", "Concat", ["conv0", "pool0"], ["concat0"])
    text += segnet_bn("bn0", "concat0") + layer("prelu0", "PReLU", ["concat0"], ["concat0"])
    text += layer("pool1", "Pooling", ["concat0"], ["pool1", "pool1_mask"], POOL_MASK)
    text += conv("conv1_a", "concat0", 4, k=2, p=0, s=2) + segnet_bn("bn1_a", "conv1_a")
    text += layer("prelu1_a", "PReLU", ["conv1_a"], ["conv1_a"])
    text += conv("conv1_b", "conv1_a", 4) + segnet_bn("bn1_b", "conv1_b")
    text += conv("conv1_c", "conv1_b", 16, k=1, p=0) + segnet_bn("bn1_c", "conv1_c")
    text += layer("add1", "Eltwise", ["pool1", "conv1_c"], ["add1"])
    text += conv("conv2_main", "add1", 16, k=1, p=0) + segnet_bn("bn2_main", "conv2_main")
    text += layer("upsample2", "Upsample", ["conv2_main", "pool1_mask"], ["upsample2"],
                  "upsample_param { scale: 2 }")
    text += conv("conv2_a", "add1", 4, k=1, p=0) + segnet_bn("bn2_a", "conv2_a")
    text += layer("deconv2", "Deconvolution", ["conv2_a"], ["deconv2"],
                  DECONV.format(n=4))
    text += segnet_bn("bn2_b", "deconv2") + conv("conv2_c", "deconv2", 16, k=1, p=0)
    text += layer("add2", "Eltwise", ["upsample2", "conv2_c"], ["add2"])
    text += layer("relu2", "ReLU", ["add2"], ["add2"])
    text += layer("fullconv", "Deconvolution", ["add2"], ["fullconv"],
                  DECONV.format(n=3))
    return text


def pspnet_text():
    """A conv + BN trunk, the pyramid pooling module (bins 1, 2, 3, 6) with Interp, Concat and the head."""
    text = "name: 'pspnet_mini'\n" + input_layer((1, 3, 24, 24))
    text += conv("conv5", "data", 8, k=3, p=1, s=2)
    text += f"layer {{ name: 'conv5/bn' type: 'BN' bottom: 'conv5' top: 'conv5' {PSPNET_BN} }}\n"
    text += layer("conv5/relu", "ReLU", ["conv5"], ["conv5"])
    branches = ["conv5"]
    for bins in (1, 2, 3, 6):
        size = 12 // bins
        text += layer(f"pool{bins}", "Pooling", ["conv5"], [f"pool{bins}"],
                      f"pooling_param {{ pool: AVE kernel_size: {size} stride: {size} }}")
        text += conv(f"pool{bins}_conv", f"pool{bins}", 2, k=1, p=0)
        text += (f"layer {{ name: 'pool{bins}_bn' type: 'BN' bottom: 'pool{bins}_conv' "
                 f"top: 'pool{bins}_conv' {PSPNET_BN} }}\n")
        text += layer(f"pool{bins}_relu", "ReLU", [f"pool{bins}_conv"], [f"pool{bins}_conv"])
        text += layer(f"pool{bins}_interp", "Interp", [f"pool{bins}_conv"], [f"pool{bins}_interp"],
                      "interp_param { height: 12 width: 12 }")
        branches.append(f"pool{bins}_interp")
    text += layer("concat", "Concat", branches, ["concat"])
    text += conv("conv6", "concat", 4, k=1, p=0)
    text += layer("conv6_interp", "Interp", ["conv6"], ["conv6_interp"], "interp_param { zoom_factor: 2 }")
    text += layer("prob", "Softmax", ["conv6_interp"], ["prob"])
    return text


SEG_TYPES = ("Convolution", "Deconvolution", "Pooling", "ReLU", "PReLU", "Concat", "Eltwise", "Softmax",
             "BN", "Upsample", "Interp")

NETS = {
    "segnet": (segnet_text, {"conv1": (2, 4, 10, 12), "pool1": (2, 4, 5, 6), "pool1_mask": (2, 4, 5, 6),
                             "pool2": (2, 8, 3, 3), "pool2_D": (2, 8, 5, 6), "conv2_D": (2, 4, 5, 6),
                             "pool1_D": (2, 4, 10, 12), "conv1_D": (2, 5, 10, 12)}),
    "enet": (enet_text, {"conv0": (1, 13, 8, 8), "pool0": (1, 3, 8, 8), "concat0": (1, 16, 8, 8),
                         "pool1": (1, 16, 4, 4), "conv1_a": (1, 4, 4, 4), "add1": (1, 16, 4, 4),
                         "upsample2": (1, 16, 8, 8), "deconv2": (1, 4, 8, 8), "add2": (1, 16, 8, 8),
                         "fullconv": (1, 3, 16, 16)}),
    "pspnet": (pspnet_text, {"conv5": (1, 8, 12, 12), "pool1": (1, 8, 1, 1), "pool2": (1, 8, 2, 2),
                             "pool3": (1, 8, 3, 3), "pool6": (1, 8, 6, 6), "pool6_interp": (1, 2, 12, 12),
                             "concat": (1, 16, 12, 12), "conv6_interp": (1, 4, 23, 23),
                             "prob": (1, 4, 23, 23)}),
}


def build(name: str, phase: int = caffe_pb2.TEST) -> Net:
    """The named small net, built in a phase."""
    return Net(proto_io.parse_text(NETS[name][0](), caffe_pb2.NetParameter()), phase=phase)


def run(net: Net) -> dict[str, np.ndarray]:
    """Every blob after a forward pass on a fixed random input."""
    data = net.blob_by_name("data")
    data.data[...] = np.random.default_rng(7).normal(size=data.shape)
    net.forward()
    return {name: net.blob_by_name(name).data.copy() for name in net.blob_names}


@pytest.mark.requires_layer_types(*SEG_TYPES)
@pytest.mark.parametrize("name", NETS)
def test_builds_with_the_shapes_worked_out_by_hand(name):
    net = build(name)
    assert {blob: net.blob_by_name(blob).shape for blob in NETS[name][1]} == NETS[name][1]
    blobs = run(net)
    assert all(np.isfinite(values).all() for values in blobs.values())


@pytest.mark.requires_layer_types(*SEG_TYPES)
def test_segnet_unpooling_puts_each_max_back():
    blobs = run(build("segnet"))
    upsampled, pooled = blobs["pool1_D"], blobs["conv2_D"]
    kept = upsampled != 0
    assert kept.sum() <= pooled.size and np.isin(upsampled[kept], pooled).all()


@pytest.mark.requires_layer_types(*SEG_TYPES)
def test_pspnet_probabilities_sum_to_one():
    prob = run(build("pspnet"))["prob"]
    np.testing.assert_allclose(prob.sum(axis=1), 1, rtol=1e-5)


@pytest.mark.requires_layer_types(*SEG_TYPES, "SoftmaxWithLoss")
def test_segnet_trains_backward_with_batch_statistics():
    text = segnet_text("LEARN") + input_layer((2, 1, 10, 12)).replace("'data'", "'label'")
    text += layer("loss", "SoftmaxWithLoss", ["conv1_D", "label"], ["loss"])
    net = Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    net.blob_by_name("data").data[...] = np.random.default_rng(1).normal(size=(2, 3, 10, 12))
    net.blob_by_name("label").data[...] = np.random.default_rng(2).integers(0, 5, size=(2, 1, 10, 12))
    net.forward()
    net.backward()
    first = net.layer_by_name("conv1").blobs[0].diff
    assert np.isfinite(first).all() and np.abs(first).sum() > 0
    assert np.abs(net.layer_by_name("conv1_bn").blobs[0].diff).sum() > 0


def stored_numbers(stored: caffe_pb2.LayerParameter) -> set[int]:
    """The LayerParameter field numbers a stored layer carries (declared, extensions and unknown)."""
    unknown = {field.field_number for field in UnknownFieldSet(stored)}
    return {field.number for field, _ in stored.ListFields()} | unknown


@pytest.mark.requires_layer_types(*SEG_TYPES)
@pytest.mark.parametrize(("name", "numbers"), [
    ("segnet", {"conv1_bn": 1111, "upsample2": 500}),
    ("enet", {"bn0": 1111, "upsample2": 500}),
    ("pspnet", {"conv5/bn": 152, "pool1_interp": 2143, "conv6_interp": 2143}),
])
def test_saved_caffemodel_reloads_identically_with_the_pack_numbers(tmp_path, name, numbers):
    net = build(name)
    for layer_ in net.layers:
        for blob in layer_.blobs:
            blob.data[...] = np.random.default_rng(blob.count).normal(0.5, 0.2, blob.shape)
    before = run(net)
    path = tmp_path / f"{name}.caffemodel"
    net.save(path)
    stored = {stored.name: stored for stored in read_net_binary(path).layer}
    for layer_name, number in numbers.items():
        assert number in stored_numbers(stored[layer_name]), layer_name
    if name == "pspnet":
        assert 1111 not in stored_numbers(stored["conv5/bn"])
    fresh = build(name)
    fresh.copy_trained_layers_from(path)
    after = run(fresh)
    for blob, values in before.items():
        np.testing.assert_array_equal(after[blob], values, err_msg=blob)
