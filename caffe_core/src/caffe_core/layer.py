"""Layer: Caffe's layer contract (SetUp, Reshape, Forward/Backward on CPU and GPU, loss weights, params).

A pack writes a layer by subclassing `Layer`, naming its `type`, declaring its blob-count limits as class
attributes, and implementing `reshape` plus either
- `forward_cpu`/`backward_cpu` (numpy only; in GPU mode the blobs are synced to the host and back), or
- `forward_on`/`backward_on`, which take a `Side` and serve numpy and cupy from one code path,
and optionally a dedicated `forward_gpu`/`backward_gpu`. A layer whose bottoms need a number of axes declares
it in `bottom_num_axes`; the core checks it in `setup` and before every `reshape`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np

from caffe_core import runtime
from caffe_core.blob import Blob
from caffe_core.device import CPU, GPU, Side
from caffe_core.errors import LayerSetupError
from caffe_core.proto import caffe_pb2

# A bottom_num_axes key for every bottom the mapping does not name by index.
EVERY_BOTTOM = -1


class Layer:
    """The base of every layer; subclasses set `type` and implement reshape and forward/backward."""

    type: str = ""
    exact_num_bottom_blobs: int = -1
    min_bottom_blobs: int = -1
    max_bottom_blobs: int = -1
    exact_num_top_blobs: int = -1
    min_top_blobs: int = -1
    max_top_blobs: int = -1
    equal_num_bottom_top_blobs: bool = False
    auto_top_blobs: bool = False
    # Tops whose diff backward ignores, as Caffe's softmax losses ignore their prob top's.
    backward_ignores_tops: tuple[int, ...] = ()
    # The LayerParameter field with the type's parameters, when it is not the one of `<type>Parameter`.
    param_block: str = ""
    # The number of axes a bottom must have, by bottom index (EVERY_BOTTOM: the bottoms not named): N
    # exactly, or (low, high) inclusive.
    bottom_num_axes: ClassVar[Mapping[int, int | tuple[int, int]]] = {}

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        # Every caller of reshape (setup, forward, a net's reshape, tests) gets the axes check first.
        own_reshape = "reshape" in cls.__dict__
        if cls.bottom_num_axes and (own_reshape or not getattr(cls.reshape, "checks_bottom_axes", False)):
            cls.reshape = _checking_bottom_axes(cls.reshape)  # type: ignore[method-assign]  # wrapped on purpose

    def __init__(self, param: caffe_pb2.LayerParameter) -> None:
        self.layer_param = caffe_pb2.LayerParameter()
        self.layer_param.CopyFrom(param)
        self.phase = param.phase
        self.blobs: list[Blob] = []
        for stored in param.blobs:
            blob = Blob()
            blob.from_proto(stored)
            self.blobs.append(blob)
        self._param_propagate_down: list[bool] = []
        self._loss: list[float] = []
        # A Net clears this for layers it will never run backward, so forward need not keep what only
        # backward reads (an in-place input's copy, normalised values, argmax masks).
        self.backward_needed = True

    @classmethod
    def accepts(cls, param: caffe_pb2.LayerParameter) -> bool | None:
        """Whether this class builds the layer when several classes provide its type (None: no opinion)."""
        return None

    @classmethod
    def accepts_in_net(cls, param: caffe_pb2.LayerParameter,
                       net: Sequence[caffe_pb2.LayerParameter]) -> bool | None:
        """`accepts`, for a layer of a net whose other layers may say which fork the net comes from."""
        return cls.accepts(param)

    # ----- naming -----
    @property
    def name(self) -> str:
        """The layer's name from its parameter."""
        return self.layer_param.name

    def describe(self) -> str:
        """How errors name this layer: its name and type."""
        return f"layer '{self.name}' (type {self.type or self.layer_param.type})"

    def error(self, message: str) -> LayerSetupError:
        """A setup error that names this layer."""
        return LayerSetupError(f"{self.describe()}: {message}")

    # ----- setup -----
    def setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Checks blob counts and bottom axes, runs layer_setup and reshape, and sets up loss weights."""
        self.check_blob_counts(bottom, top)
        self.check_bottom_axes(bottom)
        self.layer_setup(bottom, top)
        # As every Caffe layer does after creating its blobs; a Net then applies each blob's lr_mult.
        missing = len(self.blobs) - len(self._param_propagate_down)
        self._param_propagate_down.extend([True] * max(missing, 0))
        self.reshape(bottom, top)
        self.set_loss_weights(top)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """One-time setup from the layer parameter (and learnable blob creation)."""

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Shapes the tops (and internal buffers) from the bottoms."""
        raise NotImplementedError(f"{type(self).__name__} does not implement reshape")

    def check_blob_counts(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Applies the class's Exact/Min/Max bottom and top counts, as Caffe's CheckBlobCounts."""
        kind = self.type or self.layer_param.type
        nb, nt = len(bottom), len(top)
        checks = (
            (self.exact_num_bottom_blobs >= 0 and nb != self.exact_num_bottom_blobs,
             f"takes {self.exact_num_bottom_blobs} bottom blob(s) as input, got {nb}"),
            (self.min_bottom_blobs >= 0 and nb < self.min_bottom_blobs,
             f"takes at least {self.min_bottom_blobs} bottom blob(s) as input, got {nb}"),
            (self.max_bottom_blobs >= 0 and nb > self.max_bottom_blobs,
             f"takes at most {self.max_bottom_blobs} bottom blob(s) as input, got {nb}"),
            (self.exact_num_top_blobs >= 0 and nt != self.exact_num_top_blobs,
             f"produces {self.exact_num_top_blobs} top blob(s) as output, got {nt}"),
            (self.min_top_blobs >= 0 and nt < self.min_top_blobs,
             f"produces at least {self.min_top_blobs} top blob(s) as output, got {nt}"),
            (self.max_top_blobs >= 0 and nt > self.max_top_blobs,
             f"produces at most {self.max_top_blobs} top blob(s) as output, got {nt}"),
            (self.equal_num_bottom_top_blobs and nb != nt,
             f"produces one top blob per bottom blob, got {nb} bottom(s) and {nt} top(s)"),
        )
        for failed, message in checks:
            if failed:
                raise LayerSetupError(f"{kind} layer '{self.name}' {message}")

    def check_bottom_axes(self, bottom: Sequence[Blob]) -> None:
        """Refuses a bottom whose number of axes is not the one `bottom_num_axes` declares for it."""
        for index in range(len(bottom)):
            wanted = self.bottom_num_axes.get(index, self.bottom_num_axes.get(EVERY_BOTTOM))
            if wanted is None:
                continue
            low, high = (wanted, wanted) if isinstance(wanted, int) else wanted
            if not low <= bottom[index].num_axes <= high:
                raise self.error(f"bottom {index} must have {_axes_text(low, high)}, got shape "
                                 f"{list(bottom[index].shape)}")

    def set_loss_weights(self, top: Sequence[Blob]) -> None:
        """Records each top's loss weight and writes it into the top's diff, as Caffe's SetLossWeights."""
        weights = list(self.layer_param.loss_weight)
        if weights and len(weights) != len(top):
            raise self.error(f"loss_weight must be unspecified or given once per top blob "
                             f"({len(top)} tops, {len(weights)} loss_weight values)")
        self._loss = [0.0] * len(top)
        for top_id, weight in enumerate(weights):
            if weight == 0:
                continue
            self._loss[top_id] = float(weight)
            top[top_id].mutable_cpu_diff()[...] = weight

    # ----- loss -----
    def loss(self, top_index: int) -> float:
        """The loss weight of a top (0 if it is not a loss)."""
        return self._loss[top_index] if top_index < len(self._loss) else 0.0

    def set_loss(self, top_index: int, value: float) -> None:
        """Sets the loss weight of a top."""
        while len(self._loss) <= top_index:
            self._loss.append(0.0)
        self._loss[top_index] = float(value)

    # ----- forward / backward dispatch -----
    def forward(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> float:
        """Reshapes, runs forward on the current mode's side and returns the weighted loss."""
        self.reshape(bottom, top)
        on_gpu = runtime.mode() == runtime.GPU_MODE
        if on_gpu:
            self.forward_gpu(bottom, top)
        else:
            self.forward_cpu(bottom, top)
        loss = 0.0
        for top_id, blob in enumerate(top):
            if not self.loss(top_id):
                continue
            if on_gpu:
                loss += float((blob.gpu_data() * blob.gpu_diff()).sum())
            else:
                loss += float(np.dot(blob.cpu_data().ravel(), blob.cpu_diff().ravel()))
        return loss

    def backward(self, top: Sequence[Blob], propagate_down: Sequence[bool], bottom: Sequence[Blob]) -> None:
        """Runs backward on the current mode's side."""
        if runtime.mode() == runtime.GPU_MODE:
            self.backward_gpu(top, propagate_down, bottom)
        else:
            self.backward_cpu(top, propagate_down, bottom)

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """One forward code path for both sides; override this or forward_cpu."""
        raise NotImplementedError

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """One backward code path for both sides; override this or backward_cpu."""
        raise NotImplementedError

    def _overrides(self, method: str) -> bool:
        return getattr(type(self), method) is not getattr(Layer, method)

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Forward with numpy."""
        if not self._overrides("forward_on"):
            raise NotImplementedError(f"{type(self).__name__} implements neither forward_cpu nor forward_on")
        self.forward_on(CPU, bottom, top)

    def forward_gpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Forward on the device; falls back to the CPU code when the layer has no device path."""
        if self._overrides("forward_on"):
            self.forward_on(GPU, bottom, top)
        else:
            self.forward_cpu(bottom, top)

    def backward_cpu(self, top: Sequence[Blob], propagate_down: Sequence[bool],
                     bottom: Sequence[Blob]) -> None:
        """Backward with numpy; layers without a backward pass keep this no-op default."""
        if self._overrides("backward_on"):
            self.backward_on(CPU, top, propagate_down, bottom)

    def backward_gpu(self, top: Sequence[Blob], propagate_down: Sequence[bool],
                     bottom: Sequence[Blob]) -> None:
        """Backward on the device; falls back to the CPU code when the layer has no device path."""
        if self._overrides("backward_on"):
            self.backward_on(GPU, top, propagate_down, bottom)
        else:
            self.backward_cpu(top, propagate_down, bottom)

    # ----- backward bookkeeping -----
    def allow_force_backward(self, bottom_index: int) -> bool:
        """Whether force_backward may make this layer back-propagate to a bottom."""
        return True

    def param_propagate_down(self, param_id: int) -> bool:
        """Whether a learnable blob's gradient is computed."""
        return param_id < len(self._param_propagate_down) and self._param_propagate_down[param_id]

    def set_param_propagate_down(self, param_id: int, value: bool) -> None:
        """Turns a learnable blob's gradient on or off."""
        while len(self._param_propagate_down) <= param_id:
            self._param_propagate_down.append(True)
        self._param_propagate_down[param_id] = bool(value)

    # ----- serialisation -----
    def adopt_stored_layer(self, source: caffe_pb2.LayerParameter) -> None:
        """Called after a net copied this layer's blobs from a stored layer (e.g. of a .caffemodel)."""

    def stored_blob_advice(self, index: int, stored_shape: tuple[int, ...]) -> str | None:
        """What a stored learnable blob `index` of another shape means for this layer and what to do, or
        None for Caffe's own advice (rename the layer to learn it from scratch)."""
        return None

    def to_proto(self, write_diff: bool = False) -> caffe_pb2.LayerParameter:
        """The layer parameter with the current learnable blobs."""
        proto = caffe_pb2.LayerParameter()
        proto.CopyFrom(self.layer_param)
        del proto.blobs[:]
        for blob in self.blobs:
            proto.blobs.append(blob.to_proto(write_diff))
        return proto


def _axes_text(low: int, high: int) -> str:
    if low == high:
        return f"{low} axes"
    if low == 0:
        return f"at most {high} axes"
    return f"{low} to {high} axes"


def _checking_bottom_axes(reshape: Callable[..., None]) -> Callable[..., None]:
    """`reshape` preceded by the layer's check_bottom_axes."""

    @functools.wraps(reshape)
    def checked(self: Layer, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        self.check_bottom_axes(bottom)
        reshape(self, bottom, top)

    # A mark on the wrapper, so that a subclass without its own reshape is not wrapped twice.
    checked.checks_bottom_axes = True  # type: ignore[attr-defined]
    return checked
