"""ContinuationIndicator (jolibrain/caffe): a (time_step, N) top of 0 then 1s, N from the bottom's axis;
refusals; GPU mode."""

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError


def text(time_step=4, axis=None):
    axis_text = "" if axis is None else f" axis: {axis}"
    return (f'name: "ind" type: "ContinuationIndicator" bottom: "x" top: "cont" '
            f'continuation_indicator_param {{ time_step: {time_step}{axis_text} }}')


def test_deepdetect_crnn_use(run):
    # deepdetect's crnn template: permuted_data (T=32, N, C) with axis 1 gives the batch.
    _, _, top = run(text(32, 1), [np.zeros((32, 3, 5), dtype=np.float32)])
    assert top[0].shape == (32, 3)
    expected = np.ones((32, 3))
    expected[0] = 0
    np.testing.assert_array_equal(top[0].cpu_data(), expected)


def test_default_axis_zero_and_negative_axis(run):
    _, _, top = run(text(3), [np.zeros((2, 7), dtype=np.float32)])
    assert top[0].shape == (3, 2)
    _, _, top = run(text(3, -1), [np.zeros((2, 7), dtype=np.float32)])
    assert top[0].shape == (3, 7)


@pytest.mark.parametrize(("time_step", "axis", "message"), [(0, 0, "time_step"), (3, 2, "axis")])
def test_refusals(run, time_step, axis, message):
    with pytest.raises(LayerSetupError, match=message):
        run(text(time_step, axis), [np.zeros((2, 3), dtype=np.float32)])


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(text(5, 1), [np.zeros((5, 2, 3), dtype=np.float32)])
