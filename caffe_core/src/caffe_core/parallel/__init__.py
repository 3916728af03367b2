"""Data-parallel training: several solvers, one per process, averaging their gradients every iteration.

`mpi_world` starts the ranks' communication under mpiexec or srun (mpi4py on Open MPI, `caffe-core[mpi]`);
`communicators` moves gradient buckets (MPI for host arrays, NCCL through cupy for device arrays, and a
host-staged stand-in of NCCL for the cupy stand-in); `flat_gradients` lays every learnable param's diff in
one buffer cut into buckets in the order backward completes them; `data_parallel` is the solver callback
that reduces those buckets as backward goes, as Caffe's NCCL class with layer_wise_reduce does.
"""
