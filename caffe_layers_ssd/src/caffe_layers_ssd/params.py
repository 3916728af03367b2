"""The SSD fork's messages (weiliu89/caffe, branch ssd, with inisis/caffe's defaults), declared in Python."""

from __future__ import annotations

from caffe_core.messages import Enum, Field, Message, build_messages
from caffe_core.proto import caffe_pb2

# ----- annotations and samplers (AnnotatedData) -----
LABEL_MAP_ITEM = Message("LabelMapItem", [
    Field("name", "string", 1),
    Field("label", "int32", 2),
    Field("display_name", "string", 3),
])
LABEL_MAP = Message("LabelMap", [Field("item", LABEL_MAP_ITEM, 1, repeated=True)])
SAMPLER = Message("Sampler", [
    Field("min_scale", "float", 1, default=1.0),
    Field("max_scale", "float", 2, default=1.0),
    Field("min_aspect_ratio", "float", 3, default=1.0),
    Field("max_aspect_ratio", "float", 4, default=1.0),
])
SAMPLE_CONSTRAINT = Message("SampleConstraint", [
    Field("min_jaccard_overlap", "float", 1),
    Field("max_jaccard_overlap", "float", 2),
    Field("min_sample_coverage", "float", 3),
    Field("max_sample_coverage", "float", 4),
    Field("min_object_coverage", "float", 5),
    Field("max_object_coverage", "float", 6),
])
BATCH_SAMPLER = Message("BatchSampler", [
    Field("use_original_image", "bool", 1, default=True),
    Field("sampler", SAMPLER, 2),
    Field("sample_constraint", SAMPLE_CONSTRAINT, 3),
    Field("max_sample", "uint32", 4),
    Field("max_trials", "uint32", 5, default=100),
])
EMIT_TYPE = Enum("EmitType", {"CENTER": 0, "MIN_OVERLAP": 1})
EMIT_CONSTRAINT = Message("EmitConstraint", [
    Field("emit_type", EMIT_TYPE, 1, default="CENTER"),
    Field("emit_overlap", "float", 2),
], enums=[EMIT_TYPE])
NORMALIZED_BBOX = Message("NormalizedBBox", [
    Field("xmin", "float", 1),
    Field("ymin", "float", 2),
    Field("xmax", "float", 3),
    Field("ymax", "float", 4),
    Field("label", "int32", 5),
    Field("difficult", "bool", 6),
    Field("score", "float", 7),
    Field("size", "float", 8),
])
ANNOTATION = Message("Annotation", [
    Field("instance_id", "int32", 1, default=0),
    Field("bbox", NORMALIZED_BBOX, 2),
])
ANNOTATION_GROUP = Message("AnnotationGroup", [
    Field("group_label", "int32", 1),
    Field("annotation", ANNOTATION, 2, repeated=True),
])
ANNOTATION_TYPE = Enum("AnnotationType", {"BBOX": 0})
ANNOTATED_DATUM = Message("AnnotatedDatum", [
    Field("datum", caffe_pb2.Datum, 1),
    Field("type", ANNOTATION_TYPE, 2),
    Field("annotation_group", ANNOTATION_GROUP, 3, repeated=True),
], enums=[ANNOTATION_TYPE])
ANNOTATED_DATA = Message("AnnotatedDataParameter", [
    Field("batch_sampler", BATCH_SAMPLER, 1, repeated=True),
    Field("label_map_file", "string", 2),
    Field("anno_type", ANNOTATION_TYPE, 3),
])

# ----- data augmentation (fields of TransformationParameter) -----
RESIZE_MODE = Enum("Resize_mode", {"WARP": 1, "FIT_SMALL_SIZE": 2, "FIT_LARGE_SIZE_AND_PAD": 3})
PAD_MODE = Enum("Pad_mode", {"CONSTANT": 1, "MIRRORED": 2, "REPEAT_NEAREST": 3})
INTERP_MODE = Enum("Interp_mode", {"LINEAR": 1, "AREA": 2, "NEAREST": 3, "CUBIC": 4, "LANCZOS4": 5})
RESIZE = Message("ResizeParameter", [
    Field("prob", "float", 1, default=1.0),
    Field("resize_mode", RESIZE_MODE, 2, default="WARP"),
    Field("height", "uint32", 3, default=0),
    Field("width", "uint32", 4, default=0),
    Field("height_scale", "uint32", 8, default=0),
    Field("width_scale", "uint32", 9, default=0),
    Field("pad_mode", PAD_MODE, 5, default="CONSTANT"),
    Field("pad_value", "float", 6, repeated=True),
    Field("interp_mode", INTERP_MODE, 7, repeated=True),
], enums=[RESIZE_MODE, PAD_MODE, INTERP_MODE])
SALT_PEPPER = Message("SaltPepperParameter", [
    Field("fraction", "float", 1, default=0.0),
    Field("value", "float", 2, repeated=True),
])
NOISE = Message("NoiseParameter", [
    Field("prob", "float", 1, default=0.0),
    Field("hist_eq", "bool", 2, default=False),
    Field("inverse", "bool", 3, default=False),
    Field("decolorize", "bool", 4, default=False),
    Field("gauss_blur", "bool", 5, default=False),
    Field("jpeg", "float", 6, default=-1.0),
    Field("posterize", "bool", 7, default=False),
    Field("erode", "bool", 8, default=False),
    Field("saltpepper", "bool", 9, default=False),
    Field("saltpepper_param", SALT_PEPPER, 10),
    Field("clahe", "bool", 11, default=False),
    Field("convert_to_hsv", "bool", 12, default=False),
    Field("convert_to_lab", "bool", 13, default=False),
])
DISTORTION = Message("DistortionParameter", [
    Field("brightness_prob", "float", 1, default=0.0),
    Field("brightness_delta", "float", 2, default=0.0),
    Field("contrast_prob", "float", 3, default=0.0),
    Field("contrast_lower", "float", 4, default=0.0),
    Field("contrast_upper", "float", 5, default=0.0),
    Field("hue_prob", "float", 6, default=0.0),
    Field("hue_delta", "float", 7, default=0.0),
    Field("saturation_prob", "float", 8, default=0.0),
    Field("saturation_lower", "float", 9, default=0.0),
    Field("saturation_upper", "float", 10, default=0.0),
    Field("random_order_prob", "float", 11, default=0.0),
])
EXPANSION = Message("ExpansionParameter", [
    Field("prob", "float", 1, default=1.0),
    Field("max_expand_ratio", "float", 2, default=1.0),
])

# ----- layer parameter blocks -----
CODE_TYPE = Enum("CodeType", {"CORNER": 1, "CENTER_SIZE": 2, "CORNER_SIZE": 3})
PRIOR_BOX = Message("PriorBoxParameter", [
    Field("min_size", "float", 1, repeated=True),
    Field("max_size", "float", 2, repeated=True),
    Field("aspect_ratio", "float", 3, repeated=True),
    Field("flip", "bool", 4, default=True),
    # inisis/caffe's default (the ssd branch declares false); the reference numbers come from inisis.
    Field("clip", "bool", 5, default=True),
    Field("variance", "float", 6, repeated=True),
    Field("img_size", "uint32", 7),
    Field("img_h", "uint32", 8),
    Field("img_w", "uint32", 9),
    Field("step", "float", 10),
    Field("step_h", "float", 11),
    Field("step_w", "float", 12),
    Field("offset", "float", 13, default=0.5),
    # TextBoxes++ (MhLiao/TextBoxes_plusplus): every prior followed by a copy centred at (h + 1) * step_h.
    Field("denser_prior_boxes", "bool", 14, default=False),
], enums=[CODE_TYPE])
PERMUTE = Message("PermuteParameter", [Field("order", "uint32", 1, repeated=True)])
NORMALIZE = Message("NormalizeParameter", [
    Field("across_spatial", "bool", 1, default=True),
    Field("scale_filler", caffe_pb2.FillerParameter, 2),
    Field("channel_shared", "bool", 3, default=True),
    Field("eps", "float", 4, default=1e-10),
])
NMS = Message("NonMaximumSuppressionParameter", [
    Field("nms_threshold", "float", 1, default=0.3),
    Field("top_k", "int32", 2),
    Field("eta", "float", 3, default=1.0),
])
SAVE_OUTPUT = Message("SaveOutputParameter", [
    Field("output_directory", "string", 1),
    Field("output_name_prefix", "string", 2),
    Field("output_format", "string", 3),
    Field("label_map_file", "string", 4),
    Field("name_size_file", "string", 5),
    Field("num_test_image", "uint32", 6),
    Field("resize_param", RESIZE, 7),
])
DETECTION_OUTPUT = Message("DetectionOutputParameter", [
    Field("num_classes", "uint32", 1),
    Field("share_location", "bool", 2, default=True),
    Field("background_label_id", "int32", 3, default=0),
    Field("nms_param", NMS, 4),
    Field("save_output_param", SAVE_OUTPUT, 5),
    Field("code_type", CODE_TYPE, 6, default="CORNER"),
    Field("variance_encoded_in_target", "bool", 8, default=False),
    Field("keep_top_k", "int32", 7, default=-1),
    Field("confidence_threshold", "float", 9),
    Field("visualize", "bool", 10, default=False),
    Field("visualize_threshold", "float", 11),
    Field("save_file", "string", 12),
    # TextBoxes++ (MhLiao/TextBoxes_plusplus): 12 (quadrilateral) or 9 (rotated box) loc values per prior.
    Field("use_polygon", "bool", 13, default=True),
    # RefineDet (sfzhang15/RefineDet): priors whose ARM objectness is below it score as class 0.
    Field("objectness_score", "float", 24, default=0.01),
])
DETECTION_EVALUATE = Message("DetectionEvaluateParameter", [
    Field("num_classes", "uint32", 1),
    Field("background_label_id", "uint32", 2, default=0),
    Field("overlap_threshold", "float", 3, default=0.5),
    Field("evaluate_difficult_gt", "bool", 4, default=True),
    Field("name_size_file", "string", 5),
    Field("resize_param", RESIZE, 6),
])
LOC_LOSS_TYPE = Enum("LocLossType", {"L2": 0, "SMOOTH_L1": 1})
CONF_LOSS_TYPE = Enum("ConfLossType", {"SOFTMAX": 0, "LOGISTIC": 1})
MATCH_TYPE = Enum("MatchType", {"BIPARTITE": 0, "PER_PREDICTION": 1})
MINING_TYPE = Enum("MiningType", {"NONE": 0, "MAX_NEGATIVE": 1, "HARD_EXAMPLE": 2})
MULTIBOX_LOSS = Message("MultiBoxLossParameter", [
    Field("loc_loss_type", LOC_LOSS_TYPE, 1, default="SMOOTH_L1"),
    Field("conf_loss_type", CONF_LOSS_TYPE, 2, default="SOFTMAX"),
    Field("loc_weight", "float", 3, default=1.0),
    Field("num_classes", "uint32", 4),
    Field("share_location", "bool", 5, default=True),
    Field("match_type", MATCH_TYPE, 6, default="PER_PREDICTION"),
    Field("overlap_threshold", "float", 7, default=0.5),
    Field("use_prior_for_matching", "bool", 8, default=True),
    Field("background_label_id", "uint32", 9, default=0),
    Field("use_difficult_gt", "bool", 10, default=True),
    Field("do_neg_mining", "bool", 11),
    Field("neg_pos_ratio", "float", 12, default=3.0),
    Field("neg_overlap", "float", 13, default=0.5),
    Field("code_type", CODE_TYPE, 14, default="CORNER"),
    Field("encode_variance_in_target", "bool", 16, default=False),
    Field("map_object_to_agnostic", "bool", 17, default=False),
    Field("ignore_cross_boundary_bbox", "bool", 18, default=False),
    Field("bp_inside", "bool", 19, default=False),
    Field("mining_type", MINING_TYPE, 20, default="MAX_NEGATIVE"),
    Field("nms_param", NMS, 21),
    Field("sample_size", "int32", 22, default=64),
    Field("use_prior_for_nms", "bool", 23, default=False),
], enums=[LOC_LOSS_TYPE, CONF_LOSS_TYPE, MATCH_TYPE, MINING_TYPE])
VIDEO_TYPE = Enum("VideoType", {"WEBCAM": 0, "VIDEO": 1})
VIDEO_DATA = Message("VideoDataParameter", [
    Field("video_type", VIDEO_TYPE, 1, default="WEBCAM"),
    Field("device_id", "int32", 2, default=0),
    Field("video_file", "string", 3),
    Field("skip_frames", "uint32", 4, default=0),
], enums=[VIDEO_TYPE])

_CLASSES = build_messages("caffe_layers_ssd", [
    LABEL_MAP_ITEM, LABEL_MAP, SAMPLER, SAMPLE_CONSTRAINT, BATCH_SAMPLER, EMIT_CONSTRAINT, NORMALIZED_BBOX,
    ANNOTATION, ANNOTATION_GROUP, ANNOTATED_DATUM, ANNOTATED_DATA, RESIZE, SALT_PEPPER, NOISE, DISTORTION,
    EXPANSION, PRIOR_BOX, PERMUTE, NORMALIZE, NMS, SAVE_OUTPUT, DETECTION_OUTPUT, DETECTION_EVALUATE,
    MULTIBOX_LOSS, VIDEO_DATA,
])

LabelMapItem = _CLASSES["LabelMapItem"]
LabelMap = _CLASSES["LabelMap"]
Sampler = _CLASSES["Sampler"]
SampleConstraint = _CLASSES["SampleConstraint"]
BatchSampler = _CLASSES["BatchSampler"]
EmitConstraint = _CLASSES["EmitConstraint"]
NormalizedBBox = _CLASSES["NormalizedBBox"]
Annotation = _CLASSES["Annotation"]
AnnotationGroup = _CLASSES["AnnotationGroup"]
AnnotatedDatum = _CLASSES["AnnotatedDatum"]
AnnotatedDataParameter = _CLASSES["AnnotatedDataParameter"]
ResizeParameter = _CLASSES["ResizeParameter"]
SaltPepperParameter = _CLASSES["SaltPepperParameter"]
NoiseParameter = _CLASSES["NoiseParameter"]
DistortionParameter = _CLASSES["DistortionParameter"]
ExpansionParameter = _CLASSES["ExpansionParameter"]
PriorBoxParameter = _CLASSES["PriorBoxParameter"]
PermuteParameter = _CLASSES["PermuteParameter"]
NormalizeParameter = _CLASSES["NormalizeParameter"]
NonMaximumSuppressionParameter = _CLASSES["NonMaximumSuppressionParameter"]
SaveOutputParameter = _CLASSES["SaveOutputParameter"]
DetectionOutputParameter = _CLASSES["DetectionOutputParameter"]
DetectionEvaluateParameter = _CLASSES["DetectionEvaluateParameter"]
MultiBoxLossParameter = _CLASSES["MultiBoxLossParameter"]
VideoDataParameter = _CLASSES["VideoDataParameter"]


def signed_label(value: int) -> int:
    """A uint32 label id (background_label_id) as the fork's int member holds it: 4294967295 is -1."""
    return value - 2 ** 32 if value >= 2 ** 31 else value
