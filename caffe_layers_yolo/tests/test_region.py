"""Region: darknet's region activations by hand, darknet2caffe's text, the channel and anchor checks, the
derivative (gradient-checked, softmax and logistic classes), GPU mode."""

import math

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

DARKNET2CAFFE = ('name: "layer16-region" type: "Region" bottom: "x" top: "y" region_param { '
                 'anchors: "1.08,1.19,  3.42,4.41" classes: 2 num: 2 }')


def text(params: str) -> str:
    """A Region layer with these region_param fields."""
    return f'name: "region" type: "Region" bottom: "x" top: "y" region_param {{ {params} }}'


def run(make_layer, blob_of, layer_text, x):
    layer = make_layer(layer_text)
    bottom, top = [blob_of(x)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return top[0].cpu_data()


def test_one_cell_by_hand(make_layer, blob_of):
    # One anchor, two classes, one cell: x, y, w, h, objectness, class 0, class 1.
    x = np.array([0.0, math.log(3.0), 0.5, -0.5, -math.log(3.0), 1.0, 1.0 + math.log(3.0)],
                 dtype=np.float32).reshape(1, 7, 1, 1)
    y = run(make_layer, blob_of, text("classes: 2 num: 1"), x)[0, :, 0, 0]
    np.testing.assert_allclose(y, [0.5, 0.75, 0.5, -0.5, 0.25, 0.25, 0.75], rtol=1e-6)


def test_darknet2caffe_text_with_softmax_unset_takes_the_softmax(make_layer, blob_of, gaussian):
    x = gaussian((1, 14, 2, 3), seed=4, std=3).cpu_data()
    y = run(make_layer, blob_of, DARKNET2CAFFE, x).reshape(1, 2, 7, 6)
    np.testing.assert_allclose(y[:, :, 5:].sum(axis=2), 1.0, rtol=1e-6)
    np.testing.assert_array_equal(y[:, :, 2:4], x.reshape(1, 2, 7, 6)[:, :, 2:4])


def test_logistic_classes_when_softmax_is_false(make_layer, blob_of):
    x = np.zeros((1, 7, 1, 1), dtype=np.float32)
    y = run(make_layer, blob_of, text("classes: 2 num: 1 softmax: false"), x)[0, :, 0, 0]
    np.testing.assert_array_equal(y, [0.5, 0.5, 0, 0, 0.5, 0.5, 0.5])


@pytest.mark.parametrize(("params", "shape", "message"), [
    ("classes: 2 num: 2", (1, 12, 2, 2),
     r"bottom 'x' has 12 channels; num 2 x \(coords 4 \+ 1 \+ classes 2\) = 14 expected"),
    ('anchors: "1,1, 2" classes: 2 num: 2', (1, 14, 2, 2), r"anchors has 3 values; num 2 needs 4"),
    ("classes: 2 num: 0", (1, 14, 2, 2), r"num \(anchors per cell\) must be at least 1"),
    ("classes: 2 num: 1 coords: 1", (1, 4, 2, 2), r"coords must be at least 2 \(x and y\), got 1"),
])
def test_refusals_name_the_field(make_layer, blob_of, params, shape, message):
    with pytest.raises(LayerSetupError, match=message):
        run(make_layer, blob_of, text(params), np.zeros(shape, dtype=np.float32))


@pytest.mark.parametrize("softmax", ["true", "false"])
def test_gradient(make_layer, gaussian, softmax):
    layer = make_layer(text(f"classes: 3 num: 2 softmax: {softmax}"))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [gaussian((2, 16, 1, 2), seed=5)], [Blob()])


@pytest.mark.parametrize("softmax", ["true", "false"])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, softmax):
    x = gaussian((2, 16, 3, 2), seed=6, std=3).cpu_data()
    gpu_matches_cpu(text(f"classes: 3 num: 2 softmax: {softmax}"), [x])
