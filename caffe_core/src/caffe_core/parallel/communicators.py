"""How ranks sum gradient buckets and share weights: MPI on the host, NCCL (or its stand-in) on devices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

import numpy as np

from caffe_core.array_types import Array, ArrayModule

if TYPE_CHECKING:
    from mpi4py import MPI

T = TypeVar("T")


class Communicator(Protocol):
    """In-place collectives over the ranks of one job."""

    rank: int
    size: int

    def start_sum(self, array: Array) -> MPI.Request | None:
        """Starts summing a contiguous array over the ranks in place; returns what `finish` waits on."""

    def finish(self, pending: list[MPI.Request]) -> None:
        """Waits until every started sum is complete."""

    def broadcast(self, array: Array, root: int = 0) -> None:
        """Overwrites the array with the root's."""

    def broadcast_object(self, value: T, root: int = 0) -> T:
        """The root's value of a small Python object."""

    def abort(self, code: int) -> None:
        """Ends every rank of the job."""


class MpiCommunicator:
    """MPI collectives on host (numpy) arrays; sums are non-blocking, so they overlap the rest of backward."""

    def __init__(self, comm: MPI.Comm) -> None:
        from mpi4py import MPI

        self._mpi = MPI
        self.comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def start_sum(self, array: np.ndarray) -> MPI.Request:
        """A non-blocking in-place all-reduce (MPI_Iallreduce with MPI_IN_PLACE)."""
        return self.comm.Iallreduce(self._mpi.IN_PLACE, array, op=self._mpi.SUM)

    def finish(self, pending: list[MPI.Request]) -> None:
        """MPI_Waitall."""
        if pending:
            self._mpi.Request.Waitall(pending)

    def sum_now(self, array: np.ndarray) -> None:
        """A blocking in-place all-reduce."""
        self.comm.Allreduce(self._mpi.IN_PLACE, array, op=self._mpi.SUM)

    def broadcast(self, array: np.ndarray, root: int = 0) -> None:
        """MPI_Bcast in place."""
        self.comm.Bcast(array, root=root)

    def broadcast_object(self, value: T, root: int = 0) -> T:
        """A pickled broadcast."""
        return self.comm.bcast(value, root=root)

    def abort(self, code: int) -> None:
        """MPI_Abort on COMM_WORLD."""
        self.comm.Abort(code)


class StagedCommunicator:
    """Device arrays summed through host copies over MPI: the stand-in's NCCL (and the fallback without)."""

    def __init__(self, host: MpiCommunicator) -> None:
        self.host = host
        self.rank, self.size = host.rank, host.size

    def start_sum(self, array: Array) -> None:
        """Copies down, sums over MPI, copies back up (synchronously: staging cannot overlap)."""
        staged = array.get()  # type: ignore[attr-defined]  # a cupy array's download; Array names numpy's type
        self.host.sum_now(staged)
        array.set(staged)  # type: ignore[attr-defined]  # a cupy array's upload; Array names numpy's type
        return None

    def finish(self, pending: list[MPI.Request]) -> None:
        """Nothing is left pending."""

    def broadcast(self, array: Array, root: int = 0) -> None:
        """The root's array, through the host."""
        staged = array.get()  # type: ignore[attr-defined]  # a cupy array's download; Array names numpy's type
        self.host.broadcast(staged, root)
        array.set(staged)  # type: ignore[attr-defined]  # a cupy array's upload; Array names numpy's type

    def broadcast_object(self, value: T, root: int = 0) -> T:
        """A pickled broadcast over MPI."""
        return self.host.broadcast_object(value, root)

    def abort(self, code: int) -> None:
        """MPI_Abort."""
        self.host.abort(code)


class NcclCommunicator:
    """NCCL through cupy on CUDA devices; MPI carries the NCCL id and aborts the job."""

    def __init__(self, cupy: ArrayModule, host: MpiCommunicator | None, uid: object = None, size: int = 0,
                 rank: int = 0) -> None:
        from cupy.cuda import nccl

        self._nccl, self._cupy, self.host = nccl, cupy, host
        if host is not None:
            uid = host.broadcast_object(nccl.get_unique_id() if host.rank == 0 else None)
            size, rank = host.size, host.rank
        self.rank, self.size = rank, size
        self.comm = nccl.NcclCommunicator(size, uid, rank)

    def _stream(self) -> int:
        return self._cupy.cuda.get_current_stream().ptr

    def start_sum(self, array: Array) -> None:
        """ncclAllReduce in place on the current stream (ordered before the update that follows)."""
        pointer = array.data.ptr  # type: ignore[attr-defined]  # cupy's device pointer; Array names numpy's type
        self.comm.allReduce(pointer, pointer, array.size, self._nccl.NCCL_FLOAT32, self._nccl.NCCL_SUM,
                            self._stream())
        return None

    def finish(self, pending: list[MPI.Request]) -> None:
        """Waits for the stream."""
        self._cupy.cuda.get_current_stream().synchronize()

    def broadcast(self, array: Array, root: int = 0) -> None:
        """ncclBcast in place."""
        pointer = array.data.ptr  # type: ignore[attr-defined]  # cupy's device pointer; Array names numpy's type
        self.comm.bcast(pointer, array.size, self._nccl.NCCL_FLOAT32, root, self._stream())
        self.finish([])

    def broadcast_object(self, value: T, root: int = 0) -> T:
        """Small objects go over MPI (the only way without it is the same value everywhere)."""
        return value if self.host is None else self.host.broadcast_object(value, root)

    def abort(self, code: int) -> None:
        """Ends the job through MPI when there is one, else this process."""
        if self.host is not None:
            self.host.abort(code)
        raise SystemExit(code)
