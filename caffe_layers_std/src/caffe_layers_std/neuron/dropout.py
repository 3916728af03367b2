"""Dropout: in TRAIN zeroes each input with probability p and scales the rest by 1/(1-p); identity in TEST."""

from __future__ import annotations

from caffe_core.layer_bases.dropout import DropoutLayerBase


class DropoutLayer(DropoutLayerBase):
    """Caffe's (inverted) dropout; the mask is drawn from Caffe's stream (caffe_core.runtime.rng())."""

    type = "Dropout"
