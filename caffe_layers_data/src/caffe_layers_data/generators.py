"""Random generators of the data layers, seeded from the runtime generator.

Each layer or loader owns one, so draws made in a prefetch thread do not race with the main thread's
and `set_random_seed` still reproduces them.
"""

from __future__ import annotations

import numpy as np

from caffe_core import runtime


def derived_generator() -> np.random.Generator:
    """A new generator seeded by one draw from the runtime generator."""
    return np.random.default_rng(int(runtime.rng().integers(2**63)))
