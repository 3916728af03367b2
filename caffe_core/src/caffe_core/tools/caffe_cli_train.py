"""`caffe train`: train from a solver, finetune from --weights or resume from --snapshot."""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
from collections.abc import Iterator

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.parallel.data_parallel import DataParallel
from caffe_core.parallel.mpi_world import launched_size
from caffe_core.parallel.nccl_handle import rank_communicator
from caffe_core.proto import caffe_pb2
from caffe_core.solvers import Solver, SolverAction, create_solver, read_solver_param
from caffe_core.tools.caffe_cli_common import parse_gpus, require, stages_of, use_devices
from caffe_core.tools.caffe_cli_ranks import join_ranks, one_job, relaunch_per_gpu

log = logging.getLogger("caffe.tool")

EFFECTS = {"stop": SolverAction.STOP, "snapshot": SolverAction.SNAPSHOT, "none": SolverAction.NONE}


def signal_effect(name: str, flag: str) -> SolverAction:
    """The solver action a --sigint_effect/--sighup_effect value asks for."""
    if name not in EFFECTS:
        raise CaffeError(f'Invalid signal effect "{name}" was specified for --{flag} '
                         f'(stop, snapshot or none)')
    return EFFECTS[name]


class SignalActions:
    """Turns SIGINT/SIGHUP into solver actions, as Caffe's SignalHandler (active inside `installed()`)."""

    def __init__(self, sigint: SolverAction, sighup: SolverAction, terminate: bool = False) -> None:
        self.effects: dict[int, SolverAction] = {signal.SIGINT: sigint}
        if hasattr(signal, "SIGHUP"):
            self.effects[signal.SIGHUP] = sighup
        if terminate:
            # Launchers (mpiexec, srun) stop a job with SIGTERM; the root then acts as on SIGINT.
            self.effects[signal.SIGTERM] = sigint
        self.pending: list[int] = []

    def _handle(self, signum: int, frame: object) -> None:
        self.pending.append(signum)

    def __call__(self) -> SolverAction:
        """The action of the oldest signal not yet acted on."""
        if not self.pending:
            return SolverAction.NONE
        return self.effects[self.pending.pop(0)]

    @contextlib.contextmanager
    def installed(self) -> Iterator[None]:
        """Installs the handlers for the duration of the block, then puts the previous ones back."""
        previous = {signum: signal.signal(signum, self._handle) for signum in self.effects}
        try:
            yield
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)


class ProgressBar:
    """A tqdm bar over the iterations, as a solver callback (used only when stderr is a terminal)."""

    def __init__(self, solver: Solver) -> None:
        from tqdm import tqdm

        self.bar = tqdm(total=solver.param.max_iter, initial=solver.iter, file=sys.stderr, unit="iter",
                        dynamic_ncols=True, leave=False)

    def on_start(self) -> None:
        """Nothing to do before an iteration."""

    def on_gradients_ready(self) -> None:
        """Advances the bar by one iteration."""
        self.bar.update(1)


def _progress(solver: Solver) -> contextlib.AbstractContextManager:
    if not sys.stderr.isatty():
        return contextlib.nullcontext()
    try:
        from tqdm.contrib.logging import logging_redirect_tqdm
    except ImportError:
        return contextlib.nullcontext()
    bar = ProgressBar(solver)
    solver.add_callback(bar)
    stack = contextlib.ExitStack()
    stack.enter_context(logging_redirect_tqdm(loggers=[logging.getLogger("caffe")]))
    stack.callback(bar.bar.close)
    return stack


def train(args: argparse.Namespace) -> int:
    """Caffe's train(): checks the flags, builds the solver, restores or finetunes, then Solve()."""
    require(args.solver, "Need a solver definition to train (--solver).")
    if args.snapshot and args.weights:
        raise CaffeError("Give a snapshot to resume training or weights to finetune but not both "
                         "(--snapshot and --weights are exclusive).")
    sigint = signal_effect(args.sigint_effect, "sigint_effect")
    sighup = signal_effect(args.sighup_effect, "sighup_effect")
    param = read_solver_param(args.solver)
    param.train_state.level = args.level
    param.train_state.stage.extend(stages_of(args))
    gpu_flag = args.gpu
    if not gpu_flag and param.HasField("solver_mode") and param.solver_mode == caffe_pb2.SolverParameter.GPU:
        gpu_flag = str(param.device_id)
    gpus = parse_gpus(gpu_flag)
    if len(gpus) > 1 and launched_size() <= 1:
        return relaunch_per_gpu(gpus, sys.argv[1:])
    if args.snapshot:
        param.ClearField("weights")
    elif args.weights:
        param.ClearField("weights")
        param.weights.append(args.weights)
    if launched_size() > 1:
        comm = join_ranks()
        with one_job(comm):
            device = [gpus[comm.rank % len(gpus)]] if gpus else []
            use_devices(device, "training")
            param.device_id = device[0] if device else param.device_id
            return _train_ranks(args, param, SignalActions(sigint, sighup, terminate=True))
    use_devices(gpus, "training")
    if gpus:
        param.device_id = gpus[0]
    solver = create_solver(param)
    solver.stop_on_nan = args.stop_on_nan
    actions = SignalActions(sigint, sighup)
    solver.set_action_function(actions)
    if args.snapshot:
        log.info("Resuming from %s", args.snapshot)
        solver.restore(args.snapshot)
    log.info("Starting Optimization")
    with actions.installed(), _progress(solver):
        solver.solve()
    log.info("Optimization Done.")
    return 0


def _train_ranks(args: argparse.Namespace, param: caffe_pb2.SolverParameter, actions: SignalActions) -> int:
    """One rank of a data-parallel run: the root restores and handles signals; every rank starts from the
    root's weights and state, and averages gradients with the others through a DataParallel callback."""
    solver = create_solver(param)
    solver.stop_on_nan = args.stop_on_nan
    root = runtime.root_solver()
    if root:
        solver.set_action_function(actions)
        if args.snapshot:
            log.info("Resuming from %s", args.snapshot)
            solver.restore(args.snapshot)
    parallel = DataParallel(solver, rank_communicator())
    parallel.broadcast()
    parallel.broadcast_state()
    solver.add_callback(parallel)
    if param.layer_wise_reduce:
        solver.net.add_after_backward(parallel)
    log.info("Starting Optimization")
    with actions.installed() if root else contextlib.nullcontext():
        solver.solve()
    log.info("Optimization Done.")
    return 0
