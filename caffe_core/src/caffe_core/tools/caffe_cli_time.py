"""`caffe time`: per-layer forward/backward timings of a net, printed as Caffe prints them."""

from __future__ import annotations

import argparse
import logging
import time

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.tools.caffe_cli_common import (
    parse_gpus,
    phase_of,
    require,
    require_positive,
    stages_of,
    use_devices,
)

log = logging.getLogger("caffe.tool")


def _now_us() -> float:
    return time.perf_counter() * 1e6


def time_net(args: argparse.Namespace) -> int:
    """Caffe's time(): one warm-up pass, then --iterations timed layer-wise forward and backward passes."""
    require(args.model, "Need a model definition to time (--model).")
    require_positive(args.iterations, "iterations")
    phase = phase_of(args, caffe_pb2.TRAIN)
    use_devices(parse_gpus(args.gpu), "timing")
    net = Net(args.model, phase=phase, level=args.level, stages=stages_of(args))
    log.info("Performing Forward")
    initial_loss = net.forward()
    log.info("Initial loss: %g", initial_loss)
    log.info("Performing Backward")
    net.backward()
    count = len(net.layers)
    # Read once: the net's lists are views built from its graph on each access.
    bottoms, tops, need_backward = net.bottom_vecs, net.top_vecs, net.bottom_need_backward
    forward_per_layer = [0.0] * count
    backward_per_layer = [0.0] * count
    forward_total = backward_total = 0.0
    log.info("*** Benchmark begins ***")
    log.info("Testing for %d iterations.", args.iterations)
    total_start = _now_us()
    for j in range(args.iterations):
        iter_start = forward_start = _now_us()
        for i, layer in enumerate(net.layers):
            start = _now_us()
            layer.forward(bottoms[i], tops[i])
            forward_per_layer[i] += _now_us() - start
        forward_total += _now_us() - forward_start
        backward_start = _now_us()
        for i in range(count - 1, -1, -1):
            start = _now_us()
            net.layers[i].backward(tops[i], need_backward[i], bottoms[i])
            backward_per_layer[i] += _now_us() - start
        backward_total += _now_us() - backward_start
        log.info("Iteration: %d forward-backward time: %d ms.", j + 1, int((_now_us() - iter_start) / 1000))
    log.info("Average time per layer: ")
    n = args.iterations
    for i, name in enumerate(net.layer_names):
        log.info("%10s\tforward: %g ms.", name, forward_per_layer[i] / 1000 / n)
        log.info("%10s\tbackward: %g ms.", name, backward_per_layer[i] / 1000 / n)
    total_ms = (_now_us() - total_start) / 1000
    log.info("Average Forward pass: %g ms.", forward_total / 1000 / n)
    log.info("Average Backward pass: %g ms.", backward_total / 1000 / n)
    log.info("Average Forward-Backward: %g ms.", total_ms / n)
    log.info("Total Time: %g ms.", total_ms)
    log.info("*** Benchmark ends ***")
    return 0
