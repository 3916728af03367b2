"""Input: tops of fixed shapes that the caller fills (deploy nets, the target of the `input:` upgrade)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.layer import Layer


class InputLayer(Layer):
    """Shapes each top from input_param.shape (one shape for all tops, or one per top)."""

    type = "Input"
    exact_num_bottom_blobs = 0
    min_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reshapes the tops once; their data is the caller's to fill."""
        shapes = self.layer_param.input_param.shape
        if len(shapes) not in (0, 1, len(top)):
            raise self.error(f"input_param must give 0, 1 or {len(top)} (one per top) shapes, "
                             f"got {len(shapes)}")
        for i, blob in enumerate(top):
            if shapes:
                blob.reshape(shapes[0 if len(shapes) == 1 else i].dim)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Keeps whatever shape the caller gave the tops."""

    def forward_on(self, side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Nothing to compute: the caller fills the tops."""
