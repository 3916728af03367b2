"""Data-parallel training on MPI ranks: `mpiexec -n 2 caffe train` equals one process with iter_size 2,
`--gpu=0,1` starts a rank per GPU, pycaffe's NCCL handle works over ranks, and a failing rank ends the job.

LeNet on the bundled MNIST digits, batch 64 per rank. Caffe's sharding gives rank r the records r, r+2, ...
of each 128, so each rank's gradient sums other samples than either of the single process's two passes and
rounds differently (1e-8 after 10 iterations); training amplifies such rounding, as it does a change of the
BLAS thread count, which alone moves a single process's weights by 5e-3 after 300 iterations.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text, read_text_file, write_text_file

pytest.importorskip("mpi4py")
pytest.importorskip("caffe_layers_vision")
pytest.importorskip("caffe_layers_data")

BIN = Path(sys.executable).parent
SUPPORT = Path(__file__).resolve().parent / "parallel_support"


@pytest.fixture
def workdir(mnist_workdir) -> Path:
    """The shared folder holding examples/mnist with its LMDBs (the prototxts' paths are relative to it)."""
    return mnist_workdir.root


def solver_file(root: Path, name: str, iterations: int, extra: str = "", net: str = "") -> str:
    text = (root / "examples" / "mnist" / "lenet_solver.prototxt").read_text()
    text = text.replace("max_iter: 2000", f"max_iter: {iterations}").replace("test_interval: 500",
                                                                            "test_interval: 100000")
    text = text.replace("snapshot_after_train: false", "snapshot_after_train: true")
    text = text.replace('snapshot_prefix: "examples/mnist/lenet"', f'snapshot_prefix: "{name}"')
    if net:
        text = text.replace('net: "examples/mnist/lenet_train_test.prototxt"', f'net: "{net}"')
    path = root / f"{name}.prototxt"
    path.write_text(text + "\ntest_initialization: false\n" + extra)
    return path.name


def environment(**extra: str) -> dict[str, str]:
    env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMP_NUM_THREADS": "1", "PYTHONPATH": str(SUPPORT)}
    env.pop("CAFFE_GPU_STANDIN", None)
    env.update(extra)
    return env


def run(root: Path, command: list[str], ranks: int = 0, **env: str) -> subprocess.CompletedProcess:
    launcher = [str(BIN / "mpiexec"), "-n", str(ranks)] if ranks else []
    return subprocess.run(launcher + command, cwd=root, env=environment(**env), capture_output=True,
                          text=True, timeout=600)


def train(root: Path, solver: str, ranks: int = 0, *flags: str, **env: str) -> subprocess.CompletedProcess:
    done = run(root, [str(BIN / "caffe"), "train", f"--solver={solver}",
                      "--weights=examples/mnist/lenet_init.caffemodel", *flags], ranks, **env)
    assert done.returncode == 0, done.stderr[-4000:]
    return done


def weights(path: Path) -> dict[tuple[str, int], np.ndarray]:
    net = caffe_pb2.NetParameter()
    net.ParseFromString(path.read_bytes())
    return {(layer.name, i): np.asarray(blob.data, np.float32) for layer in net.layer
            for i, blob in enumerate(layer.blobs)}


def largest_difference(a: Path, b: Path) -> float:
    first, second = weights(a), weights(b)
    assert first.keys() == second.keys() and first
    return max(float(np.abs(first[k] - second[k]).max()) for k in first)


def test_two_ranks_equal_one_process_with_iter_size_2(workdir):
    train(workdir, solver_file(workdir, "single10", 10, "iter_size: 2"))
    done = train(workdir, solver_file(workdir, "ranks10", 10), 2)
    assert "Training with 2 solvers (MPI ranks)" in done.stderr
    assert done.stderr.count("Snapshotting to binary proto file") == 1
    assert largest_difference(workdir / "single10_iter_10.caffemodel",
                              workdir / "ranks10_iter_10.caffemodel") < 1e-6


def test_a_hostfile_with_two_slots_on_127_0_0_1_runs_the_same_job(workdir):
    (workdir / "hosts").write_text("127.0.0.1 slots=2\n")
    train(workdir, solver_file(workdir, "single10h", 10, "iter_size: 2"))
    done = run(workdir, [str(BIN / "caffe"), "train", f"--solver={solver_file(workdir, 'hosts10', 10)}",
                         "--weights=examples/mnist/lenet_init.caffemodel"], 2)
    assert done.returncode == 0
    launched = subprocess.run([str(BIN / "mpiexec"), "--hostfile", "hosts", "-n", "2", str(BIN / "caffe"),
                               "train", f"--solver={solver_file(workdir, 'hostfile10', 10)}",
                               "--weights=examples/mnist/lenet_init.caffemodel"], cwd=workdir,
                              env=environment(), capture_output=True, text=True, timeout=600)
    assert launched.returncode == 0, launched.stderr[-4000:]
    assert largest_difference(workdir / "hosts10_iter_10.caffemodel",
                              workdir / "hostfile10_iter_10.caffemodel") == 0
    assert largest_difference(workdir / "single10h_iter_10.caffemodel",
                              workdir / "hostfile10_iter_10.caffemodel") < 1e-6


@pytest.mark.slow
def test_after_300_iterations_the_runs_differ_by_float_rounding_only(workdir):
    train(workdir, solver_file(workdir, "single300", 300, "iter_size: 2"))
    train(workdir, solver_file(workdir, "ranks300", 300), 2)
    difference = largest_difference(workdir / "single300_iter_300.caffemodel",
                                    workdir / "ranks300_iter_300.caffemodel")
    largest = max(float(np.abs(w).max()) for w in weights(workdir / "single300_iter_300.caffemodel").values())
    assert largest > 0.3
    # The noise floor (one process, 1 vs 2 BLAS threads) is 5.3e-3 here; twice that bounds the difference.
    assert difference < 1e-2


def test_a_gpu_list_starts_one_rank_per_gpu_with_the_nccl_stand_in(workdir):
    train(workdir, solver_file(workdir, "single5", 5, "iter_size: 2"))
    done = train(workdir, solver_file(workdir, "gpus5", 5), 0, "--gpu=0,1", CAFFE_GPU_STANDIN="1")
    assert "Starting 2 solvers, one per GPU [0, 1]" in done.stderr
    assert done.stderr.count("GPU stand-in transfers:") == 2
    assert largest_difference(workdir / "single5_iter_5.caffemodel",
                              workdir / "gpus5_iter_5.caffemodel") < 1e-6


PYCAFFE_RANKS = """
import sys
import numpy as np
from mpi4py import MPI
import caffe

rank = MPI.COMM_WORLD.rank
caffe.set_solver_count(2)
caffe.set_solver_rank(rank)
caffe.set_multiprocess(True)
solver = caffe.SGDSolver(sys.argv[1])
if rank == 0:
    solver.net.copy_from("examples/mnist/lenet_init.caffemodel")
nccl = caffe.NCCL(solver, caffe.NCCL.new_uid())
nccl.bcast()
solver.add_callback(nccl)
if solver.param.layer_wise_reduce:
    solver.net.after_backward(nccl)
solver.step(5)
np.save(f"pycaffe_rank{rank}.npy", solver.net.params["ip2"][0].data)
"""


def test_pycaffe_nccl_as_in_bvlc_train_py_over_mpi_ranks(workdir):
    has = run(workdir, [sys.executable, "-c", "import caffe; print(caffe.has_nccl())"])
    assert has.stdout.strip() == "True"
    train(workdir, solver_file(workdir, "single5b", 5, "iter_size: 2"))
    script = workdir / "pycaffe_ranks.py"
    script.write_text(textwrap.dedent(PYCAFFE_RANKS))
    done = run(workdir, [sys.executable, str(script), solver_file(workdir, "pycaffe5", 5)], 2)
    assert done.returncode == 0, done.stderr[-4000:]
    first, second = np.load(workdir / "pycaffe_rank0.npy"), np.load(workdir / "pycaffe_rank1.npy")
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, weights(workdir / "single5b_iter_5.caffemodel")[("ip2", 0)].reshape(
        first.shape), atol=1e-6)


def test_sigterm_on_the_root_stops_every_rank_and_the_root_snapshots_once(workdir):
    solver = solver_file(workdir, "signalled", 100000, "display: 1")
    command = [str(BIN / "mpiexec"), "-n", "2", str(BIN / "caffe"), "train", f"--solver={solver}",
               "--weights=examples/mnist/lenet_init.caffemodel", "--sigint_effect=stop"]
    job = subprocess.Popen(command, cwd=workdir, env=environment(), stderr=subprocess.PIPE, text=True)
    lines = []
    for line in job.stderr:
        lines.append(line)
        if "Iteration 3 (" in line:
            os.kill(int(line.split()[2]), signal.SIGTERM)  # the root's pid, from its log line
            break
    lines.extend(job.stderr)
    assert job.wait(timeout=120) == 0, "".join(lines[-40:])
    text = "".join(lines)
    assert "Optimization stopped early." in text
    assert text.count("Snapshotting to binary proto file") == 1
    assert len(list(workdir.glob("signalled_iter_*.caffemodel"))) == 1


FAULTY_LAYER = """
name: "fault" type: "Python" bottom: "data" top: "checked"
python_param { module: "rank_faults" layer: "FailOnRank" param_str: "1,3,%s" }
"""


def faulty_net(root: Path, how: str) -> str:
    """The main job's net with the fault layer between the data and conv1, written under root."""
    net = read_text_file(root / "examples" / "mnist" / "lenet_train_test.prototxt", caffe_pb2.NetParameter())
    faulty = caffe_pb2.NetParameter(name=net.name)
    for layer in net.layer:
        if layer.name == "conv1":
            faulty.layer.append(parse_text(FAULTY_LAYER % how, caffe_pb2.LayerParameter()))
            layer.bottom[:] = ["checked"]
        faulty.layer.append(layer)
    write_text_file(root / f"faulty_{how}.prototxt", faulty)
    return f"faulty_{how}.prototxt"


@pytest.mark.parametrize("how", ["raise", "kill"])
def test_a_failing_rank_ends_the_whole_job(workdir, how):
    solver = solver_file(workdir, f"solver_{how}", 20, net=faulty_net(workdir, how))
    done = run(workdir, [str(BIN / "caffe"), "train", f"--solver={solver}"], 2)
    assert done.returncode != 0
    if how == "raise":
        assert ("rank 1 of 2 failed: RuntimeError: injected failure at forward 3; ending the job"
                in done.stderr)
    else:
        assert "process rank 1 with PID" in done.stderr and "signal 9" in done.stderr
    assert not list(workdir.glob(f"solver_{how}_iter_*"))
