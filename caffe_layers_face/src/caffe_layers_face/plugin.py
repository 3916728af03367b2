"""Hook implementations of caffe-layers-face: its parameter blocks, at the forks' LayerParameter numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# --- MarginInnerProduct (SphereFace) and CenterLoss (caffe-face) ---
# wy1iu/sphereface's caffe stores margin_inner_product_param at 147, and ydwen/caffe-face stores
# center_loss_param at 147 too; BVLC's own schema now gives 147 to swish_param (and 148 to clip_param), so
# neither fork's number can be taken. Both blocks take numbers of this pack's own (the fork's 147 with a
# thousands digit). A fork's .caffemodel keeps its block at 147, where it is read as BVLC's swish_param
# (its fields unknown there) and so ignored: the weights (the layer's blobs) load all the same, and the
# settings come from the net's prototxt, which names the block as text.
MARGIN_INNER_PRODUCT_NUMBER = 1147  # sphereface's 147 is BVLC's swish_param
CENTER_LOSS_NUMBER = 2147  # caffe-face's 147 is BVLC's swish_param
# --- CosinAddm and CombinedMargin (arcface-caffe): xialuxi/arcface-caffe's own numbers ---
COSIN_ADD_M_NUMBER = 179
COMBINED_MARGIN_NUMBER = 156
# --- AdaCosAddmScale (arcface-caffe's AdaCos/proto): its own number ---
ADACOS_ADD_M_SCALE_NUMBER = 211


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The forks' parameter blocks this pack reads."""
    from caffe_layers_face.params import (
        AdaCosAddmScaleParameter,
        CenterLossParameter,
        CombinedMarginParameter,
        CosinAddmParameter,
        MarginInnerProductParameter,
    )

    return {
        # MarginInnerProduct (SphereFace)
        "margin_inner_product_param": ParamBlock(MarginInnerProductParameter, MARGIN_INNER_PRODUCT_NUMBER),
        # CenterLoss (caffe-face)
        "center_loss_param": ParamBlock(CenterLossParameter, CENTER_LOSS_NUMBER),
        # CosinAddm and CombinedMargin (arcface-caffe)
        "cosin_add_m_param": ParamBlock(CosinAddmParameter, COSIN_ADD_M_NUMBER),
        "combined_margin_param": ParamBlock(CombinedMarginParameter, COMBINED_MARGIN_NUMBER),
        # AdaCosAddmScale (arcface-caffe)
        "adacos_add_m_scale_param": ParamBlock(AdaCosAddmScaleParameter, ADACOS_ADD_M_SCALE_NUMBER),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters: NormL2, CosinAddm (TEST); MarginInnerProduct, CenterLoss, CombinedMargin and
    AdaCosAddmScale refuse, saying why."""
    from caffe_layers_face.onnx_export import margins

    return {**margins.CONVERTERS}
