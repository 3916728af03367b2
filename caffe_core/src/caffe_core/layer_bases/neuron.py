"""NeuronLayer: Caffe's base of element-wise layers, one bottom and one top of its shape."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.layer import Layer


class NeuronLayer(Layer):
    """One bottom, one top shaped like it; in place (top is bottom) unless a subclass refuses it."""

    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Gives the top the bottom's shape."""
        top[0].reshape_like(bottom[0])
