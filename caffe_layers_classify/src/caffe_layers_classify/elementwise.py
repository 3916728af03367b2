"""The base of the pack's element-wise layers: one bottom, one top of the bottom's shape (in place too)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.layer import Layer


class ElementwiseLayer(Layer):
    """Caffe's NeuronLayer contract: exactly one bottom and one top, shaped like the bottom."""

    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top takes the bottom's shape."""
        top[0].reshape_like(bottom[0])
