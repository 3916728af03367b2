"""Every learnable param's diff in one flat buffer, cut into buckets in the order backward completes them."""

from __future__ import annotations

import dataclasses

from caffe_core.array_types import Array
from caffe_core.device import Side
from caffe_core.net import Net

MIN_BUCKET_BYTES = 64 * 1024


@dataclasses.dataclass(frozen=True)
class Bucket:
    """A contiguous stretch [start, stop) of the flat buffer, complete once backward passes `ready_layer`."""

    start: int
    stop: int
    ready_layer: int


def ready_layers(net: Net) -> list[int]:
    """Per learnable param, the lowest layer using it: its diff is final once backward passes that layer."""
    ready = [len(net.layers)] * len(net.learnable_params)
    for param in net.graph.params:  # a shared param's learnable id is its owner's
        ready[param.learnable_id] = min(ready[param.learnable_id], param.layer_id)
    return ready


class FlatGradients:
    """The net's param diffs as views of one buffer on a side, and the buckets to reduce as backward goes."""

    def __init__(self, net: Net, side: Side, min_bucket_bytes: int = MIN_BUCKET_BYTES) -> None:
        ready = ready_layers(net)
        # Backward finishes the params of later layers first, so they lead the buffer.
        order = sorted(range(len(net.learnable_params)), key=lambda i: -ready[i])
        total = sum(net.learnable_params[i].count for i in order)
        xp = side.xp
        self.side = side
        self.buffer: Array = xp.zeros(total, dtype=xp.float32)
        self.buckets: list[Bucket] = []
        offset, start = 0, 0
        for position, index in enumerate(order):
            blob = net.learnable_params[index]
            view = self.buffer[offset: offset + blob.count]
            view[...] = blob.diff_on(side).reshape(-1)
            memory = blob.diff_memory
            memory.set_cpu_data(view) if side.name == "cpu" else memory.set_gpu_data(view)
            offset += blob.count
            last = position == len(order) - 1
            full = (offset - start) * 4 >= min_bucket_bytes
            if last or full and ready[order[position + 1]] != ready[index]:
                self.buckets.append(Bucket(start, offset, ready[index]))
                start = offset
        self.launch_at: dict[int, list[Bucket]] = {}
        for bucket in self.buckets:
            self.launch_at.setdefault(bucket.ready_layer, []).append(bucket)

    def view(self, bucket: Bucket) -> Array:
        """The bucket's stretch of the buffer."""
        return self.buffer[bucket.start: bucket.stop]
