"""The core's conformance suite over every layer type of caffe-layers-seg: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import numpy as np

from caffe_core.proto import caffe_pb2
from caffe_core.testing.conformance import Example, conformance_suite


def _mask(shape: tuple[int, ...], scale: int) -> np.ndarray:
    """A pooling mask sending each value to the top-left of its scale x scale block."""
    height, width = shape[2:]
    rows, cols = np.divmod(np.arange(height * width), width)
    index = (rows * scale) * (width * scale) + cols * scale
    return np.broadcast_to(index.reshape(height, width), shape).astype(np.float32)


TestConformance = conformance_suite("caffe-layers-seg", examples={
    "BN": Example("bn_param { slope_filler { type: 'constant' value: 1 } momentum: 0.9 }",
                  bottoms=[(2, 3, 4, 5)]),
    "BatchNormKyle": Example("batch_norm_param { use_alpha_beta: true }", bottoms=[(2, 3, 4, 5)]),
    "Dropout": Example("dropout_param { dropout_ratio: 0.3 sample_weights_test: true }",
                       phase=caffe_pb2.TEST),
    "BilinearInterpolate": Example("bilinear_interpolate_param { dst_h: 7 dst_w: 9 }",
                                   bottoms=[(2, 3, 4, 5)]),
    "Interp": Example("interp_param { zoom_factor: 2 }", bottoms=[(2, 3, 4, 5)]),
    # crfasrnn
    "MultiStageMeanfield": Example("multi_stage_meanfield_param { num_iterations: 2 theta_alpha: 5 "
                                   "theta_beta: 2 theta_gamma: 3 }", bottoms=[(2, 3, 4, 5)] * 3),
    "MaxUnPool": Example("max_unpool_param { dst_h: 8 dst_w: 10 }",
                         bottoms=[(2, 3, 4, 5), _mask((2, 3, 4, 5), 2)]),
    "Pad": Example("pad_param { pad_type: REFLECT pad_u: 1 pad_d: 2 pad_l: 2 pad_r: 1 }",
                   bottoms=[(2, 3, 4, 5)]),
    "PixelShuffle": Example("pixelshuffle_param { upscale_factor: 2 }", bottoms=[(2, 8, 3, 4)]),
    # PSANet
    "PointwiseSpatialAttention": Example("pointwise_spatial_attention_param { psa_type: DISTRIBUTE "
                                         "is_softmax: true }", bottoms=[(2, 3, 3, 4), (2, 35, 3, 4)]),
    "Resize": Example("resize_param { height: 8 width: 7 }", bottoms=[(2, 3, 4, 5)]),
    "Upsample": Example("upsample_param { scale: 2 }", bottoms=[(2, 3, 4, 5), _mask((2, 3, 4, 5), 2)]),
}, skip={"DenseImageData": "reads image files named by a list file (test_dense_image_data.py writes them)"})
