"""Net: runs a built net forward and backward as Caffe's Net does, and names its layers, blobs and params.

`net_builder` builds the net's graph (one record per layer, blob and parameter, in `net.graph`) from a
NetParameter, and `net_weights` reads and writes its trained weights; the lists below follow Caffe's Net
accessors and are views of that graph.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence

from caffe_core import net_weights
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, NetBuildError
from caffe_core.layer import Layer
from caffe_core.memory_plan import apply_plan, plan_memory
from caffe_core.net_builder import build_net, net_parameter
from caffe_core.net_debug_log import log_backward, log_forward
from caffe_core.proto import caffe_pb2
from caffe_core.runtime import current_side
from caffe_core.synced_memory import SyncedMemory

log = logging.getLogger("caffe.net")


class Net:
    """Layers, blobs and the bookkeeping for forward, backward, sharing and serialisation."""

    def __init__(self, param: caffe_pb2.NetParameter | str | os.PathLike,
                 phase: caffe_pb2.Phase | None = None, level: int | None = None,
                 stages: Sequence[str] | None = None, optimize_memory: bool = False,
                 keep: Sequence[str] = ()) -> None:
        self.graph = graph = build_net(net_parameter(param, phase, level, stages))
        self.name = graph.name
        self.phase = graph.phase
        self.debug_info = graph.debug_info
        self.layers: list[Layer] = [record.layer for record in graph.layers]
        self.layer_names = [record.name for record in graph.layers]
        self.blobs: list[Blob] = [record.blob for record in graph.blobs]
        self.blob_names = [record.name for record in graph.blobs]
        self.params: list[Blob] = [record.blob for record in graph.params]
        self.learnable_params: list[Blob] = [record.blob for record in graph.learnables]
        self.input_blob_indices = graph.inputs
        self.output_blob_indices = graph.outputs
        self.layer_names_index = graph.layer_ids
        self.blob_names_index = graph.blob_ids
        self._before_forward: list[Callable[[int], None]] = []
        self._after_forward: list[Callable[[int], None]] = []
        self._before_backward: list[Callable[[int], None]] = []
        self._after_backward: list[Callable[[int], None]] = []
        self._planned: dict[int, SyncedMemory] = {}
        self.optimize_memory = optimize_memory
        if optimize_memory:
            self._kept_blob_ids = self._kept_ids(keep)
            self._plan_memory()

    # ----- Caffe's per-layer and per-blob lists, read from the graph -----
    @property
    def bottom_vecs(self) -> list[list[Blob]]:
        """Each layer's bottom blobs."""
        return [record.bottom_blobs for record in self.graph.layers]

    @property
    def top_vecs(self) -> list[list[Blob]]:
        """Each layer's top blobs."""
        return [record.top_blobs for record in self.graph.layers]

    @property
    def bottom_id_vecs(self) -> list[list[int]]:
        """Each layer's bottom blob ids."""
        return [record.bottoms for record in self.graph.layers]

    @property
    def top_id_vecs(self) -> list[list[int]]:
        """Each layer's top blob ids."""
        return [record.tops for record in self.graph.layers]

    @property
    def bottom_need_backward(self) -> list[list[bool]]:
        """Whether each layer's backward computes each bottom's diff."""
        return [record.bottom_need_backward for record in self.graph.layers]

    @property
    def blob_loss_weights(self) -> list[float]:
        """The weight each blob's value adds to the loss (0 for most)."""
        return [record.loss_weight for record in self.graph.blobs]

    # ----- running -----
    def forward_from_to(self, start: int, end: int) -> float:
        """Runs layers start..end (inclusive) forward and returns their summed weighted loss."""
        if not 0 <= start <= end < len(self.layers):
            raise IndexError(f"forward range {start}..{end} is outside the net's {len(self.layers)} layers")
        if self.optimize_memory and self._plan_key != self._current_plan_key():
            self.reshape()
        loss = 0.0
        for i in range(start, end + 1):
            for callback in self._before_forward:
                callback(i)
            record = self.graph.layers[i]
            loss += record.layer.forward(record.bottom_blobs, record.top_blobs)
            if self._planned:
                self._check_plan_followed(i)
            if self.debug_info:
                log_forward(self.graph, i)
            for callback in self._after_forward:
                callback(i)
        return loss

    def forward(self) -> float:
        """Runs the whole net forward; returns the loss."""
        return self.forward_from_to(0, len(self.layers) - 1) if self.layers else 0.0

    def backward_from_to(self, start: int, end: int) -> None:
        """Runs layers start down to end backward, skipping layers that need no backward."""
        if not 0 <= end <= start < len(self.layers):
            raise IndexError(f"backward range {start}..{end} is outside the net's {len(self.layers)} layers")
        if self.optimize_memory:
            raise CaffeError(f"net '{self.name}' was built with optimize_memory, so its blobs share memory "
                             f"once they are consumed and backward cannot run; build it without "
                             f"optimize_memory to run backward")
        for i in range(start, end - 1, -1):
            for callback in self._before_backward:
                callback(i)
            record = self.graph.layers[i]
            if record.need_backward:
                record.layer.backward(record.top_blobs, record.bottom_need_backward, record.bottom_blobs)
                if self.debug_info:
                    log_backward(self.graph, i)
            for callback in self._after_backward:
                callback(i)

    def backward(self) -> None:
        """Runs the whole net backward."""
        if self.layers:
            self.backward_from_to(len(self.layers) - 1, 0)

    def forward_backward(self) -> float:
        """Forward then backward; returns the loss."""
        loss = self.forward()
        self.backward()
        return loss

    def reshape(self) -> None:
        """Propagates shape changes of the inputs through every layer."""
        for record in self.graph.layers:
            record.layer.reshape(record.bottom_blobs, record.top_blobs)
        if self.optimize_memory:
            self._plan_memory()

    def update(self) -> None:
        """data -= diff for every learnable param."""
        for blob in self.learnable_params:
            blob.update()

    def clear_param_diffs(self) -> None:
        """Zeroes every learnable param's diff."""
        side = current_side()
        for blob in self.learnable_params:
            blob.mutable_diff_on(side)[...] = 0

    def add_before_forward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) before each layer's forward."""
        self._before_forward.append(callback)

    def add_after_forward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) after each layer's forward."""
        self._after_forward.append(callback)

    def add_before_backward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) before each layer's backward."""
        self._before_backward.append(callback)

    def add_after_backward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) after each layer's backward."""
        self._after_backward.append(callback)

    # ----- memory planning -----
    def _kept_ids(self, keep: Sequence[str]) -> set[int]:
        unknown = [name for name in keep if name not in self.blob_names_index]
        if unknown:
            raise NetBuildError(f"keep names blob(s) {', '.join(repr(n) for n in unknown)} that net "
                                f"'{self.name}' does not have; its blobs are {', '.join(self.blob_names)}")
        named = (self.blob_names_index[n] for n in keep)
        return {*self.input_blob_indices, *self.output_blob_indices, *named}

    def _current_plan_key(self) -> tuple:
        return current_side().name, tuple(self.blobs[i].shape for i in self.input_blob_indices)

    def _plan_memory(self) -> None:
        """Lets blobs with disjoint lifetimes share storage; inputs, outputs and kept blobs keep theirs."""
        plan = self._memory_plan = plan_memory(self.graph, self._kept_blob_ids)
        self._planned = apply_plan(self.graph, plan, current_side())
        self._plan_key = self._current_plan_key()
        log.info("Memory required for data with optimize_memory: %d (%d without): %d blobs share %d bytes",
                 plan.bytes_with, plan.bytes_without, len(self._planned), plan.arena_count * 4)

    def _check_plan_followed(self, layer_id: int) -> None:
        """Refuses a layer that pointed a top at another planned blob's buffer during forward."""
        for blob_id in self.graph.layers[layer_id].tops:
            memory = self.blobs[blob_id].data_memory
            planned = self._planned.get(blob_id)
            if planned is None or memory is planned:
                continue
            owners = [self.blob_names[i] for i, m in self._planned.items() if m is memory and i != blob_id]
            if owners:
                raise CaffeError(
                    f"layer '{self.layer_names[layer_id]}' made its top '{self.blob_names[blob_id]}' share "
                    f"the memory of '{owners[0]}' during forward, which the memory planner cannot follow; "
                    f"build net '{self.name}' without optimize_memory, or keep=('{owners[0]}',)")

    def readable_after_forward(self, name: str, end: int | None = None) -> bool:
        """Whether blob `name` still holds what its layer wrote once a forward has run through layer `end`."""
        blob_id = self.blob_names_index.get(name)
        if blob_id not in self._planned:
            return True
        return not self._memory_plan.overwritten(blob_id, len(self.layers) - 1 if end is None else end)

    # ----- lookup -----
    def has_blob(self, name: str) -> bool:
        """Whether a blob of that name exists."""
        return name in self.blob_names_index

    def blob_by_name(self, name: str) -> Blob:
        """The blob of that name."""
        if name not in self.blob_names_index:
            raise KeyError(f"net '{self.name}' has no blob named '{name}'")
        return self.blobs[self.blob_names_index[name]]

    def has_layer(self, name: str) -> bool:
        """Whether a layer of that name exists."""
        return name in self.layer_names_index

    def layer_by_name(self, name: str) -> Layer:
        """The layer of that name."""
        if name not in self.layer_names_index:
            raise KeyError(f"net '{self.name}' has no layer named '{name}'")
        return self.layers[self.layer_names_index[name]]

    @property
    def input_blobs(self) -> list[Blob]:
        """The blobs of Input layers."""
        return [self.blobs[i] for i in self.input_blob_indices]

    @property
    def output_blobs(self) -> list[Blob]:
        """Blobs produced and never consumed, in name order as Caffe lists them."""
        return [self.blobs[i] for i in self.output_blob_indices]

    # ----- weights (net_weights does the work) -----
    def copy_trained_layers_from_param(self, param: caffe_pb2.NetParameter, source: str = "<net>") -> None:
        """Copies learnable blobs from a NetParameter, matching layers by name (others are ignored)."""
        net_weights.copy_from_param(self.graph, param, source)

    def copy_trained_layers_from(self, path: str | os.PathLike) -> None:
        """Copies weights from a .caffemodel (binary NetParameter) or a Caffe HDF5 weights file."""
        net_weights.copy_from_file(self.graph, path)

    def copy_trained_layers_from_hdf5(self, path: str) -> None:
        """Copies weights from Caffe's HDF5 layout `/data/<layer>/<i>`."""
        net_weights.copy_from_hdf5(self.graph, path)

    def share_trained_layers_with(self, other: Net) -> None:
        """Makes this net's learnable blobs share the data of the same-named layers of another net."""
        net_weights.share_with(self.graph, other.graph)

    def to_proto(self, write_diff: bool = False) -> caffe_pb2.NetParameter:
        """The net with every layer (and its learnable blobs), as Caffe's ToProto."""
        return net_weights.to_proto(self.graph, write_diff)

    def save(self, path: str | os.PathLike, write_diff: bool = False) -> None:
        """Writes a binary .caffemodel atomically."""
        net_weights.save(self.graph, path, write_diff)

    def to_hdf5(self, path: str | os.PathLike, write_diff: bool = False) -> None:
        """Writes Caffe's HDF5 weights layout (`/data/<layer>/<i>`, and `/diff` with write_diff)."""
        net_weights.save_hdf5(self.graph, path, write_diff)
