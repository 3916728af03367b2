"""The plugin's hooks: each block at eric612's LayerParameter number (region_param at the pack's own); a
layer written here carries them;
the YOLO forks' Upsample loads through caffe-layers-seg's Upsample[nearest]."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, installed_additions, param_blocks
from caffe_core.testing.wire import field_bytes, wire_field_numbers
from caffe_layers_yolo import plugin
from caffe_layers_yolo.params import ReorgParameter, Yolov3DetectionOutputParameter

NUMBERS = {"reorg_param": 149, "yolo_detection_output_param": 601, "yolov3_detection_output_param": 602,
           "region_param": 620, "mish_param": 621}


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: block.number for name, block in blocks.items()} == NUMBERS
    assert blocks["reorg_param"].message is ReorgParameter
    assert blocks["yolov3_detection_output_param"].message is Yolov3DetectionOutputParameter


def test_installed_and_declared():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-yolo"}
    assert ours == set(NUMBERS.items())
    assert param_blocks()["reorg_param"].number == 149


@pytest.mark.parametrize(("text", "block", "number"), [
    ('name: "r" type: "Reorg" reorg_param { stride: 2 }', "reorg_param", 149),
    ('name: "d" type: "YoloDetectionOutput" yolo_detection_output_param { num_classes: 20 }',
     "yolo_detection_output_param", 601),
    ('name: "d" type: "Yolov3DetectionOutput" yolov3_detection_output_param { num_classes: 80 mask: 3 }',
     "yolov3_detection_output_param", 602),
    ('name: "r" type: "Region" region_param { anchors: "1,2, 3,4" classes: 3 num: 2 }', "region_param", 620),
    ('name: "m" type: "Mish" mish_param { engine: CAFFE }', "mish_param", 621),
])
def test_serialised_layers_carry_the_forks_numbers(text, block, number):
    layer = parse_text(text, caffe_pb2.LayerParameter())
    wire = layer.SerializeToString()
    assert number in wire_field_numbers(wire)
    again = caffe_pb2.LayerParameter.FromString(wire)
    assert get_param_block(again, block) == get_param_block(layer, block)


@pytest.mark.requires_layer_types("Upsample")
def test_yolo_upsample_builds_through_the_seg_pack(make_layer, blob_of):
    # eric612's and Chen's `Upsample { upsample_param { scale: 2 } }` (one bottom): the seg pack's
    # Upsample[nearest] takes it; the block's text is the same whatever number a fork stores it at.
    layer = make_layer('name: "up" type: "Upsample" bottom: "x" top: "y" upsample_param { scale: 2 }')
    assert type(layer).__name__ == "NearestUpsampleLayer"
    bottom, top = [blob_of(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2))], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    np.testing.assert_array_equal(top[0].cpu_data()[0, 0], [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3],
                                                            [2, 2, 3, 3]])



@pytest.mark.requires_layer_types("Upsample", "Reorg", "Convolution")
@pytest.mark.parametrize("fork_number", [150, 149], ids=["eric612", "ChenYingpeng"])
def test_a_fork_written_file_with_its_upsample_block_loads(tmp_path, fork_number):
    # A .caffemodel as eric612's (150) or Chen's (149) Caffe writes an Upsample layer: the block's bytes
    # (scale 2 as field 1) at the fork's number. The layer has no blobs, so copying weights ignores it;
    # the convolution's blob is copied. At 149 the bytes read as reorg_param of a non-Reorg layer: harmless.
    from caffe_core.testing.onnx_check import net_from_text

    net = net_from_text(
        'layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 2 dim: 2 dim: 2 } } } '
        'layer { name: "up" type: "Upsample" bottom: "x" top: "u" upsample_param { scale: 2 } } '
        'layer { name: "conv" type: "Convolution" bottom: "u" top: "y" '
        'convolution_param { num_output: 1 kernel_size: 1 bias_term: false } }')
    up = parse_text('name: "up" type: "Upsample"', caffe_pb2.LayerParameter()).SerializeToString()
    up += field_bytes(fork_number, bytes([0x08, 0x02]))
    conv = caffe_pb2.LayerParameter(name="conv", type="Convolution")
    weights = caffe_pb2.BlobProto(shape=caffe_pb2.BlobShape(dim=[1, 2, 1, 1]), data=[3.0, -1.0])
    conv.blobs.add().CopyFrom(weights)
    stored = field_bytes(100, up) + field_bytes(100, conv.SerializeToString())
    (tmp_path / "fork.caffemodel").write_bytes(stored)
    net.copy_trained_layers_from(tmp_path / "fork.caffemodel")
    np.testing.assert_array_equal(net.layer_by_name("conv").blobs[0].cpu_data().ravel(), [3.0, -1.0])
