"""Which BN class a layer asks for: SegNet's fields choose SegNet's BN."""

import pytest

from caffe_core import proto_io, registry
from caffe_core.proto import caffe_pb2
from caffe_layers_seg.bn_pspnet import PSPNetBNLayer
from caffe_layers_seg.bn_segnet import SegNetBNLayer
from caffe_layers_seg.bn_variant import is_segnet_bn


@pytest.mark.parametrize(("text", "segnet"), [
    ("", False),
    ("bn_param { }", False),
    ("bn_param { slope_filler { type: 'constant' } frozen: true }", False),
    ("bn_param { bn_mode: LEARN }", True),
    ("bn_param { scale_filler { type: 'constant' } }", True),
    ("bn_param { shift_filler { type: 'constant' } momentum: 0.5 }", True),
])
def test_segnet_fields_choose_segnet_bn(text, segnet):
    param = proto_io.parse_text(f"name: 'bn' type: 'BN' bottom: 'x' top: 'y' {text}",
                                caffe_pb2.LayerParameter())
    assert is_segnet_bn(param) is segnet
    assert registry.layer_class_for(param) is (SegNetBNLayer if segnet else PSPNetBNLayer)
