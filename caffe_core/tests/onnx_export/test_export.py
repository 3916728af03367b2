"""The exporter: graph inputs, outputs and in-place versions named as the blobs, weights as initializers,
clear refusals, and atomic files."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import numpy as np
import onnx

from caffe_core import onnx_export
from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    input_layer,
    net_from_text,
    newest_opset,
    randomise,
)

from .conftest import random_rng

SPLIT_NET = input_layer("data", (2, 3)) + 'layer { name: "s" type: "Split" bottom: "data" top: "a" top: "b" }'
IN_PLACE_NET = input_layer("data", (2, 3, 4)) + """
layer { name: "s1" type: "TestScaleByBlob" bottom: "data" top: "x" }
layer { name: "s2" type: "TestScaleByBlob" bottom: "x" top: "x" }
layer { name: "s3" type: "TestScaleByBlob" bottom: "x" top: "x" }
"""


def one_layer_net(type_name):
    """An Input and one layer of the type, named after its first letter."""
    name = type_name[4].lower()
    layer = f'layer {{ name: "{name}" type: "{type_name}" bottom: "data" top: "y" }}'
    return net_from_text(input_layer("data", (2, 3)) + layer)


def test_split_exports_one_identity_per_top_named_as_the_blobs():
    net = net_from_text(SPLIT_NET)
    randomise(net, random_rng())
    model = assert_onnx_matches(net)
    assert [i.name for i in model.graph.input] == ["data"]
    assert [o.name for o in model.graph.output] == ["a", "b"]
    assert [n.op_type for n in model.graph.node] == ["Identity", "Identity"]
    assert [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim] == [2, 3]


def test_in_place_writes_get_names_of_their_own_and_the_last_one_the_blobs(test_layers):
    net = net_from_text(IN_PLACE_NET)
    randomise(net, random_rng())
    model = assert_onnx_matches(net)
    outputs = [node.output[0] for node in model.graph.node]
    assert outputs == ["x/s1", "x/s2", "x"]
    assert [node.input[0] for node in model.graph.node] == ["data", "x/s1", "x/s2"]


def test_weights_become_initializers_with_the_layers_values(test_layers):
    net = net_from_text(IN_PLACE_NET)
    randomise(net, random_rng())
    model = onnx_export.to_model(net)
    values = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    assert sorted(values) == ["s1/w", "s2/w", "s3/w"]
    np.testing.assert_array_equal(values["s2/w"], net.layers[2].blobs[0].data)


def test_a_layer_without_converter_is_refused_naming_layer_and_type(test_layers):
    net = one_layer_net("TestUnconvertible")
    with pytest.raises(OnnxExportError, match="layer 'u' of type 'TestUnconvertible' has no ONNX export"):
        onnx_export.to_model(net)


def test_a_converters_refusal_names_the_layer(test_layers):
    net = one_layer_net("TestRefused")
    with pytest.raises(OnnxExportError, match=r"layer 'r' \(TestRefused\): mode 7 has no ONNX equivalent"):
        onnx_export.to_model(net)


def test_a_converter_that_leaves_a_top_unproduced_is_caught(test_layers):
    net = one_layer_net("TestSilent")
    with pytest.raises(OnnxExportError, match=r"converter of layer 's' \(TestSilent\) produced no value for "
                                              r"top\(s\) y"):
        onnx_export.to_model(net)


@pytest.mark.parametrize("opset", [12, 10_000])
def test_an_unsupported_opset_is_refused(opset):
    net = net_from_text(SPLIT_NET)
    with pytest.raises(OnnxExportError, match=f"opset {opset} is not supported: choose one from 13 to"):
        onnx_export.to_model(net, opset)


@pytest.mark.parametrize("opset", [13, onnx_export.DEFAULT_OPSET, newest_opset()])
def test_the_model_declares_the_opset_and_the_lowest_ir_version_for_it(opset):
    model = onnx_export.to_model(net_from_text(SPLIT_NET), opset)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", opset)]
    assert model.ir_version == onnx.helper.find_min_ir_version_for(list(model.opset_import))


def test_export_writes_a_file_that_loads_back(tmp_path, test_layers):
    net = net_from_text(IN_PLACE_NET)
    randomise(net, random_rng())
    path = tmp_path / "net.onnx"
    model = onnx_export.export(net, path)
    assert onnx.load(path) == model


def test_a_failed_export_leaves_the_old_file_as_it_was(tmp_path, test_layers):
    path = tmp_path / "net.onnx"
    path.write_bytes(b"the user's earlier model")
    net = one_layer_net("TestRefused")
    with pytest.raises(OnnxExportError):
        onnx_export.export(net, path)
    assert path.read_bytes() == b"the user's earlier model"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["net.onnx"]
