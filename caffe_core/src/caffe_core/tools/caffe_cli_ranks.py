"""`caffe train` on several processes: joining the MPI ranks, one process per GPU, and failing as one job."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.parallel.communicators import MpiCommunicator
from caffe_core.parallel.mpi_world import ranks_on_this_host, world

log = logging.getLogger("caffe.tool")

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def mpiexec() -> str:
    """The mpiexec of this environment (the MPI extra puts Open MPI's beside the Python executable)."""
    beside = Path(sys.executable).with_name("mpiexec")
    found = str(beside) if beside.exists() else shutil.which("mpiexec")
    if not found:
        raise CaffeError("training on several GPUs starts one process per GPU with mpiexec, which was not "
                         "found: pip install 'caffe-core[mpi]'")
    return found


def relaunch_per_gpu(gpus: Sequence[int], argv: Sequence[str]) -> int:
    """Runs this same `caffe` command once per GPU under mpiexec (as Caffe's -gpu 0,1 runs one solver
    per GPU); returns the job's exit status."""
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # Open MPI refuses root unless told; a container's root user is the common case.
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    command = [mpiexec(), "-n", str(len(gpus)), sys.executable, "-m", "caffe_core.tools.caffe_cli", *argv]
    log.info("Starting %d solvers, one per GPU %s: %s", len(gpus), list(gpus), " ".join(command))
    return subprocess.run(command, env=env, check=False).returncode


def join_ranks() -> MpiCommunicator:
    """Joins the job's ranks: solver count and rank, one BLAS thread per rank on a shared host, and INFO
    logging on the root alone (as Caffe logs only from the root solver)."""
    comm = MpiCommunicator(world())
    runtime.set_solver_count(comm.size)
    runtime.set_solver_rank(comm.rank)
    runtime.set_multiprocess(True)
    if ranks_on_this_host() > 1 and not any(name in os.environ for name in THREAD_VARIABLES):
        from threadpoolctl import threadpool_limits

        threadpool_limits(1, user_api="blas")
    if comm.rank != 0:
        logging.getLogger("caffe").setLevel(logging.WARNING)
        # Caffe's signal flags act on the root, which hands its action to every rank each iteration, so the
        # others stop (or snapshot) with it; launchers (mpiexec, srun) signal every rank.
        for signum in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if signum is not None:
                signal.signal(signum, signal.SIG_IGN)
    log.info("Training with %d solvers (MPI ranks)", comm.size)
    return comm


@contextlib.contextmanager
def one_job(comm: MpiCommunicator) -> Iterator[None]:
    """Any failure of one rank ends every rank, naming the rank and the error, so that none waits forever."""
    try:
        yield
    except BaseException as err:  # whatever it is, the other ranks must not wait for this one
        what = f"{type(err).__name__}: {err}" if str(err) else type(err).__name__
        log.error("rank %d of %d failed: %s; ending the job", comm.rank, comm.size, what)
        logging.shutdown()
        comm.abort(1)
        raise
