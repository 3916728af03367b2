"""Python layers: pycaffe's caffe.Layer protocol inside a net, checked by hand and by finite differences."""

import os
import sys
import textwrap

import numpy as np
import pytest

import caffe
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing import GradientChecker

# The module a user would write beside a prototxt: a loss, a chain link, a layer with a learnable blob and
# a data source, each through pycaffe's caffe.Layer protocol (setup, reshape, forward, backward).
USER_MODULE = '''
import caffe
import numpy as np


class EuclideanLossLayer(caffe.Layer):
    """Half the mean over the batch of the squared distance between two bottoms."""

    def setup(self, bottom, top):
        if len(bottom) != 2:
            raise ValueError(f"a distance takes two bottoms, got {len(bottom)}")
        self.scale = 1.0

    def reshape(self, bottom, top):
        if bottom[0].count != bottom[1].count:
            raise ValueError(f"bottoms of {bottom[0].count} and {bottom[1].count} values cannot be compared")
        self.residual = np.zeros(bottom[0].data.shape, dtype=np.float32)
        top[0].reshape(1)

    def forward(self, bottom, top):
        np.subtract(bottom[0].data, bottom[1].data, out=self.residual)
        batch = bottom[0].num
        top[0].data[...] = self.scale * 0.5 * np.square(self.residual).sum() / batch

    def backward(self, top, propagate_down, bottom):
        for index, wanted in enumerate(propagate_down[:2]):
            if wanted:
                direction = -1.0 if index else 1.0
                bottom[index].diff[...] = direction * self.scale * self.residual / bottom[index].num


class ScaledEuclideanLossLayer(EuclideanLossLayer):
    """The loss above times param_str's 'scale'; keeps the phase the net gave it."""

    def setup(self, bottom, top):
        super().setup(bottom, top)
        self.scale = eval(self.param_str)["scale"]
        self.seen_phase = self.phase


class SimpleLayer(caffe.Layer):
    """top = 10 x bottom."""

    def setup(self, bottom, top):
        self.factor = 10

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        top[0].data[...] = self.factor * bottom[0].data

    def backward(self, top, propagate_down, bottom):
        bottom[0].diff[...] = self.factor * top[0].diff


class ParameterLayer(caffe.Layer):
    """A layer with one learnable scalar whose diff backward sets to 1."""

    def setup(self, bottom, top):
        self.blobs.add_blob(1)
        self.blobs[0].data[0] = 0

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        pass

    def backward(self, top, propagate_down, bottom):
        self.blobs[0].diff[0] = 1


class CounterDataLayer(caffe.Layer):
    """Outputs 0, 1, 2, ... in batches of 4; reset() starts over."""

    def setup(self, bottom, top):
        top[0].reshape(4)
        self.reset()

    def reset(self):
        self.current = 0

    def reshape(self, bottom, top):
        pass

    def forward(self, bottom, top):
        top[0].data[...] = np.arange(self.current, self.current + 4)
        self.current += 4

    def backward(self, top, propagate_down, bottom):
        pass


class NotALayer:
    pass
'''

LOSS_NET = """name: 'pyloss' force_backward: true
layer { name: 'a' type: 'Input' top: 'a' input_param { shape { dim: 3 dim: 4 } } }
layer { name: 'b' type: 'Input' top: 'b' input_param { shape { dim: 3 dim: 4 } } }
layer { name: 'loss' type: 'Python' bottom: 'a' bottom: 'b' top: 'loss'
  python_param { module: 'user_layers' layer: 'ScaledEuclideanLossLayer' param_str: "{'scale': 0.5}" }
  loss_weight: 1 }
"""

CHAIN_NET = """name: 'pythonnet' force_backward: true
layer { name: 'data' type: 'Input' top: 'data' input_param { shape { dim: 10 dim: 9 dim: 8 } } }
layer { type: 'Python' name: 'one' bottom: 'data' top: 'one'
  python_param { module: 'user_layers' layer: 'SimpleLayer' } }
layer { type: 'Python' name: 'two' bottom: 'one' top: 'two'
  python_param { module: 'user_layers' layer: 'SimpleLayer' } }
layer { type: 'Python' name: 'three' bottom: 'two' top: 'three'
  python_param { module: 'user_layers' layer: 'SimpleLayer' } }
"""

PARAMETER_NET = """name: 'pythonparams' force_backward: true
layer { name: 'data' type: 'Input' top: 'data' input_param { shape { dim: 2 dim: 3 } } }
layer { type: 'Python' name: 'layer' bottom: 'data' top: 'out'
  python_param { module: 'user_layers' layer: 'ParameterLayer' } }
"""


@pytest.fixture
def user_dir(tmp_path, monkeypatch):
    """A working directory holding the user's layer module, importable as in Caffe."""
    (tmp_path / "user_layers.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "user_layers", raising=False)
    yield tmp_path
    sys.modules.pop("user_layers", None)


def net_from(directory, text: str, phase: int = caffe.TRAIN) -> caffe.Net:
    """A pycaffe Net built from prototxt text written into the directory."""
    path = os.path.join(directory, "net.prototxt")
    with open(path, "w") as f:
        f.write(text)
    return caffe.Net(path, phase)


def test_python_loss_layer_forward_backward_by_hand(user_dir):
    net = net_from(user_dir, LOSS_NET, caffe.TEST)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    loss = net.forward(a=a, b=b)["loss"]
    assert net.layer_dict["loss"].scale == 0.5 and net.layer_dict["loss"].seen_phase == caffe.TEST
    expected = 0.5 * ((a - b) ** 2).sum() / 3 / 2
    np.testing.assert_allclose(loss, [expected], rtol=1e-5)
    assert net.core.forward() == pytest.approx(expected, rel=1e-5)
    diffs = net.backward()
    np.testing.assert_allclose(diffs["a"], 0.5 * (a - b) / 3, rtol=1e-5)
    np.testing.assert_allclose(diffs["b"], -0.5 * (a - b) / 3, rtol=1e-5)


def test_python_loss_layer_gradient_by_finite_differences(user_dir):
    net = net_from(user_dir, LOSS_NET)
    rng = np.random.default_rng(1)
    a_blob, b_blob = net.blobs["a"], net.blobs["b"]
    a_blob.data[...] = rng.standard_normal((3, 4))
    b_blob.data[...] = rng.standard_normal((3, 4))
    net.core.forward()
    net.core.backward()
    analytic = [a_blob.diff.copy(), b_blob.diff.copy()]
    step = 1e-2
    for blob, want in zip((a_blob, b_blob), analytic, strict=True):
        flat = blob.data.reshape(-1)
        for index in range(blob.count):
            original = flat[index]
            flat[index] = original + step
            positive = net.core.forward()
            flat[index] = original - step
            negative = net.core.forward()
            flat[index] = original
            estimate = (positive - negative) / (2 * step)
            assert abs(want.reshape(-1)[index] - estimate) <= 1e-3 * max(abs(estimate), 1.0)


def test_chain_of_python_layers_forward_backward_and_reshape(user_dir):
    """Caffe's test_python_layer.py: three layers multiplying by ten."""
    net = net_from(user_dir, CHAIN_NET)
    net.blobs["data"].data[...] = 8
    net.forward()
    assert (net.blobs["three"].data == 8000).all()
    net.blobs["three"].diff[...] = 7
    net.backward()
    assert (net.blobs["data"].diff == 7000).all()
    net.blobs["data"].reshape(4, 4, 4, 4)
    net.forward()
    assert all(blob.data.shape == (4, 4, 4, 4) for blob in net.blobs.values())


def test_python_layer_gradient_check(user_dir, make_layer):
    layer = make_layer("name: 'ten' type: 'Python' python_param { module: 'user_layers' "
                       "layer: 'SimpleLayer' }")
    bottom = Blob((2, 3))
    bottom.data[...] = np.random.default_rng(2).uniform(-1, 1, (2, 3))
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(layer, [bottom], [Blob()])


def test_learnable_blobs_train_save_load_and_share(user_dir):
    """Caffe's test_parameter: blobs added by the layer are the net's learnable params."""
    net = net_from(user_dir, PARAMETER_NET)
    layer = net.layer_dict["layer"]
    assert net.params["layer"][0] is layer.blobs[0] and layer.blobs[0] in net.core.learnable_params
    net.forward()
    net.backward()
    assert layer.blobs[0].data[0] == 0 and layer.blobs[0].diff[0] == 1
    layer.blobs[0].data[0] += layer.blobs[0].diff[0]
    caffemodel = os.path.join(user_dir, "params.caffemodel")
    net.save(caffemodel)
    layer.blobs[0].data[0] = -1
    net.copy_from(caffemodel)
    assert layer.blobs[0].data[0] == 1
    other = net_from(user_dir, PARAMETER_NET)
    other.share_with(net)
    assert other.layer_dict["layer"].blobs[0].data[0] == 1


def test_python_data_layer_and_attribute_access(user_dir):
    net = net_from(user_dir, """name: 'data' layer { type: 'Python' name: 'count' top: 'count'
        python_param { module: 'user_layers' layer: 'CounterDataLayer' } }""")
    net.forward()
    net.forward()
    np.testing.assert_array_equal(net.blobs["count"].data, [4, 5, 6, 7])
    net.layer_dict["count"].reset()
    net.forward()
    np.testing.assert_array_equal(net.blobs["count"].data, [0, 1, 2, 3])
    assert net.layer_dict["count"].type == "Python"


def test_module_on_sys_path_outside_the_working_directory(tmp_path, monkeypatch, make_layer):
    (tmp_path / "elsewhere_layers.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "elsewhere_layers", raising=False)
    layer = make_layer("name: 'p' type: 'Python' python_param { module: 'elsewhere_layers' "
                       "layer: 'SimpleLayer' }")
    assert type(layer.python_layer).__name__ == "SimpleLayer"
    sys.modules.pop("elsewhere_layers")


@pytest.mark.parametrize("python_param, message", [
    ("module: 'no_such_module_xyz' layer: 'X'",
     "layer 'bad'.*module 'no_such_module_xyz', layer 'X': importing the module failed: ModuleNotFoundError"),
    ("module: 'user_layers' layer: 'Missing'", "layer 'Missing': the module has no attribute 'Missing'"),
    ("module: 'user_layers' layer: 'NotALayer'", "'NotALayer' must be a subclass of caffe.Layer"),
    ("layer: 'SimpleLayer'", "python_param needs both 'module' and 'layer'"),
])
def test_bad_python_param_names_layer_module_and_class(user_dir, make_layer, python_param, message):
    with pytest.raises(LayerSetupError, match=message):
        make_layer(f"name: 'bad' type: 'Python' python_param {{ {python_param} }}")


def test_error_raised_by_the_layer_constructor_is_reported(user_dir, make_layer):
    """Caffe prints the Python error (type and text) when constructing the user's layer raises."""
    (user_dir / "failing_layers.py").write_text(textwrap.dedent('''
        import caffe

        class FailingLayer(caffe.Layer):
            def __init__(self, param):
                raise ValueError("unknown mode 'x'")
        '''))
    with pytest.raises(LayerSetupError, match="layer 'FailingLayer': creating the layer failed: ValueError: "
                                              "unknown mode 'x'"):
        make_layer("name: 'f' type: 'Python' python_param { module: 'failing_layers' layer: 'FailingLayer' }")


def test_error_inside_the_user_module_is_reported(user_dir, make_layer):
    (user_dir / "broken_layers.py").write_text("import not_installed_dependency_xyz\n")
    with pytest.raises(LayerSetupError, match="module 'broken_layers'.*not_installed_dependency_xyz"):
        make_layer("name: 'b' type: 'Python' python_param { module: 'broken_layers' layer: 'L' }")


def test_base_class_demands_reshape_and_forward():
    layer = caffe.Layer()
    assert layer.type == "Python" and layer.param_str == "" and len(layer.blobs) == 0
    layer.blobs.add_blob(2, 3)
    assert layer.blobs[0].shape == (2, 3) and (layer.blobs[0].data == 0).all()
    with pytest.raises(NotImplementedError, match="must define reshape"):
        layer.reshape([], [])
    with pytest.raises(NotImplementedError, match="must define forward"):
        layer.forward([], [])
