"""Classification nets of the Caffe forks (std + vision + classify packs): the public DenseNet-121 deploy net
(from the folder CAFFE_PUBLIC_MODELS names) with its ceil_mode against a round_mode twin, and small SENet,
MobileNet v2/v3 and ShuffleNet style nets that train (forward, backward checked by finite differences) and
survive a .caffemodel round trip."""

import re

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import message_fields
from caffe_core.testing.public_models import public_model
from caffe_core.testing.wire import wire_field_numbers, wire_fields

DENSENET = "external/densenet121_deploy.prototxt"
STD_AND_VISION = ("Input", "Convolution", "BatchNorm", "Scale", "ReLU", "Pooling", "Concat", "InnerProduct",
                  "Sigmoid", "Eltwise", "SoftmaxWithLoss")

HEAD = """
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 8 dim: 6 dim: 6 } } }
layer { name: "label" type: "Input" top: "label" input_param { shape { dim: 2 } } }
"""
TAIL = """
layer {{ name: "pool" type: "Pooling" bottom: "{last}" top: "pool"
        pooling_param {{ pool: AVE global_pooling: true }} }}
layer {{ name: "fc" type: "InnerProduct" bottom: "pool" top: "fc" inner_product_param {{ num_output: 3
        weight_filler {{ type: "gaussian" std: 0.3 }} bias_filler {{ type: "constant" value: 0.1 }} }} }}
layer {{ name: "loss" type: "SoftmaxWithLoss" bottom: "fc" bottom: "label" top: "loss" }}
"""
FILL = 'weight_filler { type: "gaussian" std: 0.3 } bias_filler { type: "constant" value: 0.1 }'

SE_BLOCK = """
layer {{ name: "{n}_down_pool" type: "Pooling" bottom: "{x}" top: "{n}_squeeze"
        pooling_param {{ pool: AVE global_pooling: true }} }}
layer {{ name: "{n}_down" type: "{kind}" bottom: "{n}_squeeze" top: "{n}_down"
        {param} {{ num_output: 2 {fill} }} }}
layer {{ name: "{n}_down_relu" type: "ReLU" bottom: "{n}_down" top: "{n}_down" }}
layer {{ name: "{n}_up" type: "{kind}" bottom: "{n}_down" top: "{n}_up" {param} {{ num_output: 8 {fill} }} }}
layer {{ name: "{n}_prob" type: "Sigmoid" bottom: "{n}_up" top: "{n}_up" }}
layer {{ name: "{n}" type: "Axpy" bottom: "{n}_up" bottom: "{x}" bottom: "{y}" top: "{n}" }}
"""


def se_block(name: str, x: str, y: str, one_by_one: bool) -> str:
    """SENet's block: global pooling, two 1x1 Convolutions (or InnerProducts), Sigmoid, Axpy(gate, x, y)."""
    if one_by_one:
        kind, param, fill = "Convolution", "convolution_param", f"kernel_size: 1 {FILL}"
    else:
        kind, param, fill = "InnerProduct", "inner_product_param", FILL
    return SE_BLOCK.format(n=name, x=x, y=y, kind=kind, param=param, fill=fill)


def conv(name: str, bottom: str, body: str, kind: str = "Convolution") -> str:
    """A convolution layer (or a depthwise one of the forks) with Gaussian weights."""
    return (f'layer {{ name: "{name}" type: "{kind}" bottom: "{bottom}" top: "{name}" '
            f"convolution_param {{ {body} {FILL} }} }}\n")


SENET = ("name: 'se'" + HEAD + conv("conv1", "data", "num_output: 8 kernel_size: 3 pad: 1")
         + se_block("se1", "conv1", "data", one_by_one=False)
         + conv("conv2", "se1", "num_output: 8 kernel_size: 3 pad: 1")
         + se_block("se2", "conv2", "se1", one_by_one=True)
         + 'layer { name: "se2_relu" type: "ReLU" bottom: "se2" top: "se2" }' + TAIL.format(last="se2"))

MOBILENET = ("name: 'mobilenet'" + HEAD
             # v2 inverted residual: expand, ReLU6, depthwise (yonghenglh6), ReLU6, project, residual sum
             + conv("expand", "data", "num_output: 16 kernel_size: 1")
             + 'layer { name: "expand_relu" type: "ReLU6" bottom: "expand" top: "expand" }\n'
             + conv("dw1", "expand", "num_output: 16 group: 16 kernel_size: 3 pad: 1", "DepthwiseConvolution")
             + 'layer { name: "dw1_relu" type: "ReLU6" bottom: "dw1" top: "dw1" }\n'
             + conv("project", "dw1", "num_output: 8 kernel_size: 1")
             + 'layer { name: "block1" type: "Eltwise" bottom: "data" bottom: "project" top: "block1" }\n'
             # v3 block: depthwise (farmingyard, stride 2), HardSwish, an SE gate with HardSigmoid
             + conv("dw2", "block1", "num_output: 8 kernel_size: 3 pad: 1 stride: 2", "ConvolutionDepthwise")
             + 'layer { name: "dw2_hs" type: "HardSwish" bottom: "dw2" top: "dw2" }\n'
             + 'layer { name: "gate_pool" type: "Pooling" bottom: "dw2" top: "gate_pool" '
               "pooling_param { pool: AVE global_pooling: true } }\n"
             + conv("gate_down", "gate_pool", "num_output: 4 kernel_size: 1")
             + 'layer { name: "gate_relu" type: "ReLU6" bottom: "gate_down" top: "gate_down" '
               "relu6_param { threshold: 6 } }\n"
             + conv("gate_up", "gate_down", "num_output: 8 kernel_size: 1")
             + 'layer { name: "gate" type: "HardSigmoid" bottom: "gate_up" top: "gate_up" '
               "hardsigmoid_param { alpha: 0.1666667 beta: 0.5 } }\n"
             + 'layer { name: "zero" type: "Input" top: "zero" input_param { shape { dim: 2 dim: 8 dim: 3 '
               "dim: 3 } } }\n"
             + 'layer { name: "block2" type: "Axpy" bottom: "gate_up" bottom: "dw2" bottom: "zero" '
               'top: "block2" }\n'
             + 'layer { name: "block2_hs" type: "HardSwish" bottom: "block2" top: "block2" }\n'
             + TAIL.format(last="block2"))

SHUFFLENET = ("name: 'shufflenet'" + HEAD
              + conv("gconv1", "data", "num_output: 8 kernel_size: 1 group: 2")
              + 'layer { name: "gconv1_relu" type: "ReLU" bottom: "gconv1" top: "gconv1" }\n'
              + 'layer { name: "shuffle" type: "ShuffleChannel" bottom: "gconv1" top: "shuffle" '
                "shuffle_channel_param { group: 2 } }\n"
              + conv("dw", "shuffle", "num_output: 8 kernel_size: 3 pad: 1 bias_term: false",
                     "ConvolutionDepthwise")
              + conv("gconv2", "dw", "num_output: 8 kernel_size: 1 group: 2")
              + 'layer { name: "unit" type: "Eltwise" bottom: "data" bottom: "gconv2" top: "unit" }\n'
              + 'layer { name: "unit_relu" type: "ReLU" bottom: "unit" top: "unit" }\n'
              + TAIL.format(last="unit"))

SMALL_NETS = {
    "senet": (SENET, {"se1": (2, 8, 6, 6), "se2": (2, 8, 6, 6), "se1_up": (2, 8), "se2_up": (2, 8, 1, 1)},
              {}),
    "mobilenet": (MOBILENET, {"dw1": (2, 16, 6, 6), "block1": (2, 8, 6, 6), "dw2": (2, 8, 3, 3),
                              "block2": (2, 8, 3, 3)},
                  {"dw1": [(16, 1, 3, 3), (16,)], "dw2": [(8, 1, 3, 3), (8,)]}),
    "shufflenet": (SHUFFLENET, {"shuffle": (2, 8, 6, 6), "dw": (2, 8, 6, 6), "unit": (2, 8, 6, 6)},
                   {"dw": [(8, 1, 3, 3)]}),
}
# The pack's blocks each small net writes into its .caffemodel: layer name -> LayerParameter field number.
BLOCK_NUMBERS = {"mobilenet": {"gate_relu": 503, "gate": 501}, "shufflenet": {"shuffle": 164}}
CLASSIFY_TYPES = ("Axpy", "ReLU6", "HardSwish", "HardSigmoid", "DepthwiseConvolution", "ConvolutionDepthwise",
                  "ShuffleChannel")
needs_all = pytest.mark.requires_layer_types(*STD_AND_VISION, *CLASSIFY_TYPES)


def blob_shapes(net: Net) -> dict[str, tuple[int, ...]]:
    """Every blob's shape, by name."""
    return {name: net.blob_by_name(name).shape for name in net.blob_names}


def param_shapes(net: Net) -> dict[str, list[tuple[int, ...]]]:
    """Every layer's learnable-blob shapes, by layer name."""
    return {name: [blob.shape for blob in layer.blobs] for name, layer in zip(net.layer_names, net.layers,
                                                                               strict=True)}


@pytest.fixture
def ceil_mode() -> None:
    """Skips unless an installed pack reads the forks' pooling_param.ceil_mode (the classify pack does)."""
    if ("PoolingParameter", "ceil_mode") not in message_fields():
        pytest.skip("no installed pack declares PoolingParameter.ceil_mode")


def fill_for_inference(net: Net) -> None:
    """Gaussian weights scaled by 1/sqrt(fan-in), BatchNorm statistics of a unit Gaussian, Scale 1 and 0."""
    rng = np.random.default_rng(0)
    for layer in net.layers:
        if layer.type == "BatchNorm":
            for blob, value in zip(layer.blobs, (0.0, 1.0, 1.0), strict=True):
                blob.mutable_cpu_data()[...] = value
            continue
        for index, blob in enumerate(layer.blobs):
            if layer.type == "Scale":
                blob.mutable_cpu_data()[...] = 1.0 - index
            else:
                fan_in = blob.count // blob.shape[0] if blob.num_axes > 1 else 1
                blob.mutable_cpu_data()[...] = rng.standard_normal(blob.shape) / np.sqrt(fan_in)


@pytest.mark.requires_layer_types(*STD_AND_VISION)
def test_densenet121_ceil_mode_matches_its_round_mode_twin(ceil_mode):
    text = public_model(DENSENET).read_text()
    assert "ceil_mode: false" in text
    twin_text = re.sub(r"ceil_mode:\s*(true|false)",
                       lambda m: "round_mode: " + ("CEIL" if m[1] == "true" else "FLOOR"), text)
    assert "ceil_mode" not in twin_text
    net = Net(public_model(DENSENET), phase=caffe_pb2.TEST)
    twin = Net(parse_text(twin_text, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    assert len(net.layers) == len(twin.layers) > 300
    assert blob_shapes(net) == blob_shapes(twin)
    assert param_shapes(net) == param_shapes(twin)
    # conv1: (224 + 2*3 - 7) / 2 + 1 = 112; pool1 (3x3/2, pad 1): floor((112 + 2 - 3) / 2) + 1 = 56
    # (ceil would give 57).
    assert net.blob_by_name("conv1").shape == (1, 64, 112, 112)
    assert net.blob_by_name("pool1").shape == (1, 64, 56, 56)
    assert net.layer_by_name("pool1").layer_param.pooling_param.round_mode == caffe_pb2.PoolingParameter.FLOOR
    assert net.blob_by_name("fc6").shape == (1, 1000, 1, 1)


@pytest.mark.requires_layer_types(*STD_AND_VISION)
def test_densenet121_forward_at_batch_one(ceil_mode):
    net = Net(public_model(DENSENET), phase=caffe_pb2.TEST)
    fill_for_inference(net)
    net.blob_by_name("data").mutable_cpu_data()[...] = np.random.default_rng(1).normal(0, 1, (1, 3, 224, 224))
    net.forward()
    out = net.blob_by_name("fc6").cpu_data()
    assert out.shape == (1, 1000, 1, 1)
    assert np.isfinite(out).all() and out.std() > 0


def build(text: str) -> Net:
    """A small net in TRAIN phase with seeded data and labels 0 and 2."""
    net = Net(parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    rng = np.random.default_rng(2)
    net.blob_by_name("data").mutable_cpu_data()[...] = rng.normal(0, 1, (2, 8, 6, 6))
    net.blob_by_name("label").mutable_cpu_data()[...] = [0, 2]
    return net


@needs_all
@pytest.mark.parametrize("name", SMALL_NETS)
def test_small_net_shapes_forward_and_backward(name):
    text, shapes, params = SMALL_NETS[name]
    net = build(text)
    for blob, shape in shapes.items():
        assert net.blob_by_name(blob).shape == shape, blob
    for layer, expected in params.items():
        assert [blob.shape for blob in net.layer_by_name(layer).blobs] == expected, layer
    loss = net.forward()
    assert np.isfinite(loss) and loss > 0
    net.clear_param_diffs()
    net.backward()
    diffs = [blob.cpu_diff() for blob in net.learnable_params]
    assert all(np.isfinite(d).all() for d in diffs)
    assert all(np.abs(d).sum() > 0 for d in diffs)


@needs_all
@pytest.mark.parametrize(("name", "layer"), [
    ("senet", "se1_up"), ("senet", "se2_down"), ("senet", "conv1"), ("mobilenet", "dw1"),
    ("mobilenet", "dw2"), ("mobilenet", "gate_up"), ("mobilenet", "expand"), ("shufflenet", "dw"),
    ("shufflenet", "gconv1")])
def test_small_net_gradient_by_finite_differences(name, layer):
    """Through Axpy, the depthwise convolutions, ShuffleChannel and the activations: d loss / d weight."""
    net = build(SMALL_NETS[name][0])
    net.forward()
    net.clear_param_diffs()
    net.backward()
    weight = net.layer_by_name(layer).blobs[0]
    analytic = weight.cpu_diff().copy().reshape(-1)
    step = 3e-3
    # The largest gradients, well above the float32 noise of these finite differences (about 2e-5).
    for index in np.argsort(np.abs(analytic))[-3:]:
        assert abs(analytic[index]) > 2e-4
        original = weight.cpu_data().reshape(-1)[index]
        # Written through mutable_cpu_data each time, as pycaffe's .data does, so GPU mode sees it.
        weight.mutable_cpu_data().reshape(-1)[index] = original + step
        plus = net.forward()
        weight.mutable_cpu_data().reshape(-1)[index] = original - step
        minus = net.forward()
        weight.mutable_cpu_data().reshape(-1)[index] = original
        estimate = (plus - minus) / (2 * step)
        assert abs(analytic[index] - estimate) <= 3e-2 * abs(estimate) + 3e-5, (index, estimate)


@needs_all
@pytest.mark.parametrize("name", SMALL_NETS)
def test_small_net_caffemodel_round_trip(tmp_path, name):
    net = build(SMALL_NETS[name][0])
    for blob in net.learnable_params:
        blob.mutable_cpu_data()[...] += 0.01
    loss = net.forward()
    path = tmp_path / f"{name}.caffemodel"
    net.save(path)
    reloaded = build(SMALL_NETS[name][0])
    reloaded.copy_trained_layers_from(path)
    assert reloaded.forward() == loss
    for blob_name in net.blob_names:
        np.testing.assert_array_equal(reloaded.blob_by_name(blob_name).cpu_data(),
                                      net.blob_by_name(blob_name).cpu_data(), err_msg=blob_name)
    layers = {}
    for payload in wire_fields(path.read_bytes())[100]:  # NetParameter.layer
        layers[caffe_pb2.LayerParameter.FromString(payload).name] = wire_field_numbers(payload)
    for layer, block_number in BLOCK_NUMBERS.get(name, {}).items():
        assert block_number in layers[layer], layer
    stored = read_net_binary(path)
    assert [layer.name for layer in stored.layer] == list(net.layer_names)
