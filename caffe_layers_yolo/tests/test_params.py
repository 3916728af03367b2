"""The pack's messages carry exactly eric612's field names, numbers, types and defaults."""

import pytest
from google.protobuf import descriptor

from caffe_layers_yolo.params import (
    ReorgParameter,
    YoloDetectionOutputParameter,
    Yolov3DetectionOutputParameter,
)

F = descriptor.FieldDescriptor
EXPECTED = {
    ReorgParameter: [("stride", 1, F.TYPE_UINT32, 0), ("reverse", 2, F.TYPE_BOOL, False)],
    YoloDetectionOutputParameter: [
        ("side", 1, F.TYPE_UINT32, 13), ("num_classes", 2, F.TYPE_UINT32, 20),
        ("num_box", 3, F.TYPE_UINT32, 5),
        ("coords", 4, F.TYPE_UINT32, 4), ("confidence_threshold", 5, F.TYPE_FLOAT, 0.01),
        ("nms_threshold", 6, F.TYPE_FLOAT, 0.45), ("biases", 7, F.TYPE_FLOAT, []),
        ("label_map_file", 8, F.TYPE_STRING, "")],
    Yolov3DetectionOutputParameter: [
        ("num_classes", 1, F.TYPE_UINT32, 20), ("num_box", 2, F.TYPE_UINT32, 3),
        ("confidence_threshold", 3, F.TYPE_FLOAT, 0.01), ("nms_threshold", 4, F.TYPE_FLOAT, 0.45),
        ("biases", 5, F.TYPE_FLOAT, []), ("anchors_scale", 6, F.TYPE_UINT32, []),
        ("mask_group_num", 7, F.TYPE_UINT32, 2), ("mask", 8, F.TYPE_UINT32, []),
        ("gaussian_box", 9, F.TYPE_BOOL, False)],
}


@pytest.mark.parametrize("message", EXPECTED, ids=lambda m: m.DESCRIPTOR.name)
def test_fields_are_the_forks(message):
    fields = message.DESCRIPTOR.fields
    assert [(f.name, f.number, f.type) for f in fields] == [e[:3] for e in EXPECTED[message]]
    for field, (_, _, _, default) in zip(fields, EXPECTED[message], strict=True):
        assert field.default_value == pytest.approx(default) if not isinstance(default, str) else \
            field.default_value == default


def test_repeated_fields():
    repeated = {(m.DESCRIPTOR.name, f.name) for m in EXPECTED for f in m.DESCRIPTOR.fields if f.is_repeated}
    assert repeated == {("YoloDetectionOutputParameter", "biases"),
                        ("Yolov3DetectionOutputParameter", "biases"),
                        ("Yolov3DetectionOutputParameter", "anchors_scale"),
                        ("Yolov3DetectionOutputParameter", "mask")}
