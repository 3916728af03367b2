"""Samples/s of LeNet training (batch 64 per process) on 1 and 2 MPI ranks, and a projection for N nodes.

Runs, in one sitting, `caffe train` on the bundled MNIST digits as one process (batch 64) and as two ranks
(`mpiexec -n 2`, batch 64 each), one BLAS thread per process, and reads the `Iteration N (X iter/s, ...)`
display lines. Then projects samples/s for N nodes from the measured compute time per iteration, the
gradient size and a link bandwidth, for a ring all-reduce that does not overlap backward (a lower bound:
ours starts the buckets as backward completes them).

    .venv/bin/python benchmarks/bench_data_parallel.py [--iterations 300] [--gbit 10 100]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
BATCH = 64
# LeNet's learnable params: conv1 20x1x5x5+20, conv2 50x20x5x5+50, ip1 500x800+500, ip2 10x500+10.
GRADIENT_BYTES = 4 * (520 + 25050 + 400500 + 5010)
LATENCY_S = 20e-6


def prepare(root: Path, iterations: int) -> str:
    """examples/mnist with its LMDBs under root, and a solver running `iterations` without tests."""
    example = root / "examples" / "mnist"
    shutil.copytree(REPO / "examples" / "mnist", example,
                    ignore=shutil.ignore_patterns("mnist_*_lmdb", "*.tmp", "lenet_iter_*"))
    sys.path.insert(0, str(example))
    from train_lenet import materialise_databases

    materialise_databases(example)
    text = (example / "lenet_solver.prototxt").read_text()
    text = text.replace("max_iter: 2000", f"max_iter: {iterations}").replace("test_interval: 500",
                                                                            "test_interval: 100000")
    (root / "solver.prototxt").write_text(text + "\ntest_initialization: false\ndisplay: 50\n")
    return "solver.prototxt"


def iterations_per_second(root: Path, solver: str, ranks: int) -> float:
    """The median iter/s of the display lines after the first."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OMPI_ALLOW_RUN_AS_ROOT": "1",
           "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    launcher = [str(BIN / "mpiexec"), "-n", str(ranks)] if ranks > 1 else []
    done = subprocess.run([*launcher, str(BIN / "caffe"), "train", f"--solver={solver}",
                           "--weights=examples/mnist/lenet_init.caffemodel"], cwd=root, env=env,
                          capture_output=True, text=True, check=True)
    rates = sorted(float(r) for r in re.findall(r"Iteration \d+ \(([\d.]+) iter/s", done.stderr)[1:])
    return rates[len(rates) // 2]


def projection(compute_s: float, nodes: int, gbit: float) -> float:
    """Samples/s of `nodes` ranks, one per node, with a ring all-reduce over a `gbit` Gbit/s link."""
    if nodes == 1:
        return BATCH / compute_s
    ring_s = 2 * (nodes - 1) / nodes * GRADIENT_BYTES / (gbit * 1e9 / 8) + 2 * (nodes - 1) * LATENCY_S
    return nodes * BATCH / (compute_s + ring_s)


def main() -> None:
    """Measures 1 and 2 ranks, prints samples/s, their ratio and the projection table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--gbit", type=float, nargs="+", default=[10.0, 100.0])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        solver = prepare(root, args.iterations)
        one = iterations_per_second(root, solver, 1) * BATCH
        two = iterations_per_second(root, solver, 2) * 2 * BATCH
    print(f"1 rank : {one:8.0f} samples/s")
    print(f"2 ranks: {two:8.0f} samples/s  ({two / one:.2f}x)")
    compute_s = BATCH / one
    print(f"\nprojection (gradient {GRADIENT_BYTES / 1e6:.2f} MB, compute {compute_s * 1e3:.1f} ms per "
          f"iteration, ring all-reduce without overlap, {LATENCY_S * 1e6:.0f} us per step):")
    print("nodes  " + "  ".join(f"{g:>6.0f} Gbit/s" for g in args.gbit))
    for nodes in (1, 2, 4, 8, 16, 32, 64):
        print(f"{nodes:5d}  " + "  ".join(f"{projection(compute_s, nodes, g):13.0f}" for g in args.gbit))


if __name__ == "__main__":
    main()
