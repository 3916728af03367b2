"""Caffe's Datum records: raw CHW bytes (BGR planes), float_data, or an encoded image file."""

from __future__ import annotations

import numpy as np

from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.images import decode_image


def parse_datum(value: bytes, source: str) -> caffe_pb2.Datum:
    """Parses a serialized Datum; a corrupt record is an error naming it."""
    datum = caffe_pb2.Datum()
    try:
        datum.ParseFromString(value)
    except Exception as err:
        raise CaffeError(f"{source}: not a valid Datum record: {err}") from None
    return datum


def datum_to_array(datum: caffe_pb2.Datum, source: str, color: bool | None = None) -> np.ndarray:
    """CxHxW pixels: uint8 `data`, float32 `float_data`, or an image decoded with `color` (None: native)."""
    if datum.encoded:
        return decode_image(datum.data, color, source).transpose(2, 0, 1)
    shape = (datum.channels, datum.height, datum.width)
    size = shape[0] * shape[1] * shape[2]
    if datum.data:
        if len(datum.data) != size:
            raise CaffeError(f"{source}: Datum data holds {len(datum.data)} bytes, but channels x height x "
                             f"width = {shape} needs {size}")
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape)
    if len(datum.float_data) != size:
        raise CaffeError(f"{source}: Datum float_data holds {len(datum.float_data)} values, but channels x "
                         f"height x width = {shape} needs {size}")
    return np.asarray(datum.float_data, dtype=np.float32).reshape(shape)


def array_to_datum(image: np.ndarray, label: int) -> caffe_pb2.Datum:
    """A raw Datum from a CxHxW uint8 array (as CVMatToDatum)."""
    datum = caffe_pb2.Datum()
    datum.channels, datum.height, datum.width = (int(d) for d in image.shape)
    datum.data = np.ascontiguousarray(image, dtype=np.uint8).tobytes()
    datum.label = int(label)
    datum.encoded = False
    return datum
