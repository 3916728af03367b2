"""examples/pycaffe: linreg.prototxt with the EuclideanLossLayer of layers/pyloss.py, loaded from sys.path."""

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

import caffe

HERE = Path(__file__).parent

LINREG_SOLVER = """net: "linreg.prototxt"
base_lr: 0.05
momentum: 0.9
lr_policy: "fixed"
max_iter: 100
display: 0
snapshot_after_train: false
random_seed: 1701
"""


@pytest.fixture
def linreg(tmp_path, monkeypatch):
    """examples/pycaffe as the working directory, with layers/ on sys.path (Caffe's PYTHONPATH step)."""
    shutil.copy(HERE / "linreg.prototxt", tmp_path / "linreg.prototxt")
    (tmp_path / "linreg_solver.prototxt").write_text(LINREG_SOLVER)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(HERE / "layers"))
    monkeypatch.delitem(sys.modules, "pyloss", raising=False)
    caffe.set_mode_cpu()
    caffe.set_random_seed(1701)
    return tmp_path


def ip_forward(net, name, bottom):
    """An InnerProduct layer's output recomputed with numpy from its params."""
    W, b = (blob.data for blob in net.params[name])
    return net.blobs[bottom].data.reshape(len(net.blobs[bottom].data), -1) @ W.T + b


def test_python_loss_matches_the_euclidean_loss_and_its_gradient(linreg):
    net = caffe.Net('linreg.prototxt', caffe.TRAIN)
    assert type(net.layers[-1].python_layer).__name__ == 'EuclideanLossLayer'
    assert net.blobs['loss'].data.shape == (1,)
    assert net.blob_loss_weights['loss'] == 1

    out = net.forward()
    ipx = ip_forward(net, 'ipx', 'x')
    ipy = ip_forward(net, 'ipy', 'y')
    np.testing.assert_allclose(net.blobs['ipx'].data, ipx, rtol=1e-5, atol=1e-6)
    expected_loss = np.sum((ipx - ipy) ** 2) / 10 / 2.
    np.testing.assert_allclose(out['loss'], [expected_loss], rtol=1e-5)

    net.clear_param_diffs()
    net.backward()
    # d loss / d ipx = (ipx - ipy) / N, and the opposite for ipy; back through the inner products
    top_grad = (ipx - ipy) / 10
    np.testing.assert_allclose(net.blobs['ipx'].diff, top_grad, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(net.blobs['ipy'].diff, -top_grad, rtol=1e-4, atol=1e-7)
    x = net.blobs['x'].data.reshape(10, -1)
    y = net.blobs['y'].data.reshape(10, -1)
    np.testing.assert_allclose(net.params['ipx'][0].diff, top_grad.T @ x, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(net.params['ipx'][1].diff, top_grad.sum(0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(net.params['ipy'][0].diff, -top_grad.T @ y, rtol=1e-4, atol=1e-6)

    # central differences of the loss in a few weights, the data held (forward from ipx refills nothing)
    eps = 1e-2
    weights = net.params['ipx'][0].data
    for index in [(0, 0), (3, 4), (9, 5)]:
        original = weights[index]
        weights[index] = original + eps
        plus = float(net.forward(start='ipx')['loss'][0])
        weights[index] = original - eps
        minus = float(net.forward(start='ipx')['loss'][0])
        weights[index] = original
        np.testing.assert_allclose((plus - minus) / (2 * eps), net.params['ipx'][0].diff[index],
                                   rtol=1e-2, atol=1e-3)


def test_a_solver_trains_the_net_through_the_python_loss(linreg):
    solver = caffe.SGDSolver('linreg_solver.prototxt')
    initial_weights = solver.net.params['ipx'][0].data.copy()
    losses = []
    for _ in range(60):
        solver.step(1)
        losses.append(float(solver.net.blobs['loss'].data[0]))
    # x and y are fresh independent noise at every step: the best fit maps both to the same constant,
    # so the loss and the weights fall towards zero. Measured here: the loss 10.1 at the first step, 0.13
    # over the last 10 of 60; the largest weight 0.7 (Xavier) -> 0.1.
    assert np.mean(losses[-10:]) < 0.1 * np.mean(losses[:5])
    assert np.abs(solver.net.params['ipx'][0].data).max() < 0.3 * np.abs(initial_weights).max()
