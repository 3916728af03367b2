"""Hook implementations of the rcnn pack: parameter blocks, DropoutParameter.scale_train, ONNX converters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# The LayerParameter numbers of the forks each block comes from.
# roi_pooling_param: caffe-fast-rcnn's 8266711. zhaoweicai/cascade-rcnn declares the same message (plus
# field 4, pad_ratio) at 147, which BVLC's own schema gives to swish_param, so that number cannot be taken
# here; a cascade .caffemodel's block at 147 is read as BVLC's swish_param (its fields unknown there) and so
# ignored. ROIPooling and ROIAlign have no weights, so the file loses nothing: their settings come from the
# net's prototxt, which (as text) names the block and is read in full.
ROI_POOLING_NUMBER = 8266711  # caffe-fast-rcnn
SMOOTH_L1_LOSS_NUMBER = 8266712  # caffe-fast-rcnn
PROPOSAL_NUMBER = 1000  # inisis/caffe
PSROI_POOLING_NUMBER = 10001  # R-FCN's caffe
BBOX_REG_NUMBER = 150  # zhaoweicai/cascade-rcnn
SCALE_ROUTE_NUMBER = 154  # zhaoweicai/cascade-rcnn
DECODE_BBOX_NUMBER = 155  # zhaoweicai/cascade-rcnn
BOX_GROUP_OUTPUT_NUMBER = 158  # zhaoweicai/cascade-rcnn
SCALE_TRAIN_NUMBER = 2  # caffe-fast-rcnn's DropoutParameter.scale_train


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """The R-CNN forks' blocks (roi_pooling_param ... box_group_output_param) at the forks' numbers."""
    from caffe_layers_rcnn.params import (
        BBoxRegParameter,
        BoxGroupOutputParameter,
        DecodeBBoxParameter,
        ProposalParameter,
        PSROIPoolingParameter,
        ROIPoolingParameter,
        ScaleRouteParameter,
        SmoothL1LossParameter,
    )

    return {
        "roi_pooling_param": ParamBlock(ROIPoolingParameter, ROI_POOLING_NUMBER),
        "smooth_l1_loss_param": ParamBlock(SmoothL1LossParameter, SMOOTH_L1_LOSS_NUMBER),
        "proposal_param": ParamBlock(ProposalParameter, PROPOSAL_NUMBER),
        "psroi_pooling_param": ParamBlock(PSROIPoolingParameter, PSROI_POOLING_NUMBER),
        "bbox_reg_param": ParamBlock(BBoxRegParameter, BBOX_REG_NUMBER),
        "scale_route_param": ParamBlock(ScaleRouteParameter, SCALE_ROUTE_NUMBER),
        "decode_bbox_param": ParamBlock(DecodeBBoxParameter, DECODE_BBOX_NUMBER),
        "box_group_output_param": ParamBlock(BoxGroupOutputParameter, BOX_GROUP_OUTPUT_NUMBER),
    }


@hookimpl
def caffe_message_fields() -> dict[str, ExtraField]:
    """DropoutParameter.scale_train (bool, number 2, default true), as caffe-fast-rcnn declares it."""
    return {"DropoutParameter.scale_train": ExtraField("bool", SCALE_TRAIN_NUMBER, default=True)}


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters for the ROI poolings, Dropout[scale_train], DecodeBBox; Proposal and others refuse (why)."""
    from caffe_layers_rcnn.onnx_export import cascade, dropout, pooling, proposal

    return {**pooling.CONVERTERS, **dropout.CONVERTERS, **proposal.CONVERTERS, **cascade.CONVERTERS}
