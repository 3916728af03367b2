"""InfogainLoss: golden case, H from a file or a bottom, axis, ignore_label, prob top, gradient, refusals."""

import numpy as np
import pytest

from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker
from caffe_core.testing.golden import check_layer_case


def caffe_data(seed: int = 1701) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Caffe's test blobs: 4x2x5x2 Gaussian logits with the infogain axis 2, labels 4x2x1x2, H 5x5 uniform."""
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 2, 5, 2)), rng.integers(0, 5, (4, 2, 1, 2)).astype(float),
            rng.uniform(0, 1, (1, 1, 5, 5)))


def reference(x: np.ndarray, labels: np.ndarray, h: np.ndarray, ignore: int | None, mode: str) -> float:
    z = np.moveaxis(x.astype(np.float64), 2, -1).reshape(-1, 5)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    lab = labels.reshape(-1).astype(int)
    valid = lab != ignore if ignore is not None else np.ones(lab.shape, bool)
    rows = h.reshape(5, 5)[np.where(valid, lab, 0)]
    loss = -(rows * np.log(np.maximum(p, 1e-20))).sum(axis=1)[valid].sum()
    norm = {"VALID": valid.sum(), "FULL": lab.size, "BATCH_SIZE": 8, "NONE": 1}[mode]
    return loss / max(norm, 1)


@pytest.mark.parametrize("case", ["infogainloss", "infogainloss_prob_top"])
def test_golden(golden_case, device_mode, case):
    assert check_layer_case(golden_case(case)) == []


def test_golden_bit_exact(golden_bit_exact):
    assert golden_bit_exact("infogainloss") == []


@pytest.mark.parametrize("mode", ["VALID", "FULL", "BATCH_SIZE", "NONE"])
@pytest.mark.parametrize("ignore", [None, 1])
def test_forward_with_h_bottom(run_forward, mode, ignore):
    x, labels, h = caffe_data()
    ignore_text = f"ignore_label: {ignore}" if ignore is not None else ""
    _, _, tops = run_forward(f'name: "l" type: "InfogainLoss" infogain_loss_param {{ axis: 2 }} '
                             f'loss_param {{ normalization: {mode} {ignore_text} }}', [x, labels, h])
    np.testing.assert_allclose(float(tops[0].cpu_data()), reference(x, labels, h, ignore, mode), rtol=1e-5)


def test_h_from_source_file(run_forward, blob_of, tmp_path):
    x, labels, h = caffe_data()
    path = tmp_path / "H.binaryproto"
    proto_io.write_binary_file(path, blob_of(h).to_proto())
    text = f'name: "l" type: "InfogainLoss" infogain_loss_param {{ axis: 2 source: "{path}" }}'
    _, _, tops = run_forward(text, [x, labels])
    np.testing.assert_allclose(float(tops[0].cpu_data()), reference(x, labels, h, None, "VALID"), rtol=1e-5)


def test_missing_source(make_layer, blob_of):
    x, labels, _ = caffe_data()
    with pytest.raises(LayerSetupError, match="source"):
        make_layer('name: "l" type: "InfogainLoss"').setup([blob_of(x), blob_of(labels)], [Blob()])


def test_unreadable_source(make_layer, blob_of, tmp_path):
    x, labels, _ = caffe_data()
    layer = make_layer(f'name: "l" type: "InfogainLoss" infogain_loss_param {{ source: "{tmp_path}/none" }}')
    with pytest.raises(LayerSetupError, match="cannot read"):
        layer.setup([blob_of(x), blob_of(labels)], [Blob()])


def test_h_must_be_square_in_the_labels(make_layer, blob_of):
    x, labels, _ = caffe_data()
    layer = make_layer('name: "l" type: "InfogainLoss" infogain_loss_param { axis: 2 }')
    with pytest.raises(LayerSetupError, match="5x5"):
        layer.setup([blob_of(x), blob_of(labels), blob_of(np.eye(4))], [Blob()])


def test_normalize_refused(make_layer, blob_of):
    x, labels, h = caffe_data()
    layer = make_layer('name: "l" type: "InfogainLoss" loss_param { normalize: true }')
    with pytest.raises(LayerSetupError, match="deprecated"):
        layer.setup([blob_of(x), blob_of(labels), blob_of(h)], [Blob()])


def test_prob_top(run_forward):
    x, labels, h = caffe_data()
    layer, _, tops = run_forward('name: "l" type: "InfogainLoss" infogain_loss_param { axis: 2 }',
                                 [x, labels, h], num_tops=2)
    assert (layer.loss(0), layer.loss(1)) == (1.0, 0.0)
    e = np.exp(x - x.max(axis=2, keepdims=True))
    np.testing.assert_allclose(tops[1].cpu_data(), e / e.sum(axis=2, keepdims=True), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("extra", ["", "loss_param { ignore_label: 1 }"])
def test_gradient(make_layer, blob_of, extra):
    x, labels, h = caffe_data()
    layer = make_layer(f'name: "l" type: "InfogainLoss" infogain_loss_param {{ axis: 2 }} {extra}')
    GradientChecker(1e-4, 2e-2, 1701).check_gradient_exhaustive(
        layer, [blob_of(x), blob_of(labels), blob_of(h)], [Blob()], check_bottom=0)


def test_gradient_of_the_loss_with_a_prob_top(make_layer, blob_of):
    x, labels, h = caffe_data()
    layer = make_layer('name: "l" type: "InfogainLoss" infogain_loss_param { axis: 2 }')
    bottom, top = [blob_of(x[:2]), blob_of(labels[:2]), blob_of(h)], [Blob(), Blob()]
    layer.setup(bottom, top)
    GradientChecker(1e-2, 1e-2, 1701).check_gradient_single(layer, bottom, top, 0, 0, 0)


def test_backward_ignores_the_prob_tops_diff_as_caffe(run_forward):
    x, labels, h = caffe_data()
    layer, bottoms, tops = run_forward('name: "l" type: "InfogainLoss" infogain_loss_param { axis: 2 }',
                                       [x, labels, h], num_tops=2)
    tops[0].mutable_cpu_diff()[...] = 1
    layer.backward(tops, [True, False, False], bottoms)
    without = bottoms[0].cpu_diff().copy()
    tops[1].mutable_cpu_diff()[...] = np.random.default_rng(3).standard_normal(tops[1].shape)
    layer.backward(tops, [True, False, False], bottoms)
    np.testing.assert_array_equal(bottoms[0].cpu_diff(), without)


def test_force_backward_reaches_h_and_is_refused(run_forward):
    x, labels, h = caffe_data()
    layer, bottoms, tops = run_forward('name: "l" type: "InfogainLoss" infogain_loss_param { axis: 2 }',
                                       [x, labels, h])
    assert layer.allow_force_backward(2)
    with pytest.raises(LayerSetupError, match="infogain matrix H"):
        layer.backward(tops, [True, False, True], bottoms)
