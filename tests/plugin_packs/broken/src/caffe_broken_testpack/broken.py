"""Fails on import, as a pack with a missing dependency would."""

import caffe_missing_dependency_for_tests  # noqa: F401
