"""The conformance suite over the core's own layer types (Input, Split) and the core's declarations."""

from __future__ import annotations

from caffe_core.testing.conformance import Example, conformance_suite

TestConformance = conformance_suite("caffe-core", skip={}, examples={
    "Input": Example("input_param { shape { dim: 2 dim: 3 } shape { dim: 4 } }", bottoms=[], tops=2),
    "Split": Example(bottoms=[(2, 3, 4)], tops=3),
})
