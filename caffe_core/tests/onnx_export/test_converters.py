"""Which converter a layer gets: its own distribution's, by entry-point name (variants included), else the
one other distribution's that offers one."""

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from types import SimpleNamespace

from caffe_core import plugins, registry
from caffe_core.errors import OnnxExportError
from caffe_core.hookspecs import hookimpl
from caffe_core.onnx_export.converters import ConverterTable
from caffe_core.testing.onnx_check import input_layer, net_from_text


def mark(op_type):
    """A converter that writes its top with one node of the given type."""
    def convert(layer, graph, bottoms, tops):
        graph.op(op_type, bottoms, tops[0])
    return convert


@pytest.fixture
def converters_of():
    """Registers run-time plugins that count as parts of the named distributions."""
    registered = []

    def register(distribution, converters):
        plugin = SimpleNamespace(caffe_onnx_converters=hookimpl(lambda: converters))
        plugins.register_plugin(plugin, name=f"{distribution}:onnx-test")
        registered.append(plugin)

    yield register
    for plugin in registered:
        plugins.unregister_plugin(plugin)
    registry.layer_class.cache_clear()


def needs(*types):
    """Skips unless the test packs providing these types are installed (several classes per type)."""
    missing = sorted(set(types) - set(registry.layer_types()))
    if missing:
        pytest.skip(f"needs the test packs providing {', '.join(missing)}")


def one_layer_net(type_name, bottoms=1):
    inputs = "".join(input_layer(f"in{i}", (2, 3)) for i in range(bottoms))
    names = " ".join(f'bottom: "in{i}"' for i in range(bottoms))
    return net_from_text(inputs + f'layer {{ name: "l" type: "{type_name}" {names} top: "y" }}')


@pytest.mark.parametrize(("distribution", "op_type"), [("caffe-zzz-testpack", "Neg"),
                                                       ("caffe-rival-testpack", "Abs")])
def test_a_type_two_packs_give_is_converted_by_the_providing_packs_converter(converters_of, distribution,
                                                                             op_type):
    needs("ZZZ", "Twin")
    converters_of("caffe-zzz-testpack", {"Twin": mark("Neg")})
    converters_of("caffe-rival-testpack", {"Twin": mark("Abs")})
    registry.prefer_provider("Twin", distribution)
    try:
        net = one_layer_net("Twin")
    finally:
        registry._preferred.pop("Twin")
        registry.layer_class.cache_clear()
    from caffe_core import onnx_export

    model = onnx_export.to_model(net)
    assert [n.op_type for n in model.graph.node] == [op_type]


def test_a_variant_is_converted_only_by_a_converter_of_its_variant(converters_of):
    needs("Pick")
    converters_of("caffe-zzz-testpack", {"Pick[first]": mark("Neg")})
    from caffe_core import onnx_export

    model = onnx_export.to_model(one_layer_net("Pick", bottoms=1))
    assert [n.op_type for n in model.graph.node] == ["Neg"]
    refusal = (r"layer 'l' of type 'Pick' \(class from caffe-zzz-testpack\[sum\]\) has no ONNX export: "
               r"no installed pack gives a converter for 'Pick\[sum\]'")
    with pytest.raises(OnnxExportError, match=refusal):
        onnx_export.to_model(one_layer_net("Pick", bottoms=2))


def test_another_distribution_may_convert_a_type_whose_pack_gives_no_converter(converters_of):
    needs("ZZZ")
    converters_of("onnx-extras", {"ZZZ": mark("Neg")})
    from caffe_core import onnx_export

    net = one_layer_net("ZZZ")
    assert [n.op_type for n in onnx_export.to_model(net).graph.node] == ["Neg"]


def test_two_other_distributions_converting_one_type_is_an_error_naming_both(converters_of):
    needs("ZZZ")
    converters_of("onnx-extras", {"ZZZ": mark("Neg")})
    converters_of("more-onnx-extras", {"ZZZ": mark("Abs")})
    net = one_layer_net("ZZZ")
    with pytest.raises(OnnxExportError, match="for 'ZZZ' are given by more-onnx-extras, onnx-extras"):
        ConverterTable().find(net.layers[-1])
