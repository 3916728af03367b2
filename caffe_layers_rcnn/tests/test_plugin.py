"""The plugin's hooks: each block at its fork's LayerParameter number, scale_train at DropoutParameter 2."""

from pathlib import Path

from caffe_core.schema_extensions import ExtraField, installed_additions, param_blocks
from caffe_layers_rcnn import plugin
from caffe_layers_rcnn.params import (
    BBoxRegParameter,
    BoxGroupOutputParameter,
    DecodeBBoxParameter,
    ProposalParameter,
    ROIPoolingParameter,
    ScaleRouteParameter,
)

CASCADE = {"bbox_reg_param": 150, "scale_route_param": 154, "decode_bbox_param": 155,
           "box_group_output_param": 158}


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: block.number for name, block in blocks.items()} == {
        "roi_pooling_param": 8266711, "smooth_l1_loss_param": 8266712, "proposal_param": 1000,
        "psroi_pooling_param": 10001, **CASCADE}
    assert blocks["roi_pooling_param"].message is ROIPoolingParameter
    assert blocks["proposal_param"].message is ProposalParameter
    assert blocks["bbox_reg_param"].message is BBoxRegParameter
    assert blocks["scale_route_param"].message is ScaleRouteParameter
    assert blocks["decode_bbox_param"].message is DecodeBBoxParameter
    assert blocks["box_group_output_param"].message is BoxGroupOutputParameter


def test_cascade_roi_pooling_number_deviation_is_documented():
    # cascade-rcnn keeps roi_pooling_param at 147, BVLC's swish_param: the block stays at caffe-fast-rcnn's.
    from caffe_core.proto import caffe_pb2

    assert caffe_pb2.LayerParameter.DESCRIPTOR.fields_by_number[147].name == "swish_param"
    assert "147" in Path(plugin.__file__).read_text()


def test_scale_train_field():
    fields = plugin.caffe_message_fields()
    assert fields == {"DropoutParameter.scale_train": ExtraField("bool", 2, default=True)}


def test_installed_and_declared():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-rcnn"}
    blocks = {("roi_pooling_param", 8266711), ("smooth_l1_loss_param", 8266712), ("proposal_param", 1000),
              ("psroi_pooling_param", 10001), *CASCADE.items()}
    assert ours == blocks | {("DropoutParameter.scale_train", 2)}
    assert param_blocks()["roi_pooling_param"].number == 8266711
