"""DummyData: tops of given shapes filled by fillers (constant fillers once, others at every forward)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


class DummyDataLayer(Layer):
    """Caffe's DummyData layer: 0, 1 or one data_filler per top; `shape` or legacy num/channels/..."""

    type = "DummyData"
    exact_num_bottom_blobs = 0
    min_top_blobs = 1

    def _shapes(self, num_top: int) -> list[tuple[int, ...]]:
        p = self.layer_param.dummy_data_param
        legacy = (p.num, p.channels, p.height, p.width)
        if any(len(field) for field in legacy):
            if len(p.shape):
                raise self.error("give either shape or the legacy num/channels/height/width, not both")
            for name, field in zip(("num", "channels", "height", "width"), legacy, strict=True):
                if len(field) not in (1, num_top):
                    raise self.error(f"{name} must be given once or once per top ({num_top}), "
                                     f"got {len(field)} values")
            return [tuple(int(field[0 if len(field) == 1 else i]) for field in legacy)
                    for i in range(num_top)]
        if len(p.shape) not in (1, num_top):
            raise self.error(f"shape must be given once or once per top ({num_top}), got {len(p.shape)}")
        return [tuple(p.shape[0 if len(p.shape) == 1 else i].dim) for i in range(num_top)]

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes the tops and fills those whose filler is constant."""
        fillers = list(self.layer_param.dummy_data_param.data_filler)
        if len(fillers) not in (0, 1, len(top)):
            raise self.error(f"data_filler must be given 0, 1 or {len(top)} (one per top) times, "
                             f"got {len(fillers)}")
        if not fillers:
            fillers = [caffe_pb2.FillerParameter(type="constant", value=0)]
        self.fillers = [get_filler(f) for f in fillers]
        self.refill = [f.type != "constant" for f in fillers]
        for i, (blob, shape) in enumerate(zip(top, self._shapes(len(top)), strict=True)):
            blob.reshape(shape)
            filler_id = i if len(self.fillers) > 1 else 0
            if not self.refill[filler_id]:
                self.fillers[filler_id].fill(blob)

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top shapes are fixed at setup."""

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Refills the tops whose filler is random."""
        for i, blob in enumerate(top):
            filler_id = i if len(self.fillers) > 1 else 0
            if self.refill[filler_id]:
                self.fillers[filler_id].fill(blob)
