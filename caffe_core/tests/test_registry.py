"""Layer discovery through real installed distributions (tests/plugin_packs), lazily."""

import subprocess
import sys
import textwrap

import pytest

from caffe_core import proto_io, registry
from caffe_core.errors import PluginError, UnknownLayerTypeError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.tools import caffe_packs


def run_python(code: str) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            check=True)
    return result.stdout.strip()


def test_listing_types_imports_no_pack():
    out = run_python("""
        import sys, caffe_core, caffe
        types = caffe.layer_type_list()
        assert "ZZZ" in types and "Input" in types, types
        packs = [m for m in sys.modules if m.startswith(("caffe_zzz", "caffe_layers_", "caffe_rival"))]
        print(packs)
    """)
    assert out == "[]"


def test_building_a_net_imports_only_the_packs_it_uses():
    out = run_python("""
        import sys
        from caffe_core import proto_io, Net
        from caffe_core.proto import caffe_pb2
        text = '''
        layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 } } }
        layer { name: "z" type: "ZZZ" bottom: "x" top: "y" zzz_param { mul: 3 } }
        '''
        net = Net(proto_io.parse_text(text, caffe_pb2.NetParameter()))
        net.blob_by_name("x").data[...] = [1, 2]
        net.forward()
        import importlib_metadata
        modules = {ep.module for ep in importlib_metadata.entry_points(group="caffe.layers")}
        print(net.blob_by_name("y").data.tolist(), sorted(modules & set(sys.modules)))
    """)
    # Plugin hook modules (and the messages they declare) may load; of the layer modules, only those of the
    # types used do.
    assert out == "[3.0, 6.0] ['caffe_core.layers.input', 'caffe_zzz_testpack.zzz']"


def test_two_distributions_claiming_a_type_are_named(monkeypatch):
    monkeypatch.delenv(registry.PROVIDERS_ENV, raising=False)
    registry.layer_class.cache_clear()
    with pytest.raises(PluginError, match="caffe-rival-testpack, caffe-zzz-testpack|"
                                          "caffe-zzz-testpack, caffe-rival-testpack"):
        registry.layer_class("Twin")


def test_the_environment_chooses_a_provider(monkeypatch):
    monkeypatch.setenv(registry.PROVIDERS_ENV, "Twin=caffe-rival-testpack")
    registry.layer_class.cache_clear()
    try:
        assert registry.layer_class("Twin").__module__ == "caffe_rival_testpack"
    finally:
        registry.layer_class.cache_clear()


def test_prefer_provider_chooses_a_provider():
    registry.prefer_provider("Twin", "caffe-zzz-testpack")
    try:
        assert registry.layer_class("Twin").__module__ == "caffe_zzz_testpack.zzz"
    finally:
        registry._preferred.clear()
        registry.layer_class.cache_clear()


def test_a_pack_that_fails_to_import_is_named_with_its_cause():
    with pytest.raises(PluginError, match=r"caffe-broken-testpack.*ModuleNotFoundError.*"
                                          r"caffe_missing_dependency_for_tests"):
        registry.layer_class("Broken")


def test_unknown_type_lists_types_and_the_closest_name():
    with pytest.raises(UnknownLayerTypeError) as err:
        registry.layer_class("Inptu")
    message = str(err.value)
    assert message.startswith("Unknown layer type: Inptu")
    assert "Split" in message and "ZZZ" in message and "Did you mean 'Input'?" in message


def test_runtime_registration():
    class Custom:
        pass

    registry.register_layer("CustomForTest", Custom)
    try:
        assert "CustomForTest" in registry.layer_types()
        assert registry.layer_class("CustomForTest") is Custom
    finally:
        registry.unregister_layer("CustomForTest")
    assert "CustomForTest" not in registry.layer_types()


def layer_param(text: str) -> caffe_pb2.LayerParameter:
    """A LayerParameter from text."""
    return proto_io.parse_text(text, caffe_pb2.LayerParameter())


def test_variants_of_one_type_are_chosen_by_what_the_layer_asks():
    one = layer_param('name: "p" type: "Pick" bottom: "a" top: "b"')
    two = layer_param('name: "p" type: "Pick" bottom: "a" bottom: "c" top: "b"')
    assert registry.layer_class_for(one).__name__ == "PickFirstLayer"
    assert registry.layer_class_for(two).__name__ == "PickSumLayer"
    assert [p.label for p in registry.providers_of("Pick")] == ["caffe-zzz-testpack[first]",
                                                                "caffe-zzz-testpack[sum]"]


def test_a_layer_no_variant_takes_is_refused_with_what_each_takes():
    three = layer_param('name: "p3" type: "Pick" bottom: "a" bottom: "b" bottom: "c" top: "d"')
    with pytest.raises(PluginError, match=r"no provider of layer type 'Pick' takes layer 'p3': "
                                          r"caffe-zzz-testpack\[first\] takes layers with one bottom; "
                                          r"caffe-zzz-testpack\[sum\] takes layers with two bottoms"):
        registry.layer_class_for(three)


def test_a_variant_can_be_chosen_by_name():
    registry.prefer_provider("Pick", "caffe-zzz-testpack[sum]")
    try:
        assert registry.layer_class_for(layer_param('type: "Pick" bottom: "a"')).__name__ == "PickSumLayer"
        assert registry.layer_class("Pick").__name__ == "PickSumLayer"
    finally:
        registry._preferred.clear()
        registry.layer_class.cache_clear()


def test_a_type_with_variants_needs_the_layer_to_choose():
    with pytest.raises(PluginError, match="which one depends on the layer: use layer_class_for"):
        registry.layer_class("Pick")


def test_a_net_builds_each_layer_with_its_variant():
    text = """
    layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 2 } } }
    layer { name: "same" type: "Pick" bottom: "x" top: "y" }
    layer { name: "sum" type: "Pick" bottom: "x" bottom: "y" top: "z" }
    """
    net = Net(proto_io.parse_text(text, caffe_pb2.NetParameter()))
    net.blob_by_name("x").data[...] = [1, 2]
    net.forward()
    assert net.blob_by_name("z").data.tolist() == [2.0, 4.0]


def test_pack_listing_command(capsys):
    assert caffe_packs.main([]) == 0
    out = capsys.readouterr().out
    assert ("caffe-zzz-testpack 0.0.1 (4 layer types)\n"
            "  Echo [doubling, plain], Pick [first, sum], Twin, ZZZ\n") in out
    assert "  parameter blocks: zzz_param (5000), zzz_py_param (60)\n" in out
    assert "  fields: DropoutParameter.zzz_keep (7)\n  aliases: PoolingParameter.zzz_ceil\n" in out
    assert "caffe-core 0.1.0 (2 layer types)\n  Input, Split" in out


def echo_net(*top_counts: int) -> caffe_pb2.NetParameter:
    """A net of Echo layers over one input, with these numbers of tops."""
    text = 'layer { name: "x" type: "Input" top: "x" input_param { shape { dim: 2 } } }'
    for i, count in enumerate(top_counts):
        tops = " ".join(f'top: "e{i}_{t}"' for t in range(count))
        text += f' layer {{ name: "e{i}" type: "Echo" bottom: "x" {tops} }}'
    return proto_io.parse_text(text, caffe_pb2.NetParameter())


def test_a_variant_can_be_chosen_by_the_other_layers_of_the_net():
    forked = echo_net(1, 2)
    assert [registry.layer_class_for(layer, forked.layer).__name__ for layer in forked.layer[1:]] == \
        ["DoublingEchoLayer", "DoublingEchoLayer"]
    plain = echo_net(1, 1)
    assert [registry.layer_class_for(layer, plain.layer).__name__ for layer in plain.layer[1:]] == \
        ["EchoLayer", "EchoLayer"]


def test_a_net_builds_every_layer_of_a_type_with_the_variant_its_layers_point_to():
    net = Net(echo_net(1, 2), phase=caffe_pb2.TEST)
    net.blob_by_name("x").data[...] = [1.5, -2.0]
    net.forward()
    assert net.blob_by_name("e0_0").data.tolist() == [3.0, -4.0]


def test_a_variant_that_reads_the_net_is_described_by_its_accepts_in_net():
    lone = layer_param('name: "e" type: "Echo" bottom: "a" top: "b" top: "c"')
    assert registry.layer_class_for(lone).__name__ == "DoublingEchoLayer"
    assert registry.says_which_layers(registry.layer_class_for(lone))


def test_provider_classes_imports_every_variant_of_a_type():
    assert [cls.__name__ for cls in registry.provider_classes("Pick")] == ["PickFirstLayer", "PickSumLayer"]
    with pytest.raises(PluginError, match="failed to import"):
        registry.provider_classes("Broken")
