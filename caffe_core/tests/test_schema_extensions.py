"""What packs add to Caffe's schema: blocks (compiled or declared in Python, at any free number), fields of
Caffe's own messages (extensions and aliases), the errors for what nobody provides, and clashes."""

import os
import subprocess
import sys
import textwrap
import types

import pytest

from caffe_core import plugins, proto_io
from caffe_core.errors import PluginError, PrototxtError
from caffe_core.hookspecs import hookimpl
from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import (
    ExtraField,
    FieldAlias,
    ParamBlock,
    get_extra_field,
    get_param_block,
    has_extra_field,
    has_param_block,
    prefer_param_provider,
)
from caffe_core.testing.wire import wire_field_numbers

TEXT = """
name: "plugin-net"
layer { name: "in" type: "Input" top: "x" input_param { shape { dim: 1 dim: 3 } } }
layer { name: "z" type: "ZZZ" bottom: "x" top: "y" zzz_param { mul: 2.5 note: "kept" } }
"""


def parse(text: str, source: str = "<string>") -> caffe_pb2.NetParameter:
    """A NetParameter parsed from text."""
    return proto_io.parse_text(text, caffe_pb2.NetParameter(), source)


def test_block_parses_and_prints_under_its_plain_name():
    param = parse(TEXT)
    block = get_param_block(param.layer[1], "zzz_param")
    assert block.mul == 2.5 and block.note == "kept"
    assert has_param_block(param.layer[1], "zzz_param") and not has_param_block(param.layer[0], "zzz_param")
    text = proto_io.to_text(param)
    assert "  zzz_param {\n    mul: 2.5\n    note: \"kept\"\n  }" in text
    assert parse(text) == param


def test_block_is_validated_against_the_pack_schema():
    with pytest.raises(PrototxtError, match=r"bad\.prototxt:1:36: Couldn't parse float"):
        parse('layer { name: "z" zzz_param { mul: "many" } }', "bad.prototxt")
    with pytest.raises(PrototxtError, match="no field named \"factor\""):
        parse('layer { name: "z" zzz_param { factor: 2 } }')


def test_block_survives_a_caffemodel_round_trip(tmp_path):
    net = Net(parse(TEXT))
    path = tmp_path / "plugin.caffemodel"
    net.save(path)
    loaded = read_net_binary(path)
    assert get_param_block(loaded.layer[1], "zzz_param").mul == 2.5
    rebuilt = Net(loaded)
    rebuilt.blob_by_name("x").data[...] = [1, 2, 4]
    rebuilt.forward()
    assert rebuilt.blob_by_name("y").data.tolist() == [[2.5, 5.0, 10.0]]


def test_python_declared_block_below_1000_parses_prints_and_keeps_its_number():
    layer = parse('layer { name: "p" zzz_py_param { mode: ADD offsets: [1, 2] filler { type: "xavier" } } }'
                  ).layer[0]
    block = get_param_block(layer, "zzz_py_param")
    assert (block.mode, block.factor, list(block.offsets)) == (0, 2.0, [1.0, 2.0])
    assert block.filler.type == "xavier"
    assert 60 in wire_field_numbers(layer.SerializeToString())
    text = proto_io.to_text(layer)
    assert text.startswith('name: "p"\nzzz_py_param {\n  mode: ADD\n')
    assert proto_io.parse_text(text, caffe_pb2.LayerParameter()) == layer


def test_a_fresh_process_reads_blocks_and_fields_from_a_binary_file_first(tmp_path):
    layer = parse('layer { name: "p" zzz_py_param { factor: 4 } dropout_param { zzz_keep: false } }').layer[0]
    path = tmp_path / "layer.binaryproto"
    path.write_bytes(layer.SerializeToString())
    code = f"""
        from caffe_core import proto_io
        from caffe_core.schema_extensions import get_extra_field, get_param_block
        from caffe_core.proto import caffe_pb2
        layer = proto_io.read_binary_file({str(path)!r}, caffe_pb2.LayerParameter())
        print(get_param_block(layer, "zzz_py_param").factor, get_extra_field(layer.dropout_param, "zzz_keep"))
    """
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["4.0", "False"]


def test_extra_field_of_a_caffe_message_parses_prints_and_uses_its_number():
    layer = parse('layer { name: "d" type: "Dropout" dropout_param { dropout_ratio: 0.3 zzz_keep: false } }'
                  ).layer[0]
    assert has_extra_field(layer.dropout_param, "zzz_keep")
    assert get_extra_field(layer.dropout_param, "zzz_keep") is False
    assert get_extra_field(caffe_pb2.DropoutParameter(), "zzz_keep") is True
    assert wire_field_numbers(layer.dropout_param.SerializeToString()) == [1, 7]
    text = proto_io.to_text(layer)
    assert "dropout_param {\n  dropout_ratio: 0.3\n  zzz_keep: false\n}" in text
    assert proto_io.parse_text(text, caffe_pb2.LayerParameter()) == layer


def test_alias_is_written_in_caffes_own_fields():
    pooling = parse('layer { pooling_param { kernel_size: 3 zzz_ceil: False } }').layer[0].pooling_param
    assert pooling.round_mode == caffe_pb2.PoolingParameter.FLOOR
    assert parse('layer { pooling_param { zzz_ceil: true } }').layer[0].pooling_param.HasField("round_mode")


def test_alias_takes_every_spelling_of_a_bool_and_nothing_else():
    alias = FieldAlias({"true": "round_mode: CEIL", "false": "round_mode: FLOOR"})
    assert {alias.replacement(v) for v in ("true", "True", "t", "1")} == {"round_mode: CEIL"}
    assert {alias.replacement(v) for v in ("false", "False", "f", "0")} == {"round_mode: FLOOR"}
    assert alias.replacement("yes") is None
    assert FieldAlias({"1": "a: 1"}).replacement("true") is None


def test_alias_with_a_value_it_does_not_know_names_the_place():
    with pytest.raises(PrototxtError, match=r"net\.prototxt:2:19: PoolingParameter\.zzz_ceil takes true or "
                                            r"false, got 'maybe'"):
        parse('layer {\n  pooling_param { zzz_ceil: maybe }\n}', "net.prototxt")


def test_a_fork_field_no_pack_provides_is_an_error_that_says_a_pack_adds_it():
    with pytest.raises(PrototxtError) as err:
        parse('layer {\n  pooling_param { kernel_size: 2 fork_only_mode: true }\n}', "dense.prototxt")
    message = str(err.value)
    assert message.startswith('dense.prototxt:2:34: Message type "caffe_core.PoolingParameter" has no field '
                              'named "fork_only_mode"; BVLC Caffe\'s PoolingParameter has no such field')
    assert "a layer pack adds it (install the pack that provides 'PoolingParameter.fork_only_mode'" in message


def test_a_misspelt_caffe_field_gets_the_closest_name():
    with pytest.raises(PrototxtError, match="no field named \"kernal_size\"; did you mean 'kernel_size'"):
        parse('layer { pooling_param { kernal_size: 2 } }')


def test_an_unknown_fork_block_is_refused_naming_the_layer_and_the_block():
    text = 'layer {\n name: "p"\n unknown_fork_param { min_size: 30 ratio: [2, 3] }\n type: "NoPackHasIt"\n}'
    with pytest.raises(PrototxtError) as err:
        parse(text, "ssd.prototxt")
    message = str(err.value)
    assert message.startswith("ssd.prototxt:3:2: layer 'p' (type NoPackHasIt) has a parameter block "
                              "'unknown_fork_param' that no installed layer pack declares.")
    assert "CAFFE_LENIENT_PARAMS=1" in message


def test_a_syntax_error_elsewhere_is_reported_before_an_unknown_block():
    with pytest.raises(PrototxtError, match=r"net\.prototxt:2:19: .*no field named \"bottm\""):
        parse('layer { unknown_fork_param { a: 1 } }\nlayer { name: "x" bottm: "y" }', "net.prototxt")


@pytest.mark.parametrize("how", ["env", "call"])
def test_lenient_mode_drops_unknown_blocks_with_a_warning(caplog, monkeypatch, how):
    if how == "env":
        monkeypatch.setenv("CAFFE_LENIENT_PARAMS", "1")
    else:
        monkeypatch.setattr(proto_io, "_lenient", None)  # restored after the test
        proto_io.set_lenient_params(True)
    text = 'layer {\n name: "p"\n type: "NoPackHasIt"\n unknown_fork_param { min_size: 30 ratio: [2, 3] }\n}'
    param = parse(text, "ssd.prototxt")
    assert param.layer[0].type == "NoPackHasIt" and param.layer[0].name == "p"
    assert ("ssd.prototxt:4: ignoring parameter block 'unknown_fork_param' of layer 'p' (type NoPackHasIt)"
            in caplog.text)


def test_set_lenient_params_overrides_the_environment(monkeypatch):
    monkeypatch.setenv("CAFFE_LENIENT_PARAMS", "1")
    monkeypatch.setattr(proto_io, "_lenient", False)
    with pytest.raises(PrototxtError, match="unknown_fork_param"):
        parse('layer { unknown_fork_param { a: 1 } }')
    proto_io.set_lenient_params(None)
    assert proto_io.lenient_params()


def test_the_error_names_the_pack_the_index_says_declares_the_block(monkeypatch):
    from caffe_core import pack_index

    monkeypatch.setattr(pack_index, "known_index", lambda: {
        "caffe-layers-later": {"layer_types": ["Later"], "param_blocks": ["later_param"], "fields": []}})
    with pytest.raises(PrototxtError) as err:
        parse('layer {\n  name: "soon"\n  type: "Later"\n  later_param { mode: "L2" }\n}', "deploy.prototxt")
    assert ("deploy.prototxt:4:3: layer 'soon' (type Later) has a parameter block 'later_param' that no "
            "installed layer pack declares (caffe-layers-later provides it: pip install caffe-layers-later)"
            in str(err.value))


@pytest.fixture
def extra_plugins():
    """Registers hook objects as if further distributions provided them; removes them afterwards."""
    names = []

    def add(distribution: str, **hooks) -> None:
        plugin = types.SimpleNamespace(**{name: hookimpl(fn) for name, fn in hooks.items()})
        names.append(f"{distribution}:test")
        plugins.register_plugin(plugin, name=names[-1])

    yield add
    for name in names:
        plugins.unregister_plugin(name)
    from caffe_core import schema_extensions

    schema_extensions._preferred.clear()


def py_block(number: int) -> ParamBlock:
    """The test pack's Python-declared message as a block at another number."""
    from caffe_zzz_testpack.py_params import ZZZPyParameter

    return ParamBlock(ZZZPyParameter, number)


def test_two_packs_claiming_one_block_name_are_named_and_a_preference_settles_it(extra_plugins):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"zzz_param": py_block(5001)})
    with pytest.raises(PluginError, match="parameter block 'zzz_param' claimed by both 'caffe-zzz-testpack' "
                                          "and 'other-pack'.*prefer_param_provider"):
        parse(TEXT)
    prefer_param_provider("zzz_param", "caffe-zzz-testpack")
    assert get_param_block(parse(TEXT).layer[1], "zzz_param").mul == 2.5


def test_two_packs_claiming_one_number_are_named(extra_plugins):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"other_param": py_block(60)})
    with pytest.raises(PluginError, match=r"parameter blocks 'zzz_py_param' and 'other_param' \(both number "
                                          r"60\) claimed by both 'caffe-zzz-testpack' and 'other-pack'"):
        parse(TEXT)


def test_the_environment_chooses_between_two_packs_claiming_one_number():
    code = """
        import types
        from caffe_core import plugins, schema_extensions
        from caffe_core.hookspecs import hookimpl
        from caffe_zzz_testpack.py_params import ZZZPyParameter
        blocks = lambda: {"other_param": schema_extensions.ParamBlock(ZZZPyParameter, 60)}
        plugins.register_plugin(types.SimpleNamespace(caffe_param_blocks=hookimpl(blocks)), "other-pack:x")
        blocks = schema_extensions.param_blocks()
        print("other_param" in blocks, "zzz_py_param" in blocks, "zzz_param" in blocks)
    """
    env = {**os.environ, "CAFFE_PARAM_PROVIDERS": "other_param=other-pack"}
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                         check=True, env=env).stdout
    assert out.split() == ["True", "False", "True"]


@pytest.mark.parametrize(("number", "message"), [
    (100, "uses number 100, which is Caffe's LayerParameter.transform_param"),
    (5, "uses number 5, which is Caffe's LayerParameter.loss_weight"),
    (19500, "not a valid protobuf field number"),
])
def test_block_numbers_caffe_uses_are_refused(extra_plugins, number, message):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"other_param": py_block(number)})
    with pytest.raises(PluginError, match=message):
        parse(TEXT)


def test_block_named_like_a_caffe_field_is_refused(extra_plugins):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"pooling_param": py_block(777)})
    with pytest.raises(PluginError, match="clashes with the field 'pooling_param' of Caffe's LayerParameter"):
        parse(TEXT)


def test_message_field_numbers_caffe_uses_are_refused(extra_plugins):
    extra_plugins("other-pack", caffe_message_fields=lambda: {"DropoutParameter.x": ExtraField("bool", 1)})
    with pytest.raises(PluginError, match="field 'DropoutParameter.x' of 'other-pack' uses number 1, which "
                                          "is Caffe's DropoutParameter.dropout_ratio"):
        parse(TEXT)


def test_two_packs_adding_one_field_clash_unless_they_agree(extra_plugins):
    same = FieldAlias({"true": "round_mode: CEIL", "false": "round_mode: FLOOR"})
    extra_plugins("agreeing-pack", caffe_message_fields=lambda: {"PoolingParameter.zzz_ceil": same})
    assert parse('layer { pooling_param { zzz_ceil: false } }').layer[0].pooling_param.round_mode == 1
    other = FieldAlias({"true": "round_mode: FLOOR", "false": "round_mode: CEIL"})
    extra_plugins("other-pack", caffe_message_fields=lambda: {"PoolingParameter.zzz_ceil": other})
    with pytest.raises(PluginError, match="message field 'PoolingParameter.zzz_ceil' claimed by both"):
        parse(TEXT)


def test_free_numbers_are_named_when_a_block_takes_none_of_them(extra_plugins):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"other_param": py_block(536870912)})
    with pytest.raises(PluginError, match=r"parameter block 'other_param' of 'other-pack' uses number "
                                          r"536870912; LayerParameter leaves 12-99, 149 and up free"):
        parse(TEXT)


def test_a_block_that_is_no_param_block_is_refused(extra_plugins):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"other_param": "zzz"})
    with pytest.raises(PluginError, match="block 'other_param' of 'other-pack' is a str, not a ParamBlock"):
        parse(TEXT)


@pytest.mark.parametrize(("key", "value", "message"), [
    ("DropoutParameter", ExtraField("bool", 30), "field 'DropoutParameter' of 'other-pack': the key must be"),
    ("DropoutParameter.x", 3, "field 'DropoutParameter.x' of 'other-pack' is a int, not an ExtraField"),
])
def test_bad_message_fields_are_refused(extra_plugins, key, value, message):
    extra_plugins("other-pack", caffe_message_fields=lambda: {key: value})
    with pytest.raises(PluginError, match=message):
        parse(TEXT)


def test_two_packs_adding_fields_at_one_number_name_the_message(extra_plugins):
    other = ExtraField("bool", 7)
    extra_plugins("other-pack", caffe_message_fields=lambda: {"DropoutParameter.other": other})
    with pytest.raises(PluginError, match=r"message fields 'DropoutParameter\.zzz_keep' and "
                                          r"'DropoutParameter\.other' \(both number 7 of DropoutParameter\)"):
        parse(TEXT)


def test_the_pack_not_chosen_is_logged(extra_plugins, caplog):
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"zzz_param": py_block(5001)})
    prefer_param_provider("zzz_param", "caffe-zzz-testpack")
    with caplog.at_level("INFO", logger="caffe.schema_extensions"):
        parse(TEXT)
    assert "parameter block 'zzz_param' of 'other-pack' is not used: 'caffe-zzz-testpack' was chosen" \
        in caplog.messages


def test_the_environment_names_preferences_with_spaces_and_several_items(extra_plugins, monkeypatch):
    monkeypatch.setenv("CAFFE_PARAM_PROVIDERS", "odd=a=b,zzz_param = caffe-zzz-testpack")
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"zzz_param": py_block(5001)})
    assert get_param_block(parse(TEXT).layer[1], "zzz_param").mul == 2.5


def test_unknown_blocks_and_fields_are_named():
    with pytest.raises(PluginError, match="no installed pack declares the parameter block 'nope_param'"):
        get_param_block(caffe_pb2.LayerParameter(), "nope_param")
    with pytest.raises(PluginError, match="no installed pack adds the field 'nope' to DropoutParameter"):
        get_extra_field(caffe_pb2.DropoutParameter(), "nope")


def test_installed_additions_list_a_packs_blocks_before_its_fields():
    from caffe_core.schema_extensions import installed_additions

    mine = [(a.key, a.kind, a.number) for a in installed_additions()
            if a.distribution == "caffe-zzz-testpack"]
    assert mine == [("zzz_param", "block", 5000), ("zzz_py_param", "block", 60),
                    ("DropoutParameter.zzz_keep", "field", 7), ("PoolingParameter.zzz_ceil", "alias", None)]


def test_schema_problems_name_the_distributions_at_fault(extra_plugins):
    from caffe_core.schema_extensions import schema_problems

    assert schema_problems() == []
    extra_plugins("other-pack", caffe_param_blocks=lambda: {"other_param": py_block(60)})
    [problem] = schema_problems()
    assert problem[:2] == ("caffe-zzz-testpack", "other-pack") and "both number 60" in problem[2]


def test_an_alias_of_other_values_takes_them_as_written():
    assert FieldAlias({"1": "a: 1", "2": "a: 2"}).replacement("1") == "a: 1"


def test_a_block_and_a_field_declared_fresh_parse_print_and_keep_their_numbers(extra_plugins):
    extra_plugins("probe-pack", caffe_param_blocks=lambda: {"probe_block_param": py_block(5077)},
                  caffe_message_fields=lambda: {
                      "DropoutParameter.probe_scale": ExtraField("float", 5078, 0.5),
                      "DropoutParameter.probe_list": ExtraField("int32", 5079, repeated=True, packed=True)})
    layer = parse('layer { name: "p" probe_block_param { factor: 3 } '
                  'dropout_param { probe_list: [1, 2] } }').layer[0]
    assert get_param_block(layer, "probe_block_param").factor == 3
    assert get_extra_field(layer.dropout_param, "probe_scale") == 0.5
    assert list(get_extra_field(layer.dropout_param, "probe_list")) == [1, 2]
    assert wire_field_numbers(layer.SerializeToString()) == [1, 108, 5077]
    tag = 5079 << 3 | 2  # packed: one length-delimited record holding both values
    packed = bytes([tag & 0x7F | 0x80, tag >> 7 & 0x7F | 0x80, tag >> 14, 2, 1, 2])
    assert layer.dropout_param.SerializeToString() == packed
    assert caffe_pb2.LayerParameter.FromString(layer.SerializeToString()) == layer
