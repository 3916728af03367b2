"""caffe.io: proto conversions, Pillow image loading, resizing, ten-crop oversampling, the Transformer."""

import numpy as np
import pytest
from PIL import Image

from caffe import io as caffe_io
from caffe.proto import caffe_pb2


# ----- conversions -----
def test_blobproto_round_trip_keeps_nd_shape_data_and_diff():
    arr = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    blob = caffe_io.array_to_blobproto(arr, diff=-arr)
    assert list(blob.shape.dim) == [2, 3, 4]
    np.testing.assert_array_equal(caffe_io.blobproto_to_array(blob), arr)
    np.testing.assert_array_equal(caffe_io.blobproto_to_array(blob, return_diff=True), -arr)


def test_blobproto_legacy_4d_fields_give_the_shape():
    blob = caffe_pb2.BlobProto(num=1, channels=2, height=1, width=3, data=range(6))
    assert caffe_io.blobproto_to_array(blob).shape == (1, 2, 1, 3)


def test_array_to_blobproto_refuses_a_diff_of_another_shape():
    with pytest.raises(ValueError, match="diff shape"):
        caffe_io.array_to_blobproto(np.zeros((2, 2)), np.zeros(3))


def test_blobprotovector_string_round_trip():
    arrays = [np.ones((1, 2, 2, 2)), np.arange(3.0)]
    serialized = caffe_io.arraylist_to_blobprotovector_str(arrays)
    assert isinstance(serialized, bytes)
    back = caffe_io.blobprotovector_str_to_arraylist(serialized)
    assert [a.shape for a in back] == [(1, 2, 2, 2), (3,)]
    np.testing.assert_array_equal(back[1], arrays[1])


def test_datum_of_uint8_is_bytes_and_of_floats_is_float_data():
    image = np.arange(12, dtype=np.uint8).reshape(3, 2, 2)
    datum = caffe_io.array_to_datum(image, label=7)
    assert datum.data == image.tobytes() and not datum.float_data and datum.label == 7
    back = caffe_io.datum_to_array(datum)
    assert back.dtype == np.uint8
    np.testing.assert_array_equal(back, image)
    floats = caffe_io.array_to_datum(image.astype(np.float32) / 2)
    assert not floats.data and not floats.HasField("label")
    np.testing.assert_array_equal(caffe_io.datum_to_array(floats), image / 2)
    with pytest.raises(ValueError, match="3-D"):
        caffe_io.array_to_datum(np.zeros((2, 2)))


# ----- resize -----
def test_nearest_resize_replicates_pixels():
    im = np.array([[1.0, 2.0], [3.0, 4.0]])[:, :, None]
    out = caffe_io.resize_image(im, (4, 4), interp_order=0)
    assert out.dtype == np.float32 and out.shape == (4, 4, 1)
    np.testing.assert_array_equal(out[:, :, 0], [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])


def test_bilinear_resize_aligns_pixel_centres_and_clamps_edges():
    ramp = np.array([[0.0, 1.0]])[:, :, None]
    up = caffe_io.resize_image(ramp, (1, 4))
    np.testing.assert_allclose(up[0, :, 0], [0, 0.25, 0.75, 1])
    wide = np.array([[0.0, 2.0, 4.0, 8.0]])[:, :, None]
    np.testing.assert_allclose(caffe_io.resize_image(wide, (1, 2))[0, :, 0], [1, 6])


def test_resize_keeps_constant_images_and_channels_apart():
    constant = np.full((3, 5, 2), 0.7, dtype=np.float32)
    np.testing.assert_allclose(caffe_io.resize_image(constant, (7, 2)), np.full((7, 2, 2), 0.7), rtol=1e-6)
    two = np.stack([np.zeros((2, 2)), np.ones((2, 2))], axis=2)
    out = caffe_io.resize_image(two, (3, 3))
    np.testing.assert_array_equal(out[:, :, 0], 0)
    np.testing.assert_array_equal(out[:, :, 1], 1)


def test_resize_refuses_other_orders():
    with pytest.raises(ValueError, match="interp_order 0 .* and 1"):
        caffe_io.resize_image(np.zeros((2, 2, 1)), (3, 3), interp_order=3)


# ----- load_image -----
def _save(tmp_path, name, array, mode=None):
    path = tmp_path / name
    Image.fromarray(array, mode=mode).save(path)
    return str(path)


RGB = np.array([[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [51, 102, 204]]], dtype=np.uint8)


def test_load_color_image_as_rgb_floats(tmp_path):
    img = caffe_io.load_image(_save(tmp_path, "rgb.png", RGB))
    assert img.dtype == np.float32 and img.shape == (2, 2, 3)
    np.testing.assert_allclose(img, RGB / 255.0, rtol=1e-6)


def test_load_color_image_as_gray_uses_skimage_weights(tmp_path):
    img = caffe_io.load_image(_save(tmp_path, "rgb.png", RGB), color=False)
    assert img.shape == (2, 2, 1)
    expected = (RGB / 255.0) @ np.array([0.2125, 0.7154, 0.0721])
    np.testing.assert_allclose(img[:, :, 0], expected, rtol=1e-6)


def test_load_gray_image_tiles_to_rgb_or_stays_one_channel(tmp_path):
    gray = np.array([[0, 128], [255, 64]], dtype=np.uint8)
    path = _save(tmp_path, "gray.png", gray)
    color = caffe_io.load_image(path)
    assert color.shape == (2, 2, 3)
    np.testing.assert_allclose(color[:, :, 1], gray / 255.0, rtol=1e-6)
    single = caffe_io.load_image(path, color=False)
    assert single.shape == (2, 2, 1)


def test_load_drops_alpha_and_expands_palettes(tmp_path):
    rgba = np.dstack([RGB, np.full((2, 2), 10, dtype=np.uint8)])
    img = caffe_io.load_image(_save(tmp_path, "rgba.png", rgba))
    np.testing.assert_allclose(img, RGB / 255.0, rtol=1e-6)
    palette = Image.fromarray(RGB).convert("P", palette=Image.Palette.ADAPTIVE, colors=4)
    path = tmp_path / "palette.png"
    palette.save(path)
    np.testing.assert_allclose(caffe_io.load_image(path), RGB / 255.0, rtol=1e-6)


def test_load_16_bit_gray_scales_by_its_range(tmp_path):
    deep = np.array([[0, 65535], [32768, 1000]], dtype=np.uint16)
    path = tmp_path / "deep.png"
    Image.fromarray(deep).save(path)
    img = caffe_io.load_image(path, color=False)
    np.testing.assert_allclose(img[:, :, 0], deep / 65535.0, rtol=1e-6)


def test_load_reports_unreadable_files(tmp_path):
    path = tmp_path / "notes.png"
    path.write_text("not an image")
    with pytest.raises(ValueError, match="notes.png: not an image file"):
        caffe_io.load_image(path)
    with pytest.raises(FileNotFoundError):
        caffe_io.load_image(tmp_path / "missing.png")


# ----- oversample -----
def test_oversample_takes_corners_centre_and_mirrors():
    images = [np.arange(25, dtype=np.float32).reshape(5, 5, 1), -np.ones((5, 5, 1))]
    crops = caffe_io.oversample(images, (2, 2))
    assert crops.shape == (20, 2, 2, 1) and crops.dtype == np.float32
    im = images[0][:, :, 0]
    expected = [im[0:2, 0:2], im[0:2, 3:5], im[3:5, 0:2], im[3:5, 3:5], im[1:3, 1:3]]
    for i, window in enumerate(expected):
        np.testing.assert_array_equal(crops[i, :, :, 0], window)
        np.testing.assert_array_equal(crops[5 + i, :, :, 0], window[:, ::-1])
    np.testing.assert_array_equal(crops[10:], -1)


# ----- Transformer -----
def _transformer():
    t = caffe_io.Transformer({"data": (1, 3, 2, 2)})
    t.set_transpose("data", (2, 0, 1))
    t.set_channel_swap("data", (2, 1, 0))
    t.set_raw_scale("data", 255)
    t.set_mean("data", np.array([10.0, 20.0, 30.0]))
    t.set_input_scale("data", 0.5)
    return t


def test_preprocess_applies_caffe_steps_in_order():
    image = RGB / 255.0
    out = _transformer().preprocess("data", image)
    assert out.shape == (3, 2, 2) and out.dtype == np.float32
    bgr = RGB.transpose(2, 0, 1)[::-1].astype(np.float64)
    expected = (bgr - np.array([10, 20, 30])[:, None, None]) * 0.5
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-4)


def test_preprocess_resizes_to_the_input_and_leaves_the_argument_alone():
    t = caffe_io.Transformer({"data": (1, 1, 4, 4)})
    t.set_transpose("data", (2, 0, 1))
    t.set_raw_scale("data", 2)
    image = np.full((2, 2, 1), 3, dtype=np.float32)
    out = t.preprocess("data", image)
    assert out.shape == (1, 4, 4)
    np.testing.assert_allclose(out, 6)
    np.testing.assert_array_equal(image, 3)


def test_deprocess_inverts_preprocess():
    t = _transformer()
    image = RGB / 255.0
    np.testing.assert_allclose(t.deprocess("data", t.preprocess("data", image)), image, atol=1e-6)


def test_image_input_transformer_matches_the_settings_made_one_by_one():
    built = caffe_io.image_input_transformer("data", (1, 3, 2, 2), mean=np.array([10.0, 20.0, 30.0]),
                                             input_scale=0.5, raw_scale=255, channel_swap=(2, 1, 0))
    image = RGB / 255.0
    np.testing.assert_array_equal(built.preprocess("data", image), _transformer().preprocess("data", image))
    bare = caffe_io.image_input_transformer("data", (1, 3, 2, 2))
    assert bare.transpose == {"data": (2, 0, 1)}
    assert not (bare.mean or bare.input_scale or bare.raw_scale or bare.channel_swap)


def test_elementwise_and_single_channel_means():
    t = caffe_io.Transformer({"data": (1, 1, 2, 2), "rgb": (1, 3, 2, 2)})
    t.set_transpose("data", (2, 0, 1))
    t.set_mean("data", np.array([[1.0, 2.0], [3.0, 4.0]]))
    t.set_mean("rgb", np.zeros((3, 2, 2)))
    np.testing.assert_allclose(t.preprocess("data", np.zeros((2, 2, 1)))[0], -np.array([[1, 2], [3, 4]]))


def test_transformer_names_bad_settings():
    t = caffe_io.Transformer({"data": (1, 3, 2, 2)})
    with pytest.raises(ValueError, match="label is not one of the net inputs"):
        t.set_raw_scale("label", 1)
    with pytest.raises(ValueError, match="Transpose order"):
        t.set_transpose("data", (1, 0))
    with pytest.raises(ValueError, match="Channel swap"):
        t.set_channel_swap("data", (1, 0))
    with pytest.raises(ValueError, match="Mean channels incompatible"):
        t.set_mean("data", np.zeros(2))
    with pytest.raises(ValueError, match="Mean shape .* incompatible"):
        t.set_mean("data", np.zeros((3, 4, 4)))
    with pytest.raises(ValueError, match="Mean shape invalid"):
        t.set_mean("data", np.zeros((1, 3, 2, 2)))


def test_load_big_endian_16_bit_gray_scales_by_its_range(tmp_path):
    # skimage.img_as_float divides any uint16 image by 65535, whatever its byte order.
    deep = np.array([[0, 65535], [32768, 1000]], dtype=">u2")
    path = tmp_path / "deep_be.tif"
    Image.fromarray(deep).save(path)
    assert Image.open(path).mode == "I;16B"
    img = caffe_io.load_image(path, color=False)
    np.testing.assert_allclose(img[:, :, 0], deep.astype(np.float64) / 65535.0, rtol=1e-6)


def test_load_float_image_keeps_its_values(tmp_path):
    # skimage.img_as_float leaves a floating-point image's values as they are.
    values = np.array([[0.25, 0.5], [0.75, 1.0]], dtype=np.float32)
    path = tmp_path / "float.tif"
    Image.fromarray(values).save(path)
    img = caffe_io.load_image(path, color=False)
    np.testing.assert_allclose(img[:, :, 0], values, rtol=1e-6)


def test_resize_refuses_arrays_that_are_not_h_w_k():
    with pytest.raises(ValueError, match=r"H x W x K array, got shape \(2, 2\)"):
        caffe_io.resize_image(np.zeros((2, 2)), (3, 3))
