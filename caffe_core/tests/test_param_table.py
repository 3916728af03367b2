"""The parameter table: learnable blobs shared by name, their lr_mult and decay_mult, and what is refused."""

import pytest

from caffe_core.blob import Blob
from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2

from .conftest import INPUT, ScaleByParam, build

pytestmark = pytest.mark.usefixtures("net_test_layers")


def test_parameter_sharing_by_name():
    text = INPUT + """
    layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { name: "w" lr_mult: 3 } }
    layer { name: "b" type: "TestScale" bottom: "y" top: "z" param { name: "w" } }
    layer { name: "loss" type: "TestSumLoss" bottom: "z" top: "loss" }
    """
    net = build(text)
    a, b = net.layer_by_name("a").blobs[0], net.layer_by_name("b").blobs[0]
    assert a.data_memory is b.data_memory and a.diff_memory is b.diff_memory
    assert len(net.learnable_params) == 1 and [p.lr_mult for p in net.graph.learnables] == [3.0]
    assert [p.owner for p in net.graph.params] == [-1, 0]
    net.blob_by_name("x").data[...] = 1
    net.forward()
    net.clear_param_diffs()
    net.backward()
    # loss = sum(w^2 x) -> d/dw = 2 w sum(x) = 2*2*6, accumulated from both users
    assert a.diff[0] == pytest.approx(24)


def test_shared_param_decay_mult_mismatch_with_the_owners_is_refused():
    text = INPUT + """
    layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { name: "w" decay_mult: 1 } }
    layer { name: "b" type: "TestScale" bottom: "y" top: "z" param { name: "w" decay_mult: 2 } }
    """
    with pytest.raises(NetBuildError, match=r"Shared param 'w' has mismatched decay_mult \(2.0 in layer 'b'"):
        build(text)


def test_a_sharer_sets_an_lr_mult_its_owner_left_unset_and_later_sharers_must_agree():
    text = INPUT + """
    layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { name: "w" } }
    layer { name: "b" type: "TestScale" bottom: "y" top: "z" param { name: "w" lr_mult: 2 } }
    layer { name: "c" type: "TestScale" bottom: "z" top: "u" param { name: "w" LR } }
    """
    assert [p.lr_mult for p in build(text.replace("LR", "")).graph.learnables] == [2.0]
    with pytest.raises(NetBuildError, match="Shared param 'w' has mismatched lr_mult"):
        build(text.replace("LR", "lr_mult: 3"))


def test_shared_param_lr_mult_mismatch_is_refused():
    text = INPUT + """
    layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { name: "w" lr_mult: 3 } }
    layer { name: "b" type: "TestScale" bottom: "y" top: "z" param { name: "w" lr_mult: 1 } }
    """
    with pytest.raises(NetBuildError, match="Shared param 'w' has mismatched lr_mult"):
        build(text)


def test_too_many_param_specs():
    text = INPUT + 'layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { } param { } }'
    with pytest.raises(NetBuildError, match="Too many params specified for layer 'a'"):
        build(text)


def test_setup_turns_param_propagation_on_and_the_net_applies_lr_mult():
    alone = ScaleByParam(caffe_pb2.LayerParameter(name="s", type="TestScale"))
    alone.setup([Blob((2,))], [Blob()])
    assert alone.param_propagate_down(0)
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" param { lr_mult: 0 } }')
    assert not net.layer_by_name("s").param_propagate_down(0)


SHARED_TRANSPOSED = """
layer {{ name: "in" type: "Input" top: "x" input_param {{ shape {{ dim: 2 dim: 4 }} }} }}
layer {{ name: "a" type: "InnerProduct" bottom: "x" top: "y"
        param {{ name: "w" {mode} }} inner_product_param {{ num_output: 6 bias_term: false }} }}
layer {{ name: "b" type: "InnerProduct" bottom: "y" top: "z"
        param {{ name: "w" {mode} }} inner_product_param {{ num_output: 4 bias_term: false }} }}
"""


@pytest.mark.requires_layer_types("InnerProduct")
@pytest.mark.parametrize("mode", ["", "share_mode: STRICT"])
def test_strict_sharing_needs_equal_shapes(mode):
    # Layer a's weights are 6x4 and b's 4x6: the same count, so only PERMISSIVE shares them.
    with pytest.raises(NetBuildError, match=r"Cannot share param 'w' owned by layer 'a' with layer 'b'; "
                                            r"shape mismatch"):
        build(SHARED_TRANSPOSED.format(mode=mode))


@pytest.mark.requires_layer_types("InnerProduct")
def test_permissive_sharing_needs_only_equal_counts():
    net = build(SHARED_TRANSPOSED.format(mode="share_mode: PERMISSIVE"))
    a, b = net.layer_by_name("a").blobs[0], net.layer_by_name("b").blobs[0]
    assert (a.shape, b.shape) == ((6, 4), (4, 6))
    assert len(net.learnable_params) == 1
