"""Image decoding and resizing as OpenCV does them: BGR order, libpng gray, fixed-point INTER_LINEAR."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from caffe_core.errors import CaffeError
from caffe_layers_data.images import decode_image, encode_image, extension_of, read_image, resize


def _png(array: np.ndarray, mode: str | None = None) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(array, mode).save(buffer, format="PNG")
    return buffer.getvalue()


RGB = np.array([[[255, 0, 0], [0, 255, 0], [0, 0, 255], [17, 99, 201]]], np.uint8)


def test_colour_decoding_is_bgr():
    assert decode_image(_png(RGB), True, "x")[0].tolist() == [[0, 0, 255], [0, 255, 0], [255, 0, 0],
                                                             [201, 99, 17]]


def test_gray_decoding_uses_libpng_fixed_point_weights():
    gray = decode_image(_png(RGB), False, "x")[0, :, 0].tolist()
    r, g, b = RGB[0].astype(int).T
    assert gray == ((9797 * r + 19234 * g + 3737 * b) >> 15).tolist() == [76, 149, 29, 86]


def test_gray_png_expands_to_three_equal_planes_in_colour_and_stays_one_natively():
    data = _png(np.array([[3, 250]], np.uint8))
    assert decode_image(data, True, "x").tolist() == [[[3, 3, 3], [250, 250, 250]]]
    assert decode_image(data, None, "x").shape == (1, 2, 1)


def test_alpha_is_dropped_without_compositing():
    rgba = np.array([[[10, 20, 30, 0]]], np.uint8)
    assert decode_image(_png(rgba), True, "x").tolist() == [[[30, 20, 10]]]


def test_garbage_is_an_error_naming_the_source():
    with pytest.raises(CaffeError, match="rec 7: cannot decode image"):
        decode_image(b"garbage", True, "rec 7")


def test_resize_matches_opencv_fixed_point_linear():
    image = np.array([[0, 100]], np.uint8).reshape(1, 2, 1)
    assert resize(image, 1, 4)[0, :, 0].tolist() == [0, 25, 75, 100]
    assert resize(np.full((3, 3, 3), 7, np.uint8), 5, 2).tolist() == np.full((5, 2, 3), 7).tolist()


def test_png_encoding_round_trips():
    image = np.random.default_rng(0).integers(0, 255, (3, 4, 3), dtype=np.uint8)
    assert np.array_equal(decode_image(encode_image(image, "png", "x"), True, "x"), image)


def test_palette_png_decodes_like_its_rgb_colours():
    palette = Image.fromarray(RGB).convert("P", palette=Image.Palette.ADAPTIVE, colors=4)
    buffer = io.BytesIO()
    palette.save(buffer, format="PNG")
    assert np.array_equal(decode_image(buffer.getvalue(), True, "x"), decode_image(_png(RGB), True, "x"))


def test_sixteen_bit_gray_keeps_the_high_byte():
    buffer = io.BytesIO()
    Image.fromarray(np.array([[0x1234, 0xFF01]], np.uint16)).save(buffer, format="PNG")
    assert decode_image(buffer.getvalue(), False, "x")[0, :, 0].tolist() == [0x12, 0xFF]


def test_read_image_names_a_missing_file_and_resizes_when_asked(tmp_path):
    with pytest.raises(CaffeError, match=r"could not open or find file .*nothing.png"):
        read_image(str(tmp_path / "nothing.png"))
    (tmp_path / "a.PNG").write_bytes(_png(np.array([[0, 100]], np.uint8)))
    assert read_image(str(tmp_path / "a.PNG"), False, 1, 4)[0, :, 0].tolist() == [0, 25, 75, 100]
    assert extension_of(str(tmp_path / "a.PNG")) == "png"


def test_one_bit_png_decodes_natively_to_one_channel_of_0_and_255():
    # libpng (as OpenCV reads it) expands 1-bit gray to 8-bit gray: 0 → 0, 1 → 255, one channel.
    buffer = io.BytesIO()
    Image.fromarray(np.array([[True, False, True]])).convert("1").save(buffer, format="PNG")
    decoded = decode_image(buffer.getvalue(), None, "x")
    assert decoded.shape == (1, 3, 1)
    assert decoded[0, :, 0].tolist() == [255, 0, 255]


def test_jpeg_encoding_uses_opencvs_default_quality_95():
    # IJG scaling at quality 95: factor 200 - 2 * 95 = 10, so the luminance DC step 16 becomes
    # (16 * 10 + 50) // 100 = 2 (Pillow's default quality 75 would give 8).
    data = encode_image(np.full((8, 8, 3), 128, np.uint8), "jpg", "x")
    assert Image.open(io.BytesIO(data)).quantization[0][0] == 2
