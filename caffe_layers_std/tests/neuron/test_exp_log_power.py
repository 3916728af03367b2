"""The Exp, Log and Power helpers: shift + scale x (skipping the identity steps) and ln(base)."""

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError
from caffe_layers_std.neuron.exp_log_power import log_of_base, scale_and_shift


@pytest.mark.parametrize(("scale", "shift", "expected"), [
    (1, 0, [1, -2]), (3, 0, [3, -6]), (1, 0.5, [1.5, -1.5]), (-2, 1, [-1, 5]),
])
def test_scale_and_shift(scale, shift, expected):
    x = np.array([1, -2], dtype=np.float32)
    np.testing.assert_array_equal(scale_and_shift(x, scale, shift), expected)


def test_scale_and_shift_of_one_and_zero_is_the_input_itself():
    x = np.ones(3, dtype=np.float32)
    assert scale_and_shift(x, 1, 0) is x


@pytest.mark.parametrize(("base", "expected"), [(-1, 1.0), (np.e, 1.0), (2, np.log(2)), (0.5, np.log(0.5))])
def test_log_of_base(make_layer, base, expected):
    assert log_of_base(make_layer('name: "e" type: "Exp"'), base, "exp_param.base") == pytest.approx(expected)


@pytest.mark.parametrize("base", [0, -2, -0.5])
def test_log_of_base_refuses_a_base_that_is_not_positive(make_layer, base):
    layer = make_layer('name: "e" type: "Exp"')
    with pytest.raises(LayerSetupError, match=r"'e'.*exp_param.base must be strictly positive \(or -1"):
        log_of_base(layer, base, "exp_param.base")
