"""Public testing utilities for layer packs: Caffe's gradient checker and the golden-case harness."""

from caffe_core.testing.gradient_checker import GradientChecker
from caffe_core.testing.layers import blob_from, build_layer, current_side, require_layer_types, to_host

__all__ = ["GradientChecker", "blob_from", "build_layer", "current_side", "require_layer_types", "to_host"]
