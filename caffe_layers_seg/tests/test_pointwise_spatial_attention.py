"""PointwiseSpatialAttention (PSANet): golden cases, a loop reference of the attention buffer in both modes,
mask sizes and normalisation, the gradient with and without the softmax, refusals and CPU/GPU parity."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_layers_seg.pointwise_spatial_attention import buffer_index, mask_index


def psa_text(params: str = "") -> str:
    """A PointwiseSpatialAttention layer with this pointwise_spatial_attention_param text."""
    return (f"name: 'psa' type: 'PointwiseSpatialAttention' bottom: 'x' bottom: 'mask' top: 'y' "
            f"pointwise_spatial_attention_param {{ {params} }}")


def loop_buffer(mask, height, width, mask_height, mask_width, collect):
    """The (N, HW, HW) buffer filled position by position and mask entry by mask entry."""
    num = mask.shape[0]
    half_h, half_w = (mask_height - 1) // 2, (mask_width - 1) // 2
    buffer = np.zeros((num, height * width, height * width))
    for h in range(height):
        for w in range(width):
            for hidx in range(max(0, half_h - h), min(mask_height, height + half_h - h)):
                for widx in range(max(0, half_w - w), min(mask_width, width + half_w - w)):
                    q = (hidx + h - half_h) * width + widx + w - half_w
                    p = h * width + w
                    value = mask[:, hidx * mask_width + widx, h, w]
                    if collect:
                        buffer[:, q, p] = value
                    else:
                        buffer[:, p, q] = value
    return buffer


def reference(x, mask, mask_height, mask_width, collect, softmax, factor):
    """top[n] = x[n] @ A[n] / factor in float64, A the loop buffer, softmax along its rows' axis (1)."""
    num, channels, height, width = x.shape
    buffer = loop_buffer(mask.astype(np.float64), height, width, mask_height, mask_width, collect)
    if softmax:
        e = np.exp(buffer - buffer.max(axis=1, keepdims=True))
        buffer = e / e.sum(axis=1, keepdims=True)
    return (x.reshape(num, channels, -1).astype(np.float64) @ buffer / factor).reshape(x.shape)


@pytest.mark.parametrize("case", ["psa_collect_softmax", "psa_distribute_softmax", "psa_collect_mask_5x3",
                                  "psa_distribute_mask_3x5_factor"])
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


@pytest.mark.parametrize("psa_type", ["COLLECT", "DISTRIBUTE"])
@pytest.mark.parametrize(("mask", "softmax", "factor"), [
    ("", False, None), ("", True, "1.0"), ("attention_mask_height: 3 attention_mask_width: 5", True, None),
    ("attention_mask_height: 9 attention_mask_width: 3", False, "2.5")])
def test_forward_against_loop_reference(run_layer, gaussian, psa_type, mask, softmax, factor):
    height, width = 3, 4
    mask_height, mask_width = (2 * height - 1, 2 * width - 1) if not mask else (
        int(mask.split()[1]), int(mask.split()[3]))
    params = f"psa_type: {psa_type} is_softmax: {str(softmax).lower()} {mask}"
    params += f" normalization_factor: {factor}" if factor else ""
    x, attention = gaussian((2, 3, height, width)), gaussian((2, mask_height * mask_width, height, width))
    _, top = run_layer(psa_text(params), [x, attention])
    expected = reference(x.cpu_data(), attention.cpu_data(), mask_height, mask_width, psa_type == "COLLECT",
                         softmax, float(factor) if factor else mask_height * mask_width)
    np.testing.assert_allclose(top.cpu_data(), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("collect", [True, False])
def test_mask_index_inverts_buffer_index(collect):
    """Every mask entry inside the map goes to one buffer entry and back; those outside read the zero slot."""
    index = buffer_index(3, 4, 5, 3, collect)
    inverse = mask_index(index, 15)
    inside = inverse < 12 * 12
    assert inside.sum() == (index < 15 * 12).sum()
    np.testing.assert_array_equal(index.ravel()[inverse[inside]], np.flatnonzero(inside))


def test_the_softmax_counts_entries_no_mask_reaches(run_layer, blob_of):
    """With a 3 x 3 mask on a 1 x 4 map, a column of the buffer holds 2 or 3 mask values and 0 elsewhere;
    PSANet's Softmax runs over the whole column, so all-zero masks weigh each of the 4 positions 1 / 4 (a
    softmax over the reached entries alone would give position 0 the mean of x[0] and x[1])."""
    x = blob_of(np.arange(4, dtype=np.float32).reshape(1, 1, 1, 4))
    mask = blob_of(np.zeros((1, 9, 1, 4), np.float32))
    params = "attention_mask_height: 3 attention_mask_width: 3 is_softmax: true normalization_factor: 1"
    _, top = run_layer(psa_text(params), [x, mask])
    np.testing.assert_allclose(top.cpu_data(), np.full((1, 1, 1, 4), 1.5), rtol=1e-6)


def test_gradient_without_softmax(make_layer, gaussian):
    layer = make_layer(psa_text("psa_type: DISTRIBUTE attention_mask_height: 3 attention_mask_width: 5"))
    bottom = [gaussian((2, 2, 3, 4)), gaussian((2, 15, 3, 4))]
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, bottom, [Blob()])


@pytest.mark.parametrize("psa_type", ["COLLECT", "DISTRIBUTE"])
def test_gradient_with_softmax(make_layer, gaussian, psa_type):
    layer = make_layer(psa_text(f"psa_type: {psa_type} is_softmax: true normalization_factor: 1.0"))
    bottom = [gaussian((2, 2, 2, 3)), gaussian((2, 15, 2, 3))]
    GradientChecker(1e-2, 1e-2).check_gradient_exhaustive(layer, bottom, [Blob()])


@pytest.mark.parametrize(("params", "shapes", "message"), [
    ("attention_mask_height: 3", [(1, 2, 3, 3), (1, 9, 3, 3)], "must both be set or both be unset"),
    ("attention_mask_height: 4 attention_mask_width: 3", [(1, 2, 3, 3), (1, 12, 3, 3)],
     "attention_mask_height must be an odd number above 1, got 4"),
    ("attention_mask_height: 3 attention_mask_width: 1", [(1, 2, 3, 3), (1, 3, 3, 3)],
     "attention_mask_width must be an odd number above 1, got 1"),
    ("", [(1, 2, 3, 3), (1, 9, 3, 3)], "bottom.1. has 9 channels; expected .* = 5 . 5 = 25"),
    ("", [(1, 2, 2, 2), (1, 9, 2, 3)], "same width"),
    ("", [(1, 2, 2, 2), (2, 9, 2, 2)], "same num"),
    ("normalization_factor: 0", [(1, 2, 2, 2), (1, 9, 2, 2)], "normalization_factor must not be 0"),
    ("is_softmax: true } softmax_param { axis: 4", [(1, 2, 2, 2), (1, 9, 2, 2)], "axis 4 is out of range"),
    ("", [(1, 2, 4), (1, 9, 2, 2)], "4 axes"),
])
def test_refusals(run_layer, gaussian, params, shapes, message):
    with pytest.raises(LayerSetupError, match=message):
        run_layer(psa_text(params), [gaussian(shape) for shape in shapes])


@pytest.mark.gpu
@pytest.mark.parametrize("params", ["psa_type: COLLECT is_softmax: true",
                                    "psa_type: DISTRIBUTE attention_mask_height: 3 attention_mask_width: 3"])
def test_gpu_matches_cpu(gpu_matches_cpu, gaussian, params):
    gpu_matches_cpu(psa_text(params), [gaussian((2, 3, 3, 4)).cpu_data(),
                                       gaussian((2, 35 if "COLLECT" in params else 9, 3, 4)).cpu_data()])
