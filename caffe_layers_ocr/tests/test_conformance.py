"""The core's conformance suite over every layer type of caffe-layers-ocr: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import numpy as np

from caffe_core.proto import caffe_pb2
from caffe_core.testing.conformance import Example, conformance_suite

RNG = np.random.default_rng(5)
FILLERS = 'weight_filler { type: "gaussian" std: 0.1 }'
DENSE = ('denseblock_param { numTransition: 2 growthRate: 3 use_BC: true Filter_Filler { type: "msra" } '
         'BN_Scaler_Filler { type: "constant" value: 1 } }')
LABELS = np.array([[1, 2, 0], [3, 0, 0]], dtype=np.float32)

TestConformance = conformance_suite("caffe-layers-ocr", skip={}, examples={
    "Transpose": Example("transpose_param { dim: 3 dim: 2 dim: 0 dim: 1 }", bottoms=[(2, 3, 1, 4)]),
    "Reverse": Example("reverse_param { axis: 0 }", bottoms=[(4, 2, 3)]),
    "ContinuationIndicator": Example("continuation_indicator_param { time_step: 4 axis: 1 }",
                                     bottoms=[(4, 2, 3)]),
    "CTCGreedyDecoder": Example("", bottoms=[(6, 2, 4)], phase=caffe_pb2.TEST),
    "CtcLoss": Example("ctc_loss_param { alphabet_size: 4 time_step: 6 }",
                       bottoms=[RNG.normal(size=(6, 2, 4)), LABELS]),
    "WarpCTCLoss": Example("", bottoms=[RNG.normal(size=(6, 2, 4)), LABELS]),
    "LabelsequenceAccuracy": Example("", bottoms=[(2, 6, 4), LABELS], phase=caffe_pb2.TEST),
    # Lstm
    "Lstm": Example(f"lstm_param {{ num_output: 3 {FILLERS} }}", bottoms=[(4, 2, 5)]),
    # DenseBlock
    "DenseBlock": Example(DENSE, bottoms=[(2, 4, 3, 5)]),
})
