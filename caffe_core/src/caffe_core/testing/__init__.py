"""Public testing utilities for layer packs: Caffe's gradient checker and the golden-case harness."""

from caffe_core.testing.gradient_checker import GradientChecker
from caffe_core.testing.layers import blob_from, build_layer

__all__ = ["GradientChecker", "blob_from", "build_layer"]
