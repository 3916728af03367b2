"""HDF5Data layer: Caffe's golden case, rows crossing files, shuffling, and configuration errors."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from caffe_core.errors import LayerSetupError


def test_golden_case_reproduces_caffe_bit_for_bit(dt, golden_copy):
    _, cfg = golden_copy("hdf5data")
    assert dt.run_case(cfg) == []


def _files(tmp_path, sizes):
    names, start = [], 0
    for k, n in enumerate(sizes):
        with h5py.File(tmp_path / f"f{k}.h5", "w") as f:
            f["data"] = np.arange(start, start + n, dtype=np.float64)[:, None] * [1, -1]
            f["label"] = np.arange(start, start + n, dtype=np.int32)
        names.append(f"f{k}.h5")
        start += n
    (tmp_path / "list.txt").write_text("\n".join(names) + "\n")


def _net(dt, extra="", batch=3, param_extra=""):
    return dt.net(f"""layer {{ name: "h" type: "HDF5Data" top: "data" top: "label" {extra}
        hdf5_data_param {{ source: "list.txt" batch_size: {batch} {param_extra} }} }}""")


def test_rows_run_across_files_and_wrap_to_the_first(dt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [2, 3])
    net = _net(dt)
    labels = []
    for _ in range(4):
        net.forward()
        labels.append(net.blob_by_name("label").cpu_data().tolist())
    assert labels == [[0, 1, 2], [3, 4, 0], [1, 2, 3], [4, 0, 1]]
    assert net.blob_by_name("data").cpu_data().tolist() == [[4, -4], [0, 0], [1, -1]]
    assert net.blob_by_name("data").cpu_data().dtype == np.float32


def test_shuffle_serves_every_row_once_per_pass(dt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [4, 2])
    net = _net(dt, batch=6, param_extra="shuffle: true")
    orders = []
    for _ in range(4):
        net.forward()
        orders.append(net.blob_by_name("label").cpu_data().tolist())
    assert all(sorted(order) == list(range(6)) for order in orders)
    assert len({tuple(order) for order in orders}) > 1


def test_transform_param_is_rejected(dt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [2])
    with pytest.raises(LayerSetupError, match="does not transform data"):
        _net(dt, "transform_param { scale: 2 }")


def test_missing_dataset_names_file_and_top(dt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [2])
    with pytest.raises(LayerSetupError, match="f0.h5 has no dataset 'other'"):
        dt.net("""layer { name: "h" type: "HDF5Data" top: "data" top: "other"
            hdf5_data_param { source: "list.txt" batch_size: 1 } }""")


def test_empty_file_list_is_an_error(dt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "list.txt").write_text("\n")
    with pytest.raises(LayerSetupError, match="must list at least 1 HDF5 file"):
        _net(dt)


def test_loading_logs_the_file_count_and_rows_as_caffe(dt, tmp_path, monkeypatch, data_log):
    monkeypatch.chdir(tmp_path)
    _files(tmp_path, [2, 3])
    _net(dt)
    assert "Number of HDF5 files: 2" in data_log.messages
    assert "Successfully loaded 2 rows" in data_log.messages


@pytest.mark.parametrize(("data", "label"), [
    # Caffe's HDF5DataLayer::LoadHDF5FileData checks every dataset has as many rows as the first,
    (np.zeros((3, 2)), np.zeros(2)),
    # and loads datasets of at least one axis (hdf5_load_nd_dataset's min_dim 1): a scalar has no rows.
    (np.float64(1.0), np.float64(2.0)),
])
def test_datasets_without_the_same_non_zero_rows_are_an_error(dt, tmp_path, monkeypatch, data, label):
    monkeypatch.chdir(tmp_path)
    with h5py.File(tmp_path / "f.h5", "w") as f:
        f["data"] = data
        f["label"] = label
    (tmp_path / "list.txt").write_text("f.h5\n")
    with pytest.raises(LayerSetupError, match="must have the same, non-zero number of rows"):
        _net(dt)


def test_later_file_with_other_row_shape_names_it(dt, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, width in (("a.h5", 2), ("b.h5", 4)):
        with h5py.File(tmp_path / name, "w") as f:
            f["data"] = np.zeros((2, width))
            f["label"] = np.zeros(2)
    (tmp_path / "list.txt").write_text("a.h5\nb.h5\n")
    net = _net(dt, batch=2)
    net.forward()
    with pytest.raises(LayerSetupError, match=r"dataset 'data' has rows of shape \(4,\) in b.h5, but \(2,\)"):
        net.forward()
