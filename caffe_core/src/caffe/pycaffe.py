"""pycaffe's Net: dictionaries of blobs and params, forward/backward with keyword arrays."""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

import numpy as np

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.net import Net as CoreNet

log = logging.getLogger("caffe.pycaffe")


class Net:
    """pycaffe's Net: `Net(model_file, phase, level=0, stages=None, weights=None)`, or the legacy
    `Net(model_file, pretrained_file, phase)`."""

    def __init__(self, network_file: Any, *args: Any, level: int = 0, stages: Sequence[str] | None = None,
                 weights: str | None = None, phase: int | None = None) -> None:
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
        self._net = CoreNet(network_file, phase=phase, level=level, stages=list(stages or []))
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
                **kwargs: Any) -> dict[str, np.ndarray]:
        """Sets input arrays from kwargs, runs layers start..end and returns the requested outputs."""
        start_ind = self._layer_index(start, 0)
        end_ind = self._layer_index(end, len(self._net.layers) - 1)
        outputs = set([end] if end is not None else self.outputs) | set(blobs or [])
        if end is not None:
            outputs = set(self.top_names[end]) | set(blobs or [])
        for name, value in kwargs.items():
            if name not in self.inputs:
                raise CaffeError(f"'{name}' is not an input blob of net '{self._net.name}' "
                                 f"(inputs: {', '.join(self.inputs)})")
            blob = self._net.blob_by_name(name)
            value = np.asarray(value)
            if value.shape[:1] != blob.shape[:1]:
                raise CaffeError(f"input '{name}' has batch size {value.shape[:1]}, the blob expects "
                                 f"{blob.shape[0]}")
            blob.data[...] = value.reshape(blob.shape)
        self._net.forward_from_to(start_ind, end_ind)
        return {name: self._net.blob_by_name(name).data for name in outputs}

    def backward(self, diffs: Sequence[str] | None = None, start: str | None = None, end: str | None = None,
                 **kwargs: Any) -> dict[str, np.ndarray]:
        """Sets output diffs from kwargs, runs layers start..end backward and returns input diffs."""
        start_ind = self._layer_index(start, len(self._net.layers) - 1)
        end_ind = self._layer_index(end, 0)
        wanted = set(self.inputs if end is None else self.bottom_names[end]) | set(diffs or [])
        for name, value in kwargs.items():
            if name not in self.outputs:
                raise CaffeError(f"'{name}' is not an output blob of net '{self._net.name}'")
            blob = self._net.blob_by_name(name)
            blob.diff[...] = np.asarray(value).reshape(blob.shape)
        self._net.backward_from_to(start_ind, end_ind)
        return {name: self._net.blob_by_name(name).diff for name in wanted}

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
        layer.reset(data, labels)
