"""Solver parameters Caffe refuses (or would divide by zero on) give errors naming the field."""

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverError
from caffe_core.solvers.validate import check_solver_param

VALID = {"net": "n.prototxt", "base_lr": 0.1, "lr_policy": "fixed"}


def _check(**changes):
    fields = dict(VALID) | changes
    fields = {k: v for k, v in fields.items() if v is not None}
    check_solver_param(caffe_pb2.SolverParameter(**fields))


def test_a_valid_parameter_passes():
    _check()


@pytest.mark.parametrize(("changes", "message"), [
    ({"net": None}, "must specify a train net using one of these fields: net, net_param"),
    ({"train_net": "t.prototxt"}, "must not contain more than one .* \\(got net, train_net\\)"),
    ({"max_iter": -1}, "max_iter must be >= 0, got -1"),
    ({"display": -5}, "display must be >= 0"),
    ({"snapshot": -1}, "snapshot must be >= 0"),
    ({"average_loss": 0}, "average_loss must be >= 1, got 0"),
    ({"iter_size": 0}, "iter_size must be >= 1, got 0"),
    ({"base_lr": -0.1}, "base_lr must be >= 0"),
    ({"weight_decay": -1.0}, "weight_decay must be >= 0"),
    ({"regularization_type": "L3"}, "Unknown regularization type: 'L3'"),
    ({"lr_policy": "nope"}, "Unknown learning rate policy: 'nope'"),
    ({"test_iter": [5]}, "test_interval must be > 0 when there are test nets"),
    ({"test_iter": [0], "test_interval": 10}, "test_iter #0 must be > 0"),
    ({"test_iter": [1], "test_interval": 5, "test_state": [{}, {}]}, "test_state must be unspecified or"),
    ({"snapshot": 10, "snapshot_prefix": "/no/such/dir/snap"}, "Cannot write to snapshot prefix"),
])
def test_bad_values_name_the_field(changes, message):
    with pytest.raises(SolverError, match=message):
        _check(**changes)


def test_test_iter_must_match_explicit_test_nets():
    with pytest.raises(SolverError, match="test_iter must be specified for each test network"):
        _check(net=None, train_net="t.prototxt", test_net=["a.prototxt", "b.prototxt"], test_iter=[1],
               test_interval=1)


@pytest.mark.parametrize("rms_decay", [1.0, -0.5])
def test_rmsprop_refuses_rms_decay_outside_zero_to_one(rms_decay):
    # Caffe's RMSPropSolver: CHECK_GE(rms_decay, 0) and CHECK_LT(rms_decay, 1).
    from caffe_core.solvers.rmsprop import RMSPropSolver

    param = caffe_pb2.SolverParameter(**VALID, type="RMSProp", rms_decay=rms_decay)
    with pytest.raises(SolverError, match="rms_decay should lie between 0 and 1"):
        RMSPropSolver.check_param(param)
    RMSPropSolver.check_param(caffe_pb2.SolverParameter(**VALID, type="RMSProp", rms_decay=0.0))
