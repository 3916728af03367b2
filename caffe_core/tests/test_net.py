"""Net construction as Caffe's Net::Init: filtering, splits, backward analysis, sharing, weights I/O."""

import logging

import numpy as np
import pytest

from caffe_core import proto_io, registry
from caffe_core.errors import ModelFileError, NetBuildError
from caffe_core.layer import Layer
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2


class ScaleByParam(Layer):
    """Test layer: top = w * bottom with one learnable scalar w (initialised to 2)."""

    type = "TestScale"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        if not self.blobs:
            from caffe_core.blob import Blob

            self.blobs.append(Blob((1,)))
            self.blobs[0].data[...] = 2

    def reshape(self, bottom, top):
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        top[0].mutable_data_on(side)[...] = self.blobs[0].data_on(side) * bottom[0].data_on(side)

    def backward_on(self, side, top, propagate_down, bottom):
        if self.param_propagate_down(0):
            self.blobs[0].mutable_diff_on(side)[...] += (top[0].diff_on(side) * bottom[0].data_on(side)).sum()
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side)[...] = self.blobs[0].data_on(side) * top[0].diff_on(side)


class SumLoss(Layer):
    """Test loss: the sum of all bottoms, loss_weight 1 by default."""

    type = "TestSumLoss"
    min_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        if not self.layer_param.loss_weight:
            self.layer_param.loss_weight.append(1.0)

    def reshape(self, bottom, top):
        top[0].reshape(())

    def forward_cpu(self, bottom, top):
        top[0].mutable_cpu_data()[...] = sum(float(b.cpu_data().sum()) for b in bottom)

    def backward_cpu(self, top, propagate_down, bottom):
        for b, down in zip(bottom, propagate_down, strict=True):
            if down:
                b.mutable_cpu_diff()[...] = top[0].cpu_diff()

    def allow_force_backward(self, bottom_index):
        return bottom_index == 0


class LossWithAux(SumLoss):
    """Test loss with a second output top whose diff backward ignores, as Caffe's softmax losses."""

    type = "TestLossWithAux"
    exact_num_top_blobs = 2
    backward_ignores_tops = (1,)

    def layer_setup(self, bottom, top):
        self.layer_param.loss_weight.extend([1.0, 0.0])

    def reshape(self, bottom, top):
        top[0].reshape(())
        top[1].reshape_like(bottom[0])

    def forward_cpu(self, bottom, top):
        super().forward_cpu(bottom, top)
        top[1].mutable_cpu_data()[...] = bottom[0].cpu_data()


LAYERS = (ScaleByParam, SumLoss, LossWithAux)


@pytest.fixture(autouse=True)
def test_layers():
    for cls in LAYERS:
        registry.register_layer(cls.type, cls)
    yield
    for cls in LAYERS:
        registry.unregister_layer(cls.type)


def build(text: str, phase=caffe_pb2.TEST, **kwargs) -> Net:
    return Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=phase, **kwargs)


INPUT = 'layer { name: "data" type: "Input" top: "x" input_param { shape { dim: 2 dim: 3 } } }\n'


def test_filtering_by_phase_level_and_stage():
    text = INPUT + """
    layer { name: "train_only" type: "TestScale" bottom: "x" top: "a" include { phase: TRAIN } }
    layer { name: "test_only" type: "TestScale" bottom: "x" top: "b" include { phase: TEST } }
    layer { name: "deep" type: "TestScale" bottom: "x" top: "c" include { min_level: 2 } }
    layer { name: "staged" type: "TestScale" bottom: "x" top: "d" include { stage: "s1" stage: "s2" } }
    layer { name: "not_s1" type: "TestScale" bottom: "x" top: "e" exclude { stage: "s1" } }
    """
    assert build(text, caffe_pb2.TRAIN).layer_names == ["data", "x_data_0_split", "train_only", "not_s1"]
    assert build(text, caffe_pb2.TEST, level=3).layer_names == ["data", "x_data_0_split", "test_only", "deep",
                                                                "not_s1"]
    assert build(text, caffe_pb2.TEST, stages=["s1", "s2"]).layer_names == ["data", "x_data_0_split",
                                                                           "test_only", "staged"]


def test_include_and_exclude_together_is_refused():
    text = INPUT + 'layer { name: "l" type: "TestScale" bottom: "x" top: "y" include { phase: TEST } ' \
                   'exclude { phase: TRAIN } }'
    with pytest.raises(NetBuildError, match="either include rules or exclude rules"):
        build(text)


def test_split_naming_and_gradient_accumulation():
    text = INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" bottom: "y" top: "loss" }
    force_backward: true
    """
    net = build(text)
    assert net.layer_names == ["data", "x_data_0_split", "s", "loss"]
    assert net.blob_names == ["x", "x_data_0_split_0", "x_data_0_split_1", "y", "loss"]
    net.blob_by_name("x").data[...] = 1
    assert net.forward() == pytest.approx(6 + 12)
    net.backward()
    # d loss / d x = 1 (direct) + w (through the scale), summed by the split
    np.testing.assert_array_equal(net.blob_by_name("x").diff, np.full((2, 3), 3.0))
    assert net.layers[2].blobs[0].diff[0] == 6


def test_split_of_a_loss_top_carries_the_loss_weight():
    text = INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "y" loss_weight: 2 }
    layer { name: "loss" type: "TestSumLoss" bottom: "y" top: "loss" }
    """
    net = build(text)
    split = net.layer_by_name("y_s_0_split")
    assert list(split.layer_param.loss_weight) == [2.0, 0.0]
    loss_layer = net.layers[net.layer_names.index("loss")]
    assert loss_layer.layer_param.bottom == ["y_s_0_split_1"]


def test_backward_analysis_and_loss_weights(caplog):
    text = INPUT + """
    layer { name: "frozen" type: "TestScale" bottom: "x" top: "a" param { lr_mult: 0 } }
    layer { name: "learn" type: "TestScale" bottom: "a" top: "b" }
    layer { name: "side" type: "TestScale" bottom: "x" top: "c" }
    layer { name: "loss" type: "TestSumLoss" bottom: "b" top: "loss" }
    """
    with caplog.at_level(logging.INFO, logger="caffe"):
        net = build(text)
    need = dict(zip(net.layer_names, net.layer_need_backward, strict=True))
    assert need == {"data": False, "x_data_0_split": False, "frozen": False, "learn": True, "side": False,
                    "loss": True}
    assert net.blob_loss_weights[net.blob_names.index("loss")] == 1.0
    assert "learn needs backward computation." in caplog.text
    assert "side does not need backward computation." in caplog.text
    assert "This network produces output c" in caplog.text
    assert [net.blob_names[i] for i in net.output_blob_indices] == ["c", "loss"]
    assert "Top shape: 2 3 (6)" in caplog.text and "Top shape: (1)" in caplog.text
    assert "Memory required for data: " in caplog.text


def test_propagate_down_false_stops_backward():
    text = INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "t" type: "TestScale" bottom: "y" top: "z" propagate_down: false }
    layer { name: "loss" type: "TestSumLoss" bottom: "z" top: "loss" }
    """
    net = build(text)
    assert net.bottom_need_backward[net.layer_names.index("t")] == [False]
    assert not net.layer_need_backward[net.layer_names.index("s")]


def test_force_backward_respects_allow_force_backward():
    text = INPUT + """
    layer { name: "y" type: "Input" top: "label" input_param { shape { dim: 2 } } }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" bottom: "label" top: "loss" }
    force_backward: true
    """
    net = build(text)
    assert net.bottom_need_backward[net.layer_names.index("loss")] == [True, False]


def test_propagate_down_count_must_match_bottoms():
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" propagate_down: true ' \
                   'propagate_down: false }'
    with pytest.raises(NetBuildError, match="propagate_down must be given either 0 or 1"):
        build(text)


def test_missing_bottom_and_duplicate_top_are_named():
    with pytest.raises(NetBuildError, match=r"Unknown bottom blob 'nope' \(layer 's', bottom index 0\)"):
        build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "nope" top: "y" }')
    with pytest.raises(NetBuildError, match="Top blob 'y' produced by multiple sources"):
        build(INPUT + 'layer { name: "a" type: "TestScale" bottom: "x" top: "y" }'
                      'layer { name: "b" type: "TestScale" bottom: "x" top: "y" }')


def test_wrong_blob_count_names_type_and_counts():
    with pytest.raises(Exception, match=r"TestScale layer 's' takes 1 bottom blob\(s\) as input, got 2"):
        build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" bottom: "x" top: "y" }')


def test_parameter_sharing_by_name():
    text = INPUT + """
    layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { name: "w" lr_mult: 3 } }
    layer { name: "b" type: "TestScale" bottom: "y" top: "z" param { name: "w" } }
    layer { name: "loss" type: "TestSumLoss" bottom: "z" top: "loss" }
    """
    net = build(text)
    a, b = net.layer_by_name("a").blobs[0], net.layer_by_name("b").blobs[0]
    assert a.data_memory is b.data_memory and a.diff_memory is b.diff_memory
    assert len(net.learnable_params) == 1 and net.params_lr == [3.0]
    assert net.param_owners == [-1, 0]
    net.blob_by_name("x").data[...] = 1
    net.forward()
    net.clear_param_diffs()
    net.backward()
    # loss = sum(w^2 x) -> d/dw = 2 w sum(x) = 2*2*6, accumulated from both users
    assert a.diff[0] == pytest.approx(24)


def test_debug_info_logs_caffes_forward_and_backward_lines(caplog):
    """Caffe's ForwardDebugInfo names a param by its ParamSpec name (else its index); BackwardDebugInfo skips
    bottoms that need no backward and params that do not propagate down (lr_mult 0)."""
    text = "debug_info: true\n" + INPUT + """
    layer { name: "b" type: "TestScale" bottom: "x" top: "y" param { name: "wb" } }
    layer { name: "a" type: "TestScale" bottom: "y" top: "z" param { lr_mult: 0 } }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" bottom: "z" top: "loss" }
    """
    net = build(text, caffe_pb2.TRAIN)
    net.blob_by_name("x").data[...] = 1
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="caffe"):
        # x = 1, y = 2x = 2, z = 2y = 4, loss = sum(x) + sum(z) = 6 + 24
        assert net.forward() == 30
        net.clear_param_diffs()
        net.backward()
    assert [r.getMessage() for r in caplog.records if "ward] " in r.getMessage()] == [
        "    [Forward] Layer data, top blob x data: 1",
        "    [Forward] Layer x_data_0_split, top blob x_data_0_split_0 data: 1",
        "    [Forward] Layer x_data_0_split, top blob x_data_0_split_1 data: 1",
        "    [Forward] Layer b, top blob y data: 2",
        "    [Forward] Layer b, param blob wb data: 2",
        "    [Forward] Layer a, top blob z data: 4",
        "    [Forward] Layer a, param blob 0 data: 2",
        "    [Forward] Layer loss, top blob loss data: 30",
        "    [Backward] Layer loss, bottom blob z diff: 1",
        "    [Backward] Layer a, bottom blob y diff: 2",
        # d loss / d wb = sum(dy * x) = sum(2 * 1) over 6 values
        "    [Backward] Layer b, param blob 0 diff: 12",
    ]


def test_a_net_of_no_layers_forwards_to_a_zero_loss():
    net = build('name: "empty"')
    assert net.forward() == 0.0
    with pytest.raises(IndexError, match=r"forward range 0\.\.1 is outside the net's 0 layers"):
        net.forward_from_to(0, 1)


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
    assert build(text.replace("LR", "")).params_lr == [2.0]
    with pytest.raises(NetBuildError, match="Shared param 'w' has mismatched lr_mult"):
        build(text.replace("LR", "lr_mult: 3"))


def test_shared_param_lr_mult_mismatch_is_refused():
    text = INPUT + """
    layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { name: "w" lr_mult: 3 } }
    layer { name: "b" type: "TestScale" bottom: "y" top: "z" param { name: "w" lr_mult: 1 } }
    """
    with pytest.raises(NetBuildError, match="Shared param 'w' has mismatched lr_mult"):
        build(text)


def test_a_top_whose_diff_backward_ignores_is_warned_about_once_when_a_layer_back_propagates_into_it(caplog):
    text = INPUT + """
    layer { name: "s1" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "loss" type: "TestLossWithAux" bottom: "y" top: "loss" top: "aux" }
    layer { name: "s2" type: "TestScale" bottom: "aux" top: "z" }
    layer { name: "s3" type: "TestScale" bottom: "aux" top: "w" }
    layer { name: "l2" type: "TestSumLoss" bottom: "z" bottom: "w" top: "l2" }
    """
    with caplog.at_level(logging.WARNING, logger="caffe.net"):
        build(text, phase=caffe_pb2.TRAIN)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings == ["Layer 'loss' (TestLossWithAux): its top 'aux' feeds 's2', 's3', which "
                        "back-propagate into it, but as in Caffe the backward of 'loss' ignores that top's "
                        "diff: no gradient flows through it"]


def test_an_ignored_top_that_only_feeds_outputs_is_not_warned_about(caplog):
    text = INPUT + """
    layer { name: "s1" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "loss" type: "TestLossWithAux" bottom: "y" top: "loss" top: "aux" }
    """
    with caplog.at_level(logging.WARNING, logger="caffe.net"):
        build(text, phase=caffe_pb2.TRAIN)
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]


def test_too_many_param_specs():
    text = INPUT + 'layer { name: "a" type: "TestScale" bottom: "x" top: "y" param { } param { } }'
    with pytest.raises(NetBuildError, match="Too many params specified for layer 'a'"):
        build(text)


def test_save_and_copy_trained_layers(tmp_path):
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    net = build(text)
    net.layer_by_name("s").blobs[0].data[...] = 7
    path = tmp_path / "w.caffemodel"
    net.save(path)
    saved = proto_io.read_binary_file(path, caffe_pb2.NetParameter())
    assert [layer.name for layer in saved.layer] == ["data", "s"]
    assert saved.layer[1].phase == caffe_pb2.TEST
    other = build(text + 'layer { name: "extra" type: "TestScale" bottom: "y" top: "z" }')
    other.copy_trained_layers_from(path)
    assert other.layer_by_name("s").blobs[0].data[0] == 7
    assert other.layer_by_name("extra").blobs[0].data[0] == 2


def test_each_layer_sees_the_stored_layer_its_blobs_came_from(tmp_path, monkeypatch):
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    stored = build(text).to_proto()
    stored.layer[1].loss_weight.append(0.5)
    path = tmp_path / "w.caffemodel"
    proto_io.write_binary_file(path, stored)
    seen = []
    monkeypatch.setattr(ScaleByParam, "adopt_stored_layer", lambda self, source: seen.append(
        (self.name, list(source.loss_weight))))
    build(text).copy_trained_layers_from(path)
    assert seen == [("s", [0.5])]


def test_copy_with_shape_mismatch_names_layer_and_shapes(tmp_path):
    param = caffe_pb2.NetParameter()
    stored = param.layer.add(name="s", type="TestScale").blobs.add()
    stored.shape.dim.extend([2])
    stored.data.extend([1, 2])
    path = tmp_path / "bad.caffemodel"
    proto_io.write_binary_file(path, param)
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    with pytest.raises(ModelFileError, match=r"Cannot copy param 0 weights from layer 's'; shape mismatch\. "
                                             r"Source param shape is \(2,\); target param shape is \(1,\)"):
        net.copy_trained_layers_from(path)


def test_hdf5_weights_round_trip(tmp_path):
    text = INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }'
    net = build(text)
    net.layer_by_name("s").blobs[0].data[...] = 5
    path = tmp_path / "w.caffemodel.h5"
    net.to_hdf5(path)
    other = build(text)
    other.copy_trained_layers_from(path)
    assert other.layer_by_name("s").blobs[0].data[0] == 5


def test_reshape_propagates_input_shape():
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    net.blob_by_name("x").reshape((4, 5))
    net.reshape()
    assert net.blob_by_name("y").shape == (4, 5)


def test_forward_backward_callbacks_see_every_layer():
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    seen = []
    net.add_before_forward(lambda i: seen.append(("f", i)))
    net.add_after_backward(lambda i: seen.append(("b", i)))
    net.forward()
    net.backward()
    assert seen == [("f", 0), ("f", 1), ("b", 1), ("b", 0)]


def test_setup_turns_param_propagation_on_and_the_net_applies_lr_mult():
    from caffe_core.blob import Blob

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
