"""Layer discovery through real installed distributions (tests/plugin_packs), lazily."""

import subprocess
import sys
import textwrap

import pytest

from caffe_core import registry
from caffe_core.errors import PluginError, UnknownLayerTypeError
from caffe_core.tools import list_packs


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
        layer_modules = sorted(m for m in sys.modules
                               if m.startswith(("caffe_layers_", "caffe_zzz_testpack.zzz")) and
                               not m.endswith(("plugin", "_pb2")) and m.count(".") >= 1)
        print(net.blob_by_name("y").data.tolist(), layer_modules)
    """)
    # Plugin hook modules may load; of the layer modules, only those of the types used do.
    assert out == "[3.0, 6.0] ['caffe_zzz_testpack.zzz']"


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


def test_pack_listing_command(capsys):
    assert list_packs.main([]) == 0
    out = capsys.readouterr().out
    assert "caffe-zzz-testpack 0.0.1 (2 layer types)\n  Twin, ZZZ" in out
    assert "caffe-core 0.1.0 (2 layer types)\n  Input, Split" in out
