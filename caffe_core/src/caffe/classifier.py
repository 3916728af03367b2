"""pycaffe's Classifier: a TEST-phase Net that preprocesses images and predicts class scores."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from caffe import io
from caffe.pycaffe import Net
from caffe_core.proto.caffe_pb2 import TEST


class Classifier(Net):
    """Classifies H x W x K images: resize to image_dims, crop (ten crops or centre), preprocess, forward."""

    def __init__(self, model_file: str | os.PathLike, pretrained_file: str | os.PathLike | None,
                 image_dims: Sequence[int] | None = None, mean: np.ndarray | None = None,
                 input_scale: float | None = None, raw_scale: float | None = None,
                 channel_swap: Sequence[int] | None = None) -> None:
        super().__init__(model_file, TEST, weights=pretrained_file, optimize_memory=True)
        in_ = self.inputs[0]
        self.transformer = io.image_input_transformer(in_, self.blobs[in_].data.shape, mean, input_scale,
                                                      raw_scale, channel_swap)
        self.crop_dims = np.array(self.blobs[in_].data.shape[2:])
        has_dims = image_dims is not None and len(image_dims) > 0
        self.image_dims = np.array(image_dims if has_dims else self.crop_dims)

    def predict(self, inputs: Sequence[np.ndarray], oversample: bool = True) -> np.ndarray:
        """Class scores (N x classes) for N images; with oversample, the mean over ten crops each."""
        channels = inputs[0].shape[2]
        resized = np.zeros((len(inputs), self.image_dims[0], self.image_dims[1], channels), dtype=np.float32)
        for ix, image in enumerate(inputs):
            resized[ix] = io.resize_image(image, self.image_dims)
        if oversample:
            crops = io.oversample(resized, self.crop_dims)
        else:
            center = np.array(self.image_dims) / 2.0
            half = self.crop_dims / 2.0
            box = (np.tile(center, 2) + np.concatenate([-half, half])).astype(int)
            crops = resized[:, box[0]:box[2], box[1]:box[3], :]
        in_ = self.inputs[0]
        caffe_in = self.transformer.preprocess_batch(in_, crops)
        predictions = self.forward_all(blobs=None, **{in_: caffe_in})[self.outputs[0]]
        if oversample:
            predictions = predictions.reshape((len(predictions) // 10, 10, -1)).mean(1)
        return predictions
