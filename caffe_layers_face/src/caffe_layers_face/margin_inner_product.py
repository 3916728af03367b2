"""MarginInnerProduct (wy1iu/sphereface's Caffe): SphereFace's A-Softmax inner product, cos(m theta) on the
label's column through Chebyshev polynomials, blended with the plain product by the lambda schedule."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.array_types import Array, ArrayModule
from caffe_core.blas import gemm_accumulate
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.fillers import get_filler
from caffe_core.layer import Layer
from caffe_core.layer_bases.loss import check_labels
from caffe_core.schema_extensions import get_param_block

BLOCK = "margin_inner_product_param"
MARGINS = {0: "SINGLE", 1: "DOUBLE", 2: "TRIPLE", 3: "QUADRUPLE"}


def margin_terms(xp: ArrayModule, margin: int, cos: Array) -> tuple[Array, Array, Array]:
    """psi(cos) (the fork's |x|-free label value), and the fork's coefficients of w and of x/|x| in its
    derivative, for DOUBLE, TRIPLE and QUADRUPLE; sign() is Caffe's caffe_sign ((0 < v) - (v < 0))."""
    one = xp.float32(1)
    sign_0 = xp.sign(cos)
    c2 = cos * cos
    if margin == 1:
        # cos 2t = 2 sign_0 cos^2 - 1 (the fork's form; the sign makes psi monotonic in theta)
        psi = xp.float32(2) * sign_0 * c2 - one
        coeff_w = xp.float32(4) * sign_0 * cos
        coeff_x = xp.float32(2) * sign_0 * c2 + one
    elif margin == 2:
        c3 = c2 * cos
        sign_1 = xp.sign(xp.abs(cos) - xp.float32(0.5))
        sign_2 = sign_0 * (one + sign_1) - xp.float32(2)
        psi = sign_1 * (xp.float32(4) * c3 - xp.float32(3) * cos) + sign_2
        coeff_w = sign_1 * (xp.float32(12) * c2 - xp.float32(3))
        coeff_x = xp.float32(8) * sign_1 * c3 - sign_2
    else:
        c3 = c2 * cos
        c4 = c2 * c2
        sign_3 = xp.sign(sign_0 * (xp.float32(2) * c2 - one))
        sign_4 = xp.float32(2) * sign_0 + sign_3 - xp.float32(3)
        psi = sign_3 * (xp.float32(8) * c4 - xp.float32(8) * c2 + one) + sign_4
        coeff_w = sign_3 * (xp.float32(32) * c3 - xp.float32(16) * cos)
        coeff_x = sign_3 * (xp.float32(24) * c4 - xp.float32(8) * c2 - one) - sign_4
    return psi, coeff_w, coeff_x


class MarginInnerProductLayer(Layer):
    """Bottoms (features, label); tops the margin product (M, num_output) and, optionally, lambda."""

    type = "MarginInnerProduct"
    exact_num_bottom_blobs = 2
    min_top_blobs = 1
    max_top_blobs = 2
    param_block = BLOCK

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the block, checks features and labels share their num, creates (or checks) the weight."""
        param = get_param_block(self.layer_param, BLOCK)
        if bottom[0].shape[:1] != bottom[1].shape[:1]:
            raise self.error(f"the label bottom (shape {bottom[1].shape}) must have one label per sample of "
                             f"the feature bottom (shape {bottom[0].shape}); multi-label is not supported")
        if param.num_output == 0:
            raise self.error(f"{BLOCK}.num_output must be given and positive")
        self.margin = int(param.type)
        self.num_output = param.num_output
        self.axis = self._axis(bottom[0])
        self.k = bottom[0].count_between(self.axis)
        # The fork's iter_ is a Dtype counter: iteration, then +1 before every forward.
        self.iteration = np.float32(param.iteration)
        self.lambda_ = np.float32(0)
        shape = (self.num_output, self.k)
        if not self.blobs:
            weight = Blob(shape)
            get_filler(param.weight_filler).fill(weight)
            self.blobs.append(weight)
        if len(self.blobs) != 1 or self.blobs[0].shape != shape:
            raise self.error(f"expects one weight blob of shape {shape}, got "
                             f"{[b.shape for b in self.blobs]}")
        self.x_norm: Array | None = None
        self.cos_label: Array | None = None

    def _axis(self, blob: Blob) -> int:
        try:
            return blob.canonical_axis_index(get_param_block(self.layer_param, BLOCK).axis)
        except ValueError as err:
            raise self.error(f"{BLOCK}.axis: {err}") from None

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Top 0: the bottom's axes before `axis`, then num_output; top 1 (lambda): shape (1,)."""
        axis = self._axis(bottom[0])
        if bottom[0].count_between(axis) != self.k:
            raise self.error(f"input size incompatible with inner product parameters: the bottom "
                             f"{bottom[0].shape} gives {bottom[0].count_between(axis)} inputs from axis "
                             f"{axis}, the weight expects {self.k}")
        self.m = bottom[0].count_between(0, axis)
        if bottom[1].count != self.m:
            raise self.error(f"the label bottom holds {bottom[1].count} labels for {self.m} samples")
        top[0].reshape(bottom[0].shape[:axis] + (self.num_output,))
        if len(top) == 2:
            top[1].reshape((1,))

    def _lambda(self) -> np.float32:
        """base (1 + gamma iter)^-power, at least lambda_min, in float as the fork's Forward_gpu."""
        param = get_param_block(self.layer_param, BLOCK)
        f32 = np.float32
        scaled = f32(1) + f32(param.gamma) * self.iteration
        value = f32(param.base) * f32(np.power(np.float64(scaled), -np.float64(f32(param.power))))
        return max(value, f32(param.lambda_min))

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Normalises the weight rows in place (as the fork does, every forward), then y = x W^T with the
        label's column replaced by (lambda x.w + |x| psi(cos)) / (1 + lambda)."""
        xp = side.xp
        self.iteration = np.float32(self.iteration + np.float32(1))
        self.lambda_ = self._lambda()
        if len(top) == 2:
            top[1].mutable_data_on(side)[...] = self.lambda_
        weight = self.blobs[0].mutable_data_on(side)
        weight /= xp.sqrt((weight * weight).sum(axis=1, keepdims=True))
        x = bottom[0].data_on(side).reshape(self.m, self.k)
        y = top[0].mutable_data_on(side).reshape(self.m, self.num_output)
        y[...] = x @ weight.T
        if self.margin == 0:
            return
        check_labels(self, bottom[1], self.num_output, None)
        labels = bottom[1].data_on(side).reshape(-1).astype(xp.int64)
        rows = xp.arange(self.m)
        x_norm = xp.sqrt((x * x).sum(axis=1))
        cos = y[rows, labels] / x_norm
        psi = margin_terms(xp, self.margin, cos)[0]
        lam = xp.float32(self.lambda_)
        y[rows, labels] = (y[rows, labels] * lam + x_norm * psi) / (xp.float32(1) + lam)
        self.x_norm, self.cos_label = x_norm, cos

    def allow_force_backward(self, bottom_index: int) -> bool:
        """force_backward never reaches the label bottom (backward writes no label diff, as the fork)."""
        return bottom_index == 0

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dW += dy^T x (the plain product's, as the fork); dx as the fork's Backward_gpu: dy W, except the
        label's column, whose (coeff_w w + coeff_x x) term is rescaled to a unit coefficient vector."""
        xp = side.xp
        dy = top[0].diff_on(side).reshape(self.m, self.num_output)
        x = bottom[0].data_on(side).reshape(self.m, self.k)
        weight = self.blobs[0].data_on(side)
        if self.param_propagate_down(0):
            gemm_accumulate(dy.T, x, self.blobs[0].mutable_diff_on(side))
        if not propagate_down[0]:
            return
        dx = bottom[0].mutable_diff_on(side).reshape(self.m, self.k)
        if self.margin == 0:
            xp.matmul(dy, weight, out=dx)
            return
        assert self.x_norm is not None and self.cos_label is not None  # forward ran before backward
        labels = bottom[1].data_on(side).reshape(-1).astype(xp.int64)
        rows = xp.arange(self.m)
        lam = xp.float32(self.lambda_)
        share = xp.float32(1) / (xp.float32(1) + lam)
        dy_label = dy[rows, labels]
        scaled = dy.copy()
        scaled[rows, labels] = lam * share * dy_label
        _, coeff_w, coeff_x = margin_terms(xp, self.margin, self.cos_label)
        coeff_x = -coeff_x / self.x_norm
        norm = xp.sqrt(coeff_w * coeff_w + coeff_x * coeff_x)
        along = share * dy_label
        dx[...] = scaled @ weight + (along * coeff_w / norm)[:, None] * weight[labels] \
            + (along * coeff_x / norm)[:, None] * x
