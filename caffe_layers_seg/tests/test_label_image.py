"""Label images: OpenCV's INTER_NEAREST resize (by hand and against a loop of OpenCV's resizeNN), the
grayscale read, and the refusal of a colour label."""

import math

import numpy as np
import pytest
from PIL import Image

from caffe_core.errors import CaffeError
from caffe_layers_seg.label_image import read_label, resize_nearest


def resize_nn_loop(image, height, width):
    """OpenCV's resizeNN, one pixel at a time: source min(floor(dst * (1 / (dst_size / src_size))), last)."""
    src_h, src_w = image.shape[:2]
    fx, fy = 1.0 / (width / src_w), 1.0 / (height / src_h)
    out = np.empty((height, width, *image.shape[2:]), image.dtype)
    for y in range(height):
        for x in range(width):
            out[y, x] = image[min(math.floor(y * fy), src_h - 1), min(math.floor(x * fx), src_w - 1)]
    return out


def test_nearest_resize_by_hand():
    row = np.array([[0, 1, 2, 3, 4]], np.uint8)
    assert resize_nearest(row, 1, 3).tolist() == [[0, 1, 3]]
    assert resize_nearest(row, 1, 8).tolist() == [[0, 0, 1, 1, 2, 3, 3, 4]]
    block = np.array([[1, 2], [3, 4]], np.uint8)
    assert resize_nearest(block, 3, 4).tolist() == [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4]]


@pytest.mark.parametrize(("src", "dst"), [((7, 9), (3, 4)), ((5, 6), (11, 13)), ((12, 16), (9, 12)),
                                          ((3, 10), (10, 3))])
def test_nearest_resize_matches_opencvs_loop(src, dst):
    image = np.random.default_rng(0).integers(0, 255, (*src, 3), dtype=np.uint8)
    np.testing.assert_array_equal(resize_nearest(image, *dst), resize_nn_loop(image, *dst))
    np.testing.assert_array_equal(resize_nearest(image[:, :, 0], *dst), resize_nn_loop(image[:, :, 0], *dst))


def test_gray_label_keeps_its_values_and_resizes_by_nearest(tmp_path):
    values = np.array([[0, 5, 11], [3, 7, 255]], np.uint8)
    Image.fromarray(values).save(tmp_path / "label.png")
    np.testing.assert_array_equal(read_label(str(tmp_path / "label.png")), values)
    resized = read_label(str(tmp_path / "label.png"), 4, 6)
    assert resized.tolist() == [[0, 0, 5, 5, 11, 11], [0, 0, 5, 5, 11, 11], [3, 3, 7, 7, 255, 255],
                                [3, 3, 7, 7, 255, 255]]
    assert resized.dtype == np.uint8


def test_an_rgb_label_with_equal_channels_reads_as_its_gray_values(tmp_path):
    values = np.array([[1, 2], [3, 200]], np.uint8)
    Image.fromarray(np.repeat(values[:, :, None], 3, axis=2)).save(tmp_path / "label.png")
    np.testing.assert_array_equal(read_label(str(tmp_path / "label.png")), values)


def test_a_colour_label_is_refused_naming_the_file(tmp_path):
    colour = np.zeros((2, 2, 3), np.uint8)
    colour[0, 0] = (128, 64, 128)
    Image.fromarray(colour).save(tmp_path / "label.png")
    with pytest.raises(CaffeError, match=r"label image .*label\.png is not grayscale"):
        read_label(str(tmp_path / "label.png"))
