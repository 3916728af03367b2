"""The pack's parameter messages, field for field those of the face forks' caffe.proto files."""

from caffe_core.messages import Field, Message, build_messages

# --- face_a: happynear's NormFace / AM-Softmax layers. Messages copied from happynear/caffe-windows, branch
# "ms", commit 967eedf25009e334b7f6f933bb5e17aaaff5bef6 (2018-07-15), src/caffe/proto/caffe.proto.

# LayerParameter.flip_param = 212.
FLIP = Message("FlipParameter", [
    Field("flip_width", "bool", 1, default=True),
    Field("flip_height", "bool", 2, default=False),
])

# LayerParameter.normalize_param = 214 (not SSD's norm_param, which caffe-layers-ssd reads at 206).
NORMALIZE = Message("NormalizeParameter", [
    Field("normalize_type", "string", 1, default="L2"),
    Field("fix_gradient", "bool", 2, default=False),
    Field("bp_norm", "bool", 3, default=False),
])

# LayerParameter.channel_scale_param = 237.
CHANNEL_SCALE = Message("ChannelScaleParameter", [
    Field("do_forward", "bool", 1, default=True),
    Field("do_backward_feature", "bool", 2, default=True),
    Field("do_backward_scale", "bool", 3, default=True),
    Field("global_scale", "bool", 4, default=False),
    Field("max_global_scale", "float", 5, default=1000.0),
    Field("min_global_scale", "float", 6, default=0.0),
    Field("init_global_scale", "float", 7, default=1.0),
])

# LayerParameter.label_specific_add_param = 241.
LABEL_SPECIFIC_ADD = Message("LabelSpecificAddParameter", [
    Field("bias", "float", 1, default=0.0),
    Field("transform_test", "bool", 2, default=False),
    Field("bias_base", "float", 3, default=0.0),
    Field("bias_gamma", "float", 4, default=0.0),
    Field("bias_power", "float", 5, default=1.0),
    Field("bias_min", "float", 6, default=0.0),
    Field("bias_max", "float", 7, default=0.0),
    Field("iteration", "uint32", 8, default=0),
])

FACE_A_MESSAGES = [FLIP, NORMALIZE, CHANNEL_SCALE, LABEL_SPECIFIC_ADD]
# --- end face_a

_classes = build_messages("caffe_layers_face", FACE_A_MESSAGES)

# --- face_a
FlipParameter = _classes["FlipParameter"]
NormalizeParameter = _classes["NormalizeParameter"]
ChannelScaleParameter = _classes["ChannelScaleParameter"]
LabelSpecificAddParameter = _classes["LabelSpecificAddParameter"]
# --- end face_a
