"""DummyData layer: Caffe's golden case, legacy shapes, refilling of random fillers, count errors."""

from __future__ import annotations

import numpy as np
import pytest

from caffe_core.errors import LayerSetupError


def test_golden_case_reproduces_caffe(dt, golden_copy):
    _, cfg = golden_copy("dummydata")
    assert dt.run_case(cfg) == []


def test_legacy_shape_fields_and_one_shared_filler(dt):
    net = dt.net("""layer { name: "d" type: "DummyData" top: "a" top: "b"
        dummy_data_param { data_filler { type: "constant" value: 2 } num: 2 channels: 3 channels: 1
                           height: 4 width: 5 } }""")
    net.forward()
    assert net.blob_by_name("a").shape == (2, 3, 4, 5)
    assert net.blob_by_name("b").shape == (2, 1, 4, 5)
    assert (net.blob_by_name("b").cpu_data() == 2).all()


def test_random_filler_refills_every_forward_constant_does_not(dt):
    net = dt.net("""layer { name: "d" type: "DummyData" top: "a" top: "b"
        dummy_data_param { data_filler { type: "gaussian" } data_filler { type: "constant" value: 1 }
                           shape { dim: 50 } } }""")
    net.forward()
    first = net.blob_by_name("a").cpu_data().copy()
    net.blob_by_name("b").mutable_cpu_data()[...] = 7
    net.forward()
    assert not np.array_equal(first, net.blob_by_name("a").cpu_data())
    assert (net.blob_by_name("b").cpu_data() == 7).all()


def test_wrong_number_of_fillers_is_an_error(dt):
    with pytest.raises(LayerSetupError, match="data_filler must be given 0, 1 or 3"):
        dt.net("""layer { name: "d" type: "DummyData" top: "a" top: "b" top: "c"
            dummy_data_param { data_filler { } data_filler { } shape { dim: 1 } } }""")


def test_shape_and_legacy_fields_together_are_an_error(dt):
    with pytest.raises(LayerSetupError, match="either shape or the legacy"):
        dt.net("""layer { name: "d" type: "DummyData" top: "a"
            dummy_data_param { shape { dim: 1 } num: 1 channels: 1 height: 1 width: 1 } }""")


def test_two_constant_fillers_fill_their_own_tops(dt):
    # DummyDataLayer: filler_id = (fillers_.size() > 1) ? i : 0, so top i gets data_filler i.
    net = dt.net("""layer { name: "d" type: "DummyData" top: "a" top: "b"
        dummy_data_param { data_filler { type: "constant" value: 1 } data_filler { type: "constant" value: 2 }
                           shape { dim: 3 } } }""")
    net.forward()
    assert net.blob_by_name("a").cpu_data().tolist() == [1, 1, 1]
    assert net.blob_by_name("b").cpu_data().tolist() == [2, 2, 2]
