"""caffe.Layer: the base class of layers written in Python (`type: "Python"`), as pycaffe's.

Caffe builds the layer as `layer_class(layer_param)`, sets `param_str` and `phase`, then calls
`setup(bottom, top)`, `reshape(bottom, top)`, `forward(bottom, top)` and
`backward(top, propagate_down, bottom)`. Bottoms and tops are lists of blobs with `data`, `diff`,
`shape`, `count`, `num`/`channels`/`height`/`width` and `reshape(*dims)`. Learnable blobs live in
`self.blobs` (grow it with `self.blobs.add_blob(*shape)`); the net trains, saves and shares them.
"""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2


class BlobVec(list):
    """pycaffe's BlobVec: a list of blobs that grows with `add_blob(*shape)`."""

    def add_blob(self, *shape: int) -> None:
        """Appends a new zero-filled blob of the given shape."""
        self.append(Blob(shape))


class Layer:
    """pycaffe's caffe.Layer: subclass it and define setup, reshape, forward and backward."""

    def __init__(self, param: caffe_pb2.LayerParameter | None = None) -> None:
        self.layer_param = param if param is not None else caffe_pb2.LayerParameter(type="Python")
        self.blobs = BlobVec()
        for stored in self.layer_param.blobs:
            blob = Blob()
            blob.from_proto(stored)
            self.blobs.append(blob)
        self.param_str = self.layer_param.python_param.param_str
        self.phase = int(self.layer_param.phase)

    @property
    def type(self) -> str:
        """The layer type, "Python"."""
        return "Python"

    def setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """One-time setup (read `self.param_str`, add learnable blobs); the default does nothing."""

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes the tops from the bottoms; every Python layer must define it."""
        raise NotImplementedError(f"Python layer class {type(self).__name__} must define reshape(bottom, "
                                  "top)")

    def forward(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Computes the tops; every Python layer must define it."""
        raise NotImplementedError(f"Python layer class {type(self).__name__} must define forward(bottom, "
                                  "top)")

    def backward(self, top: Sequence[Blob], propagate_down: Sequence[bool], bottom: Sequence[Blob]) -> None:
        """Writes the bottom (and learnable blob) diffs; needed only when the net back-propagates here."""
        raise NotImplementedError(
            f"Python layer class {type(self).__name__} must define backward(top, propagate_down, bottom)")
