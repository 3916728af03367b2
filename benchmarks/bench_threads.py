"""`caffe time` of LeNet b64 and CaffeNet b10 + loss, 1 and 2 host threads, idle and with a core kept busy.

Each run is a fresh `caffe time` process (CAFFE_HOST_THREADS is read once per process); the runs of one round
alternate, so that the ratios compare runs of one sitting. With `--caffe DIR` (a reference BVLC Caffe build)
its `caffe time` runs in each round too. "busy" keeps one core spinning in another process for the whole
condition, as a second job on a shared machine would. With `--main-job` the MNIST main job is also trained
once idle and once busy, and its training times compared. OPENBLAS_CORETYPE (and the like) pass through, so
`OPENBLAS_CORETYPE=Haswell` shows an AVX2 machine's kernels on an AVX-512 one. LeNet is
examples/mnist/lenet_deploy.prototxt; CaffeNet is BVLC's, from the folder CAFFE_PUBLIC_MODELS names.

    CAFFE_PUBLIC_MODELS=../shared/models .venv/bin/python benchmarks/bench_threads.py [--rounds 3] \
        [--caffe /path/to/caffe] [--main-job]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator

from caffe_core.testing.public_models import PublicModelsError, find_public_model

REPO = pathlib.Path(__file__).resolve().parent.parent
LENET = REPO / "examples" / "mnist" / "lenet_deploy.prototxt"
CAFFENET = "bvlc/models/bvlc_reference_caffenet/deploy.prototxt"
ITERATIONS = {"lenet_b64": 50, "caffenet_loss_b10": 5}
AVERAGES = re.compile(r"Average Forward pass: ([\d.]+) ms.*?Average Forward-Backward: ([\d.]+) ms", re.S)
TRAINING = re.compile(r"Training wall time: ([\d.]+) s")


def write_nets(folder: pathlib.Path) -> dict[str, pathlib.Path]:
    """LeNet's deploy net at batch 64, and CaffeNet's at batch 10 with SoftmaxWithLoss in place of Softmax."""
    caffenet = re.sub(r"dim: \d+", "dim: 10", find_public_model(CAFFENET).read_text(), count=1)
    caffenet = re.sub(r'layer \{\s*name: "prob".*?\n\}\n?', "", caffenet, flags=re.S)
    caffenet += ('layer { name: "label" type: "Input" top: "label" input_param { shape { dim: 10 } } }\n'
                 'layer { name: "loss" type: "SoftmaxWithLoss" bottom: "fc8" bottom: "label" top: "loss" }\n')
    nets = {"lenet_b64": LENET.read_text(), "caffenet_loss_b10": caffenet}
    for name, text in nets.items():
        (folder / f"{name}.prototxt").write_text(text)
    return {name: folder / f"{name}.prototxt" for name in nets}


def caffe_time(command: list[str], net: pathlib.Path, iterations: int,
               env: dict[str, str]) -> tuple[float, float]:
    """(forward, forward+backward) milliseconds that one `caffe time` run reports."""
    done = subprocess.run([*command, "time", "-model", str(net), "-iterations", str(iterations)],
                          env={**os.environ, "GLOG_logtostderr": "1", **env}, capture_output=True, text=True,
                          check=True)
    found = AVERAGES.search(done.stdout + done.stderr)
    if found is None:
        raise RuntimeError(f"{command[0]} time printed no averages:\n{done.stderr[-2000:]}")
    return float(found.group(1)), float(found.group(2))


@contextlib.contextmanager
def condition(name: str) -> Iterator[None]:
    """Idle, or one core kept spinning by another process while inside."""
    if name == "idle":
        yield
        return
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def main_job_seconds() -> float:
    """Training wall time of the MNIST main job, in a scratch copy of the example."""
    with tempfile.TemporaryDirectory() as folder:
        copy = pathlib.Path(folder) / "repo"
        shutil.copytree(REPO / "examples", copy / "examples",
                        ignore=shutil.ignore_patterns("mnist_*_lmdb", "__pycache__"))
        done = subprocess.run([sys.executable, str(copy / "examples" / "mnist" / "train_lenet.py")],
                              capture_output=True, text=True, check=True)
    return float(TRAINING.search(done.stdout + done.stderr).group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--caffe", type=pathlib.Path,
                        help="a reference BVLC Caffe build (its build/tools/caffe runs)")
    parser.add_argument("--main-job", action="store_true", help="also train the MNIST job idle and busy")
    args = parser.parse_args()
    ours = [str(pathlib.Path(sys.executable).with_name("caffe"))]
    runners = {"ours, 1 thread": (ours, {"CAFFE_HOST_THREADS": "1"}),
               "ours, 2 threads": (ours, {"CAFFE_HOST_THREADS": "2"})}
    if args.caffe:
        runners["Caffe"] = ([str(args.caffe / "build" / "tools" / "caffe")], {})
    times: dict[tuple[str, str, str], list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as folder:
        try:
            nets = write_nets(pathlib.Path(folder))
        except PublicModelsError as err:
            raise SystemExit(f"bench_threads: {err}") from None
        for state in ("idle", "busy"):
            with condition(state):
                for _ in range(args.rounds):
                    for net, path in nets.items():
                        for runner, (command, env) in runners.items():
                            times.setdefault((state, net, runner), []).append(
                                caffe_time(command, path, ITERATIONS[net], env))
    kernels = os.environ.get("OPENBLAS_CORETYPE", "(default)")
    print(f"OPENBLAS_CORETYPE={kernels}, {args.rounds} rounds, medians of forward / forward+backward")
    for state in ("idle", "busy"):
        for net in nets:
            medians = {runner: [statistics.median(x) for x in zip(*times[state, net, runner], strict=True)]
                       for runner in runners}
            line = f"{state:4s} {net:17s}" + "".join(f" | {runner}: {forward:7.2f} / {both:7.2f} ms"
                                                   for runner, (forward, both) in medians.items())
            two, one = medians["ours, 2 threads"], medians["ours, 1 thread"]
            line += f" | 2/1 threads: {two[0] / one[0]:.2f} / {two[1] / one[1]:.2f}"
            if "Caffe" in medians:
                caffe = medians["Caffe"]
                line += f" | ours/Caffe: {two[0] / caffe[0]:.2f} / {two[1] / caffe[1]:.2f}"
            print(line)
    if args.main_job:
        idle = main_job_seconds()
        with condition("busy"):
            busy = main_job_seconds()
        print(f"main job training: idle {idle:.1f} s, busy {busy:.1f} s, busy/idle {busy / idle:.2f}")


if __name__ == "__main__":
    main()
