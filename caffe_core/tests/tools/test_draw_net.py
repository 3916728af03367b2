"""The draw_net tool: flags as Caffe's python/draw_net.py, exit codes, old formats upgraded first."""

import pytest

pytest.importorskip("pydot", reason="draw_net needs the optional 'draw' extra (pydot)")
from caffe_core.tools import draw_net  # noqa: E402

NET = """
name: "tiny"
layer { name: "data" type: "Data" top: "data" data_param { batch_size: 64 } include { phase: TRAIN } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        param { lr_mult: 1 } param { lr_mult: 2 } convolution_param { num_output: 20 kernel_size: 5 } }
"""


def test_draw_net_command(tmp_path, capsys):
    source = tmp_path / "net.prototxt"
    source.write_text(NET)
    out = tmp_path / "out.dot"
    assert draw_net.main([str(source), str(out), "--rankdir", "TB", "--phase", "TEST", "--display_lrm"]) == 0
    assert f"Drawing net to {out}" in capsys.readouterr().out
    text = out.read_text()
    assert "lr mult: 1.0, 2.0" in text and "Batch 64" not in text
    assert draw_net.main([str(source), str(out), "--phase", "VAL"]) == 2
    assert "Unknown phase: VAL" in capsys.readouterr().err
    assert draw_net.main([str(tmp_path / "missing.prototxt"), str(out)]) == 1
    assert "missing.prototxt: file not found" in capsys.readouterr().err


def test_draw_net_command_upgrades_old_formats(tmp_path):
    source = tmp_path / "v1.prototxt"
    source.write_text('input: "data"\ninput_dim: 1\ninput_dim: 3\ninput_dim: 1\ninput_dim: 1\n'
                      'layers { name: "ip" type: INNER_PRODUCT bottom: "data" top: "ip" }\n')
    out = tmp_path / "v1.dot"
    assert draw_net.main([str(source), str(out)]) == 0
    assert r'"ip\n(InnerProduct)"' in out.read_text()
