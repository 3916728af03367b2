"""The records of a built net: a blob's shape as Caffe writes it, and a parameter's display name."""

from caffe_core.blob import Blob
from caffe_core.net_graph import ParamRecord, shape_string


def test_a_shape_is_written_with_its_count():
    assert shape_string(Blob((64, 1, 28, 28))) == "64 1 28 28 (50176)"
    assert shape_string(Blob(())) == "(1)"


def test_a_parameter_without_a_name_is_shown_by_its_index():
    blob = Blob((1,))
    assert ParamRecord(blob, 3, 1, "", -1, 0).display_name == "1"
    assert ParamRecord(blob, 3, 1, "w", -1, 0).display_name == "w"
