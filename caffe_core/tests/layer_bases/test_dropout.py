"""DropoutLayerBase: the ratio, the mask drawn on Caffe's stream, its backward, and the forks' hooks."""

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer_bases.dropout import DropoutLayerBase
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text


class Dropout(DropoutLayerBase):
    type = "TestDropout"


class AlwaysMasking(DropoutLayerBase):
    """Masks in every phase, with an unscaled mask."""

    type = "TestDropout"
    scale_mask = False

    def masking(self):
        return True


class HalvingWhenNotMasking(DropoutLayerBase):
    type = "TestDropout"

    def unmasked(self, values):
        return values * np.float32(0.5)


def dropout(cls=Dropout, ratio=0.25, phase=caffe_pb2.TRAIN):
    param = parse_text(f'name: "d" type: "TestDropout" dropout_param {{ dropout_ratio: {ratio} }}',
                       caffe_pb2.LayerParameter())
    param.phase = phase
    return cls(param)


def run(layer, x, dy):
    bottom, top = Blob(x.shape), Blob()
    bottom.mutable_cpu_data()[...] = x
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    top.mutable_cpu_diff()[...] = dy
    layer.backward([top], [True], [bottom])
    return top.cpu_data().copy(), bottom.cpu_diff().copy()


def test_train_masks_scaled_by_one_over_keep_probability():
    x = np.full((200, 50), 2.0, dtype=np.float32)
    y, dx = run(dropout(), x, np.ones_like(x))
    kept = y != 0
    np.testing.assert_array_equal(y[kept], np.float32(2) * np.float32(1 / 0.75))
    np.testing.assert_array_equal(dx, np.where(kept, np.float32(1 / 0.75), 0))
    assert abs(kept.mean() - 0.75) < 0.02


def test_the_mask_comes_from_caffes_stream():
    x = np.ones((10, 10), dtype=np.float32)
    runtime.set_random_seed(3)
    first = run(dropout(), x, x)[0]
    runtime.set_random_seed(3)
    np.testing.assert_array_equal(run(dropout(), x, x)[0], first)
    runtime.set_random_seed(3)
    keep = runtime.rng().bernoulli((10, 10), 0.75)
    np.testing.assert_array_equal(first != 0, keep.astype(bool))


def test_test_phase_passes_values_and_gradients():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y, dx = run(dropout(phase=caffe_pb2.TEST), x, -x)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(dx, -x)


def test_a_variant_may_mask_in_test_without_scaling():
    x = np.ones((20, 20), dtype=np.float32)
    y, dx = run(dropout(AlwaysMasking, phase=caffe_pb2.TEST), x, x)
    assert set(np.unique(y)) == {0.0, 1.0}
    np.testing.assert_array_equal(dx, y)


def test_a_variant_may_change_the_unmasked_values():
    x = np.full((2, 2), 3.0, dtype=np.float32)
    y, dx = run(dropout(HalvingWhenNotMasking, phase=caffe_pb2.TEST), x, x)
    np.testing.assert_array_equal(y, 1.5)
    np.testing.assert_array_equal(dx, 1.5)


@pytest.mark.parametrize("ratio", [1.0, -0.1])
def test_ratio_outside_zero_one_is_refused(ratio):
    with pytest.raises(LayerSetupError, match=r"'d'.*dropout_ratio must be in \[0, 1\)"):
        dropout(ratio=ratio).setup([Blob((2,))], [Blob()])
