"""The pack scaffold's naming: module names, stable block numbers clear of the installed packs."""

from caffe_core.tools.new_pack import FIRST_NUMBER, NUMBER_SPAN, block_number, create_pack, snake_case


def test_snake_case_follows_caffes_block_names():
    assert [snake_case(n) for n in ("InnerProduct", "ZZZ", "PriorBox", "ReLU6", "conv")] == \
        ["inner_product", "zzz", "prior_box", "re_lu6", "conv"]


def test_block_numbers_are_stable_high_and_skip_taken_ones():
    number = block_number("zzz_param", set())
    assert FIRST_NUMBER <= number < FIRST_NUMBER + NUMBER_SPAN
    assert block_number("zzz_param", set()) == number
    assert block_number("zzz_param", {number, number + 1}) == number + 2


def test_the_derived_number_avoids_the_installed_blocks(tmp_path, monkeypatch):
    root = create_pack("caffe-layers-q", "Q", tmp_path)
    number = int((root / "src/caffe_layers_q/plugin.py").read_text().split("BLOCK_NUMBER = ")[1].split()[0])
    assert number == block_number("q_param", {5000, 60})


def test_the_pack_ships_its_type_information(tmp_path):
    root = create_pack("caffe-layers-q", "Q", tmp_path)
    assert (root / "src/caffe_layers_q/py.typed").read_text() == ""
    assert '[tool.setuptools.package-data]\n"*" = ["py.typed"]\n' in (root / "pyproject.toml").read_text()
