"""The graph under construction that converters add ONNX nodes and initializers to."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import onnx
from onnx import helper, numpy_helper

from caffe_core.errors import OnnxExportError

# Opsets from which an operator takes its axes as an input rather than an attribute.
_AXES_INPUT_SINCE = {"ReduceSum": 13}
_AXES_INPUT_SINCE_REST = 18


class OnnxGraph:
    """Nodes, initializers and the static shape of every blob value, for one export at one opset."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._shapes: dict[str, tuple[int, ...]] = {}
        self._used: set[str] = set()
        self._scope = ""

    # ----- names and shapes -----
    def claim(self, name: str) -> str:
        """Marks a value name as taken (graph inputs and blob values); taking one twice is a bug."""
        if name in self._used:
            raise OnnxExportError(f"ONNX value name '{name}' is produced twice")
        self._used.add(name)
        return name

    def is_taken(self, name: str) -> bool:
        """Whether a value (or initializer or node) already has this name."""
        return name in self._used

    def fresh(self, hint: str) -> str:
        """A new name, prefixed by the name of the layer being converted, that nothing else uses."""
        base = f"{self._scope}/{hint}" if self._scope else hint
        name, suffix = base, 1
        while name in self._used:
            suffix += 1
            name = f"{base}_{suffix}"
        self._used.add(name)
        return name

    def set_shape(self, name: str, shape: Sequence[int]) -> None:
        """Records the static shape of a value (the exporter does so for every blob value)."""
        self._shapes[name] = tuple(int(d) for d in shape)

    def shape(self, name: str) -> tuple[int, ...]:
        """The static shape of a blob value: a bottom or top of the layer being converted."""
        if name not in self._shapes:
            raise OnnxExportError(f"the shape of ONNX value '{name}' is not known (only blob values do)")
        return self._shapes[name]

    def scope(self, layer_name: str) -> None:
        """Prefixes the names `fresh` and `constant` make with the layer's name from now on."""
        self._scope = layer_name

    # ----- building -----
    def node(self, op_type: str, inputs: Sequence[str], outputs: Sequence[str] | int = 1, domain: str = "",
             **attributes: Any) -> list[str]:
        """Adds one node; `outputs` is the names to give, or how many fresh names to make. Returns them."""
        if isinstance(outputs, int):
            outputs = [self.fresh(op_type) for _ in range(outputs)]
        outputs = list(outputs)
        self.nodes.append(helper.make_node(op_type, list(inputs), outputs, name=self.fresh(f"{op_type}_node"),
                                           domain=domain or None, **attributes))
        return outputs

    def op(self, op_type: str, inputs: Sequence[str], output: str | None = None, **attributes: Any) -> str:
        """Adds a node with one output (named `output`, or fresh) and returns that name."""
        return self.node(op_type, inputs, [output] if output else 1, **attributes)[0]

    def constant(self, value: npt.ArrayLike, hint: str = "const", dtype: npt.DTypeLike | None = None) -> str:
        """Adds an initializer (float32 unless the array is integer or `dtype` says) and returns its name."""
        array = np.asarray(value, dtype=dtype)
        if dtype is None:
            array = array.astype(np.int64 if np.issubdtype(array.dtype, np.integer) else np.float32)
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.require(array, requirements="C"), name))
        return name

    def ints(self, values: Sequence[int], hint: str = "ints") -> str:
        """A 1-D int64 initializer (shapes, axes, starts, sizes)."""
        return self.constant(np.asarray(list(values), dtype=np.int64), hint, dtype=np.int64)

    def reshape(self, x: str, shape: Sequence[int], output: str | None = None) -> str:
        """Reshapes to a static shape."""
        return self.op("Reshape", [x, self.ints(shape, "shape")], output)

    def reduce(self, op_type: str, x: str, axes: Sequence[int], keepdims: bool,
               output: str | None = None) -> str:
        """A Reduce* node over `axes`, with the axes as an attribute or an input as the opset wants."""
        since = _AXES_INPUT_SINCE.get(op_type, _AXES_INPUT_SINCE_REST)
        if self.opset >= since:
            return self.op(op_type, [x, self.ints(axes, "axes")], output, keepdims=int(keepdims))
        return self.op(op_type, [x], output, axes=list(axes), keepdims=int(keepdims))

    def identity(self, x: str, output: str) -> str:
        """Copies a value under another name (ONNX values are written once, so in-place layers need it)."""
        return self.op("Identity", [x], output)
