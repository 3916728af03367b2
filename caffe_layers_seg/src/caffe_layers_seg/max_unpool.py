"""MaxUnPool of inisis: unpooling through a MAX pooling mask into a plane of a given size."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg.unpool_ops import MaskUnpoolLayer


class MaxUnPoolLayer(MaskUnpoolLayer):
    """Writes each value at the position its mask names in a zeroed (dst_h, dst_w) plane."""

    type = "MaxUnPool"
    # The true gradient (inisis has no backward): the top diff at the position a value was kept at.
    backward_gathers_winners = True
    out_size: tuple[int, int]

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads dst_h and dst_w (both required)."""
        param = get_param_block(self.layer_param, "max_unpool_param")
        if not (param.HasField("dst_h") and param.HasField("dst_w")):
            raise self.error("max_unpool_param.dst_h and max_unpool_param.dst_w are required")
        if param.dst_h == 0 or param.dst_w == 0:
            raise self.error(f"max_unpool_param.dst_h and dst_w must be positive, got {param.dst_h} x "
                             f"{param.dst_w}")
        self.out_size = (param.dst_h, param.dst_w)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, dst_h, dst_w)."""
        if bottom[1].shape != bottom[0].shape:
            raise self.error(f"the mask shape {list(bottom[1].shape)} differs from the input shape "
                             f"{list(bottom[0].shape)}")
        top[0].reshape((bottom[0].num, bottom[0].channels, *self.out_size))

    def out_of_range(self, position: int, plane: int) -> str:
        """inisis' words."""
        return (f"unpool top index {position} out of range: max_unpool_param.dst_h x dst_w is "
                f"{self.out_size[0]} x {self.out_size[1]}")
