"""A small CRNN-style net learns to read synthetic text lines: glyphs of a 5 x 3 bitmap font rendered with
random spacing, offset, contrast and noise; convolution features per column, Transpose to time-major,
ContinuationIndicator and BVLC's LSTM, an InnerProduct per step, CtcLoss, trained with Adam; then
CTCGreedyDecoder must read held-out lines exactly."""

from __future__ import annotations

import numpy as np
import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.solvers.factory import create_solver

# Five glyphs (classes 1..5; 0 is the blank), 5 rows x 3 columns each.
FONT = np.array([
    ["###", "#.#", "#.#", "#.#", "###"],
    [".#.", "##.", ".#.", ".#.", "###"],
    ["###", "..#", "###", "#..", "###"],
    ["#.#", "#.#", "###", "..#", "..#"],
    ["##.", "#.#", "##.", "#.#", "##."],
])
GLYPHS = np.array([[[c == "#" for c in row] for row in glyph] for glyph in FONT], dtype=np.float32)
HEIGHT, WIDTH, CLASSES, MAX_LABELS = 7, 24, 6, 4
BATCH = 16


def render(rng: np.random.Generator, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`count` lines (count, 1, HEIGHT, WIDTH) of 2 to 4 glyphs, and their labels padded with the blank."""
    images = np.zeros((count, 1, HEIGHT, WIDTH), dtype=np.float32)
    labels = np.zeros((count, MAX_LABELS), dtype=np.float32)
    for n in range(count):
        length = int(rng.integers(2, MAX_LABELS + 1))
        classes = rng.integers(1, CLASSES, size=length)
        column = int(rng.integers(0, 3))
        row = int(rng.integers(0, 3))
        for c in classes:
            images[n, 0, row:row + 5, column:column + 3] = GLYPHS[c - 1] * rng.uniform(0.7, 1.3)
            column += 3 + int(rng.integers(1, 3))
        labels[n, :length] = classes
    images += rng.normal(0, 0.1, size=images.shape).astype(np.float32)
    return images, labels


FEATURES = f"""
layer {{ name: "conv" type: "Convolution" bottom: "data" top: "conv"
  convolution_param {{ num_output: 16 kernel_h: {HEIGHT} kernel_w: 3 pad_w: 1
    weight_filler {{ type: "xavier" }} bias_filler {{ type: "constant" }} }} }}
layer {{ name: "relu" type: "ReLU" bottom: "conv" top: "conv" }}
layer {{ name: "tr" type: "Transpose" bottom: "conv" top: "tr"
  transpose_param {{ dim: 3 dim: 0 dim: 1 dim: 2 }} }}
layer {{ name: "seq" type: "Reshape" bottom: "tr" top: "seq"
  reshape_param {{ shape {{ dim: 0 dim: 0 dim: -1 }} }} }}
layer {{ name: "cont" type: "ContinuationIndicator" bottom: "seq" top: "cont"
  continuation_indicator_param {{ time_step: {WIDTH} axis: 1 }} }}
layer {{ name: "lstm" type: "LSTM" bottom: "seq" bottom: "cont" top: "lstm"
  recurrent_param {{ num_output: 24 weight_filler {{ type: "uniform" min: -0.1 max: 0.1 }}
    bias_filler {{ type: "constant" }} }} }}
layer {{ name: "fc" type: "InnerProduct" bottom: "lstm" top: "fc"
  inner_product_param {{ num_output: {CLASSES} axis: 2 weight_filler {{ type: "xavier" }}
    bias_filler {{ type: "constant" }} }} }}
"""


def input_layer(name: str, shape: tuple[int, ...]) -> str:
    dims = " ".join(f"dim: {d}" for d in shape)
    return f'layer {{ name: "{name}" type: "Input" top: "{name}" input_param {{ shape {{ {dims} }} }} }}'


TRAIN = (input_layer("data", (BATCH, 1, HEIGHT, WIDTH)) + input_layer("label", (BATCH, MAX_LABELS))
         + FEATURES + f"""
layer {{ name: "loss" type: "CtcLoss" bottom: "fc" bottom: "label" top: "loss"
  ctc_loss_param {{ blank_label: 0 alphabet_size: {CLASSES} time_step: {WIDTH} }} }}""")

HELD_OUT = 32
DEPLOY = (input_layer("data", (HELD_OUT, 1, HEIGHT, WIDTH)) + FEATURES
          + 'layer { name: "decode" type: "CTCGreedyDecoder" bottom: "fc" top: "decoded" }')

SOLVER = """type: "Adam" base_lr: 0.01 momentum: 0.9 momentum2: 0.999 delta: 1e-8 lr_policy: "fixed"
max_iter: 100000 display: 0 random_seed: 3 snapshot_after_train: false"""


@pytest.mark.slow
@pytest.mark.requires_layer_types("Convolution", "ReLU", "Reshape", "LSTM", "InnerProduct", "Input")
def test_trained_crnn_reads_held_out_lines():
    rng = np.random.default_rng(11)
    param = parse_text(SOLVER, caffe_pb2.SolverParameter())
    param.net_param.CopyFrom(parse_text(TRAIN, caffe_pb2.NetParameter()))
    solver = create_solver(param)
    data, label = solver.net.blob_by_name("data"), solver.net.blob_by_name("label")
    losses = []
    for _ in range(800):
        images, labels = render(rng, BATCH)
        data.mutable_cpu_data()[...] = images
        label.mutable_cpu_data()[...] = labels
        solver.step(1)
        losses.append(float(solver.net.blob_by_name("loss").cpu_data()))
    assert np.mean(losses[-50:]) < 0.05 * np.mean(losses[:50])

    deploy = Net(parse_text(DEPLOY, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    deploy.share_trained_layers_with(solver.net)
    images, labels = render(np.random.default_rng(12345), HELD_OUT)
    deploy.blob_by_name("data").mutable_cpu_data()[...] = images
    deploy.forward()
    decoded = deploy.blob_by_name("decoded").cpu_data()[:, :, 0, 0]
    for n in range(HELD_OUT):
        expected = [int(c) for c in labels[n] if c != 0]
        got = [int(c) for c in decoded[n] if c >= 0]
        assert got == expected, f"line {n}: read {got}, rendered {expected}"
