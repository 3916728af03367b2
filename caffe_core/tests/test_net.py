"""Net: running layers forward and backward, from and to, and Caffe's lists of the built graph."""

import numpy as np
import pytest

from .conftest import INPUT, build

pytestmark = pytest.mark.usefixtures("net_test_layers")


def test_split_naming_and_gradient_accumulation():
    text = INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "y" }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" bottom: "y" top: "loss" }
    force_backward: true
    """
    net = build(text)
    assert net.layer_names == ["data", "x_data_0_split", "s", "loss"]
    assert net.blob_names == ["x", "x_data_0_split_0", "x_data_0_split_1", "y", "loss"]
    net.blob_by_name("x").data[...] = 1
    assert net.forward() == pytest.approx(6 + 12)
    net.backward()
    # d loss / d x = 1 (direct) + w (through the scale), summed by the split
    np.testing.assert_array_equal(net.blob_by_name("x").diff, np.full((2, 3), 3.0))
    assert net.layers[2].blobs[0].diff[0] == 6


def test_a_net_of_no_layers_forwards_to_a_zero_loss():
    net = build('name: "empty"')
    assert net.forward() == 0.0
    with pytest.raises(IndexError, match=r"forward range 0\.\.1 is outside the net's 0 layers"):
        net.forward_from_to(0, 1)


def test_reshape_propagates_input_shape():
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    net.blob_by_name("x").reshape((4, 5))
    net.reshape()
    assert net.blob_by_name("y").shape == (4, 5)


def test_forward_backward_callbacks_see_every_layer():
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    seen = []
    net.add_before_forward(lambda i: seen.append(("f", i)))
    net.add_after_backward(lambda i: seen.append(("b", i)))
    net.forward()
    net.backward()
    assert seen == [("f", 0), ("f", 1), ("b", 1), ("b", 0)]


def test_caffes_lists_are_views_of_the_graphs_records():
    net = build(INPUT + """
    layer { name: "s" type: "TestScale" bottom: "x" top: "x" }
    layer { name: "loss" type: "TestSumLoss" bottom: "x" top: "loss" }
    """)
    in_place = net.graph.layers[1]
    assert net.top_id_vecs[1] == net.bottom_id_vecs[1] == in_place.tops == in_place.bottoms == [0]
    assert net.bottom_vecs[1] is in_place.bottom_blobs and net.top_vecs[1][0] is net.blobs[0]
    assert net.bottom_need_backward == [[], [False], [True]]
    assert net.blob_loss_weights == [0.0, 1.0]
    assert net.input_blobs == [net.blob_by_name("x")] and net.output_blobs == [net.blob_by_name("loss")]
    assert net.layer_by_name("s") is in_place.layer
    assert net.params == net.learnable_params == in_place.layer.blobs


def test_ranges_outside_the_net_are_refused():
    net = build(INPUT + 'layer { name: "s" type: "TestScale" bottom: "x" top: "y" }')
    with pytest.raises(IndexError, match=r"forward range 1\.\.0 is outside the net's 2 layers"):
        net.forward_from_to(1, 0)
    with pytest.raises(IndexError, match=r"backward range 0\.\.1 is outside the net's 2 layers"):
        net.backward_from_to(0, 1)
