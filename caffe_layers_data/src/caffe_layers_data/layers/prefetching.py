"""The base of Caffe's prefetching data layers: a loader fills batches in a background thread.

The first batch is loaded while the net is built, so bad sources, records or settings are reported
then; later errors from the thread are re-raised by the forward pass that needs the batch.
"""

from __future__ import annotations

import logging
import weakref
from abc import ABC, abstractmethod
from collections.abc import Sequence

import numpy as np

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, LayerSetupError
from caffe_core.layer import Layer
from caffe_layers_data.generators import thread_start_draw
from caffe_layers_data.prefetch import Prefetcher

log = logging.getLogger("caffe.data")


class BatchLoader(ABC):
    """Produces batches (one array per top) in order; owns the source it reads."""

    @abstractmethod
    def load_batch(self) -> list[np.ndarray]:
        """The next batch, one array per top."""

    @abstractmethod
    def close(self) -> None:
        """Releases the source."""

    def init_rand(self) -> None:
        """Re-seeds the transformer, as BasePrefetchingDataLayer::LayerSetUp calls InitRand a second time."""
        transformer = getattr(self, "transformer", None)
        if transformer is not None:
            transformer.init_rand()


class PrefetchingDataLayer(Layer):
    """Serves batches a BatchLoader prepares `data_param.prefetch` batches ahead in a thread."""

    exact_num_bottom_blobs = 0
    min_top_blobs = 1
    max_top_blobs = 2

    def create_loader(self, output_labels: bool) -> BatchLoader:
        """Checks the configuration and opens the source; the loader must not refer to the layer."""
        raise NotImplementedError

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates the loader, loads the first batch to shape the tops, and starts the prefetch thread."""
        try:
            loader = self.create_loader(output_labels=len(top) > 1)
        except CaffeError as err:
            raise self.as_setup_error(err) from None
        # Caffe's order of draws from the main stream: the transformer's seed again, then the thread's.
        loader.init_rand()
        thread_start_draw()
        try:
            self._first: list[np.ndarray] | None = loader.load_batch()
        except CaffeError as err:
            loader.close()
            raise self.as_setup_error(err) from None
        except BaseException:
            loader.close()
            raise
        for blob, array in zip(top, self._first, strict=True):
            blob.reshape(array.shape)
        log.info("output data size: %s", ",".join(map(str, self._first[0].shape)))
        self._prefetcher = Prefetcher(loader.load_batch, self.layer_param.data_param.prefetch,
                                      self.describe(), on_close=loader.close)
        weakref.finalize(self, self._prefetcher.close)

    def as_setup_error(self, err: CaffeError) -> LayerSetupError:
        """The error, naming this layer unless it already names one."""
        return err if isinstance(err, LayerSetupError) else self.error(str(err))

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The tops take each batch's shape in forward."""

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Copies the next prefetched batch into the tops."""
        if self._first is not None:
            batch, self._first = self._first, None
        else:
            batch = self._prefetcher.next()
        for blob, array in zip(top, batch, strict=True):
            blob.reshape(array.shape)
            blob.mutable_cpu_data()[...] = array

    def close(self) -> None:
        """Stops prefetching and releases the source (also done when the layer is collected)."""
        self._prefetcher.close()
