"""Hook implementations: the SSD fork's parameter blocks and its fields of TransformationParameter."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The SSD blocks at the ssd branch's LayerParameter numbers 200-207."""
    from caffe_layers_ssd import params

    return {
        "annotated_data_param": ParamBlock(params.AnnotatedDataParameter, 200),
        "multibox_loss_param": ParamBlock(params.MultiBoxLossParameter, 201),
        "permute_param": ParamBlock(params.PermuteParameter, 202),
        "prior_box_param": ParamBlock(params.PriorBoxParameter, 203),
        "detection_output_param": ParamBlock(params.DetectionOutputParameter, 204),
        "detection_evaluate_param": ParamBlock(params.DetectionEvaluateParameter, 205),
        "norm_param": ParamBlock(params.NormalizeParameter, 206),
        "video_data_param": ParamBlock(params.VideoDataParameter, 207),
    }


@hookimpl
def caffe_message_fields() -> dict[str, ExtraField]:
    """The SSD data-augmentation fields of TransformationParameter, at the ssd branch's numbers."""
    from caffe_layers_ssd import params

    return {
        "TransformationParameter.resize_param": ExtraField(params.ResizeParameter, 8),
        "TransformationParameter.noise_param": ExtraField(params.NoiseParameter, 9),
        "TransformationParameter.emit_constraint": ExtraField(params.EmitConstraint, 10),
        "TransformationParameter.distort_param": ExtraField(params.DistortionParameter, 13),
        "TransformationParameter.expand_param": ExtraField(params.ExpansionParameter, 14),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters for Normalize, Permute, PriorBox; DetectionOutput and its variants refuse, saying why."""
    from caffe_layers_ssd.onnx_export import layers

    return {**layers.CONVERTERS}
