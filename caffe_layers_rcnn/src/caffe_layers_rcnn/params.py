"""The pack's parameter messages, field for field those of the forks' caffe.proto files."""

from caffe_core.messages import Field, Message, build_messages

# caffe-fast-rcnn (branch faster-rcnn): LayerParameter.roi_pooling_param = 8266711.
ROI_POOLING = Message("ROIPoolingParameter", [
    Field("pooled_h", "uint32", 1, default=0),
    Field("pooled_w", "uint32", 2, default=0),
    Field("spatial_scale", "float", 3, default=1.0),
])

# caffe-fast-rcnn (branch faster-rcnn): LayerParameter.smooth_l1_loss_param = 8266712.
SMOOTH_L1_LOSS = Message("SmoothL1LossParameter", [
    Field("sigma", "float", 1, default=1.0),
])

# inisis/caffe: LayerParameter.proposal_param = 1000.
PROPOSAL = Message("ProposalParameter", [
    Field("feat_stride", "uint32", 1, default=16),
    Field("base_size", "uint32", 2, default=16),
    Field("min_size", "uint32", 3, default=16),
    Field("ratio", "float", 4, repeated=True),
    Field("scale", "float", 5, repeated=True),
    Field("pre_nms_topn", "uint32", 6, default=6000),
    Field("post_nms_topn", "uint32", 7, default=300),
    Field("nms_thresh", "float", 8, default=0.7),
])

# R-FCN's caffe (daijifeng001/caffe-rfcn): LayerParameter.psroi_pooling_param = 10001. The fork declares
# all three fields `required`; they are optional here and PSROIPoolingLayer refuses a missing one.
PSROI_POOLING = Message("PSROIPoolingParameter", [
    Field("spatial_scale", "float", 1),
    Field("output_dim", "int32", 2),
    Field("group_size", "int32", 3),
])

_classes = build_messages("caffe_layers_rcnn", [ROI_POOLING, SMOOTH_L1_LOSS, PROPOSAL, PSROI_POOLING])
ROIPoolingParameter = _classes["ROIPoolingParameter"]
SmoothL1LossParameter = _classes["SmoothL1LossParameter"]
ProposalParameter = _classes["ProposalParameter"]
PSROIPoolingParameter = _classes["PSROIPoolingParameter"]
