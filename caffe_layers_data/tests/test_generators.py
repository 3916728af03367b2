"""Data-layer streams: placed in Caffe's main stream as Caffe places them, and reproducible under a seed."""

from __future__ import annotations

from caffe_core import runtime
from caffe_core.rng.caffe_stream import CaffeStream
from caffe_layers_data.generators import child_stream, thread_start_draw, unshared_generator


def test_each_child_stream_is_seeded_by_the_next_draw_of_the_main_stream():
    reference = CaffeStream(9)
    runtime.set_random_seed(9)
    assert child_stream().seed == reference.rand()
    thread_start_draw()
    reference.rand()
    assert child_stream().seed == reference.rand()


def test_the_unshared_generator_repeats_under_the_seed_and_leaves_the_main_stream_alone():
    runtime.set_random_seed(9)
    first = unshared_generator().integers(1 << 30, size=4)
    assert runtime.rng().rand() == CaffeStream(9).rand()
    runtime.set_random_seed(9)
    assert unshared_generator().integers(1 << 30, size=4).tolist() == first.tolist()
