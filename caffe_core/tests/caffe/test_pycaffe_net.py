"""caffe.Net's pycaffe surface: batched forward/backward, callbacks, private accessors, layers and blobs."""

import numpy as np
import pytest

import caffe
from caffe_core.errors import CaffeError

from .conftest import require_layers

PLUMB = """
name: "plumb"
force_backward: true
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 1 }
                              bias_filler { type: "constant" value: 0.5 } } }
"""

LOSS = """
name: "loss"
layer { name: "data" type: "Input" top: "data" top: "target"
        input_param { shape { dim: 2 dim: 3 } shape { dim: 2 dim: 2 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 1 } } }
layer { name: "loss" type: "EuclideanLoss" bottom: "ip" bottom: "target" top: "loss" }
"""


@pytest.fixture
def net(tmp_path):
    require_layers("InnerProduct")
    path = tmp_path / "plumb.prototxt"
    path.write_text(PLUMB)
    return caffe.Net(str(path), caffe.TEST)


def _weights(net):
    weight, bias = net.params["ip"]
    return weight.data.astype(np.float64), bias.data.astype(np.float64)


def test_forward_all_batches_and_drops_padding(net):
    x = np.arange(15, dtype=np.float32).reshape(5, 3) / 10
    out = net.forward_all(data=x)
    weight, bias = _weights(net)
    assert set(out) == {"ip"} and out["ip"].shape == (5, 2)
    np.testing.assert_allclose(out["ip"], x @ weight.T + bias, rtol=1e-5)


def test_forward_all_returns_extra_blobs_and_runs_once_without_inputs(net):
    x = np.ones((3, 3), dtype=np.float32)
    out = net.forward_all(blobs=["data"], data=x)
    np.testing.assert_array_equal(out["data"], x)
    net.blobs["data"].data[...] = 2
    weight, bias = _weights(net)
    np.testing.assert_allclose(net.forward_all()["ip"], np.full((2, 3), 2) @ weight.T + bias, rtol=1e-5)


def test_forward_backward_all_gives_outputs_and_input_diffs(net):
    x = np.arange(9, dtype=np.float32).reshape(3, 3)
    top_diff = np.array([[1, 0], [0, 1], [1, -1]], dtype=np.float32)
    outs, diffs = net.forward_backward_all(data=x, ip=top_diff)
    weight, bias = _weights(net)
    np.testing.assert_allclose(outs["ip"], x @ weight.T + bias, rtol=1e-5)
    np.testing.assert_allclose(diffs["data"], top_diff @ weight, rtol=1e-5)
    assert diffs["data"].shape == (3, 3)


def test_batch_pads_the_last_batch_with_zeros(net):
    batches = list(net._batch({"data": np.ones((3, 3))}))
    assert [b["data"].shape for b in batches] == [(2, 3), (2, 3)]
    np.testing.assert_array_equal(batches[1]["data"], [[1, 1, 1], [0, 0, 0]])
    assert list(net._batch({})) == []


def test_callbacks_run_around_each_layer(net):
    calls = []
    net.before_forward(lambda i: calls.append(("before_forward", i)))
    net.after_forward(lambda i: calls.append(("after_forward", i)))
    net.before_backward(lambda i: calls.append(("before_backward", i)))
    net.after_backward(lambda i: calls.append(("after_backward", i)))
    net.forward()
    net.backward()
    assert calls == [("before_forward", 0), ("after_forward", 0), ("before_forward", 1), ("after_forward", 1),
                     ("before_backward", 1), ("after_backward", 1), ("before_backward", 0),
                     ("after_backward", 0)]


def test_private_forward_backward_and_index_accessors(net):
    assert net._forward(0, 1) == 0.0
    net.blobs["ip"].diff[...] = 1
    net._backward(1, 0)
    weight, _ = _weights(net)
    np.testing.assert_allclose(net.blobs["data"].diff, np.ones((2, 2)) @ weight, rtol=1e-5)
    assert net._inputs == [0] and net._outputs == [1]
    assert net._top_ids(1) == [1] and net._bottom_ids(1) == [0] and net._bottom_ids(0) == []
    assert net._blobs[1] is net.blobs["ip"]
    assert net._blob_names == ["data", "ip"] and net._layer_names == ["data", "ip"]


def test_layers_expose_type_and_blobs_and_blobs_reshape_with_dims(net):
    layer = net.layers[1]
    assert layer.type == "InnerProduct" and layer is net.layer_dict["ip"]
    assert [b.shape for b in layer.blobs] == [(2, 3), (2,)]
    blob = net.blobs["data"]
    blob.reshape(4, 3)
    net.reshape()
    assert net.blobs["ip"].data.shape == (4, 2)
    assert (blob.count, blob.num, blob.channels, blob.height, blob.width) == (12, 4, 3, 1, 1)


def test_loss_outputs_are_collected_per_batch(tmp_path):
    require_layers("InnerProduct", "EuclideanLoss")
    path = tmp_path / "loss.prototxt"
    path.write_text(LOSS)
    net = caffe.Net(str(path), caffe.TEST)
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
    target = np.zeros((4, 2), dtype=np.float32)
    out = net.forward_all(data=x, target=target)
    weight, _ = _weights(net)
    pred = x @ weight.T
    expected = [np.sum(pred[i:i + 2] ** 2) / 2 / 2 for i in (0, 2)]
    np.testing.assert_allclose(out["loss"], expected, rtol=1e-5)


def test_keyword_arrays_must_name_every_input_or_every_output(tmp_path):
    require_layers("InnerProduct", "EuclideanLoss")
    path = tmp_path / "loss.prototxt"
    path.write_text(LOSS)
    net = caffe.Net(str(path), caffe.TRAIN)
    with pytest.raises(CaffeError, match="Input blob arguments do not match net inputs: got data, net 'loss' "
                                         "has inputs data, target"):
        net.forward(data=np.zeros((2, 3), np.float32))
    with pytest.raises(CaffeError, match="Top diff arguments do not match net outputs: got ip"):
        net.backward(ip=np.zeros((2, 2), np.float32))
    net.forward(data=np.zeros((2, 3), np.float32), target=np.ones((2, 2), np.float32))
    np.testing.assert_allclose(net.blobs["loss"].data, 1.0)


DEEP = """
name: "deep"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip1" type: "InnerProduct" bottom: "data" top: "ip1"
        inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 1 } } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
        inner_product_param { num_output: 4 weight_filler { type: "gaussian" std: 1 } } }
layer { name: "ip3" type: "InnerProduct" bottom: "ip2" top: "ip3"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 1 } } }
layer { name: "ip4" type: "InnerProduct" bottom: "ip3" top: "ip4"
        inner_product_param { num_output: 2 weight_filler { type: "gaussian" std: 1 } } }
"""


@pytest.fixture
def deep_files(tmp_path):
    require_layers("InnerProduct", "ReLU")
    path = tmp_path / "deep.prototxt"
    path.write_text(DEEP)
    weights = tmp_path / "deep.caffemodel"
    caffe.Net(str(path), caffe.TEST).save(str(weights))
    return str(path), str(weights)


def test_optimize_memory_keeps_outputs_and_named_blobs(deep_files):
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    plain = caffe.Net(deep_files[0], caffe.TEST, weights=deep_files[1])
    lean = caffe.Net(deep_files[0], caffe.TEST, weights=deep_files[1], optimize_memory=True, keep=("ip1",))
    expected = plain.forward(blobs=["ip1", "ip2", "ip3"], data=x)
    got = lean.forward(blobs=["ip1"], data=x)
    np.testing.assert_array_equal(got["ip4"], expected["ip4"])
    np.testing.assert_array_equal(got["ip1"], expected["ip1"])
    # A run that ends at a layer returns that layer's tops, which nothing has overwritten yet.
    np.testing.assert_array_equal(lean.forward(end="ip2", data=x)["ip2"], expected["ip2"])


def test_optimize_memory_refuses_to_return_an_overwritten_blob(deep_files):
    lean = caffe.Net(deep_files[0], caffe.TEST, weights=deep_files[1], optimize_memory=True)
    # ip1 is last read by ip2, after which ip3 (half its size) takes its place.
    with pytest.raises(CaffeError, match="blob 'ip1' .* forward overwrites it; name it in keep=\\('ip1',\\)"):
        lean.forward(blobs=["ip1"])
    assert lean.forward(blobs=["ip1"], end="ip2")["ip1"].shape == (2, 4)
    with pytest.raises(CaffeError, match="built with optimize_memory"):
        lean.backward()


LEVELS = """
name: "levels"
layer { name: "data" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "low" type: "Split" bottom: "data" top: "low" include { phase: TEST max_level: 0 } }
"""


def test_net_level_defaults_to_zero(tmp_path):
    path = tmp_path / "levels.prototxt"
    path.write_text(LEVELS)
    assert "low" in caffe.Net(str(path), caffe.TEST).blobs
    assert "low" not in caffe.Net(str(path), caffe.TEST, level=1).blobs


def test_net_without_a_phase_says_so(tmp_path):
    path = tmp_path / "levels.prototxt"
    path.write_text(LEVELS)
    with pytest.raises(TypeError, match="needs a phase: caffe.TRAIN or caffe.TEST"):
        caffe.Net(str(path))
