"""The core's Split layer against Caffe's golden split case (bottom diff = sum of the top diffs)."""

from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case):
    assert check_layer_case(golden_case("split")) == []
