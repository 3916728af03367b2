"""Golden cases of the pack's layers (each case.json says where its numbers come from).

MarginInnerProduct, CenterLoss, CosinAddm, CombinedMargin: hand-derived, the forks' Forward_cpu/Backward_cpu
transcribed loop by loop (wy1iu/sphereface, ydwen/caffe-face, xialuxi/arcface-caffe)."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = [
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
