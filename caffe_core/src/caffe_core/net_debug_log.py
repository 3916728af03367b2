"""Caffe's debug_info lines: the mean absolute value of what a layer wrote, after its forward or backward."""

from __future__ import annotations

import logging

from caffe_core.net_graph import NetGraph

log = logging.getLogger("caffe.net")


def log_forward(graph: NetGraph, layer_id: int) -> None:
    """Logs the data of a layer's tops and parameters after its forward."""
    record = graph.layers[layer_id]
    for blob_id, blob in zip(record.tops, record.top_blobs, strict=True):
        log.info("    [Forward] Layer %s, top blob %s data: %g", record.name, graph.blobs[blob_id].name,
                 blob.asum_data() / max(blob.count, 1))
    for param_id in record.param_ids:
        param = graph.params[param_id]
        log.info("    [Forward] Layer %s, param blob %s data: %g", record.name, param.display_name,
                 param.blob.asum_data() / max(param.blob.count, 1))


def log_backward(graph: NetGraph, layer_id: int) -> None:
    """Logs the diffs a layer's backward computed, of its bottoms and of its parameters."""
    record = graph.layers[layer_id]
    for bottom_id, (blob_id, blob) in enumerate(zip(record.bottoms, record.bottom_blobs, strict=True)):
        if not record.bottom_need_backward[bottom_id]:
            continue
        log.info("    [Backward] Layer %s, bottom blob %s diff: %g", record.name, graph.blobs[blob_id].name,
                 blob.asum_diff() / max(blob.count, 1))
    for index, param_id in enumerate(record.param_ids):
        if not record.layer.param_propagate_down(index):
            continue
        blob = graph.params[param_id].blob
        log.info("    [Backward] Layer %s, param blob %d diff: %g", record.name, index,
                 blob.asum_diff() / max(blob.count, 1))
