"""Classifier: images through resize, ten or centre crops, preprocessing and a tiny InnerProduct net."""

import numpy as np

import caffe
from caffe import io as caffe_io

from .conftest import MEAN, tiny_ip_scores


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
    expected = tiny_ip_scores(classifier, _caffe_in(crops)).reshape(3, 10, 3).mean(1)
    assert predictions.shape == (3, 3)
    np.testing.assert_allclose(predictions, expected, rtol=1e-4, atol=1e-4)


def test_classifier_centre_crop(model):
    classifier = caffe.Classifier(*model, image_dims=(6, 6), mean=MEAN, raw_scale=255, channel_swap=(2, 1, 0))
    image = np.random.default_rng(5).random((6, 6, 3))
    predictions = classifier.predict([image], oversample=False)
    expected = tiny_ip_scores(classifier, _caffe_in(image[None, 1:5, 1:5]))
    np.testing.assert_allclose(predictions, expected, rtol=1e-4, atol=1e-4)


def test_classifier_defaults_image_dims_to_the_input(model):
    classifier = caffe.Classifier(*model)
    assert list(classifier.image_dims) == [4, 4] and list(classifier.crop_dims) == [4, 4]
    assert classifier.core.optimize_memory


def test_classifier_loads_the_pretrained_weights(model, tmp_path):
    net = caffe.Net(model[0], caffe.TEST)
    net.params["ip"][0].data[...] = 0.5
    net.params["ip"][1].data[...] = -2.0
    weights = str(tmp_path / "set.caffemodel")
    net.save(weights)
    classifier = caffe.Classifier(model[0], weights)
    np.testing.assert_array_equal(classifier.params["ip"][0].data, np.full((3, 48), 0.5))
    np.testing.assert_array_equal(classifier.params["ip"][1].data, np.full(3, -2.0))


def test_classifier_keeps_any_non_empty_image_dims(model):
    # pycaffe falls back to the input's dims only when image_dims is empty ("if not image_dims").
    classifier = caffe.Classifier(*model, image_dims=(6,))
    assert list(classifier.image_dims) == [6]
    assert list(caffe.Classifier(*model, image_dims=()).image_dims) == [4, 4]
