"""The core's conformance suite over every layer type of caffe-layers-std: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np

import caffe
from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.testing.conformance import Example, conformance_suite

# Scratch files (InfogainLoss's H), removed when the interpreter exits.
_FILES = tempfile.TemporaryDirectory(prefix="caffe-layers-std-conformance-")


class TwiceLayer(caffe.Layer):
    """A Python layer (loaded back from this very module) computing top = 2 * bottom."""

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        top[0].data[...] = 2 * bottom[0].data

    def backward(self, top, propagate_down, bottom):
        if propagate_down[0]:
            bottom[0].diff[...] = 2 * top[0].diff


def _infogain_matrix_file() -> str:
    """A 5x5 infogain matrix H in a binaryproto (InfogainLoss reads H from a file unless given a bottom)."""
    h = Blob((1, 1, 5, 5))
    h.mutable_cpu_data()[...] = np.eye(5) + 0.1
    path = Path(_FILES.name) / "infogain_H.binaryproto"
    proto_io.write_binary_file(str(path), h.to_proto())
    return str(path)


FILLERS = 'weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "constant" value: 0.1 }'
RNG = np.random.default_rng(3)
LABELS = np.array([0, 2, 4, 1])  # for 4 items of 5 classes
PROBS = RNG.uniform(0.1, 1.0, (4, 5))
POSITIVE = RNG.uniform(0.5, 2.0, (2, 3, 4, 5))
SEQUENCE_CONT = np.array([[0, 0], [1, 1], [1, 0]])  # T=3 steps of N=2 streams; stream 1 restarts at t=2

EXAMPLES = {
    # neuron layers
    "AbsVal": Example(),
    "BNLL": Example(),
    "Clip": Example("clip_param { min: -0.5 max: 0.5 }"),
    "Dropout": Example("dropout_param { dropout_ratio: 0.3 }"),
    "ELU": Example("elu_param { alpha: 0.5 }"),
    "Exp": Example("exp_param { base: 2 scale: 0.5 shift: 0.1 }"),
    "Log": Example("log_param { base: 2 scale: 0.5 shift: 0.1 }", bottoms=[POSITIVE]),
    "Power": Example("power_param { power: 2 scale: 0.5 shift: 0.1 }"),
    "PReLU": Example(),
    "ReLU": Example("relu_param { negative_slope: 0.1 }"),
    "Sigmoid": Example(),
    "Swish": Example("swish_param { beta: 1.5 }"),
    "TanH": Example(),
    "Threshold": Example("threshold_param { threshold: 0.2 }"),
    # common layers
    "ArgMax": Example("argmax_param { top_k: 2 out_max_val: true }", propagate_down=[False]),
    "BatchNorm": Example(),
    "BatchReindex": Example(bottoms=[(4, 3, 2), np.array([3, 0, 2, 2, 1])], propagate_down=[True, False]),
    "Bias": Example(bottoms=[(2, 3, 4, 5), (3, 4)]),
    "Concat": Example("concat_param { axis: 1 }", bottoms=[(2, 3, 4, 5), (2, 2, 4, 5)]),
    "Eltwise": Example("eltwise_param { operation: PROD }", bottoms=[(2, 3, 4, 5), (2, 3, 4, 5)]),
    "Embed": Example(f"embed_param {{ num_output: 3 input_dim: 5 {FILLERS} }}",
                     bottoms=[np.array([[0, 4, 2], [1, 1, 3]])]),
    "Filter": Example(bottoms=[(4, 3, 2), np.array([1, 0, 1, 1])], propagate_down=[True, False]),
    "Flatten": Example(),
    "InnerProduct": Example(f"inner_product_param {{ num_output: 3 {FILLERS} }}"),
    "MVN": Example("mvn_param { across_channels: true }"),
    "Parameter": Example("parameter_param { shape { dim: 2 dim: 3 } }", bottoms=[]),
    "Reduction": Example("reduction_param { operation: SUMSQ axis: 1 coeff: 0.5 }"),
    "Reshape": Example("reshape_param { shape { dim: 0 dim: -1 dim: 5 } }"),
    "Scale": Example("scale_param { bias_term: true }", bottoms=[(2, 3, 4, 5), (3, 4)]),
    "Silence": Example(bottoms=[(2, 3), (4,)], tops=0),
    "Slice": Example("slice_param { axis: 1 slice_point: 1 }", tops=2),
    "Softmax": Example(),
    "Tile": Example("tile_param { axis: 1 tiles: 2 }"),
    # losses and metrics
    "Accuracy": Example("accuracy_param { top_k: 2 }", bottoms=[(4, 5), LABELS],
                        propagate_down=[False, False]),
    "ContrastiveLoss": Example("contrastive_loss_param { margin: 2 }",
                               bottoms=[(4, 3, 1, 1), (4, 3, 1, 1), np.array([1, 0, 0, 1])]),
    "EuclideanLoss": Example(bottoms=[(4, 5), (4, 5)]),
    "HingeLoss": Example("hinge_loss_param { norm: L2 }", bottoms=[(4, 5), LABELS]),
    "InfogainLoss": Example(f'infogain_loss_param {{ source: "{_infogain_matrix_file()}" }}',
                            bottoms=[(4, 5), LABELS]),
    "MultinomialLogisticLoss": Example(bottoms=[PROBS, LABELS]),
    "SigmoidCrossEntropyLoss": Example(bottoms=[(4, 5), RNG.integers(0, 2, (4, 5))]),
    "SoftmaxWithLoss": Example("loss_param { ignore_label: 2 normalization: VALID }",
                               bottoms=[(4, 5), LABELS]),
    # recurrent layers: x (T, N, ...) and cont (T, N)
    "LSTM": Example(f"recurrent_param {{ num_output: 3 {FILLERS} }}", bottoms=[(3, 2, 4), SEQUENCE_CONT]),
    "LSTMUnit": Example(bottoms=[(1, 2, 3), (1, 2, 12), np.array([[1, 0]])], tops=2),
    "RNN": Example(f"recurrent_param {{ num_output: 3 {FILLERS} }}", bottoms=[(3, 2, 4), SEQUENCE_CONT]),
    # a Python layer whose class this module defines
    "Python": Example(f'python_param {{ module: "{__name__}" layer: "TwiceLayer" }}'),
}

# force_backward reaches ArgMax's and Accuracy's inputs, BatchReindex's indices and Filter's selector, which
# have no gradient (Caffe dies there; these layers refuse): their Examples back-propagate elsewhere only.
TestConformance = conformance_suite("caffe-layers-std", examples=EXAMPLES)
