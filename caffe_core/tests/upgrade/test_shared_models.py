"""Every public prototxt (in the folder CAFFE_PUBLIC_MODELS names) parses and upgrades; fork syntax and parse
errors."""

import logging
from pathlib import Path

import pytest

from caffe_core import proto_io
from caffe_core.errors import PrototxtError
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import message_fields, param_blocks
from caffe_core.testing.public_models import public_model, public_model_params, public_models_folder
from caffe_core.upgrade import solver_type, upgrade_net_as_needed

# Files using a fork's field of one of Caffe's own messages: they parse once a pack adds that field.
FORK_FIELDS = {"external/densenet121_deploy.prototxt": ("PoolingParameter", "ceil_mode"),
               "external/faster_rcnn_zf_test.prototxt": ("DropoutParameter", "scale_train")}


def _is_solver(path: Path) -> bool:
    return "solver" in path.name


def _read(relative: str) -> caffe_pb2.NetParameter:
    return proto_io.read_text_file(public_model(relative), caffe_pb2.NetParameter())


def test_every_listed_model_is_there():
    sources = public_model("SOURCES.tsv")
    folder = public_models_folder()
    listed = [line.split("\t")[0] for line in sources.read_text().splitlines()[1:] if line]
    prototxts = [str(p.relative_to(folder)) for p in folder.rglob("*.prototxt")]
    assert sorted(prototxts) == sorted(listed)
    assert len(prototxts) == 62


@pytest.mark.parametrize("path", public_model_params("**/*.prototxt"))
def test_parses_and_upgrades_to_the_current_format(path, monkeypatch):
    # Blocks of packs not installed are dropped here; test_mobilenet_ssd_fork_blocks_parse checks refusal.
    monkeypatch.setattr(proto_io, "_lenient", True)
    fork_field = FORK_FIELDS.get(str(path.relative_to(public_models_folder())))
    if fork_field is not None and fork_field not in message_fields():
        with pytest.raises(PrototxtError, match=f"install the pack that provides '{'.'.join(fork_field)}'"):
            proto_io.read_text_file(path, caffe_pb2.NetParameter())
        return
    if _is_solver(path):
        solver = proto_io.read_text_file(path, caffe_pb2.SolverParameter())
        solver_type.upgrade_solver_as_needed(solver, str(path))
        assert not solver.HasField("solver_type")
        nets = [solver.net_param] if solver.HasField("net_param") else []
        assert solver.HasField("net") or solver.HasField("train_net") or nets
    else:
        nets = [proto_io.read_text_file(path, caffe_pb2.NetParameter())]
    for net in nets:
        assert upgrade_net_as_needed(net, str(path)) is True
        assert not net.layers and not net.input and not net.input_dim and not net.input_shape
        assert net.layer and all(layer.type for layer in net.layer)


def test_consolidated_solvers_v1_net_becomes_v2():
    solver = proto_io.read_text_file(public_model("bvlc/examples/mnist/lenet_consolidated_solver.prototxt"),
                                     caffe_pb2.SolverParameter())
    net = solver.net_param
    assert len(net.layers) == 12 and not net.layer
    upgrade_net_as_needed(net, "lenet_consolidated_solver.prototxt")
    assert [layer.type for layer in net.layer] == [
        "Data", "Data", "Data", "Convolution", "Pooling", "Convolution", "Pooling", "InnerProduct", "ReLU",
        "InnerProduct", "Accuracy", "SoftmaxWithLoss"]
    conv1 = net.layer[3]
    assert [(spec.lr_mult, spec.HasField("decay_mult")) for spec in conv1.param] == [(1, False), (2, False)]
    assert conv1.convolution_param.num_output == 20 and conv1.convolution_param.weight_filler.type == "xavier"
    test_on_train = net.layer[2]
    assert test_on_train.include[0].phase == caffe_pb2.TEST
    assert list(test_on_train.include[0].stage) == ["test-on-train-set"]
    assert test_on_train.transform_param.scale == pytest.approx(1 / 256)
    assert test_on_train.data_param.backend == caffe_pb2.DataParameter.LMDB


def test_mobilenet_ssd_fork_blocks_parse(caplog, monkeypatch):
    # Without the SSD pack its blocks are refused, naming the pack; lenient mode drops them with a warning.
    missing = {"permute_param", "prior_box_param", "detection_output_param"} - set(param_blocks())
    if missing:
        with pytest.raises(PrototxtError, match=r"caffe-layers-ssd provides it: pip install"):
            _read("external/mobilenet_ssd_deploy.prototxt")
        monkeypatch.setattr(proto_io, "_lenient", True)
    with caplog.at_level(logging.WARNING, logger="caffe.prototxt"):
        net = _read("external/mobilenet_ssd_deploy.prototxt")
    assert len(net.layer) == 119
    types = {layer.type for layer in net.layer}
    assert {"PriorBox", "Permute", "DetectionOutput"} <= types
    dropped = {m.split("'")[1] for m in caplog.messages if "ignoring parameter block" in m}
    assert dropped == missing
    flatten = next(layer for layer in net.layer if layer.type == "Flatten")
    assert flatten.HasField("flatten_param")  # BVLC blocks beside the fork ones still parse


def test_parse_error_says_file_line_and_column_after_rewritten_pack_text(tmp_path):
    path = tmp_path / "net.prototxt"
    path.write_text('name: "n"\n'
                    'layer {\n'
                    '  name: "pb"\n'
                    '  unknown_fork_param { min_size: 30.0 aspect_ratio: 2.0 }\n'
                    '  pooling_param { zzz_ceil: true }\n'
                    '  dropout_param { zzz_keep: false }\n'
                    '     bottm: "x"\n'
                    '}\n')
    with pytest.raises(PrototxtError, match=r"net\.prototxt:7:6: .*no field named \"bottm\""):
        proto_io.read_text_file(path, caffe_pb2.NetParameter())


def test_parse_error_in_a_v1_net(tmp_path):
    path = tmp_path / "old.prototxt"
    path.write_text("layers {\n  name: 'c'\n  type: CONVOLUTON\n}\n")
    with pytest.raises(PrototxtError, match=r"old\.prototxt:3:9: .*CONVOLUTON"):
        proto_io.read_text_file(path, caffe_pb2.NetParameter())
