"""The core's conformance suite over every layer type of caffe-layers-yolo: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack."""

from __future__ import annotations

import numpy as np

from caffe_core.proto import caffe_pb2
from caffe_core.testing.conformance import Example, conformance_suite

RNG = np.random.default_rng(3)
V3 = ("yolov3_detection_output_param { num_classes: 2 num_box: 2 mask_group_num: 2 mask: 2 mask: 3 mask: 0 "
      "mask: 1 anchors_scale: 16 anchors_scale: 8 biases: 10 biases: 14 biases: 23 biases: 27 biases: 37 "
      "biases: 58 biases: 81 biases: 82 }")
V2 = ("yolo_detection_output_param { num_classes: 3 num_box: 2 biases: 1.08 biases: 1.19 biases: 3.42 "
      "biases: 4.41 }")

TestConformance = conformance_suite("caffe-layers-yolo", skip={}, examples={
    "Reorg": Example("reorg_param { stride: 2 }", bottoms=[(2, 8, 4, 6)]),
    "Mish": Example(""),
    "Region": Example('region_param { classes: 2 num: 2 }', bottoms=[(2, 14, 3, 4)]),
    "Pooling": Example("pooling_param { pool: MAX kernel_size: 2 stride: 1 }", bottoms=[(2, 3, 5, 4)]),
    "Yolov3DetectionOutput": Example(V3, bottoms=[RNG.normal(size=(2, 14, 2, 3)),
                                                  RNG.normal(size=(2, 14, 4, 6))], phase=caffe_pb2.TEST),
    "YoloDetectionOutput": Example(V2, bottoms=[RNG.normal(size=(2, 16, 3, 3))], phase=caffe_pb2.TEST),
})
