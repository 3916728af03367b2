"""The random streams of the data layers, placed in Caffe's main stream as Caffe places them.

A transformer, and a layer that samples or shuffles with its own `prefetch_rng_`, gets a Caffe stream seeded
by one draw of the main stream when the layer is set up; so `set_random_seed` reproduces Caffe's crops,
mirrors and shuffles, and draws made in a prefetch thread never race with the main thread's.
"""

from __future__ import annotations

import numpy as np

from caffe_core import runtime
from caffe_core.rng.caffe_stream import CaffeStream


def child_stream() -> CaffeStream:
    """A Caffe stream seeded by one caffe_rng_rand() of the main stream."""
    return runtime.rng().child()


def thread_start_draw() -> None:
    """The caffe_rng_rand() Caffe's InternalThread makes to seed a prefetch thread as it starts."""
    runtime.rng().rand()


def unshared_generator() -> np.random.Generator:
    """For shuffles Caffe makes with C's rand() (HDF5Data), which never read Caffe's stream: seeded from
    the seed given to set_random_seed, so that a seeded run repeats."""
    return np.random.default_rng(runtime.random_seed())
