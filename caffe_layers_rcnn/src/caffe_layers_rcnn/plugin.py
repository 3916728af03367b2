"""Hook implementations of the rcnn pack: its parameter blocks and DropoutParameter.scale_train."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# The LayerParameter numbers of the forks each block comes from.
ROI_POOLING_NUMBER = 8266711  # caffe-fast-rcnn
SMOOTH_L1_LOSS_NUMBER = 8266712  # caffe-fast-rcnn
PROPOSAL_NUMBER = 1000  # inisis/caffe
PSROI_POOLING_NUMBER = 10001  # R-FCN's caffe
SCALE_TRAIN_NUMBER = 2  # caffe-fast-rcnn's DropoutParameter.scale_train


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """roi_pooling_param, smooth_l1_loss_param, proposal_param, psroi_pooling_param at the forks' numbers."""
    from caffe_layers_rcnn.params import (
        ProposalParameter,
        PSROIPoolingParameter,
        ROIPoolingParameter,
        SmoothL1LossParameter,
    )

    return {
        "roi_pooling_param": ParamBlock(ROIPoolingParameter, ROI_POOLING_NUMBER),
        "smooth_l1_loss_param": ParamBlock(SmoothL1LossParameter, SMOOTH_L1_LOSS_NUMBER),
        "proposal_param": ParamBlock(ProposalParameter, PROPOSAL_NUMBER),
        "psroi_pooling_param": ParamBlock(PSROIPoolingParameter, PSROI_POOLING_NUMBER),
    }


@hookimpl
def caffe_message_fields() -> dict[str, ExtraField]:
    """DropoutParameter.scale_train (bool, number 2, default true), as caffe-fast-rcnn declares it."""
    return {"DropoutParameter.scale_train": ExtraField("bool", SCALE_TRAIN_NUMBER, default=True)}


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters for ROIPooling, PSROIPooling, Dropout[scale_train] and Proposal (refusing, with why)."""
    from caffe_layers_rcnn.onnx_export import dropout, pooling, proposal

    return {**pooling.CONVERTERS, **dropout.CONVERTERS, **proposal.CONVERTERS}
