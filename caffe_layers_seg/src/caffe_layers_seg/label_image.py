"""Label images as SegNet's ReadImageToCVMat reads them: grayscale, resized with OpenCV's INTER_NEAREST.

Decoding is the data pack's (caffe_layers_data.images); the nearest-neighbour resize, which the data pack
does not have, is OpenCV's resizeNN: source index floor(x / (dst / src)), clipped to the last pixel.
"""

from __future__ import annotations

import numpy as np

from caffe_core.errors import CaffeError
from caffe_layers_data.images import decode_image, read_file


def _nearest_taps(src: int, dst: int) -> np.ndarray:
    """OpenCV's INTER_NEAREST source index of each destination index along one axis."""
    # OpenCV keeps the inverse scale dst / src in double and multiplies by its reciprocal.
    step = 1.0 / (dst / src)
    return np.minimum(np.floor(np.arange(dst) * step).astype(np.int64), src - 1)


def resize_nearest(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """cv::resize(..., INTER_NEAREST) of an HxW or HxWxC image."""
    rows = _nearest_taps(image.shape[0], height)
    cols = _nearest_taps(image.shape[1], width)
    return image[rows[:, None], cols[None, :]]


def read_label(path: str, height: int = 0, width: int = 0) -> np.ndarray:
    """An HxW uint8 label image, resized (nearest) when both height and width are given.

    A colour file is refused unless its three channels are equal (where OpenCV's grayscale read gives
    those same values): its gray conversion would not be the class indices it draws."""
    pixels = decode_image(read_file(path), None, path)
    if pixels.shape[2] != 1:
        if not ((pixels[:, :, 0] == pixels[:, :, 1]).all() and (pixels[:, :, 0] == pixels[:, :, 2]).all()):
            raise CaffeError(f"label image {path} is not grayscale (its colour channels differ); a label "
                             f"image holds one class index per pixel")
    label = pixels[:, :, 0]
    if height > 0 and width > 0:
        label = resize_nearest(label, height, width)
    return label
