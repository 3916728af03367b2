"""The plugin's hooks: the SSD blocks at 200-207 and the TransformationParameter fields, as installed."""

from caffe_core.schema_extensions import ExtraField, ParamBlock, installed_additions
from caffe_layers_ssd import params, plugin


def test_blocks_take_the_ssd_numbers():
    blocks = plugin.caffe_param_blocks()
    assert all(isinstance(block, ParamBlock) for block in blocks.values())
    assert {name: block.number for name, block in blocks.items()} == {
        "annotated_data_param": 200, "multibox_loss_param": 201, "permute_param": 202, "prior_box_param": 203,
        "detection_output_param": 204, "detection_evaluate_param": 205, "norm_param": 206,
        "video_data_param": 207,
    }
    assert blocks["prior_box_param"].message is params.PriorBoxParameter


def test_transformation_fields():
    fields = plugin.caffe_message_fields()
    assert all(isinstance(field, ExtraField) for field in fields.values())
    assert {key: field.number for key, field in fields.items()} == {
        "TransformationParameter.resize_param": 8, "TransformationParameter.noise_param": 9,
        "TransformationParameter.emit_constraint": 10, "TransformationParameter.distort_param": 13,
        "TransformationParameter.expand_param": 14,
    }
    assert fields["TransformationParameter.resize_param"].type is params.ResizeParameter


def test_installed_distribution_declares_them():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-ssd"}
    assert ("prior_box_param", 203) in ours
    assert ("TransformationParameter.expand_param", 14) in ours
    assert len(ours) == 13
