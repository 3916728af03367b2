"""WindowData layer: fg/bg sampling, warping to crop_size, context padding, mean values, errors."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from caffe_core import proto_io, runtime
from caffe_core.errors import LayerSetupError
from caffe_layers_data.tools.compute_image_mean import mean_to_proto


@pytest.fixture
def windows(tmp_path):
    image = np.zeros((20, 30, 3), np.uint8)
    image[:, :, 0] = 200
    image[5:15, 10:20] = (10, 20, 30)
    Image.fromarray(image).save(tmp_path / "a.png")
    (tmp_path / "windows.txt").write_text(
        "# 0\na.png\n3\n20\n30\n3\n"
        "2 0.9 10 5 19 14\n"
        "3 0.8 10 5 19 14\n"
        "1 0.1 0 0 4 4\n")
    return tmp_path


def _net(dt, folder, transform="crop_size: 4", extra=""):
    return dt.net(f"""layer {{ name: "w" type: "WindowData" top: "data" top: "label"
        transform_param {{ {transform} }}
        window_data_param {{ source: "{folder}/windows.txt" root_folder: "{folder}/" batch_size: 4
                             fg_fraction: 0.5 {extra} }} }}""")


def test_batch_holds_background_then_foreground_windows_warped_to_crop_size(dt, windows):
    net = _net(dt, windows)
    net.forward()
    labels = net.blob_by_name("label").cpu_data().tolist()
    assert labels[:2] == [0, 0] and set(labels[2:]) <= {2, 3}
    data = net.blob_by_name("data").cpu_data()
    assert data.shape == (4, 3, 4, 4)
    assert (data[2:].transpose(0, 2, 3, 1).reshape(-1, 3) == [30, 20, 10]).all()
    assert (data[:2, 2] == 200).all() and (data[:2, :2] == 0).all()


def test_context_pad_pads_and_mean_values_scale_apply(dt, windows):
    net = _net(dt, windows, "crop_size: 8 mean_value: 10", "context_pad: 2 scale: 0.5")
    net.forward()
    fg = net.blob_by_name("data").cpu_data()[2]
    assert fg[:, 2:6, 2:6].reshape(3, -1).T.tolist() == [[10, 5, 0]] * 16
    assert fg[2, 0, 0] == 95


def test_mean_file_is_taken_from_its_centre_under_each_crop_position(dt, windows):
    mean = np.random.default_rng(0).uniform(0, 9, (3, 10, 10)).astype(np.float32)
    proto_io.write_binary_file(windows / "mean.binaryproto", mean_to_proto(mean))
    net = _net(dt, windows, f'crop_size: 4 mean_file: "{windows}/mean.binaryproto"')
    net.forward()
    want = np.float32([30, 20, 10])[:, None, None] - mean[:, 3:7, 3:7]
    assert np.array_equal(net.blob_by_name("data").cpu_data()[2], want)


def test_sampling_and_mirroring_are_deterministic_under_the_seed(dt, windows):
    def batches():
        runtime.set_random_seed(5)
        net = _net(dt, windows, "crop_size: 4 mirror: true", "context_pad: 1")
        data, labels = [], []
        for _ in range(4):
            net.forward()
            data.append(net.blob_by_name("data").cpu_data().copy())
            labels.append(net.blob_by_name("label").cpu_data().copy())
        return np.stack(data), np.stack(labels)

    (first_data, first_labels), (second_data, second_labels) = batches(), batches()
    assert np.array_equal(first_data, second_data) and np.array_equal(first_labels, second_labels)
    assert len({batch.tobytes() for batch in first_data}) > 1


def test_missing_crop_size_is_an_error(dt, windows):
    with pytest.raises(LayerSetupError, match="crop_size must be positive"):
        _net(dt, windows, "")


def test_foreground_window_with_label_zero_is_an_error(dt, tmp_path):
    Image.fromarray(np.zeros((4, 4, 3), np.uint8)).save(tmp_path / "a.png")
    (tmp_path / "windows.txt").write_text("# 0\na.png\n3 4 4\n1\n0 0.9 0 0 3 3\n")
    with pytest.raises(LayerSetupError, match="foreground labels must be > 0"):
        _net(dt, tmp_path)


def test_window_outside_its_image_names_the_window_file_line(dt, windows):
    (windows / "windows.txt").write_text("# 0\na.png\n3\n20\n30\n2\n2 0.9 10 5 19 14\n1 0.1 0 0 40 4\n")
    with pytest.raises(LayerSetupError, match=r"windows.txt line 8: window \(0, 0, 40, 4\) lies outside"):
        _net(dt, windows)


def test_malformed_entry_names_the_window_file_line(dt, windows):
    (windows / "windows.txt").write_text("# 0\na.png\n3 20 30\n1\n2 0.9 10 5 19 14\n"
                                         "# 1\na.png\n3 20 30\n1\n2 0.9 10 five 19 14\n")
    with pytest.raises(LayerSetupError,
                       match=r"windows.txt: malformed entry starting at line 6 \(near line 10\)"):
        _net(dt, windows)
    (windows / "windows.txt").write_text("# 0\na.png\n3 20 30\n2\n2 0.9 10 5 19 14\n")
    with pytest.raises(LayerSetupError, match=r"entry starting at line 1 \(near the end of the file\)"):
        _net(dt, windows)


@pytest.mark.parametrize("mode", ["warp", "square"])
def test_square_crop_mode_grows_the_short_side_of_the_window(dt, tmp_path, mode):
    # A 10-wide, 4-tall foreground window on a red image. Caffe's "square" mode makes the region
    # half_height = half_width around the window's centre before warping, so the crop shows the red
    # rows above and below; "warp" stretches the window alone to crop_size x crop_size.
    image = np.zeros((20, 30, 3), np.uint8)
    image[:, :, 0] = 200
    image[8:12, 10:20] = (10, 20, 30)
    Image.fromarray(image).save(tmp_path / "a.png")
    (tmp_path / "windows.txt").write_text("# 0\na.png\n3\n20\n30\n2\n1 0.9 10 8 19 11\n2 0.1 0 0 4 4\n")
    net = dt.net(f"""layer {{ name: "w" type: "WindowData" top: "data" top: "label"
        transform_param {{ crop_size: 10 }}
        window_data_param {{ source: "{tmp_path}/windows.txt" root_folder: "{tmp_path}/" batch_size: 2
                             fg_fraction: 0.5 crop_mode: "{mode}" }} }}""")
    net.forward()
    window = net.blob_by_name("data").cpu_data()[1]
    assert window[:, 5, 5].tolist() == [30, 20, 10]
    if mode == "warp":
        assert (window.reshape(3, -1).T == [30, 20, 10]).all()
    else:
        assert window[:, 0, 5].tolist() == [0, 0, 200] and window[:, 9, 5].tolist() == [0, 0, 200]


def test_context_pad_region_clipped_at_the_top_right_is_warped_as_caffe(dt, tmp_path):
    # A 4x3 window (6, 1)-(9, 3) in a 10x10 image, crop_size 8, context_pad 2, so context_scale 8 / 4 = 2.
    # half_w 2, half_h 1.5, centre (8, 2.5): region x 4..12, y round(-0.5) = -1 .. round(5.5) = 6, so
    # unclipped 9 wide and 8 tall; pad_y1 1, pad_x2 12 - 10 + 1 = 3; clipped x 4..9, y 0..6.
    # scale_x 8/9, scale_y 1: warped to round(6 * 8/9) = 5 wide, 7 tall, placed at pad_h 1, pad_w 0.
    Image.fromarray(np.full((10, 10, 3), (10, 20, 30), np.uint8)).save(tmp_path / "a.png")
    (tmp_path / "windows.txt").write_text("# 0\na.png\n3 10 10\n1\n1 0.9 6 1 9 3\n")
    net = dt.net(f"""layer {{ name: "w" type: "WindowData" top: "data" top: "label"
        transform_param {{ crop_size: 8 }}
        window_data_param {{ source: "{tmp_path}/windows.txt" root_folder: "{tmp_path}/" batch_size: 1
                             fg_fraction: 1 context_pad: 2 }} }}""")
    net.forward()
    data = net.blob_by_name("data").cpu_data()[0]
    want = np.zeros((3, 8, 8), np.float32)
    want[:, 1:8, 0:5] = np.float32([30, 20, 10])[:, None, None]
    assert np.array_equal(data, want)


def test_mirror_flips_about_half_of_the_windows(dt, tmp_path):
    # WindowDataLayer: do_mirror = mirror && PrefetchRand() % 2, so about half of many windows are flipped.
    Image.fromarray(np.array([[[0, 0, 255], [255, 0, 0]]], np.uint8)).save(tmp_path / "a.png")
    (tmp_path / "windows.txt").write_text("# 0\na.png\n3 1 2\n1\n1 0.9 0 0 1 0\n")
    runtime.set_random_seed(1701)
    net = dt.net(f"""layer {{ name: "w" type: "WindowData" top: "data" top: "label"
        transform_param {{ crop_size: 2 mirror: true }}
        window_data_param {{ source: "{tmp_path}/windows.txt" root_folder: "{tmp_path}/" batch_size: 400
                             fg_fraction: 1 cache_images: true }} }}""")
    net.forward()
    data = net.blob_by_name("data").cpu_data()
    mirrored = data[:, 0, 0, 0] == 255  # BGR: the left pixel is red (blue 0) unless mirrored
    assert set(data[:, 0, 0, 0].tolist()) == {0, 255}
    assert 0.42 < np.mean(mirrored) < 0.58


def test_window_file_not_starting_with_a_hash_names_the_token(dt, windows):
    (windows / "windows.txt").write_text("0\na.png\n3 20 30\n1\n2 0.9 10 5 19 14\n")
    with pytest.raises(LayerSetupError, match=r"windows.txt line 1: expected '#', got '0'"):
        _net(dt, windows)


@pytest.mark.parametrize(("transform", "extra", "message"), [
    ("", "", "transform_param.crop_size must be positive"),
    ("crop_size: 4", "batch_size: 0", "window_data_param.batch_size must be positive")])
def test_setting_errors_name_the_field(dt, windows, transform, extra, message):
    with pytest.raises(LayerSetupError, match=rf"^layer 'w' \(type WindowData\): {message}$"):
        _net(dt, windows, transform, extra)


def test_window_file_is_read_as_utf8_whatever_the_locale(tmp_path):
    # Caffe reads the window file's bytes as they are; a UTF-8 image name must survive an ASCII locale.
    (tmp_path / "windows.txt").write_bytes("# 0\n\u00e9.png\n3 1 1\n0\n".encode())
    code = ("from caffe_layers_data.layers.window_data import read_window_file; "
            f"print(ascii(read_window_file({str(tmp_path / 'windows.txt')!r}, '')[0]))")
    env = {**os.environ, "LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert result.stdout.strip() == ascii(["\u00e9.png"]), result.stderr
