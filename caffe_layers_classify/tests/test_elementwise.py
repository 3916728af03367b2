"""The element-wise base: one bottom, one top shaped like it, in place allowed."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_layers_classify import elementwise

TYPES = ["ReLU6", "HardSwish", "HardSigmoid"]


@pytest.mark.parametrize("kind", TYPES)
def test_is_the_base_and_shapes_the_top_like_the_bottom(make_layer, gaussian, kind):
    layer = make_layer(f'name: "e" type: "{kind}"')
    assert isinstance(layer, elementwise.ElementwiseLayer)
    bottom, top = gaussian((2, 3, 4)), Blob()
    layer.setup([bottom], [top])
    assert top.shape == (2, 3, 4)
    bottom.reshape((5, 1))
    layer.reshape([bottom], [top])
    assert top.shape == (5, 1)


@pytest.mark.parametrize("kind", TYPES)
def test_refuses_two_bottoms_or_tops(make_layer, blob_of, kind):
    one = blob_of(np.zeros((2, 2)))
    with pytest.raises(LayerSetupError, match="takes 1 bottom"):
        make_layer(f'name: "e" type: "{kind}"').setup([one, blob_of(np.zeros(2))], [Blob()])
    with pytest.raises(LayerSetupError, match="produces 1 top"):
        make_layer(f'name: "e" type: "{kind}"').setup([one], [Blob(), Blob()])
