"""Which layers and bottoms of a net need backward, decided as Caffe's Net::Init decides it."""

from __future__ import annotations

import logging

from caffe_core.net_graph import NetGraph

log = logging.getLogger("caffe.net")


def analyse_backward(graph: NetGraph, force_backward: bool) -> None:
    """Turns backward off where no loss lies above or no bottom wants a diff; force_backward turns it on."""
    under_loss: set[str] = set()
    skip_backprop: set[str] = set()
    for record in reversed(graph.layers):
        contributes_loss = False
        skip_propagate_down = True
        for top_id, blob_id in enumerate(record.tops):
            name = graph.blobs[blob_id].name
            if record.layer.loss(top_id) or name in under_loss:
                contributes_loss = True
            if name not in skip_backprop:
                skip_propagate_down = False
            if contributes_loss and not skip_propagate_down:
                break
        if record.need_backward and skip_propagate_down:
            record.need_backward = False
            record.bottom_need_backward = [False] * len(record.bottoms)
        if not contributes_loss:
            record.need_backward = False
        if record.need_backward:
            log.info("%s needs backward computation.", record.name)
        else:
            log.info("%s does not need backward computation.", record.name)
        for bottom_id, blob_id in enumerate(record.bottoms):
            name = graph.blobs[blob_id].name
            if contributes_loss:
                under_loss.add(name)
            else:
                record.bottom_need_backward[bottom_id] = False
            if not record.bottom_need_backward[bottom_id]:
                skip_backprop.add(name)
    if force_backward:
        for record in graph.layers:
            record.need_backward = True
            for bottom_id, blob_id in enumerate(record.bottoms):
                need = record.bottom_need_backward[bottom_id] or record.layer.allow_force_backward(bottom_id)
                record.bottom_need_backward[bottom_id] = need
                graph.blobs[blob_id].need_backward = graph.blobs[blob_id].need_backward or need
            for param_id in range(len(record.layer.blobs)):
                record.layer.set_param_propagate_down(param_id, True)


def warn_about_ignored_top_diffs(graph: NetGraph) -> None:
    """Warns once per layer whose backward ignores the diff of a top some layer back-propagates into."""
    for record in graph.layers:
        layer = record.layer
        for top_id in (t for t in layer.backward_ignores_tops if t < len(record.tops)):
            consumers = _backward_consumers(graph, record.tops[top_id])
            if consumers:
                log.warning("Layer '%s' (%s): its top '%s' feeds %s, which back-propagate into it, "
                            "but as in Caffe the backward of '%s' ignores that top's diff: no gradient flows "
                            "through it",
                            layer.name, layer.type or layer.layer_param.type,
                            graph.blobs[record.tops[top_id]].name, ", ".join(f"'{c}'" for c in consumers),
                            layer.name)


def _backward_consumers(graph: NetGraph, blob_id: int) -> list[str]:
    """The layers that back-propagate into a blob, looking through the Splits Caffe inserted."""
    found = []
    for record in graph.layers:
        for bottom_id, source in enumerate(record.bottoms):
            if source != blob_id or not record.bottom_need_backward[bottom_id]:
                continue
            if record.layer.layer_param.type == "Split":
                found += [c for top in record.tops for c in _backward_consumers(graph, top)]
            else:
                found.append(record.name)
    return found
