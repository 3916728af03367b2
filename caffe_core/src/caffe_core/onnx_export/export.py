"""Writing a built net as an ONNX model: weights as initializers, inputs and outputs named as the blobs."""

from __future__ import annotations

import collections
import os

import onnx
from onnx import helper

from caffe_core.errors import OnnxExportError
from caffe_core.layer import Layer
from caffe_core.net import Net
from caffe_core.onnx_export.converters import ConverterTable
from caffe_core.onnx_export.graph import OnnxGraph
from caffe_core.proto_io import write_bytes_atomically

DEFAULT_OPSET = 17
MIN_OPSET = 13


def to_model(net: Net, opset: int = DEFAULT_OPSET, check: bool = True) -> onnx.ModelProto:
    """The net at its current input shapes and weights as an ONNX model, checked by onnx.checker."""
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise OnnxExportError(f"opset {opset} is not supported: choose one from {MIN_OPSET} to {newest} "
                              f"(the newest the installed onnx {onnx.__version__} knows)")
    graph = OnnxGraph(opset)
    writes_left = collections.Counter(blob_id for tops in net.top_id_vecs for blob_id in tops)
    current: dict[int, str] = {}
    inputs = []
    for blob_id in net.input_blob_indices:
        name = graph.claim(net.blob_names[blob_id])
        current[blob_id] = name
        writes_left[blob_id] -= 1
        inputs.append(_value_info(graph, name, net.blobs[blob_id].shape))
    table = ConverterTable()
    for layer_id, layer in enumerate(net.layers):
        if layer.layer_param.type == "Input":
            continue
        tops = []
        for blob_id in net.top_id_vecs[layer_id]:
            writes_left[blob_id] -= 1
            tops.append(_version_name(graph, net.blob_names[blob_id], layer.name, writes_left[blob_id] == 0))
            graph.set_shape(tops[-1], net.blobs[blob_id].shape)
        bottoms = [current[blob_id] for blob_id in net.bottom_id_vecs[layer_id]]
        convert = table.find(layer)
        graph.scope(layer.name)
        nodes_before, initializers_before = len(graph.nodes), len(graph.initializers)
        try:
            convert(layer, graph, bottoms, tops)
        except OnnxExportError as err:
            raise OnnxExportError(f"layer '{layer.name}' ({layer.layer_param.type}): {err}") from err
        _check_tops_produced(graph, layer, tops, nodes_before, initializers_before)
        for blob_id, name in zip(net.top_id_vecs[layer_id], tops, strict=True):
            current[blob_id] = name
        graph.scope("")
    outputs = [_value_info(graph, current[blob_id], net.blobs[blob_id].shape)
               for blob_id in net.output_blob_indices]
    body = helper.make_graph(graph.nodes, net.name or "caffe_net", inputs, outputs, graph.initializers)
    opset_imports = [helper.make_opsetid("", opset)]
    model = helper.make_model(body, opset_imports=opset_imports, producer_name="caffe-core",
                              ir_version=helper.find_min_ir_version_for(opset_imports))
    if check:
        try:
            onnx.checker.check_model(model, full_check=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as err:
            raise OnnxExportError(f"the ONNX model of net '{net.name}' fails onnx.checker: {err}") from err
    return model


def export(net: Net, path: str | os.PathLike, opset: int = DEFAULT_OPSET) -> onnx.ModelProto:
    """Writes the net as an ONNX file (atomically: a failed export leaves any old file as it was)."""
    model = to_model(net, opset)
    write_bytes_atomically(path, model.SerializeToString())
    return model


def _version_name(graph: OnnxGraph, blob_name: str, layer_name: str, last_write: bool) -> str:
    """The blob's own name for its last write; an earlier (in-place) write gets a name of its own."""
    if last_write and not graph.is_taken(blob_name):
        return graph.claim(blob_name)
    return graph.fresh(f"{blob_name}/{layer_name}")


def _value_info(graph: OnnxGraph, name: str, shape: tuple[int, ...]) -> onnx.ValueInfoProto:
    graph.set_shape(name, shape)
    return helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, list(shape))


def _check_tops_produced(graph: OnnxGraph, layer: Layer, tops: list[str], nodes_before: int,
                         initializers_before: int) -> None:
    produced = {out for node in graph.nodes[nodes_before:] for out in node.output}
    produced |= {tensor.name for tensor in graph.initializers[initializers_before:]}
    missing = [top for top in tops if top not in produced]
    if missing:
        raise OnnxExportError(f"the converter of layer '{layer.name}' ({layer.layer_param.type}) produced no "
                              f"value for top(s) {', '.join(missing)}")
