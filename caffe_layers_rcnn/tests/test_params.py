"""The pack's messages carry exactly the forks' field names, numbers, types and defaults."""

import pytest
from google.protobuf import descriptor

from caffe_layers_rcnn.params import (
    BBoxRegParameter,
    BoxGroupOutputParameter,
    BoxGroupParameter,
    DecodeBBoxParameter,
    ProposalParameter,
    PSROIPoolingParameter,
    ROIPoolingParameter,
    ScaleRouteParameter,
    SmoothL1LossParameter,
)

F = descriptor.FieldDescriptor
EXPECTED = {
    ROIPoolingParameter: [("pooled_h", 1, F.TYPE_UINT32, 0), ("pooled_w", 2, F.TYPE_UINT32, 0),
                          ("spatial_scale", 3, F.TYPE_FLOAT, 1.0), ("pad_ratio", 4, F.TYPE_FLOAT, 0.0)],
    SmoothL1LossParameter: [("sigma", 1, F.TYPE_FLOAT, 1.0)],
    ProposalParameter: [("feat_stride", 1, F.TYPE_UINT32, 16), ("base_size", 2, F.TYPE_UINT32, 16),
                        ("min_size", 3, F.TYPE_UINT32, 16), ("ratio", 4, F.TYPE_FLOAT, []),
                        ("scale", 5, F.TYPE_FLOAT, []), ("pre_nms_topn", 6, F.TYPE_UINT32, 6000),
                        ("post_nms_topn", 7, F.TYPE_UINT32, 300), ("nms_thresh", 8, F.TYPE_FLOAT, 0.7)],
    PSROIPoolingParameter: [("spatial_scale", 1, F.TYPE_FLOAT, 0.0), ("output_dim", 2, F.TYPE_INT32, 0),
                            ("group_size", 3, F.TYPE_INT32, 0)],
    # zhaoweicai/cascade-rcnn at 2252f46
    BBoxRegParameter: [("bbox_mean", 1, F.TYPE_FLOAT, []), ("bbox_std", 2, F.TYPE_FLOAT, []),
                       ("cls_aware", 3, F.TYPE_BOOL, True)],
    BoxGroupParameter: [("field_h", 1, F.TYPE_UINT32, []), ("field_w", 2, F.TYPE_UINT32, []),
                        ("stride", 3, F.TYPE_UINT32, 0)],
    BoxGroupOutputParameter: [("fg_thr", 1, F.TYPE_FLOAT, 0.0), ("iou_thr", 2, F.TYPE_FLOAT, 0.5),
                              ("nms_type", 3, F.TYPE_STRING, "IOU"),
                              ("box_group_param", 4, F.TYPE_MESSAGE, []),
                              ("field_whr", 5, F.TYPE_FLOAT, 2.0), ("field_xyr", 6, F.TYPE_FLOAT, 2.0),
                              ("max_nms_num", 7, F.TYPE_UINT32, 0), ("max_post_nms_num", 8, F.TYPE_UINT32, 0),
                              ("min_size", 9, F.TYPE_FLOAT, 15.0)],
    ScaleRouteParameter: [("low_scale", 1, F.TYPE_FLOAT, 0.0), ("high_scale", 2, F.TYPE_FLOAT, 0.0)],
    DecodeBBoxParameter: [("gt_iou_thr", 1, F.TYPE_FLOAT, 0.95)],
}


@pytest.mark.parametrize("message", EXPECTED, ids=lambda m: m.DESCRIPTOR.name)
def test_fields_are_the_forks(message):
    fields = message.DESCRIPTOR.fields
    assert [(f.name, f.number, f.type) for f in fields] == [e[:3] for e in EXPECTED[message]]
    for field, (_, _, _, default) in zip(fields, EXPECTED[message], strict=True):
        if isinstance(default, str):
            assert field.default_value == default
        else:
            assert field.default_value == pytest.approx(default)


def test_only_the_forks_lists_are_repeated():
    repeated = [f.name for m in EXPECTED for f in m.DESCRIPTOR.fields if f.is_repeated]
    assert repeated == ["ratio", "scale", "bbox_mean", "bbox_std", "field_h", "field_w", "box_group_param"]


def test_scale_route_bounds_have_presence():
    # The fork's ScaleRoute reads has_low_scale/has_high_scale: an unset bound is no bound.
    param = ScaleRouteParameter(high_scale=112)
    assert param.HasField("high_scale") and not param.HasField("low_scale")
