"""Data-layer generators: seeded from the runtime generator, reproducible under set_random_seed."""

from __future__ import annotations

from caffe_core import runtime
from caffe_layers_data.generators import derived_generator


def test_generators_repeat_under_the_seed_and_differ_from_each_other():
    runtime.set_random_seed(9)
    first = derived_generator().integers(1 << 30, size=4)
    second = derived_generator().integers(1 << 30, size=4)
    runtime.set_random_seed(9)
    assert derived_generator().integers(1 << 30, size=4).tolist() == first.tolist()
    assert first.tolist() != second.tolist()
