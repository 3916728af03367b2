"""Building single layers and blobs for layer tests, as Caffe's layer test fixtures do."""

from __future__ import annotations

import numpy as np

from caffe_core import registry
from caffe_core.array_types import Array
from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.runtime import current_side


def build_layer(text: str, phase: caffe_pb2.Phase = caffe_pb2.TRAIN) -> Layer:
    """Parses a LayerParameter in text format (phase TRAIN unless given) and creates its layer."""
    param = parse_text(text, caffe_pb2.LayerParameter(), source="<test layer>")
    if not param.HasField("phase"):
        param.phase = phase
    return registry.create_layer(param)


def blob_from(array: np.ndarray | list) -> Blob:
    """A blob holding a copy of an array (as float32), with a zero diff."""
    array = np.asarray(array, dtype=np.float32)
    blob = Blob(array.shape)
    blob.mutable_cpu_data()[...] = array
    return blob


__all__ = ["blob_from", "build_layer", "current_side", "require_layer_types", "to_host"]


def to_host(array: Array) -> np.ndarray:
    """A layer's internal array as numpy, whichever side holds it (a device array is copied down)."""
    return array if isinstance(array, np.ndarray) else array.get()



def require_layer_types(*types: str) -> None:
    """Skips the calling test, naming them, when no installed distribution provides some of the types; an
    installed provider that fails to import fails the test instead of skipping it."""
    import pytest

    missing = [name for name in types if name not in registry.layer_types()]
    if missing:
        pytest.skip(f"needs layer type(s) {', '.join(missing)}: no installed pack provides them")
    for name in types:
        registry.provider_classes(name)
