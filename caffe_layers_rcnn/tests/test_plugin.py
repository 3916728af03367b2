"""The plugin's hooks: each block at its fork's LayerParameter number, scale_train at DropoutParameter 2."""

from caffe_core.schema_extensions import ExtraField, installed_additions, param_blocks
from caffe_layers_rcnn import plugin
from caffe_layers_rcnn.params import ProposalParameter, ROIPoolingParameter


def test_blocks_and_numbers():
    blocks = plugin.caffe_param_blocks()
    assert {name: block.number for name, block in blocks.items()} == {
        "roi_pooling_param": 8266711, "smooth_l1_loss_param": 8266712, "proposal_param": 1000,
        "psroi_pooling_param": 10001}
    assert blocks["roi_pooling_param"].message is ROIPoolingParameter
    assert blocks["proposal_param"].message is ProposalParameter


def test_scale_train_field():
    fields = plugin.caffe_message_fields()
    assert fields == {"DropoutParameter.scale_train": ExtraField("bool", 2, default=True)}


def test_installed_and_declared():
    ours = {(a.key, a.number) for a in installed_additions() if a.distribution == "caffe-layers-rcnn"}
    blocks = {("roi_pooling_param", 8266711), ("smooth_l1_loss_param", 8266712), ("proposal_param", 1000),
              ("psroi_pooling_param", 10001)}
    assert ours == blocks | {("DropoutParameter.scale_train", 2)}
    assert param_blocks()["roi_pooling_param"].number == 8266711
