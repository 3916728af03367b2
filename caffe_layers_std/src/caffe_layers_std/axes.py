"""Axis arithmetic the layers share: canonical parameter axes (errors name the field) and axis splits (of
predictions too, one label each)."""

from __future__ import annotations

from caffe_core.blob import Blob
from caffe_core.layer import Layer


def canonical_axis(layer: Layer, blob: Blob, axis: int, field: str) -> int:
    """`axis` mapped into [0, num_axes); out of range raises the layer's error naming `field`."""
    try:
        return blob.canonical_axis_index(axis)
    except ValueError as err:
        raise layer.error(f"{field}: {err}") from None


def axis_or_legacy_dim(layer: Layer, blob: Blob, block: str, legacy: str) -> int:
    """`<block>.axis`, or the deprecated `<block>.<legacy>` (never negative); both at once is refused."""
    param = getattr(layer.layer_param, block)
    if not param.HasField(legacy):
        return canonical_axis(layer, blob, param.axis, f"{block}.axis")
    if param.HasField("axis"):
        raise layer.error(f"give either {block}.axis or {block}.{legacy}, not both")
    dim = getattr(param, legacy)
    if dim >= blob.num_axes:
        raise layer.error(f"{block}.{legacy} {dim} is out of range for a bottom of shape {blob.shape}")
    return dim


def split_at(blob: Blob, axis: int) -> tuple[int, int, int]:
    """(count of the axes before `axis`, size of `axis`, count of the axes after it)."""
    return blob.count_between(0, axis), blob.shape[axis], blob.count_between(axis + 1)


def split_predictions(layer: Layer, data: Blob, labels: Blob, axis: int, field: str) -> tuple[int, int, int]:
    """(outer, classes, inner) of the data split at `axis` (named `field`); one label per prediction."""
    axis = canonical_axis(layer, data, axis, field)
    outer, classes, inner = split_at(data, axis)
    if outer * inner != labels.count:
        raise layer.error(f"number of labels ({labels.count}, shape {labels.shape}) must match the number "
                          f"of predictions ({outer * inner}): with {field} {axis} and data shape "
                          f"{data.shape} it must be the product of the other axes")
    return outer, classes, inner
