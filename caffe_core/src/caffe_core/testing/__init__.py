"""Public testing utilities for layer packs: Caffe's gradient checker and the golden-case harness."""

from caffe_core.testing.gradient_checker import GradientChecker

__all__ = ["GradientChecker"]
