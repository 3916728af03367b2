"""ONNX export of Concat, Slice, Flatten, Reshape, Tile, Silence, Parameter and BatchReindex."""

import numpy as np
import pytest

from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    input_layer,
    net_from_text,
    op_types,
    randomise,
    require_onnx,
)

require_onnx()


def random_net(text, seed=0):
    net = net_from_text(text)
    randomise(net, np.random.default_rng(seed))
    return net


@pytest.mark.parametrize("shapes, params", [
    ([(2, 3, 4), (2, 5, 4)], ""),
    ([(2, 3, 4), (2, 3, 1), (2, 3, 2)], "concat_param { axis: -1 }"),
    ([(2, 3, 4), (1, 3, 4)], "concat_param { concat_dim: 0 }"),
    ([(2, 3, 4)], ""),
])
def test_concat(shapes, params):
    names = [f"in{i}" for i in range(len(shapes))]
    text = "".join(input_layer(name, shape) for name, shape in zip(names, shapes, strict=True))
    bottoms = " ".join(f'bottom: "{name}"' for name in names)
    model = assert_onnx_matches(random_net(text + f'layer {{ name: "concat" type: "Concat" {bottoms} '
                                                  f'top: "out" {params} }}'))
    assert op_types(model) == ["Concat"]


@pytest.mark.parametrize("num_tops, params", [
    (3, "slice_param { slice_point: 1 slice_point: 4 }"),
    (2, "slice_param { axis: -1 }"),
    (2, "slice_param { slice_dim: 2 slice_point: 3 }"),
    (3, "slice_param { axis: 0 slice_point: 1 slice_point: 2 }"),
    (1, ""),
])
def test_slice(num_tops, params, opset):
    tops = " ".join(f'top: "out{i}"' for i in range(num_tops))
    text = input_layer("data", (3, 6, 4)) + \
        f'layer {{ name: "slice" type: "Slice" bottom: "data" {tops} {params} }}'
    model = assert_onnx_matches(random_net(text), opset=opset)
    assert op_types(model) == ["Split"]


@pytest.mark.parametrize("type_name, params, top_shape", [
    ("Flatten", "", (2, 60)),
    ("Flatten", "flatten_param { axis: 2 end_axis: -1 }", (2, 3, 20)),
    ("Flatten", "flatten_param { axis: 1 end_axis: 2 }", (2, 12, 5)),
    ("Reshape", "reshape_param { shape { dim: 0 dim: -1 } }", (2, 60)),
    ("Reshape", "reshape_param { shape { dim: 2 dim: 2 } axis: 2 num_axes: 1 }", (2, 3, 2, 2, 5)),
    ("Reshape", "reshape_param { shape { dim: -1 } axis: 1 }", (2, 60)),
    ("Reshape", "reshape_param { shape { dim: 0 dim: 0 dim: -1 dim: 2 } }", (2, 3, 10, 2)),
])
def test_flatten_and_reshape(type_name, params, top_shape):
    text = input_layer("data", (2, 3, 4, 5)) + \
        f'layer {{ name: "layer" type: "{type_name}" bottom: "data" top: "out" {params} }}'
    net = random_net(text)
    model = assert_onnx_matches(net)
    assert net.blob_by_name("out").shape == top_shape
    assert op_types(model) == ["Reshape"]


@pytest.mark.parametrize("params", ["tile_param { tiles: 3 }", "tile_param { axis: -1 tiles: 2 }",
                                    "tile_param { axis: 0 tiles: 4 }"])
def test_tile(params):
    text = input_layer("data", (2, 3, 4)) + \
        f'layer {{ name: "tile" type: "Tile" bottom: "data" top: "out" {params} }}'
    model = assert_onnx_matches(random_net(text))
    assert op_types(model) == ["Tile"]


def test_silence_produces_nothing():
    text = input_layer("a", (2, 3)) + input_layer("b", (2, 3)) + input_layer("c", (4,)) + """
    layer { name: "tanh" type: "TanH" bottom: "a" top: "out" }
    layer { name: "sigmoid" type: "Sigmoid" bottom: "b" top: "mid" }
    layer { name: "silence" type: "Silence" bottom: "mid" bottom: "c" }
    """
    model = assert_onnx_matches(random_net(text))
    assert op_types(model) == ["Tanh", "Sigmoid"]
    assert [output.name for output in model.graph.output] == ["out"]


def test_parameter_gives_its_blob():
    text = input_layer("data", (2, 3, 4)) + """
    layer { name: "param" type: "Parameter" top: "weights"
            parameter_param { shape { dim: 2 dim: 3 dim: 4 } } }
    layer { name: "sum" type: "Eltwise" bottom: "data" bottom: "weights" top: "out" }
    layer { name: "alone" type: "Parameter" top: "alone" parameter_param { shape { dim: 5 } } }
    """
    net = random_net(text)
    assert_onnx_matches(net)
    assert np.abs(net.blob_by_name("alone").data).min() > 0


def test_batch_reindex():
    text = input_layer("data", (4, 3, 2)) + input_layer("index", (5,)) + """
    layer { name: "reindex" type: "BatchReindex" bottom: "data" bottom: "index" top: "out" }
    """
    net = random_net(text)
    net.blob_by_name("index").data[...] = [3, 0, 0, 2, 1]
    model = assert_onnx_matches(net)
    assert op_types(model) == ["Cast", "Gather"]
