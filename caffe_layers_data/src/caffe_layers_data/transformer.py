"""Caffe's DataTransformer: mean subtraction, scaling, cropping and mirroring of uint8 or float images.

`out = (pixel - mean) * scale`, with a mean_file indexed at the uncropped position. TEST crops the
centre; TRAIN crops at random, and mirroring (when asked) is random in both phases. The random draws
come from the transformer's own generator, seeded from the runtime generator when the layer is set up,
so a prefetch thread reproduces the same batches under `set_random_seed`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from caffe_core import proto_io
from caffe_core.blob import proto_shape
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2
from caffe_core.rng.caffe_stream import CaffeStream
from caffe_layers_data.describe import shape_text
from caffe_layers_data.generators import child_stream

log = logging.getLogger("caffe.data")


def load_mean_file(path: str) -> np.ndarray:
    """The CxHxW mean stored in a .binaryproto BlobProto (legacy 1xCxHxW or N-D)."""
    proto = proto_io.read_binary_file(path, caffe_pb2.BlobProto())
    shape = proto_shape(proto)
    values = np.asarray(proto.double_data or proto.data, dtype=np.float32)
    if len(shape) < 3 or values.size != int(np.prod(shape)):
        raise LayerSetupError(f"mean file {path}: expected a 1xCxHxW blob, got shape {shape} with "
                              f"{values.size} values")
    return values.reshape(shape)[(0,) * (len(shape) - 3)]


class DataTransformer:
    """Applies a TransformationParameter to batches of CxHxW images."""

    def __init__(self, param: caffe_pb2.TransformationParameter, phase: caffe_pb2.Phase, owner: str) -> None:
        self.param = param
        self.phase = phase
        self.owner = owner
        self.crop_size = int(param.crop_size)
        self.scale = np.float32(param.scale)
        self.mean: np.ndarray | None = None
        self.mean_values = np.asarray(param.mean_value, dtype=np.float32)
        if param.HasField("mean_file"):
            if len(self.mean_values):
                raise self.error("cannot specify mean_file and mean_value at the same time")
            log.info("Loading mean file from: %s", param.mean_file)
            self.mean = load_mean_file(param.mean_file)
        self.needs_rand = param.mirror or (phase == caffe_pb2.TRAIN and self.crop_size > 0)
        self.stream: CaffeStream | None = None
        self.init_rand()
        self._warned_force = False

    def init_rand(self) -> None:
        """DataTransformer::InitRand: a stream of its own, seeded from the main stream, when it mirrors or
        crops at random."""
        self.stream = child_stream() if self.needs_rand else None

    def error(self, message: str) -> LayerSetupError:
        """An error naming the owning layer."""
        return LayerSetupError(f"{self.owner}: transform_param: {message}")

    def decode_color(self) -> bool | None:
        """How encoded images are decoded: force_color → BGR, force_gray → gray, else native."""
        if self.param.force_color:
            return True
        if self.param.force_gray:
            return False
        return None

    def note_raw_datum(self) -> None:
        """Logs (once) that force_color/force_gray do not apply to raw datums, as Caffe does per datum."""
        if (self.param.force_color or self.param.force_gray) and not self._warned_force:
            log.error("force_color and force_gray only for encoded datum")
            self._warned_force = True

    def output_shape(self, shape: Sequence[int]) -> tuple[int, int, int]:
        """The transformed CxHxW shape of a CxHxW input."""
        c, h, w = shape
        if self.crop_size:
            return c, self.crop_size, self.crop_size
        return c, h, w

    def check(self, shape: Sequence[int], where: str) -> None:
        """Checks that a CxHxW input fits the crop, the mean file and the mean values; errors name `where`."""
        c, h, w = shape
        if self.crop_size and (h < self.crop_size or w < self.crop_size):
            raise self.error(f"crop_size {self.crop_size} is larger than {where} ({shape_text(shape)})")
        if self.mean is not None and self.mean.shape != (c, h, w):
            raise self.error(f"mean_file {self.param.mean_file} is {shape_text(self.mean.shape)} but {where} "
                             f"is {shape_text(shape)} (the mean must match the uncropped data)")
        if len(self.mean_values) not in (0, 1, c):
            raise self.error(f"give 1 mean_value or one per channel; got {len(self.mean_values)} for "
                             f"{c} channels ({where})")

    def check_batch_item(self, shape: Sequence[int], where: str,
                         first: tuple[Sequence[int], str] | None) -> None:
        """Checks an input, and against its batch's `first` (shape, name): channels, and size without crop."""
        if first is not None:
            first_shape, first_where = first
            if shape[0] != first_shape[0] or (not self.crop_size and tuple(shape) != tuple(first_shape)):
                raise self.error(f"{where} is {shape_text(shape)} but {first_where}, the first of its batch, "
                                 f"is {shape_text(first_shape)}; without a crop_size all must have one size")
        self.check(shape, where)

    def transform(self, batch: np.ndarray) -> np.ndarray:
        """Transforms an NxCxHxW batch (checked beforehand) into a float32 batch."""
        n, _, h, w = batch.shape
        return self._transform(batch, np.full(n, h), np.full(n, w))

    def transform_all(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """Transforms a list of checked CxHxW images, whose sizes may differ when they are cropped."""
        if len({image.shape for image in images}) == 1:
            return self.transform(np.stack(images))
        sizes = np.array([image.shape[1:] for image in images])
        padded = np.zeros((len(images), images[0].shape[0], *sizes.max(axis=0)), np.result_type(*images))
        for item, image in enumerate(images):
            padded[item, :, :image.shape[1], :image.shape[2]] = image
        return self._transform(padded, sizes[:, 0], sizes[:, 1])

    def _transform(self, batch: np.ndarray, heights: np.ndarray, widths: np.ndarray) -> np.ndarray:
        """Transforms a batch whose item i fills the top-left heights[i] x widths[i] of its planes."""
        n, c, h, w = batch.shape
        values = batch.astype(np.float32)
        if self.mean is not None:
            values -= self.mean
        elif len(self.mean_values):
            values -= np.broadcast_to(self.mean_values, (c,))[:, None, None]
        values *= self.scale
        crop = self.crop_size
        random_crop = bool(crop) and self.phase == caffe_pb2.TRAIN
        # Caffe draws per image, in order: Rand(2) for the mirror, then Rand for the row and column offsets.
        per_item = int(self.param.mirror) + 2 * int(random_crop)
        if per_item:
            # These draws are what needs_rand asked init_rand for a stream for.
            assert self.stream is not None
            draws = self.stream.rand_many(n * per_item).reshape(n, per_item)
        mirror = draws[:, 0] % 2 == 1 if self.param.mirror else np.zeros(n, bool)
        if not crop and not mirror.any():
            return values
        out_h, out_w = (crop, crop) if crop else (h, w)
        if random_crop:
            h_off = draws[:, -2] % (heights - crop + 1)
            w_off = draws[:, -1] % (widths - crop + 1)
        else:
            h_off = (heights - out_h) // 2
            w_off = (widths - out_w) // 2
        columns = np.where(mirror[:, None], np.arange(out_w)[::-1], np.arange(out_w))
        rows = h_off[:, None] + np.arange(out_h)
        cols = w_off[:, None] + columns
        return values[np.arange(n)[:, None, None, None], np.arange(c)[None, :, None, None],
                      rows[:, None, :, None], cols[:, None, None, :]]
