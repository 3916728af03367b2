"""The core's conformance suite over every layer type of caffe-layers-ocr: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

from caffe_core.testing.conformance import Example, conformance_suite

FILLERS = 'weight_filler { type: "gaussian" std: 0.1 }'
DENSE = ('denseblock_param { numTransition: 2 growthRate: 3 use_BC: true Filter_Filler { type: "msra" } '
         'BN_Scaler_Filler { type: "constant" value: 1 } }')

TestConformance = conformance_suite("caffe-layers-ocr", examples={
    # Lstm
    "Lstm": Example(f"lstm_param {{ num_output: 3 {FILLERS} }}", bottoms=[(4, 2, 5)]),
    # DenseBlock
    "DenseBlock": Example(DENSE, bottoms=[(2, 4, 3, 5)]),
})
