"""py-faster-rcnn's Python ProposalLayer (`module: 'rpn.proposal_layer'`), computed by this pack's code.

A drop-in for prototxts of py-faster-rcnn and of PVANet (sanghoon/pva-faster-rcnn, whose ProposalLayer also
reads `ratios`): point a module named as the prototxt says at this class, e.g. a file
`rpn/proposal_layer.py` on sys.path holding `from caffe_layers_rcnn.py_faster_rcnn import ProposalLayer`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Any, TypedDict

import caffe
from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_layers_rcnn.anchors import DEFAULT_RATIOS, DEFAULT_SCALES, generate_anchors
from caffe_layers_rcnn.py_faster_rcnn_proposals import ProposalSettings, bottom_problem, propose


class RpnConfig(TypedDict):
    """One phase's RPN_* settings of py-faster-rcnn's config, as ProposalSettings' keyword arguments."""

    pre_nms_topn: int
    post_nms_topn: int
    nms_thresh: float
    min_size: int


# py-faster-rcnn's lib/fast_rcnn/config.py: cfg.TRAIN and cfg.TEST RPN_* (min size at the original scale).
CONFIG: dict[int, RpnConfig] = {
    caffe_pb2.TRAIN: {"pre_nms_topn": 12000, "post_nms_topn": 2000, "nms_thresh": 0.7, "min_size": 16},
    caffe_pb2.TEST: {"pre_nms_topn": 6000, "post_nms_topn": 300, "nms_thresh": 0.7, "min_size": 16},
}
# The keys the forks' ProposalLayer reads (ratios: PVANet's); num_classes is read by the other Python
# layers of those nets and sits in some of PVANet's proposal param_str too, where the fork ignores it.
READ_KEYS = ("feat_stride", "scales", "ratios")
IGNORED_KEYS = ("num_classes",)
_KEY = re.compile(r"""^\s*(?P<key>'[^']*'|"[^"]*"|[A-Za-z_]\w*)\s*:\s*(?P<value>.*?)\s*$""")


def parse_param_str(text: str) -> dict[str, Any]:
    """param_str as py-faster-rcnn's YAML: a dict literal, or `key: value` lines (a !!python/tuple tag ok)."""
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        parsed = _literal(text)
        if not isinstance(parsed, dict):
            raise ValueError(f"param_str {text!r} is not a mapping")
        return parsed
    result = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        match = _KEY.match(line)
        if match is None:
            raise ValueError(f"param_str line {line!r} is not 'key: value'")
        key = match["key"].strip("'\"")
        value = match["value"].removeprefix("!!python/tuple").strip()
        result[key] = _literal(value)
    return result


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError) as err:
        raise ValueError(f"param_str value {text!r} is not a number, string, list or dict literal") from err


class ProposalLayer(caffe.Layer):
    """py-faster-rcnn's rpn.proposal_layer.ProposalLayer: param_str feat_stride (required), scales, ratios."""

    def setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads param_str, makes the anchors and picks cfg.TRAIN or cfg.TEST by phase."""
        params = parse_param_str(self.param_str)
        unknown = [key for key in params if key not in READ_KEYS + IGNORED_KEYS]
        if unknown:
            raise ValueError(f"{self._describe()}: param_str key {unknown[0]!r} is not one the proposal "
                             f"layer reads ({', '.join(READ_KEYS)}; {', '.join(IGNORED_KEYS)} is ignored)")
        if "feat_stride" not in params:
            raise ValueError(f"{self._describe()}: param_str {self.param_str!r} must give 'feat_stride'")
        ratios = self._positive_list(params, "ratios", DEFAULT_RATIOS)
        scales = self._positive_list(params, "scales", DEFAULT_SCALES)
        self.anchors = generate_anchors(ratios=ratios, scales=scales)
        self.anchor_counts = (len(ratios), len(scales))
        config = CONFIG[caffe_pb2.TRAIN if self.phase == caffe_pb2.TRAIN else caffe_pb2.TEST]
        self.settings = ProposalSettings(feat_stride=int(params["feat_stride"]), **config)
        top[0].reshape(1, 5)
        if len(top) > 1:
            top[1].reshape(1, 1, 1, 1)

    def _describe(self) -> str:
        """How errors name this layer."""
        return f"layer '{self.layer_param.name}' (Python ProposalLayer)"

    def _positive_list(self, params: dict[str, Any], key: str, default: Sequence[float]) -> list[float]:
        """param_str's list under `key` (or the default) as floats, refused unless all are positive."""
        value = params.get(key, default)
        if not isinstance(value, list | tuple) or not value:
            raise ValueError(f"{self._describe()}: param_str '{key}' must be a non-empty list, got "
                             f"{value!r}")
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and v > 0 for v in value):
            raise ValueError(f"{self._describe()}: param_str '{key}' must hold positive numbers, got "
                             f"{value!r}")
        return [float(v) for v in value]

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks the bottoms; the tops take their shape in forward."""
        problem = bottom_problem(bottom[0].shape, bottom[1].shape, bottom[2].count, self.anchors.shape[0])
        if problem:
            ratios, scales = self.anchor_counts
            raise ValueError(f"{self._describe()}: {problem} (param_str gives {ratios} ratios x {scales} "
                             f"scales = {self.anchors.shape[0]} anchors per cell)")

    def forward(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """rois (R, 5) and, with a second top, their scores (R, 1)."""
        rois, scores = propose(bottom[0].data, bottom[1].data, bottom[2].data, self.anchors, self.settings)
        top[0].reshape(*rois.shape)
        top[0].data[...] = rois
        if len(top) > 1:
            top[1].reshape(*scores.shape)
            top[1].data[...] = scores

    def backward(self, top: Sequence[Blob], propagate_down: Sequence[bool], bottom: Sequence[Blob]) -> None:
        """Proposals pass no gradient."""
