"""The pack's parameter messages, field for field those of eric612/MobileNet-YOLO's caffe.proto."""

from caffe_core.messages import Enum, Field, Message, build_messages

# eric612/MobileNet-YOLO: LayerParameter.reorg_param = 149. `stride` has no default; ReorgLayer refuses a
# layer without it, as the fork's CHECK does.
REORG = Message("ReorgParameter", [
    Field("stride", "uint32", 1),
    Field("reverse", "bool", 2, default=False),
])

# eric612/MobileNet-YOLO: LayerParameter.yolo_detection_output_param = 601 (YOLOv2).
YOLO_DETECTION_OUTPUT = Message("YoloDetectionOutputParameter", [
    Field("side", "uint32", 1, default=13),
    Field("num_classes", "uint32", 2, default=20),
    Field("num_box", "uint32", 3, default=5),
    Field("coords", "uint32", 4, default=4),
    Field("confidence_threshold", "float", 5, default=0.01),
    Field("nms_threshold", "float", 6, default=0.45),
    Field("biases", "float", 7, repeated=True),
    Field("label_map_file", "string", 8),
])

# eric612/MobileNet-YOLO: LayerParameter.yolov3_detection_output_param = 602.
YOLOV3_DETECTION_OUTPUT = Message("Yolov3DetectionOutputParameter", [
    Field("num_classes", "uint32", 1, default=20),
    Field("num_box", "uint32", 2, default=3),
    Field("confidence_threshold", "float", 3, default=0.01),
    Field("nms_threshold", "float", 4, default=0.45),
    Field("biases", "float", 5, repeated=True),
    Field("anchors_scale", "uint32", 6, repeated=True),
    Field("mask_group_num", "uint32", 7, default=2),
    Field("mask", "uint32", 8, repeated=True),
    Field("gaussian_box", "bool", 9, default=False),
])

# darknet2caffe's region_param (ChenYingpeng/darknet2caffe, marvis/pytorch-caffe-darknet-convert): the
# converters write `anchors` (darknet's comma-separated string), `classes` and `num` as text and build their
# Caffe net without the layer, so no caffe.proto numbers them; the numbers here are this pack's. `coords`
# and `softmax` are darknet's [region] keys the converters drop; softmax defaults to true, as every YOLOv2
# cfg sets it.
REGION = Message("RegionParameter", [
    Field("anchors", "string", 1),
    Field("classes", "uint32", 2, default=20),
    Field("num", "uint32", 3, default=1),
    Field("coords", "uint32", 4, default=4),
    Field("softmax", "bool", 5, default=True),
])

# ChenYingpeng/darknet2caffe's MishParameter (its README's caffe.proto patch, f6d9ea33): only an engine, which
# the layer does not read; declared so that a `mish_param { }` in a prototxt is read, not refused.
MISH_ENGINE = Enum("Engine", {"DEFAULT": 0, "CAFFE": 1, "CUDNN": 2})
MISH = Message("MishParameter", [Field("engine", MISH_ENGINE, 2, default="DEFAULT")], enums=[MISH_ENGINE])

_classes = build_messages("caffe_layers_yolo",
                          [REORG, YOLO_DETECTION_OUTPUT, YOLOV3_DETECTION_OUTPUT, REGION, MISH])
ReorgParameter = _classes["ReorgParameter"]
YoloDetectionOutputParameter = _classes["YoloDetectionOutputParameter"]
Yolov3DetectionOutputParameter = _classes["Yolov3DetectionOutputParameter"]
RegionParameter = _classes["RegionParameter"]
MishParameter = _classes["MishParameter"]
