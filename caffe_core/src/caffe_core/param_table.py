"""The net's parameter table: every layer's learnable blobs, the ones shared by name, and their factors."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from caffe_core.errors import NetBuildError
from caffe_core.net_graph import LearnableRecord, NetGraph, ParamRecord, shape_string
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.net")


class ParamTable:
    """Enters each layer's learnable blobs into a graph's table as Caffe's AppendParam does."""

    def __init__(self, graph: NetGraph) -> None:
        self.graph = graph
        self._owners: dict[str, int] = {}

    def add_layer(self, layer_id: int) -> bool:
        """Enters one layer's learnable blobs; returns whether any of them learns (an lr_mult but 0)."""
        layer = self.graph.layers[layer_id].layer
        specs = layer.layer_param.param
        if len(specs) > len(layer.blobs):
            raise NetBuildError(f"Too many params specified for layer '{layer.layer_param.name}': "
                                f"{len(specs)} param specs but the layer has {len(layer.blobs)} learnable "
                                f"blob(s)")
        learns = False
        for index in range(len(layer.blobs)):
            learns_here = _spec(specs, index).lr_mult != 0
            learns |= learns_here
            layer.set_param_propagate_down(index, learns_here)
        for index in range(len(layer.blobs)):
            self._add(layer_id, index)
        return learns

    def _add(self, layer_id: int, index: int) -> None:
        graph = self.graph
        layer = graph.layers[layer_id].layer
        spec = _spec(layer.layer_param.param, index)
        blob = layer.blobs[index]
        param_id = len(graph.params)
        graph.layers[layer_id].param_ids.append(param_id)
        if not spec.name or spec.name not in self._owners:
            if spec.name:
                self._owners[spec.name] = param_id
            graph.params.append(ParamRecord(blob, layer_id, index, spec.name, -1, len(graph.learnables)))
            graph.learnables.append(LearnableRecord(blob, spec.lr_mult, spec.decay_mult,
                                                    spec.HasField("lr_mult"), spec.HasField("decay_mult")))
            return
        owner_id = self._owners[spec.name]
        owner = graph.params[owner_id]
        owner_layer = graph.layers[owner.layer_id].name
        graph.params.append(ParamRecord(blob, layer_id, index, spec.name, owner_id, owner.learnable_id))
        log.info("Sharing parameters '%s' owned by layer '%s', param index %d", spec.name, owner_layer,
                 owner.index)
        where = (f"Cannot share param '{spec.name}' owned by layer '{owner_layer}' with layer "
                 f"'{graph.layers[layer_id].name}'")
        if spec.share_mode == caffe_pb2.ParamSpec.PERMISSIVE:
            if blob.count != owner.blob.count:
                raise NetBuildError(f"{where}; count mismatch. Owner layer param shape is "
                                    f"{shape_string(owner.blob)}; sharing layer shape is "
                                    f"{shape_string(blob)}")
        elif blob.shape != owner.blob.shape:
            raise NetBuildError(f"{where}; shape mismatch. Owner layer param shape is "
                                f"{shape_string(owner.blob)}; sharing layer expects shape "
                                f"{shape_string(blob)}")
        learnable = graph.learnables[owner.learnable_id]
        for factor in ("lr_mult", "decay_mult"):
            if not spec.HasField(factor):
                continue
            value = getattr(spec, factor)
            if getattr(learnable, f"{factor}_given"):
                if value != getattr(learnable, factor):
                    raise NetBuildError(f"Shared param '{spec.name}' has mismatched {factor} ({value} "
                                        f"in layer '{graph.layers[layer_id].name}', "
                                        f"{getattr(learnable, factor)} before)")
            else:
                setattr(learnable, f"{factor}_given", True)
                setattr(learnable, factor, value)


def _spec(specs: Sequence[caffe_pb2.ParamSpec], index: int) -> caffe_pb2.ParamSpec:
    """The ParamSpec of a layer's learnable blob (Caffe's defaults when the layer gives fewer)."""
    return specs[index] if index < len(specs) else caffe_pb2.ParamSpec()


def share_weights(graph: NetGraph) -> None:
    """Points every shared parameter's data and diff at its owner's."""
    for param in graph.params:
        if param.owner >= 0:
            param.blob.share_data(graph.params[param.owner].blob)
            param.blob.share_diff(graph.params[param.owner].blob)
