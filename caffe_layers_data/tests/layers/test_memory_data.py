"""MemoryData layer, fed through pycaffe's Net.set_input_arrays."""

from __future__ import annotations

import numpy as np
import pytest

import caffe
from caffe_core.errors import CaffeError, LayerSetupError

NET = """name: "m"
layer { name: "mem" type: "MemoryData" top: "data" top: "label"
  memory_data_param { batch_size: 2 channels: 1 height: 2 width: 3 } }
"""


@pytest.fixture
def net(tmp_path):
    path = tmp_path / "net.prototxt"
    path.write_text(NET)
    return caffe.Net(str(path), caffe.TEST)


def test_batches_come_in_order_and_wrap_around(net):
    data = np.arange(4 * 6, dtype=np.float32).reshape(4, 1, 2, 3)
    net.set_input_arrays(data, np.array([5, 6, 7, 8], dtype=np.float32))
    labels = []
    for _ in range(3):
        net.forward()
        labels.append(net.blobs["label"].data.tolist())
    assert labels == [[5, 6], [7, 8], [5, 6]]
    assert np.array_equal(net.blobs["data"].data, data[:2])
    assert net.blobs["label"].data.shape == (2,)


def test_forward_before_set_input_arrays_is_an_error(net):
    with pytest.raises(LayerSetupError, match="call set_input_arrays"):
        net.forward()


def test_count_must_be_a_multiple_of_the_batch_size(net):
    with pytest.raises(LayerSetupError, match="multiple of batch_size 2"):
        net.set_input_arrays(np.zeros((3, 1, 2, 3), np.float32), np.zeros(3, np.float32))


def test_arrays_must_be_float32_and_agree_in_length(net):
    with pytest.raises(CaffeError, match="float32"):
        net.set_input_arrays(np.zeros((2, 1, 2, 3)), np.zeros(2, np.float32))
    with pytest.raises(CaffeError, match="same first dimension"):
        net.set_input_arrays(np.zeros((2, 1, 2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(LayerSetupError, match=r"shape \(N, 1, 2, 3\)"):
        net.set_input_arrays(np.zeros((2, 3, 2, 3), np.float32), np.zeros(2, np.float32))


def test_net_without_memory_data_refuses(tmp_path):
    path = tmp_path / "n.prototxt"
    path.write_text('layer { name: "i" type: "Input" top: "x" input_param { shape { dim: 1 } } }')
    with pytest.raises(CaffeError, match="needs a MemoryData layer"):
        caffe.Net(str(path), caffe.TEST).set_input_arrays(np.zeros((1, 1, 1, 1), np.float32),
                                                          np.zeros(1, np.float32))


@pytest.mark.parametrize("dims", ["channels: 1 height: 0 width: 3", "channels: 1 height: 2 width: 0"])
def test_every_dimension_must_be_positive(tmp_path, dims):
    # MemoryDataLayer::DataLayerSetUp: CHECK_GT(batch_size_ * size_, 0), size_ = channels * height * width.
    path = tmp_path / "net.prototxt"
    path.write_text(NET.replace("channels: 1 height: 2 width: 3", dims))
    with pytest.raises(LayerSetupError, match="must be specified and positive in memory_data_param"):
        caffe.Net(str(path), caffe.TEST)


def test_reset_with_transform_param_warns_as_caffe(tmp_path, data_log):
    path = tmp_path / "net.prototxt"
    path.write_text(NET.replace("memory_data_param", "transform_param { scale: 2 } memory_data_param"))
    net = caffe.Net(str(path), caffe.TEST)
    net.set_input_arrays(np.zeros((2, 1, 2, 3), np.float32), np.zeros(2, np.float32))
    assert "MemoryData does not transform array data on Reset()" in data_log.messages
