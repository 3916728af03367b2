"""Image decoding, resizing and encoding as Caffe's OpenCV calls do them (BGR channel order, HWC uint8).

Decoding goes through Pillow; where Pillow and OpenCV's codecs differ, the OpenCV behaviour is rebuilt:
RGB→gray uses libpng's fixed-point rule, alpha is dropped without compositing, 16-bit samples keep their
high byte, and `resize` is OpenCV's fixed-point INTER_LINEAR.
"""

from __future__ import annotations

import io
import os

import numpy as np
from PIL import Image, UnidentifiedImageError

from caffe_core.errors import CaffeError

# libpng's png_set_rgb_to_gray coefficients for OpenCV's (0.299, 0.587), in 1/32768ths.
GRAY_RED, GRAY_GREEN, GRAY_BLUE = 9797, 19234, 3737
RESIZE_COEF_BITS = 11
RESIZE_COEF_SCALE = 1 << RESIZE_COEF_BITS


def _rgb_to_gray(rgb: np.ndarray) -> np.ndarray:
    """libpng's truncating fixed-point conversion (not cv::cvtColor, not Pillow's convert('L'))."""
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    return ((GRAY_RED * r + GRAY_GREEN * g + GRAY_BLUE * b) >> 15).astype(np.uint8)


def _pixels(image: Image.Image) -> np.ndarray:
    """The samples as uint8 HxW (gray) or HxWx3 (RGB), alpha dropped, 16 bits cut to their high byte."""
    mode = image.mode
    if mode in ("I;16", "I;16B", "I;16L", "I"):
        return (np.asarray(image).astype(np.uint32) >> 8).astype(np.uint8)
    if mode in ("L", "RGB"):
        return np.asarray(image)
    if mode in ("LA", "1"):
        return np.asarray(image.convert("L"))
    if mode == "RGBA":
        return np.asarray(image)[..., :3]
    return np.asarray(image.convert("RGB"))


def decode_image(data: bytes, color: bool | None, source: str) -> np.ndarray:
    """Decodes to HxWxC uint8 in BGR order: color True → 3 channels, False → 1, None → native."""
    try:
        image = Image.open(io.BytesIO(data))
        if color is False and image.format == "JPEG":
            image.draft("L", image.size)
        image.load()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as err:
        raise CaffeError(f"{source}: cannot decode image: {err}") from None
    pixels = _pixels(image)
    if pixels.ndim == 2:
        if color:
            return np.repeat(pixels[:, :, None], 3, axis=2)
        return pixels[:, :, None]
    if color is False:
        return _rgb_to_gray(pixels)[:, :, None]
    return np.ascontiguousarray(pixels[:, :, ::-1])


def read_file(path: str) -> bytes:
    """A file's bytes; a missing or unreadable file is an error naming it."""
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as err:
        raise CaffeError(f"could not open or find file {path}: {err.strerror}") from None


def read_image(path: str, color: bool | None = True, height: int = 0, width: int = 0) -> np.ndarray:
    """Reads an image file as cv::imread would (then resizes when both height and width are given)."""
    image = decode_image(read_file(path), color, path)
    if height > 0 and width > 0:
        image = resize(image, height, width)
    return image


def _linear_taps(src: int, dst: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OpenCV's INTER_LINEAR source indices and fixed-point weights along one axis."""
    scale = 1.0 / (dst / src)
    f = (np.arange(dst) + 0.5) * scale - 0.5
    s = np.floor(f).astype(np.int64)
    f = f - s
    low = s < 0
    f[low], s[low] = 0.0, 0
    high = s >= src - 1
    f[high], s[high] = 0.0, src - 1
    f = f.astype(np.float32)
    w0 = np.rint((np.float32(1) - f) * RESIZE_COEF_SCALE).astype(np.int64)
    w1 = np.rint(f * RESIZE_COEF_SCALE).astype(np.int64)
    return s, np.minimum(s + 1, src - 1), np.stack([w0, w1])


def resize(image: np.ndarray, height: int, width: int) -> np.ndarray:
    """cv::resize(..., INTER_LINEAR) of an HxWxC uint8 image, in OpenCV's fixed-point arithmetic."""
    src_h, src_w = image.shape[:2]
    if (src_h, src_w) == (height, width):
        return image.copy()
    x0, x1, wx = _linear_taps(src_w, width)
    y0, y1, wy = _linear_taps(src_h, height)
    pixels = image.astype(np.int64)
    rows = pixels[:, x0] * wx[0][None, :, None] + pixels[:, x1] * wx[1][None, :, None]
    top, bottom = rows[y0] >> 4, rows[y1] >> 4
    out = ((wy[0][:, None, None] * top) >> 16) + ((wy[1][:, None, None] * bottom) >> 16)
    return np.clip((out + 2) >> 2, 0, 255).astype(np.uint8)


def encode_image(image: np.ndarray, extension: str, source: str) -> bytes:
    """Encodes an HxWxC BGR (or gray) uint8 image as cv::imencode would choose by extension."""
    fmt = {"png": "PNG", "jpg": "JPEG", "jpeg": "JPEG", "bmp": "BMP"}.get(extension.lower().lstrip("."))
    if fmt is None:
        raise CaffeError(f"{source}: cannot encode as '{extension}' (known: png, jpg, jpeg, bmp)")
    pixels = image[:, :, 0] if image.shape[2] == 1 else image[:, :, ::-1]
    buffer = io.BytesIO()
    options = {"quality": 95} if fmt == "JPEG" else {}
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, format=fmt, **options)
    return buffer.getvalue()


def extension_of(path: str) -> str:
    """A file's extension, lower-case, without the dot."""
    return os.path.splitext(path)[1].lower().lstrip(".")
