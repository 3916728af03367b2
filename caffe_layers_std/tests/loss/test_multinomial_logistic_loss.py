"""MultinomialLogisticLoss: golden case, forward/backward against numpy (1e-20 floor), gradient."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case

LAYER = 'name: "l" type: "MultinomialLogisticLoss"'


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("multinomiallogisticloss")) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("multinomiallogisticloss") == []


def test_forward_and_backward(run_forward):
    p = np.array([[0.2, 0.8, 0.0], [0.5, 0.25, 0.25]], dtype=np.float32)
    layer, bottoms, tops = run_forward(f"{LAYER} loss_weight: 2", [p, [1, 2]])
    np.testing.assert_allclose(float(tops[0].cpu_data()), -(np.log(0.8) + np.log(0.25)) / 2, rtol=1e-6)
    layer.backward(tops, [True, False], bottoms)
    np.testing.assert_allclose(bottoms[0].cpu_diff(), [[0, -1 / 0.8, 0], [0, 0, -4]], rtol=1e-6)


def test_zero_probability_floored(run_forward):
    _, _, tops = run_forward(LAYER, [np.array([[1.0, 0.0]]), [1]])
    np.testing.assert_allclose(float(tops[0].cpu_data()), -np.log(np.float32(1e-20)), rtol=1e-6)


def test_gradient(make_layer, blob_of):
    rng = np.random.default_rng(1701)
    p = rng.uniform(0, 1, (10, 5))
    p /= p.sum(axis=1, keepdims=True)
    labels = rng.integers(0, 5, 10).astype(float)
    GradientChecker(1e-2, 2e-2, 1701, 0, 0.05).check_gradient_exhaustive(
        make_layer(LAYER), [blob_of(p), blob_of(labels)], [Blob()], check_bottom=0)


def test_label_must_be_one_per_item(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="one value per item"):
        make_layer(LAYER).setup([blob_of(np.zeros((2, 3))), blob_of(np.zeros((2, 2)))], [Blob()])
