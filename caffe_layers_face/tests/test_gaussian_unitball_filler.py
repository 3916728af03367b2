"""gaussian_unitball (happynear's filler for NormFace's weights): unit rows, drawn from the seeded stream."""

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.fillers import get_filler
from caffe_core.proto import caffe_pb2


def fill(shape, seed=5):
    runtime.set_random_seed(seed)
    blob = Blob(shape)
    get_filler(caffe_pb2.FillerParameter(type="gaussian_unitball", std=7.0)).fill(blob)
    return blob.cpu_data().copy()


def test_rows_have_unit_norm():
    values = fill((10, 2, 3))
    np.testing.assert_allclose(np.linalg.norm(values.reshape(10, -1), axis=1), 1.0, rtol=1e-6)


def test_reproducible_and_ignores_std():
    a, b = fill((4, 8)), fill((4, 8))
    np.testing.assert_array_equal(a, b)
    assert np.abs(a).max() <= 1.0
    assert not np.array_equal(a, fill((4, 8), seed=6))
