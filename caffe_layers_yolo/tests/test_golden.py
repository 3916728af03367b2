"""Golden cases computed with eric612/MobileNet-YOLO's Caffe (69b4441c, CPU_ONLY build; Chen's Mish compiled
into it): forward of every type, and Upsample's backward. Reorg and Mish are forward-only cases because the
fork's backward is wrong (zeros; the slope at y): see each case's notes and the README's deviations. The
Region cases come from darknet's own forward_region_layer (pjreddie/darknet f6afaabc), which no Caffe runs."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = ["mish", "reorg_stride2", "reorg_stride2_reverse", "region_logistic_classes", "region_yolov2_softmax",
         "yolo_detection_output_1bottom",
         "yolo_detection_output_2bottoms", "yolov3_detection_output_batch2",
         "yolov3_detection_output_darknet3", "yolov3_detection_output_lite", "yolov3_detection_output_none"]


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []


@pytest.mark.requires_layer_types("Upsample")
def test_golden_yolo_upsample_through_the_seg_pack(golden_case):
    # eric612's Upsample (forward and backward) as caffe-layers-seg's Upsample[nearest] computes it.
    assert check_layer_case(golden_case("upsample_scale2")) == []
