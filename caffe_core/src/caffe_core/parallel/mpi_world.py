"""The ranks of a job started by mpiexec (Open MPI, MPICH) or srun, through mpi4py."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from caffe_core.errors import CaffeError

if TYPE_CHECKING:
    from mpi4py import MPI

# What launchers export to each rank: the job's size.
SIZE_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "SLURM_NTASKS")
LOCAL_SIZE_VARIABLES = ("OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE")


def _first_int(names: tuple[str, ...]) -> int:
    for name in names:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 1


def launched_size() -> int:
    """How many ranks the launcher started (1 outside mpiexec and srun)."""
    if "SLURM_NTASKS" in os.environ and "SLURM_STEP_ID" not in os.environ:
        return _first_int(SIZE_VARIABLES[:3])  # inside an allocation but not in an srun step
    return _first_int(SIZE_VARIABLES)


def ranks_on_this_host() -> int:
    """How many of the job's ranks share this machine (1 when unknown)."""
    return _first_int(LOCAL_SIZE_VARIABLES)


def world() -> MPI.Intracomm:
    """mpi4py's COMM_WORLD; a clear error when the MPI extra is not installed."""
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise CaffeError("training on several processes needs MPI: pip install 'caffe-core[mpi]' (mpi4py "
                         f"and Open MPI from wheels), then start the ranks with mpiexec ({err})") from err
    return MPI.COMM_WORLD
