"""Golden cases hand-derived from happynear/caffe-windows@967eedf2 (branch ms): float32 loop-by-loop
transcriptions of each layer's Forward_cpu/Backward_cpu (the fork's own Caffe was not built in time); each
case.json says what it pins."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = ["normalize_l2_bp_norm", "normalize_l1", "flip_width_height", "label_specific_add_am",
         "channel_scale"]


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []
