"""Times LeNet (batch 64) and CaffeNet (batch 10) forward and forward+backward against PyTorch CPU.

Prints ours/torch ratios, each convolution's achieved GFLOP/s next to this machine's float32 matmul rate
(measured in the same run), and the peak memory of CaffeNet forward+backward. PyTorch is needed only
here (pip install torch); it is not a dependency of any package. LeNet is our
examples/mnist/lenet_deploy.prototxt; CaffeNet is BVLC's, read from the folder of public models
CAFFE_PUBLIC_MODELS names (../shared/models).

    CAFFE_PUBLIC_MODELS=../shared/models .venv/bin/python benchmarks/bench_vision.py [--repeats N]
    OPENBLAS_NUM_THREADS=1 ... benchmarks/bench_vision.py    # both sides on one thread
"""

from __future__ import annotations

import argparse
import collections
import math
import os
import pathlib
import statistics
import time
import tracemalloc
from collections.abc import Callable
from typing import TYPE_CHECKING

# caffe_core before numpy: it sets OpenBLAS's thread timeout, which OpenBLAS reads when numpy loads it.
# isort: off
import caffe_core  # noqa: F401
import numpy as np
# isort: on

from caffe_core import runtime
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import read_text_file
from caffe_core.testing.public_models import PublicModelsError, find_public_model

if TYPE_CHECKING:
    from torch import nn

    from caffe_layers_vision.convolution import ConvolutionLayer

LENET = pathlib.Path(__file__).resolve().parent.parent / "examples" / "mnist" / "lenet_deploy.prototxt"
CAFFENET = "bvlc/models/bvlc_reference_caffenet/deploy.prototxt"


def median_time(step: Callable[[], object], repeats: int, warmup: int = 2) -> float:
    """Median wall time of `step` over `repeats` runs after `warmup` runs."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_gflops(size: int = 2048, repeats: int = 7) -> float:
    """This machine's float32 matmul rate (GFLOP/s): the best of `repeats` size x size products."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((size, size), dtype=np.float32)
    b = rng.standard_normal((size, size), dtype=np.float32)
    out = np.empty_like(a)
    np.matmul(a, b, out=out)
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        np.matmul(a, b, out=out)
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


def with_loss(path: pathlib.Path, batch: int) -> caffe_pb2.NetParameter:
    """The deploy net at `batch`, its final Softmax replaced by SoftmaxWithLoss on a label Input."""
    param = read_text_file(path, caffe_pb2.NetParameter())
    softmax = param.layer[-1]
    assert softmax.type == "Softmax", f"{path} should end in a Softmax layer"
    scores = softmax.bottom[0]
    del param.layer[-1]
    param.layer[0].input_param.shape[0].dim[0] = batch
    label = param.layer.add(name="label", type="Input", top=["label"])
    label.input_param.shape.add(dim=[batch])
    param.layer.add(name="loss", type="SoftmaxWithLoss", bottom=[scores, "label"], top=["loss"])
    return param


class LayerTimer:
    """Accumulates per-layer forward and backward times through the Net's callbacks."""

    def __init__(self, net: Net) -> None:
        self.forward: dict[int, list[float]] = collections.defaultdict(list)
        self.backward: dict[int, list[float]] = collections.defaultdict(list)
        self._start = 0.0
        net.add_before_forward(self._begin)
        net.add_after_forward(lambda i: self.forward[i].append(time.perf_counter() - self._start))
        net.add_before_backward(self._begin)
        net.add_after_backward(lambda i: self.backward[i].append(time.perf_counter() - self._start))

    def _begin(self, _: int) -> None:
        self._start = time.perf_counter()


def build_ours(path: pathlib.Path, batch: int, classes: int) -> Net:
    """Our net with random weights and inputs, in TRAIN phase."""
    runtime.set_mode_cpu()
    runtime.set_random_seed(0)
    net = Net(with_loss(path, batch), phase=caffe_pb2.TRAIN)
    rng = np.random.default_rng(0)
    for layer in net.layers:
        for blob in layer.blobs:
            fan_in = blob.count // blob.shape[0] if blob.num_axes > 1 else 1
            values = rng.standard_normal(blob.shape, dtype=np.float32)
            blob.mutable_cpu_data()[...] = values / np.float32(math.sqrt(fan_in))
    data = net.blob_by_name("data")
    data.mutable_cpu_data()[...] = rng.standard_normal(data.shape, dtype=np.float32)
    net.blob_by_name("label").mutable_cpu_data()[...] = rng.integers(0, classes, batch)
    return net


def torch_lenet() -> nn.Module:
    """LeNet as in examples/mnist/lenet_deploy.prototxt."""
    from torch import nn

    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.MaxPool2d(2, 2, ceil_mode=True),
        nn.Conv2d(20, 50, 5), nn.MaxPool2d(2, 2, ceil_mode=True),
        nn.Flatten(), nn.Linear(800, 500), nn.ReLU(), nn.Linear(500, 10))


def torch_caffenet() -> nn.Module:
    """CaffeNet as in models/bvlc_reference_caffenet/deploy.prototxt (pool before LRN, grouped convs)."""
    from torch import nn

    lrn = nn.LocalResponseNorm(5, alpha=1e-4, beta=0.75, k=1.0)
    return nn.Sequential(
        nn.Conv2d(3, 96, 11, stride=4), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True), lrn,
        nn.Conv2d(96, 256, 5, padding=2, groups=2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True), lrn,
        nn.Conv2d(256, 384, 3, padding=1), nn.ReLU(),
        nn.Conv2d(384, 384, 3, padding=1, groups=2), nn.ReLU(),
        nn.Conv2d(384, 256, 3, padding=1, groups=2), nn.ReLU(), nn.MaxPool2d(3, 2, ceil_mode=True),
        nn.Flatten(), nn.Linear(9216, 4096), nn.ReLU(), nn.Dropout(),
        nn.Linear(4096, 4096), nn.ReLU(), nn.Dropout(), nn.Linear(4096, 1000))


def torch_steps(model_factory: Callable[[], nn.Module], shape: tuple[int, ...],
                classes: int) -> tuple[Callable[[], None], Callable[[], None]]:
    """The PyTorch model's forward (no grad) and forward+backward steps."""
    import torch

    torch.manual_seed(0)
    model = model_factory().train()
    x = torch.randn(shape)
    y = torch.randint(0, classes, (shape[0],))

    def forward() -> None:
        with torch.no_grad():
            model(x)

    def forward_backward() -> None:
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()

    return forward, forward_backward


def interleaved_medians(steps: dict[str, Callable[[], object]], repeats: int,
                        block: int = 5) -> dict[str, float]:
    """Median time of each step over `repeats` runs, the steps taking turns in blocks of `block` runs so that
    load changes hit all alike. Each block starts with an untimed run: PyTorch's OpenMP threads spin on
    after its last step (LeNet's forward ran 6 ms after one of ours and 10 ms after one of PyTorch's)."""
    for step in steps.values():
        step()
    times: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(-(-repeats // block)):
        for name, step in steps.items():
            step()
            for _ in range(block):
                start = time.perf_counter()
                step()
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def time_torch_conv(layer: ConvolutionLayer, shape: tuple[int, ...], needs_bottom: bool,
                    repeats: int) -> tuple[float, float]:
    """PyTorch's forward and backward (weights and input) times for one of our Convolution layers."""
    import torch

    params = layer.params
    conv = torch.nn.Conv2d(layer.channels, layer.num_output, params.kernel, stride=params.stride,
                           padding=params.pad, dilation=params.dilation, groups=layer.group)
    x = torch.randn(shape, requires_grad=needs_bottom)
    with torch.no_grad():
        grad = torch.ones_like(conv(x))

    def forward() -> None:
        with torch.no_grad():
            conv(x)

    def forward_backward() -> None:
        conv(x).backward(grad)

    forward_time = median_time(forward, repeats)
    return forward_time, median_time(forward_backward, repeats) - forward_time


def conv_flops(net: Net, index: int) -> float:
    """Multiply-adds x 2 of one convolution layer's forward pass."""
    layer = net.layers[index]
    top = net.top_vecs[index][0]
    weights = layer.blobs[0]
    per_output = weights.count // weights.shape[0]
    return 2.0 * top.count * per_output


def report_net(name: str, path: pathlib.Path, batch: int, classes: int,
               torch_factory: Callable[[], nn.Module], repeats: int, peak_rate: float) -> dict[str, float]:
    """Times one net both ways, prints the comparison and each convolution's rate."""
    # Load from other processes varies; the machine's rate is the best matmul seen in this run.
    peak_rate = max(peak_rate, matmul_gflops())
    net = build_ours(path, batch, classes)

    def forward_backward() -> None:
        net.forward()
        net.backward()

    shape = tuple(net.blob_by_name("data").shape)
    torch_forward_step, torch_both_step = torch_steps(torch_factory, shape, classes)
    medians = interleaved_medians({"forward": net.forward, "torch_forward": torch_forward_step,
                                   "both": forward_backward, "torch_both": torch_both_step}, repeats)
    forward, torch_forward = medians["forward"], medians["torch_forward"]
    both, torch_both = medians["both"], medians["torch_both"]
    timer = LayerTimer(net)
    for _ in range(repeats):
        forward_backward()
    print(f"\n{name} (batch {batch}, input {shape[1:]}; matmul rate used for %: {peak_rate:.1f} GFLOP/s)")
    print(f"  forward           ours {forward * 1e3:8.1f} ms   torch {torch_forward * 1e3:8.1f} ms   "
          f"ours/torch {forward / torch_forward:5.2f}")
    print(f"  forward+backward  ours {both * 1e3:8.1f} ms   torch {torch_both * 1e3:8.1f} ms   "
          f"ours/torch {both / torch_both:5.2f}")
    print(f"  {'layer':<8} {'fwd ms':>8} {'GFLOP/s':>8} {'%matmul':>8} {'torch ms':>9}   "
          f"{'bwd ms':>8} {'GFLOP/s':>8} {'%matmul':>8} {'torch ms':>9}")
    for index, layer in enumerate(net.layers):
        if layer.type != "Convolution":
            continue
        flops = conv_flops(net, index)
        # Backward is one GEMM for the weights plus one for the bottom when the bottom needs a gradient.
        needs_bottom = bool(net.bottom_need_backward[index][0])
        backward_flops = flops * (2 if needs_bottom else 1)
        fwd = statistics.median(timer.forward[index])
        bwd = statistics.median(timer.backward[index])
        torch_fwd, torch_bwd = time_torch_conv(layer, net.bottom_vecs[index][0].shape, needs_bottom, repeats)
        fwd_rate, bwd_rate = flops / fwd / 1e9, backward_flops / bwd / 1e9
        print(f"  {layer.name:<8} {fwd * 1e3:8.2f} {fwd_rate:8.1f} {100 * fwd_rate / peak_rate:7.0f}% "
              f"{torch_fwd * 1e3:9.2f}   {bwd * 1e3:8.2f} {bwd_rate:8.1f} {100 * bwd_rate / peak_rate:7.0f}% "
              f"{torch_bwd * 1e3:9.2f}")
    others = collections.Counter()
    for index, layer in enumerate(net.layers):
        if layer.type != "Convolution":
            others[layer.type] += statistics.median(timer.forward[index]) + statistics.median(
                timer.backward[index] or [0.0])
    print("  other layers, fwd+bwd ms: " + ", ".join(f"{k} {v * 1e3:.1f}" for k, v in others.most_common()))
    return {"forward": forward / torch_forward, "forward_backward": both / torch_both}


def peak_memory(path: pathlib.Path, batch: int, classes: int) -> tuple[float, float]:
    """Peak traced numpy memory (MiB) of building the net and one forward+backward, and of the step alone."""
    tracemalloc.start()
    net = build_ours(path, batch, classes)
    built, _ = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    net.forward()
    net.backward()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2 ** 20, (peak - built) / 2 ** 20


def main() -> None:
    """Runs every measurement and prints the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    try:
        caffenet_deploy = find_public_model(CAFFENET)
    except PublicModelsError as err:
        raise SystemExit(f"bench_vision: {err}") from None
    import torch

    if "OPENBLAS_NUM_THREADS" in os.environ:
        # Compare like with like: PyTorch gets as many threads as numpy's OpenBLAS was given.
        torch.set_num_threads(int(os.environ["OPENBLAS_NUM_THREADS"]))
    rate = matmul_gflops()
    print(f"numpy float32 matmul (2048^3): {rate:.1f} GFLOP/s; torch threads {torch.get_num_threads()}")
    lenet = report_net("LeNet", LENET, 64, 10, torch_lenet, args.repeats, rate)
    caffenet = report_net("CaffeNet", caffenet_deploy, 10, 1000, torch_caffenet, max(3, args.repeats // 3),
                          rate)
    total, step = peak_memory(caffenet_deploy, 10, 1000)
    print(f"\nCaffeNet batch 10 forward+backward: peak traced memory {total:.0f} MiB "
          f"(net with weights, diffs and blobs, plus {step:.0f} MiB above that during the step)")
    print(f"\nours/torch forward+backward: LeNet {lenet['forward_backward']:.2f}, "
          f"CaffeNet {caffenet['forward_backward']:.2f} (target <= 1.0)")


if __name__ == "__main__":
    main()
