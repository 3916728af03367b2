"""Which layer types export to ONNX: every BVLC type with an ONNX meaning and the fork types ONNX has an
operation for have a converter, every converter names an installed layer class, and the rest are refused
with a clear error."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")


from caffe_core import plugins, registry
from caffe_core.errors import OnnxExportError
from caffe_core.testing.onnx_check import net_from_text

BVLC_EXPORTABLE = {
    "Convolution", "Deconvolution", "Pooling", "LRN", "InnerProduct", "ReLU", "PReLU", "ELU", "Sigmoid",
    "TanH", "AbsVal", "Power", "Exp", "Log", "BNLL", "Threshold", "Clip", "Swish", "BatchNorm", "Scale",
    "Bias", "Eltwise", "Concat", "Slice", "Split", "Flatten", "Reshape", "Softmax", "Crop", "Dropout",
    "ArgMax", "Reduction", "Tile", "Embed", "MVN", "SPP", "Silence", "Parameter", "BatchReindex",
}
FORK_EXPORTABLE = {
    "Upsample[nearest]", "Upsample[unpool]", "MaxUnPool", "Interp", "BilinearInterpolate", "Resize",
    "ReLU6", "HardSwish", "HardSigmoid", "PixelShuffle", "Permute", "Pad", "Normalize", "Axpy",
    "ShuffleChannel", "ConvolutionDepthwise", "DepthwiseConvolution", "Unsqueeze", "PriorBox", "ROIPooling",
    "PSROIPooling", "BN[pspnet]", "BN[segnet]", "BatchNormKyle", "Dropout[scale_train]",
    "Dropout[sample_weights_test]", "Pooling[darknet]", "Region", "Reorg", "Mish",
}


def converter_keys() -> dict[str, set[str]]:
    """The converter names each distribution gives."""
    keys: dict[str, set[str]] = {}
    for distribution, converters in plugins.collect_each("caffe_onnx_converters"):
        keys.setdefault(distribution, set()).update(converters)
    return keys


def entry_names() -> dict[str, set[str]]:
    """The `caffe.layers` entry-point names of each distribution."""
    names: dict[str, set[str]] = {}
    for type_name in registry.layer_types():
        for provider in registry.providers_of(type_name):
            names.setdefault(provider.distribution, set()).add(provider.entry_point.name)
    return names


def test_every_exportable_type_has_a_converter_from_its_own_pack():
    keys, names = converter_keys(), entry_names()
    wanted = BVLC_EXPORTABLE | FORK_EXPORTABLE
    covered = {key for distribution, given in keys.items() for key in given & names.get(distribution, set())}
    assert sorted(wanted - covered) == []


def test_every_converter_names_a_layer_class_of_its_own_distribution():
    names = entry_names()
    strays = {(distribution, key) for distribution, given in converter_keys().items()
              for key in given - names.get(distribution, set())}
    assert sorted(strays) == []


@pytest.mark.parametrize(("layer", "message"), [
    ('type: "SoftmaxWithLoss" bottom: "data" bottom: "label" top: "loss"',
     "layer 'l' of type 'SoftmaxWithLoss' (class from caffe-layers-std) has no ONNX export"),
    ('type: "Accuracy" bottom: "data" bottom: "label" top: "accuracy"',
     "layer 'l' of type 'Accuracy' (class from caffe-layers-std) has no ONNX export"),
    ('type: "DummyData" top: "dummy" dummy_data_param { shape { dim: 2 dim: 5 } }',
     "has no ONNX export: no installed pack gives a converter for 'DummyData' (a layer with no bottoms "
     "reads its own data: export the deploy net"),
])
def test_a_type_without_export_is_refused_naming_layer_and_type(layer, message):
    net = net_from_text('layer { name: "data" type: "Input" top: "data" top: "label" '
                        'input_param { shape { dim: 2 dim: 5 } shape { dim: 2 } } }\n'
                        f'layer {{ name: "l" {layer} }}')
    from caffe_core import onnx_export

    with pytest.raises(OnnxExportError) as refusal:
        onnx_export.to_model(net)
    assert message in str(refusal.value)
