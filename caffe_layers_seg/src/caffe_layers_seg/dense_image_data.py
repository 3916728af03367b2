"""DenseImageData (SegNet): pairs of an image and its label image from a list file, resized, mirrored and
cropped alike; the image goes through Caffe's data transformer, the label keeps its pixel values."""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.errors import CaffeError, LayerSetupError
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_data.describe import shape_text
from caffe_layers_data.images import read_image
from caffe_layers_data.transformer import DataTransformer
from caffe_layers_seg.label_image import read_label

log = logging.getLogger("caffe.data")


def read_pair_list(source: str) -> list[tuple[str, str, int]]:
    """The (image, label image, line number) entries of a list file of `image label` lines."""
    try:
        with open(source, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as err:
        raise CaffeError(f"cannot open the list file {source}: {err.strerror}") from None
    pairs = []
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 2:
            raise CaffeError(f"{source} line {number}: expected '<image> <label image>', got {line!r}")
        pairs.append((fields[0], fields[1], number))
    if not pairs:
        raise CaffeError(f"the list file {source} lists no image")
    return pairs


class DenseImageDataLayer(Layer):
    """SegNet's data layer: tops data (N, C, H, W) and label (N, 1, H, W) from `image label` list lines."""

    type = "DenseImageData"
    exact_num_bottom_blobs = 0
    exact_num_top_blobs = 2
    param_block = "dense_image_data_param"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the settings, reads the list (shuffled, skipped) and shapes the tops from its first pair."""
        p = self.param = get_param_block(self.layer_param, "dense_image_data_param")
        self._check_settings(p)
        try:
            self.pairs = read_pair_list(p.source)
        except CaffeError as err:
            raise self.error(f"dense_image_data_param.source: {err}") from None
        for image_name, label_name, number in self.pairs:
            for path in (p.root_folder + image_name, p.root_folder + label_name):
                if not os.path.isfile(path):
                    raise self.error(f"{p.source} line {number}: {path} does not exist")
        self.transformer = DataTransformer(self.layer_param.transform_param, self.phase, self.describe())
        # As SegNet's layer: a shuffling stream seeded from the main stream, the rand_skip draw, then the
        # stream its prefetch thread mirrors and crops with (seeded as BVLC's InternalThread seeds it).
        self.shuffle_stream = runtime.rng().child() if p.shuffle else None
        if p.shuffle:
            log.info("Shuffling data")
            self._shuffle()
        log.info("A total of %d examples.", len(self.pairs))
        self.position = 0
        if p.rand_skip:
            skip = runtime.rng().rand_below(p.rand_skip)
            log.info("Skipping first %d data points.", skip)
            if skip >= len(self.pairs):
                raise self.error(f"dense_image_data_param.rand_skip drew {skip}, but {p.source} lists only "
                                 f"{len(self.pairs)} pairs")
            self.position = skip
        self.thread_stream = runtime.rng().child()
        try:
            image, _ = self._read(self.position)
        except CaffeError as err:
            raise self.error(str(err)) from None
        height, width = (p.crop_height, p.crop_width) if p.crop_height else image.shape[:2]
        # Only a batch of one uncropped, unresized image takes each image's own size.
        self.varying = p.batch_size == 1 and not (p.new_height or p.crop_height)
        self.shape = (image.shape[2], height, width)
        self.transformer.check(self.shape, f"the image of {self._where(self.position)}")
        top[0].reshape((p.batch_size, *self.shape))
        top[1].reshape((p.batch_size, 1, height, width))
        log.info("output data size: %s", ",".join(map(str, top[0].shape)))

    def _check_settings(self, p: Any) -> None:
        if not p.source:
            raise self.error("dense_image_data_param.source (the list file) is not set")
        if p.batch_size <= 0:
            raise self.error("dense_image_data_param.batch_size must be positive")
        if (p.new_height > 0) != (p.new_width > 0):
            raise self.error(f"dense_image_data_param.new_height ({p.new_height}) and new_width "
                             f"({p.new_width}) must be set together")
        if (p.crop_height > 0) != (p.crop_width > 0):
            raise self.error(f"dense_image_data_param.crop_height ({p.crop_height}) and crop_width "
                             f"({p.crop_width}) must be set together")
        transform = self.layer_param.transform_param
        for field, instead in (("mirror", "mirror"), ("crop_size", "crop_height and crop_width")):
            if getattr(transform, field):
                raise self.error(f"transform_param.{field} would transform the image but not its label "
                                 f"(SegNet refuses it too); use dense_image_data_param.{instead}")
        if p.HasField("mean_file"):
            log.warning("%s: dense_image_data_param.mean_file is not used (as in SegNet); "
                        "transform_param.mean_file is", self.describe())

    def _shuffle(self) -> None:
        assert self.shuffle_stream is not None  # made in layer_setup when the layer shuffles
        self.shuffle_stream.shuffle(self.pairs)

    def _where(self, index: int) -> str:
        return f"{self.param.source} line {self.pairs[index][2]}"

    def _read(self, index: int) -> tuple[np.ndarray, np.ndarray]:
        """The HxWxC image and HxW label of one pair, resized; errors name the list line."""
        p = self.param
        image_name, label_name, _ = self.pairs[index]
        try:
            image = read_image(p.root_folder + image_name, p.is_color, p.new_height, p.new_width)
            label = read_label(p.root_folder + label_name, p.new_height, p.new_width)
        except CaffeError as err:
            raise CaffeError(f"{self._where(index)}: {err}") from None
        if image.shape[:2] != label.shape:
            raise CaffeError(f"{self._where(index)}: the image is {shape_text(image.shape[:2])} but its "
                             f"label image is {shape_text(label.shape)}; they must match")
        if p.crop_height and (image.shape[0] < p.crop_height or image.shape[1] < p.crop_width):
            raise CaffeError(f"{self._where(index)}: dense_image_data_param.crop_height x crop_width "
                             f"({p.crop_height}x{p.crop_width}) is larger than the image "
                             f"({shape_text(image.shape[:2])})")
        return image, label

    def _next(self) -> tuple[np.ndarray, np.ndarray]:
        """The next pair, mirrored and cropped as SegNet draws them (CxHxW image, HxW label)."""
        p = self.param
        index = self.position
        image, label = self._read(index)
        stream = self.thread_stream
        if p.mirror and stream.rand_below(2):
            image, label = image[:, ::-1], label[:, ::-1]
        if p.crop_height:
            h_off = stream.rand_below(image.shape[0] - p.crop_height + 1)
            w_off = stream.rand_below(image.shape[1] - p.crop_width + 1)
            rows, cols = slice(h_off, h_off + p.crop_height), slice(w_off, w_off + p.crop_width)
            image, label = image[rows, cols], label[rows, cols]
        image = image.transpose(2, 0, 1)
        if not self.varying and image.shape != self.shape:
            raise CaffeError(f"{self._where(index)}: the image is {shape_text(image.shape)} but the data top "
                             f"is {shape_text(self.shape)} (set by the first image); images of different "
                             f"sizes need batch_size 1, new_height/new_width or crop_height/crop_width")
        if self.varying:
            self.transformer.check(image.shape, f"the image of {self._where(index)}")
        self.position += 1
        if self.position >= len(self.pairs):
            log.debug("Restarting data prefetching from start.")
            self.position = 0
            if p.shuffle:
                self._shuffle()
        return image, label

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The tops take each batch's shape in forward."""

    # The fork reads, mirrors and crops on the host; so does this layer, in GPU mode too.
    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads batch_size pairs: data through the transformer, label as its pixel values."""
        try:
            pairs = [self._next() for _ in range(self.param.batch_size)]
        except LayerSetupError:
            raise
        except CaffeError as err:
            raise CaffeError(f"{self.describe()}: {err}") from None
        data = self.transformer.transform(np.stack([image for image, _ in pairs]))
        labels = np.stack([label for _, label in pairs])[:, None].astype(np.float32)
        for blob, values in ((top[0], data), (top[1], labels)):
            blob.reshape(values.shape)
            blob.mutable_cpu_data()[...] = values
