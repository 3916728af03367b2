"""DenseImageData (SegNet): pairs read in list order and wrapped around, resizing (linear image, nearest
label), mirror and crop drawn as the fork draws them and applied to both images alike, mean / scale on the
image only, shuffling at each epoch, rand_skip, per-image shapes with batch_size 1, and the refusals."""

import numpy as np
import pytest
from PIL import Image

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.rng.caffe_stream import CaffeStream


def thread_stream(seed: int) -> CaffeStream:
    """The stream the layer mirrors and crops with: seeded by the main stream's first draw (no shuffle or
    rand_skip draws before it)."""
    return CaffeStream(seed).child()

def write_pairs(folder, images, labels):
    """Writes image{i}.png (HxWx3 RGB or HxW gray arrays) and label{i}.png; returns the list file."""
    lines = []
    for i, (image, label) in enumerate(zip(images, labels, strict=True)):
        Image.fromarray(np.asarray(image, np.uint8)).save(folder / f"image{i}.png")
        Image.fromarray(np.asarray(label, np.uint8)).save(folder / f"label{i}.png")
        lines.append(f"image{i}.png label{i}.png")
    source = folder / "list.txt"
    source.write_text("\n".join(lines) + "\n")
    return source


def constant_pairs(folder, count, size=(2, 3)):
    """Pair i: an image of RGB (i, 10 + i, 20 + i) and a label of value i everywhere."""
    images = [np.full((*size, 3), (i, 10 + i, 20 + i)) for i in range(count)]
    labels = [np.full(size, i) for i in range(count)]
    return write_pairs(folder, images, labels)


def position_pairs(folder, count=1, size=(4, 6)):
    """Images whose three channels are 100 i + 10 r + c and labels r * width + c (distinct per pixel)."""
    rows, cols = np.indices(size)
    images = [np.repeat((100 * i + 10 * rows + cols)[:, :, None], 3, axis=2) for i in range(count)]
    labels = [rows * size[1] + cols] * count
    return write_pairs(folder, images, labels)


def layer_text(source, params="", root="", transform=""):
    root_field = f"root_folder: '{root}/' " if root else ""
    return (f"name: 'data' type: 'DenseImageData' top: 'data' top: 'label' "
            f"dense_image_data_param {{ source: '{source}' {root_field}{params} }} {transform}")


def setup(make_layer, text, phase=caffe_pb2.TRAIN):
    layer = make_layer(text, phase)
    top = [Blob(), Blob()]
    layer.setup([], top)
    return layer, top


def forward(layer, top):
    layer.forward([], top)
    return top[0].cpu_data().copy(), top[1].cpu_data().copy()


def test_pairs_come_in_list_order_as_bgr_data_and_raw_labels_and_wrap_around(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 3)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 2", root=str(tmp_path)))
    assert top[0].shape == (2, 3, 2, 3) and top[1].shape == (2, 1, 2, 3)
    data, label = forward(layer, top)
    assert data[:, :, 0, 0].tolist() == [[20, 10, 0], [21, 11, 1]]
    assert (label[0] == 0).all() and (label[1] == 1).all()
    data, label = forward(layer, top)
    assert label[:, 0, 0, 0].tolist() == [2, 0]
    assert data[:, 0, 0, 0].tolist() == [22, 20]
    assert data.dtype == np.float32 and label.dtype == np.float32


def test_source_paths_are_relative_to_root_folder(make_layer, tmp_path, monkeypatch):
    source = constant_pairs(tmp_path, 2)
    monkeypatch.chdir(tmp_path)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1"))
    assert forward(layer, top)[1].max() == 0


def test_new_size_resizes_image_linearly_and_label_by_nearest(make_layer, tmp_path):
    image = np.repeat(np.array([[[0], [100]], [[0], [100]]]), 3, axis=2)
    source = write_pairs(tmp_path, [image], [[[1, 2], [1, 2]]])
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1 new_height: 2 new_width: 4",
                                              root=str(tmp_path)))
    data, label = forward(layer, top)
    assert data.shape == (1, 3, 2, 4) and label.shape == (1, 1, 2, 4)
    # OpenCV INTER_LINEAR from 2 to 4 columns samples at -0.25, 0.25, 0.75, 1.25; nearest at 0, 0, 1, 1.
    assert (data[0, :, :] == [0, 25, 75, 100]).all()
    assert (label[0, 0] == [1, 1, 2, 2]).all()


def test_gray_images_when_is_color_is_false(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 1)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1 is_color: false", root=str(tmp_path)))
    data, _ = forward(layer, top)
    # libpng's gray of RGB (0, 10, 20): (9797 * 0 + 19234 * 10 + 3737 * 20) >> 15.
    assert data.shape == (1, 1, 2, 3) and (data == (19234 * 10 + 3737 * 20) >> 15).all()


def test_mirror_flips_image_and_label_together_as_drawn(make_layer, tmp_path):
    source = position_pairs(tmp_path)
    runtime.set_random_seed(5)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1 mirror: true", root=str(tmp_path)))
    stream = thread_stream(5)
    draws = [stream.rand_below(2) for _ in range(8)]
    assert 0 < sum(draws) < 8
    rows, cols = np.indices((4, 6))
    for flip in draws:
        data, label = forward(layer, top)
        expected_cols = cols[:, ::-1] if flip else cols
        np.testing.assert_array_equal(data[0, 1], 10 * rows + expected_cols)
        np.testing.assert_array_equal(label[0, 0], rows * 6 + expected_cols)


def test_crop_takes_one_window_from_image_and_label(make_layer, tmp_path):
    source = position_pairs(tmp_path)
    runtime.set_random_seed(11)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 2 crop_height: 2 crop_width: 3",
                                              root=str(tmp_path)))
    assert top[0].shape == (2, 3, 2, 3) and top[1].shape == (2, 1, 2, 3)
    stream = thread_stream(11)
    offsets = [(stream.rand_below(3), stream.rand_below(4)) for _ in range(6)]
    assert len(set(offsets)) > 1
    rows, cols = np.indices((4, 6))
    for batch in range(3):
        data, label = forward(layer, top)
        for item in range(2):
            h, w = offsets[2 * batch + item]
            window = (slice(h, h + 2), slice(w, w + 3))
            np.testing.assert_array_equal(data[item, 2], (10 * rows + cols)[window])
            np.testing.assert_array_equal(label[item, 0], (rows * 6 + cols)[window])


def test_mirror_is_drawn_before_the_crop_offsets(make_layer, tmp_path):
    source = position_pairs(tmp_path)
    runtime.set_random_seed(2)
    params = "batch_size: 1 mirror: true crop_height: 3 crop_width: 2"
    layer, top = setup(make_layer, layer_text(source, params, root=str(tmp_path)))
    stream = thread_stream(2)
    rows, cols = np.indices((4, 6))
    labels = rows * 6 + cols
    for _ in range(6):
        flip, h, w = stream.rand_below(2), stream.rand_below(2), stream.rand_below(5)
        source_labels = labels[:, ::-1] if flip else labels
        np.testing.assert_array_equal(forward(layer, top)[1][0, 0], source_labels[h:h + 3, w:w + 2])


def test_mean_values_and_scale_apply_to_the_image_only(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 1)
    transform = "transform_param { scale: 0.5 mean_value: 4 mean_value: 2 mean_value: 1 }"
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1", str(tmp_path), transform))
    data, label = forward(layer, top)
    # BGR (20, 10, 0) minus the per-channel means, times 0.5; the label keeps its value 0.
    assert data[0, :, 0, 0].tolist() == [8, 4, -0.5]
    assert (label == 0).all()


def test_mean_file_matches_the_cropped_image(make_layer, tmp_path):
    source = position_pairs(tmp_path)
    mean = caffe_pb2.BlobProto()
    mean.shape.dim.extend([1, 3, 2, 3])
    mean.data.extend(np.arange(18, dtype=np.float32).tolist())
    (tmp_path / "mean.binaryproto").write_bytes(mean.SerializeToString())
    transform = f"transform_param {{ mean_file: '{tmp_path}/mean.binaryproto' scale: 2 }}"
    runtime.set_random_seed(4)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1 crop_height: 2 crop_width: 3",
                                              str(tmp_path), transform))
    stream = thread_stream(4)
    h, w = stream.rand_below(3), stream.rand_below(4)
    data, label = forward(layer, top)
    rows, cols = np.indices((4, 6))
    window = (10 * rows + cols)[h:h + 2, w:w + 3]
    np.testing.assert_array_equal(data[0], (window - np.arange(18).reshape(3, 2, 3)) * 2)
    np.testing.assert_array_equal(label[0, 0], (rows * 6 + cols)[h:h + 2, w:w + 3])


def test_mean_file_of_another_size_is_refused(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 1)
    mean = caffe_pb2.BlobProto()
    mean.shape.dim.extend([1, 3, 4, 4])
    mean.data.extend([0.0] * 48)
    (tmp_path / "mean.binaryproto").write_bytes(mean.SerializeToString())
    transform = f"transform_param {{ mean_file: '{tmp_path}/mean.binaryproto' }}"
    with pytest.raises(LayerSetupError, match="mean_file .* is 3x4x4 but the image of .*list.txt line 1"):
        setup(make_layer, layer_text(source, "batch_size: 1", str(tmp_path), transform))


def test_shuffle_draws_a_new_order_at_each_epoch(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 6)
    runtime.set_random_seed(9)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 6 shuffle: true", root=str(tmp_path)))
    # caffe::shuffle of the list in place at setup and at each epoch, with the stream seeded first.
    stream = CaffeStream(9).child()
    first = list(range(6))
    stream.shuffle(first)
    second = first.copy()
    stream.shuffle(second)
    assert forward(layer, top)[1][:, 0, 0, 0].tolist() == first
    assert forward(layer, top)[1][:, 0, 0, 0].tolist() == second
    assert first != second and sorted(second) == list(range(6))


def test_rand_skip_starts_at_a_drawn_pair(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 5)
    runtime.set_random_seed(3)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 5 rand_skip: 4", root=str(tmp_path)))
    skip = CaffeStream(3).rand() % 4
    assert skip > 0
    assert forward(layer, top)[1][:, 0, 0, 0].tolist() == [(skip + i) % 5 for i in range(5)]


def test_rand_skip_past_the_list_is_refused(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 1)
    runtime.set_random_seed(3)
    with pytest.raises(LayerSetupError, match="rand_skip drew [1-9][0-9]*, but .* lists only 1 pairs"):
        setup(make_layer, layer_text(source, "batch_size: 1 rand_skip: 1000", root=str(tmp_path)))


def test_batch_of_one_takes_each_images_size(make_layer, tmp_path):
    images = [np.zeros((2, 3, 3)), np.ones((4, 5, 3))]
    source = write_pairs(tmp_path, images, [np.zeros((2, 3)), np.ones((4, 5))])
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)), caffe_pb2.TEST)
    assert [blob.shape for blob in top] == [(1, 3, 2, 3), (1, 1, 2, 3)]
    data, label = forward(layer, top)
    assert data.shape == (1, 3, 2, 3)
    data, label = forward(layer, top)
    assert data.shape == (1, 3, 4, 5) and label.shape == (1, 1, 4, 5) and (label == 1).all()


def test_a_batch_of_images_of_different_sizes_is_refused(make_layer, tmp_path):
    source = write_pairs(tmp_path, [np.zeros((2, 3, 3)), np.zeros((4, 5, 3))],
                         [np.zeros((2, 3)), np.zeros((4, 5))])
    layer, top = setup(make_layer, layer_text(source, "batch_size: 2", root=str(tmp_path)))
    with pytest.raises(CaffeError, match=r"'data'.*list\.txt line 2: the image is 3x4x5 but the data top is "
                                         r"3x2x3"):
        layer.forward([], top)


def test_missing_source_is_refused_naming_the_path(make_layer, tmp_path):
    with pytest.raises(LayerSetupError, match=r"dense_image_data_param\.source: cannot open the list file "
                                              r".*nowhere\.txt"):
        setup(make_layer, layer_text(tmp_path / "nowhere.txt", "batch_size: 1"))


def test_unset_source_and_empty_list_are_refused(make_layer, tmp_path):
    with pytest.raises(LayerSetupError, match=r"dense_image_data_param\.source .* is not set"):
        setup(make_layer, "name: 'data' type: 'DenseImageData' top: 'a' top: 'b' "
                          "dense_image_data_param { batch_size: 1 }")
    (tmp_path / "empty.txt").write_text("\n \n")
    with pytest.raises(LayerSetupError, match="lists no image"):
        setup(make_layer, layer_text(tmp_path / "empty.txt", "batch_size: 1"))


def test_a_line_without_two_paths_is_refused_naming_it(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 1)
    source.write_text(source.read_text() + "image0.png\n")
    with pytest.raises(LayerSetupError, match=r"list\.txt line 2: expected '<image> <label image>'"):
        setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)))


def test_a_missing_listed_file_is_refused_naming_its_line(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 2)
    (tmp_path / "label1.png").unlink()
    with pytest.raises(LayerSetupError, match=r"list\.txt line 2: .*label1\.png does not exist"):
        setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)))


def test_an_unreadable_image_is_refused_naming_its_line(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 2)
    (tmp_path / "image1.png").write_bytes(b"not an image")
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)))
    layer.forward([], top)
    with pytest.raises(CaffeError, match=r"'data'.*list\.txt line 2: .*image1\.png: cannot decode image"):
        layer.forward([], top)
    (tmp_path / "image0.png").write_bytes(b"not an image")
    with pytest.raises(LayerSetupError, match=r"list\.txt line 1: .*image0\.png: cannot decode image"):
        setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)))


def test_a_colour_label_is_refused_naming_its_line(make_layer, tmp_path):
    colour = np.zeros((2, 3, 3))
    colour[..., 0] = 128
    source = write_pairs(tmp_path, [np.zeros((2, 3, 3))], [colour])
    with pytest.raises(LayerSetupError, match=r"list\.txt line 1: label image .*label0\.png is not gray"):
        setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)))


def test_a_label_of_another_size_is_refused(make_layer, tmp_path):
    source = write_pairs(tmp_path, [np.zeros((2, 3, 3))], [np.zeros((3, 2))])
    with pytest.raises(LayerSetupError, match=r"line 1: the image is 2x3 but its label image is 3x2"):
        setup(make_layer, layer_text(source, "batch_size: 1", root=str(tmp_path)))


def test_a_crop_larger_than_the_image_is_refused(make_layer, tmp_path):
    source = constant_pairs(tmp_path, 1)
    with pytest.raises(LayerSetupError, match=r"crop_height x crop_width \(3x3\) is larger than the image "
                                              r"\(2x3\)"):
        setup(make_layer, layer_text(source, "batch_size: 1 crop_height: 3 crop_width: 3", str(tmp_path)))


@pytest.mark.parametrize(("params", "field"), [
    ("batch_size: 1 new_height: 4", r"new_height \(4\) and new_width \(0\) must be set together"),
    ("batch_size: 1 new_width: 4", r"new_height \(0\) and new_width \(4\) must be set together"),
    ("batch_size: 1 crop_height: 2", r"crop_height \(2\) and crop_width \(0\) must be set together"),
    ("batch_size: 1 crop_width: 2", r"crop_height \(0\) and crop_width \(2\) must be set together"),
    ("", r"dense_image_data_param\.batch_size must be positive"),
])
def test_bad_settings_are_refused_naming_the_field(make_layer, tmp_path, params, field):
    source = constant_pairs(tmp_path, 1)
    with pytest.raises(LayerSetupError, match=field):
        setup(make_layer, layer_text(source, params, root=str(tmp_path)))


@pytest.mark.parametrize(("transform", "message"), [
    ("mirror: true", r"transform_param\.mirror would .* use dense_image_data_param\.mirror"),
    ("crop_size: 2", r"transform_param\.crop_size would .* dense_image_data_param\.crop_height and crop_w"),
])
def test_transform_mirror_and_crop_size_are_refused(make_layer, tmp_path, transform, message):
    source = constant_pairs(tmp_path, 1)
    text = layer_text(source, "batch_size: 1", str(tmp_path), f"transform_param {{{transform}}}")
    with pytest.raises(LayerSetupError, match=message):
        setup(make_layer, text)


def test_the_blocks_mean_file_is_not_used(make_layer, tmp_path, caplog):
    source = constant_pairs(tmp_path, 1)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 1 mean_file: 'absent.binaryproto'",
                                              root=str(tmp_path)))
    assert forward(layer, top)[0][0, :, 0, 0].tolist() == [20, 10, 0]
    assert "dense_image_data_param.mean_file is not used" in caplog.text


def test_gpu_mode_reads_on_the_host(make_layer, tmp_path, device_mode):
    source = constant_pairs(tmp_path, 2)
    layer, top = setup(make_layer, layer_text(source, "batch_size: 2", root=str(tmp_path)))
    layer.forward([], top)
    assert top[1].cpu_data()[:, 0, 0, 0].tolist() == [0, 1]
    assert top[0].cpu_data()[1, :, 1, 2].tolist() == [21, 11, 1]
