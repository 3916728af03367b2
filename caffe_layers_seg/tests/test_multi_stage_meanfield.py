"""MultiStageMeanfield (CRF as RNN, torrvision/caffe d779ee36): golden cases from the fork's pycaffe, the
lattice's structure, gradient checks with the fork's test settings, refusals and GPU mode."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case
from caffe_layers_seg.permutohedral import PermutohedralLattice, _group_rows

CASES = ["crf_2class_6x7", "crf_3class_6x7", "crf_3class_6x7_dark", "crf_batch2_4class_5x8",
         "crf_5class_9x11_caffemodel"]

# The fork's own gradient test: theta_alpha 5, theta_beta 2, theta_gamma 3, 2 iterations, unit weights.
FORK_TEST = ("num_iterations: 2 theta_alpha: 5 theta_beta: 2 theta_gamma: 3 spatial_filter_weight: 1 "
             "bilateral_filter_weight: 1")


def crf_text(fields: str = FORK_TEST) -> str:
    """A MultiStageMeanfield LayerParameter."""
    return f"name: 'crf' type: 'MultiStageMeanfield' multi_stage_meanfield_param {{ {fields} }}"


def crf_bottoms(num: int, channels: int, height: int, width: int, seed: int = 3) -> list[np.ndarray]:
    """Log-probability unary and softmax input (as the fork's FillAsLogProb) and an RGB image in [0, 255)."""
    rng = np.random.default_rng(seed)

    def log_prob() -> np.ndarray:
        prob = rng.uniform(0.05, 1.0, (num, channels, height, width))
        return np.log(prob / prob.sum(axis=1, keepdims=True)).astype(np.float32)

    image = rng.uniform(0, 255, (num, 3, height, width)).astype(np.float32)
    return [log_prob(), log_prob(), image]


def built(make_layer, blob_of, arrays, fields: str = FORK_TEST):
    """The layer set up on blobs of the arrays, and its bottoms and top."""
    layer = make_layer(crf_text(fields))
    bottom, top = [blob_of(a) for a in arrays], [Blob()]
    layer.setup(bottom, top)
    return layer, bottom, top


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


LATTICE_CASES = [f"{size}_{kind}/c{c}" for size in ("6x7", "5x8") for kind in ("spatial", "bilateral", "dark")
                 for c in (1, 2, 3)]


@pytest.mark.parametrize("case", LATTICE_CASES)
def test_lattice_is_bit_equal_to_the_forks(case):
    # golden/permutohedral_lattice/source.json: the fork's compiled lattice run on these features and values
    stored = np.load(pathlib.Path(__file__).parent / "golden" / "permutohedral_lattice" / "lattice.npz")
    image = case.split("/")[0]
    lattice = PermutohedralLattice(stored[f"{image}/features"][None], np)
    values, values2 = stored[f"{case}/values"][None], stored[f"{case}/values2"][None]
    assert np.array_equal(lattice.compute(np, values)[0], stored[f"{case}/forward"])
    reverse = lattice.compute(np, values2, reverse=True, out=lattice.compute(np, values, reverse=True))
    assert np.array_equal(reverse[0], stored[f"{case}/reverse_add"])


def features(count: int, dims: int, seed: int, scale: float) -> np.ndarray:
    """(2, count, dims) random position features."""
    return (np.random.default_rng(seed).uniform(0, scale, (2, count, dims))).astype(np.float32)


@pytest.mark.parametrize(("dims", "channels"), [(2, 1), (2, 2), (5, 3), (5, 4)])
def test_reverse_filter_is_the_adjoint(dims, channels):
    # K = alpha S^T B_d ... B_0 S with symmetric blurs, so reversing the blur order transposes K.
    lattice = PermutohedralLattice(features(23, dims, dims, 2.0), np)
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2, channels, 23)).astype(np.float32)
    y = rng.normal(size=(2, channels, 23)).astype(np.float32)
    forward = float((lattice.compute(np, x).astype(np.float64) * y).sum())
    adjoint = float((x * lattice.compute(np, y, reverse=True).astype(np.float64)).sum())
    assert forward == pytest.approx(adjoint, rel=1e-5)


def test_lattice_points_are_numbered_first_come_as_the_forks_hash_table():
    # 28 points: a multiple of the SSE block, so no padding point adds lattice points of its own
    lattice = PermutohedralLattice(features(28, 5, 2, 3.0), np)
    offsets = lattice.offsets.ravel() - 1
    _, first = np.unique(offsets, return_index=True)
    assert np.array_equal(offsets[np.sort(first)], np.arange(lattice.size))
    assert np.array_equal(offsets[: 5 + 1], np.arange(6))


def test_padding_points_add_lattice_points():
    # 30 points: the fork's SSE init hashes the vertices of two zero-feature points per image as well
    padded = PermutohedralLattice(features(30, 5, 2, 3.0), np)
    used = np.unique(padded.offsets.ravel())
    assert padded.size > len(used)


def test_images_of_a_batch_share_no_lattice_point():
    both = features(12, 5, 4, 3.0)
    both[1] = both[0]
    lattice = PermutohedralLattice(both, np)
    single = PermutohedralLattice(both[:1], np)
    assert lattice.size == 2 * single.size
    values = np.random.default_rng(2).normal(size=(2, 3, 12)).astype(np.float32)
    values[1] = values[0]
    out = lattice.compute(np, values)
    assert np.array_equal(out[0], out[1])
    assert np.array_equal(out[:1], single.compute(np, values[:1]))


@pytest.mark.parametrize("span", [7, 10**9])
def test_rows_group_as_unique_with_first_occurrences(span):
    # span 7 packs the rows into one int64; 10**9 in 4 columns does not fit and sorts lexicographically
    rng = np.random.default_rng(span)
    rows = rng.integers(0, 3, (200, 4)) * (span // 3) - span // 2
    group, first = _group_rows(rows)
    unique, index, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    assert np.array_equal(first, index)
    assert np.array_equal(rows[first[group]], rows)
    assert np.array_equal(group, inverse.ravel())
    assert len(unique) == len(first)


def test_barycentric_weights_sum_to_one():
    lattice = PermutohedralLattice(features(17, 5, 5, 10.0), np)
    assert np.allclose(lattice.barycentric.sum(axis=1), 1.0, atol=1e-5)
    assert (lattice.barycentric >= -1e-6).all()


def test_blobs_start_at_the_filter_weights_and_potts(make_layer, blob_of):
    layer, _, _ = built(make_layer, blob_of, crf_bottoms(1, 3, 4, 5),
                        "num_iterations: 2 spatial_filter_weight: 3 bilateral_filter_weight: 5")
    eye = np.eye(3, dtype=np.float32)
    assert [b.shape for b in layer.blobs] == [(1, 1, 3, 3)] * 3
    for blob, want in zip(layer.blobs, (3 * eye, 5 * eye, -eye), strict=True):
        assert np.array_equal(blob.cpu_data()[0, 0], want)


def test_zero_kernel_weights_give_the_unary(make_layer, blob_of):
    layer, bottom, top = built(make_layer, blob_of, crf_bottoms(2, 3, 4, 5))
    layer.blobs[0].mutable_cpu_data()[...] = 0
    layer.blobs[1].mutable_cpu_data()[...] = 0
    layer.forward(bottom, top)
    assert np.array_equal(top[0].cpu_data(), bottom[0].cpu_data())


@pytest.mark.parametrize("channels", [2, 3])
@pytest.mark.parametrize("check_bottom", [0, 1])
def test_gradient(make_layer, blob_of, channels, check_bottom):
    arrays = crf_bottoms(2, channels, 3, 4, seed=channels)
    layer = make_layer(crf_text())
    bottom, top = [blob_of(a) for a in arrays], [Blob()]
    checker = GradientChecker(1e-2, 1e-3)
    layer.setup(bottom, top)
    layer.blobs[2].mutable_cpu_data()[0, 0] += np.float32(0.3)
    for index in (0, 7, top[0].count - 1):
        checker.check_gradient_single(layer, bottom, top, check_bottom, 0, index)


def test_inference_keeps_nothing_for_backward(make_layer, blob_of):
    arrays = crf_bottoms(1, 3, 4, 5)
    layer, bottom, top = built(make_layer, blob_of, arrays)
    layer.forward(bottom, top)
    kept = top[0].cpu_data().copy()
    inference, inference_bottom, inference_top = built(make_layer, blob_of, arrays)
    inference.backward_needed = False
    inference.forward(inference_bottom, inference_top)
    assert inference._saved == [] and len(layer._saved) == 2
    assert np.array_equal(inference_top[0].cpu_data(), kept)


def test_parameter_diffs_are_overwritten_as_the_fork_does(make_layer, blob_of):
    layer, bottom, top = built(make_layer, blob_of, crf_bottoms(1, 3, 4, 5))
    layer.forward(bottom, top)
    top[0].mutable_cpu_diff()[...] = 1
    layer.backward(top, [True, True, False], bottom)
    once = [b.cpu_diff().copy() for b in layer.blobs]
    layer.backward(top, [True, True, False], bottom)
    assert all(np.array_equal(b.cpu_diff(), d) for b, d in zip(layer.blobs, once, strict=True))
    assert all(np.abs(d).max() > 0 for d in once)


def test_a_new_image_size_rebuilds_the_spatial_lattice(make_layer, blob_of):
    layer, bottom, top = built(make_layer, blob_of, crf_bottoms(1, 3, 4, 5))
    layer.forward(bottom, top)
    larger = crf_bottoms(2, 3, 6, 7, seed=8)
    for blob, array in zip(bottom, larger, strict=True):
        blob.reshape(array.shape)
        blob.mutable_cpu_data()[...] = array
    layer.reshape(bottom, top)
    layer.forward(bottom, top)
    fresh, fresh_bottom, fresh_top = built(make_layer, blob_of, larger)
    fresh.forward(fresh_bottom, fresh_top)
    assert np.array_equal(top[0].cpu_data(), fresh_top[0].cpu_data())


@pytest.mark.parametrize(("fields", "arrays", "message"), [
    ("num_iterations: 1", crf_bottoms(1, 3, 4, 5), "num_iterations must be greater than 1, got 1"),
    ("num_iterations: 2 theta_beta: 0", crf_bottoms(1, 3, 4, 5), "theta_beta must be positive"),
    (FORK_TEST, crf_bottoms(1, 3, 4, 5)[:2] + [np.zeros((1, 2, 4, 5), np.float32)],
     r"bottom 2 \(image\) has shape \(1, 2, 4, 5\); expected \(1, 3, 4, 5\)"),
    (FORK_TEST, [np.zeros((1, 3, 4, 5), np.float32), np.zeros((1, 2, 4, 5), np.float32),
                 np.zeros((1, 3, 4, 5), np.float32)],
     r"bottom 1 \(softmax input\) has shape \(1, 2, 4, 5\); expected the unary's"),
])
def test_refusals(make_layer, blob_of, fields, arrays, message):
    with pytest.raises(LayerSetupError, match=message):
        built(make_layer, blob_of, arrays, fields)


def test_stored_blobs_of_another_class_count_are_refused(make_layer, blob_of):
    layer = make_layer(crf_text())
    layer.blobs.extend(Blob((1, 1, 2, 2)) for _ in range(3))
    with pytest.raises(LayerSetupError, match=r"stored spatial kernel weights has shape \(1, 1, 2, 2\)"):
        layer.setup([blob_of(a) for a in crf_bottoms(1, 3, 4, 5)], [Blob()])


@pytest.mark.gpu
@pytest.mark.parametrize("channels", [2, 3])
def test_gpu_matches_cpu(gpu_matches_cpu, channels):
    gpu_matches_cpu(crf_text(), crf_bottoms(2, channels, 5, 6), propagate_down=[True, True, False],
                    rtol=1e-4, atol=1e-5)
