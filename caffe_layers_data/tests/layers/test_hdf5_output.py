"""HDF5Output layer: Caffe's golden file (legacy 4-D shapes) and the one-forward limit."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from caffe_core.errors import LayerSetupError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2


def test_writes_the_file_caffe_wrote(golden_copy):
    folder, _ = golden_copy("hdf5output")
    with h5py.File(folder / "out.h5", "r") as f:
        want = {name: f[name][...] for name in f}
    net = Net("net.prototxt", phase=caffe_pb2.TEST)
    inputs = np.load("inputs.npz")
    for name in inputs.files:
        net.blob_by_name(name).mutable_cpu_data()[...] = inputs[name]
    net.forward()
    with h5py.File("out.h5", "r") as f:
        assert sorted(f) == sorted(want) == ["data", "label"]
        for name, array in want.items():
            assert f[name].dtype == np.float32
            assert f[name].shape == array.shape
            assert np.array_equal(f[name][...], array)
    with pytest.raises(LayerSetupError, match="dataset 'data' already exists in out.h5"):
        net.forward()


def test_file_is_truncated_at_setup(golden_copy):
    golden_copy("hdf5output")
    Net("net.prototxt", phase=caffe_pb2.TEST)
    with h5py.File("out.h5", "r") as f:
        assert list(f) == []


def test_data_and_label_of_different_num_are_an_error(make_layer, blob_of, tmp_path):
    # Caffe's HDF5OutputLayer::Forward_cpu: CHECK_EQ(bottom[0]->num(), bottom[1]->num()).
    layer = make_layer(f"""name: "out" type: "HDF5Output" bottom: "data" bottom: "label"
        hdf5_output_param {{ file_name: "{tmp_path / 'out.h5'}" }}""")
    bottom = [blob_of(np.zeros((2, 3))), blob_of(np.zeros((3, 1)))]
    layer.setup(bottom, [])
    with pytest.raises(LayerSetupError, match="data and label must have the same num, got 2 and 3"):
        layer.forward(bottom, [])
