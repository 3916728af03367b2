"""The plugin's hooks: each block at eric612's LayerParameter number; a layer written here carries them;
the YOLO forks' Upsample loads through caffe-layers-seg's Upsample[nearest]."""

import numpy as np
import pytest
from caffe_layers_yolo.params import ReorgParameter, Yolov3DetectionOutputParameter

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.schema_extensions import get_param_block, installed_additions, param_blocks
from caffe_core.testing.wire import wire_field_numbers
from caffe_layers_yolo import plugin

NUMBERS = {"reorg_param": 149, "yolo_detection_output_param": 601, "yolov3_detection_output_param": 602}


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
