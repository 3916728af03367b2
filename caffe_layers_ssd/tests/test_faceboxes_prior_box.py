"""PriorBox[faceboxes]: the fork's golden cases, which nets choose it (the net, not the layer), prior counts,
one densified cell derived by hand, FaceBoxes' clip default, and refusals of the layers the fork overflows."""

import numpy as np
import pytest

from caffe_core import registry
from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_core.testing.golden import check_layer_case
from caffe_layers_ssd.faceboxes_prior_box import FaceBoxesPriorBoxLayer, has_densified_form
from caffe_layers_ssd.prior_box import PriorBoxLayer

FACEBOXES = "caffe-layers-ssd[faceboxes]"


@pytest.fixture
def prefer_faceboxes(prefer_provider):
    """The user's choice of FaceBoxes' PriorBox for every PriorBox (caffe_core.registry.prefer_provider)."""
    prefer_provider("PriorBox", FACEBOXES)


def test_golden_densified_layer_chooses_itself(golden_case):
    """Three min sizes (32, 64, 128): FaceBoxes' form, built by this class with no preference."""
    assert check_layer_case(golden_case("faceboxes_priorbox_3min")) == []


@pytest.mark.parametrize("case", ["faceboxes_priorbox_min256", "faceboxes_priorbox_max_ar_clip"])
def test_golden_lone_layers_with_the_provider_preferred(golden_case, prefer_faceboxes, case):
    assert check_layer_case(golden_case(case)) == []


def test_lone_min256_layer_is_ssds_without_a_preference(golden_case, make_layer):
    """Alone, the 256 layer looks like SSD's: SSD's half size 128 misses the fork's 127.5."""
    assert len(check_layer_case(golden_case("faceboxes_priorbox_min256"))) == 1
    layer = make_layer("name: 'pb' type: 'PriorBox' prior_box_param { min_size: 256 step: 64 clip: false }")
    bottom, top = [Blob((1, 1, 2, 3)), Blob((1, 3, 128, 192))], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    assert type(layer) is PriorBoxLayer
    np.testing.assert_allclose(top[0].cpu_data()[0, 0, :4] * [192, 128, 192, 128], [-96, -96, 160, 160])


def priorbox(name, params, bottom="feat"):
    return (f"layer {{ name: '{name}' type: 'PriorBox' bottom: '{bottom}' bottom: 'data' top: '{name}' "
            f"prior_box_param {{ {params} }} }}")


def net_of(*layers, feat=(1, 1, 2, 2), data=(1, 3, 64, 64)):
    def shape(dims):
        return " ".join(f"dim: {d}" for d in dims)
    text = (f"layer {{ name: 'in' type: 'Input' top: 'feat' top: 'data' "
            f"input_param {{ shape {{ {shape(feat)} }} shape {{ {shape(data)} }} }} }}\n" + "\n".join(layers))
    return Net(parse_text(text, caffe_pb2.NetParameter(), source="<test net>"), phase=caffe_pb2.TEST)


def priorboxes(net):
    return [layer for layer in net.layers if layer.type == "PriorBox"]


def test_every_priorbox_of_a_faceboxes_net_is_faceboxes():
    """The deploy net's three PriorBox layers: the densified one makes the 256 and 512 ones FaceBoxes' too."""
    net = net_of(priorbox("pb1", "min_size: 32 min_size: 64 min_size: 128 step: 32 clip: false"),
                 priorbox("pb2", "min_size: 256 step: 64 clip: false"),
                 priorbox("pb3", "min_size: 512 step: 128 clip: false"))
    assert [type(layer) for layer in priorboxes(net)] == [FaceBoxesPriorBoxLayer] * 3
    net.forward()
    # pb2: one prior per cell (2 x 2 cells), centre (32, 32) in a 64 x 64 image, half size 127.5, unclipped.
    np.testing.assert_allclose(net.blob_by_name("pb2").data[0, 0, :4],
                               np.array([32 - 127.5, 32 - 127.5, 32 + 127.5, 32 + 127.5]) / 64, rtol=1e-6)
    assert net.blob_by_name("pb1").shape == (1, 2, 2 * 2 * 21 * 4)


@pytest.mark.parametrize("sizes", ["min_size: 256", "min_size: 32", "min_size: 32 min_size: 64",
                                   "min_size: 16 min_size: 48 min_size: 128"])
def test_nets_without_the_densified_form_are_ssds(sizes):
    """One or two min sizes, or three without 32 or 64: SSD's PriorBox (it gives 1, 1, 2 and 3 priors)."""
    net = net_of(priorbox("pb", sizes), priorbox("other", "min_size: 20 aspect_ratio: 2"))
    assert [type(layer) for layer in priorboxes(net)] == [PriorBoxLayer] * 2


def test_a_fractional_densified_size_counts_as_truncated():
    """The fork truncates min sizes to integers: 32.9 is 32, so (32.9, 64, 128) is FaceBoxes' form."""
    net = net_of(priorbox("pb", "min_size: 32.9 min_size: 64 min_size: 128"))
    assert type(priorboxes(net)[0]) is FaceBoxesPriorBoxLayer
    assert priorboxes(net)[0].num_priors == 21


def test_the_preferred_provider_takes_a_lone_layer(prefer_faceboxes):
    net = net_of(priorbox("pb", "min_size: 256"))
    assert type(priorboxes(net)[0]) is FaceBoxesPriorBoxLayer


def test_the_environment_chooses_the_provider_for_a_lone_layer(monkeypatch):
    monkeypatch.setenv(registry.PROVIDERS_ENV, f"PriorBox={FACEBOXES}")
    registry.layer_class.cache_clear()
    assert type(priorboxes(net_of(priorbox("pb", "min_size: 256")))[0]) is FaceBoxesPriorBoxLayer
    monkeypatch.delenv(registry.PROVIDERS_ENV)
    assert type(priorboxes(net_of(priorbox("pb", "min_size: 256")))[0]) is PriorBoxLayer


def run(make_layer, params, feat=(1, 1, 1, 1), img=(1, 3, 64, 64)):
    layer = make_layer(f"name: 'pb' type: 'PriorBox' prior_box_param {{ {params} }}")
    bottom, top = [Blob(feat), Blob(img)], [Blob()]
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    return layer, top[0].cpu_data()


@pytest.mark.parametrize(("params", "count"), [
    ("min_size: 32 min_size: 64 min_size: 128", 21),                     # 16 + 4 + 1
    ("min_size: 64 min_size: 128 min_size: 32", 21),                     # any order of the three
    ("min_size: 32 min_size: 64 min_size: 128 max_size: 64 max_size: 128 max_size: 256", 24),
    ("min_size: 32 min_size: 100 min_size: 128 aspect_ratio: 2 flip: false", 21),  # 16 + 1 + 1 + 3 x 1
])
def test_prior_counts_of_densified_layers(make_layer, params, count):
    layer, top = run(make_layer, params)
    assert type(layer) is FaceBoxesPriorBoxLayer
    assert layer.num_priors == count and top.shape == (1, 2, count * 4)


def test_one_densified_cell_by_hand(make_layer):
    """One 64 x 64 cell, centre (32, 32): 32 -> 16 squares of half size 15.5 centred at 32 + (-16, -8, 0, 8),
    rows of y outside columns of x; 64 -> 4 squares of half size 31.5 at 32 + (-16, 0); 128 -> one of 63.5."""
    _, top = run(make_layer, "min_size: 32 min_size: 64 min_size: 128 step: 64 clip: false "
                             "variance: 0.1 variance: 0.1 variance: 0.2 variance: 0.2")
    expected = []
    for cy in (16, 24, 32, 40):
        for cx in (16, 24, 32, 40):
            expected.append([cx - 15.5, cy - 15.5, cx + 15.5, cy + 15.5])
    for cy in (16, 32):
        for cx in (16, 32):
            expected.append([cx - 31.5, cy - 31.5, cx + 31.5, cy + 31.5])
    expected.append([32 - 63.5, 32 - 63.5, 32 + 63.5, 32 + 63.5])
    np.testing.assert_allclose(top[0, 0].reshape(21, 4), np.array(expected) / 64, rtol=1e-6)
    np.testing.assert_array_equal(top[0, 1].reshape(21, 4),
                                  np.tile(np.float32([0.1, 0.1, 0.2, 0.2]), (21, 1)))


def test_max_size_and_aspect_ratio_boxes_keep_ssds_half_sizes(prefer_faceboxes, make_layer):
    """min 20 max 45, ratio 4: the min square is 19 wide (the -1), the max one sqrt(900) = 30, the ratio
    box 40 x 10 (no -1); a 100 x 100 image, centre 50."""
    layer, top = run(make_layer, "min_size: 20 max_size: 45 aspect_ratio: 4 flip: false",
                     img=(1, 1, 100, 100))
    assert layer.num_priors == 3
    boxes = top[0, 0].reshape(3, 4) * 100
    np.testing.assert_allclose(boxes[:, 2] - boxes[:, 0], [19, 30, 40], rtol=1e-5)
    np.testing.assert_allclose(boxes[:, 3] - boxes[:, 1], [19, 30, 10], rtol=1e-5)


def test_clip_defaults_to_false_as_in_the_fork(make_layer):
    """FaceBoxes' PriorBoxParameter declares clip false (the pack's message: true): unset, no clipping."""
    _, top = run(make_layer, "min_size: 32 min_size: 64 min_size: 128")
    assert top[0, 0].min() < 0 and top[0, 0].max() > 1
    _, clipped = run(make_layer, "min_size: 32 min_size: 64 min_size: 128 clip: true")
    assert clipped[0, 0].min() == 0 and clipped[0, 0].max() == 1


@pytest.mark.parametrize(("params", "what"), [
    ("min_size: 32 min_size: 64 min_size: 128 aspect_ratio: 2", r"for 21 priors .* writes 27 .*past the end"),
    ("min_size: 32 min_size: 100 min_size: 128", r"for 21 priors .* writes 18 .*short of"),
])
def test_densified_layers_the_fork_overflows_are_refused(make_layer, params, what):
    with pytest.raises(LayerSetupError, match=rf"'pb'.*prior_box_param.min_size.*{what}"):
        run(make_layer, params)


def test_a_lone_min_size_32_in_a_faceboxes_net_is_refused():
    """The fork writes 16 boxes into a one-prior top (heap overflow): a clear error, not silent numbers."""
    with pytest.raises(LayerSetupError,
                       match=r"'lone'.*min_size \[32\].*for 1 priors .* writes 16 .*past the end"):
        net_of(priorbox("pb", "min_size: 32 min_size: 64 min_size: 128"), priorbox("lone", "min_size: 32"))


def test_a_lone_min_size_64_with_the_provider_preferred_is_refused(prefer_faceboxes, make_layer):
    with pytest.raises(LayerSetupError, match=r"min_size \[64\].*for 1 priors .* writes 4 "):
        run(make_layer, "min_size: 64")


def test_denser_prior_boxes_is_refused(make_layer):
    with pytest.raises(LayerSetupError, match="denser_prior_boxes is TextBoxes"):
        run(make_layer, "min_size: 32 min_size: 64 min_size: 128 denser_prior_boxes: true")


def test_ssds_checks_still_apply(make_layer):
    with pytest.raises(LayerSetupError, match="max_size"):
        run(make_layer, "min_size: 32 min_size: 64 min_size: 128 max_size: 30 max_size: 70 max_size: 130")



@pytest.mark.parametrize(("sizes", "form"), [
    ("min_size: nan min_size: 33 min_size: 65", False),    # NaN is neither 32 nor 64; 33 and 65 are not
    ("min_size: inf min_size: 31.9 min_size: 128", False),
    ("min_size: 1 min_size: 64.5 min_size: 128", True),     # 64.5 truncates to 64
])
def test_the_form_compares_truncated_sizes(sizes, form):
    layer = parse_text(f"name: 'pb' type: 'PriorBox' prior_box_param {{ {sizes} }}",
                       caffe_pb2.LayerParameter())
    assert has_densified_form(layer) is form
