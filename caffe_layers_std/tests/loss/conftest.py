"""Helpers for the loss-layer tests: setting a layer up on arrays and running it forward."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.layer import Layer


@pytest.fixture
def run_forward(make_layer: Callable[..., Layer], blob_of: Callable[..., Blob]) -> Callable[..., tuple]:
    """`run_forward(text, arrays, num_tops=1)`: a layer set up and run forward, with its bottoms and tops."""

    def run(text: str, arrays: list, num_tops: int = 1) -> tuple[Layer, list[Blob], list[Blob]]:
        layer = make_layer(text)
        bottoms = [blob_of(np.asarray(a)) for a in arrays]
        tops = [Blob() for _ in range(num_tops)]
        layer.setup(bottoms, tops)
        layer.forward(bottoms, tops)
        return layer, bottoms, tops

    return run
