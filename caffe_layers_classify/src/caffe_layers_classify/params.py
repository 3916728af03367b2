"""The pack's parameter blocks, field for field those of the forks' caffe.proto."""

from caffe_core.messages import Field, Message, build_messages

# inisis/caffe: LayerParameter fields 501 (hardsigmoid_param), 502 (unsqueeze_param), 503 (relu6_param).
HARD_SIGMOID = Message("HardSigmoidParameter", [
    Field("alpha", "float", 1, default=0.2),
    Field("beta", "float", 2, default=0.5),
])
# The fork declares dim `required`; UnsqueezeLayer refuses a missing one.
UNSQUEEZE = Message("UnsqueezeParameter", [
    Field("dim", "int32", 1),
])
RELU6 = Message("ReLU6Parameter", [
    Field("negative_slope", "float", 1, default=0.0),
    Field("threshold", "float", 2, default=6.0),
])
# farmingyard/ShuffleNet: LayerParameter field 164 (shuffle_channel_param).
SHUFFLE_CHANNEL = Message("ShuffleChannelParameter", [
    Field("group", "uint32", 1, default=1),
])

_classes = build_messages("caffe_layers_classify", [HARD_SIGMOID, UNSQUEEZE, RELU6, SHUFFLE_CHANNEL])
HardSigmoidParameter = _classes["HardSigmoidParameter"]
UnsqueezeParameter = _classes["UnsqueezeParameter"]
ReLU6Parameter = _classes["ReLU6Parameter"]
ShuffleChannelParameter = _classes["ShuffleChannelParameter"]
