"""`caffe test`: score a model's TEST net with given weights over --iterations batches."""

from __future__ import annotations

import argparse
import logging

import numpy as np

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.solvers.base import loss_note
from caffe_core.tools.caffe_cli_common import (
    output_scores,
    parse_gpus,
    require,
    require_positive,
    stages_of,
    use_devices,
)

log = logging.getLogger("caffe.tool")


def test(args: argparse.Namespace) -> int:
    """Caffe's test(): logs every batch's outputs, the mean loss and the mean of each output."""
    require(args.model, "Need a model definition to score (--model).")
    require(args.weights, "Need model weights to score (--weights).")
    require_positive(args.iterations, "iterations")
    use_devices(parse_gpus(args.gpu), "testing")
    # Only the outputs are read, so blobs may share memory once consumed.
    net = Net(args.model, phase=caffe_pb2.TEST, level=args.level, stages=stages_of(args),
              optimize_memory=True)
    net.copy_trained_layers_from(args.weights)
    log.info("Running for %d iterations.", args.iterations)
    totals = np.zeros(0, dtype=np.float32)
    scores: list[tuple[str, float, float]] = []
    loss = np.float32(0)
    for i in range(args.iterations):
        loss += np.float32(net.forward())
        scores = output_scores(net)
        values = np.array([v for _, v, _ in scores], dtype=np.float32)
        totals = values if i == 0 else totals + values
        for name, value, _ in scores:
            log.info("Batch %d, %s = %g", i, name, value)
    loss /= np.float32(args.iterations)
    log.info("Loss: %g", loss)
    means = totals / np.float32(args.iterations)
    for (name, _, weight), mean in zip(scores, means, strict=True):
        log.info("%s = %g%s", name, mean, loss_note(weight, mean))
    return 0

