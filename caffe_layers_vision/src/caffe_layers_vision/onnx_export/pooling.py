"""ONNX converter of Pooling: MaxPool and AveragePool on Caffe's windows, the mask top, TEST stochastic.

Caffe's output size (ceil rounding, the dropped last window) is given through explicit asymmetric pads,
never ceil_mode. onnxruntime refuses pads as large as the kernel, so where the end pad must be that large
the input is padded by a Pad node instead and pooled without pads.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.onnx_export import OnnxGraph
from caffe_core.proto import caffe_pb2
from caffe_layers_vision.pooling import LOWEST, PoolingLayer

PoolingParameter = caffe_pb2.PoolingParameter


def _end_pads(layer: PoolingLayer) -> tuple[int, ...]:
    """Per axis the end pad that makes floor rounding give Caffe's number of windows."""
    return tuple(max((out - 1) * stride + kernel - size - pad, 0) for out, stride, kernel, size, pad in zip(
        layer.out_size, layer.stride, layer.kernel, layer.in_size, layer.pad, strict=True))


def _fits(layer: PoolingLayer, end: Sequence[int]) -> bool:
    """Whether onnxruntime takes these pads as attributes: each smaller than the kernel."""
    return all(e < k for e, k in zip(end, layer.kernel, strict=True))


def _window_node(layer: PoolingLayer, graph: OnnxGraph, op_type: str, x: str, pads: Sequence[int],
                 outputs: Sequence[str] | int = 1, **attributes: int) -> list[str]:
    """A pooling node of `op_type` with the layer's kernel and stride and these pads."""
    # The default domain given by name, so that the checker does not match `attributes` to it.
    return graph.node(op_type, [x], outputs, domain="", kernel_shape=list(layer.kernel),
                      strides=list(layer.stride), pads=list(pads), **attributes)


def _padded(layer: PoolingLayer, graph: OnnxGraph, x: str, end: Sequence[int], fill: float) -> str:
    """The input padded by Caffe's pad before and `end` after each spatial axis, with `fill`."""
    pads = graph.ints([0, 0, *layer.pad, 0, 0, *end], "pads")
    return graph.op("Pad", [x, pads, graph.constant(np.float32(fill), "fill")])


def _zero_padded_average(layer: PoolingLayer, graph: OnnxGraph, x: str, end: Sequence[int],
                         output: str | None = None) -> str:
    """The sum over each window of the zero-padded input, divided by the kernel's area."""
    if _fits(layer, end):
        return _window_node(layer, graph, "AveragePool", x, [*layer.pad, *end], [output] if output else 1,
                            count_include_pad=1)[0]
    padded = _padded(layer, graph, x, end, 0.0)
    return _window_node(layer, graph, "AveragePool", padded, [0, 0, 0, 0], [output] if output else 1)[0]


def _caffe_divisors(layer: PoolingLayer) -> np.ndarray:
    """Caffe's AVE divisor of each window: the window clipped to [-pad, size + pad) on each axis."""
    sizes = []
    for out, stride, kernel, size, pad in zip(layer.out_size, layer.stride, layer.kernel, layer.in_size,
                                              layer.pad, strict=True):
        starts = np.arange(out) * stride - pad
        sizes.append(np.minimum(starts + kernel, size + pad) - starts)
    return np.outer(*sizes).astype(np.float32)


def _max(layer: PoolingLayer, graph: OnnxGraph, x: str, output: str, mask: str | None) -> None:
    """MaxPool, and Caffe's argmax as the mask top when asked for."""
    end = _end_pads(layer)
    if _fits(layer, end):
        _window_node(layer, graph, "MaxPool", x, [*layer.pad, *end], [output])
    else:
        # Caffe's windows start from -FLT_MAX, so padding with it keeps windows past the input at -FLT_MAX.
        _window_node(layer, graph, "MaxPool", _padded(layer, graph, x, end, LOWEST), [0, 0, 0, 0], [output])
    if mask is not None:
        _first_argmax(layer, graph, x, output, mask)


def _first_argmax(layer: PoolingLayer, graph: OnnxGraph, x: str, maximum: str, mask: str) -> None:
    """Caffe's argmax: h * W + w of the window's first element, in row-major order, above -FLT_MAX that
    equals the window's maximum; -1 when there is none.

    ONNX leaves the order in which MaxPool's Indices output breaks ties to the runtime, so the first match
    is found offset by offset.
    """
    end = _end_pads(layer)
    height, width = layer.in_size
    top, left = layer.pad
    (out_h, out_w), (stride_h, stride_w) = layer.out_size, layer.stride
    padded = _padded(layer, graph, x, end, LOWEST)
    table = np.full((height + top + end[0], width + left + end[1]), -1.0, dtype=np.float32)
    table[top:top + height, left:left + width] = np.arange(height * width).reshape(height, width)
    steps = graph.ints([stride_h, stride_w], "steps")
    axes = graph.ints([2, 3], "axes")
    chosen = graph.constant(np.float32(-1.0), "none")
    for i, j in reversed(list(itertools.product(range(layer.kernel[0]), range(layer.kernel[1])))):
        bounds = [graph.ints([i, j], "starts"),
                  graph.ints([i + stride_h * (out_h - 1) + 1, j + stride_w * (out_w - 1) + 1], "ends")]
        window = graph.op("Slice", [padded, *bounds, axes, steps])
        here = table[i:i + stride_h * (out_h - 1) + 1:stride_h, j:j + stride_w * (out_w - 1) + 1:stride_w]
        matches = graph.op("Equal", [window, maximum])
        chosen = graph.op("Where", [matches, graph.constant(here, "index"), chosen])
    empty = graph.op("Equal", [maximum, graph.constant(np.float32(LOWEST), "lowest")])
    graph.op("Where", [empty, graph.constant(np.float32(-1.0), "none"), chosen], mask)


def _average(layer: PoolingLayer, graph: OnnxGraph, x: str, output: str) -> None:
    """AveragePool whose divisor is Caffe's: ONNX's own where one of its counting rules agrees."""
    end = _end_pads(layer)
    divisors = _caffe_divisors(layer)
    area = math.prod(layer.kernel)
    if np.all(divisors == area):
        _zero_padded_average(layer, graph, x, end, output)
    elif not any(layer.pad) and _fits(layer, end):
        # Unpadded, Caffe's divisor counts the window's elements inside the input, as ONNX's excluded pads do.
        _window_node(layer, graph, "AveragePool", x, [0, 0, *end], [output], count_include_pad=0)
    else:
        average = _zero_padded_average(layer, graph, x, end)
        # A window starting at the input's end has divisor 0: Caffe's 0 / 0 is NaN, and so is 0 * inf here.
        with np.errstate(divide="ignore"):
            ratio = area / divisors
        graph.op("Mul", [average, graph.constant(ratio[None, None], "divisor_ratio")], output)


def _stochastic(layer: PoolingLayer, graph: OnnxGraph, x: str, output: str) -> None:
    """TEST-phase stochastic pooling: each window's sum of squares over its sum (plus FLT_MIN)."""
    if layer.phase != caffe_pb2.TEST:
        raise OnnxExportError("STOCHASTIC pooling samples each window at random in the TRAIN phase; only its "
                              "TEST-phase form (sum x^2 / sum x per window) has an ONNX equivalent")
    end = _end_pads(layer)
    area = graph.constant(np.float32(math.prod(layer.kernel)), "kernel_area")
    total = graph.op("Mul", [_zero_padded_average(layer, graph, x, end), area])
    squares = graph.op("Mul", [_zero_padded_average(layer, graph, graph.op("Mul", [x, x]), end), area])
    denominator = graph.op("Add", [total, graph.constant(np.finfo(np.float32).tiny, "tiny")])
    graph.op("Div", [squares, denominator], output)


def pool(layer: PoolingLayer, graph: OnnxGraph, x: str, output: str, mask: str | None = None) -> None:
    """Writes the layer's pooling of `x` to `output`, and Caffe's MAX argmax top to `mask` if given."""
    method = layer.method
    if layer.global_pooling and mask is None and method in (PoolingParameter.MAX, PoolingParameter.AVE):
        graph.op("GlobalMaxPool" if method == PoolingParameter.MAX else "GlobalAveragePool", [x], output)
    elif method == PoolingParameter.MAX:
        _max(layer, graph, x, output, mask)
    elif method == PoolingParameter.AVE:
        _average(layer, graph, x, output)
    elif method == PoolingParameter.STOCHASTIC:
        _stochastic(layer, graph, x, output)
    else:
        raise OnnxExportError(f"unknown pooling method {method}")


def convert_pooling(layer: PoolingLayer, graph: OnnxGraph, bottoms: Sequence[str],
                    tops: Sequence[str]) -> None:
    """MAX, AVE or TEST-phase STOCHASTIC pooling with Caffe's window sizes and divisors; MAX's mask top."""
    pool(layer, graph, bottoms[0], tops[0], tops[1] if len(tops) > 1 else None)


CONVERTERS = {"Pooling": convert_pooling}
