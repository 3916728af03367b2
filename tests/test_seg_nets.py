"""Small segmentation nets in the style of SegNet, ENet and PSPNet (std + vision + seg packs): they build with
the blob shapes worked out by hand, run forward (and the SegNet one backward), and a saved .caffemodel
reloads into a fresh net with identical outputs and the seg pack's field numbers on the wire. A Bayesian
SegNet samples its dropout masks at TEST; a SegNet reads its images and labels with DenseImageData; a Dropout
setting both SegNet's and caffe-fast-rcnn's fields is ambiguous."""

import numpy as np
import pytest
from google.protobuf.unknown_fields import UnknownFieldSet
from PIL import Image

from caffe_core import proto_io, registry, runtime
from caffe_core.errors import PluginError
from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2

CONV = ("convolution_param {{ num_output: {n} kernel_size: {k} pad: {p} stride: {s} "
        "weight_filler {{ type: 'msra' }} bias_filler {{ type: 'constant' value: 0.1 }} }}")
SEGNET_BN = ("bn_param { scale_filler { type: 'constant' value: 1 } "
             "shift_filler { type: 'constant' value: 0.01 } bn_mode: {mode} }")
PSPNET_BN = ("bn_param { slope_filler { type: 'constant' value: 1 } "
             "bias_filler { type: 'constant' value: 0 } }")


def conv(name, bottom, n, k=3, p=1, s=1):
    """A Convolution layer."""
    params = CONV.format(n=n, k=k, p=p, s=s)
    links = f"bottom: '{bottom}' top: '{name}'"
    return f"layer {{ name: '{name}' type: 'Convolution' {links} {params} }}\n"


def segnet_bn(name, bottom, mode="INFERENCE"):
    """A SegNet/ENet BN layer (in place)."""
    bn = SEGNET_BN.replace("{mode}", mode)
    return f"layer {{ name: '{name}' type: 'BN' bottom: '{bottom}' top: '{bottom}' {bn} }}\n"


def layer(name, kind, bottoms, tops, params=""):
    """Any layer."""
    links = " ".join([f"bottom: '{b}'" for b in bottoms] + [f"top: '{t}'" for t in tops])
    return f"layer {{ name: '{name}' type: '{kind}' {links} {params} }}\n"


def input_layer(shape):
    """The Input layer of blob 'data'."""
    dims = " ".join(f"dim: {d}" for d in shape)
    return f"layer {{ name: 'data' type: 'Input' top: 'data' input_param {{ shape {{ {dims} }} }} }}\n"


POOL_MASK = "pooling_param { pool: MAX kernel_size: 2 stride: 2 }"
DECONV = "convolution_param {{ num_output: {n} kernel_size: 2 stride: 2 weight_filler {{ type: 'msra' }} }}"


def mc_dropout(name, blob):
    """A Bayesian SegNet Dropout (in place), sampling its mask at TEST too."""
    params = "dropout_param { dropout_ratio: 0.5 sample_weights_test: true }"
    return layer(name, "Dropout", [blob], [blob], params)


def segnet_text(mode="INFERENCE", data=None, bayesian=False):
    """Two encoder stages (conv, BN, ReLU, pooling with mask) and two decoder stages (Upsample, conv...); a
    Bayesian one drops out the deepest encoder and decoder outputs."""
    text = "name: 'segnet_mini'\n" + (data or input_layer((2, 3, 10, 12)))
    bottom = "data"
    for stage, width in ((1, 4), (2, 8)):
        text += conv(f"conv{stage}", bottom, width) + segnet_bn(f"conv{stage}_bn", f"conv{stage}", mode)
        text += layer(f"relu{stage}", "ReLU", [f"conv{stage}"], [f"conv{stage}"])
        text += layer(f"pool{stage}", "Pooling", [f"conv{stage}"], [f"pool{stage}", f"pool{stage}_mask"],
                      POOL_MASK)
        bottom = f"pool{stage}"
    text += mc_dropout("encdrop2", "pool2") if bayesian else ""
    text += layer("upsample2", "Upsample", ["pool2", "pool2_mask"], ["pool2_D"],
                  "upsample_param { scale: 2 upsample_h: 5 upsample_w: 6 }")
    text += conv("conv2_D", "pool2_D", 4) + segnet_bn("conv2_D_bn", "conv2_D", mode)
    text += layer("relu2_D", "ReLU", ["conv2_D"], ["conv2_D"])
    text += mc_dropout("decdrop2", "conv2_D") if bayesian else ""
    text += layer("upsample1", "Upsample", ["conv2_D", "pool1_mask"], ["pool1_D"],
                  "upsample_param { scale: 2 }")
    text += conv("conv1_D", "pool1_D", 5)
    return text


def enet_text():
    """ENet's initial block, a downsampling bottleneck with the pooling mask, an upsampling bottleneck."""
    text = "name: 'enet_mini'\n" + input_layer((1, 3, 16, 16))
    text += conv("conv0", "data", 13, k=3, p=1, s=2)
    text += layer("pool0", "Pooling", ["data"], ["pool0"], POOL_MASK)
    text += layer("concat0", "Concat", ["conv0", "pool0"], ["concat0"])
    text += segnet_bn("bn0", "concat0") + layer("prelu0", "PReLU", ["concat0"], ["concat0"])
    text += layer("pool1", "Pooling", ["concat0"], ["pool1", "pool1_mask"], POOL_MASK)
    text += conv("conv1_a", "concat0", 4, k=2, p=0, s=2) + segnet_bn("bn1_a", "conv1_a")
    text += layer("prelu1_a", "PReLU", ["conv1_a"], ["conv1_a"])
    text += conv("conv1_b", "conv1_a", 4) + segnet_bn("bn1_b", "conv1_b")
    text += conv("conv1_c", "conv1_b", 16, k=1, p=0) + segnet_bn("bn1_c", "conv1_c")
    text += layer("add1", "Eltwise", ["pool1", "conv1_c"], ["add1"])
    text += conv("conv2_main", "add1", 16, k=1, p=0) + segnet_bn("bn2_main", "conv2_main")
    text += layer("upsample2", "Upsample", ["conv2_main", "pool1_mask"], ["upsample2"],
                  "upsample_param { scale: 2 }")
    text += conv("conv2_a", "add1", 4, k=1, p=0) + segnet_bn("bn2_a", "conv2_a")
    text += layer("deconv2", "Deconvolution", ["conv2_a"], ["deconv2"],
                  DECONV.format(n=4))
    text += segnet_bn("bn2_b", "deconv2") + conv("conv2_c", "deconv2", 16, k=1, p=0)
    text += layer("add2", "Eltwise", ["upsample2", "conv2_c"], ["add2"])
    text += layer("relu2", "ReLU", ["add2"], ["add2"])
    text += layer("fullconv", "Deconvolution", ["add2"], ["fullconv"],
                  DECONV.format(n=3))
    return text


def pspnet_text():
    """A conv + BN trunk, the pyramid pooling module (bins 1, 2, 3, 6) with Interp, Concat and the head."""
    text = "name: 'pspnet_mini'\n" + input_layer((1, 3, 24, 24))
    text += conv("conv5", "data", 8, k=3, p=1, s=2)
    text += f"layer {{ name: 'conv5/bn' type: 'BN' bottom: 'conv5' top: 'conv5' {PSPNET_BN} }}\n"
    text += layer("conv5/relu", "ReLU", ["conv5"], ["conv5"])
    branches = ["conv5"]
    for bins in (1, 2, 3, 6):
        size = 12 // bins
        text += layer(f"pool{bins}", "Pooling", ["conv5"], [f"pool{bins}"],
                      f"pooling_param {{ pool: AVE kernel_size: {size} stride: {size} }}")
        text += conv(f"pool{bins}_conv", f"pool{bins}", 2, k=1, p=0)
        text += (f"layer {{ name: 'pool{bins}_bn' type: 'BN' bottom: 'pool{bins}_conv' "
                 f"top: 'pool{bins}_conv' {PSPNET_BN} }}\n")
        text += layer(f"pool{bins}_relu", "ReLU", [f"pool{bins}_conv"], [f"pool{bins}_conv"])
        text += layer(f"pool{bins}_interp", "Interp", [f"pool{bins}_conv"], [f"pool{bins}_interp"],
                      "interp_param { height: 12 width: 12 }")
        branches.append(f"pool{bins}_interp")
    text += layer("concat", "Concat", branches, ["concat"])
    text += conv("conv6", "concat", 4, k=1, p=0)
    text += layer("conv6_interp", "Interp", ["conv6"], ["conv6_interp"], "interp_param { zoom_factor: 2 }")
    text += layer("prob", "Softmax", ["conv6_interp"], ["prob"])
    return text


SEG_TYPES = ("Convolution", "Deconvolution", "Pooling", "ReLU", "PReLU", "Concat", "Eltwise", "Softmax",
             "BN", "Upsample", "Interp")

NETS = {
    "segnet": (segnet_text, {"conv1": (2, 4, 10, 12), "pool1": (2, 4, 5, 6), "pool1_mask": (2, 4, 5, 6),
                             "pool2": (2, 8, 3, 3), "pool2_D": (2, 8, 5, 6), "conv2_D": (2, 4, 5, 6),
                             "pool1_D": (2, 4, 10, 12), "conv1_D": (2, 5, 10, 12)}),
    "enet": (enet_text, {"conv0": (1, 13, 8, 8), "pool0": (1, 3, 8, 8), "concat0": (1, 16, 8, 8),
                         "pool1": (1, 16, 4, 4), "conv1_a": (1, 4, 4, 4), "add1": (1, 16, 4, 4),
                         "upsample2": (1, 16, 8, 8), "deconv2": (1, 4, 8, 8), "add2": (1, 16, 8, 8),
                         "fullconv": (1, 3, 16, 16)}),
    "pspnet": (pspnet_text, {"conv5": (1, 8, 12, 12), "pool1": (1, 8, 1, 1), "pool2": (1, 8, 2, 2),
                             "pool3": (1, 8, 3, 3), "pool6": (1, 8, 6, 6), "pool6_interp": (1, 2, 12, 12),
                             "concat": (1, 16, 12, 12), "conv6_interp": (1, 4, 23, 23),
                             "prob": (1, 4, 23, 23)}),
}


def build(name: str, phase: int = caffe_pb2.TEST) -> Net:
    """The named small net, built in a phase."""
    return Net(proto_io.parse_text(NETS[name][0](), caffe_pb2.NetParameter()), phase=phase)


def run(net: Net) -> dict[str, np.ndarray]:
    """Every blob after a forward pass on a fixed random input."""
    data = net.blob_by_name("data")
    data.data[...] = np.random.default_rng(7).normal(size=data.shape)
    net.forward()
    return {name: net.blob_by_name(name).data.copy() for name in net.blob_names}


@pytest.mark.requires_layer_types(*SEG_TYPES)
@pytest.mark.parametrize("name", NETS)
def test_builds_with_the_shapes_worked_out_by_hand(name):
    net = build(name)
    assert {blob: net.blob_by_name(blob).shape for blob in NETS[name][1]} == NETS[name][1]
    blobs = run(net)
    assert all(np.isfinite(values).all() for values in blobs.values())


@pytest.mark.requires_layer_types(*SEG_TYPES)
def test_segnet_unpooling_puts_each_max_back():
    blobs = run(build("segnet"))
    upsampled, pooled = blobs["pool1_D"], blobs["conv2_D"]
    kept = upsampled != 0
    assert kept.sum() <= pooled.size and np.isin(upsampled[kept], pooled).all()


@pytest.mark.requires_layer_types(*SEG_TYPES)
def test_pspnet_probabilities_sum_to_one():
    prob = run(build("pspnet"))["prob"]
    np.testing.assert_allclose(prob.sum(axis=1), 1, rtol=1e-5)


@pytest.mark.requires_layer_types(*SEG_TYPES, "SoftmaxWithLoss")
def test_segnet_trains_backward_with_batch_statistics():
    text = segnet_text("LEARN") + input_layer((2, 1, 10, 12)).replace("'data'", "'label'")
    text += layer("loss", "SoftmaxWithLoss", ["conv1_D", "label"], ["loss"])
    net = Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    net.blob_by_name("data").data[...] = np.random.default_rng(1).normal(size=(2, 3, 10, 12))
    net.blob_by_name("label").data[...] = np.random.default_rng(2).integers(0, 5, size=(2, 1, 10, 12))
    net.forward()
    net.backward()
    first = net.layer_by_name("conv1").blobs[0].diff
    assert np.isfinite(first).all() and np.abs(first).sum() > 0
    assert np.abs(net.layer_by_name("conv1_bn").blobs[0].diff).sum() > 0


def stored_numbers(stored: caffe_pb2.LayerParameter) -> set[int]:
    """The LayerParameter field numbers a stored layer carries (declared, extensions and unknown)."""
    unknown = {field.field_number for field in UnknownFieldSet(stored)}
    return {field.number for field, _ in stored.ListFields()} | unknown


@pytest.mark.requires_layer_types(*SEG_TYPES)
@pytest.mark.parametrize(("name", "numbers"), [
    ("segnet", {"conv1_bn": 1111, "upsample2": 500}),
    ("enet", {"bn0": 1111, "upsample2": 500}),
    ("pspnet", {"conv5/bn": 152, "pool1_interp": 2143, "conv6_interp": 2143}),
])
def test_saved_caffemodel_reloads_identically_with_the_pack_numbers(tmp_path, name, numbers):
    net = build(name)
    for layer_ in net.layers:
        for blob in layer_.blobs:
            blob.data[...] = np.random.default_rng(blob.count).normal(0.5, 0.2, blob.shape)
    before = run(net)
    path = tmp_path / f"{name}.caffemodel"
    net.save(path)
    stored = {stored.name: stored for stored in read_net_binary(path).layer}
    for layer_name, number in numbers.items():
        assert number in stored_numbers(stored[layer_name]), layer_name
    if name == "pspnet":
        assert 1111 not in stored_numbers(stored["conv5/bn"])
    fresh = build(name)
    fresh.copy_trained_layers_from(path)
    after = run(fresh)
    for blob, values in before.items():
        np.testing.assert_array_equal(after[blob], values, err_msg=blob)


@pytest.mark.requires_layer_types(*SEG_TYPES, "Dropout")
def test_bayesian_segnet_samples_new_dropout_masks_at_test():
    text = segnet_text(bayesian=True) + layer("prob", "Softmax", ["conv1_D"], ["prob"])
    net = Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    assert {type(net.layer_by_name(name)).__name__ for name in ("encdrop2", "decdrop2")} == \
        {"SampleWeightsTestDropoutLayer"}
    net.blob_by_name("data").data[...] = np.random.default_rng(7).normal(size=(2, 3, 10, 12))

    def sample(seed):
        runtime.set_random_seed(seed)
        net.forward()
        return net.blob_by_name("prob").data.copy(), net.blob_by_name("pool2").data.copy()

    (first, pool2), (second, _), (again, _) = sample(1), sample(2), sample(1)
    assert not np.allclose(first, second)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_allclose(first.sum(axis=1), 1, rtol=1e-5)
    # The in-place dropout on pool2 left about half of it zero (ReLU outputs are rarely exactly 0).
    assert 0.25 < (pool2 == 0).mean() < 0.75


def dense_image_data(source, params):
    """A SegNet DenseImageData layer (tops data and label)."""
    return (f"layer {{ name: 'data' type: 'DenseImageData' top: 'data' top: 'label' "
            f"dense_image_data_param {{ source: '{source}' {params} }} }}\n")


def write_camvid_like(folder, count, size):
    """count random RGB images and label images of classes 0-4, and the list file naming them."""
    rng = np.random.default_rng(3)
    lines = []
    for i in range(count):
        Image.fromarray(rng.integers(0, 256, (*size, 3), dtype=np.uint8)).save(folder / f"im{i}.png")
        Image.fromarray(rng.integers(0, 5, size, dtype=np.uint8)).save(folder / f"lab{i}.png")
        lines.append(f"{folder}/im{i}.png {folder}/lab{i}.png")
    (folder / "list.txt").write_text("\n".join(lines) + "\n")
    return folder / "list.txt"


@pytest.mark.requires_layer_types(*SEG_TYPES, "DenseImageData", "SoftmaxWithLoss")
def test_segnet_trains_on_dense_image_data_read_from_files(tmp_path):
    source = write_camvid_like(tmp_path, 3, (12, 14))
    data = dense_image_data(source, "batch_size: 2 mirror: true crop_height: 10 crop_width: 12 shuffle: true")
    text = segnet_text("LEARN", data) + layer("loss", "SoftmaxWithLoss", ["conv1_D", "label"], ["loss"])
    text = text.replace("name: 'data' type: 'DenseImageData'",
                        "name: 'data' type: 'DenseImageData' transform_param { scale: 0.00390625 }")
    net = Net(proto_io.parse_text(text, caffe_pb2.NetParameter()), phase=caffe_pb2.TRAIN)
    assert net.blob_by_name("data").shape == (2, 3, 10, 12)
    assert net.blob_by_name("label").shape == (2, 1, 10, 12)
    files = [np.asarray(Image.open(tmp_path / f"lab{i}.png")) for i in range(3)]
    # Each label is a (possibly mirrored) 10 x 12 window of one of the label files.
    windows = [plane[h:h + 10, w:w + 12] for full in files for plane in (full, full[:, ::-1])
               for h in range(3) for w in range(3)]
    for _ in range(2):
        loss = net.forward()
        net.backward()
        assert np.isfinite(loss) and loss > 0
        image, label = net.blob_by_name("data").data, net.blob_by_name("label").data
        assert 0 <= image.min() and image.max() <= 1
        for item in label[:, 0]:
            assert any(np.array_equal(item, window) for window in windows)
    assert np.abs(net.layer_by_name("conv1").blobs[0].diff).sum() > 0


@pytest.mark.requires_layer_types("Dropout")
def test_a_dropout_with_both_forks_fields_is_ambiguous():
    labels = {provider.label for provider in registry.providers_of("Dropout")}
    both = {"caffe-layers-seg[sample_weights_test]", "caffe-layers-rcnn[scale_train]"}
    if not both <= labels:
        pytest.skip(f"needs both Dropout variants {sorted(both)}; installed: {sorted(labels)}")
    text = "name: 'drop' type: 'Dropout' dropout_param {{ {} }}"
    segnet = proto_io.parse_text(text.format("sample_weights_test: true"), caffe_pb2.LayerParameter())
    rcnn = proto_io.parse_text(text.format("scale_train: false"), caffe_pb2.LayerParameter())
    mixed = proto_io.parse_text(text.format("scale_train: false sample_weights_test: true"),
                                caffe_pb2.LayerParameter())
    assert registry.layer_class_for(segnet).__name__ == "SampleWeightsTestDropoutLayer"
    assert registry.layer_class_for(rcnn).__name__ == "ScaleTrainDropoutLayer"
    with pytest.raises(PluginError, match="each of them takes layer 'drop'") as raised:
        registry.layer_class_for(mixed)
    assert all(label in str(raised.value) for label in both)
