"""Transpose (senlinuc/caffe_ocr): the fork's transpose_cpu index loop, caffe_ocr's NCHW -> WHNC use, the
inverse permutation as backward (gradient-checked), refusals, GPU mode."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker


def text(dims):
    return 'name: "t" type: "Transpose" bottom: "x" top: "y" transpose_param { ' + " ".join(
        f"dim: {d}" for d in dims) + " }"


def fork_transpose(x, dims):
    """transpose_cpu: each bottom index split by the bottom's counts, re-joined with the top's counts."""
    shape = x.shape
    top_shape = [shape[d] for d in dims]
    from_counts = [int(np.prod(shape[i + 1:])) for i in range(len(shape))]
    to_counts = [int(np.prod(top_shape[i + 1:])) for i in range(len(shape))]
    flat, out = x.ravel(), np.zeros(x.size, dtype=x.dtype)
    for index in range(x.size):
        rest, inds = index, []
        for count in from_counts:
            inds.append(rest // count)
            rest %= count
        out[sum(inds[dims[i]] * to_counts[i] for i in range(len(shape)))] = flat[index]
    return out.reshape(top_shape)


@pytest.mark.parametrize("dims", [[3, 2, 0, 1], [0, 1, 2, 3], [1, 0], [2, 0, 1]])
def test_forward_is_the_forks_loop(run, dims):
    shape = (2, 3, 4, 5)[:len(dims)]
    x = np.random.default_rng(0).normal(size=shape).astype(np.float32)
    _, _, top = run(text(dims), [x])
    np.testing.assert_array_equal(top[0].cpu_data(), fork_transpose(x, dims))


def test_caffe_ocr_feature_map_to_sequence(run):
    # caffe_ocr's nets: pool5 (N, C, 1, W) with dim 3 2 0 1 -> (W, 1, N, C), the time axis first.
    _, _, top = run(text([3, 2, 0, 1]), [np.zeros((2, 8, 1, 6), dtype=np.float32)])
    assert top[0].shape == (6, 1, 2, 8)


def test_gradient(make_layer, blob_of):
    x = np.random.default_rng(1).normal(size=(2, 3, 2, 4)).astype(np.float32)
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(text([3, 0, 2, 1])), [blob_of(x)],
                                                          [Blob()])


@pytest.mark.parametrize(("dims", "message"), [([0, 1, 2], "3 dim values"), ([0, 0, 1, 2], "permutation"),
                                               ([0, 1, 2, 4], "permutation")])
def test_refusals(run, dims, message):
    with pytest.raises(LayerSetupError, match=message):
        run(text(dims), [np.zeros((2, 3, 4, 5), dtype=np.float32)])


def test_refuses_in_place(make_layer, blob_of):
    layer = make_layer(text([1, 0]).replace('top: "y"', 'top: "x"'))
    blob = blob_of(np.zeros((2, 3)))
    with pytest.raises(LayerSetupError, match="in-place"):
        layer.setup([blob], [blob])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    x = np.random.default_rng(2).normal(size=(2, 3, 4, 5)).astype(np.float32)
    gpu_matches_cpu(text([3, 2, 0, 1]), [x])
