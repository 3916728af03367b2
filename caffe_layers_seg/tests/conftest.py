"""caffe_layers_seg's own test fixture; CPU mode, seed 1701, `make_layer`, `blob_of`, `gaussian`,
`golden_case` and `gpu_matches_cpu` come from the core's pytest plugin."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


@pytest.fixture
def run_layer(make_layer: Callable[..., Layer]) -> Callable[..., tuple[Layer, Blob]]:
    """`run_layer(text, bottoms, phase=TRAIN, setup=None)`: the layer and its one top after setup (then
    `setup(layer)`, when given) and forward."""

    def run(text: str, bottoms: Sequence[Blob], phase: int = caffe_pb2.TRAIN,
            setup: Callable[[Layer], None] | None = None) -> tuple[Layer, Blob]:
        layer = make_layer(text, phase)
        top = Blob()
        layer.setup(bottoms, [top])
        if setup is not None:
            setup(layer)
        layer.forward(bottoms, [top])
        return layer, top

    return run
