"""WindowData: R-CNN style windows cut from images, warped to crop_size, sampled fg/bg at random."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace

import numpy as np

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.describe import shape_text
from caffe_layers_data.generators import child_stream
from caffe_layers_data.images import decode_image, read_file, read_image, resize
from caffe_layers_data.layers.prefetching import BatchLoader, PrefetchingDataLayer
from caffe_layers_data.transformer import load_mean_file

log = logging.getLogger("caffe.data")


@dataclass(frozen=True)
class Window:
    """One box of the window file: the image it lies in, its label, corners (inclusive) and file line."""

    image: int
    label: int
    overlap: float
    x1: int
    y1: int
    x2: int
    y2: int
    line: int


def _round(x: np.float32) -> int:
    """C's round(): halves away from zero."""
    return int(math.copysign(math.floor(abs(float(x)) + 0.5), float(x)))


def read_window_file(source: str, root_folder: str) -> tuple[list[str], list[Window]]:
    """The image paths and windows of a window file (`# index`, path, C H W, count, window rows)."""
    try:
        with open(source, encoding="utf-8") as f:
            tokens = [(token, number) for number, line in enumerate(f, start=1) for token in line.split()]
    except OSError as err:
        raise CaffeError(f"failed to open window file {source}: {err.strerror}") from None
    if not tokens:
        raise CaffeError(f"window file {source} is empty")
    images: list[str] = []
    windows: list[Window] = []
    i = entry = 0
    try:
        while i < len(tokens):
            entry = i
            if tokens[i][0] != "#":
                token, number = tokens[i]
                raise CaffeError(f"window file {source} line {number}: expected '#', got {token!r}")
            index = int(tokens[i + 1][0])
            images.append(root_folder + tokens[i + 2][0])
            count = int(tokens[i + 6][0])
            i += 7
            for _ in range(count):
                label, overlap, x1, y1, x2, y2 = (token for token, _ in tokens[i:i + 6])
                windows.append(Window(index, int(label), float(overlap), int(x1), int(y1), int(x2), int(y2),
                                      tokens[i][1]))
                i += 6
    except (IndexError, ValueError):
        where = f"line {tokens[i][1]}" if i < len(tokens) else "the end of the file"
        raise CaffeError(f"window file {source}: malformed entry starting at line {tokens[entry][1]} "
                         f"(near {where})") from None
    return images, windows


class WindowLoader(BatchLoader):
    """Samples (1 - fg_fraction) background then fg_fraction foreground windows per batch."""

    def __init__(self, param: caffe_pb2.LayerParameter, output_labels: bool) -> None:
        window_param = param.window_data_param
        self.window_param = window_param
        self.output_labels = output_labels
        self.transform_param = param.transform_param
        self.crop_size = int(self.transform_param.crop_size)
        # Caffe's WindowData keeps an (unused) DataTransformer, whose InitRand still draws its seed.
        self.transformer_draws = bool(self.transform_param.mirror or (
            param.phase == caffe_pb2.TRAIN and self.crop_size))
        self.init_rand()
        self.images, windows = read_window_file(window_param.source, window_param.root_folder)
        self.fg: list[Window] = []
        self.bg: list[Window] = []
        for window in windows:
            if window.overlap >= window_param.fg_threshold:
                if window.label <= 0:
                    raise CaffeError(f"window file {window_param.source} line {window.line}: foreground "
                                     f"window has label {window.label}; foreground labels must be > 0")
                self.fg.append(window)
            elif window.overlap < window_param.bg_threshold:
                self.bg.append(replace(window, label=0, overlap=0.0))
        batch_size = window_param.batch_size
        self.num_fg = int(np.float32(batch_size) * np.float32(window_param.fg_fraction))
        if (self.num_fg and not self.fg) or (batch_size - self.num_fg and not self.bg):
            raise CaffeError(f"window file {window_param.source} has {len(self.fg)} foreground and "
                             f"{len(self.bg)} background windows; the batch needs both kinds")
        self.cache = [read_file(path) for path in self.images] if window_param.cache_images else None
        self.crop_mean = self._crop_mean()
        self.stream = child_stream()  # prefetch_rng_, which Caffe seeds when it crops (crop_size is required)
        log.info("Number of images: %d; %d foreground and %d background windows", len(self.images),
                 len(self.fg), len(self.bg))

    def init_rand(self) -> None:
        """The draw of the transformer's InitRand."""
        if self.transformer_draws:
            runtime.rng().rand()

    def _crop_mean(self) -> np.ndarray:
        """The mean under each crop position: the mean file's centre crop_size square, or the mean values."""
        transform_param, crop = self.transform_param, self.crop_size
        if transform_param.HasField("mean_file"):
            mean = load_mean_file(transform_param.mean_file)
            # Caffe offsets both axes by the width's margin.
            off = (mean.shape[2] - crop) // 2
            crop_mean = mean[:, off:off + crop, off:off + crop]
            if crop_mean.shape != (3, crop, crop):
                raise CaffeError(f"mean_file {transform_param.mean_file} is {shape_text(mean.shape)}; it "
                                 f"must have 3 channels and hold a crop_size {crop} square at offset {off}")
            return crop_mean
        mean_values = np.asarray(transform_param.mean_value, dtype=np.float32)
        return np.broadcast_to(mean_values if len(mean_values) else np.float32(0), (3,))[:, None, None]

    def close(self) -> None:
        """Nothing to release."""

    def _image(self, index: int) -> np.ndarray:
        if self.cache is not None:
            return decode_image(self.cache[index], True, self.images[index])
        return read_image(self.images[index], True)

    def _warp(self, window: Window, image: np.ndarray, mirror: bool) -> tuple[np.ndarray, int, int]:
        """The warped window (HxWxC) and its (pad_h, pad_w) offset inside the crop."""
        crop, context_pad = self.crop_size, self.window_param.context_pad
        square = self.window_param.crop_mode == "square"
        x1, y1, x2, y2 = window.x1, window.y1, window.x2, window.y2
        out_h = out_w = crop
        pad_h = pad_w = 0
        if context_pad > 0 or square:
            f32 = np.float32
            context_scale = f32(crop) / f32(crop - 2 * context_pad)
            half_h, half_w = f32(y2 - y1 + 1) / f32(2.0), f32(x2 - x1 + 1) / f32(2.0)
            center_x, center_y = f32(x1) + half_w, f32(y1) + half_h
            if square:
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
            raise CaffeError(f"window file {self.window_param.source} line {window.line}: window {corners} "
                             f"lies outside image {self.images[window.image]} "
                             f"({image.shape[1]}x{image.shape[0]})")
        warped = resize(image[y1:y2 + 1, x1:x2 + 1], out_h, out_w)
        if mirror:
            warped = warped[:, ::-1]
        return warped, pad_h, pad_w

    def load_batch(self) -> list[np.ndarray]:
        """Warped windows, mean-subtracted and scaled (zero around each window), and their labels."""
        batch_size, crop = self.window_param.batch_size, self.crop_size
        pixels = np.zeros((batch_size, 3, crop, crop), dtype=np.float32)
        inside = np.zeros((batch_size, 1, crop, crop), dtype=bool)
        labels = np.zeros(batch_size, dtype=np.float32)
        chosen = [(self.bg, batch_size - self.num_fg), (self.fg, self.num_fg)]
        item = 0
        for windows, count in chosen:
            for _ in range(count):
                window = windows[self.stream.rand_below(len(windows))]
                mirror = bool(self.transform_param.mirror and self.stream.rand_below(2))
                warped, pad_h, pad_w = self._warp(window, self._image(window.image), mirror)
                h, w = warped.shape[:2]
                pixels[item, :, pad_h:pad_h + h, pad_w:pad_w + w] = warped.transpose(2, 0, 1)
                inside[item, :, pad_h:pad_h + h, pad_w:pad_w + w] = True
                labels[item] = window.label
                item += 1
        scale = np.float32(self.window_param.scale)
        data = np.where(inside, (pixels - self.crop_mean) * scale, np.float32(0))
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
