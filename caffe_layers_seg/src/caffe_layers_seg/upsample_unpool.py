"""Upsample of SegNet and ENet: unpooling through the MAX pooling mask of the matching encoder layer."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg.unpool_ops import MaskUnpoolLayer

SEGNET_DEFAULT_SCALE = 2


class UnpoolUpsampleLayer(MaskUnpoolLayer):
    """Writes each value at the position its pooling mask names in a zeroed, larger plane (SegNet's rules)."""

    type = "Upsample"

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool:
        """layers with two bottoms (values and a MAX pooling mask)."""
        return len(param.bottom) == 2

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the output size (upsample_h/w) or the deprecated scale, scale_h/w and pad_out_h/w."""
        param = get_param_block(self.layer_param, "upsample_param")
        has = param.HasField
        if not ((has("upsample_h") and has("upsample_w"))
                or (not has("scale") and has("scale_h") and has("scale_w"))
                or (not has("scale_h") and not has("scale_w"))):
            raise self.error("upsample_param needs upsample_h and upsample_w, else (deprecated) scale OR "
                             "scale_h and scale_w")
        self.out_size: tuple[int, int] | None = None
        if has("upsample_h") and has("upsample_w"):
            for name in ("upsample_h", "upsample_w"):
                if getattr(param, name) <= 1:
                    raise self.error(f"upsample_param.{name} must be greater than 1, got "
                                     f"{getattr(param, name)}")
            self.out_size = (param.upsample_h, param.upsample_w)
            return
        if has("scale_h"):
            self.scale = (param.scale_h, param.scale_w)
            names = ("scale_h", "scale_w")
        else:
            scale = param.scale if has("scale") else SEGNET_DEFAULT_SCALE
            self.scale = (scale, scale)
            names = ("scale", "scale")
        for name, value in zip(names, self.scale, strict=True):
            if value <= 1:
                raise self.error(f"upsample_param.{name} must be greater than 1, got {value}")
        self.pad_out = (int(param.pad_out_h), int(param.pad_out_w))
        for axis, name in enumerate(("h", "w")):
            if self.pad_out[axis] and self.scale[axis] != 2:
                raise self.error(f"upsample_param.pad_out_{name} needs scale_{name} 2 (got "
                                 f"{self.scale[axis]}): otherwise the output size is ill-defined")

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: (N, C, upsample_h, upsample_w), or H scale_h - pad_out_h (fixed at the first call)."""
        if bottom[0].shape != bottom[1].shape:
            raise self.error(f"the mask shape {list(bottom[1].shape)} differs from the input shape "
                             f"{list(bottom[0].shape)}")
        if self.out_size is None:
            # SegNet computes the size from the first bottom it sees and keeps it.
            self.out_size = (bottom[0].height * self.scale[0] - self.pad_out[0],
                             bottom[0].width * self.scale[1] - self.pad_out[1])
        top[0].reshape((bottom[0].num, bottom[0].channels, *self.out_size))

    def out_of_range(self, position: int, plane: int) -> str:
        """SegNet's words."""
        return (f"upsample top index {position} out of range (the output plane has {plane} positions): check "
                f"the scale settings match the input pooling layer's downsampling")
