"""Hook implementations of caffe-layers-face: its parameter blocks, at the forks' LayerParameter numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# --- happynear/caffe-windows (branch ms, 967eedf2) numbers; none clashes with BVLC or another pack of
# this repository (caffe-layers-ssd's Normalize reads norm_param at 206, SSD's number).
FLIP_NUMBER = 212
NORMALIZE_NUMBER = 214
CHANNEL_SCALE_NUMBER = 237
LABEL_SPECIFIC_ADD_NUMBER = 241
# happynear's InnerProductParameter.normalize (field 7): AM-Softmax's classifier normalises its weight rows.
INNER_PRODUCT_NORMALIZE_NUMBER = 7

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
    from caffe_layers_face import params

    return {
        # happynear's flip_param (212), normalize_param (214), channel_scale_param (237),
        # label_specific_add_param (241).
        "flip_param": ParamBlock(params.FlipParameter, FLIP_NUMBER),
        "normalize_param": ParamBlock(params.NormalizeParameter, NORMALIZE_NUMBER),
        "channel_scale_param": ParamBlock(params.ChannelScaleParameter, CHANNEL_SCALE_NUMBER),
        "label_specific_add_param": ParamBlock(params.LabelSpecificAddParameter, LABEL_SPECIFIC_ADD_NUMBER),
        # MarginInnerProduct (SphereFace)
        "margin_inner_product_param": ParamBlock(params.MarginInnerProductParameter,
                                                 MARGIN_INNER_PRODUCT_NUMBER),
        # CenterLoss (caffe-face)
        "center_loss_param": ParamBlock(params.CenterLossParameter, CENTER_LOSS_NUMBER),
        # CosinAddm and CombinedMargin (arcface-caffe)
        "cosin_add_m_param": ParamBlock(params.CosinAddmParameter, COSIN_ADD_M_NUMBER),
        "combined_margin_param": ParamBlock(params.CombinedMarginParameter, COMBINED_MARGIN_NUMBER),
        # AdaCosAddmScale (arcface-caffe)
        "adacos_add_m_scale_param": ParamBlock(params.AdaCosAddmScaleParameter, ADACOS_ADD_M_SCALE_NUMBER),
    }


@hookimpl
def caffe_fillers() -> dict[str, type]:
    """Filler types the forks add."""
    # happynear's gaussian_unitball (NormFace).
    from caffe_layers_face.gaussian_unitball_filler import GaussianUnitBallFiller

    return {"gaussian_unitball": GaussianUnitBallFiller}


@hookimpl
def caffe_message_fields() -> dict[str, ExtraField]:
    """Fields the forks add to Caffe's own messages."""
    return {
        # happynear's InnerProductParameter.normalize = 7.
        "InnerProductParameter.normalize": ExtraField("bool", INNER_PRODUCT_NORMALIZE_NUMBER, default=False),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters: happynear's five types, NormL2 and CosinAddm (TEST); MarginInnerProduct, CenterLoss,
    CombinedMargin and AdaCosAddmScale refuse, saying why."""
    from caffe_layers_face.onnx_export import happynear, margins

    return {**happynear.CONVERTERS, **margins.CONVERTERS}
