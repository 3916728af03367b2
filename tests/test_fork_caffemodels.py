"""`.caffemodel` files written by a Caffe fork (the inisis fork's golden-case weights) load, their layers'
fork blocks decode at the fork's field numbers, and the files this project writes carry those numbers."""

from pathlib import Path

import pytest

from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.schema_extensions import get_param_block, has_param_block
from caffe_core.testing.wire import wire_field_numbers

ROOT = Path(__file__).resolve().parents[1]
# golden case, layer, block, the fork's LayerParameter number for it, one field of the block and its value
CASES = [
    pytest.param("caffe_layers_ssd/tests/golden/normalize_chan_scale", "norm", "norm_param", 206,
                 "channel_shared", False, marks=pytest.mark.requires_layer_types("Normalize"), id="ssd"),
    pytest.param("caffe_layers_seg/tests/golden/bn_test_phase", "bn", "bn_param", 1111, "frozen", False,
                 marks=pytest.mark.requires_layer_types("BN"), id="seg"),
]


@pytest.mark.parametrize(("case", "layer", "block", "number", "field", "value"), CASES)
def test_fork_written_weights_load_and_round_trip_at_the_forks_numbers(tmp_path, case, layer, block, number,
                                                                       field, value):
    folder = ROOT / case
    stored = next(lp for lp in read_net_binary(folder / "weights.caffemodel").layer if lp.name == layer)
    assert number in wire_field_numbers(stored.SerializeToString())
    assert has_param_block(stored, block) and getattr(get_param_block(stored, block), field) == value
    net = Net(folder / "net.prototxt")
    net.copy_trained_layers_from(folder / "weights.caffemodel")
    net.save(tmp_path / "again.caffemodel")
    written = next(lp for lp in read_net_binary(tmp_path / "again.caffemodel").layer if lp.name == layer)
    assert number in wire_field_numbers(written.SerializeToString())
    assert [list(b.data) for b in written.blobs] == [list(b.data) for b in stored.blobs]
