"""The pack's parameter messages, field for field those of the forks' caffe.proto files."""

from caffe_core.messages import Field, Message, build_messages

# caffe-fast-rcnn (branch faster-rcnn): LayerParameter.roi_pooling_param = 8266711. Field 4, pad_ratio, is
# zhaoweicai/cascade-rcnn's (which keeps the block at 147, BVLC's swish_param: see plugin.py).
ROI_POOLING = Message("ROIPoolingParameter", [
    Field("pooled_h", "uint32", 1, default=0),
    Field("pooled_w", "uint32", 2, default=0),
    Field("spatial_scale", "float", 3, default=1.0),
    Field("pad_ratio", "float", 4, default=0.0),
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

# zhaoweicai/cascade-rcnn (2252f46): LayerParameter.bbox_reg_param = 150 (BoxGroupOutput and DecodeBBox).
BBOX_REG = Message("BBoxRegParameter", [
    Field("bbox_mean", "float", 1, repeated=True),
    Field("bbox_std", "float", 2, repeated=True),
    Field("cls_aware", "bool", 3, default=True),
])

# cascade-rcnn: one group of BoxGroupOutput's anchors (a (field_w, field_h) pair each) and its stride.
BOX_GROUP = Message("BoxGroupParameter", [
    Field("field_h", "uint32", 1, repeated=True),
    Field("field_w", "uint32", 2, repeated=True),
    Field("stride", "uint32", 3),
])

# cascade-rcnn: LayerParameter.box_group_output_param = 158.
BOX_GROUP_OUTPUT = Message("BoxGroupOutputParameter", [
    Field("fg_thr", "float", 1, default=0.0),
    Field("iou_thr", "float", 2, default=0.5),
    Field("nms_type", "string", 3, default="IOU"),
    Field("box_group_param", BOX_GROUP, 4, repeated=True),
    Field("field_whr", "float", 5, default=2.0),
    Field("field_xyr", "float", 6, default=2.0),
    Field("max_nms_num", "uint32", 7, default=0),
    Field("max_post_nms_num", "uint32", 8, default=0),
    Field("min_size", "float", 9, default=15.0),
])

# cascade-rcnn: LayerParameter.scale_route_param = 154. No defaults: whether a bound is set matters.
SCALE_ROUTE = Message("ScaleRouteParameter", [
    Field("low_scale", "float", 1),
    Field("high_scale", "float", 2),
])

# cascade-rcnn: LayerParameter.decode_bbox_param = 155.
DECODE_BBOX = Message("DecodeBBoxParameter", [
    Field("gt_iou_thr", "float", 1, default=0.95),
])

_classes = build_messages("caffe_layers_rcnn", [ROI_POOLING, SMOOTH_L1_LOSS, PROPOSAL, PSROI_POOLING,
                                                BBOX_REG, BOX_GROUP, BOX_GROUP_OUTPUT, SCALE_ROUTE,
                                                DECODE_BBOX])
ROIPoolingParameter = _classes["ROIPoolingParameter"]
SmoothL1LossParameter = _classes["SmoothL1LossParameter"]
ProposalParameter = _classes["ProposalParameter"]
PSROIPoolingParameter = _classes["PSROIPoolingParameter"]
BBoxRegParameter = _classes["BBoxRegParameter"]
BoxGroupParameter = _classes["BoxGroupParameter"]
BoxGroupOutputParameter = _classes["BoxGroupOutputParameter"]
ScaleRouteParameter = _classes["ScaleRouteParameter"]
DecodeBBoxParameter = _classes["DecodeBBoxParameter"]
