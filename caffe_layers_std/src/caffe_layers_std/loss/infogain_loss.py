"""InfogainLoss: softmax, then -sum_l H[label, l] log p_l; H from a binaryproto file or a third bottom."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.errors import CaffeError
from caffe_core.layer_bases.loss import LOG_THRESHOLD, normalizer, read_labels
from caffe_core.proto import caffe_pb2
from caffe_layers_std.loss.softmax_loss_base import SoftmaxLossLayer
from caffe_layers_std.rounding import logf, sequential_sum


class InfogainLossLayer(SoftmaxLossLayer):
    """The infogain-weighted log loss of softmax(x) along infogain_loss_param.axis; optional prob top."""

    type = "InfogainLoss"
    exact_num_bottom_blobs = -1
    min_bottom_blobs = 2
    max_bottom_blobs = 3

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads ignore_label and normalization, and H from infogain_loss_param.source (without bottom 2)."""
        super().layer_setup(bottom, top)
        loss_param = self.layer_param.loss_param
        if loss_param.HasField("normalize"):
            raise self.error("loss_param.normalize is deprecated for InfogainLoss; "
                             "use loss_param.normalization")
        self.ignore = self.ignore_label()
        self.mode = loss_param.normalization
        self.infogain = Blob()
        if len(bottom) < 3:
            source = self.layer_param.infogain_loss_param.source
            if not self.layer_param.infogain_loss_param.HasField("source"):
                raise self.error("the infogain matrix H must be given: set infogain_loss_param.source to a "
                                 "binaryproto file or pass H as a third bottom")
            try:
                self.infogain.from_proto(proto_io.read_binary_file(source, caffe_pb2.BlobProto()))
            except (CaffeError, OSError, ValueError) as err:
                raise self.error(f"cannot read the infogain matrix from infogain_loss_param.source "
                                 f"'{source}': {err}") from err

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Splits the data at the infogain axis; H must be num_labels x num_labels."""
        axis = self.layer_param.infogain_loss_param.axis
        self.reshape_softmax(bottom, top, axis, "infogain_loss_param.axis")
        h = self._h(bottom)
        if h.count != self.classes * self.classes:
            raise self.error(f"H (shape {h.shape}) must be {self.classes}x{self.classes}, the number of "
                             "labels squared")

    def _h(self, bottom: Sequence[Blob]) -> Blob:
        return bottom[2] if len(bottom) > 2 else self.infogain

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """loss = -sum_i sum_l H[label_i, l] log(max(p_il, 1e-20)) / normalizer."""
        xp = side.xp
        prob = self.forward_softmax(side, bottom, top)
        labels, valid = read_labels(self, side, bottom[1], self.classes, self.ignore)
        rows = self._h(bottom).data_on(side).reshape(self.classes, self.classes)[labels.reshape(-1)]
        rows = rows.reshape(self.outer, self.inner, self.classes)
        logs = logf(xp, xp.maximum(prob, xp.float32(LOG_THRESHOLD))).transpose(0, 2, 1)
        valid = valid.reshape(self.outer, self.inner)
        count = int(valid.sum())
        loss = -sequential_sum(xp, (rows * logs)[valid].reshape(-1))
        norm = normalizer(self.mode, self.outer, self.inner, count)
        top[0].mutable_data_on(side)[...] = loss / xp.float32(norm)

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """dx_l = (p_l sum_k H[label, k] - H[label, l]) * weight / normalizer; not the prob top's diff."""
        self.refuse_label_backward(propagate_down)
        self.refuse_label_backward(propagate_down, index=2, what="infogain matrix H")
        if not propagate_down[0]:
            return
        xp = side.xp
        prob = self.prob.data_on(side).reshape(self.outer, self.classes, self.inner)
        labels, valid = read_labels(self, side, bottom[1], self.classes, self.ignore)
        h = self._h(bottom).data_on(side).reshape(self.classes, self.classes)
        rows = h[labels.reshape(-1)].reshape(self.outer, self.inner, self.classes).transpose(0, 2, 1)
        row_sums = sequential_sum(xp, h)[labels.reshape(-1)].reshape(self.outer, 1, self.inner)
        valid = valid.reshape(self.outer, 1, self.inner)
        count = int(valid.sum())
        scale = top[0].diff_on(side).reshape(()) / xp.float32(
            normalizer(self.mode, self.outer, self.inner, count))
        grad = xp.where(valid, prob * row_sums - rows, xp.float32(0)) * scale
        self.write_logit_diff(side, bottom, grad)
