"""ONNX export of whole nets (our LeNet, and public nets from the folder CAFFE_PUBLIC_MODELS names):
onnx.checker accepts each, and onnxruntime gives the net's own outputs on random weights and inputs (within
1e-4 of each output's largest magnitude, plus 1e-5)."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

import pathlib

import numpy as np

from caffe_core.errors import OnnxExportError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import read_text_file
from caffe_core.testing.onnx_check import assert_onnx_matches, randomise
from caffe_core.testing.public_models import public_model

LENET = pathlib.Path(__file__).resolve().parents[1] / "examples" / "mnist" / "lenet_deploy.prototxt"
# (public deploy file under CAFFE_PUBLIC_MODELS, batch size): FCN-8s runs at batch 1, its 500 x 500 input
# padded by 100 being the costliest.
SMALL = {
    "squeezenet_1.1": ("external/squeezenet_v1.1_deploy.prototxt", 2),
    "mobilenet_v1": ("external/mobilenet_v1_deploy.prototxt", 2),
}
LARGE = {
    "caffenet": ("bvlc/models/bvlc_reference_caffenet/deploy.prototxt", 2),
    "googlenet": ("bvlc/models/bvlc_googlenet/deploy.prototxt", 2),
    "resnet50": ("external/resnet50_deploy.prototxt", 2),
    "fcn8s": ("external/fcn8s_voc_deploy.prototxt", 1),
    "densenet121": ("external/densenet121_deploy.prototxt", 2),
}
CASES = [pytest.param(*spec, id=name) for name, spec in SMALL.items()]
CASES += [pytest.param(*spec, id=name, marks=pytest.mark.slow) for name, spec in LARGE.items()]


def at_batch(net: Net, batch: int) -> Net:
    """The net with every input's first axis set to `batch`."""
    for blob in net.input_blobs:
        blob.reshape(batch, *blob.shape[1:])
    net.reshape()
    return net


def assert_runtime_gives_the_nets_outputs(net: Net) -> None:
    """onnxruntime gives the net's outputs on random weights and inputs; the ONNX inputs are the net's."""
    randomise(net, np.random.default_rng(11))
    model = assert_onnx_matches(net)
    assert [i.name for i in model.graph.input] == [net.blob_names[i] for i in net.input_blob_indices]


def test_onnxruntime_gives_lenets_outputs():
    assert_runtime_gives_the_nets_outputs(at_batch(Net(LENET, phase=caffe_pb2.TEST), 2))


@pytest.mark.parametrize(("path", "batch"), CASES)
def test_onnxruntime_gives_a_public_nets_outputs(path, batch):
    assert_runtime_gives_the_nets_outputs(at_batch(Net(public_model(path), phase=caffe_pb2.TEST), batch))


def test_an_ssd_net_exports_up_to_its_detection_output():
    param = read_text_file(public_model("external/mobilenet_ssd_deploy.prototxt"), caffe_pb2.NetParameter())
    with pytest.raises(OnnxExportError, match="layer 'detection_out' \\(DetectionOutput\\)"):
        assert_onnx_matches(Net(param, phase=caffe_pb2.TEST))
    kept = [layer for layer in param.layer if layer.type != "DetectionOutput"]
    del param.layer[:]
    param.layer.extend(kept)
    net = at_batch(Net(param, phase=caffe_pb2.TEST), 1)
    randomise(net, np.random.default_rng(12))
    model = assert_onnx_matches(net)
    assert sorted(o.name for o in model.graph.output) == ["mbox_conf_flatten", "mbox_loc", "mbox_priorbox"]
