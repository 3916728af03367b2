"""Net: a DAG of layers built from a NetParameter exactly as Caffe's Net::Init builds it."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence

import numpy as np

from caffe_core import proto_io, registry
from caffe_core.blob import Blob, proto_shape
from caffe_core.errors import CaffeError, ModelFileError, NetBuildError
from caffe_core.inert_fields import inert_field_notes
from caffe_core.insert_splits import insert_splits
from caffe_core.layer import Layer
from caffe_core.memory_plan import apply_plan, plan_memory
from caffe_core.net_state import filter_net
from caffe_core.proto import caffe_pb2
from caffe_core.runtime import current_side
from caffe_core.synced_memory import SyncedMemory
from caffe_core.upgrade import upgrade_net_as_needed

log = logging.getLogger("caffe.net")


def read_net_param(path: str | os.PathLike) -> caffe_pb2.NetParameter:
    """Reads a text net definition and applies Caffe's upgrades."""
    param = proto_io.read_text_file(path, caffe_pb2.NetParameter())
    upgrade_net_as_needed(param, os.fspath(path))
    return param


def read_net_binary(path: str | os.PathLike) -> caffe_pb2.NetParameter:
    """Reads a binary net (.caffemodel) and applies Caffe's upgrades."""
    param = proto_io.read_binary_file(path, caffe_pb2.NetParameter())
    upgrade_net_as_needed(param, os.fspath(path))
    return param


def _shape_string(blob: Blob) -> str:
    return "".join(f"{d} " for d in blob.shape) + f"({blob.count})"


class Net:
    """Layers, blobs and the bookkeeping for forward, backward, sharing and serialisation."""

    def __init__(self, param: caffe_pb2.NetParameter | str | os.PathLike, phase: int | None = None,
                 level: int | None = None, stages: Sequence[str] | None = None, optimize_memory: bool = False,
                 keep: Sequence[str] = ()) -> None:
        if not isinstance(param, caffe_pb2.NetParameter):
            param = read_net_param(param)
        else:
            copy = caffe_pb2.NetParameter()
            copy.CopyFrom(param)
            param = copy
            upgrade_net_as_needed(param)
        if phase is not None:
            param.state.phase = phase
        if level is not None:
            param.state.level = level
        if stages is not None:
            del param.state.stage[:]
            param.state.stage.extend(stages)
        self._before_forward: list[Callable[[int], None]] = []
        self._after_forward: list[Callable[[int], None]] = []
        self._before_backward: list[Callable[[int], None]] = []
        self._after_backward: list[Callable[[int], None]] = []
        self._planned: dict[int, SyncedMemory] = {}
        self._init(param)
        self.optimize_memory = optimize_memory
        if optimize_memory:
            self._kept_blob_ids = self._kept_ids(keep)
            self._plan_memory()

    # ----- construction -----
    def _init(self, in_param: caffe_pb2.NetParameter) -> None:
        self.phase = in_param.state.phase
        filtered = filter_net(in_param)
        log.info("Initializing net from parameters: \n%s", proto_io.to_text(filtered))
        param = insert_splits(filtered)
        self.name = param.name
        self.layers: list[Layer] = []
        self.layer_names: list[str] = []
        self.blobs: list[Blob] = []
        self.blob_names: list[str] = []
        self.blob_need_backward: list[bool] = []
        self.bottom_vecs: list[list[Blob]] = []
        self.bottom_id_vecs: list[list[int]] = []
        self.bottom_need_backward: list[list[bool]] = []
        self.top_vecs: list[list[Blob]] = []
        self.top_id_vecs: list[list[int]] = []
        self.layer_need_backward: list[bool] = []
        self.blob_loss_weights: list[float] = []
        self.input_blob_indices: list[int] = []
        self.output_blob_indices: list[int] = []
        self.params: list[Blob] = []
        self.param_id_vecs: list[list[int]] = []
        self.param_owners: list[int] = []
        self.param_display_names: list[str] = []
        self.param_layer_indices: list[tuple[int, int]] = []
        self.param_names_index: dict[str, int] = {}
        self.learnable_params: list[Blob] = []
        self.learnable_param_ids: list[int] = []
        self.params_lr: list[float] = []
        self.has_params_lr: list[bool] = []
        self.params_weight_decay: list[float] = []
        self.has_params_decay: list[bool] = []
        self.memory_used = 0
        available: set[str] = set()
        name_to_idx: dict[str, int] = {}

        for layer_id, layer_param in enumerate(param.layer):
            if not layer_param.HasField("phase"):
                layer_param.phase = self.phase
            if layer_param.propagate_down and len(layer_param.propagate_down) != len(layer_param.bottom):
                raise NetBuildError(
                    f"layer '{layer_param.name}': propagate_down must be given either 0 or "
                    f"{len(layer_param.bottom)} (the number of bottoms) times, got "
                    f"{len(layer_param.propagate_down)}"
                )
            layer = registry.create_layer(layer_param)
            self.layers.append(layer)
            self.layer_names.append(layer_param.name)
            log.info("Creating Layer %s", layer_param.name)
            for note in inert_field_notes(layer_param):
                log.info("Layer %s: %s", layer_param.name, note)
            self.bottom_vecs.append([])
            self.bottom_id_vecs.append([])
            self.bottom_need_backward.append([])
            self.top_vecs.append([])
            self.top_id_vecs.append([])
            self.param_id_vecs.append([])
            need_backward = False
            for bottom_id in range(len(layer_param.bottom)):
                blob_id = self._append_bottom(param, layer_id, bottom_id, available, name_to_idx)
                need_backward |= self.blob_need_backward[blob_id]
            for top_id in range(len(layer_param.top)):
                self._append_top(param, layer_id, top_id, available, name_to_idx)
                if layer_param.type == "Input":
                    self.input_blob_indices.append(self.top_id_vecs[layer_id][-1])
            if layer.auto_top_blobs:
                needed = max(layer.min_top_blobs, layer.exact_num_top_blobs)
                for top_id in range(len(layer_param.top), needed):
                    self._append_top(param, layer_id, top_id, None, None)
            log.info("Setting up %s", layer_param.name)
            try:
                layer.setup(self.bottom_vecs[layer_id], self.top_vecs[layer_id])
            except CaffeError:
                raise
            except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError) as err:
                raise NetBuildError(f"{layer.describe()} failed to set up: {type(err).__name__}: {err}") \
                    from err
            for top_id, blob in enumerate(self.top_vecs[layer_id]):
                blob_id = self.top_id_vecs[layer_id][top_id]
                while len(self.blob_loss_weights) <= blob_id:
                    self.blob_loss_weights.append(0.0)
                self.blob_loss_weights[blob_id] = layer.loss(top_id)
                log.info("Top shape: %s", _shape_string(blob))
                if layer.loss(top_id):
                    log.info("    with loss weight %g", layer.loss(top_id))
                self.memory_used += blob.count
            log.info("Memory required for data: %d", self.memory_used * 4)
            param_specs = layer.layer_param.param
            if len(param_specs) > len(layer.blobs):
                raise NetBuildError(
                    f"Too many params specified for layer '{layer_param.name}': {len(param_specs)} "
                    f"param specs but the layer has {len(layer.blobs)} learnable blob(s)"
                )
            for param_id in range(len(layer.blobs)):
                spec = param_specs[param_id] if param_id < len(param_specs) else caffe_pb2.ParamSpec()
                param_need_backward = spec.lr_mult != 0
                need_backward |= param_need_backward
                layer.set_param_propagate_down(param_id, param_need_backward)
            for param_id in range(len(layer.blobs)):
                self._append_param(layer_id, param_id)
            self.layer_need_backward.append(need_backward)
            if need_backward:
                for blob_id in self.top_id_vecs[layer_id]:
                    self.blob_need_backward[blob_id] = True

        self._analyse_backward(param)
        for layer, need in zip(self.layers, self.layer_need_backward, strict=True):
            layer.backward_needed = need
        self._warn_about_ignored_top_diffs()
        for blob_name in sorted(available):
            log.info("This network produces output %s", blob_name)
            self.output_blob_indices.append(name_to_idx[blob_name])
        self.blob_names_index = {name: i for i, name in enumerate(self.blob_names)}
        self.layer_names_index = {name: i for i, name in enumerate(self.layer_names)}
        self._share_weights()
        self.debug_info = param.debug_info
        log.info("Network initialization done.")

    def _append_bottom(self, param: caffe_pb2.NetParameter, layer_id: int, bottom_id: int,
                       available: set[str], name_to_idx: dict[str, int]) -> int:
        layer_param = param.layer[layer_id]
        blob_name = layer_param.bottom[bottom_id]
        if blob_name not in available:
            raise NetBuildError(f"Unknown bottom blob '{blob_name}' (layer '{layer_param.name}', "
                                f"bottom index {bottom_id})")
        blob_id = name_to_idx[blob_name]
        log.info("%s <- %s", self.layer_names[layer_id], blob_name)
        self.bottom_vecs[layer_id].append(self.blobs[blob_id])
        self.bottom_id_vecs[layer_id].append(blob_id)
        available.discard(blob_name)
        need_backward = self.blob_need_backward[blob_id]
        if layer_param.propagate_down:
            need_backward = layer_param.propagate_down[bottom_id]
        self.bottom_need_backward[layer_id].append(need_backward)
        return blob_id

    def _append_top(self, param: caffe_pb2.NetParameter, layer_id: int, top_id: int,
                    available: set[str] | None, name_to_idx: dict[str, int] | None) -> None:
        layer_param = param.layer[layer_id]
        blob_name = layer_param.top[top_id] if top_id < len(layer_param.top) else "(automatic)"
        if name_to_idx is not None and top_id < len(layer_param.bottom) \
                and blob_name == layer_param.bottom[top_id]:
            log.info("%s -> %s (in-place)", layer_param.name, blob_name)
            blob_id = name_to_idx[blob_name]
            self.top_vecs[layer_id].append(self.blobs[blob_id])
            self.top_id_vecs[layer_id].append(blob_id)
        elif name_to_idx is not None and blob_name in name_to_idx:
            raise NetBuildError(f"Top blob '{blob_name}' produced by multiple sources "
                                f"(again by layer '{layer_param.name}')")
        else:
            log.info("%s -> %s", layer_param.name, blob_name)
            blob = Blob()
            blob_id = len(self.blobs)
            self.blobs.append(blob)
            self.blob_names.append(blob_name)
            self.blob_need_backward.append(False)
            if name_to_idx is not None:
                name_to_idx[blob_name] = blob_id
            self.top_id_vecs[layer_id].append(blob_id)
            self.top_vecs[layer_id].append(blob)
        if available is not None:
            available.add(blob_name)

    def _append_param(self, layer_id: int, param_id: int) -> None:
        layer = self.layers[layer_id]
        specs = layer.layer_param.param
        spec = specs[param_id] if param_id < len(specs) else caffe_pb2.ParamSpec()
        param_name = spec.name if param_id < len(specs) else ""
        self.param_display_names.append(param_name or str(param_id))
        net_param_id = len(self.params)
        self.params.append(layer.blobs[param_id])
        self.param_id_vecs[layer_id].append(net_param_id)
        self.param_layer_indices.append((layer_id, param_id))
        if not param_name or param_name not in self.param_names_index:
            self.param_owners.append(-1)
            if param_name:
                self.param_names_index[param_name] = net_param_id
            self.learnable_param_ids.append(len(self.learnable_params))
            self.learnable_params.append(self.params[net_param_id])
            self.has_params_lr.append(spec.HasField("lr_mult"))
            self.has_params_decay.append(spec.HasField("decay_mult"))
            self.params_lr.append(spec.lr_mult)
            self.params_weight_decay.append(spec.decay_mult)
            return
        owner_net_param_id = self.param_names_index[param_name]
        self.param_owners.append(owner_net_param_id)
        owner_layer_id, owner_param_id = self.param_layer_indices[owner_net_param_id]
        log.info("Sharing parameters '%s' owned by layer '%s', param index %d",
                 param_name, self.layer_names[owner_layer_id], owner_param_id)
        this_blob = layer.blobs[param_id]
        owner_blob = self.layers[owner_layer_id].blobs[owner_param_id]
        where = (f"Cannot share param '{param_name}' owned by layer '{self.layer_names[owner_layer_id]}' "
                 f"with layer '{self.layer_names[layer_id]}'")
        if spec.share_mode == caffe_pb2.ParamSpec.PERMISSIVE:
            if this_blob.count != owner_blob.count:
                raise NetBuildError(f"{where}; count mismatch. Owner layer param shape is "
                                    f"{_shape_string(owner_blob)}; sharing layer shape is "
                                    f"{_shape_string(this_blob)}")
        elif this_blob.shape != owner_blob.shape:
            raise NetBuildError(f"{where}; shape mismatch. Owner layer param shape is "
                                f"{_shape_string(owner_blob)}; sharing layer expects shape "
                                f"{_shape_string(this_blob)}")
        learnable_id = self.learnable_param_ids[owner_net_param_id]
        self.learnable_param_ids.append(learnable_id)
        for has, values, field, what in (
            (self.has_params_lr, self.params_lr, "lr_mult", "lr_mult"),
            (self.has_params_decay, self.params_weight_decay, "decay_mult", "decay_mult"),
        ):
            if not spec.HasField(field):
                continue
            value = getattr(spec, field)
            if has[learnable_id]:
                if value != values[learnable_id]:
                    raise NetBuildError(f"Shared param '{param_name}' has mismatched {what} "
                                        f"({value} in layer '{self.layer_names[layer_id]}', "
                                        f"{values[learnable_id]} before)")
            else:
                has[learnable_id] = True
                values[learnable_id] = value

    def _analyse_backward(self, param: caffe_pb2.NetParameter) -> None:
        under_loss: set[str] = set()
        skip_backprop: set[str] = set()
        for layer_id in range(len(self.layers) - 1, -1, -1):
            contributes_loss = False
            skip_propagate_down = True
            for top_id, blob_id in enumerate(self.top_id_vecs[layer_id]):
                name = self.blob_names[blob_id]
                if self.layers[layer_id].loss(top_id) or name in under_loss:
                    contributes_loss = True
                if name not in skip_backprop:
                    skip_propagate_down = False
                if contributes_loss and not skip_propagate_down:
                    break
            if self.layer_need_backward[layer_id] and skip_propagate_down:
                self.layer_need_backward[layer_id] = False
                self.bottom_need_backward[layer_id] = [False] * len(self.bottom_vecs[layer_id])
            if not contributes_loss:
                self.layer_need_backward[layer_id] = False
            if self.layer_need_backward[layer_id]:
                log.info("%s needs backward computation.", self.layer_names[layer_id])
            else:
                log.info("%s does not need backward computation.", self.layer_names[layer_id])
            for bottom_id, blob_id in enumerate(self.bottom_id_vecs[layer_id]):
                name = self.blob_names[blob_id]
                if contributes_loss:
                    under_loss.add(name)
                else:
                    self.bottom_need_backward[layer_id][bottom_id] = False
                if not self.bottom_need_backward[layer_id][bottom_id]:
                    skip_backprop.add(name)
        if param.force_backward:
            for layer_id, layer in enumerate(self.layers):
                self.layer_need_backward[layer_id] = True
                for bottom_id, blob_id in enumerate(self.bottom_id_vecs[layer_id]):
                    need = self.bottom_need_backward[layer_id][bottom_id] or \
                        layer.allow_force_backward(bottom_id)
                    self.bottom_need_backward[layer_id][bottom_id] = need
                    self.blob_need_backward[blob_id] = self.blob_need_backward[blob_id] or need
                for param_id in range(len(layer.blobs)):
                    layer.set_param_propagate_down(param_id, True)

    def _warn_about_ignored_top_diffs(self) -> None:
        """Warns once per layer whose backward ignores the diff of a top some layer back-propagates into."""
        for layer_id, layer in enumerate(self.layers):
            tops = self.top_id_vecs[layer_id]
            for top_id in (t for t in layer.backward_ignores_tops if t < len(tops)):
                consumers = self._backward_consumers(tops[top_id])
                if consumers:
                    log.warning("Layer '%s' (%s): its top '%s' feeds %s, which back-propagate into it, "
                                "but as in Caffe the backward of '%s' ignores that top's diff: no gradient "
                                "flows through it", layer.name, layer.type or layer.layer_param.type,
                                self.blob_names[tops[top_id]], ", ".join(f"'{c}'" for c in consumers),
                                layer.name)

    def _backward_consumers(self, blob_id: int) -> list[str]:
        """The layers that back-propagate into a blob, looking through the Splits Caffe inserted."""
        found = []
        for layer_id, bottoms in enumerate(self.bottom_id_vecs):
            for bottom_id, source in enumerate(bottoms):
                if source != blob_id or not self.bottom_need_backward[layer_id][bottom_id]:
                    continue
                if self.layers[layer_id].layer_param.type == "Split":
                    found += [c for top in self.top_id_vecs[layer_id] for c in self._backward_consumers(top)]
                else:
                    found.append(self.layer_names[layer_id])
        return found

    def _share_weights(self) -> None:
        for i, owner in enumerate(self.param_owners):
            if owner < 0:
                continue
            self.params[i].share_data(self.params[owner])
            self.params[i].share_diff(self.params[owner])

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
            loss += self.layers[i].forward(self.bottom_vecs[i], self.top_vecs[i])
            if self._planned:
                self._check_plan_followed(i)
            if self.debug_info:
                self._log_forward_debug(i)
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
            if self.layer_need_backward[i]:
                self.layers[i].backward(self.top_vecs[i], self.bottom_need_backward[i], self.bottom_vecs[i])
                if self.debug_info:
                    self._log_backward_debug(i)
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
        for i, layer in enumerate(self.layers):
            layer.reshape(self.bottom_vecs[i], self.top_vecs[i])
        if self.optimize_memory:
            self._plan_memory()

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
        plan = self._memory_plan = plan_memory(self, self._kept_blob_ids)
        self._planned = apply_plan(self, plan, current_side())
        self._plan_key = self._current_plan_key()
        log.info("Memory required for data with optimize_memory: %d (%d without): %d blobs share %d bytes",
                 plan.bytes_with, plan.bytes_without, len(self._planned), plan.arena_count * 4)

    def _check_plan_followed(self, layer_id: int) -> None:
        """Refuses a layer that pointed a top at another planned blob's buffer during forward."""
        for blob_id in self.top_id_vecs[layer_id]:
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

    def _log_forward_debug(self, layer_id: int) -> None:
        for top_id, blob in enumerate(self.top_vecs[layer_id]):
            log.info("    [Forward] Layer %s, top blob %s data: %g", self.layer_names[layer_id],
                     self.blob_names[self.top_id_vecs[layer_id][top_id]],
                     blob.asum_data() / max(blob.count, 1))
        for net_param_id in self.param_id_vecs[layer_id]:
            blob = self.params[net_param_id]
            log.info("    [Forward] Layer %s, param blob %s data: %g", self.layer_names[layer_id],
                     self.param_display_names[net_param_id], blob.asum_data() / max(blob.count, 1))

    def _log_backward_debug(self, layer_id: int) -> None:
        for bottom_id, blob in enumerate(self.bottom_vecs[layer_id]):
            if not self.bottom_need_backward[layer_id][bottom_id]:
                continue
            log.info("    [Backward] Layer %s, bottom blob %s diff: %g", self.layer_names[layer_id],
                     self.blob_names[self.bottom_id_vecs[layer_id][bottom_id]],
                     blob.asum_diff() / max(blob.count, 1))
        layer = self.layers[layer_id]
        for param_id, net_param_id in enumerate(self.param_id_vecs[layer_id]):
            if not layer.param_propagate_down(param_id):
                continue
            blob = self.params[net_param_id]
            log.info("    [Backward] Layer %s, param blob %d diff: %g", self.layer_names[layer_id],
                     param_id, blob.asum_diff() / max(blob.count, 1))

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

    # ----- weights -----
    def copy_trained_layers_from_param(self, param: caffe_pb2.NetParameter, source: str = "<net>") -> None:
        """Copies learnable blobs from a NetParameter, matching layers by name (others are ignored)."""
        for source_layer in param.layer:
            name = source_layer.name
            if name not in self.layer_names_index:
                log.info("Ignoring source layer %s", name)
                continue
            target = self.layers[self.layer_names_index[name]].blobs
            if len(target) != len(source_layer.blobs):
                raise ModelFileError(f"{source}: Incompatible number of blobs for layer {name}: the file "
                                     f"has {len(source_layer.blobs)}, the net expects {len(target)}")
            for j, blob in enumerate(target):
                stored = source_layer.blobs[j]
                if not blob.shape_equals(stored):
                    raise ModelFileError(
                        f"{source}: Cannot copy param {j} weights from layer '{name}'; shape mismatch. "
                        f"Source param shape is {proto_shape(stored)}; target param shape is "
                        f"{blob.shape}. To learn this layer's parameters from scratch rather than "
                        f"copying from a saved net, rename the layer."
                    )
                blob.from_proto(stored, reshape=False)
            self.layers[self.layer_names_index[name]].adopt_stored_layer(source_layer)

    def copy_trained_layers_from(self, path: str | os.PathLike) -> None:
        """Copies weights from a .caffemodel (binary NetParameter) or a Caffe HDF5 weights file."""
        path = os.fspath(path)
        if _is_hdf5(path):
            self.copy_trained_layers_from_hdf5(path)
        else:
            self.copy_trained_layers_from_param(read_net_binary(path), path)

    def copy_trained_layers_from_hdf5(self, path: str) -> None:
        """Copies weights from Caffe's HDF5 layout `/data/<layer>/<i>`."""
        import h5py

        with h5py.File(path, "r") as f:
            if "data" not in f:
                raise ModelFileError(f"{path}: HDF5 weights file has no /data group")
            group = f["data"]
            for name in group:
                if name not in self.layer_names_index:
                    log.info("Ignoring source layer %s", name)
                    continue
                target = self.layers[self.layer_names_index[name]].blobs
                stored = group[name]
                if len(stored) != len(target):
                    raise ModelFileError(f"{path}: Incompatible number of blobs for layer {name}: the file "
                                         f"has {len(stored)}, the net expects {len(target)}")
                for j, blob in enumerate(target):
                    values = np.asarray(stored[str(j)], dtype=np.float32)
                    if values.shape != blob.shape and values.size != blob.count:
                        raise ModelFileError(
                            f"{path}: Cannot copy param {j} weights from layer '{name}'; shape mismatch. "
                            f"Source param shape is {values.shape}; target param shape is {blob.shape}."
                        )
                    blob.mutable_cpu_data()[...] = values.reshape(blob.shape)

    def share_trained_layers_with(self, other: Net) -> None:
        """Makes this net's learnable blobs share the data of the same-named layers of another net."""
        for i, source_layer in enumerate(other.layers):
            name = other.layer_names[i]
            if name not in self.layer_names_index:
                log.info("Ignoring source layer %s", name)
                continue
            target = self.layers[self.layer_names_index[name]].blobs
            if len(target) != len(source_layer.blobs):
                raise NetBuildError(f"Incompatible number of blobs for layer {name}")
            for j, blob in enumerate(target):
                if blob.shape != source_layer.blobs[j].shape:
                    raise NetBuildError(f"Cannot share param {j} weights from layer '{name}'; shape "
                                        f"mismatch: {source_layer.blobs[j].shape} vs {blob.shape}")
                blob.share_data(source_layer.blobs[j])

    def to_proto(self, write_diff: bool = False) -> caffe_pb2.NetParameter:
        """The net with every layer (and its learnable blobs), as Caffe's ToProto."""
        param = caffe_pb2.NetParameter(name=self.name)
        for layer in self.layers:
            param.layer.append(layer.to_proto(write_diff))
        return param

    def save(self, path: str | os.PathLike, write_diff: bool = False) -> None:
        """Writes a binary .caffemodel atomically."""
        proto_io.write_binary_file(path, self.to_proto(write_diff))

    def to_hdf5(self, path: str | os.PathLike, write_diff: bool = False) -> None:
        """Writes Caffe's HDF5 weights layout (`/data/<layer>/<i>`, and `/diff` with write_diff)."""
        import h5py

        tmp = os.fspath(path) + ".tmp"
        with h5py.File(tmp, "w") as f:
            groups = [("data", lambda b: b.cpu_data())]
            if write_diff:
                groups.append(("diff", lambda b: b.cpu_diff()))
            for group_name, values in groups:
                group = f.create_group(group_name)
                for layer_name, layer in zip(self.layer_names, self.layers, strict=True):
                    layer_group = group.create_group(layer_name)
                    for j, blob in enumerate(layer.blobs):
                        layer_group.create_dataset(str(j), data=values(blob))
        os.replace(tmp, path)


def _is_hdf5(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == b"\x89HDF\r\n\x1a\n"
    except FileNotFoundError:
        raise ModelFileError(f"{path}: file not found") from None
