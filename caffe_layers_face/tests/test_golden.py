"""Golden cases of the pack's layers (each case.json says where its numbers come from): happynear's,
MarginInnerProduct's and CenterLoss's were computed by happynear/caffe-windows', wy1iu/sphereface's and
ydwen/caffe-face's own Caffes (CPU builds, pycaffe); arcface-caffe's are hand-derived, float32 loop-by-loop
transcriptions of the fork's Forward_cpu/Backward_cpu (xialuxi/arcface-caffe@30ba26ad, whose layers are files
to add to a Caffe, not a Caffe of its own)."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = [
    # happynear (NormFace, AM-Softmax)
    "normalize_l2_bp_norm", "normalize_l1", "flip_width_height", "label_specific_add_am", "channel_scale",
    "inner_product_happynear_normalize",
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
