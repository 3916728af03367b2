"""pycaffe's `caffe.io`: proto/array conversions, image loading and resizing, and input preprocessing.

Images are read with Pillow (BVLC's used scikit-image, whose `imread(as_grey=...)` no longer exists).
As there, a loaded image is an H x W x K float32 array in [0, 1], RGB order.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from caffe.proto import caffe_pb2

if TYPE_CHECKING:
    from PIL import Image

# (height, width) and the like, as a sequence or an array.
Dims = Sequence[int] | np.ndarray

# scikit-image's rgb2gray weights (ITU-R BT.709), which pycaffe's load_image(color=False) applied.
_GRAY_WEIGHTS = np.array([0.2125, 0.7154, 0.0721])


# ----- proto / datum / ndarray conversion -----
def blobproto_to_array(blob: caffe_pb2.BlobProto, return_diff: bool = False) -> np.ndarray:
    """The data (or diff) of a BlobProto as an array of its shape (legacy 4-D fields when set)."""
    values = np.array(blob.diff if return_diff else blob.data)
    if any(blob.HasField(f) for f in ("num", "channels", "height", "width")):
        return values.reshape(blob.num, blob.channels, blob.height, blob.width)
    return values.reshape(tuple(blob.shape.dim))


def array_to_blobproto(arr: np.ndarray, diff: np.ndarray | None = None) -> caffe_pb2.BlobProto:
    """A BlobProto with the array's shape and values (and diff when given)."""
    arr = np.asarray(arr)
    blob = caffe_pb2.BlobProto()
    blob.shape.dim.extend(arr.shape)
    blob.data.extend(arr.astype(float).flat)
    if diff is not None:
        diff = np.asarray(diff)
        if diff.shape != arr.shape:
            raise ValueError(f"diff shape {diff.shape} differs from data shape {arr.shape}")
        blob.diff.extend(diff.astype(float).flat)
    return blob


def arraylist_to_blobprotovector_str(arraylist: Sequence[np.ndarray]) -> bytes:
    """A serialised BlobProtoVector of the arrays."""
    vec = caffe_pb2.BlobProtoVector()
    vec.blobs.extend([array_to_blobproto(arr) for arr in arraylist])
    return vec.SerializeToString()


def blobprotovector_str_to_arraylist(serialized: bytes) -> list[np.ndarray]:
    """The arrays of a serialised BlobProtoVector."""
    vec = caffe_pb2.BlobProtoVector()
    vec.ParseFromString(serialized)
    return [blobproto_to_array(blob) for blob in vec.blobs]


def array_to_datum(arr: np.ndarray, label: int | None = None) -> caffe_pb2.Datum:
    """A Datum from a C x H x W array: uint8 arrays as bytes in `data`, others in `float_data`."""
    arr = np.asarray(arr)
    if arr.ndim != 3:
        raise ValueError(f"Incorrect array shape: a Datum needs a 3-D (C x H x W) array, got {arr.shape}")
    datum = caffe_pb2.Datum()
    datum.channels, datum.height, datum.width = arr.shape
    if arr.dtype == np.uint8:
        datum.data = arr.tobytes()
    else:
        datum.float_data.extend(arr.astype(float).flat)
    if label is not None:
        datum.label = label
    return datum


def datum_to_array(datum: caffe_pb2.Datum) -> np.ndarray:
    """The C x H x W array of a Datum (uint8 from `data`, float64 from `float_data`); not the label."""
    shape = (datum.channels, datum.height, datum.width)
    if len(datum.data):
        return np.frombuffer(datum.data, dtype=np.uint8).reshape(shape).copy()
    return np.array(datum.float_data).astype(float).reshape(shape)


# ----- pre-processing -----
class Transformer:
    """Prepares H x W x K images for a net's inputs: resize, transpose, channel swap, scales and mean."""

    def __init__(self, inputs: Mapping[str, Sequence[int]]) -> None:
        self.inputs = {name: tuple(shape) for name, shape in inputs.items()}
        self.transpose: dict[str, tuple[int, ...]] = {}
        self.channel_swap: dict[str, tuple[int, ...]] = {}
        self.raw_scale: dict[str, float] = {}
        self.mean: dict[str, np.ndarray] = {}
        self.input_scale: dict[str, float] = {}

    def _check_input(self, in_: str) -> None:
        if in_ not in self.inputs:
            raise ValueError(f"{in_} is not one of the net inputs: {list(self.inputs)}")

    def preprocess(self, in_: str, data: np.ndarray) -> np.ndarray:
        """One H' x W' x K image -> K x H x W float32, in Caffe's order of steps."""
        return self.preprocess_batch(in_, np.asarray(data)[np.newaxis])[0]

    def preprocess_batch(self, in_: str, data: np.ndarray) -> np.ndarray:
        """N images (N x H' x W' x K) -> N x K x H x W float32, each as preprocess does it."""
        self._check_input(in_)
        batch = np.asarray(data).astype(np.float32, copy=False)
        in_dims = tuple(self.inputs[in_][2:])
        if batch.shape[1:3] != in_dims:
            batch = _resize_spatial(batch, 1, in_dims, 1)
        transpose = self.transpose.get(in_)
        if transpose is not None:
            batch = batch.transpose((0, *(axis + 1 for axis in transpose)))
        channel_swap = self.channel_swap.get(in_)
        if channel_swap is not None:
            batch = batch[:, list(channel_swap)]
        batch = np.array(batch, dtype=np.float32)
        raw_scale = self.raw_scale.get(in_)
        if raw_scale is not None:
            batch *= raw_scale
        mean = self.mean.get(in_)
        if mean is not None:
            batch -= mean
        input_scale = self.input_scale.get(in_)
        if input_scale is not None:
            batch *= input_scale
        return batch

    def deprocess(self, in_: str, data: np.ndarray) -> np.ndarray:
        """Undoes preprocess (except the resize): K x H x W -> H x W x K."""
        self._check_input(in_)
        decaf_in = np.array(data, dtype=np.float32).squeeze()
        input_scale = self.input_scale.get(in_)
        if input_scale is not None:
            decaf_in /= input_scale
        mean = self.mean.get(in_)
        if mean is not None:
            decaf_in += mean
        raw_scale = self.raw_scale.get(in_)
        if raw_scale is not None:
            decaf_in /= raw_scale
        channel_swap = self.channel_swap.get(in_)
        if channel_swap is not None:
            decaf_in = decaf_in[np.argsort(channel_swap)]
        transpose = self.transpose.get(in_)
        if transpose is not None:
            decaf_in = decaf_in.transpose(np.argsort(transpose))
        return decaf_in

    def set_transpose(self, in_: str, order: Sequence[int]) -> None:
        """The axis order that turns an H x W x K image into the blob's K x H x W, e.g. (2, 0, 1)."""
        self._check_input(in_)
        if len(order) != len(self.inputs[in_]) - 1:
            raise ValueError(f"Transpose order {tuple(order)} needs to have the same number of dimensions "
                             f"as the input ({len(self.inputs[in_]) - 1})")
        self.transpose[in_] = tuple(order)

    def set_channel_swap(self, in_: str, order: Sequence[int]) -> None:
        """The channel order after transpose, e.g. (2, 1, 0) for RGB -> BGR."""
        self._check_input(in_)
        if len(order) != self.inputs[in_][1]:
            raise ValueError(f"Channel swap {tuple(order)} needs to have the same number of dimensions as "
                             f"the input channels ({self.inputs[in_][1]})")
        self.channel_swap[in_] = tuple(order)

    def set_raw_scale(self, in_: str, scale: float) -> None:
        """Multiplies the raw [0, 1] input before the mean, e.g. 255 for CaffeNet."""
        self._check_input(in_)
        self.raw_scale[in_] = scale

    def set_mean(self, in_: str, mean: np.ndarray) -> None:
        """The mean to subtract: per channel (K,) or elementwise (K x H x W, or H x W for one channel)."""
        self._check_input(in_)
        mean = np.asarray(mean)
        shape = mean.shape
        if mean.ndim == 1:
            if shape[0] != self.inputs[in_][1]:
                raise ValueError(f"Mean channels incompatible with input: mean has {shape[0]}, "
                                 f"input {in_} has {self.inputs[in_][1]}")
            mean = mean[:, np.newaxis, np.newaxis]
        else:
            if len(shape) == 2:
                shape = (1, *shape)
            if len(shape) != 3:
                raise ValueError(f"Mean shape invalid: {mean.shape} (expected K, K x H x W or H x W)")
            if shape != tuple(self.inputs[in_][1:]):
                raise ValueError(f"Mean shape {shape} incompatible with input shape {self.inputs[in_][1:]}")
        self.mean[in_] = mean

    def set_input_scale(self, in_: str, scale: float) -> None:
        """Multiplies the input after mean subtraction."""
        self._check_input(in_)
        self.input_scale[in_] = scale


def image_input_transformer(in_: str, shape: Sequence[int], mean: np.ndarray | None = None,
                            input_scale: float | None = None, raw_scale: float | None = None,
                            channel_swap: Sequence[int] | None = None) -> Transformer:
    """A Transformer taking H x W x K images to one net input, set up as Classifier and Detector do."""
    transformer = Transformer({in_: shape})
    transformer.set_transpose(in_, (2, 0, 1))
    if mean is not None:
        transformer.set_mean(in_, mean)
    if input_scale is not None:
        transformer.set_input_scale(in_, input_scale)
    if raw_scale is not None:
        transformer.set_raw_scale(in_, raw_scale)
    if channel_swap is not None:
        transformer.set_channel_swap(in_, channel_swap)
    return transformer


# ----- image IO -----
def _image_array(image: Image.Image) -> np.ndarray:
    """A Pillow image as floats in [0, 1] (H x W, or H x W x C), scaled by its integer range."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I;16N"):
        return np.asarray(image, dtype=np.float64) / 65535.0
    if mode == "I":
        values = np.asarray(image, dtype=np.float64)
        return values / (65535.0 if image.format == "PNG" else 2147483647.0)
    if mode == "F":
        return np.asarray(image, dtype=np.float64)
    if mode in ("1", "L", "LA", "La"):
        image = image.convert("L")
    elif mode == "P":
        image = image.convert("RGBA" if "transparency" in image.info else "RGB")
    elif mode not in ("RGB", "RGBA"):
        image = image.convert("RGBA" if "A" in mode or "a" in mode else "RGB")
    return np.asarray(image, dtype=np.float64) / 255.0


def load_image(filename: str | os.PathLike, color: bool = True) -> np.ndarray:
    """An image as H x W x 3 (RGB, color=True) or H x W x 1 (gray) float32 in [0, 1]; alpha is dropped."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(filename) as image:
            image.load()
            img = _image_array(image)
    except UnidentifiedImageError:
        raise ValueError(f"{os.fspath(filename)}: not an image file Pillow can read") from None
    if not color and img.ndim == 3:
        img = img[:, :, :3] @ _GRAY_WEIGHTS
    if img.ndim == 2:
        img = img[:, :, np.newaxis]
        if color:
            img = np.tile(img, (1, 1, 3))
    elif img.shape[2] == 4:
        img = img[:, :, :3]
    return img.astype(np.float32)


def _resize_axis(im: np.ndarray, axis: int, size: int, interp_order: int) -> np.ndarray:
    old = im.shape[axis]
    if old == size:
        return im
    centers = (np.arange(size) + 0.5) * (old / size)
    if interp_order == 0:
        index = np.minimum(np.floor(centers).astype(np.int64), old - 1)
        return np.take(im, index, axis=axis)
    coords = np.clip(centers - 0.5, 0, old - 1)
    low = np.floor(coords).astype(np.int64)
    high = np.minimum(low + 1, old - 1)
    shape = [1] * im.ndim
    shape[axis] = size
    weight = (coords - low).reshape(shape)
    return np.take(im, low, axis=axis) * (1 - weight) + np.take(im, high, axis=axis) * weight


def resize_image(im: np.ndarray, new_dims: Dims, interp_order: int = 1) -> np.ndarray:
    """Resizes an H x W x K array to new_dims (height, width): interp_order 0 nearest, 1 bilinear."""
    # Pixel centres are aligned (source = (target + 0.5) * scale - 0.5) and edges clamped.
    if interp_order not in (0, 1):
        raise ValueError(f"resize_image supports interp_order 0 (nearest) and 1 (bilinear), "
                         f"not {interp_order}")
    im = np.asarray(im)
    if im.ndim != 3:
        raise ValueError(f"resize_image needs an H x W x K array, got shape {im.shape}")
    return _resize_spatial(im, 0, new_dims, interp_order)


def _resize_spatial(array: np.ndarray, first_axis: int, new_dims: Dims,
                    interp_order: int) -> np.ndarray:
    height, width = (int(d) for d in new_dims)
    resized = _resize_axis(array.astype(np.float64, copy=False), first_axis, height, interp_order)
    resized = _resize_axis(resized, first_axis + 1, width, interp_order)
    return resized.astype(np.float32)


def oversample(images: Sequence[np.ndarray] | np.ndarray, crop_dims: Dims) -> np.ndarray:
    """Ten crops per image (4 corners and centre, then their mirrors): (10 N) x h x w x K float32."""
    batch = np.stack([np.asarray(image) for image in images])
    crop_h, crop_w = (int(d) for d in crop_dims)
    height, width = batch.shape[1:3]
    center_top = int(height / 2.0 - crop_h / 2.0)
    center_left = int(width / 2.0 - crop_w / 2.0)
    corners = [(0, 0), (0, width - crop_w), (height - crop_h, 0), (height - crop_h, width - crop_w),
               (center_top, center_left)]
    crops = np.stack([batch[:, top:top + crop_h, left:left + crop_w] for top, left in corners], axis=1)
    crops = np.concatenate([crops, crops[:, :, :, ::-1]], axis=1)
    return crops.reshape((-1, crop_h, crop_w, batch.shape[3])).astype(np.float32)
