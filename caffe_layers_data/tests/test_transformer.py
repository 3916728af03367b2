"""DataTransformer: mean (file or values), scale, centre/random crop, mirror, and the shape checks."""

from __future__ import annotations

import numpy as np
import pytest

from caffe_core import proto_io, runtime
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.tools.compute_image_mean import mean_to_proto
from caffe_layers_data.transformer import DataTransformer


def _transformer(phase=caffe_pb2.TEST, **fields):
    return DataTransformer(caffe_pb2.TransformationParameter(**fields), phase, "layer 't'")


def _batch(n=2, c=2, h=4, w=5):
    return np.arange(n * c * h * w, dtype=np.uint8).reshape(n, c, h, w)


def test_mean_values_then_scale_in_float32():
    batch = _batch()
    out = _transformer(mean_value=[1.5, 3], scale=0.1).transform(batch)
    want = (batch.astype(np.float32) - np.float32([1.5, 3])[:, None, None]) * np.float32(0.1)
    assert out.dtype == np.float32 and np.array_equal(out, want)


def test_single_mean_value_is_replicated():
    batch = _batch()
    assert np.array_equal(_transformer(mean_value=[2]).transform(batch), batch.astype(np.float32) - 2)


def test_test_crop_takes_the_centre_and_indexes_the_mean_at_the_uncropped_position(tmp_path):
    mean = np.random.default_rng(0).uniform(0, 9, (2, 4, 5)).astype(np.float32)
    proto_io.write_binary_file(tmp_path / "m.binaryproto", mean_to_proto(mean))
    batch = _batch()
    out = _transformer(crop_size=3, mean_file=str(tmp_path / "m.binaryproto")).transform(batch)
    want = (batch.astype(np.float32) - mean)[:, :, 0:3, 1:4]
    assert np.array_equal(out, want)


def test_train_crops_stay_inside_and_mirror_reverses_columns():
    runtime.set_random_seed(11)
    transformer = _transformer(caffe_pb2.TRAIN, crop_size=2, mirror=True)
    image = np.arange(20, dtype=np.uint8).reshape(1, 1, 4, 5)
    crops = transformer.transform(np.repeat(image, 64, axis=0))[:, 0]
    steps = crops[:, 0, 1] - crops[:, 0, 0]
    assert set(steps.tolist()) == {1, -1}
    assert ((crops[:, 1, 0] - crops[:, 0, 0]) == 5).all()
    assert crops.min() >= 0 and crops.max() <= 19
    assert len({c.tobytes() for c in crops}) > 8


def test_mirror_without_crop_in_test_phase_flips_whole_rows():
    runtime.set_random_seed(2)
    out = _transformer(mirror=True).transform(np.repeat(_batch(1), 32, axis=0))
    flipped = [np.array_equal(o, _batch(1)[0, :, :, ::-1]) for o in out]
    assert any(flipped) and not all(flipped)


def test_checks_name_the_input():
    with pytest.raises(LayerSetupError, match="layer 't': transform_param: crop_size 6 is larger than rec"):
        _transformer(crop_size=6).check((1, 4, 5), "rec")
    with pytest.raises(LayerSetupError, match="give 1 mean_value or one per channel; got 2 for 3 channels"):
        _transformer(mean_value=[1, 2]).check((3, 4, 5), "rec")


def test_mean_file_and_mean_value_together_are_an_error(tmp_path):
    proto_io.write_binary_file(tmp_path / "m.binaryproto", mean_to_proto(np.zeros((1, 1, 1), np.float32)))
    with pytest.raises(LayerSetupError, match="cannot specify mean_file and mean_value"):
        _transformer(mean_file=str(tmp_path / "m.binaryproto"), mean_value=[1])


def test_images_of_different_sizes_are_centre_cropped_each_at_its_own_centre():
    small = np.arange(16, dtype=np.uint8).reshape(1, 4, 4)
    large = np.arange(30, dtype=np.uint8).reshape(1, 6, 5)
    out = _transformer(crop_size=3, mean_value=[1]).transform_all([small, large])
    want = np.stack([small[:, 0:3, 0:3], large[:, 1:4, 1:4]]).astype(np.float32) - 1
    assert out.dtype == np.float32 and np.array_equal(out, want)


def test_train_crops_of_different_sizes_stay_inside_each_image():
    runtime.set_random_seed(4)
    transformer = _transformer(caffe_pb2.TRAIN, crop_size=2)
    small = np.arange(9, dtype=np.uint8).reshape(1, 3, 3)
    large = 100 + np.arange(42, dtype=np.uint8).reshape(1, 6, 7)
    out = transformer.transform_all([small, large] * 40)
    small_crops, large_crops = out[0::2, 0], out[1::2, 0]
    assert small_crops.max() <= 8 and large_crops.min() >= 100 and large_crops.max() <= 141
    assert ((small_crops[:, 1, 0] - small_crops[:, 0, 0]) == 3).all()
    assert ((large_crops[:, 1, 0] - large_crops[:, 0, 0]) == 7).all()
    assert len({c.tobytes() for c in large_crops}) > 10


def test_batch_item_must_match_the_first_in_channels_and_without_crop_in_size():
    transformer = _transformer()
    transformer.check_batch_item((1, 4, 5), "b", ((1, 4, 5), "a"))
    with pytest.raises(LayerSetupError, match="b is 1x4x6 but a, the first of its batch, is 1x4x5"):
        transformer.check_batch_item((1, 4, 6), "b", ((1, 4, 5), "a"))
    cropping = _transformer(crop_size=3)
    cropping.check_batch_item((1, 4, 6), "b", ((1, 4, 5), "a"))
    with pytest.raises(LayerSetupError, match="b is 3x4x5 but a, the first of its batch, is 1x4x5"):
        cropping.check_batch_item((3, 4, 5), "b", ((1, 4, 5), "a"))
    with pytest.raises(LayerSetupError, match="crop_size 3 is larger than a"):
        cropping.check_batch_item((1, 2, 5), "a", None)


def test_double_data_mean_file_is_rounded_to_float_before_subtracting(tmp_path):
    # Blob<float>::FromProto copies double_data into float, and the transformer subtracts in float.
    mean = np.random.default_rng(1).uniform(0, 9, (2, 4, 5))
    proto = caffe_pb2.BlobProto(num=1, channels=2, height=4, width=5, double_data=mean.ravel().tolist())
    proto_io.write_binary_file(tmp_path / "m.binaryproto", proto)
    batch = _batch()
    out = _transformer(mean_file=str(tmp_path / "m.binaryproto")).transform(batch)
    assert np.array_equal(out, batch.astype(np.float32) - mean.astype(np.float32))
