"""The pack's messages carry exactly the forks' field names, numbers, types and defaults."""

import pytest
from google.protobuf import descriptor

from caffe_layers_rcnn.params import (
    ProposalParameter,
    PSROIPoolingParameter,
    ROIPoolingParameter,
    SmoothL1LossParameter,
)

F = descriptor.FieldDescriptor
EXPECTED = {
    ROIPoolingParameter: [("pooled_h", 1, F.TYPE_UINT32, 0), ("pooled_w", 2, F.TYPE_UINT32, 0),
                          ("spatial_scale", 3, F.TYPE_FLOAT, 1.0)],
    SmoothL1LossParameter: [("sigma", 1, F.TYPE_FLOAT, 1.0)],
    ProposalParameter: [("feat_stride", 1, F.TYPE_UINT32, 16), ("base_size", 2, F.TYPE_UINT32, 16),
                        ("min_size", 3, F.TYPE_UINT32, 16), ("ratio", 4, F.TYPE_FLOAT, []),
                        ("scale", 5, F.TYPE_FLOAT, []), ("pre_nms_topn", 6, F.TYPE_UINT32, 6000),
                        ("post_nms_topn", 7, F.TYPE_UINT32, 300), ("nms_thresh", 8, F.TYPE_FLOAT, 0.7)],
    PSROIPoolingParameter: [("spatial_scale", 1, F.TYPE_FLOAT, 0.0), ("output_dim", 2, F.TYPE_INT32, 0),
                            ("group_size", 3, F.TYPE_INT32, 0)],
}


@pytest.mark.parametrize("message", EXPECTED, ids=lambda m: m.DESCRIPTOR.name)
def test_fields_are_the_forks(message):
    fields = message.DESCRIPTOR.fields
    assert [(f.name, f.number, f.type) for f in fields] == [e[:3] for e in EXPECTED[message]]
    for field, (_, _, _, default) in zip(fields, EXPECTED[message], strict=True):
        assert field.default_value == pytest.approx(default)


def test_only_ratio_and_scale_are_repeated():
    repeated = [f.name for m in EXPECTED for f in m.DESCRIPTOR.fields if f.is_repeated]
    assert repeated == ["ratio", "scale"]
