"""DenseBlock: Tongcheng Li's memory-efficient DenseNet block as senlinuc/caffe_ocr carries it
(src/caffe/layers/DenseBlock_layer.cpp / .cu), one layer for a whole dense block.

Bottom (N, C0, H, W), top (N, C0 + T g, H, W) for T = numTransition and g = growthRate. Transition t reads
the C_t = C0 + t g channels so far (x_t) and appends g channels:

    BN -> ReLU -> [use_BC: 1x1 conv to 4g channels -> BN -> ReLU] -> 3x3 conv (pad 1) -> [TRAIN: dropout]

BN is batch normalisation with its own scale and bias (Caffe's BatchNorm + Scale in one), eps 1e-5. The
convolutions have no bias and are true convolutions (cuDNN's CUDNN_CONVOLUTION mode and the fork's CPU loops
both flip the kernel): out[h, w] = sum w[kh, kw] x[h + 1 - kh, w + 1 - kw].

Blobs, as the fork orders them (T = numTransition):
  [0, T) 3x3 filters (g, C_t, 3, 3) (use_BC: (g, 4g, 3, 3)); [T, 2T) BN scales (1, C_t, 1, 1);
  [2T, 3T) BN biases; [3T, 4T) BN running means; [4T, 5T) BN running variances;
  use_BC: [5T, 6T) 1x1 filters (4g, C_t, 1, 1); [6T, 7T) BC scales (1, 4g, 1, 1); [7T, 8T) BC biases;
  [8T, 9T) BC running means; [9T, 10T) BC running variances;
  last (index 5T, or 10T with use_BC): the statistics' scale factor (1,).
The running statistics and the factor keep lr_mult 0.

Batch-norm statistics follow the fork's GPU (cuDNN) path, the one its released models were trained with:
TRAIN normalises by the batch mean and biased variance and updates running = f batch + (1 - f) running (f =
moving_average_fraction; the variance's batch value is unbiased, m / (m - 1)), leaving the factor blob alone;
TEST normalises by the running statistics, divided by the factor blob when that is non-zero (what the fork's
CPU path always does, so models it trained on the CPU also run; the GPU path never writes the factor, so the
GPU-trained models keep 0 there and their statistics are used as stored).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from caffe_core import runtime
from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.layer_bases.kernel_geometry import KernelGeometry
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_vision.im2col_ops import col2im, im2col, needs_padded_copy, padded_shape

F32 = np.float32
EPS = F32(1e-5)  # CUDNN_BN_MIN_EPSILON, and the fork's CPU epsilon
CONV3 = KernelGeometry(kernel=(3, 3), stride=(1, 1), pad=(1, 1), dilation=(1, 1))
CONV1 = KernelGeometry(kernel=(1, 1), stride=(1, 1), pad=(0, 0), dilation=(1, 1))


def _columns(xp: ArrayModule, x: Array, geometry: KernelGeometry) -> Array:
    """im2col of images x (N, C, H, W) for a stride-1 'same' convolution: (C kh kw, N H W)."""
    num, channels, height, width = x.shape
    spatial = (height, width)
    cols = xp.empty((channels * geometry.taps, num * height * width), dtype=F32)
    padded = None
    if needs_padded_copy(geometry, spatial, spatial, False):
        padded = xp.empty(padded_shape(x.shape, geometry, spatial, False), dtype=F32)
    return im2col(xp, x, geometry, spatial, cols, padded, False)


def _flipped_matrix(xp: ArrayModule, weight: Array) -> Array:
    """The filters (O, C, kh, kw) rotated by 180 degrees as a (O, C kh kw) matrix: the true convolution as a
    cross-correlation."""
    return xp.ascontiguousarray(weight[:, :, ::-1, ::-1]).reshape(weight.shape[0], -1)


def convolve(xp: ArrayModule, x: Array, weight: Array, geometry: KernelGeometry) -> Array:
    """The fork's bias-free, stride-1, 'same' true convolution of x (N, C, H, W) by weight (O, C, kh, kw)."""
    num, _, height, width = x.shape
    out = _flipped_matrix(xp, weight) @ _columns(xp, x, geometry)
    return xp.ascontiguousarray(out.reshape(weight.shape[0], num, height, width).transpose(1, 0, 2, 3))


def convolve_backward(xp: ArrayModule, x: Array, weight: Array, dy: Array, geometry: KernelGeometry,
                      weight_diff: Array | None) -> Array:
    """Adds the filters' gradient into weight_diff (when given); returns the input's gradient."""
    out_channels = weight.shape[0]
    dy_matrix = dy.transpose(1, 0, 2, 3).reshape(out_channels, -1)
    if weight_diff is not None:
        flipped = (dy_matrix @ _columns(xp, x, geometry).T).reshape(weight.shape)
        weight_diff += flipped[:, :, ::-1, ::-1]
    dcols = _flipped_matrix(xp, weight).T @ dy_matrix
    dx = xp.empty(x.shape, dtype=F32)
    spatial = tuple(x.shape[2:])
    padded = None
    if needs_padded_copy(geometry, spatial, spatial, False):
        padded = xp.empty(padded_shape(x.shape, geometry, spatial, False), dtype=F32)
    col2im(xp, dcols, dx, geometry, spatial, padded, False)
    return dx


@dataclass
class _Kept:
    """What backward needs from a forward: the output, each normalisation's mean and 1 / std (in the
    order forward ran them), each transition's dropout mask (when dropout ran)."""

    features: Array | None = None
    means: list[Array] = field(default_factory=list)
    inv_stds: list[Array] = field(default_factory=list)
    masks: list[Array] = field(default_factory=list)


@dataclass
class _Norm:
    """One batch normalisation's blob indices (scale, bias, running mean, running variance)."""

    scale: int
    bias: int
    mean: int
    variance: int


class DenseBlockLayer(Layer):
    """caffe_ocr's DenseBlock: a whole DenseNet block, its transitions each appending growthRate channels.

    Each transition is BN-ReLU-(use_BC: Conv1x1-BN-ReLU)-Conv3x3, with the fork's blob layout.
    """

    type = "DenseBlock"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads denseblock_param; creates (or checks) the blobs; pins the statistics' lr_mult to 0."""
        if top[0] is bottom[0]:
            raise self.error("DenseBlock cannot run in place (its top has more channels than its bottom)")
        param = get_param_block(self.layer_param, "denseblock_param")
        self.transitions = int(param.numTransition)
        self.growth = int(param.growthRate)
        if self.transitions < 1 or self.growth < 1:
            raise self.error(f"denseblock_param.numTransition ({self.transitions}) and growthRate "
                             f"({self.growth}) must be positive")
        self.use_bc = bool(param.use_BC)
        self.fraction = F32(param.moving_average_fraction)
        self.dropout = F32(param.dropout_amount) if param.use_dropout else F32(0)
        if not 0 <= self.dropout < 1:
            raise self.error(f"denseblock_param.dropout_amount must be in [0, 1), got {self.dropout}")
        # The fork (jxs's change to Tongcheng's layer) takes C0 from the bottom, not from initChannel.
        self.init_channels = bottom[0].shape_at(1)
        shapes = self._blob_shapes()
        if self.blobs:
            stored = [tuple(blob.shape) for blob in self.blobs]
            if stored != shapes:
                raise self.error(f"expected {len(shapes)} blobs of shapes {shapes} (numTransition "
                                 f"{self.transitions}, growthRate {self.growth}, use_BC {self.use_bc}, "
                                 f"{self.init_channels} bottom channels), got {len(stored)}: {stored}")
        else:
            self._create_blobs(param, shapes)
        statistics = self._statistics_indices()
        for i in range(len(self.blobs)):
            if len(self.layer_param.param) == i:
                lr = 0.0 if i in statistics else 1.0
                self.layer_param.param.add(lr_mult=lr, decay_mult=lr)
            elif i in statistics and self.layer_param.param[i].lr_mult != 0:
                raise self.error(f"param {i} (a running statistic) has lr_mult "
                                 f"{self.layer_param.param[i].lr_mult}; it must stay 0")
        self._kept: _Kept | None = None

    def _channels(self, t: int) -> int:
        return self.init_channels + t * self.growth

    def _blob_shapes(self) -> list[tuple[int, ...]]:
        count, g = self.transitions, self.growth
        quad = 4 * g
        conv_in = [quad if self.use_bc else self._channels(t) for t in range(count)]
        channel = [(1, self._channels(t), 1, 1) for t in range(count)]
        # filters, then scales, biases, running means and running variances, one per transition each
        shapes = [(g, conv_in[t], 3, 3) for t in range(count)] + channel * 4
        if self.use_bc:
            shapes += [(quad, self._channels(t), 1, 1) for t in range(count)]
            shapes += [(1, quad, 1, 1)] * (4 * count)
        return [*shapes, (1,)]

    def _statistics_indices(self) -> set[int]:
        count = self.transitions
        indices = set(range(3 * count, 5 * count)) | {len(self.blobs) - 1}
        if self.use_bc:
            indices |= set(range(8 * count, 10 * count))
        return indices

    def _create_blobs(self, param: Any, shapes: list[tuple[int, ...]]) -> None:
        """The fork's initialisation: filters, scales and biases from the fillers, means 0, variances 1,
        factor 0."""
        self.blobs = [Blob(shape) for shape in shapes]
        count = self.transitions
        filters = list(range(count)) + (list(range(5 * count, 6 * count)) if self.use_bc else [])
        for i in filters:
            get_filler(param.Filter_Filler).fill(self.blobs[i])
        for norm in self._norms():
            get_filler(param.BN_Scaler_Filler).fill(self.blobs[norm.scale])
            get_filler(param.BN_Bias_Filler).fill(self.blobs[norm.bias])
            self.blobs[norm.mean].mutable_cpu_data()[...] = 0
            self.blobs[norm.variance].mutable_cpu_data()[...] = 1
        self.blobs[-1].mutable_cpu_data()[...] = 0

    def _norms(self) -> list[_Norm]:
        """Every batch normalisation: the transitions' first ones, then (use_BC) the bottleneck ones."""
        count = self.transitions
        norms = [_Norm(count + t, 2 * count + t, 3 * count + t, 4 * count + t) for t in range(count)]
        if self.use_bc:
            norms += [_Norm(6 * count + t, 7 * count + t, 8 * count + t, 9 * count + t) for t in range(count)]
        return norms

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top (N, C0 + numTransition growthRate, H, W); the bottom's channels must stay C0."""
        num, channels, height, width = bottom[0].shape
        if channels != self.init_channels:
            raise self.error(f"bottom has {channels} channels (shape {list(bottom[0].shape)}); the layer was "
                             f"set up for {self.init_channels}")
        top[0].reshape((num, self._channels(self.transitions), height, width))

    def _training(self) -> bool:
        return self.phase == caffe_pb2.TRAIN

    def _normalise(self, side: Side, x: Array, norm: _Norm, kept: _Kept | None) -> Array:
        """y = scale (x - mean) / sqrt(var + eps) + bias, with the batch's statistics in TRAIN (folding them
        into the running ones) and the stored ones in TEST."""
        xp = side.xp
        scale = self.blobs[norm.scale].data_on(side).reshape(1, -1, 1, 1)
        bias = self.blobs[norm.bias].data_on(side).reshape(1, -1, 1, 1)
        if self._training():
            mean = x.mean(axis=(0, 2, 3), dtype=F32)
            centred = x - mean.reshape(1, -1, 1, 1)
            variance = (centred * centred).mean(axis=(0, 2, 3), dtype=F32)
            count = x.size // x.shape[1]
            unbiased = variance * (F32(count) / F32(count - 1) if count > 1 else F32(1))
            for index, batch in ((norm.mean, mean), (norm.variance, unbiased)):
                running = self.blobs[index].mutable_data_on(side).reshape(-1)
                running[...] = self.fraction * batch + (F32(1) - self.fraction) * running
        else:
            factor = self.blobs[-1].data_on(side).reshape(())
            divide = xp.where(factor == 0, F32(1), F32(1) / xp.where(factor == 0, F32(1), factor))
            mean = self.blobs[norm.mean].data_on(side).reshape(-1) * divide
            variance = self.blobs[norm.variance].data_on(side).reshape(-1) * divide
            centred = x - mean.reshape(1, -1, 1, 1)
        inv_std = (F32(1) / xp.sqrt(variance + EPS)).reshape(1, -1, 1, 1)
        if kept is not None:
            kept.inv_stds.append(inv_std)
            kept.means.append(mean.reshape(1, -1, 1, 1))
        return scale * (centred * inv_std) + bias

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Transition by transition, each writing its growthRate channels into the top."""
        xp = side.xp
        out = top[0].mutable_data_on(side)
        out[:, :self.init_channels] = bottom[0].data_on(side)
        kept = _Kept() if self.backward_needed else None
        norms = self._norms()
        count = self.transitions
        for t in range(count):
            channels = self._channels(t)
            features = xp.maximum(self._normalise(side, out[:, :channels], norms[t], kept), F32(0))
            if self.use_bc:
                squeezed = convolve(xp, features, self.blobs[5 * count + t].data_on(side), CONV1)
                features = xp.maximum(self._normalise(side, squeezed, norms[count + t], kept), F32(0))
            new = convolve(xp, features, self.blobs[t].data_on(side), CONV3)
            if self._training() and self.dropout > 0:
                keep = runtime.rng().bernoulli(new.shape, 1.0 - float(self.dropout))
                mask = xp.asarray(keep.astype(F32) * (F32(1) / (F32(1) - self.dropout)))
                new = new * mask
                if kept is not None:
                    kept.masks.append(mask)
            out[:, channels:channels + self.growth] = new
        if kept is not None:
            kept.features = out.copy()
        self._kept = kept

    def _normalise_again(self, side: Side, x: Array, norm: _Norm, inv_std: Array,
                         mean: Array) -> tuple[Array, Array]:
        """The forward's normalised values x_hat and y = scale x_hat + bias, from its statistics."""
        x_hat = (x - mean) * inv_std
        scale = self.blobs[norm.scale].data_on(side).reshape(1, -1, 1, 1)
        bias = self.blobs[norm.bias].data_on(side).reshape(1, -1, 1, 1)
        return x_hat, scale * x_hat + bias

    def _normalise_backward(self, side: Side, dy: Array, x_hat: Array, inv_std: Array, norm: _Norm) -> Array:
        """Accumulates the scale's and bias's gradients; returns the input's (through the batch's statistics
        in TRAIN, as cudnnBatchNormalizationBackward; through fixed ones in TEST)."""
        if self.param_propagate_down(norm.scale):
            self.blobs[norm.scale].mutable_diff_on(side).reshape(-1)[...] += (dy * x_hat).sum(axis=(0, 2, 3))
        if self.param_propagate_down(norm.bias):
            self.blobs[norm.bias].mutable_diff_on(side).reshape(-1)[...] += dy.sum(axis=(0, 2, 3))
        dx_hat = dy * self.blobs[norm.scale].data_on(side).reshape(1, -1, 1, 1)
        if not self._training():
            return dx_hat * inv_std
        mean_dx_hat = dx_hat.mean(axis=(0, 2, 3), keepdims=True, dtype=F32)
        mean_dx_hat_x_hat = (dx_hat * x_hat).mean(axis=(0, 2, 3), keepdims=True, dtype=F32)
        return inv_std * (dx_hat - mean_dx_hat - x_hat * mean_dx_hat_x_hat)

    def _weight_diff(self, side: Side, index: int) -> Array | None:
        """A filter blob's diff to accumulate into, or None when the net does not learn it."""
        return self.blobs[index].mutable_diff_on(side) if self.param_propagate_down(index) else None

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Recomputes each transition from the kept features and its statistics, last transition first."""
        kept = self._kept
        if kept is None or kept.features is None:
            raise self.error("backward needs the forward's features (the net said it needs no backward)")
        xp = side.xp
        features = kept.features
        grad = top[0].diff_on(side).copy()
        norms = self._norms()
        count = self.transitions
        per_norm = 2 if self.use_bc else 1
        for t in range(count - 1, -1, -1):
            channels = self._channels(t)
            x = features[:, :channels]
            dnew = grad[:, channels:channels + self.growth]
            if kept.masks:
                dnew = dnew * kept.masks[t]
            first = per_norm * t
            x_hat, y = self._normalise_again(side, x, norms[t], kept.inv_stds[first], kept.means[first])
            relu = xp.maximum(y, F32(0))
            if self.use_bc:
                squeeze = self.blobs[5 * count + t]
                squeezed = convolve(xp, relu, squeeze.data_on(side), CONV1)
                inner = first + 1
                bc_hat, bc_y = self._normalise_again(side, squeezed, norms[count + t],
                                                     kept.inv_stds[inner], kept.means[inner])
                conv_input = xp.maximum(bc_y, F32(0))
            else:
                conv_input = relu
            filters = self.blobs[t]
            d_input = convolve_backward(xp, conv_input, filters.data_on(side), dnew, CONV3,
                                        self._weight_diff(side, t))
            if self.use_bc:
                d_bc = self._normalise_backward(side, d_input * (bc_y > 0), bc_hat, kept.inv_stds[inner],
                                                norms[count + t])
                d_relu = convolve_backward(xp, relu, squeeze.data_on(side), d_bc, CONV1,
                                           self._weight_diff(side, 5 * count + t))
            else:
                d_relu = d_input
            grad[:, :channels] += self._normalise_backward(side, d_relu * (y > 0), x_hat,
                                                           kept.inv_stds[first], norms[t])
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side)[...] = grad[:, :self.init_channels]
