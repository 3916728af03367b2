"""The head check of DetectionOutput and MultiBoxLoss: one loc box per prior and location class, one score
per prior and class, with the counts in the message."""

import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2
from caffe_layers_ssd.heads import num_priors

LAYER = Layer(caffe_pb2.LayerParameter(name="d", type="DetectionOutput"))


def heads(loc: int, conf: int, priors: int) -> list[Blob]:
    """loc (2, loc), conf (2, conf) and prior (1, 2, priors * 4) blobs."""
    return [Blob((2, loc)), Blob((2, conf)), Blob((1, 2, priors * 4))]


def test_counts_the_priors_when_the_heads_agree():
    assert num_priors(LAYER, heads(3 * 2 * 4, 3 * 5, 3), 2, 5) == 3


@pytest.mark.parametrize(("loc", "conf", "message"), [
    (3 * 4 + 1, 3 * 5, r"layer 'd' \(type DetectionOutput\): Number of priors must match number of location "
                       r"predictions: 3 priors x 1 location classes x 4 != 13"),
    (3 * 4, 3 * 5 - 1, r"confidence predictions: 3 priors x 5 classes != 14"),
])
def test_names_the_head_that_disagrees(loc, conf, message):
    with pytest.raises(LayerSetupError, match=message):
        num_priors(LAYER, heads(loc, conf, 3), 1, 5)
