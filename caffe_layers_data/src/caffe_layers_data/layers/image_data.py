"""ImageData: images named by a `path label` list file, read as OpenCV would (BGR or gray)."""

from __future__ import annotations

import logging
import os

import numpy as np

from caffe_core import runtime
from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_layers_data.generators import child_stream
from caffe_layers_data.images import read_image
from caffe_layers_data.layers.prefetching import BatchLoader, PrefetchingDataLayer
from caffe_layers_data.transformer import DataTransformer

log = logging.getLogger("caffe.data")


def read_image_list(source: str) -> list[tuple[str, int, int]]:
    """The (path, label, line number) entries of a list file; each line splits at its last space."""
    try:
        with open(source, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as err:
        raise CaffeError(f"cannot open image list {source}: {err.strerror}") from None
    entries = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        path, _, label = line.rpartition(" ")
        try:
            entries.append((path, int(label), number))
        except ValueError:
            raise CaffeError(f"{source} line {number}: expected '<path> <integer label>', "
                             f"got {line!r}") from None
    if not entries:
        raise CaffeError(f"image list {source} is empty")
    return entries


class ImageListLoader(BatchLoader):
    """Reads batch_size images per batch from the list, reshuffling at each pass when asked."""

    def __init__(self, param: caffe_pb2.LayerParameter, owner: str, output_labels: bool) -> None:
        p = param.image_data_param
        self.image_data_param = p
        self.output_labels = output_labels
        self.entries = read_image_list(p.source)
        missing = [(path, n) for path, _, n in self.entries if not os.path.isfile(p.root_folder + path)]
        if missing:
            path, number = missing[0]
            raise CaffeError(f"{p.source} line {number}: image {p.root_folder + path} does not exist "
                             f"({len(missing)} listed image(s) missing)")
        self.transformer = DataTransformer(param.transform_param, param.phase, owner)
        # As ImageDataLayer: a shuffling stream seeded from the main stream, then the rand_skip draw.
        self.stream = child_stream() if p.shuffle else None
        if p.shuffle:
            log.info("Shuffling data")
            self._shuffle()
        log.info("A total of %d images.", len(self.entries))
        self.position = 0
        if p.rand_skip:
            skip = runtime.rng().rand_below(p.rand_skip)
            log.info("Skipping first %d data points.", skip)
            if skip >= len(self.entries):
                raise CaffeError(f"rand_skip drew {skip}, but {p.source} lists only "
                                 f"{len(self.entries)} images")
            self.position = skip

    def _shuffle(self) -> None:
        # Called only with image_data_param.shuffle, which gave the layer its stream.
        assert self.stream is not None
        self.stream.shuffle(self.entries)

    def close(self) -> None:
        """Nothing to release: each image file is opened and closed as it is read."""

    def load_batch(self) -> list[np.ndarray]:
        """The next batch_size images, transformed, with their labels."""
        p = self.image_data_param
        images, labels = [], np.empty(p.batch_size, dtype=np.float32)
        first = None
        for i in range(p.batch_size):
            path, label, number = self.entries[self.position]
            where = f"image {p.root_folder + path} ({p.source} line {number})"
            try:
                image = read_image(p.root_folder + path, p.is_color, p.new_height, p.new_width)
            except CaffeError as err:
                raise CaffeError(f"{p.source} line {number}: {err}") from None
            image = image.transpose(2, 0, 1)
            self.transformer.check_batch_item(image.shape, where, first)
            first = first or (image.shape, where)
            images.append(image)
            labels[i] = label
            self.position += 1
            if self.position >= len(self.entries):
                log.debug("Restarting data prefetching from start.")
                self.position = 0
                if p.shuffle:
                    self._shuffle()
        data = self.transformer.transform_all(images)
        return [data, labels] if self.output_labels else [data]


class ImageDataLayer(PrefetchingDataLayer):
    """Caffe's ImageData layer: image_data_param (source, root_folder, shuffle, new_height/new_width, ...)."""

    type = "ImageData"

    def create_loader(self, output_labels: bool) -> BatchLoader:
        """Reads and checks the list file."""
        p = self.layer_param.image_data_param
        if (p.new_height > 0) != (p.new_width > 0):
            raise self.error("new_height and new_width must be set together")
        if p.batch_size <= 0:
            raise self.error("image_data_param.batch_size must be positive")
        return ImageListLoader(self.layer_param, self.describe(), output_labels)
