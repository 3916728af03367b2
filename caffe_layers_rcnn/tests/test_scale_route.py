"""ScaleRoute against zhaoweicai/cascade-rcnn's golden case and hand-derived routes, fallback included."""

import numpy as np
import pytest

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.golden import check_layer_case
from caffe_core.testing.wire import wire_fields

# Scales sqrt((x2 - x1 + 1)(y2 - y1 + 1)): 10, 0 (inverted), sqrt(301 * 201) ~ 246, 42.7..., 1, 256.
ROIS = np.array([[0, 0, 0, 9, 9], [0, 5, 5, 4, 4], [1, 0, 0, 300, 200], [0, 3, 3, 40, 50], [1, 2, 2, 2, 2],
                 [0, 0, 0, 255, 255]], dtype=np.float32)


def layer_text(params, bottoms=1, extra=""):
    names = "".join(f' bottom: "b{k}" top: "t{k}"' for k in range(bottoms))
    return f'name: "route" type: "ScaleRoute"{names} scale_route_param {{ {params} }} {extra}'


def route(make_layer, blob_of, params, *arrays):
    layer = make_layer(layer_text(params, len(arrays)), phase=caffe_pb2.TEST)
    bottom, top = [blob_of(a) for a in arrays], [Blob() for _ in arrays]
    layer.setup(bottom, top)
    assert [t.shape[0] for t in top] == [1] * len(arrays)  # the fork's placeholder rows until forward
    layer.forward(bottom, top)
    return top


def test_golden(golden_case):
    # Five routes of the same rois and a per-roi blob: the FPN deploys' four and an empty range's fallback.
    assert check_layer_case(golden_case("cascade_scale_route")) == []


@pytest.mark.parametrize(("params", "rows"), [
    ("high_scale: 11", [0, 1, 4]),               # [0, 11): the inverted roi (scale 0) too
    ("low_scale: 10 high_scale: 43", [0, 3]),    # low inclusive, high exclusive
    ("low_scale: 246", [5]),                     # 245.97 is below
    ("low_scale: 245", [2, 5]),
    ("", [0, 1, 2, 3, 4, 5]),                    # no bounds: [0, FLT_MAX)
    ("low_scale: 60 high_scale: 70", [3]),       # empty: closest to sqrt(4200) ~ 64.8 in log2, 42.7
    ("low_scale: 1000", [5]),                    # empty: closest to 1000 is 256
    ("low_scale: 0.2 high_scale: 0.5", [4]),     # empty: closest to 0.32 is 1 (never the inverted roi's 0)
])
def test_routes(make_layer, blob_of, params, rows):
    top = route(make_layer, blob_of, params, ROIS)
    assert top[0].shape == (len(rows), 5, 1, 1)
    np.testing.assert_array_equal(top[0].cpu_data().reshape(-1, 5), ROIS[rows])


def test_other_bottoms_follow_the_rois(make_layer, blob_of):
    features = np.arange(6 * 3 * 2 * 2, dtype=np.float32).reshape(6, 3, 2, 2)
    labels = np.arange(6, dtype=np.float32).reshape(6, 1)
    top = route(make_layer, blob_of, "low_scale: 245", ROIS, features, labels)
    assert [t.shape for t in top] == [(2, 5, 1, 1), (2, 3, 2, 2), (2, 1, 1, 1)]
    np.testing.assert_array_equal(top[1].cpu_data(), features[[2, 5]])
    np.testing.assert_array_equal(top[2].cpu_data().ravel(), [2, 5])


def test_no_rois_is_an_error(make_layer, blob_of):
    with pytest.raises(ValueError, match=r"route.*ScaleRoute.*no rois"):
        route(make_layer, blob_of, "", np.zeros((0, 5), np.float32))


def test_only_inverted_rois_and_an_empty_range_is_an_error(make_layer, blob_of):
    with pytest.raises(ValueError, match=r"route.*ScaleRoute.*none with a finite scale"):
        route(make_layer, blob_of, "low_scale: 5", np.array([[0, 5, 5, 1, 1]], np.float32))


@pytest.mark.parametrize(("text", "arrays", "words"), [
    (layer_text("low_scale: 0"), [(3, 5)], r"low_scale must be > 0"),
    (layer_text("low_scale: 10 high_scale: 5"), [(3, 5)],
     r"high_scale \(5.0\) must be >= low_scale \(10.0\)"),
    (layer_text("", extra="propagate_down: true"), [(3, 5)], r"propagate_down must be false"),
    (layer_text(""), [(3, 4)], r"bottom 0 \(rois\) must be \(R, 5\)"),
    (layer_text("", bottoms=2), [(3, 5), (2, 7)], r"bottom 1 has 2 rows, bottom 0 \(rois\) 3"),
])
def test_bad_input_is_refused_naming_the_layer(make_layer, blob_of, text, arrays, words):
    layer = make_layer(text, phase=caffe_pb2.TEST)
    with pytest.raises(LayerSetupError, match=r"route.*ScaleRoute.*" + words):
        layer.setup([blob_of(np.zeros(shape, np.float32)) for shape in arrays], [Blob() for _ in arrays])


def test_tops_must_match_bottoms(make_layer, blob_of):
    text = 'name: "route" type: "ScaleRoute" bottom: "a" bottom: "b" top: "c" scale_route_param { }'
    with pytest.raises(LayerSetupError, match=r"route"):
        make_layer(text).setup([blob_of(np.zeros((2, 5))), blob_of(np.zeros((2, 3)))], [Blob()])


def test_force_backward_never_reaches_it(make_layer):
    assert not make_layer(layer_text("")).allow_force_backward(0)


def test_block_is_at_the_forks_number():
    param = parse_text(layer_text("low_scale: 112 high_scale: 224"), caffe_pb2.LayerParameter())
    assert set(wire_fields(wire_fields(param.SerializeToString())[154][0])) == {1, 2}
