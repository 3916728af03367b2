"""ContrastiveLoss: golden case, forward (current and legacy) against numpy, gradients, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def caffe_data(seed: int = 1701) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of uniform [-1, 1] features (as Caffe's test) and random similarity bits."""
    rng = np.random.default_rng(seed)
    return (rng.uniform(-1, 1, (8, 4, 1, 1)), rng.uniform(-1, 1, (8, 4, 1, 1)),
            rng.integers(0, 2, (8, 1, 1, 1)).astype(float))


def test_golden(golden_case, device_mode):
    assert check_layer_case(golden_case("contrastiveloss")) == []


@pytest.mark.parametrize("legacy", [False, True])
def test_forward(run_forward, legacy):
    a, b, sim = caffe_data()
    margin = 1.5
    _, _, tops = run_forward(f'name: "l" type: "ContrastiveLoss" contrastive_loss_param {{ margin: {margin} '
                             f'legacy_version: {str(legacy).lower()} }}', [a, b, sim])
    d2 = ((a - b) ** 2).reshape(8, 4).sum(axis=1)
    apart = np.maximum(margin - d2, 0) if legacy else np.maximum(margin - np.sqrt(d2), 0) ** 2
    expected = np.where(sim.ravel() != 0, d2, apart).sum() / 16
    np.testing.assert_allclose(float(tops[0].cpu_data()), expected, rtol=1e-5)


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("bottom", [0, 1])
def test_gradient(make_layer, blob_of, legacy, bottom):
    a, b, sim = caffe_data()
    layer = make_layer(f'name: "l" type: "ContrastiveLoss" contrastive_loss_param {{ '
                       f'legacy_version: {str(legacy).lower()} }}')
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_exhaustive(
        layer, [blob_of(a), blob_of(b), blob_of(sim)], [Blob()], check_bottom=bottom)


def test_force_backward_skips_similarity(make_layer):
    layer = make_layer('name: "l" type: "ContrastiveLoss"')
    assert layer.allow_force_backward(0) and layer.allow_force_backward(1)
    assert not layer.allow_force_backward(2)


def test_backward_to_similarity_refused(run_forward):
    a, b, sim = caffe_data()
    layer, bottoms, tops = run_forward('name: "l" type: "ContrastiveLoss"', [a, b, sim])
    with pytest.raises(LayerSetupError, match="similarity"):
        layer.backward(tops, [True, True, True], bottoms)


def test_channels_must_match(make_layer, blob_of):
    with pytest.raises(LayerSetupError, match="channels"):
        make_layer('name: "l" type: "ContrastiveLoss"').setup(
            [blob_of(np.zeros((2, 3))), blob_of(np.zeros((2, 4))), blob_of(np.zeros(2))], [Blob()])


@pytest.mark.parametrize(("shapes", "message"), [
    ([(2, 3, 2), (2, 3, 2), (2,)], r"bottom 0 must be \(N, C\) or \(N, C, 1, 1\)"),
    ([(2, 3), (2, 3), (2, 2)], "the similarity bottom must hold one value per pair"),
    ([(2, 3), (2, 3), (2, 1, 1, 1, 1)], r"bottom 2 must have at most 4 axes, got shape \[2, 1, 1, 1, 1\]"),
])
def test_bottom_shapes_are_checked(make_layer, blob_of, shapes, message):
    layer = make_layer('name: "l" type: "ContrastiveLoss"')
    with pytest.raises(LayerSetupError, match=message):
        layer.setup([blob_of(np.zeros(shape)) for shape in shapes], [Blob()])
