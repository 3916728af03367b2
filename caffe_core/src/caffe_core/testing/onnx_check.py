"""Checking an ONNX export against the net itself: onnx.checker, then onnxruntime's outputs against ours."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text

if TYPE_CHECKING:
    import onnx

RELATIVE = 1e-4
ABSOLUTE = 1e-5


def input_layer(name: str, shape: Sequence[int]) -> str:
    """The text of an Input layer whose one top `name` has `shape`."""
    dims = " ".join(f"dim: {d}" for d in shape)
    return f'layer {{ name: "{name}" type: "Input" top: "{name}" input_param {{ shape {{ {dims} }} }} }}\n'


def require_onnx() -> None:
    """Skips the calling test module unless onnx and onnxruntime (the `onnx` extra) are installed."""
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")


def layer_text(type_name: str, params: str = "", bottoms: Sequence[str] = ("data",),
               tops: Sequence[str] = ("out",), name: str = "layer") -> str:
    """The text of one layer: its name, type, bottoms, tops and parameter text."""
    wires = "".join(f' bottom: "{bottom}"' for bottom in bottoms) + "".join(f' top: "{top}"' for top in tops)
    return f'layer {{ name: "{name}" type: "{type_name}"{wires} {params} }}\n'


def one_layer_net(layer: str, inputs: Mapping[str, Sequence[int]], seed: int = 0,
                  phase: caffe_pb2.Phase = caffe_pb2.TEST) -> Net:
    """An Input per named shape, in order, then `layer` (its text), randomised with a generator of `seed`."""
    net = net_from_text("".join(input_layer(name, shape) for name, shape in inputs.items()) + layer, phase)
    randomise(net, np.random.default_rng(seed))
    return net


def op_types(model: onnx.ModelProto) -> list[str]:
    """The op type of each node of an ONNX model's graph, in order."""
    return [node.op_type for node in model.graph.node]


def net_from_text(text: str, phase: caffe_pb2.Phase = caffe_pb2.TEST) -> Net:
    """Builds a net from NetParameter text (TEST phase unless given)."""
    return Net(parse_text(text, caffe_pb2.NetParameter(), source="<test net>"), phase=phase)


def randomise(net: Net, rng: np.random.Generator, weights: bool = True, inputs: bool = True) -> None:
    """Weights scaled by fan-in and positive 1-D blobs (biases, statistics); inputs uniform in [-1, 1]."""
    if weights:
        for layer in net.layers:
            for blob in layer.blobs:
                if blob.num_axes >= 2:
                    bound = np.sqrt(3.0 / max(blob.count // blob.shape[0], 1))
                    blob.data[...] = rng.uniform(-bound, bound, blob.shape)
                else:
                    blob.data[...] = rng.uniform(0.5, 1.5, blob.shape)
    if inputs:
        for blob in net.input_blobs:
            blob.data[...] = rng.uniform(-1.0, 1.0, blob.shape)


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Runs an ONNX model on onnxruntime's CPU provider; outputs by name."""
    import onnxruntime

    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [output.name for output in session.get_outputs()]
    return dict(zip(names, session.run(names, feeds), strict=True))


@functools.cache
def newest_opset() -> int:
    """The newest opset the installed onnx writes and the installed onnxruntime loads, IR version included."""
    import onnx
    import onnxruntime
    from onnx import TensorProto, helper

    from caffe_core import onnx_export

    value = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "probe", [value],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    for opset in range(onnx.defs.onnx_opset_version(), onnx_export.MIN_OPSET, -1):
        imports = [helper.make_opsetid("", opset)]
        ir_version = helper.find_min_ir_version_for(imports)
        model = helper.make_model(graph, opset_imports=imports, ir_version=ir_version)
        try:
            onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        except Exception:  # onnxruntime raises its own Fail/InvalidGraph types for a model too new for it
            continue
        return opset
    return onnx_export.MIN_OPSET


def assert_onnx_matches(net: Net, opset: int | None = None, relative: float = RELATIVE,
                        absolute: float = ABSOLUTE) -> object:
    """Exports the net, runs it on its current input data in onnxruntime and in the net, compares each output.

    Every output must agree within `relative` times its largest magnitude plus `absolute`.
    """
    from caffe_core import onnx_export

    model = onnx_export.to_model(net, opset or onnx_export.DEFAULT_OPSET)
    feeds = {net.blob_names[i]: np.array(net.blobs[i].data, dtype=np.float32) for i in net.input_blob_indices}
    net.forward()
    expected = {net.blob_names[i]: np.array(net.blobs[i].data) for i in net.output_blob_indices}
    got = onnxruntime_outputs(model, feeds)
    assert sorted(got) == sorted(expected), f"ONNX outputs {sorted(got)} are not the net's {sorted(expected)}"
    for name, want in expected.items():
        assert got[name].shape == want.shape, f"'{name}': ONNX shape {got[name].shape}, ours {want.shape}"
        tolerance = relative * float(np.abs(want).max(initial=0.0)) + absolute
        np.testing.assert_allclose(got[name], want, rtol=0, atol=tolerance, err_msg=f"output '{name}'")
    return model
