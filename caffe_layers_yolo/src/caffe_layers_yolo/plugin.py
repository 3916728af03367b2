"""Hook implementations of caffe-layers-yolo: its four parameter blocks and its ONNX converters."""

from __future__ import annotations

from typing import TYPE_CHECKING

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ParamBlock

if TYPE_CHECKING:
    from caffe_core.onnx_export.converters import Converter

# LayerParameter numbers: eric612/MobileNet-YOLO's own for all three blocks (none clashes with BVLC or another
# pack of this repository). Not declared here:
# - upsample_param: eric612 stores it at 150 and ChenYingpeng/darknet2caffe at 149 (= eric612's reorg_param);
#   caffe-layers-seg already owns the block at 500 (inisis) with the same `scale` field 1, and its
#   Upsample[nearest] computes the YOLO forks' Upsample, so YOLO prototxts load through that pack. The
#   Upsample layer has no blobs, so a fork's .caffemodel loses nothing when its block at 150/149 is not read.
# - mish_param at Chen's 150: that number is eric612's upsample_param and cascade-rcnn's bbox_reg_param
#   (caffe-layers-rcnn), so the block is declared at the pack's own MISH_NUMBER; its only field is an unused
#   `engine`, and Mish has no blobs, so a fork-written .caffemodel loses nothing.
REORG_NUMBER = 149
# darknet2caffe's region_param has no number in any caffe.proto (its converters build the net without the
# layer); gklz1982/caffe-yolov2-style forks' 149 is eric612's reorg_param and their Region is another layer.
REGION_NUMBER = 620
MISH_NUMBER = 621
YOLO_DETECTION_OUTPUT_NUMBER = 601
YOLOV3_DETECTION_OUTPUT_NUMBER = 602


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """eric612's reorg_param (149), yolo_detection_output_param (601), yolov3_detection_output_param (602);
    darknet2caffe's region_param (620) and Chen's mish_param (621), at this pack's numbers."""
    from caffe_layers_yolo.params import (
        MishParameter,
        RegionParameter,
        ReorgParameter,
        YoloDetectionOutputParameter,
        Yolov3DetectionOutputParameter,
    )

    return {
        "reorg_param": ParamBlock(ReorgParameter, REORG_NUMBER),
        "region_param": ParamBlock(RegionParameter, REGION_NUMBER),
        "mish_param": ParamBlock(MishParameter, MISH_NUMBER),
        "yolo_detection_output_param": ParamBlock(YoloDetectionOutputParameter, YOLO_DETECTION_OUTPUT_NUMBER),
        "yolov3_detection_output_param": ParamBlock(Yolov3DetectionOutputParameter,
                                                    YOLOV3_DETECTION_OUTPUT_NUMBER),
    }


@hookimpl
def caffe_onnx_converters() -> dict[str, Converter]:
    """Converters for Reorg, Mish, Region and Pooling[darknet]; the detection outputs refuse, saying why."""
    from caffe_layers_yolo.onnx_export import detection, mish, pooling, region, reorg

    return {**reorg.CONVERTERS, **mish.CONVERTERS, **region.CONVERTERS, **pooling.CONVERTERS,
            **detection.CONVERTERS}
