"""A memory planner for nets that run no backward: blobs whose lifetimes do not overlap share storage.

A blob's storage is its data SyncedMemory; Split, Flatten, Reshape and the like make several blobs share
one, so the planner works on storages. A storage is live from the first layer that writes one of its blobs
to the last layer that reads or writes one (in-place layers simply extend it); storages whose live ranges
are disjoint may overlap in one shared arena. Inputs, outputs, kept blobs and storages a layer's parameters
own are never shared.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from caffe_core.device import Side
from caffe_core.net_graph import NetGraph
from caffe_core.synced_memory import SyncedMemory

BYTES_PER_VALUE = np.dtype(np.float32).itemsize


@dataclass
class Storage:
    """One data buffer of the net, the blobs that use it and the layers between which it is live."""

    memory: SyncedMemory
    blob_ids: list[int]
    first_layer: int
    last_layer: int

    @property
    def count(self) -> int:
        """Values the buffer holds."""
        return self.memory.count


@dataclass
class MemoryPlan:
    """Where each storage lies in one shared arena, and what that saves."""

    storages: list[Storage]
    offsets: list[int]
    kept_count: int

    @property
    def arena_count(self) -> int:
        """Values the shared arena holds."""
        return max((o + s.count for o, s in zip(self.offsets, self.storages, strict=True)), default=0)

    def overlaps(self, i: int, j: int) -> bool:
        """Whether storages i and j use some of the same arena values."""
        return self.offsets[i] < self.offsets[j] + self.storages[j].count and \
            self.offsets[j] < self.offsets[i] + self.storages[i].count

    def overwritten(self, blob_id: int, end: int) -> bool:
        """Whether a forward through layer `end` overwrites the planned blob `blob_id` after its last use."""
        index = next(i for i, storage in enumerate(self.storages) if blob_id in storage.blob_ids)
        last = self.storages[index].last_layer
        return any(last < other.first_layer <= end and self.overlaps(index, i)
                   for i, other in enumerate(self.storages))

    @property
    def bytes_without(self) -> int:
        """Bytes every blob's own buffer would take."""
        return (self.kept_count + sum(s.count for s in self.storages)) * BYTES_PER_VALUE

    @property
    def bytes_with(self) -> int:
        """Bytes the shared arena plus the kept buffers take."""
        return (self.kept_count + self.arena_count) * BYTES_PER_VALUE


def live_storages(graph: NetGraph, kept_blob_ids: Iterable[int]) -> tuple[list[Storage], int]:
    """The graph's shareable storages with their live ranges, and the values held by the kept ones."""
    by_memory: dict[int, Storage] = {}
    for layer_id, layer in enumerate(graph.layers):
        for blob_id in (*layer.bottoms, *layer.tops):
            memory = graph.blobs[blob_id].blob.data_memory
            storage = by_memory.get(id(memory))
            if storage is None:
                storage = by_memory[id(memory)] = Storage(memory, [], layer_id, layer_id)
            if blob_id not in storage.blob_ids:
                storage.blob_ids.append(blob_id)
            storage.last_layer = layer_id
    pinned = {id(param.blob.data_memory) for param in graph.params}
    pinned |= {id(graph.blobs[i].blob.data_memory) for i in kept_blob_ids}
    shareable = [s for key, s in by_memory.items() if key not in pinned and s.count > 0]
    kept = sum(s.count for key, s in by_memory.items() if key in pinned)
    return shareable, kept


def assign_offsets(storages: Sequence[Storage]) -> list[int]:
    """Greedy by size: largest first, into the tightest gap the placed storages live alongside it leave."""
    offsets = [0] * len(storages)
    placed: list[int] = []
    for index in sorted(range(len(storages)), key=lambda i: (-storages[i].count, storages[i].first_layer)):
        storage = storages[index]
        taken = sorted((offsets[i], offsets[i] + storages[i].count) for i in placed
                       if storages[i].first_layer <= storage.last_layer
                       and storage.first_layer <= storages[i].last_layer)
        best, best_gap, cursor = None, None, 0
        for start, stop in taken:
            gap = start - cursor
            if gap >= storage.count and (best_gap is None or gap < best_gap):
                best, best_gap = cursor, gap
            cursor = max(cursor, stop)
        offsets[index] = cursor if best is None else best
        placed.append(index)
    return offsets


def plan_memory(graph: NetGraph, kept_blob_ids: Iterable[int]) -> MemoryPlan:
    """The plan for a graph whose blobs are shaped: storages, their arena offsets and the kept values."""
    storages, kept = live_storages(graph, kept_blob_ids)
    return MemoryPlan(storages, assign_offsets(storages), kept)


def apply_plan(graph: NetGraph, plan: MemoryPlan, side: Side) -> dict[int, SyncedMemory]:
    """Allocates the arena once on `side` and points every planned blob at its window; returns the windows."""
    arena = side.xp.empty(max(plan.arena_count, 1), dtype=np.float32)
    views: dict[int, SyncedMemory] = {}
    for storage, offset in zip(plan.storages, plan.offsets, strict=True):
        memory = SyncedMemory(storage.count, np.float32)
        window = arena[offset: offset + storage.count]
        if side.name == "cpu":
            memory.set_cpu_data(window)
        else:
            memory.set_gpu_data(window)
        for blob_id in storage.blob_ids:
            graph.blobs[blob_id].blob.set_data_memory(memory)
            views[blob_id] = memory
    return views
