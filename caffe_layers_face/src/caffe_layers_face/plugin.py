"""Hook implementations of caffe-layers-face: its parameter blocks, at the forks' LayerParameter numbers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# --- face_a: happynear/caffe-windows (branch ms, 967eedf2) numbers; none clashes with BVLC or another pack of
# this repository (caffe-layers-ssd's Normalize reads norm_param at 206, SSD's number).
FLIP_NUMBER = 212
NORMALIZE_NUMBER = 214
CHANNEL_SCALE_NUMBER = 237
LABEL_SPECIFIC_ADD_NUMBER = 241
# happynear's InnerProductParameter.normalize (field 7): AM-Softmax's classifier normalises its weight rows.
INNER_PRODUCT_NORMALIZE_NUMBER = 7
# --- end face_a


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The forks' parameter blocks this pack reads."""
    from caffe_layers_face import params

    return {
        # --- face_a: happynear's flip_param (212), normalize_param (214), channel_scale_param (237),
        # label_specific_add_param (241).
        "flip_param": ParamBlock(params.FlipParameter, FLIP_NUMBER),
        "normalize_param": ParamBlock(params.NormalizeParameter, NORMALIZE_NUMBER),
        "channel_scale_param": ParamBlock(params.ChannelScaleParameter, CHANNEL_SCALE_NUMBER),
        "label_specific_add_param": ParamBlock(params.LabelSpecificAddParameter, LABEL_SPECIFIC_ADD_NUMBER),
        # --- end face_a
    }


@hookimpl
def caffe_fillers() -> dict[str, type]:
    """Filler types the forks add."""
    # --- face_a: happynear's gaussian_unitball (NormFace).
    from caffe_layers_face.gaussian_unitball_filler import GaussianUnitBallFiller

    fillers: dict[str, type] = {"gaussian_unitball": GaussianUnitBallFiller}
    # --- end face_a
    return fillers


@hookimpl
def caffe_message_fields() -> dict[str, ExtraField]:
    """Fields the forks add to Caffe's own messages."""
    return {
        # --- face_a: happynear's InnerProductParameter.normalize = 7.
        "InnerProductParameter.normalize": ExtraField("bool", INNER_PRODUCT_NORMALIZE_NUMBER, default=False),
        # --- end face_a
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters of the pack's types."""
    converters: dict[str, Converter] = {}
    # --- face_a: happynear's Flip, Normalize[happynear], ChannelScale, LabelSpecificAdd,
    # InnerProduct[happynear].
    from caffe_layers_face.onnx_export import happynear

    converters.update(happynear.CONVERTERS)
    # --- end face_a
    return converters
