"""caffe_layers_face's own fixtures: the forks' Forward_cpu/Backward_cpu written as their loops, one float at
a time (the references the vectorised layers are checked against). CPU mode, seed 1701, `make_layer`,
`blob_of` and `golden_case` come from the core's pytest plugin."""

from __future__ import annotations

import math

import numpy as np
import pytest

F = np.float32


def sign(v: float) -> F:
    """caffe_sign: (0 < v) - (v < 0)."""
    return F(int(v > 0) - int(v < 0))


class ForkFace:
    """The forks' layers as loops over samples, classes and features."""

    @staticmethod
    def margin_inner_product(x, labels, weight, margin, lam, top_diff=None):
        """wy1iu/sphereface's MarginInnerProductLayer: the weight rows normalised, then the forward of its
        Forward_gpu kernels (the label's entry (lambda x.w + |x| psi) / (1 + lambda)) and the bottom diff of
        Backward_gpu's kernels. Returns (normalised weight, top, bottom diff, weight diff)."""
        m, k = x.shape
        n = weight.shape[0]
        w = weight.astype(F).copy()
        for j in range(n):
            norm = F(math.sqrt(sum(float(F(v * v)) for v in w[j])))
            w[j] = (w[j] / norm).astype(F)
        lam = F(lam)
        top = np.zeros((m, n), F)
        coeff = {}
        for i in range(m):
            x_norm = F(math.sqrt(sum(float(F(v * v)) for v in x[i])))
            for j in range(n):
                top[i, j] = F(np.dot(x[i].astype(np.float64), w[j].astype(np.float64)))
            y = int(labels[i])
            c = F(top[i, y] / x_norm)
            s0 = sign(c)
            if margin == "DOUBLE":
                psi = F(2) * s0 * c * c - F(1)
                cw, cx = F(4) * s0 * c, F(2) * s0 * c * c + F(1)
            elif margin == "TRIPLE":
                s1 = sign(abs(c) - F(0.5))
                s2 = s0 * (F(1) + s1) - F(2)
                psi = s1 * (F(4) * c ** 3 - F(3) * c) + s2
                cw, cx = s1 * (F(12) * c * c - F(3)), F(8) * s1 * c ** 3 - s2
            elif margin == "QUADRUPLE":
                s3 = sign(s0 * (F(2) * c * c - F(1)))
                s4 = F(2) * s0 + s3 - F(3)
                psi = s3 * (F(8) * c ** 4 - F(8) * c * c + F(1)) + s4
                cw, cx = s3 * (F(32) * c ** 3 - F(16) * c), s3 * (F(24) * c ** 4 - F(8) * c * c - F(1)) - s4
            else:
                continue
            top[i, y] = F(F(top[i, y] * lam + x_norm * psi) / (F(1) + lam))
            cx = F(-F(1) / x_norm * cx)
            norm = F(math.sqrt(float(cw * cw + cx * cx)))
            coeff[i] = (F(cw / norm), F(cx / norm))
        if top_diff is None:
            return w, top, None, None
        dx = np.zeros((m, k), F)
        for i in range(m):
            y = int(labels[i])
            for e in range(k):
                acc = 0.0
                for j in range(n):
                    if j != y or margin == "SINGLE":
                        acc += float(top_diff[i, j]) * float(w[j, e])
                    else:
                        cw, cx = coeff[i]
                        acc += float(F(1) / (F(1) + lam) * top_diff[i, j]) * (float(cw * w[j, e])
                                                                               + float(cx * x[i, e]))
                        acc += float(lam / (F(1) + lam) * top_diff[i, j]) * float(w[j, e])
                dx[i, e] = F(acc)
        dw = np.zeros((n, k), F)
        for j in range(n):
            for e in range(k):
                dw[j, e] = F(sum(float(top_diff[i, j]) * float(x[i, e]) for i in range(m)))
        return w, top, dx, dw

    @staticmethod
    def center_loss(x, labels, centers, top_diff):
        """ydwen/caffe-face's CenterLossLayer Forward_cpu/Backward_cpu: (loss, bottom diff, centers' diff)."""
        m, k = x.shape
        n = centers.shape[0]
        distance = np.zeros((m, k), F)
        for i in range(m):
            distance[i] = x[i] - centers[int(labels[i])]
        dot = F(0)
        for v in distance.ravel():
            dot = F(dot + F(v * v))
        loss = F(F(dot / F(m)) / F(2))
        center_diff = np.zeros((n, k), F)
        for j in range(n):
            count = 0
            variation = np.zeros(k, F)
            for i in range(m):
                if int(labels[i]) == j:
                    count += 1
                    variation = (variation - distance[i]).astype(F)
            center_diff[j] += (F(1) / (F(count) + F(1)) * variation).astype(F)
        dx = (distance * F(F(top_diff) / F(m))).astype(F)
        return loss, dx, center_diff

    @staticmethod
    def cosin_add_m(x, labels, m, top_diff):
        """xialuxi/arcface-caffe's CosinAddm in TRAIN as its Forward_gpu kernel (c >= 1 stays) and backward
        kernel (with Backward_cpu's coefficient 1 where sin(theta) is 0): (top, bottom diff)."""
        top = x.astype(F).copy()
        dx = top_diff.astype(F).copy()
        threshold = F(math.cos(math.pi - m))
        for i in range(x.shape[0]):
            y = int(labels[i])
            c = F(x[i, y])
            linear = False
            if c < F(1):
                if c > threshold:
                    top[i, y] = F(math.cos(float(F(F(math.acos(c)) + F(m)))))
                else:
                    top[i, y] = F(c - F(m) * F(math.sin(m)))
                    linear = True
            sin_theta = F(math.sqrt(max(0.0, float(F(1) - c * c))))
            if not linear and sin_theta != 0:
                dx[i, y] = F(dx[i, y] * F(F(math.cos(m)) + F(math.sin(m)) * c / sin_theta))
        return top, dx

    @staticmethod
    def combined_margin(x, labels, m1, m2, m3, top_diff):
        """xialuxi/arcface-caffe's CombinedMargin Forward_cpu/Backward_cpu: (top, bottom diff)."""
        top = x.astype(F).copy()
        dx = top_diff.astype(F).copy()
        for i in range(x.shape[0]):
            y = int(labels[i])
            if y < 0:
                continue
            angle = F(F(m1) * F(math.acos(x[i, y])) + F(m2))
            top[i, y] = F(F(math.cos(angle)) - F(m3))
            slope = F(m1) * (1 - float(x[i, y]) ** 2) ** -0.5 * math.sin(angle)
            dx[i, y] = F(dx[i, y] * F(slope))
        return top, dx

    @staticmethod
    def adacos_add_m_scale(x, labels, m, scale, top_diff):
        """xialuxi/arcface-caffe's AdaCosAddmScale Forward_cpu/Backward_cpu with the scale s_d held before
        the forward: (top, bottom diff, new scale)."""
        num, dim = x.shape
        top = x.astype(F).copy()
        cos_t = x.astype(F).copy()
        flag = np.zeros_like(top)
        bi = np.ones_like(top)
        threshold = F(math.cos(math.pi - m))
        for i in range(num):
            y = int(labels[i])
            if y < 0:
                continue
            bi[i, y] = 0
            sin_theta = F(math.sqrt(max(0.0, float(F(1) - cos_t[i, y] * cos_t[i, y]))))
            if cos_t[i, y] > F(1):
                cos_t[i, y], sin_theta = F(1), F(0)
            if cos_t[i, y] <= threshold:
                top[i, y] = F(cos_t[i, y] - F(math.sin(math.pi - m) * m))
                flag[i, y] = 1
            else:
                top[i, y] = F(cos_t[i, y] * F(math.cos(m)) - sin_theta * F(math.sin(m)))
        sum_theta = F(0)
        for v in x.ravel():
            sum_theta = F(sum_theta + F(math.acos(float(v))))
        sum_theta = F(sum_theta / F(x.size))
        cos_med = F(math.cos(min(float(sum_theta), math.pi / 4)))
        total = F(0)
        for v, b in zip(x.ravel(), bi.ravel(), strict=True):
            total = F(total + F(math.exp(float(F(F(v * b) * F(scale))))))
        scale = F(math.log(float(F(total / F(num)))) / cos_med)
        top = (top * scale).astype(F)
        dx = (top_diff * scale).astype(F)
        for i in range(num):
            y = int(labels[i])
            if y < 0:
                continue
            c = cos_t[i, y]
            sin_theta = F(math.sqrt(max(0.0, float(F(1) - c * c))))
            arc = F(F(math.cos(m)) + F(math.sin(m)) * c / sin_theta) if sin_theta else F(1)
            coeff = F(1) if flag[i, y] else arc
            dx[i, y] = F(coeff * dx[i, y])
        return top, dx, scale

    @staticmethod
    def norm_l2(x, top_diff):
        """xialuxi/arcface-caffe's NormL2 Forward_cpu/Backward_cpu on (N, D): (top, bottom diff)."""
        top = np.zeros_like(x, dtype=F)
        dx = np.zeros_like(x, dtype=F)
        for i in range(x.shape[0]):
            norm = sum(float(v) * float(v) for v in x[i])
            top[i] = (x[i] * F(1.0 / math.sqrt(norm + 1e-7))).astype(F)
            a = F(sum(float(u) * float(v) for u, v in zip(top[i], top_diff[i], strict=True)))
            dx[i] = ((top_diff[i] - a * top[i]) * F(1.0 / math.sqrt(norm + 1e-7))).astype(F)
        return top, dx


@pytest.fixture
def fork_face() -> type[ForkFace]:
    """The forks' layers as loops: `fork_face.margin_inner_product(...)`, `.center_loss(...)`, ..."""
    return ForkFace
