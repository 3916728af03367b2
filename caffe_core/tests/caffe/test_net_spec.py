"""NetSpec: Caffe's example nets print exactly as BVLC pycaffe printed them; naming and param routing."""

import re
from pathlib import Path

import pytest

import caffe
from caffe import layers as L
from caffe import params as P
from caffe import to_proto
from caffe.net_spec import assign_proto, param_name_dict
from caffe.proto import caffe_pb2
from caffe_core import proto_io
from caffe_core.schema_extensions import get_param_block

from .conftest import require_layers, write_net

GOLDEN = Path(__file__).parent / "golden" / "netspec"


# ----- the calls of examples/pycaffe/caffenet.py -----
def conv_relu(bottom, ks, nout, stride=1, pad=0, group=1):
    conv = L.Convolution(bottom, kernel_size=ks, stride=stride, num_output=nout, pad=pad, group=group)
    return conv, L.ReLU(conv, in_place=True)


def fc_relu(bottom, nout):
    fc = L.InnerProduct(bottom, num_output=nout)
    return fc, L.ReLU(fc, in_place=True)


def max_pool(bottom, ks, stride=1):
    return L.Pooling(bottom, pool=P.Pooling.MAX, kernel_size=ks, stride=stride)


def caffenet(lmdb, batch_size=256, include_acc=False):
    data, label = L.Data(source=lmdb, backend=P.Data.LMDB, batch_size=batch_size, ntop=2,
                         transform_param=dict(crop_size=227, mean_value=[104, 117, 123], mirror=True))
    conv1, relu1 = conv_relu(data, 11, 96, stride=4)
    pool1 = max_pool(relu1, 3, stride=2)
    norm1 = L.LRN(pool1, local_size=5, alpha=1e-4, beta=0.75)
    conv2, relu2 = conv_relu(norm1, 5, 256, pad=2, group=2)
    pool2 = max_pool(relu2, 3, stride=2)
    norm2 = L.LRN(pool2, local_size=5, alpha=1e-4, beta=0.75)
    conv3, relu3 = conv_relu(norm2, 3, 384, pad=1)
    conv4, relu4 = conv_relu(relu3, 3, 384, pad=1, group=2)
    conv5, relu5 = conv_relu(relu4, 3, 256, pad=1, group=2)
    pool5 = max_pool(relu5, 3, stride=2)
    fc6, relu6 = fc_relu(pool5, 4096)
    drop6 = L.Dropout(relu6, in_place=True)
    fc7, relu7 = fc_relu(drop6, 4096)
    drop7 = L.Dropout(relu7, in_place=True)
    fc8 = L.InnerProduct(drop7, num_output=1000)
    loss = L.SoftmaxWithLoss(fc8, label)
    if include_acc:
        acc = L.Accuracy(fc8, label)
        return to_proto(loss, acc)
    return to_proto(loss)


# ----- examples/01-learning-lenet.ipynb -----
def lenet(lmdb, batch_size):
    n = caffe.NetSpec()
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1. / 255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20, weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50, weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.fc1 = L.InnerProduct(n.pool2, num_output=500, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.fc1, in_place=True)
    n.score = L.InnerProduct(n.relu1, num_output=10, weight_filler=dict(type='xavier'))
    n.loss = L.SoftmaxWithLoss(n.score, n.label)
    return n.to_proto()


# ----- examples/02-brewing-logreg.ipynb -----
def nonlinear_net(hdf5, batch_size):
    n = caffe.NetSpec()
    n.data, n.label = L.HDF5Data(batch_size=batch_size, source=hdf5, ntop=2)
    n.ip1 = L.InnerProduct(n.data, num_output=40, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.ip1, num_output=2, weight_filler=dict(type='xavier'))
    n.accuracy = L.Accuracy(n.ip2, n.label)
    n.loss = L.SoftmaxWithLoss(n.ip2, n.label)
    return n.to_proto()


@pytest.mark.parametrize(("golden", "build"), [
    ("caffenet_train", lambda: caffenet('/path/to/caffe-train-lmdb')),
    ("caffenet_test", lambda: caffenet('/path/to/caffe-val-lmdb', batch_size=50, include_acc=True)),
    ("lenet_auto_train", lambda: lenet('mnist/mnist_train_lmdb', 64)),
    ("lenet_auto_test", lambda: lenet('mnist/mnist_test_lmdb', 100)),
    ("logreg_auto_train", lambda: nonlinear_net('hdf5_classification/data/train.txt', 10)),
])
def test_example_nets_print_exactly_as_caffe(golden, build):
    assert str(build()) == (GOLDEN / f"{golden}.prototxt").read_text()


def test_printed_text_parses_back_to_the_same_net():
    net = caffenet('/path/to/caffe-train-lmdb')
    again = proto_io.parse_text(str(net), caffe_pb2.NetParameter())
    assert again == net
    assert again.layer[4].lrn_param.alpha == net.layer[4].lrn_param.alpha


# ----- python/caffe/test/test_net_spec.py nets -----
def dummy_lenet(batch_size, named=True):
    data, label = L.DummyData(shape=[dict(dim=[batch_size, 1, 28, 28]), dict(dim=[batch_size, 1, 1, 1])],
                              transform_param=dict(scale=1. / 255), ntop=2)
    conv1 = L.Convolution(data, kernel_size=5, num_output=20, weight_filler=dict(type='xavier'))
    pool1 = L.Pooling(conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    conv2 = L.Convolution(pool1, kernel_size=5, num_output=50, weight_filler=dict(type='xavier'))
    pool2 = L.Pooling(conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    ip1 = L.InnerProduct(pool2, num_output=500, weight_filler=dict(type='xavier'))
    relu1 = L.ReLU(ip1, in_place=True)
    ip2 = L.InnerProduct(relu1, num_output=10, weight_filler=dict(type='xavier'))
    loss = L.SoftmaxWithLoss(ip2, label)
    if not named:
        return loss.to_proto()
    n = caffe.NetSpec()
    for name, top in [("data", data), ("label", label), ("conv1", conv1), ("pool1", pool1), ("conv2", conv2),
                      ("pool2", pool2), ("ip1", ip1), ("relu1", relu1), ("ip2", ip2), ("loss", loss)]:
        n[name] = top
    return n.to_proto()


def test_named_tops_name_layers_and_blobs_and_relu_stays_in_place():
    net = dummy_lenet(50)
    assert [layer.name for layer in net.layer] == ["data", "conv1", "pool1", "conv2", "pool2", "ip1", "relu1",
                                                   "ip2", "loss"]
    assert list(net.layer[0].top) == ["data", "label"]
    assert list(net.layer[6].bottom) == list(net.layer[6].top) == ["ip1"]
    assert list(net.layer[7].bottom) == ["ip1"]
    assert list(net.layer[8].bottom) == ["ip2", "label"]


def test_anonymous_tops_are_named_type_and_count():
    net = dummy_lenet(50, named=False)
    assert [layer.name for layer in net.layer] == [
        "DummyData1", "Convolution1", "Pooling1", "Convolution2", "Pooling2", "InnerProduct1", "ReLU1",
        "InnerProduct2", "SoftmaxWithLoss1"]
    assert list(net.layer[0].top) == ["DummyData1", "DummyData2"]
    assert list(net.layer[6].bottom) == list(net.layer[6].top) == ["InnerProduct1"]
    assert list(net.layer[8].bottom) == ["InnerProduct2", "DummyData2"]


@pytest.mark.parametrize("named", [True, False])
def test_spec_builds_into_a_net(tmp_path, named):
    require_layers("DummyData", "Convolution", "Pooling", "InnerProduct", "ReLU", "SoftmaxWithLoss")
    net = caffe.Net(write_net(tmp_path, dummy_lenet(5, named)), caffe.TEST)
    assert len(net.layers) == 9
    assert net.blobs["data" if named else "DummyData1"].data.shape == (5, 1, 28, 28)


def silent_net():
    n = caffe.NetSpec()
    n.data, n.data2 = L.DummyData(shape=dict(dim=3), ntop=2)
    n.silence_data = L.Silence(n.data, ntop=0)
    n.silence_data2 = L.Silence(n.data2, ntop=0)
    return n.to_proto()


def test_zero_top_layers_are_functions_named_after_their_attribute(tmp_path):
    net = silent_net()
    assert [(layer.name, list(layer.bottom), list(layer.top)) for layer in net.layer] == [
        ("data", [], ["data", "data2"]), ("silence_data", ["data"], []), ("silence_data2", ["data2"], [])]
    anonymous = to_proto(L.Silence(L.DummyData(shape=dict(dim=3)), ntop=0))
    assert [layer.name for layer in anonymous.layer] == ["DummyData1", "Silence1"]
    require_layers("DummyData", "Silence")
    assert len(caffe.Net(write_net(tmp_path, net), caffe.TEST).forward()) == 0


def test_a_tuple_of_tops_is_not_a_bottom():
    data = L.DummyData(ntop=2)
    with pytest.raises(TypeError, match=r"^Silence input 0 is not a Top \(type is <class 'tuple'>\)$"):
        L.Silence(data, ntop=0)
    L.Silence(*data, ntop=0)


# ----- parameter routing -----
def test_param_kwargs_go_onto_the_layer_and_others_into_the_type_block():
    layer = L.Convolution(L.Input(shape=dict(dim=[1, 1, 4, 4])), num_output=3, kernel_size=[3, 1],
                          param=[dict(lr_mult=1), dict(lr_mult=2, decay_mult=0)], loss_weight=0.5,
                          propagate_down=False, include=dict(phase=caffe.TRAIN)).to_proto().layer[1]
    assert layer.convolution_param.num_output == 3
    assert list(layer.convolution_param.kernel_size) == [3, 1]
    assert [(p.lr_mult, p.decay_mult) for p in layer.param] == [(1, 1), (2, 0)]
    assert list(layer.loss_weight) == [0.5]  # a repeated field given one value
    assert list(layer.propagate_down) == [False]
    assert layer.include[0].phase == caffe.TRAIN


def test_explicit_name_kwarg_overrides_the_generated_layer_name():
    net = to_proto(L.ReLU(L.Input(shape=dict(dim=[1])), name="my_relu"))
    assert (net.layer[1].name, list(net.layer[1].top)) == ("my_relu", ["ReLU1"])


def test_update_changes_parameters_before_printing():
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[1, 2]))
    n.ip = L.InnerProduct(n.data, num_output=2)
    n.update("ip", dict(num_output=7))
    assert n.to_proto().layer[1].inner_product_param.num_output == 7


def test_unknown_kwargs_name_the_layer_type_and_field():
    with pytest.raises(AttributeError, match=r"L\.InnerProduct: 'num_outputs' is not a field of "
                                             r"inner_product_param nor of LayerParameter"):
        L.InnerProduct(L.Input(), num_outputs=3).to_proto()
    with pytest.raises(AttributeError, match=r"L\.Silence: 'axis_x' is not a field of LayerParameter"):
        to_proto(L.Silence(L.Input(), axis_x=1, ntop=0))
    with pytest.raises(AttributeError, match="LayerParameter has no field 'bogus_param'"):
        L.ReLU(L.Input(), bogus_param=dict(a=1)).to_proto()
    with pytest.raises(TypeError, match="InnerProductParameter.weight_filler is a message"):
        L.InnerProduct(L.Input(), weight_filler="xavier").to_proto()


def test_assign_proto_wraps_single_values_of_repeated_fields_and_builds_messages():
    param = caffe_pb2.LayerParameter()
    assign_proto(param, "top", "x")
    assign_proto(param, "convolution_param", dict(pad=(1, 2), weight_filler=dict(type="gaussian", std=0.1)))
    assert list(param.top) == ["x"]
    assert list(param.convolution_param.pad) == [1, 2]
    assert param.convolution_param.weight_filler.type == "gaussian"


def test_pack_layer_types_route_kwargs_into_their_parameter_block():
    bottom = L.Input(shape=dict(dim=[1, 3]))
    net = to_proto(L.ZZZ(bottom, mul=2.5, note="kept"), L.ZZZ(bottom, zzz_param=dict(mul=3)))
    assert get_param_block(net.layer[1], "zzz_param").mul == 2.5
    assert get_param_block(net.layer[1], "zzz_param").note == "kept"
    assert get_param_block(net.layer[2], "zzz_param").mul == 3
    assert '  zzz_param {\n    mul: 2.5\n    note: "kept"\n  }\n' in str(net)
    assert proto_io.parse_text(str(net), caffe_pb2.NetParameter()) == net


def test_fields_packs_add_to_caffes_messages_are_assigned_by_name():
    bottom = L.Input(shape=dict(dim=[1, 3, 4, 4]))
    net = to_proto(L.Pooling(bottom, kernel_size=2, zzz_ceil=False), L.Dropout(bottom, zzz_keep=False))
    assert net.layer[1].pooling_param.round_mode == caffe_pb2.PoolingParameter.FLOOR
    assert "  dropout_param {\n    zzz_keep: false\n  }\n" in str(net)
    assert proto_io.parse_text(str(net), caffe_pb2.NetParameter()) == net
    with pytest.raises(ValueError, match="PoolingParameter.zzz_ceil takes true or false, got 'often'"):
        to_proto(L.Pooling(bottom, zzz_ceil="often"))


def test_param_name_dict_maps_types_to_blocks_including_packs():
    names = param_name_dict()
    assert names["Convolution"] == "convolution"
    assert names["HDF5Data"] == "hdf5_data"
    assert names["Transformation"] == "transform"
    assert names["ZZZ"] == "zzz"
    assert names["Deconvolution"] == "convolution"


def test_types_sharing_a_block_take_its_fields():
    x = L.Input(shape=dict(dim=[1, 1, 4, 4]))
    net = to_proto(L.Deconvolution(x, num_output=3, kernel_size=4, stride=2),
                   L.Deconvolution(x, convolution_param=dict(num_output=5)))
    conv = net.layer[1].convolution_param
    assert (conv.num_output, list(conv.stride)) == (3, [2])
    assert net.layer[2].convolution_param.num_output == 5


def test_params_pseudo_module_gives_enum_values():
    assert P.Pooling.MAX == caffe_pb2.PoolingParameter.MAX
    assert P.Pooling.STOCHASTIC == 2
    assert P.Data.LMDB == caffe_pb2.DataParameter.LMDB
    assert P.Eltwise.SUM == caffe_pb2.EltwiseParameter.SUM
    with pytest.raises(AttributeError, match="PoolingParameter has no constant 'MIN'"):
        _ = P.Pooling.MIN
    with pytest.raises(AttributeError, match="no parameter message NopeParameter"):
        _ = P.Nope


def test_netspec_accessors():
    n = caffe.NetSpec()
    n["data"] = L.Input(shape=dict(dim=[1]))
    n.relu = L.ReLU(n.data)
    assert n.keys() == ["data", "relu"]
    assert n.vals() == [n.data, n["relu"]]
    with pytest.raises(AttributeError, match="NetSpec has no top named 'nothing'"):
        _ = n.nothing
    del n["relu"]
    assert n.keys() == ["data"]


def test_str_of_any_caffe_message_uses_pycaffe_float_text():
    solver = caffe_pb2.SolverParameter(base_lr=0.01, momentum=0.9, type="SGD")
    solver.solver_mode = caffe_pb2.SolverParameter.CPU
    assert str(solver) == 'base_lr: 0.009999999776482582\nmomentum: 0.8999999761581421\nsolver_mode: CPU\n' \
                          'type: "SGD"\n'
    blob = caffe_pb2.BlobProto(data=[float("inf"), 1.0])
    assert re.fullmatch(r"data: inf\ndata: 1\.0\n", str(blob))
    datum = caffe_pb2.Datum(data=b"\x00\xff", encoded=True)
    assert str(datum) == 'data: "\\000\\377"\nencoded: true\n'
