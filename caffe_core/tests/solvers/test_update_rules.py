"""Every solver type's update against an independent float64 re-derivation of Caffe's rules.

The TestQuadratic net's gradient is w itself, so the reference needs no net: g = w, then clipping,
iter_size normalisation, weight decay (L2/L1 with decay_mult), lr_mult and the solver's history rule.
"""

from __future__ import annotations

import numpy as np
import pytest

from caffe_core.solvers import SolverError, create_solver

PARAM_SPEC = "param { lr_mult: 2 decay_mult: 0.5 }"


W0 = (1.0, 2.0, -1.5, 0.0)


def _reference(kind: str, iterations: int, *, lr=0.1, momentum=0.0, momentum2=0.999, delta=1e-8,
               rms_decay=0.99, weight_decay=0.0, l1=False, clip=-1.0, lr_mult=2.0,
               decay_mult=0.5) -> np.ndarray:
    w = np.array(W0, np.float64)
    h = np.zeros_like(w)
    h2 = np.zeros_like(w)
    for t in range(iterations):
        g = w.copy()
        norm = np.sqrt((g * g).sum())
        if 0 <= clip < norm:
            g *= clip / norm
        g += weight_decay * decay_mult * (np.sign(w) if l1 else w)
        rate = lr * lr_mult
        if kind == "SGD":
            h = rate * g + momentum * h
            step = h
        elif kind == "Nesterov":
            previous = h
            h = rate * g + momentum * h
            step = (1 + momentum) * h - momentum * previous
        elif kind == "AdaGrad":
            h = h + g * g
            step = rate * g / (np.sqrt(h) + delta)
        elif kind == "RMSProp":
            h = rms_decay * h + (1 - rms_decay) * g * g
            step = rate * g / (np.sqrt(h) + delta)
        elif kind == "AdaDelta":
            h = momentum * h + (1 - momentum) * g * g
            u = g * np.sqrt((h2 + delta) / (h + delta))
            h2 = momentum * h2 + (1 - momentum) * u * u
            step = rate * u
        else:
            h = momentum * h + (1 - momentum) * g
            h2 = momentum2 * h2 + (1 - momentum2) * g * g
            correction = np.sqrt(1 - momentum2 ** (t + 1)) / (1 - momentum ** (t + 1))
            step = rate * correction * h / (np.sqrt(h2) + delta)
        w = w - step
    return w


def _run(quad, in_tmp, solver_type: str, extra: str, iterations: int = 4) -> np.ndarray:
    assert quad.W0 == W0
    path = quad.write_case(in_tmp, quad.BASE_SOLVER + f'type: "{solver_type}"\n' + extra,
                           quad.net_text(param_spec=PARAM_SPEC))
    solver = create_solver(path)
    solver.step(iterations)
    return solver.net.layers[0].blobs[0].cpu_data().astype(np.float64)


CASES = [
    ("SGD", "momentum: 0.9\n", {"momentum": 0.9}),
    ("SGD", "momentum: 0.9\nweight_decay: 0.01\n", {"momentum": 0.9, "weight_decay": 0.01}),
    ("SGD", 'momentum: 0.5\nweight_decay: 0.05\nregularization_type: "L1"\n',
     {"momentum": 0.5, "weight_decay": 0.05, "l1": True}),
    ("SGD", "clip_gradients: 1.0\n", {"clip": 1.0}),
    ("Nesterov", "momentum: 0.9\nweight_decay: 0.01\n", {"momentum": 0.9, "weight_decay": 0.01}),
    ("AdaGrad", "delta: 1e-6\nweight_decay: 0.01\n", {"delta": 1e-6, "weight_decay": 0.01}),
    ("RMSProp", "rms_decay: 0.9\ndelta: 1e-6\n", {"rms_decay": 0.9, "delta": 1e-6}),
    ("AdaDelta", "momentum: 0.95\ndelta: 1e-6\nbase_lr: 1.0\n", {"momentum": 0.95, "delta": 1e-6, "lr": 1.0}),
    ("Adam", "momentum: 0.9\nmomentum2: 0.999\n", {"momentum": 0.9}),
]


@pytest.mark.parametrize(("solver_type", "extra", "reference"), CASES)
def test_update_matches_rederivation(quad, in_tmp, solver_type, extra, reference):
    np.testing.assert_allclose(_run(quad, in_tmp, solver_type, extra),
                               _reference(solver_type, 4, **reference), rtol=1e-5, atol=1e-6)


def test_sgd_first_steps_by_hand(quad, in_tmp):
    # lr_mult 2, momentum 0.9, no decay: h1 = 0.2·w0, w1 = 0.8·w0; h2 = 0.2·0.8·w0 + 0.9·0.2·w0 = 0.34·w0
    w0 = np.array(W0)
    np.testing.assert_allclose(_run(quad, in_tmp, "SGD", "momentum: 0.9\n", 1), 0.8 * w0, rtol=1e-6)
    np.testing.assert_allclose(_run(quad, in_tmp, "SGD", "momentum: 0.9\n", 2), 0.46 * w0, rtol=1e-6)


def test_iter_size_normalises_the_accumulated_gradient(quad, in_tmp):
    once = _run(quad, in_tmp, "SGD", "momentum: 0.9\n")
    np.testing.assert_allclose(_run(quad, in_tmp, "SGD", "momentum: 0.9\niter_size: 3\n"), once, rtol=1e-6)


def test_clipping_comes_before_normalisation(quad, in_tmp, caffe_log):
    # With iter_size 2 the accumulated gradient is 2·w; the clip applies to that norm, then ÷2.
    norm = float(np.sqrt((np.array(W0) ** 2).sum()))
    got = _run(quad, in_tmp, "SGD", "iter_size: 2\nclip_gradients: 1.0\n", 1)
    np.testing.assert_allclose(got, np.array(W0) - 0.2 * np.array(W0) / (2 * norm), rtol=1e-6)
    assert f"Gradient clipping: scaling down gradients (L2 norm {2 * norm:g} > 1)" in caffe_log.text


@pytest.mark.parametrize(("solver_type", "extra", "message"), [
    ("AdaGrad", "momentum: 0.9\n", "Momentum cannot be used with AdaGrad"),
    ("RMSProp", "momentum: 0.9\n", "Momentum cannot be used with RMSProp"),
    ("RMSProp", "rms_decay: 1.5\n", "rms_decay should lie between 0 and 1"),
])
def test_solver_specific_checks(quad, in_tmp, solver_type, extra, message):
    with pytest.raises(SolverError, match=message):
        _run(quad, in_tmp, solver_type, extra)


def test_clip_gradients_zero_scales_every_gradient_to_zero(quad, in_tmp):
    # sgd_solver.cpp ClipGradients returns only for clip_gradients < 0; 0 gives scale_factor 0 / ‖g‖ = 0.
    np.testing.assert_array_equal(_run(quad, in_tmp, "SGD", "momentum: 0.9\nclip_gradients: 0\n", 2),
                                  np.array(W0, dtype=np.float32))
