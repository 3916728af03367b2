"""Golden cases of the pack's layers, hand-derived (each case.json says from what): float32 loop-by-loop
transcriptions of the forks' Forward_cpu/Backward_cpu (happynear/caffe-windows@967eedf2, wy1iu/sphereface,
ydwen/caffe-face, xialuxi/arcface-caffe), whose own Caffes were not built here."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = [
    # happynear (NormFace, AM-Softmax)
    "normalize_l2_bp_norm", "normalize_l1", "flip_width_height", "label_specific_add_am", "channel_scale",
    # MarginInnerProduct (SphereFace)
    "margin_inner_product_single", "margin_inner_product_double", "margin_inner_product_triple",
    "margin_inner_product_quadruple",
    # CenterLoss (caffe-face)
    "center_loss",
    # CosinAddm and CombinedMargin (arcface-caffe)
    "cosin_add_m_train", "combined_margin",
    # AdaCosAddmScale and NormL2 (arcface-caffe)
    "adacos_add_m_scale", "norm_l2",
]


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []
