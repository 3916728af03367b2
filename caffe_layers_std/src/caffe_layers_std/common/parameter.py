"""Parameter: exposes a learnable blob as a top, sharing its data and diff."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer


class ParameterLayer(Layer):
    """One learnable blob of parameter_param.shape (zeros unless loaded), shared with the top."""

    type = "Parameter"
    exact_num_bottom_blobs = 0
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Creates the blob (unless stored weights gave it) and shapes the top."""
        shape = tuple(self.layer_param.parameter_param.shape.dim)
        if not self.blobs:
            self.blobs.append(Blob(shape))
        elif self.blobs[0].shape != shape:
            raise self.error(f"the stored blob has shape {self.blobs[0].shape} but parameter_param.shape "
                             f"is {shape}")
        top[0].reshape(shape)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top's shape is fixed at setup."""

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Makes the top share the blob's data and diff."""
        top[0].share_data(self.blobs[0])
        top[0].share_diff(self.blobs[0])

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Nothing to compute: the blob's diff is the top's."""
