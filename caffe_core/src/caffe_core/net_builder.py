"""The net builder: a NetParameter turned into a NetGraph exactly as Caffe's Net::Init builds a net."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence

from caffe_core import proto_io, registry
from caffe_core.backward_analysis import analyse_backward, warn_about_ignored_top_diffs
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, NetBuildError
from caffe_core.inert_fields import inert_field_notes
from caffe_core.insert_splits import insert_splits
from caffe_core.net_files import read_net_param
from caffe_core.net_graph import BlobRecord, LayerRecord, NetGraph, shape_string
from caffe_core.net_state import filter_net
from caffe_core.param_table import ParamTable, share_weights
from caffe_core.proto import caffe_pb2
from caffe_core.upgrade import upgrade_net_as_needed

log = logging.getLogger("caffe.net")


def net_parameter(source: caffe_pb2.NetParameter | str | os.PathLike, phase: caffe_pb2.Phase | None = None,
                  level: int | None = None, stages: Sequence[str] | None = None) -> caffe_pb2.NetParameter:
    """The upgraded NetParameter of a file or a message (copied), with the phase, level and stages given."""
    if isinstance(source, caffe_pb2.NetParameter):
        param = caffe_pb2.NetParameter()
        param.CopyFrom(source)
        upgrade_net_as_needed(param)
    else:
        param = read_net_param(source)
    if phase is not None:
        param.state.phase = phase
    if level is not None:
        param.state.level = level
    if stages is not None:
        del param.state.stage[:]
        param.state.stage.extend(stages)
    return param


def build_net(in_param: caffe_pb2.NetParameter) -> NetGraph:
    """Creates and sets up every layer the net's state keeps, wires their blobs and analyses backward."""
    filtered = filter_net(in_param)
    log.info("Initializing net from parameters: \n%s", proto_io.to_text(filtered))
    param = insert_splits(filtered)
    graph = NetGraph(param.name, in_param.state.phase)
    wiring = _BlobWiring(graph)
    params = ParamTable(graph)
    for layer_param in param.layer:
        _add_layer(graph, wiring, params, layer_param, param.layer)
    analyse_backward(graph, param.force_backward)
    for record in graph.layers:
        record.layer.backward_needed = record.need_backward
    warn_about_ignored_top_diffs(graph)
    for blob_name in sorted(wiring.available):
        log.info("This network produces output %s", blob_name)
        graph.outputs.append(wiring.ids[blob_name])
    graph.blob_ids = {record.name: i for i, record in enumerate(graph.blobs)}
    graph.layer_ids = {record.name: i for i, record in enumerate(graph.layers)}
    share_weights(graph)
    graph.debug_info = param.debug_info
    log.info("Network initialization done.")
    return graph


def _add_layer(graph: NetGraph, wiring: _BlobWiring, params: ParamTable,
               layer_param: caffe_pb2.LayerParameter, net_layers: Sequence[caffe_pb2.LayerParameter]) -> None:
    """Creates one layer, connects its bottoms and tops, sets it up and enters its parameters."""
    if not layer_param.HasField("phase"):
        layer_param.phase = graph.phase
    if layer_param.propagate_down and len(layer_param.propagate_down) != len(layer_param.bottom):
        raise NetBuildError(
            f"layer '{layer_param.name}': propagate_down must be given either 0 or "
            f"{len(layer_param.bottom)} (the number of bottoms) times, got {len(layer_param.propagate_down)}"
        )
    layer = registry.create_layer(layer_param, net_layers)
    record = LayerRecord(layer_param.name, layer)
    graph.layers.append(record)
    log.info("Creating Layer %s", layer_param.name)
    for note in inert_field_notes(layer_param):
        log.info("Layer %s: %s", layer_param.name, note)
    need_backward = False
    for bottom_id in range(len(layer_param.bottom)):
        need_backward |= wiring.add_bottom(record, layer_param, bottom_id)
    for top_id in range(len(layer_param.top)):
        wiring.add_top(record, layer_param, top_id)
        if layer_param.type == "Input":
            graph.inputs.append(record.tops[-1])
    if layer.auto_top_blobs:
        for _ in range(len(layer_param.top), max(layer.min_top_blobs, layer.exact_num_top_blobs)):
            wiring.add_automatic_top(record)
    log.info("Setting up %s", layer_param.name)
    try:
        layer.setup(record.bottom_blobs, record.top_blobs)
    except CaffeError:
        raise
    except (ValueError, IndexError, KeyError, TypeError, ZeroDivisionError) as err:
        raise NetBuildError(f"{layer.describe()} failed to set up: {type(err).__name__}: {err}") from err
    for top_id, (blob_id, blob) in enumerate(zip(record.tops, record.top_blobs, strict=True)):
        graph.blobs[blob_id].loss_weight = layer.loss(top_id)
        log.info("Top shape: %s", shape_string(blob))
        if layer.loss(top_id):
            log.info("    with loss weight %g", layer.loss(top_id))
        wiring.memory_used += blob.count
    log.info("Memory required for data: %d", wiring.memory_used * 4)
    need_backward |= params.add_layer(len(graph.layers) - 1)
    record.need_backward = need_backward
    if need_backward:
        for blob_id in record.tops:
            graph.blobs[blob_id].need_backward = True


class _BlobWiring:
    """Blob names as layers are added: which blob each name is now, and which no layer has consumed yet."""

    def __init__(self, graph: NetGraph) -> None:
        self.graph = graph
        self.ids: dict[str, int] = {}
        self.available: set[str] = set()
        self.memory_used = 0

    def add_bottom(self, record: LayerRecord, layer_param: caffe_pb2.LayerParameter, bottom_id: int) -> bool:
        """Connects one bottom; returns whether backward reaches its blob."""
        blob_name = layer_param.bottom[bottom_id]
        if blob_name not in self.available:
            raise NetBuildError(f"Unknown bottom blob '{blob_name}' (layer '{layer_param.name}', "
                                f"bottom index {bottom_id})")
        blob_id = self.ids[blob_name]
        log.info("%s <- %s", record.name, blob_name)
        record.bottoms.append(blob_id)
        record.bottom_blobs.append(self.graph.blobs[blob_id].blob)
        self.available.discard(blob_name)
        need_backward = self.graph.blobs[blob_id].need_backward
        if layer_param.propagate_down:
            need_backward = layer_param.propagate_down[bottom_id]
        record.bottom_need_backward.append(need_backward)
        return self.graph.blobs[blob_id].need_backward

    def add_top(self, record: LayerRecord, layer_param: caffe_pb2.LayerParameter, top_id: int) -> None:
        """Connects one named top: the bottom at its index when computed in place, else a new blob."""
        blob_name = layer_param.top[top_id]
        if top_id < len(layer_param.bottom) and blob_name == layer_param.bottom[top_id]:
            log.info("%s -> %s (in-place)", layer_param.name, blob_name)
            blob_id = self.ids[blob_name]
            record.tops.append(blob_id)
            record.top_blobs.append(self.graph.blobs[blob_id].blob)
        elif blob_name in self.ids:
            raise NetBuildError(f"Top blob '{blob_name}' produced by multiple sources "
                                f"(again by layer '{layer_param.name}')")
        else:
            log.info("%s -> %s", layer_param.name, blob_name)
            self.ids[blob_name] = self._new_top(record, blob_name)
        self.available.add(blob_name)

    def add_automatic_top(self, record: LayerRecord) -> None:
        """Adds a top the prototxt does not name, for a layer that creates its tops (auto_top_blobs)."""
        log.info("%s -> %s", record.name, "(automatic)")
        self._new_top(record, "(automatic)")

    def _new_top(self, record: LayerRecord, blob_name: str) -> int:
        blob = Blob()
        self.graph.blobs.append(BlobRecord(blob_name, blob))
        record.tops.append(len(self.graph.blobs) - 1)
        record.top_blobs.append(blob)
        return len(self.graph.blobs) - 1
