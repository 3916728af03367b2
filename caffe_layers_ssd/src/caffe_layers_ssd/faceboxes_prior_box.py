"""PriorBox[faceboxes]: FaceBoxes' PriorBox (sfzhang15/FaceBoxes @ b52cc92), SSD's type and message with other
boxes: min sizes 32 and 64 densified to 4 x 4 and 2 x 2 shifted squares, and every min_size square of half
size (s - 1) / 2.

Which nets are FaceBoxes': the fork switches to 21 priors per cell on a layer with exactly three min sizes,
and densifies min sizes 32 and 64; SSD's nets have no such layer. So a PriorBox with exactly three min sizes
one of which is (truncated to an integer) 32 or 64 is FaceBoxes' densified form, and every PriorBox of a net
holding one is built by this class, including the one-min-size layers that look like SSD's. Elsewhere SSD's
PriorBox builds the layer unless the user prefers this provider (`prefer_provider("PriorBox",
"caffe-layers-ssd[faceboxes]")` or `CAFFE_LAYER_PROVIDERS`).
"""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_layers_ssd.prior_box import PriorBoxLayer

# FaceBoxes' densified min sizes: min size -> (offsets of the shifted centres along each axis, in pixels).
DENSIFIED = {32: (-16.0, -8.0, 0.0, 8.0), 64: (-16.0, 0.0)}
# The fork's fixed prior count (before max sizes) of a layer with exactly this many min sizes.
THREE_MIN_SIZES, THREE_MIN_SIZES_PRIORS = 3, 21


def has_densified_form(param: caffe_pb2.LayerParameter) -> bool:
    """Whether a PriorBox layer has FaceBoxes' densified form: three min sizes, one of them 32 or 64."""
    if param.type != "PriorBox":
        return False
    sizes = get_param_block(param, "prior_box_param").min_size
    # The fork truncates min sizes to int: 32.9 is 32 (compared as floats, so NaN or inf is no size of it).
    return len(sizes) == THREE_MIN_SIZES and any(n <= s < n + 1 for s in sizes for n in DENSIFIED)


class FaceBoxesPriorBoxLayer(PriorBoxLayer):
    """FaceBoxes' priors: min sizes 32 and 64 densified to 16 and 4 squares; half size (s - 1) / 2."""

    @classmethod
    def accepts_in_net(cls, param: caffe_pb2.LayerParameter,
                       net: Sequence[caffe_pb2.LayerParameter]) -> bool | None:
        """every PriorBox of a net with a PriorBox of three min sizes, one 32 or 64 (FaceBoxes' form)."""
        return any(has_densified_form(layer) for layer in net)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """SSD's checks, FaceBoxes' clip default (false), and the fork's prior count against its boxes."""
        param = get_param_block(self.layer_param, "prior_box_param")
        if param.denser_prior_boxes:
            raise self.error("prior_box_param.denser_prior_boxes is TextBoxes++' field; FaceBoxes' PriorBox "
                             "has no such field (build the layer with SSD's PriorBox, or remove the field)")
        super().layer_setup(bottom, top)
        self.clip = param.clip if param.HasField("clip") else False
        declared = (THREE_MIN_SIZES_PRIORS if len(self.min_sizes) == THREE_MIN_SIZES
                    else len(self.aspect_ratios) * len(self.min_sizes)) + len(self.max_sizes)
        if declared != self.num_priors:
            sizes = [int(s) for s in self.min_sizes]
            what = "past the end of" if self.num_priors > declared else "short of"
            raise self.error(
                f"prior_box_param.min_size {sizes}: FaceBoxes' PriorBox sizes its top for {declared} priors "
                f"per cell (21 with exactly three min sizes, else aspect ratios x min sizes; plus one per "
                f"max_size) but writes {self.num_priors} (min size 32 gives 16 boxes, 64 gives 4, as "
                f"FaceBoxes densifies them), so the fork writes {what} its top. FaceBoxes' nets densify 32 "
                f"and 64 only in a layer with exactly three min sizes (32, 64, 128) and no aspect ratio")

    def min_size_priors(self, min_size: int) -> list[tuple[float, float, float, float]]:
        """32: 4 x 4 squares shifted by -16, -8, 0, 8 px; 64: 2 x 2 by -16, 0; half size (s - 1) / 2."""
        half = (min_size - 1) / 2.0
        offsets = DENSIFIED.get(min_size, (0.0,))
        return [(dx, dy, half, half) for dy in offsets for dx in offsets]
