"""MaxUnPool: the golden case (after the vision pack's Pooling), scattering by mask, the true gradient
(duplicates included), refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def unpool_text(params: str = "dst_h: 4 dst_w: 4") -> str:
    """A MaxUnPool layer with values and mask bottoms."""
    return f"name: 'u' type: 'MaxUnPool' bottom: 'x' bottom: 'mask' top: 'y' max_unpool_param {{ {params} }}"


def run(run_layer, values, mask, params="dst_h: 4 dst_w: 4"):
    """The layer and its top after setup and forward."""
    return run_layer(unpool_text(params), [values, mask])


def shuffled_mask(shape, plane, seed=0):
    """A mask sending each value of a plane to a distinct random position of an output plane."""
    rng = np.random.default_rng(seed)
    count = shape[2] * shape[3]
    planes = [rng.permutation(plane)[:count] for _ in range(shape[0] * shape[1])]
    return np.array(planes, np.float32).reshape(shape)


@pytest.mark.requires_layer_types("Pooling")
def test_golden(golden_case):
    assert check_layer_case(golden_case("maxunpool_from_pool_mask")) == []


def test_forward_writes_each_value_at_its_mask_position(run_layer, gaussian, blob_of):
    values = gaussian((2, 3, 2, 3))
    mask = shuffled_mask((2, 3, 2, 3), 5 * 4)
    _, top = run(run_layer, values, blob_of(mask), "dst_h: 5 dst_w: 4")
    want = np.zeros((2, 3, 20), np.float32)
    for n in range(2):
        for c in range(3):
            want[n, c, mask[n, c].ravel().astype(int)] = values.cpu_data()[n, c].ravel()
    np.testing.assert_array_equal(top.cpu_data(), want.reshape(2, 3, 5, 4))


def test_gradient(make_layer, gaussian, blob_of):
    layer = make_layer(unpool_text("dst_h: 3 dst_w: 4"))
    bottoms = [gaussian((2, 2, 2, 2)), blob_of(shuffled_mask((2, 2, 2, 2), 12))]
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, bottoms, [Blob()], check_bottom=0)


def test_duplicates_keep_the_last_value_and_only_it_gets_the_gradient(run_layer, blob_of):
    values = blob_of(np.array([1, 2, 3, 4], np.float32).reshape(1, 1, 2, 2))
    mask = blob_of(np.array([7, 7, 0, 7], np.float32).reshape(1, 1, 2, 2))
    layer, top = run(run_layer, values, mask)
    assert top.cpu_data().ravel()[[0, 7]].tolist() == [3, 4]
    top.mutable_cpu_diff()[...] = np.arange(16).reshape(top.shape)
    layer.backward([top], [True, False], [values, mask])
    assert values.cpu_diff().ravel().tolist() == [0, 0, 0, 7]


@pytest.mark.parametrize(("params", "message"), [
    ("dst_h: 4", "dst_h and max_unpool_param.dst_w are required"),
    ("dst_w: 4", "dst_h and max_unpool_param.dst_w are required"),
    ("dst_h: 0 dst_w: 4", "must be positive"),
])
def test_refuses_bad_settings(run_layer, gaussian, params, message):
    with pytest.raises(LayerSetupError, match=message):
        run(run_layer, gaussian((1, 1, 2, 2)), Blob((1, 1, 2, 2)), params)


def test_refuses_bad_bottoms(run_layer, gaussian, blob_of):
    with pytest.raises(LayerSetupError, match="mask shape"):
        run(run_layer, gaussian((1, 1, 2, 2)), Blob((1, 2, 2, 2)))
    with pytest.raises(LayerSetupError, match="4 axes"):
        run(run_layer, gaussian((1, 4)), Blob((1, 4)))
    with pytest.raises(LayerSetupError, match="unpool top index 16 out of range"):
        run(run_layer, gaussian((1, 1, 1, 2)), blob_of(np.array([[[[0, 16]]]], np.float32)))


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian):
    gpu_matches_cpu(unpool_text("dst_h: 5 dst_w: 4"),
                    [gaussian((2, 3, 2, 3)).cpu_data(), shuffled_mask((2, 3, 2, 3), 20)],
                    propagate_down=[True, False])
