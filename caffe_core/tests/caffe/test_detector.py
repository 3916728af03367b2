"""Detector: windows of image files cropped (with or without context), preprocessed and scored."""

import numpy as np
import pytest
from PIL import Image

import caffe
from caffe import io as caffe_io
from caffe_core.errors import CaffeError

from .conftest import MEAN, tiny_ip_scores


@pytest.fixture
def image_file(tmp_path):
    pixels = (np.arange(8 * 8 * 3).reshape(8, 8, 3) * 2).astype(np.uint8)
    path = tmp_path / "scene.png"
    Image.fromarray(pixels).save(path)
    return str(path), pixels / 255.0


def test_detector_scores_each_window(model, image_file):
    path, image = image_file
    detector = caffe.Detector(*model, raw_scale=255)
    windows = [np.array([0, 0, 4, 4]), np.array([2, 2, 8, 6])]
    detections = detector.detect_windows([(path, windows)])
    crops = np.stack([caffe_io.resize_image(image[y0:y1, x0:x1], (4, 4)) for y0, x0, y1, x1 in windows])
    expected = tiny_ip_scores(detector, crops.transpose(0, 3, 1, 2).astype(np.float64) * 255)
    assert [d["filename"] for d in detections] == [path, path]
    np.testing.assert_array_equal(detections[1]["window"], windows[1])
    predictions = np.stack([d["prediction"] for d in detections])
    np.testing.assert_allclose(predictions, expected, rtol=1e-4, atol=1e-4)


def test_detector_context_pad_fills_outside_the_image_with_the_mean(model, image_file):
    _, image = image_file
    detector = caffe.Detector(*model, mean=MEAN, raw_scale=255, context_pad=1)
    crop = detector.crop(image.astype(np.float32), np.array([0, 0, 2, 2]))
    assert crop.shape == (4, 4, 3)
    np.testing.assert_allclose(crop[0, :], np.tile(MEAN / 255, (4, 1)), rtol=1e-6)
    np.testing.assert_allclose(crop[:, 0], np.tile(MEAN / 255, (4, 1)), rtol=1e-6)
    np.testing.assert_allclose(crop[1:, 1:], caffe_io.resize_image(image[0:4, 0:4], (3, 3)), rtol=1e-6)


def test_detector_without_context_crops_plainly_and_has_no_selective_search(model, image_file):
    _, image = image_file
    detector = caffe.Detector(*model)
    np.testing.assert_array_equal(detector.crop(image, np.array([1, 2, 3, 5])), image[1:3, 2:5])
    assert list(detector.crop_dims) == [4, 4, 3]
    with pytest.raises(CaffeError, match="detect_selective_search is not available"):
        detector.detect_selective_search(["a.jpg"])


def test_detector_context_pad_without_a_mean_pads_with_zeros(model):
    detector = caffe.Detector(*model, context_pad=1)
    assert detector.crop_mean.shape == (4, 4, 3)
    assert not detector.crop_mean.any()


def test_detector_elementwise_mean_is_transposed_back_to_h_w_k(model):
    mean = np.arange(48, dtype=np.float64).reshape(3, 4, 4)
    detector = caffe.Detector(*model, mean=mean, context_pad=1)
    np.testing.assert_array_equal(detector.crop_mean, mean.transpose(1, 2, 0))


def test_detector_context_box_clipped_at_the_far_edge(model):
    # Worked through detector.py by hand: crop 4, context_pad 1 -> scale 2; window [5, 5, 7, 7] ->
    # context box [4, 4, 10, 10] (full 7, scale 4/7), no padding at the top/left, clipped to [4, 4, 8, 8]
    # -> crop size round(5 * 4 / 7) = 3; the rest is mean.
    image = np.full((8, 8, 3), 0.5, dtype=np.float32)
    image[4:, 4:] = np.arange(16 * 3, dtype=np.float32).reshape(4, 4, 3) / 48
    detector = caffe.Detector(*model, mean=MEAN, raw_scale=255, context_pad=1)
    crop = detector.crop(image, np.array([5, 5, 7, 7]))
    np.testing.assert_allclose(crop[:3, :3], caffe_io.resize_image(image[4:8, 4:8], (3, 3)), rtol=1e-6)
    np.testing.assert_allclose(crop[3, :], np.tile(MEAN / 255, (4, 1)), rtol=1e-6)
    np.testing.assert_allclose(crop[:, 3], np.tile(MEAN / 255, (4, 1)), rtol=1e-6)


def test_detector_selective_search_names_the_missing_tool(model):
    detector = caffe.Detector(*model)
    with pytest.raises(CaffeError, match="selective_search_ijcv_with_python tool"):
        detector.detect_selective_search(["a.jpg"])
