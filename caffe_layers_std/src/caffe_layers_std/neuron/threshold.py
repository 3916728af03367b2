"""Threshold: y = 1 where x > threshold, else 0 (no backward)."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer_bases.neuron import NeuronLayer


class ThresholdLayer(NeuronLayer):
    """A step function at threshold_param.threshold; it cannot back-propagate."""

    type = "Threshold"

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads the threshold."""
        self.threshold = self.layer_param.threshold_param.threshold

    def allow_force_backward(self, bottom_index: int) -> bool:
        """The step has no useful gradient, so force_backward does not reach the input."""
        return False

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """y = [x > threshold]."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side) > self.threshold

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """Refuses to back-propagate, as Caffe (which has no Threshold backward)."""
        if any(propagate_down):
            raise self.error("cannot back-propagate (Caffe's Threshold layer has no backward pass); "
                             "set propagate_down: false on it")
