"""MultiStageMeanfield of torrvision/caffe (CRF as RNN, Zheng et al. ICCV 2015): `num_iterations` mean-field
steps of a dense CRF with a spatial and a bilateral Gaussian kernel, filtered on the modified permutohedral
lattice (layers/multi_stage_meanfield.cpp, layers/meanfield_iteration.cpp at
d779ee369bf86739bc225d99e78aefa040da199f)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block
from caffe_layers_seg.permutohedral import F32, PermutohedralLattice

BLOB_NAMES = ("spatial kernel weights", "bilateral kernel weights", "compatibility matrix")


class MultiStageMeanfieldLayer(Layer):
    """Bottoms unary (N, C, H, W), the first iteration's softmax input (N, C, H, W) and the image
    (N, 3, H, W); top: the last iteration's unary - pairwise (N, C, H, W), not normalised.

    Each iteration: Q = softmax(input); m = W_s (K_s Q) + W_b (K_b Q), K the lattice filters normalised per
    pixel by K 1; output = unary - W_c m. Blobs: W_s, W_b, W_c, each (1, 1, C, C)."""

    type = "MultiStageMeanfield"
    exact_num_bottom_blobs = 3
    exact_num_top_blobs = 1
    bottom_num_axes = {0: 4, 1: 4, 2: 4}

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the block (num_iterations > 1, as the fork CHECKs) and creates or checks the three blobs."""
        param = get_param_block(self.layer_param, "multi_stage_meanfield_param")
        if param.num_iterations <= 1:
            raise self.error(f"multi_stage_meanfield_param.num_iterations must be greater than 1, got "
                             f"{param.num_iterations}")
        for name in ("theta_alpha", "theta_beta", "theta_gamma"):
            if not getattr(param, name) > 0:
                raise self.error(f"multi_stage_meanfield_param.{name} must be positive, got "
                                 f"{getattr(param, name)}")
        self.num_iterations = param.num_iterations
        self.theta_alpha = F32(param.theta_alpha)
        self.theta_beta = F32(param.theta_beta)
        self.theta_gamma = F32(param.theta_gamma)
        channels = bottom[0].channels
        if self.blobs:
            if len(self.blobs) != 3:
                raise self.error(f"expected 3 stored blobs ({', '.join(BLOB_NAMES)}), got {len(self.blobs)}")
            for name, blob in zip(BLOB_NAMES, self.blobs, strict=True):
                if blob.count != channels * channels:
                    raise self.error(f"stored {name} has shape {blob.shape}; expected (1, 1, {channels}, "
                                     f"{channels}) for the unary's {channels} channels")
        else:
            diagonals = (param.spatial_filter_weight, param.bilateral_filter_weight, -1.0)
            for value in diagonals:
                blob = Blob((1, 1, channels, channels))
                blob.mutable_cpu_data()[0, 0] = np.float32(value) * np.eye(channels, dtype=np.float32)
                self.blobs.append(blob)
        self._spatial: tuple[tuple[str, tuple[int, ...]], PermutohedralLattice, Array] | None = None
        self._saved: list[tuple[Array, ...]] = []

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top: the unary's shape; the softmax input must match it, the image have 3 channels and its size."""
        shape = bottom[0].shape
        if bottom[1].shape != shape:
            raise self.error(f"bottom 1 (softmax input) has shape {bottom[1].shape}; expected the unary's "
                             f"{shape}")
        num, _, height, width = shape
        if bottom[2].shape != (num, 3, height, width):
            raise self.error(f"bottom 2 (image) has shape {bottom[2].shape}; expected ({num}, 3, {height}, "
                             f"{width})")
        if bottom[0].channels * bottom[0].channels != self.blobs[0].count:
            raise self.error(f"the unary has {bottom[0].channels} channels; the blobs are "
                             f"{self.blobs[0].shape}")
        top[0].reshape(shape)

    def _pixel_positions(self, num: int, height: int, width: int) -> np.ndarray:
        """(num, H W, 2) float columns and rows of the pixels, as the fork's kernels compute them."""
        rows, cols = np.divmod(np.arange(height * width), width)
        positions = np.stack([cols.astype(F32), rows.astype(F32)], axis=1)
        return np.broadcast_to(positions, (num, height * width, 2))

    def _normaliser(self, xp: ArrayModule, lattice: PermutohedralLattice) -> Array:
        """1 / (K 1 + 1e-20) per pixel, (B, 1, N)."""
        ones = xp.ones((lattice.batch, 1, lattice.count), F32)
        return F32(1) / (lattice.compute(xp, ones) + F32(1e-20))

    def _spatial_lattice(self, side: Side, shape: tuple[int, ...]) -> tuple[PermutohedralLattice, Array]:
        """The spatial lattice and its normaliser (the same for every image), kept while the shape holds."""
        key = (side.name, shape)
        if self._spatial is None or self._spatial[0] != key:
            num, _, height, width = shape
            lattice = PermutohedralLattice(self._pixel_positions(num, height, width) / self.theta_gamma,
                                           side.xp)
            self._spatial = (key, lattice, self._normaliser(side.xp, lattice))
        return self._spatial[1], self._spatial[2]

    def _bilateral_lattice(self, side: Side, image: Blob) -> tuple[PermutohedralLattice, Array]:
        """The images' lattices (built on the host from the image) and their normalisers."""
        num, _, height, width = image.shape
        colours = image.cpu_data().reshape(num, 3, height * width).transpose(0, 2, 1) / self.theta_beta
        features = np.concatenate([self._pixel_positions(num, height, width) / self.theta_alpha,
                                   colours.astype(F32)], axis=2)
        lattice = PermutohedralLattice(features, side.xp)
        return lattice, self._normaliser(side.xp, lattice)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The fork's iterations: softmax, message passing, kernel weights, compatibility, unary - it."""
        xp = side.xp
        num, channels, height, width = bottom[0].shape
        flat = (num, channels, height * width)
        spatial, spatial_norm = self._spatial_lattice(side, bottom[0].shape)
        bilateral, bilateral_norm = self._bilateral_lattice(side, bottom[2])
        unary = bottom[0].data_on(side).reshape(flat)
        weights = [blob.data_on(side)[0, 0] for blob in self.blobs]
        values = bottom[1].data_on(side).reshape(flat)
        self._saved = []
        for _ in range(self.num_iterations):
            shifted = xp.exp(values - values.max(axis=1, keepdims=True))
            prob = shifted / shifted.sum(axis=1, keepdims=True)
            spatial_out = spatial.compute(xp, prob) * spatial_norm
            bilateral_out = bilateral.compute(xp, prob) * bilateral_norm
            message = xp.matmul(weights[0], spatial_out) + xp.matmul(weights[1], bilateral_out)
            values = unary - xp.matmul(weights[2], message)
            if self.backward_needed:
                self._saved.append((prob, spatial_out, bilateral_out, message))
        if self.backward_needed:
            self._lattices = (spatial, spatial_norm, bilateral, bilateral_norm)
        top[0].mutable_data_on(side)[...] = values.reshape(top[0].shape)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Back through the iterations, last first. As the fork does, each parameter diff is overwritten
        with the sum over the iterations (not accumulated), and the image gets no diff."""
        xp = side.xp
        spatial, spatial_norm, bilateral, bilateral_norm = self._lattices
        weights = [blob.data_on(side)[0, 0] for blob in self.blobs]
        diff = top[0].diff_on(side).reshape(self._saved[0][0].shape)
        unary_diffs: list[Array] = []
        param_diffs: list[tuple[Array, Array, Array]] = []
        for prob, spatial_out, bilateral_out, message in reversed(self._saved):
            unary_diffs.append(diff)
            pairwise_diff = -diff
            compat_diff = xp.matmul(pairwise_diff, message.transpose(0, 2, 1)).sum(axis=0)
            message_diff = xp.matmul(weights[2].T, pairwise_diff)
            spatial_diff = xp.matmul(message_diff, spatial_out.transpose(0, 2, 1)).sum(axis=0)
            bilateral_diff = xp.matmul(message_diff, bilateral_out.transpose(0, 2, 1)).sum(axis=0)
            param_diffs.append((spatial_diff, bilateral_diff, compat_diff))
            to_spatial = xp.matmul(weights[0].T, message_diff) * spatial_norm
            to_bilateral = xp.matmul(weights[1].T, message_diff) * bilateral_norm
            prob_diff = spatial.compute(xp, to_spatial, reverse=True)
            prob_diff = bilateral.compute(xp, to_bilateral, reverse=True, out=prob_diff)
            diff = (prob_diff - (prob_diff * prob).sum(axis=1, keepdims=True)) * prob
        if propagate_down[1]:
            bottom[1].mutable_diff_on(side)[...] = diff.reshape(bottom[1].shape)
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side)[...] = _in_order(unary_diffs[::-1]).reshape(bottom[0].shape)
        for index, blob in enumerate(self.blobs):
            if self.param_propagate_down(index):
                blob.mutable_diff_on(side)[0, 0] = _in_order([diffs[index] for diffs in param_diffs[::-1]])


def _in_order(terms: list[Array]) -> Array:
    """((t_0 + t_1) + t_2) + ...: the fork's Split backward and its loop of axpys over the iterations."""
    total = terms[0]
    for term in terms[1:]:
        total = total + term
    return total
