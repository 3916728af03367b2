"""The main job: trains Caffe's LeNet on the bundled MNIST digits (4,000 train / 1,000 test images).

Run from anywhere: `python examples/mnist/train_lenet.py [--seed N] [extra caffe flags]`. The first run turns
the IDX files in data/ into examples/mnist/mnist_{train,test}_lmdb with convert_mnist_data; then, in the
repository root (the working directory the prototxt paths assume, as in Caffe's own examples), it runs
`caffe train --solver=examples/mnist/lenet_solver.prototxt --weights=examples/mnist/lenet_init.caffemodel`.
With `--seed N` it trains from a random init instead: the solver gets `random_seed: N`, and the fillers draw
Caffe's own initial weights for that seed.
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from caffe_core.logs import init_log
from caffe_core.proto_io import write_text_file
from caffe_core.solvers import read_solver_param
from caffe_core.tools.caffe_cli import main as caffe_main
from caffe_layers_data.tools.convert_mnist_data import convert

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = Path("examples/mnist")
DATABASES = {
    "mnist_train_lmdb": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "mnist_test_lmdb": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
SOLVER = EXAMPLE / "lenet_solver.prototxt"
WEIGHTS = EXAMPLE / "lenet_init.caffemodel"

log = logging.getLogger("caffe.examples")


def materialise_databases(example: Path) -> None:
    """Creates each LMDB once (in a temporary folder renamed when complete, so a crash leaves none)."""
    for name, (images, labels) in DATABASES.items():
        target = example / name
        if (target / "data.mdb").exists():
            continue
        partial = example / f"{name}.tmp"
        shutil.rmtree(partial, ignore_errors=True)
        convert(str(example / "data" / images), str(example / "data" / labels), str(partial), "lmdb")
        shutil.rmtree(target, ignore_errors=True)
        partial.rename(target)


def seeded_solver(seed: int, folder: Path) -> Path:
    """A copy of the LeNet solver with `random_seed: seed`, in folder (its paths stay relative to ROOT)."""
    param = read_solver_param(str(ROOT / SOLVER))
    param.random_seed = seed
    path = folder / "lenet_solver_seeded.prototxt"
    write_text_file(path, param)
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Materialises the databases and trains; extra arguments go to `caffe train`."""
    init_log()
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--seed", type=int, default=None)
    known, extra = parser.parse_known_args(sys.argv[1:] if argv is None else argv)
    os.chdir(ROOT)
    materialise_databases(EXAMPLE)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        if known.seed is None:
            flags = [f"--solver={SOLVER}", f"--weights={WEIGHTS}"]
        else:
            flags = [f"--solver={seeded_solver(known.seed, Path(folder))}"]
        status = caffe_main(["train", *flags, *extra])
    log.info("Training wall time: %.1f s", time.perf_counter() - start)
    return status


if __name__ == "__main__":
    sys.exit(main())
