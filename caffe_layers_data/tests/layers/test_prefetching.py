"""The prefetching layer base: first batch at setup, later batches from the thread, errors and shutdown."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.layers.prefetching import BatchLoader, PrefetchingDataLayer


class CountingLoader(BatchLoader):
    """Batch k holds the value k; batch `fail_at` raises instead."""

    def __init__(self, fail_at: int = 0) -> None:
        self.loaded = 0
        self.fail_at = fail_at
        self.closed = threading.Event()

    def load_batch(self) -> list[np.ndarray]:
        """The next numbered batch."""
        self.loaded += 1
        if self.loaded == self.fail_at:
            raise CaffeError(f"record {self.loaded} is bad")
        return [np.full((2, 3), self.loaded, np.float32)]

    def close(self) -> None:
        """Records that the source was released."""
        self.closed.set()


class CountingLayer(PrefetchingDataLayer):
    """A prefetching layer serving a CountingLoader."""

    type = "Counting"

    def __init__(self, loader: CountingLoader) -> None:
        super().__init__(caffe_pb2.LayerParameter(name="count", type="Counting"))
        self.loader = loader

    def create_loader(self, output_labels: bool) -> BatchLoader:
        """The loader given at construction."""
        return self.loader


def _setup(loader: CountingLoader) -> tuple[CountingLayer, Blob]:
    layer, top = CountingLayer(loader), Blob()
    layer.setup([], [top])
    return layer, top


def test_batches_arrive_in_order_starting_with_the_one_loaded_at_setup():
    layer, top = _setup(CountingLoader())
    assert top.shape == (2, 3)
    served = []
    for _ in range(4):
        layer.forward([], [top])
        served.append(float(top.cpu_data()[0, 0]))
    assert served == [1, 2, 3, 4]
    layer.close()


def test_first_batch_error_fails_setup_naming_the_layer_and_closes_the_loader():
    loader = CountingLoader(fail_at=1)
    with pytest.raises(LayerSetupError, match=r"layer 'count' \(type Counting\): record 1 is bad"):
        _setup(loader)
    assert loader.closed.is_set()


def test_later_error_is_raised_by_forward_and_releases_the_loader():
    loader = CountingLoader(fail_at=3)
    layer, top = _setup(loader)
    layer.forward([], [top])
    layer.forward([], [top])
    with pytest.raises(CaffeError, match="record 3 is bad"):
        layer.forward([], [top])
    assert loader.closed.wait(2)


def test_collecting_the_layer_stops_its_thread_and_releases_the_loader():
    loader = CountingLoader()
    layer, top = _setup(loader)
    layer.forward([], [top])
    del layer
    gc.collect()
    assert loader.closed.wait(2)
    threads = [t for t in threading.enumerate() if t.name.startswith("prefetch layer 'count'")]
    assert not any(t.is_alive() for t in threads)
