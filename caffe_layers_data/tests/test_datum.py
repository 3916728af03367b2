"""Datum conversion: raw CHW bytes, float_data, encoded images, and size checks."""

from __future__ import annotations

import numpy as np
import pytest

from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.datum import array_to_datum, datum_to_array, parse_datum


def test_raw_round_trip_sets_encoded_false_explicitly_as_caffe():
    image = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    datum = array_to_datum(image, 7)
    assert datum.HasField("encoded") and not datum.encoded and datum.label == 7
    assert np.array_equal(datum_to_array(parse_datum(datum.SerializeToString(), "k"), "k"), image)


def test_data_size_disagreeing_with_the_shape_is_an_error():
    datum = caffe_pb2.Datum(channels=1, height=2, width=2, data=b"abc")
    with pytest.raises(CaffeError, match=r"key 9: Datum data holds 3 bytes.*needs 4"):
        datum_to_array(datum, "key 9")


def test_corrupt_record_is_an_error_naming_it():
    with pytest.raises(CaffeError, match="key 3: not a valid Datum"):
        parse_datum(b"\xff\xff\xff", "key 3")


def test_float_data_size_disagreeing_with_the_shape_is_an_error():
    datum = caffe_pb2.Datum(channels=1, height=1, width=3, float_data=[1.0, 2.0])
    with pytest.raises(CaffeError, match=r"key 4: Datum float_data holds 2 values.*needs 3"):
        datum_to_array(datum, "key 4")
