"""ArgMax: golden case, top_k / out_max_val / axis against a reference sort, the tie rule, refusals."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.testing.golden import check_layer_case


def test_golden(golden_case):
    assert check_layer_case(golden_case("argmax")) == []


def reference_order(row: np.ndarray) -> list[int]:
    """Indices sorted by (value, index) descending, as Caffe's std::greater on pairs."""
    return sorted(range(len(row)), key=lambda j: (row[j], j), reverse=True)


def run(make_layer, blob_of, x, param):
    layer = make_layer(f'name: "a" type: "ArgMax" argmax_param {{ {param} }}')
    bottom, top = blob_of(x), Blob()
    layer.setup([bottom], [top])
    layer.forward([bottom], [top])
    return top


@pytest.mark.parametrize("top_k", [1, 3])
@pytest.mark.parametrize("out_max_val", [False, True])
def test_per_instance(make_layer, blob_of, top_k, out_max_val):
    x = np.random.default_rng(5).standard_normal((4, 2, 3)).astype(np.float32)
    top = run(make_layer, blob_of, x, f"top_k: {top_k} out_max_val: {str(out_max_val).lower()}")
    assert top.shape == (4, 2 if out_max_val else 1, top_k)
    for i, row in enumerate(x.reshape(4, -1)):
        order = reference_order(row)[:top_k]
        np.testing.assert_array_equal(top.cpu_data()[i, 0], order)
        if out_max_val:
            np.testing.assert_array_equal(top.cpu_data()[i, 1], row[order])


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("out_max_val", [False, True])
def test_along_axis(make_layer, blob_of, axis, out_max_val):
    x = np.random.default_rng(6).standard_normal((3, 4, 5)).astype(np.float32)
    top = run(make_layer, blob_of, x, f"top_k: 2 axis: {axis} out_max_val: {str(out_max_val).lower()}")
    moved = np.moveaxis(x, axis, -1)
    expected = np.empty(moved.shape[:-1] + (2,), dtype=np.float32)
    for pos in np.ndindex(moved.shape[:-1]):
        order = reference_order(moved[pos])[:2]
        expected[pos] = moved[pos][order] if out_max_val else order
    np.testing.assert_array_equal(top.cpu_data(), np.moveaxis(expected, -1, axis))


def test_ties_go_to_the_larger_index(make_layer, blob_of):
    x = np.array([[1, 3, 3, 0, 3], [2, 2, 1, 1, 0]], dtype=np.float32)
    top = run(make_layer, blob_of, x, "top_k: 3")
    np.testing.assert_array_equal(top.cpu_data().reshape(2, 3), [[4, 2, 1], [1, 0, 3]])


def test_small_blob_padded_to_three_axes(make_layer, blob_of):
    top = run(make_layer, blob_of, np.zeros((2, 6, 1, 1, 1)), "top_k: 1")
    assert top.shape == (2, 1, 1, 1, 1)


@pytest.mark.parametrize(("param", "message"), [("top_k: 0", "top_k"), ("top_k: 7", "top_k"),
                                                ("axis: 1 top_k: 4", "top_k"), ("axis: 3", "axis")])
def test_refusals(make_layer, blob_of, param, message):
    layer = make_layer(f'name: "a" type: "ArgMax" argmax_param {{ {param} }}')
    with pytest.raises(LayerSetupError, match=message):
        layer.setup([blob_of(np.zeros((2, 3, 2)))], [Blob()])


def test_backward_refused(make_layer, blob_of):
    bottom = blob_of(np.zeros((2, 3)))
    top = run(make_layer, blob_of, np.zeros((2, 3)), "top_k: 1")
    layer = make_layer('name: "a" type: "ArgMax"')
    layer.setup([bottom], [top])
    with pytest.raises(LayerSetupError, match="cannot back-propagate"):
        layer.backward([top], [True], [bottom])
