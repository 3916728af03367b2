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

from caffe_core import proto_io, runtime
from caffe_core.blob import proto_shape
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2

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

    def __init__(self, param: caffe_pb2.TransformationParameter, phase: int, owner: str) -> None:
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
        needs_rand = param.mirror or (phase == caffe_pb2.TRAIN and self.crop_size > 0)
        seed = int(runtime.rng().integers(2**63)) if needs_rand else 0
        self.rng = np.random.default_rng(seed)
        self._warned_force = False

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
            raise self.error(f"crop_size {self.crop_size} is larger than {where} ({c}x{h}x{w})")
        if self.mean is not None and self.mean.shape != (c, h, w):
            mc, mh, mw = self.mean.shape
            raise self.error(f"mean_file {self.param.mean_file} is {mc}x{mh}x{mw} but {where} is {c}x{h}x{w} "
                             f"(the mean must match the uncropped data)")
        if len(self.mean_values) not in (0, 1, c):
            raise self.error(f"give 1 mean_value or one per channel; got {len(self.mean_values)} for "
                             f"{c} channels ({where})")

    def transform(self, batch: np.ndarray) -> np.ndarray:
        """Transforms an NxCxHxW batch (checked beforehand) into a float32 batch."""
        n, c, h, w = batch.shape
        x = batch.astype(np.float32)
        if self.mean is not None:
            x -= self.mean
        elif len(self.mean_values):
            x -= np.broadcast_to(self.mean_values, (c,))[:, None, None]
        x *= self.scale
        crop = self.crop_size
        mirror = self.rng.integers(0, 2, n).astype(bool) if self.param.mirror else np.zeros(n, bool)
        if not crop and not mirror.any():
            return x
        oh, ow = (crop, crop) if crop else (h, w)
        if crop and self.phase == caffe_pb2.TRAIN:
            h_off = self.rng.integers(0, h - crop + 1, n)
            w_off = self.rng.integers(0, w - crop + 1, n)
        else:
            h_off = np.full(n, (h - oh) // 2)
            w_off = np.full(n, (w - ow) // 2)
        columns = np.where(mirror[:, None], np.arange(ow)[::-1], np.arange(ow))
        rows = h_off[:, None] + np.arange(oh)
        cols = w_off[:, None] + columns
        return x[np.arange(n)[:, None, None, None], np.arange(c)[None, :, None, None],
                 rows[:, None, :, None], cols[:, None, None, :]]

    def transform_all(self, images: Sequence[np.ndarray]) -> np.ndarray:
        """Transforms a list of CxHxW images; differently sized ones (allowed with a crop) go one by one."""
        if len({image.shape for image in images}) == 1:
            return self.transform(np.stack(images))
        return np.concatenate([self.transform(image[None]) for image in images])
