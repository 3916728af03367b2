"""legacy_text: messages printed as pycaffe's protobuf 3 did (floats as Python's str, number order)."""

from caffe.legacy_text import message_to_text
from caffe.proto import caffe_pb2


def test_fields_in_number_order_with_floats_enums_bools_strings_and_nesting():
    layer = caffe_pb2.LayerParameter(type="LRN", name='n"1', bottom=["a"])
    layer.lrn_param.alpha = 1e-4
    layer.lrn_param.norm_region = caffe_pb2.LRNParameter.WITHIN_CHANNEL
    layer.transform_param.mirror = True
    layer.transform_param.mean_value.extend([104, 117.5])
    assert message_to_text(layer) == (
        'name: "n\\"1"\n'
        'type: "LRN"\n'
        'bottom: "a"\n'
        "transform_param {\n"
        "  mirror: true\n"
        "  mean_value: 104.0\n"
        "  mean_value: 117.5\n"
        "}\n"
        "lrn_param {\n"
        "  alpha: 9.999999747378752e-05\n"
        "  norm_region: WITHIN_CHANNEL\n"
        "}\n")


def test_str_of_a_caffe_pb2_message_uses_it():
    param = caffe_pb2.SolverParameter(base_lr=0.01, lr_policy="fixed")
    assert str(param) == message_to_text(param) == 'base_lr: 0.009999999776482582\nlr_policy: "fixed"\n'
