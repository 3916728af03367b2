"""The core's conformance suite over every layer type of caffe-layers-vision: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

from caffe_core.testing.conformance import Example, conformance_suite

FILLERS = 'weight_filler { type: "gaussian" std: 0.1 } bias_filler { type: "constant" value: 0.1 }'

TestConformance = conformance_suite("caffe-layers-vision", skip={}, examples={
    "Convolution": Example(f"convolution_param {{ num_output: 4 kernel_size: 3 stride: 2 pad: 1 group: 1 "
                           f"dilation: 1 {FILLERS} }}", bottoms=[(2, 3, 6, 5)]),
    "Crop": Example("crop_param { axis: 2 offset: 1 offset: 2 }", bottoms=[(2, 3, 6, 7), (2, 3, 4, 4)]),
    "Deconvolution": Example(f"convolution_param {{ num_output: 4 kernel_size: 3 stride: 2 group: 1 "
                             f"{FILLERS} }}", bottoms=[(2, 3, 4, 5)]),
    "Im2col": Example("convolution_param { kernel_size: 2 stride: 1 pad: 1 }", bottoms=[(2, 3, 4, 5)]),
    "LRN": Example("lrn_param { local_size: 3 alpha: 0.5 beta: 0.75 }", bottoms=[(2, 5, 4, 4)]),
    "Pooling": Example("pooling_param { pool: MAX kernel_size: 3 stride: 2 pad: 1 }", bottoms=[(2, 3, 6, 5)]),
    "SPP": Example("spp_param { pyramid_height: 2 pool: AVE }", bottoms=[(2, 3, 6, 5)]),
})
