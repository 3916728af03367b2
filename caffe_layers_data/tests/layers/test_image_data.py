"""ImageData layer: Caffe's golden colour and gray cases, list parsing, shuffling, resizing, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from caffe_core import runtime
from caffe_core.errors import CaffeError, LayerSetupError


@pytest.mark.parametrize("case", ["imagedata_color", "imagedata_gray"])
def test_golden_case_reproduces_caffe_bit_for_bit(dt, golden_copy, case):
    _, cfg = golden_copy(case)
    assert dt.run_case(cfg) == []


def _write_listed_images(dt, tmp_path, count):
    """`count` images in tmp_path/im, listed one per line in tmp_path/list.txt."""
    lines = dt.write_images(tmp_path / "im", count)
    (tmp_path / "list.txt").write_text("\n".join(lines) + "\n")


def _net_text(source, root, extra=""):
    return f"""layer {{ name: "data" type: "ImageData" top: "data" top: "label"
      image_data_param {{ source: "{source}" root_folder: "{root}/" batch_size: 2 {extra} }} }}"""


def test_paths_with_spaces_split_at_the_last_space_and_channels_are_bgr(dt, tmp_path):
    _write_listed_images(dt, tmp_path, 3)
    net = dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im"))
    net.forward()
    net.forward()
    assert net.blob_by_name("label").cpu_data().tolist() == [12, 10]
    data = net.blob_by_name("data").cpu_data()
    assert data.shape == (2, 3, 4, 6)
    assert data[0, :, 0, 0].tolist() == [6, 4, 2]


def test_shuffle_is_deterministic_under_the_seed_and_covers_every_image(dt, tmp_path):
    _write_listed_images(dt, tmp_path, 6)
    text = _net_text(tmp_path / "list.txt", tmp_path / "im", "shuffle: true")

    def labels():
        runtime.set_random_seed(3)
        net = dt.net(text)
        out = []
        for _ in range(3):
            net.forward()
            out += net.blob_by_name("label").cpu_data().tolist()
        return out

    first = labels()
    assert first == labels()
    assert sorted(first) == list(range(10, 16))


def caffe_shuffles_by_hand(items, seed, times):
    """The list after each of `times` caffe::shuffle calls on one boost::mt19937(seed): from the end, swap
    i with boost::uniform_int(0, i), which divides a raw draw by bucket = (2^32 - 1) // (i + 1) (plus 1
    when the remainder is i) and draws again past i."""
    raw = iter(np.random.RandomState(seed).randint(0, 1 << 32, size=1000, dtype=np.uint32).tolist())
    items, orders = list(items), []
    for _ in range(times):
        for i in range(len(items) - 1, 0, -1):
            bucket = 0xFFFFFFFF // (i + 1) + (0xFFFFFFFF % (i + 1) == i)
            j = i + 1
            while j > i:
                j = next(raw) // bucket
            items[i], items[j] = items[j], items[i]
        orders.append(list(items))
    return orders


def test_shuffle_order_is_caffes_for_the_seed_at_setup_and_each_epoch(dt, tmp_path):
    # ImageDataLayer: the shuffle stream is seeded by the main stream's first draw (no crop or mirror, so
    # the transformer draws nothing), shuffles the list at setup, then again after each epoch.
    _write_listed_images(dt, tmp_path, 6)
    runtime.set_random_seed(1701)
    net = dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im", "shuffle: true"))
    shuffle_seed = int(np.random.RandomState(1701).randint(0, 1 << 32, dtype=np.uint32))
    first, second = caffe_shuffles_by_hand(range(10, 16), shuffle_seed, 2)
    seen = []
    for _ in range(6):
        net.forward()
        seen += net.blob_by_name("label").cpu_data().astype(int).tolist()
    assert seen == first + second
    assert first != second


def test_new_height_and_width_resize_every_image(dt, tmp_path):
    _write_listed_images(dt, tmp_path, 2)
    net = dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im", "new_height: 8 new_width: 3"))
    net.forward()
    assert net.blob_by_name("data").shape == (2, 3, 8, 3)
    assert net.blob_by_name("data").cpu_data()[1, :, 5, 1].tolist() == [3, 2, 1]


def test_new_height_without_new_width_is_an_error(dt, tmp_path):
    _write_listed_images(dt, tmp_path, 1)
    with pytest.raises(LayerSetupError, match="new_height and new_width must be set together"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im", "new_height: 8"))


def test_missing_image_is_a_build_error_naming_the_line(dt, tmp_path):
    lines = dt.write_images(tmp_path / "im", 2)
    (tmp_path / "list.txt").write_text("\n".join([*lines, "gone.png 1"]) + "\n")
    with pytest.raises(LayerSetupError, match=r"list.txt line 3: image .*gone.png does not exist"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im"))


def test_corrupt_image_names_the_line_at_build_time(dt, tmp_path):
    lines = dt.write_images(tmp_path / "im", 1)
    (tmp_path / "im" / "bad.png").write_bytes(b"\x89PNG garbage")
    (tmp_path / "list.txt").write_text("\n".join(["bad.png 0", *lines]) + "\n")
    with pytest.raises(LayerSetupError, match=r"list.txt line 1: .*bad.png: cannot decode image"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im"))


def test_corrupt_image_later_is_raised_by_forward(dt, tmp_path):
    lines = dt.write_images(tmp_path / "im", 2)
    (tmp_path / "im" / "bad.png").write_bytes(b"not an image")
    (tmp_path / "list.txt").write_text("\n".join([*lines, "bad.png 0"]) + "\n")
    net = dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im"))
    net.forward()
    with pytest.raises(CaffeError, match=r"list.txt line 3"):
        net.forward()


def test_line_without_a_label_is_an_error(dt, tmp_path):
    (tmp_path / "list.txt").write_text("justapath.png\n")
    with pytest.raises(LayerSetupError, match=r"line 1: expected '<path> <integer label>'"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path))


def test_images_of_different_sizes_without_crop_are_an_error(dt, tmp_path):
    dt.write_images(tmp_path / "im", 1, size=(4, 6))
    Image.fromarray(np.zeros((5, 5, 3), np.uint8)).save(tmp_path / "im" / "other.png")
    (tmp_path / "list.txt").write_text("im 0.png 0\nother.png 1\n")
    with pytest.raises(LayerSetupError,
                       match=r"other.png .*3x5x5 but image .*im 0.png .*, the first of its batch, is 3x4x6"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im"))


def _main_stream_first_draw(seed):
    """Caffe's first caffe_rng_rand() after Caffe::set_random_seed(seed): boost::mt19937's first output."""
    return int(np.random.RandomState(seed).randint(0, 1 << 32, dtype=np.uint32))


def test_rand_skip_starts_at_the_drawn_line_and_logs_it(dt, tmp_path, data_log):
    # ImageDataLayer: skip = caffe_rng_rand() % rand_skip (no shuffle, no crop/mirror: the first draw).
    _write_listed_images(dt, tmp_path, 5)
    runtime.set_random_seed(1701)
    skip = _main_stream_first_draw(1701) % 5
    net = dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im", "rand_skip: 5"))
    net.forward()
    assert net.blob_by_name("label").cpu_data().tolist() == [10 + skip, 10 + (skip + 1) % 5]
    assert f"Skipping first {skip} data points." in data_log.messages


def test_rand_skip_drawing_the_list_length_is_an_error(dt, tmp_path):
    # CHECK_GT(lines_.size(), skip) << "Not enough points to skip": here the draw is exactly 2 of 2 lines.
    _write_listed_images(dt, tmp_path, 2)
    runtime.set_random_seed(1701)
    rand_skip = _main_stream_first_draw(1701) - 2
    with pytest.raises(LayerSetupError, match="rand_skip drew 2, but .*list.txt lists only 2 images"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im", f"rand_skip: {rand_skip}"))


def test_shuffle_is_logged_as_caffe(dt, tmp_path, data_log):
    _write_listed_images(dt, tmp_path, 2)
    dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im", "shuffle: true"))
    assert "Shuffling data" in data_log.messages


def test_batch_of_one_with_a_single_top(dt, tmp_path):
    _write_listed_images(dt, tmp_path, 2)
    net = dt.net(f"""layer {{ name: "data" type: "ImageData" top: "data"
      image_data_param {{ source: "{tmp_path / 'list.txt'}" root_folder: "{tmp_path / 'im'}/"
                          batch_size: 1 }} }}""")
    net.forward()
    net.forward()
    assert net.blob_by_name("data").shape == (1, 3, 4, 6)
    assert net.blob_by_name("data").cpu_data()[0, :, 0, 0].tolist() == [3, 2, 1]


def test_transform_errors_name_the_layer(dt, tmp_path):
    _write_listed_images(dt, tmp_path, 1)
    with pytest.raises(LayerSetupError,
                       match=r"^layer 'data' \(type ImageData\): transform_param: crop_size 5"):
        dt.net(_net_text(tmp_path / "list.txt", tmp_path / "im").replace(
            "image_data_param", "transform_param { crop_size: 5 } image_data_param"))
