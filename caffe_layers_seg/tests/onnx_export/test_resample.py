"""ONNX export of the resampling layers (Upsample[nearest], Interp, BilinearInterpolate, Resize, PixelShuffle,
Pad): onnxruntime gives the layers' own outputs."""

import pytest

from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import (
    assert_onnx_matches,
    layer_text,
    newest_opset,
    one_layer_net,
    op_types,
    require_onnx,
)

require_onnx()

from caffe_core import onnx_export

NEWEST = newest_opset()


def _net(layer_type, params, shape=(2, 3, 5, 4)):
    return one_layer_net(layer_text(layer_type, params), {"data": shape}, 4)


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize(("params", "shape"), [
    ("upsample_param { scale: 2 }", (2, 3, 5, 4)),
    ("upsample_param { scale: 3 }", (1, 2, 3, 4)),
    ("upsample_param { scale: 3 dims_num: 3 }", (2, 3, 5)),
    ("", (2, 3, 5, 4)),
])
def test_upsample_nearest(params, shape, opset):
    model = assert_onnx_matches(_net("Upsample", params, shape), opset)
    assert op_types(model) == ["Resize" if "scale" in params else "Identity"]


@pytest.mark.parametrize("params", [
    "zoom_factor: 2",
    "zoom_factor: 3",
    "shrink_factor: 2",
    "shrink_factor: 3 zoom_factor: 2",
    "height: 7 width: 9",
    "height: 3 width: 2",
    "height: 1 width: 1",
    "zoom_factor: 2 pad_beg: -1 pad_end: -1",
    "shrink_factor: 2 pad_beg: 0 pad_end: -2",
    "zoom_factor: 1 pad_beg: -1",
    "zoom_factor: 1",
])
def test_interp(params):
    model = assert_onnx_matches(_net("Interp", f"interp_param {{ {params} }}", (2, 3, 6, 5)))
    same_size = "zoom_factor: 1" in params
    assert op_types(model)[-1] == ("Identity" if same_size else "Resize")
    assert ("Slice" in op_types(model)) == ("pad_" in params)


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize("params", [
    "dst_h: 9 dst_w: 7",
    "dst_h: 9 dst_w: 7 align_corners: false",
    "dst_h: 3 dst_w: 2 align_corners: false",
    "dst_h: 2 dst_w: 3",
    "dst_h: 11",
    "scale_factor: 1.7",
    "scale_factor: 0.5 align_corners: false",
    "scale_factor: 2.5 align_corners: false",
])
def test_bilinear_interpolate(params, opset):
    assert_onnx_matches(_net("BilinearInterpolate", f"bilinear_interpolate_param {{ {params} }}"), opset)


@pytest.mark.parametrize(("params", "muls"), [
    ("height: 10 width: 8", 2),
    ("height: 11 width: 4", 1),
    ("height: 3 width: 2", 0),
    ("height: 5 width: 4", 0),
    ("height: 7 width: 3", 1),
    ("is_pyramid_test: true out_height_scale: 1.5 out_width_scale: 0.75", 1),
])
def test_resize(params, muls):
    model = assert_onnx_matches(_net("Resize", f"resize_param {{ {params} }}"))
    assert op_types(model) == ["Resize"] + ["Mul"] * muls


def test_resize_of_a_single_row():
    assert_onnx_matches(_net("Resize", "resize_param { height: 4 width: 6 }", (1, 2, 1, 3)))


@pytest.mark.parametrize(("factor", "channels", "ops"), [
    (2, 8, ["DepthToSpace"]),
    (3, 18, ["DepthToSpace"]),
    (2, 10, ["Slice", "DepthToSpace"]),
    (1, 3, ["DepthToSpace"]),
])
def test_pixel_shuffle(factor, channels, ops):
    net = _net("PixelShuffle", f"pixelshuffle_param {{ upscale_factor: {factor} }}", (2, channels, 3, 4))
    model = assert_onnx_matches(net)
    assert op_types(model) == ops
    assert next(a.s for a in model.graph.node[-1].attribute if a.name == "mode") == b"CRD"


def test_pixel_shuffle_with_no_output_channel_is_refused():
    net = _net("PixelShuffle", "pixelshuffle_param { upscale_factor: 2 }", (1, 2, 3, 3))
    with pytest.raises(OnnxExportError, match="fewer than upscale_factor"):
        onnx_export.to_model(net)


@pytest.mark.parametrize("opset", [13, NEWEST])
@pytest.mark.parametrize(("params", "op"), [
    ("pad_u: 1 pad_d: 2 pad_l: 0 pad_r: 3", "Pad"),
    ("pad_u: 1 pad_d: 2 pad_l: 3 pad_r: 1 pad_value: -0.5", "Pad"),
    ("pad_type: REPLICATE pad_u: 3 pad_d: 1 pad_l: 2 pad_r: 5", "Pad"),
    ("pad_type: REFLECT pad_u: 2 pad_d: 3 pad_l: 1 pad_r: 3", "Pad"),
    # inisis reflects from the output, so pads past the input size reflect the other pad.
    ("pad_type: REFLECT pad_u: 3 pad_d: 6 pad_l: 2 pad_r: 1", "Gather"),
    ("pad_u: -1 pad_d: -2 pad_l: -1 pad_r: -1", "Slice"),
    ("pad_type: REFLECT", "Identity"),
])
def test_pad(params, op, opset):
    model = assert_onnx_matches(_net("Pad", f"pad_param {{ {params} }}"), opset)
    assert op_types(model)[-1] == op
