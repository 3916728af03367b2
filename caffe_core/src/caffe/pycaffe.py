"""pycaffe's Net: dictionaries of blobs and params, forward/backward with keyword arrays."""

from __future__ import annotations

import itertools
import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.net import Net as CoreNet
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.pycaffe")


class Net:
    """pycaffe's Net: (model, phase, level=0, stages=None, weights=None) or legacy (model, weights, phase).

    `optimize_memory=True` lets blobs whose lifetimes do not overlap share memory (a net that will run no
    backward); its inputs, outputs and the blobs named in `keep` stay readable after forward.
    """

    def __init__(self, network_file: caffe_pb2.NetParameter | str | os.PathLike, *args: Any, level: int = 0,
                 stages: Sequence[str] | None = None, weights: str | os.PathLike | None = None,
                 phase: caffe_pb2.Phase | None = None, optimize_memory: bool = False,
                 keep: Sequence[str] = ()) -> None:
        if len(args) == 2 and isinstance(args[0], str | os.PathLike):
            log.warning("Net(network_file, pretrained_file, phase) is deprecated; "
                        "use Net(network_file, phase, weights=pretrained_file)")
            weights, phase = args[0], args[1]
        elif len(args) == 1:
            phase = args[0]
        elif len(args) > 2:
            raise TypeError("Net(network_file, phase, level=0, stages=None, weights=None)")
        if phase is None:
            raise TypeError("Net() needs a phase: caffe.TRAIN or caffe.TEST")
        self._net = CoreNet(network_file, phase=phase, level=level, stages=list(stages or []),
                            optimize_memory=optimize_memory, keep=tuple(keep))
        if weights is not None:
            self._net.copy_trained_layers_from(weights)

    @classmethod
    def wrap(cls, core_net: CoreNet) -> Net:
        """A pycaffe view of an existing core Net (as solver.net is)."""
        view = cls.__new__(cls)
        view._net = core_net
        return view

    @property
    def core(self) -> CoreNet:
        """The caffe_core Net behind this view."""
        return self._net

    # ----- structure -----
    @property
    def blobs(self) -> OrderedDict[str, Blob]:
        """Blobs by name, from bottom to top."""
        return OrderedDict(zip(self._net.blob_names, self._net.blobs, strict=True))

    @property
    def params(self) -> OrderedDict[str, list[Blob]]:
        """Learnable blobs by layer name, for layers that have them."""
        return OrderedDict((name, layer.blobs) for name, layer in zip(self._net.layer_names, self._net.layers,
                                                                      strict=True) if layer.blobs)

    @property
    def layers(self) -> list:
        """The layers, in order."""
        return list(self._net.layers)

    @property
    def layer_dict(self) -> OrderedDict:
        """Layers by name."""
        return OrderedDict(zip(self._net.layer_names, self._net.layers, strict=True))

    @property
    def _layer_names(self) -> list[str]:
        return list(self._net.layer_names)

    @property
    def _blobs(self) -> list[Blob]:
        return list(self._net.blobs)

    @property
    def _inputs(self) -> list[int]:
        return list(self._net.input_blob_indices)

    @property
    def _outputs(self) -> list[int]:
        return list(self._net.output_blob_indices)

    def _top_ids(self, layer_index: int) -> list[int]:
        return list(self._net.top_id_vecs[layer_index])

    def _bottom_ids(self, layer_index: int) -> list[int]:
        return list(self._net.bottom_id_vecs[layer_index])

    @property
    def _blob_names(self) -> list[str]:
        return list(self._net.blob_names)

    @property
    def inputs(self) -> list[str]:
        """Names of the Input layers' blobs."""
        return [self._net.blob_names[i] for i in self._net.input_blob_indices]

    @property
    def outputs(self) -> list[str]:
        """Names of the blobs produced and never consumed."""
        return [self._net.blob_names[i] for i in self._net.output_blob_indices]

    @property
    def blob_loss_weights(self) -> OrderedDict[str, float]:
        """Loss weight of every blob by name."""
        return OrderedDict(zip(self._net.blob_names, self._net.blob_loss_weights, strict=True))

    @property
    def top_names(self) -> OrderedDict[str, list[str]]:
        """Top blob names of each layer."""
        return OrderedDict((name, [self._net.blob_names[i] for i in ids])
                           for name, ids in zip(self._net.layer_names, self._net.top_id_vecs, strict=True))

    @property
    def bottom_names(self) -> OrderedDict[str, list[str]]:
        """Bottom blob names of each layer."""
        return OrderedDict((name, [self._net.blob_names[i] for i in ids])
                           for name, ids in zip(self._net.layer_names, self._net.bottom_id_vecs, strict=True))

    # ----- running -----
    def _layer_index(self, name: str | None, default: int) -> int:
        if name is None:
            return default
        if name not in self._net.layer_names_index:
            raise CaffeError(f"no layer named '{name}' in net '{self._net.name}'")
        return self._net.layer_names_index[name]

    def forward(self, blobs: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
                **kwargs: npt.ArrayLike) -> dict[str, np.ndarray]:
        """Sets input arrays from kwargs, runs layers start..end and returns the requested outputs."""
        start_ind = self._layer_index(start, 0)
        end_ind = self._layer_index(end, len(self._net.layers) - 1)
        outputs = set(self.outputs if end is None else self.top_names[end]) | set(blobs or [])
        for name in sorted(outputs):
            if not self._net.readable_after_forward(name, end_ind):
                raise CaffeError(f"blob '{name}' of net '{self._net.name}' shares memory with later blobs "
                                 f"(the net was built with optimize_memory), so forward overwrites it; name "
                                 f"it in keep=('{name}',) when building the net")
        if kwargs and set(kwargs) != set(self.inputs):
            raise CaffeError(f"Input blob arguments do not match net inputs: got "
                             f"{', '.join(sorted(kwargs))}, net '{self._net.name}' has inputs "
                             f"{', '.join(self.inputs)}")
        for name, value in kwargs.items():
            blob = self._net.blob_by_name(name)
            value = np.asarray(value)
            if value.shape[:1] != blob.shape[:1]:
                raise CaffeError(f"input '{name}' has batch size {value.shape[:1]}, the blob expects "
                                 f"{blob.shape[0]}")
            blob.data[...] = value.reshape(blob.shape)
        self._net.forward_from_to(start_ind, end_ind)
        return {name: self._net.blob_by_name(name).data for name in outputs}

    def backward(self, diffs: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
                 **kwargs: npt.ArrayLike) -> dict[str, np.ndarray]:
        """Sets output diffs from kwargs, runs layers start..end backward and returns input diffs."""
        start_ind = self._layer_index(start, len(self._net.layers) - 1)
        end_ind = self._layer_index(end, 0)
        wanted = set(self.inputs if end is None else self.bottom_names[end]) | set(diffs or [])
        if kwargs and set(kwargs) != set(self.outputs):
            raise CaffeError(f"Top diff arguments do not match net outputs: got "
                             f"{', '.join(sorted(kwargs))}, net '{self._net.name}' has outputs "
                             f"{', '.join(self.outputs)}")
        for name, value in kwargs.items():
            blob = self._net.blob_by_name(name)
            blob.diff[...] = np.asarray(value).reshape(blob.shape)
        self._net.backward_from_to(start_ind, end_ind)
        return {name: self._net.blob_by_name(name).diff for name in wanted}

    def _forward(self, start: int, end: int) -> float:
        """Runs layers start..end (indices, inclusive) forward; returns their loss."""
        return self._net.forward_from_to(start, end)

    def _backward(self, start: int, end: int) -> None:
        """Runs layers start down to end (indices, inclusive) backward."""
        self._net.backward_from_to(start, end)

    def before_forward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) before each layer's forward."""
        self._net.add_before_forward(callback)

    def after_forward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) after each layer's forward."""
        self._net.add_after_forward(callback)

    def before_backward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) before each layer's backward."""
        self._net.add_before_backward(callback)

    def after_backward(self, callback: Callable[[int], None]) -> None:
        """Calls callback(layer_index) after each layer's backward."""
        self._net.add_after_backward(callback)

    def _batch(self, blobs: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
        """Splits equally long arrays into batches of the first blob's num, zero-padding the last."""
        if not blobs:
            return
        num = len(next(iter(blobs.values())))
        batch_size = self._net.blobs[0].shape[0]
        for start in range(0, num - num % batch_size, batch_size):
            yield {name: values[start:start + batch_size] for name, values in blobs.items()}
        remainder = num % batch_size
        if remainder:
            padded = {}
            for name, values in blobs.items():
                values = np.asarray(values)
                padding = np.zeros((batch_size - remainder,) + values.shape[1:])
                padded[name] = np.concatenate([values[-remainder:], padding])
            yield padded

    def forward_all(self, blobs: Sequence[str] | None = None, **kwargs: Any) -> dict[str, np.ndarray]:
        """forward() over inputs of any length in batches; outputs are stacked with the padding dropped."""
        all_outs: dict[str, list] = {out: [] for out in set(self.outputs + list(blobs or []))}
        batches = self._batch(kwargs) if kwargs else iter([{}])
        for batch in batches:
            for out, values in self.forward(blobs=blobs, **batch).items():
                _collect(all_outs[out], values)
        return _stack_unpadded(all_outs, _length(kwargs))

    def forward_backward_all(self, blobs: Sequence[str] | None = None, diffs: Sequence[str] | None = None,
                             **kwargs: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """forward() and backward() in batches: inputs and output diffs from kwargs; returns (outs, diffs)."""
        all_outs: dict[str, list] = {out: [] for out in set(self.outputs + list(blobs or []))}
        all_diffs: dict[str, list] = {diff: [] for diff in set(self.inputs + list(diffs or []))}
        forward_batches = self._batch({name: kwargs[name] for name in self.inputs if name in kwargs})
        backward_batches = self._batch({name: kwargs[name] for name in self.outputs if name in kwargs})
        no_batch: dict[str, Any] = {}
        for forward_batch, backward_batch in itertools.zip_longest(forward_batches, backward_batches,
                                                                   fillvalue=no_batch):
            for out, values in self.forward(blobs=blobs, **forward_batch).items():
                _collect(all_outs[out], values)
            for diff, values in self.backward(diffs=diffs, **backward_batch).items():
                _collect(all_diffs[diff], values)
        length = _length(kwargs)
        return _stack_unpadded(all_outs, length), _stack_unpadded(all_diffs, length)

    def reshape(self) -> None:
        """Propagates input shape changes."""
        self._net.reshape()

    def copy_from(self, weights: str) -> None:
        """Loads weights from a .caffemodel or HDF5 file."""
        self._net.copy_trained_layers_from(weights)

    def share_with(self, other: Net) -> None:
        """Shares learnable blobs with another net's same-named layers."""
        self._net.share_trained_layers_with(other._net)

    def save(self, filename: str) -> None:
        """Writes a binary .caffemodel."""
        self._net.save(filename)

    def save_hdf5(self, filename: str) -> None:
        """Writes Caffe's HDF5 weights layout."""
        self._net.to_hdf5(filename)

    def load_hdf5(self, filename: str) -> None:
        """Loads weights from Caffe's HDF5 layout."""
        self._net.copy_trained_layers_from_hdf5(filename)

    def clear_param_diffs(self) -> None:
        """Zeroes every learnable param diff."""
        self._net.clear_param_diffs()

    def set_input_arrays(self, data: np.ndarray, labels: np.ndarray) -> None:
        """Feeds the net's first MemoryData layer: float32 C-contiguous (N, C, H, W) data and N labels."""
        layer = next((layer for layer in self._net.layers if layer.type == "MemoryData"), None)
        if layer is None:
            raise CaffeError(f"set_input_arrays needs a MemoryData layer; net '{self._net.name}' has none")
        if labels.ndim == 1:
            labels = np.ascontiguousarray(labels[:, np.newaxis, np.newaxis, np.newaxis])
        for what, array in (("data", data), ("labels", labels)):
            if array.dtype != np.float32 or not array.flags.c_contiguous or array.ndim != 4:
                raise CaffeError(f"set_input_arrays: the {what} array must be a C-contiguous 4-D float32 "
                                 f"array, got {array.ndim}-D {array.dtype}")
        if data.shape[0] != labels.shape[0]:
            raise CaffeError(f"set_input_arrays: data and labels must have the same first dimension, got "
                             f"{data.shape[0]} and {labels.shape[0]}")
        layer.reset(data, labels)  # type: ignore[attr-defined]  # a MemoryData layer's (caffe-layers-data)


def _collect(collected: list, values: np.ndarray) -> None:
    """Adds one batch of a blob: its items, or the whole value for a 0-d blob such as a loss."""
    if np.ndim(values) == 0:
        collected.append(np.array(values))
    else:
        collected.extend(np.array(values, copy=True))


def _length(arrays: Mapping[str, Any]) -> int | None:
    return len(next(iter(arrays.values()))) if arrays else None


def _stack_unpadded(collected: dict[str, list], length: int | None) -> dict[str, np.ndarray]:
    """Stacks collected items and drops the padding of the last batch."""
    stacked = {name: np.asarray(items) for name, items in collected.items()}
    if length is None:
        return stacked
    return {name: values[:length] if values.ndim and len(values) > length else values
            for name, values in stacked.items()}
