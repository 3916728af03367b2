"""Classifier and Detector: images through resize, crops, preprocessing and a tiny InnerProduct net."""

import numpy as np
import pytest
from PIL import Image

import caffe
from caffe import io as caffe_io
from caffe_core.errors import CaffeError

from .conftest import require_layers

NET = """
name: "tiny"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 dim: 4 dim: 4 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 3 weight_filler { type: "gaussian" std: 0.1 }
                              bias_filler { type: "constant" value: 0.25 } } }
"""
MEAN = np.array([10.0, 20.0, 30.0])


@pytest.fixture
def model(tmp_path):
    require_layers("InnerProduct")
    model_file = tmp_path / "tiny.prototxt"
    model_file.write_text(NET)
    weights_file = tmp_path / "tiny.caffemodel"
    caffe.Net(str(model_file), caffe.TEST).save(str(weights_file))
    return str(model_file), str(weights_file)


def _scores(net, caffe_in):
    weight, bias = (b.data.astype(np.float64) for b in net.params["ip"])
    return caffe_in.reshape(len(caffe_in), -1) @ weight.T + bias


def _caffe_in(crops):
    """preprocess by hand: HWC -> CHW, RGB -> BGR, x255, minus the per-channel mean."""
    return crops.transpose(0, 3, 1, 2)[:, ::-1] * 255 - MEAN[:, None, None]


def test_classifier_averages_ten_crops(model):
    classifier = caffe.Classifier(*model, image_dims=(6, 6), mean=MEAN, raw_scale=255, channel_swap=(2, 1, 0))
    rng = np.random.default_rng(3)
    images = [rng.random((5, 7, 3)), rng.random((6, 6, 3)), rng.random((8, 8, 3))]
    predictions = classifier.predict(images)
    resized = np.stack([caffe_io.resize_image(im, (6, 6)) for im in images]).astype(np.float64)
    crops = caffe_io.oversample(resized, (4, 4))
    expected = _scores(classifier, _caffe_in(crops)).reshape(3, 10, 3).mean(1)
    assert predictions.shape == (3, 3)
    np.testing.assert_allclose(predictions, expected, rtol=1e-4, atol=1e-4)


def test_classifier_centre_crop(model):
    classifier = caffe.Classifier(*model, image_dims=(6, 6), mean=MEAN, raw_scale=255, channel_swap=(2, 1, 0))
    image = np.random.default_rng(5).random((6, 6, 3))
    predictions = classifier.predict([image], oversample=False)
    expected = _scores(classifier, _caffe_in(image[None, 1:5, 1:5]))
    np.testing.assert_allclose(predictions, expected, rtol=1e-4, atol=1e-4)


def test_classifier_defaults_image_dims_to_the_input(model):
    classifier = caffe.Classifier(*model)
    assert list(classifier.image_dims) == [4, 4] and list(classifier.crop_dims) == [4, 4]


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
    expected = _scores(detector, crops.transpose(0, 3, 1, 2).astype(np.float64) * 255)
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
