"""`caffe plot LOG OUT.png`: draws the loss, test outputs and lr of a Caffe training log against iterations.

The parser understands the lines Caffe's Solver prints (`Iteration N (...), loss = X`, `Iteration N, lr = R`,
`Iteration N, Testing net (#k)` and `Test net output #j: name = v`), from Caffe or from this project.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re

from caffe_core.errors import CaffeError

NUMBER = r"([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+(?:[eE][-+]?\d+)?|nan|inf|-inf))"
TRAIN_LOSS = re.compile(r"Iteration (\d+)(?: \([^)]*\))?, loss = " + NUMBER)
LEARNING_RATE = re.compile(r"Iteration (\d+), lr = " + NUMBER)
TESTING = re.compile(r"Iteration (\d+), Testing net \(#(\d+)\)")
TEST_OUTPUT = re.compile(r"Test net output #\d+: (\S+) = " + NUMBER)


@dataclasses.dataclass
class TrainingLog:
    """The series found in a log: (iteration, value) pairs."""

    train_loss: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    learning_rate: list[tuple[int, float]] = dataclasses.field(default_factory=list)
    tests: dict[str, list[tuple[int, float]]] = dataclasses.field(default_factory=dict)


def parse_training_log(text: str) -> TrainingLog:
    """Collects train loss, lr and every test output (named `#k name` for test net k) from a log."""
    result = TrainingLog()
    test_iter, test_net = 0, 0
    for line in text.splitlines():
        if match := TESTING.search(line):
            test_iter, test_net = int(match.group(1)), int(match.group(2))
        elif match := TEST_OUTPUT.search(line):
            key = f"#{test_net} {match.group(1)}"
            result.tests.setdefault(key, []).append((test_iter, float(match.group(2))))
        elif match := LEARNING_RATE.search(line):
            result.learning_rate.append((int(match.group(1)), float(match.group(2))))
        elif match := TRAIN_LOSS.search(line):
            result.train_loss.append((int(match.group(1)), float(match.group(2))))
    return result


def plot_training_log(log: TrainingLog, out_path: str | os.PathLike) -> None:
    """Draws train/test losses, the other test outputs and lr in stacked panels, saved to out_path."""
    try:
        import matplotlib
    except ImportError:
        raise CaffeError("caffe plot needs matplotlib: pip install 'caffe-core[plot]'") from None
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    losses = {k: v for k, v in log.tests.items() if "loss" in k}
    others = {k: v for k, v in log.tests.items() if "loss" not in k}
    panels = [("loss", {"train loss": log.train_loss} | {f"test {k}": v for k, v in losses.items()})]
    if others:
        panels.append(("test outputs", {f"test {k}": v for k, v in others.items()}))
    if log.learning_rate:
        panels.append(("learning rate", {"lr": log.learning_rate}))
    figure, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(8, 3 * len(panels)), squeeze=False)
    for ax, (title, series) in zip(axes[:, 0], panels, strict=True):
        for label, points in series.items():
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], label=label,
                        marker="o" if label.startswith("test") else None)
        ax.set_ylabel(title)
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    axes[-1, 0].set_xlabel("iteration")
    figure.tight_layout()
    figure.savefig(os.fspath(out_path))
    plt.close(figure)


def plot_command(args: argparse.Namespace) -> int:
    """`caffe plot LOG OUT.png`."""
    if len(args.paths) != 2:
        raise CaffeError("usage: caffe plot LOG OUT.png (a training log and the image to write)")
    log_path, out_path = args.paths
    try:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            parsed = parse_training_log(f.read())
    except FileNotFoundError:
        raise CaffeError(f"{log_path}: log file not found") from None
    if not parsed.train_loss and not parsed.tests:
        raise CaffeError(f"{log_path}: no 'Iteration N ..., loss = X' or 'Test net output' lines; is it a "
                         f"Caffe training log?")
    plot_training_log(parsed, out_path)
    return 0
