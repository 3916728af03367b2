"""What a built net is made of: one record per layer, per blob and per parameter, with ids into the lists."""

from __future__ import annotations

from dataclasses import dataclass, field

from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


def shape_string(blob: Blob) -> str:
    """A blob's shape as Caffe's logs and errors write it: `64 1 28 28 (50176)`."""
    return "".join(f"{d} " for d in blob.shape) + f"({blob.count})"


@dataclass
class BlobRecord:
    """One blob: its name, whether backward reaches it, and the weight its value adds to the loss."""

    name: str
    blob: Blob
    need_backward: bool = False
    loss_weight: float = 0.0


@dataclass
class LayerRecord:
    """One layer: the blobs it reads and writes (ids and the Blobs themselves) and what backward does there.

    A top id equal to a bottom id is computed in place. `bottom_blobs` and `top_blobs` are the very lists the
    layer was set up with and is run with.
    """

    name: str
    layer: Layer
    bottoms: list[int] = field(default_factory=list)
    tops: list[int] = field(default_factory=list)
    bottom_blobs: list[Blob] = field(default_factory=list)
    top_blobs: list[Blob] = field(default_factory=list)
    bottom_need_backward: list[bool] = field(default_factory=list)
    need_backward: bool = False
    param_ids: list[int] = field(default_factory=list)


@dataclass
class ParamRecord:
    """One learnable blob of a layer: where it sits, and which parameter it is (shared: its owner's id)."""

    blob: Blob
    layer_id: int
    index: int
    name: str
    owner: int
    learnable_id: int

    @property
    def display_name(self) -> str:
        """Its name, or its index within its layer when it has none."""
        return self.name or str(self.index)


@dataclass
class LearnableRecord:
    """A parameter the solver updates (shared blobs count once), with its learning-rate and decay factors."""

    blob: Blob
    lr_mult: float
    decay_mult: float
    lr_mult_given: bool
    decay_mult_given: bool


@dataclass
class NetGraph:
    """A built net: its layers, blobs and parameters in Caffe's order, and which blobs are inputs and outputs.

    `layer_ids` and `blob_ids` give the id of a name (a name used twice, the later one).
    """

    name: str
    phase: caffe_pb2.Phase
    debug_info: bool = False
    layers: list[LayerRecord] = field(default_factory=list)
    blobs: list[BlobRecord] = field(default_factory=list)
    params: list[ParamRecord] = field(default_factory=list)
    learnables: list[LearnableRecord] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    layer_ids: dict[str, int] = field(default_factory=dict)
    blob_ids: dict[str, int] = field(default_factory=dict)
