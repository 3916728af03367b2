"""Each learning-rate policy against values derived by hand from Caffe's formulas."""

import numpy as np
import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.solvers.errors import SolverError
from caffe_core.solvers.lr_policy import check_policy, learning_rate


def _param(**fields) -> caffe_pb2.SolverParameter:
    return caffe_pb2.SolverParameter(base_lr=0.1, **fields)


def _rates(param, iterations) -> list[float]:
    step = 0
    rates = []
    for i in iterations:
        rate, step = learning_rate(param, i, step)
        rates.append(rate)
    return rates


@pytest.mark.parametrize(("fields", "iteration", "expected"), [
    ({"lr_policy": "fixed"}, 1234, 0.1),
    ({"lr_policy": "step", "gamma": 0.5, "stepsize": 3}, 2, 0.1),
    ({"lr_policy": "step", "gamma": 0.5, "stepsize": 3}, 3, 0.05),
    ({"lr_policy": "step", "gamma": 0.5, "stepsize": 3}, 7, 0.025),
    ({"lr_policy": "exp", "gamma": 0.9}, 3, 0.1 * 0.729),
    ({"lr_policy": "inv", "gamma": 0.1, "power": 0.75}, 10, 0.1 * 2 ** -0.75),
    ({"lr_policy": "poly", "power": 2, "max_iter": 10}, 5, 0.1 * 0.25),
    ({"lr_policy": "poly", "power": 2, "max_iter": 10}, 10, 0.0),
    ({"lr_policy": "sigmoid", "gamma": 0.5, "stepsize": 5}, 5, 0.05),
    ({"lr_policy": "sigmoid", "gamma": 0.5, "stepsize": 5}, 7, 0.1 / (1 + np.exp(-1.0))),
    ({"lr_policy": "sigmoid", "gamma": -0.5}, 2, 0.1 / (1 + np.exp(1.0))),
])
def test_policy_values(fields, iteration, expected):
    rate, _ = learning_rate(_param(**fields), iteration, 0)
    assert rate == pytest.approx(expected, rel=1e-6)
    assert rate == float(np.float32(rate))


def test_step_sets_current_step():
    assert learning_rate(_param(lr_policy="step", gamma=0.5, stepsize=3), 7, 0)[1] == 2


def test_multistep_advances_at_each_stepvalue(caffe_log):
    param = _param(lr_policy="multistep", gamma=0.1, stepvalue=[2, 5])
    rates = _rates(param, range(7))
    np.testing.assert_allclose(rates, [0.1, 0.1, 0.01, 0.01, 0.01, 0.001, 0.001], rtol=1e-6)
    assert [r.getMessage() for r in caffe_log.records] == ["MultiStep Status: Iteration 2, step = 1",
                                                           "MultiStep Status: Iteration 5, step = 2"]


def test_multistep_takes_unsorted_stepvalues_as_caffe_does():
    param = _param(lr_policy="multistep", gamma=0.5, stepvalue=[5, 2])
    check_policy(param)
    np.testing.assert_allclose(_rates(param, range(8)), [0.1] * 5 + [0.05, 0.025, 0.025], rtol=1e-6)


def test_multistep_advances_at_most_once_per_call():
    param = _param(lr_policy="multistep", gamma=0.1, stepvalue=[1, 2, 3])
    rate, step = learning_rate(param, 10, 0)
    assert (rate, step) == (pytest.approx(0.01), 1)
    rate, step = learning_rate(param, 10, step)
    assert (rate, step) == (pytest.approx(0.001), 2)


@pytest.mark.parametrize(("fields", "message"), [
    ({"lr_policy": "cosine"}, "Unknown learning rate policy: 'cosine'"),
    ({}, "Unknown learning rate policy: ''"),
    ({"lr_policy": "step", "gamma": -0.5, "stepsize": 2}, "gamma >= 0"),
    ({"lr_policy": "step", "gamma": 0.5}, "stepsize > 0"),
    ({"lr_policy": "poly", "power": 1}, "max_iter > 0"),
])
def test_bad_policies_are_named(fields, message):
    with pytest.raises(SolverError, match=message.replace("(", r"\(")):
        check_policy(_param(**fields))


def test_an_unknown_policy_lists_the_known_ones():
    with pytest.raises(SolverError, match="one of fixed, step, exp, inv, multistep, poly, sigmoid\\)$"):
        check_policy(_param(lr_policy="cosine"))


# The boundary values Caffe's CHECK_GE(gamma, 0) and CHECK_GT(stepsize, 0) let through, and poly's
# smallest max_iter: 0.1 * 0^0 before the first step, 0.1 * 3^2 after two steps of 1, 0.1 * (1 - 0/1)^2.
@pytest.mark.parametrize(("fields", "iteration", "expected"), [
    ({"lr_policy": "step", "gamma": 0.0, "stepsize": 2}, 1, 0.1),
    ({"lr_policy": "step", "gamma": 3.0, "stepsize": 1}, 2, 0.9),
    ({"lr_policy": "poly", "power": 2, "max_iter": 1}, 0, 0.1),
])
def test_the_smallest_values_caffe_accepts(fields, iteration, expected):
    assert learning_rate(_param(**fields), iteration, 0)[0] == pytest.approx(expected, rel=1e-6)
