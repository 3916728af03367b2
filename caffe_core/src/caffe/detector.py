"""pycaffe's Detector: a TEST-phase Net that scores windows of images (R-CNN style), with context padding."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from typing import TypedDict

import numpy as np

from caffe import io
from caffe.pycaffe import Net
from caffe_core.errors import CaffeError
from caffe_core.proto.caffe_pb2 import TEST


class Detection(TypedDict):
    """One scored window: its box, the net's output for it and its image's filename."""

    window: np.ndarray
    prediction: np.ndarray
    filename: str


def _round_half_up(value: float) -> int:
    """Python 2's round() for the non-negative sizes the crop computes, as pycaffe ran it."""
    return int(math.floor(value + 0.5))


class Detector(Net):
    """Scores image windows (ymin, xmin, ymax, xmax): crop (with optional context), warp, forward."""

    def __init__(self, model_file: str | os.PathLike, pretrained_file: str | os.PathLike | None,
                 mean: np.ndarray | None = None, input_scale: float | None = None,
                 raw_scale: float | None = None, channel_swap: Sequence[int] | None = None,
                 context_pad: int | None = None) -> None:
        super().__init__(model_file, TEST, weights=pretrained_file, optimize_memory=True)
        in_ = self.inputs[0]
        self.transformer = io.image_input_transformer(in_, self.blobs[in_].data.shape, mean, input_scale,
                                                      raw_scale, channel_swap)
        self.configure_crop(context_pad)

    def detect_windows(self, images_windows: Iterable[tuple[str, Sequence[Sequence[int]]]]
                       ) -> list[Detection]:
        """Predictions for each (image filename, windows) pair: dicts of window, prediction, filename."""
        windows_of = [(fname, [np.asarray(w) for w in windows]) for fname, windows in images_windows]
        window_inputs: list[np.ndarray] = []
        for image_fname, windows in windows_of:
            image = io.load_image(image_fname).astype(np.float32)
            window_inputs.extend(self.crop(image, window) for window in windows)
        in_ = self.inputs[0]
        caffe_in = np.zeros((len(window_inputs), window_inputs[0].shape[2]) + self.blobs[in_].data.shape[2:],
                            dtype=np.float32)
        for ix, window_in in enumerate(window_inputs):
            caffe_in[ix] = self.transformer.preprocess(in_, window_in)
        predictions = self.forward_all(blobs=None, **{in_: caffe_in})[self.outputs[0]]
        detections: list[Detection] = []
        ix = 0
        for image_fname, windows in windows_of:
            for window in windows:
                detections.append({"window": window, "prediction": predictions[ix], "filename": image_fname})
                ix += 1
        return detections

    def detect_selective_search(self, image_fnames: Sequence[str]) -> list[Detection]:
        """Selective-search proposals need BVLC's MATLAB tool; not available here."""
        raise CaffeError("Detector.detect_selective_search is not available: it needs the MATLAB "
                         "selective_search_ijcv_with_python tool; compute windows yourself and call "
                         "detect_windows([(filename, windows), ...])")

    def crop(self, im: np.ndarray, window: Sequence[int] | np.ndarray) -> np.ndarray:
        """The window of an H x W x K image; with context_pad, a context box warped into crop_dims."""
        window = np.asarray(window)
        crop = im[int(window[0]):int(window[2]), int(window[1]):int(window[3])]
        if not self.context_pad:
            return crop
        box = window.astype(float)
        crop_size = self.blobs[self.inputs[0]].width
        scale = crop_size / (1.0 * crop_size - self.context_pad * 2)
        half_h = (box[2] - box[0] + 1) / 2.0
        half_w = (box[3] - box[1] + 1) / 2.0
        center = (box[0] + half_h, box[1] + half_w)
        box = np.round(np.tile(center, 2) + scale * np.array((-half_h, -half_w, half_h, half_w)))
        scale_h = crop_size / (box[2] - box[0] + 1)
        scale_w = crop_size / (box[3] - box[1] + 1)
        pad_y = _round_half_up(max(0, -box[0]) * scale_h)
        pad_x = _round_half_up(max(0, -box[1]) * scale_w)
        im_h, im_w = im.shape[:2]
        box = np.clip(box, 0.0, [im_h, im_w, im_h, im_w])
        clip_h = box[2] - box[0] + 1
        clip_w = box[3] - box[1] + 1
        if clip_h <= 0 or clip_w <= 0:
            raise ValueError(f"window {window.tolist()} lies outside the {im_h} x {im_w} image")
        crop_h = min(_round_half_up(clip_h * scale_h), crop_size - pad_y)
        crop_w = min(_round_half_up(clip_w * scale_w), crop_size - pad_x)
        box = box.astype(int)
        context_crop = io.resize_image(im[box[0]:box[2], box[1]:box[3]], (crop_h, crop_w))
        padded = np.ones(self.crop_dims, dtype=np.float32) * self.crop_mean
        padded[pad_y:pad_y + crop_h, pad_x:pad_x + crop_w] = context_crop
        return padded

    def configure_crop(self, context_pad: int | None) -> None:
        """Sets the crop size (the input's H x W x K) and, for context padding, the mean to pad with."""
        in_ = self.inputs[0]
        inverse_transpose = np.argsort(self.transformer.transpose[in_])
        self.crop_dims = np.array(self.blobs[in_].data.shape[1:])[inverse_transpose]
        self.context_pad = context_pad
        if not self.context_pad:
            return
        mean = self.transformer.mean.get(in_)
        if mean is None:
            self.crop_mean = np.zeros(self.crop_dims, dtype=np.float32)
            return
        crop_mean = mean.copy().transpose(inverse_transpose)
        channel_order = self.transformer.channel_swap.get(in_)
        if channel_order is not None:
            crop_mean = crop_mean[:, :, np.argsort(channel_order)]
        raw_scale = self.transformer.raw_scale.get(in_)
        if raw_scale is not None:
            crop_mean = crop_mean / raw_scale
        self.crop_mean = crop_mean
