"""WindowData: R-CNN style windows cut from images, warped to crop_size, sampled fg/bg at random."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import numpy as np

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.images import decode_image, read_image, resize
from caffe_layers_data.layers.prefetching import BatchLoader, PrefetchingDataLayer
from caffe_layers_data.transformer import load_mean_file

log = logging.getLogger("caffe.data")


@dataclass(frozen=True)
class Window:
    """One box of the window file: the image it lies in, its label and corners (inclusive)."""

    image: int
    label: int
    overlap: float
    x1: int
    y1: int
    x2: int
    y2: int


def _round(x: np.float32) -> int:
    """C's round(): halves away from zero."""
    return int(math.copysign(math.floor(abs(float(x)) + 0.5), float(x)))


def read_window_file(source: str, root_folder: str) -> tuple[list[str], list[list[float]]]:
    """The image paths and raw window rows of a window file (`# index`, path, C H W, count, rows)."""
    try:
        with open(source, encoding="utf-8") as f:
            tokens = f.read().split()
    except OSError as err:
        raise CaffeError(f"failed to open window file {source}: {err.strerror}") from None
    if not tokens:
        raise CaffeError(f"window file {source} is empty")
    images, rows, i = [], [], 0
    try:
        while i < len(tokens):
            if tokens[i] != "#":
                raise CaffeError(f"window file {source}: expected '#' at token {i + 1}, got {tokens[i]!r}")
            index = int(tokens[i + 1])
            images.append(root_folder + tokens[i + 2])
            count = int(tokens[i + 6])
            i += 7
            for _ in range(count):
                label, overlap, x1, y1, x2, y2 = tokens[i:i + 6]
                rows.append([index, int(label), float(overlap), int(x1), int(y1), int(x2), int(y2)])
                i += 6
    except (IndexError, ValueError):
        raise CaffeError(f"window file {source}: malformed entry for image {len(images)}") from None
    return images, rows


class WindowLoader(BatchLoader):
    """Samples (1 - fg_fraction) background then fg_fraction foreground windows per batch."""

    def __init__(self, param: caffe_pb2.LayerParameter, output_labels: bool) -> None:
        p = param.window_data_param
        self.param = p
        self.output_labels = output_labels
        self.transform = param.transform_param
        self.crop_size = int(self.transform.crop_size)
        images, rows = read_window_file(p.source, p.root_folder)
        self.images = images
        self.fg: list[Window] = []
        self.bg: list[Window] = []
        for index, label, overlap, x1, y1, x2, y2 in rows:
            if overlap >= p.fg_threshold:
                if label <= 0:
                    raise CaffeError(f"window file {p.source}: foreground window of image {index} has "
                                     f"label {label}; foreground labels must be > 0")
                self.fg.append(Window(index, label, overlap, x1, y1, x2, y2))
            elif overlap < p.bg_threshold:
                self.bg.append(Window(index, 0, 0.0, x1, y1, x2, y2))
        self.num_fg = int(np.float32(p.batch_size) * np.float32(p.fg_fraction))
        if (self.num_fg and not self.fg) or (p.batch_size - self.num_fg and not self.bg):
            raise CaffeError(f"window file {p.source} has {len(self.fg)} foreground and {len(self.bg)} "
                             f"background windows; the batch needs both kinds")
        self.cache = [self._read_file(path) for path in images] if p.cache_images else None
        self.mean = load_mean_file(self.transform.mean_file) if self.transform.HasField("mean_file") else None
        if self.mean is not None and (self.mean.shape[0] != 3 or min(self.mean.shape[1:]) < self.crop_size):
            shape = "x".join(map(str, self.mean.shape))
            raise CaffeError(f"mean_file {self.transform.mean_file} is {shape}; it must have 3 channels "
                             f"and be at least crop_size {self.crop_size} square")
        self.mean_values = np.asarray(self.transform.mean_value, dtype=np.float32)
        self.rng = np.random.default_rng(int(runtime.rng().integers(2**63)))
        log.info("Number of images: %d; %d foreground and %d background windows", len(images),
                 len(self.fg), len(self.bg))

    @staticmethod
    def _read_file(path: str) -> bytes:
        try:
            with open(path, "rb") as f:
                return f.read()
        except OSError as err:
            raise CaffeError(f"could not open or find file {path}: {err.strerror}") from None

    def close(self) -> None:
        """Nothing to release."""

    def _image(self, index: int) -> np.ndarray:
        if self.cache is not None:
            return decode_image(self.cache[index], True, self.images[index])
        return read_image(self.images[index], True)

    def _warp(self, window: Window, image: np.ndarray, mirror: bool) -> tuple[np.ndarray, int, int]:
        """The warped window (HxWxC) and its (pad_h, pad_w) offset inside the crop."""
        crop, context_pad = self.crop_size, self.param.context_pad
        x1, y1, x2, y2 = window.x1, window.y1, window.x2, window.y2
        out_h = out_w = crop
        pad_h = pad_w = 0
        if context_pad > 0 or self.param.crop_mode == "square":
            f32 = np.float32
            context_scale = f32(crop) / f32(crop - 2 * context_pad)
            half_h, half_w = f32(y2 - y1 + 1) / f32(2.0), f32(x2 - x1 + 1) / f32(2.0)
            center_x, center_y = f32(x1) + half_w, f32(y1) + half_h
            if self.param.crop_mode == "square":
                half_h = half_w = max(half_h, half_w)
            x1, x2 = _round(center_x - half_w * context_scale), _round(center_x + half_w * context_scale)
            y1, y2 = _round(center_y - half_h * context_scale), _round(center_y + half_h * context_scale)
            unclipped_h, unclipped_w = y2 - y1 + 1, x2 - x1 + 1
            pad_x1, pad_y1 = max(0, -x1), max(0, -y1)
            pad_x2, pad_y2 = max(0, x2 - image.shape[1] + 1), max(0, y2 - image.shape[0] + 1)
            x1, x2, y1, y2 = x1 + pad_x1, x2 - pad_x2, y1 + pad_y1, y2 - pad_y2
            scale_x, scale_y = f32(crop) / f32(unclipped_w), f32(crop) / f32(unclipped_h)
            out_w, out_h = _round(f32(x2 - x1 + 1) * scale_x), _round(f32(y2 - y1 + 1) * scale_y)
            pad_h = _round(f32(pad_y1) * scale_y)
            pad_w = _round(f32(pad_x2 if mirror else pad_x1) * scale_x)
            out_h = min(out_h, crop - pad_h)
            out_w = min(out_w, crop - pad_w)
        if not (0 <= x1 <= x2 < image.shape[1] and 0 <= y1 <= y2 < image.shape[0]):
            corners = (window.x1, window.y1, window.x2, window.y2)
            raise CaffeError(f"window {corners} lies outside image {self.images[window.image]} "
                             f"({image.shape[1]}x{image.shape[0]})")
        warped = resize(image[y1:y2 + 1, x1:x2 + 1], out_h, out_w)
        if mirror:
            warped = warped[:, ::-1]
        return warped, pad_h, pad_w

    def load_batch(self) -> list[np.ndarray]:
        """A batch of warped windows, mean-subtracted and scaled, with their labels."""
        p, crop = self.param, self.crop_size
        data = np.zeros((p.batch_size, 3, crop, crop), dtype=np.float32)
        labels = np.zeros(p.batch_size, dtype=np.float32)
        scale = np.float32(p.scale)
        chosen = [(self.bg, p.batch_size - self.num_fg), (self.fg, self.num_fg)]
        item = 0
        for windows, count in chosen:
            for _ in range(count):
                window = windows[int(self.rng.integers(len(windows)))]
                mirror = bool(self.transform.mirror and self.rng.integers(2))
                warped, pad_h, pad_w = self._warp(window, self._image(window.image), mirror)
                h, w = warped.shape[:2]
                pixels = warped.transpose(2, 0, 1).astype(np.float32)
                if self.mean is not None:
                    off = (self.mean.shape[2] - crop) // 2
                    pixels -= self.mean[:, off + pad_h:off + pad_h + h, off + pad_w:off + pad_w + w]
                elif len(self.mean_values):
                    pixels -= np.broadcast_to(self.mean_values, (3,))[:, None, None]
                data[item, :, pad_h:pad_h + h, pad_w:pad_w + w] = pixels * scale
                labels[item] = window.label
                item += 1
        return [data, labels] if self.output_labels else [data]


class WindowDataLayer(PrefetchingDataLayer):
    """Caffe's WindowData layer: window_data_param plus transform_param crop_size/mirror/mean."""

    type = "WindowData"

    def create_loader(self, output_labels: bool) -> BatchLoader:
        """Reads the window file and checks the settings."""
        transform = self.layer_param.transform_param
        if transform.crop_size <= 0:
            raise self.error("transform_param.crop_size must be positive")
        if transform.HasField("mean_file") and len(transform.mean_value):
            raise self.error("cannot specify mean_file and mean_value at the same time")
        if len(transform.mean_value) not in (0, 1, 3):
            raise self.error(f"give 1 mean_value or 3 (one per channel), got {len(transform.mean_value)}")
        if self.layer_param.window_data_param.batch_size <= 0:
            raise self.error("window_data_param.batch_size must be positive")
        return WindowLoader(self.layer_param, output_labels)
