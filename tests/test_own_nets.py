"""The nets written here that stand in for public ones have the same layers, fields and values as the public
files (from the folder CAFFE_PUBLIC_MODELS names), so they compute the same numbers."""

from pathlib import Path

import pytest

from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import read_text_file
from caffe_core.testing.public_models import public_model

REPO = Path(__file__).resolve().parents[1]
# (our file, the public file it stands in for)
STAND_INS = [
    ("examples/mnist/lenet_train_test.prototxt", "bvlc/examples/mnist/lenet_train_test.prototxt"),
    ("examples/mnist/lenet_deploy.prototxt", "bvlc/examples/mnist/lenet.prototxt"),
    ("tests/pycaffe_scripts/linreg.prototxt", "bvlc/examples/pycaffe/linreg.prototxt"),
    ("tests/pycaffe_scripts/net_surgery/conv.prototxt", "bvlc/examples/net_surgery/conv.prototxt"),
]


@pytest.mark.parametrize(("ours", "public"), STAND_INS, ids=[ours for ours, _ in STAND_INS])
def test_our_net_has_the_public_nets_layers(ours, public):
    expected = read_text_file(public_model(public), caffe_pb2.NetParameter())
    net = read_text_file(REPO / ours, caffe_pb2.NetParameter())
    assert len(net.layer) == len(expected.layer) > 0
    for param in (net, expected):
        param.ClearField("name")  # a net's name is a label, which ours may word differently
    assert net == expected
