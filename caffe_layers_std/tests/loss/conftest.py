"""Helpers for the loss-layer tests: running in CPU or GPU mode, and setting a layer up on arrays."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import DeviceError
from caffe_core.layer import Layer


@pytest.fixture(params=["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
def device_mode(request: pytest.FixtureRequest) -> str:
    """Runs the test once on the CPU and once (when cupy and a device exist) in GPU mode."""
    if request.param == "gpu":
        pytest.importorskip("cupy")
        try:
            runtime.set_mode_gpu()
        except DeviceError as err:
            pytest.skip(str(err))
    return request.param


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
