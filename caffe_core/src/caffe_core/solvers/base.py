"""Solver: builds the train and test nets from a SolverParameter and runs Caffe's training loop.

Step, Solve, Test, Snapshot and Restore follow Caffe's Solver exactly (order of testing, display,
callbacks, update, iteration increment and snapshot); the update rule itself is a subclass's. With several
solvers training together (runtime.solver_count() > 1), only the root solver has test nets, reads weight
files, displays and snapshots, as in Caffe 1.0's multi-GPU training.
"""

from __future__ import annotations

import enum
import logging
import math
import os
import time
from collections.abc import Callable
from typing import Protocol

import numpy as np

from caffe_core import proto_io, runtime
from caffe_core.net import Net
from caffe_core.net_files import read_net_param
from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import NonFiniteLossError, SolverError, SolverStateError
from caffe_core.solvers.param_file import read_solver_param
from caffe_core.solvers.state_io import SolverStateData, read_state, write_state
from caffe_core.solvers.validate import check_solver_param

log = logging.getLogger("caffe.solver")


class SolverAction(enum.Enum):
    """What an action function (e.g. a signal handler) asks the training loop to do."""

    NONE = "none"
    STOP = "stop"
    SNAPSHOT = "snapshot"


class SolverCallback(Protocol):
    """Hooks called around each iteration, as Caffe's Solver::Callback."""

    def on_start(self) -> None:
        """Called before the iteration's forward/backward passes."""

    def on_gradients_ready(self) -> None:
        """Called after the gradients are computed, before the update."""


def agreed_action(solver: Solver, action: SolverAction) -> SolverAction:
    """The action every solver takes this iteration: callbacks with `agree_on_action` (e.g. the
    data-parallel reducer, which hands every rank the root's action) may replace the local one."""
    for callback in solver.callbacks:
        agree = getattr(callback, "agree_on_action", None)
        if agree is not None:
            action = agree(action)
    return action


class Solver:
    """Caffe's Solver: nets, iteration counter, loss smoothing, testing, snapshots and restore."""

    type: str = ""

    def __init__(self, param: caffe_pb2.SolverParameter | str | os.PathLike) -> None:
        if isinstance(param, caffe_pb2.SolverParameter):
            copy = caffe_pb2.SolverParameter()
            copy.CopyFrom(param)
            param = copy
        else:
            param = read_solver_param(param)
        log.info("Initializing solver from parameters: \n%s", proto_io.to_text(param))
        check_solver_param(param)
        self.check_param(param)
        self.param = param
        if param.random_seed >= 0:
            runtime.set_random_seed(param.random_seed + runtime.solver_rank())
        self.net = self._init_train_net()
        self.test_nets = self._init_test_nets()
        log.info("Solver scaffolding done.")
        self.iter = 0
        self.current_step = 0
        self.callbacks: list[SolverCallback] = []
        self.action_function: Callable[[], SolverAction] | None = None
        self.requested_early_exit = False
        self.stop_on_nan = False
        self.smoothed_loss = np.float32(0)
        self.test_scores: list[list[float]] = [[] for _ in self.test_nets]
        self._losses: list[np.float32] = []
        self._timer_start = time.perf_counter()
        self._iterations_last = 0

    # ----- subclass interface -----
    @classmethod
    def check_param(cls, param: caffe_pb2.SolverParameter) -> None:
        """Rejects settings this solver type cannot use (Caffe's constructor CHECKs)."""

    def apply_update(self) -> None:
        """Turns the accumulated gradients into the update and applies it."""
        raise NotImplementedError

    def solver_state(self, model_filename: str) -> SolverStateData:
        """The state to save with a snapshot."""
        raise NotImplementedError

    def restore_solver_state(self, state: SolverStateData, source: str) -> None:
        """Loads a saved state's history (after check_solver_state accepted it)."""
        raise NotImplementedError

    def check_solver_state(self, state: SolverStateData, source: str) -> None:
        """Raises SolverStateError when a saved state does not fit this solver and net."""

    # ----- construction -----
    def _init_train_net(self) -> Net:
        param = self.param
        if param.HasField("train_net_param"):
            log.info("Creating training net specified in train_net_param.")
            net_param = _copy(param.train_net_param)
        elif param.HasField("train_net"):
            log.info("Creating training net from train_net file: %s", param.train_net)
            net_param = read_net_param(param.train_net)
        elif param.HasField("net_param"):
            log.info("Creating training net specified in net_param.")
            net_param = _copy(param.net_param)
        else:
            log.info("Creating training net from net file: %s", param.net)
            net_param = read_net_param(param.net)
        state = caffe_pb2.NetState(phase=caffe_pb2.TRAIN)
        state.MergeFrom(net_param.state)
        state.MergeFrom(param.train_state)
        net_param.state.CopyFrom(state)
        net = Net(net_param)
        self._load_weights(net)
        return net

    def _init_test_nets(self) -> list[Net]:
        if not runtime.root_solver():
            return []
        param = self.param
        sources: list[str] = []
        net_params: list[caffe_pb2.NetParameter] = []
        for test_param in param.test_net_param:
            sources.append("test_net_param")
            net_params.append(_copy(test_param))
        for path in param.test_net:
            sources.append(f"test_net file: {path}")
            net_params.append(read_net_param(path))
        remaining = len(param.test_iter) - len(net_params)
        for _ in range(max(remaining, 0)):
            if param.HasField("net_param"):
                sources.append("net_param")
                net_params.append(_copy(param.net_param))
            elif param.HasField("net"):
                sources.append(f"net file: {param.net}")
                net_params.append(read_net_param(param.net))
        nets = []
        for i, net_param in enumerate(net_params):
            state = caffe_pb2.NetState(phase=caffe_pb2.TEST)
            state.MergeFrom(net_param.state)
            if param.test_state:
                state.MergeFrom(param.test_state[i])
            net_param.state.CopyFrom(state)
            log.info("Creating test net (#%d) specified by %s", i, sources[i])
            net = Net(net_param)
            net.debug_info = param.debug_info
            self._load_weights(net)
            nets.append(net)
        return nets

    def _load_weights(self, net: Net) -> None:
        if not runtime.root_solver():
            return  # the root's weights reach the other solvers by broadcast
        for weights in self.param.weights:
            for path in (name.strip() for name in weights.split(",")):
                log.info("Finetuning from %s", path)
                net.copy_trained_layers_from(path)

    # ----- callbacks and requests -----
    def add_callback(self, callback: SolverCallback) -> None:
        """Adds an object whose on_start/on_gradients_ready run around every iteration."""
        self.callbacks.append(callback)

    def set_action_function(self, function: Callable[[], SolverAction] | None) -> None:
        """Installs the function polled for stop/snapshot requests (e.g. from signals)."""
        self.action_function = function

    def requested_action(self) -> SolverAction:
        """The pending request of the action function, or NONE."""
        return self.action_function() if self.action_function else SolverAction.NONE

    # ----- training -----
    def step(self, iters: int) -> None:
        """Runs `iters` iterations: test when due, forward/backward, display, update, snapshot."""
        param = self.param
        start_iter = self.iter
        stop_iter = self.iter + iters
        self._losses = []
        self.smoothed_loss = np.float32(0)
        self._timer_start = time.perf_counter()
        self._iterations_last = self.iter
        while self.iter < stop_iter:
            self.net.clear_param_diffs()
            if param.test_interval and self.iter % param.test_interval == 0 \
                    and (self.iter > 0 or param.test_initialization):
                self.test_all()
                if self.requested_early_exit:
                    break
            for callback in self.callbacks:
                callback.on_start()
            display = bool(param.display) and self.iter % param.display == 0
            self.net.debug_info = display and param.debug_info
            loss = np.float32(0)
            for _ in range(param.iter_size):
                loss += np.float32(self.net.forward_backward())
            loss /= np.float32(param.iter_size)
            self._update_smoothed_loss(loss, start_iter)
            self._check_finite(loss)
            if display and runtime.root_solver():
                self._display()
            for callback in self.callbacks:
                callback.on_gradients_ready()
            self.apply_update()
            self.iter += 1
            request = agreed_action(self, self.requested_action())
            due = (param.snapshot and self.iter % param.snapshot == 0) or request is SolverAction.SNAPSHOT
            if due and runtime.root_solver():
                self.snapshot()
            if request is SolverAction.STOP:
                self.requested_early_exit = True
                break

    def solve(self, resume_file: str | os.PathLike | None = None) -> None:
        """Restores resume_file if given, trains to max_iter, snapshots, then the final display and test."""
        param = self.param
        log.info("Solving %s", self.net.name)
        log.info("Learning Rate Policy: %s", param.lr_policy)
        self.requested_early_exit = False
        if resume_file is not None:
            log.info("Restoring previous solver status from %s", os.fspath(resume_file))
            self.restore(resume_file)
        start_iter = self.iter
        self.step(param.max_iter - self.iter)
        if not runtime.root_solver():
            return
        if param.snapshot_after_train and (not param.snapshot or self.iter % param.snapshot != 0):
            self.snapshot()
        if self.requested_early_exit:
            log.info("Optimization stopped early.")
            return
        if param.display and self.iter % param.display == 0:
            loss = np.float32(self.net.forward())
            self._update_smoothed_loss(loss, start_iter)
            log.info("Iteration %d, loss = %g", self.iter, self.smoothed_loss)
        if param.test_interval and self.iter % param.test_interval == 0:
            self.test_all()
        log.info("Optimization Done.")

    def _update_smoothed_loss(self, loss: np.float32, start_iter: int) -> None:
        average_loss = self.param.average_loss
        if len(self._losses) < average_loss:
            self._losses.append(loss)
            size = len(self._losses)
            self.smoothed_loss = np.float32((self.smoothed_loss * np.float32(size - 1) + loss)
                                            / np.float32(size))
        else:
            index = (self.iter - start_iter) % average_loss
            self.smoothed_loss = np.float32(self.smoothed_loss
                                            + (loss - self._losses[index]) / np.float32(average_loss))
            self._losses[index] = loss

    def _check_finite(self, loss: np.float32) -> None:
        if math.isfinite(float(loss)):
            return
        log.error("Iteration %d, loss = %g is not finite", self.iter, loss)
        if self.stop_on_nan:
            raise NonFiniteLossError(f"training stopped at iteration {self.iter}: the loss is {float(loss)} "
                                     f"(stop_on_nan is set)")

    def _display(self) -> None:
        lapse = time.perf_counter() - self._timer_start
        per_s = (self.iter - self._iterations_last) / (lapse if lapse else 1.0)
        log.info("Iteration %d (%g iter/s, %gs/%d iters), loss = %g", self.iter, per_s, round(lapse, 3),
                 self.param.display, self.smoothed_loss)
        self._timer_start = time.perf_counter()
        self._iterations_last = self.iter
        score_index = 0
        for blob_id in self.net.output_blob_indices:
            name = self.net.blob_names[blob_id]
            weight = np.float32(self.net.blob_loss_weights[blob_id])
            for value in self.net.blobs[blob_id].cpu_data().ravel():
                log.info("    Train net output #%d: %s = %g%s", score_index, name, value,
                         loss_note(weight, value))
                score_index += 1

    # ----- testing -----
    def test_all(self) -> None:
        """Tests every test net in turn (stopping early if a stop was requested)."""
        for test_net_id in range(len(self.test_nets)):
            if self.requested_early_exit:
                break
            self.test(test_net_id)

    def test(self, test_net_id: int = 0) -> None:
        """Runs test_iter forward passes of a test net on the current weights and logs the mean outputs."""
        log.info("Iteration %d, Testing net (#%d)", self.iter, test_net_id)
        test_net = self.test_nets[test_net_id]
        test_net.share_trained_layers_with(self.net)
        iterations = self.param.test_iter[test_net_id]
        scores: np.ndarray | None = None
        loss = np.float32(0)
        for _ in range(iterations):
            request = self.requested_action()
            while request is not SolverAction.NONE:
                if request is SolverAction.SNAPSHOT:
                    self.snapshot()
                else:
                    self.requested_early_exit = True
                request = self.requested_action()
            if self.requested_early_exit:
                break
            iter_loss = np.float32(test_net.forward())
            if self.param.test_compute_loss:
                loss += iter_loss
            result = np.concatenate([test_net.blobs[i].cpu_data().ravel()
                                     for i in test_net.output_blob_indices]).astype(np.float32) \
                if test_net.output_blob_indices else np.zeros(0, np.float32)
            scores = result.copy() if scores is None else scores + result
        if self.requested_early_exit:
            log.info("Test interrupted.")
            return
        if self.param.test_compute_loss:
            log.info("Test loss: %g", loss / np.float32(iterations))
        means = [] if scores is None else list(scores / np.float32(iterations))
        self.test_scores[test_net_id] = [float(v) for v in means]
        index = 0
        for blob_id in test_net.output_blob_indices:
            name = test_net.blob_names[blob_id]
            weight = np.float32(test_net.blob_loss_weights[blob_id])
            for _ in range(test_net.blobs[blob_id].count):
                mean = means[index]
                log.info("    Test net output #%d: %s = %g%s", index, name, mean, loss_note(weight, mean))
                index += 1

    # ----- snapshots -----
    def snapshot_filename(self, extension: str) -> str:
        """`<snapshot_prefix>_iter_<iter><extension>`."""
        return f"{self.param.snapshot_prefix}_iter_{self.iter}{extension}"

    def snapshot(self) -> None:
        """Writes the weights and the solver state for the current iteration (each file atomically)."""
        try:
            self._write_snapshot()
        except OSError as err:
            raise SolverError(f"Cannot write the snapshot of iteration {self.iter} with snapshot_prefix "
                              f"'{self.param.snapshot_prefix}': {err}") from err

    def _write_snapshot(self) -> None:
        hdf5 = self.param.snapshot_format == caffe_pb2.SolverParameter.HDF5
        if hdf5:
            model_filename = self.snapshot_filename(".caffemodel.h5")
            log.info("Snapshotting to HDF5 file %s", model_filename)
            self.net.to_hdf5(model_filename, self.param.snapshot_diff)
            state_filename = self.snapshot_filename(".solverstate.h5")
            log.info("Snapshotting solver state to HDF5 file %s", state_filename)
        else:
            model_filename = self.snapshot_filename(".caffemodel")
            log.info("Snapshotting to binary proto file %s", model_filename)
            self.net.save(model_filename, self.param.snapshot_diff)
            state_filename = self.snapshot_filename(".solverstate")
            log.info("Snapshotting solver state to binary proto file %s", state_filename)
        write_state(state_filename, self.solver_state(model_filename))

    def restore(self, state_file: str | os.PathLike) -> None:
        """Restores iter, current_step, history and the weights named in a .solverstate[.h5]."""
        # Everything is checked before anything changes, so a state from another net leaves the solver intact.
        source = os.fspath(state_file)
        state = read_state(source)
        self.check_solver_state(state, source)
        weights = self._learned_net_path(state.learned_net, source) if state.learned_net else None
        if weights is not None:
            self._check_learned_net(weights, source)
            self.net.copy_trained_layers_from(weights)
        self.iter = state.iter
        self.current_step = state.current_step
        self.restore_solver_state(state, source)

    def _learned_net_path(self, learned_net: str, source: str) -> str:
        if os.path.exists(learned_net):
            return learned_net
        beside = os.path.join(os.path.dirname(source), learned_net)
        if not os.path.isabs(learned_net) and os.path.exists(beside):
            log.info("learned_net %s is not in the working directory; using %s beside the state file",
                     learned_net, beside)
            return beside
        raise SolverStateError(f"{source}: the weights file it names (learned_net: '{learned_net}') was not "
                               f"found, relative to the working directory or to the state file")

    def _check_learned_net(self, weights: str, source: str) -> None:
        if weights.endswith(".h5"):
            return
        from caffe_core.net_files import read_net_binary

        stored = read_net_binary(weights)
        for layer_param in stored.layer:
            if not self.net.has_layer(layer_param.name):
                continue
            blobs = self.net.layer_by_name(layer_param.name).blobs
            if len(blobs) != len(layer_param.blobs) or not all(
                    blob.shape_equals(p) for blob, p in zip(blobs, layer_param.blobs, strict=False)):
                raise SolverStateError(f"{source}: its weights file {weights} does not fit net "
                                       f"'{self.net.name}' (layer '{layer_param.name}' differs); was it "
                                       f"saved from a different net?")


def loss_note(weight: float | np.floating, value: float | np.floating) -> str:
    """Caffe's ` (* weight = weighted loss)` suffix of an output line; empty for a zero loss weight."""
    if not weight:
        return ""
    return f" (* {weight:g} = {np.float32(weight) * np.float32(value):g} loss)"


def _copy(message: caffe_pb2.NetParameter) -> caffe_pb2.NetParameter:
    copy = caffe_pb2.NetParameter()
    copy.CopyFrom(message)
    return copy
