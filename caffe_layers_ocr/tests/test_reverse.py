"""Reverse (senlinuc/caffe_ocr, jolibrain/caffe): the fork's copy loop, backward (gradient-checked),
refusals, GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker


def text(axis=None):
    block = "" if axis is None else f" reverse_param {{ axis: {axis} }}"
    return f'name: "r" type: "Reverse" bottom: "x" top: "y"{block}'


def fork_reverse(x, axis):
    """ReverseLayer::Forward_cpu: num_fix blocks, each copying sub_iter_max runs of copy_amount backwards."""
    count = x.size
    axis_count = int(np.prod(x.shape[axis:]))
    copy_amount = 1 if axis + 1 == x.ndim else int(np.prod(x.shape[axis + 1:]))
    num_fix = count // axis_count if axis > 0 else 1
    sub_iter_max = x.shape[axis]
    src, out = x.ravel(), np.zeros(count, dtype=x.dtype)
    read = 0
    for fix in range(num_fix):
        target = (fix + 1) * copy_amount * sub_iter_max - copy_amount
        for _ in range(sub_iter_max):
            out[target:target + copy_amount] = src[read:read + copy_amount]
            read += copy_amount
            target -= copy_amount
    return out.reshape(x.shape)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_forward_is_the_forks_loop(run, axis):
    x = np.random.default_rng(axis).normal(size=(4, 3, 5)).astype(np.float32)
    _, _, top = run(text(axis), [x])
    np.testing.assert_array_equal(top[0].cpu_data(), fork_reverse(x, axis))


def test_default_axis_is_time(run):
    x = np.arange(6, dtype=np.float32).reshape(3, 2)
    _, _, top = run(text(), [x])
    np.testing.assert_array_equal(top[0].cpu_data(), [[4, 5], [2, 3], [0, 1]])


def test_gradient(make_layer, blob_of):
    x = np.random.default_rng(3).normal(size=(3, 2, 4)).astype(np.float32)
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(text(1)), [blob_of(x)], [Blob()])


@pytest.mark.parametrize(("axis", "message"), [(-1, "0 or more"), (3, "less than the number of axes")])
def test_refusals(run, axis, message):
    with pytest.raises(LayerSetupError, match=message):
        run(text(axis), [np.zeros((2, 3, 4), dtype=np.float32)])


def test_refuses_in_place(make_layer, blob_of):
    blob = blob_of(np.zeros((2, 3)))
    with pytest.raises(LayerSetupError, match="in-place"):
        make_layer(text().replace('top: "y"', 'top: "x"')).setup([blob], [blob])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(text(0), [np.random.default_rng(4).normal(size=(5, 2, 3)).astype(np.float32)])
