"""Trained weights in and out of a built net: Caffe's binary .caffemodel and its HDF5 weights layout."""

from __future__ import annotations

import logging
import os

import numpy as np

from caffe_core import proto_io
from caffe_core.blob import proto_shape
from caffe_core.errors import ModelFileError, NetBuildError
from caffe_core.layer import Layer
from caffe_core.net_files import read_net_binary
from caffe_core.net_graph import NetGraph
from caffe_core.proto import caffe_pb2

log = logging.getLogger("caffe.net")

HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def copy_from_param(graph: NetGraph, param: caffe_pb2.NetParameter, source: str = "<net>") -> None:
    """Copies learnable blobs from a NetParameter, matching layers by name (others are ignored)."""
    for source_layer in param.layer:
        name = source_layer.name
        if name not in graph.layer_ids:
            log.info("Ignoring source layer %s", name)
            continue
        layer = graph.layers[graph.layer_ids[name]].layer
        if len(layer.blobs) != len(source_layer.blobs):
            raise ModelFileError(f"{source}: Incompatible number of blobs for layer {name}: the file "
                                 f"has {len(source_layer.blobs)}, the net expects {len(layer.blobs)}")
        for j, blob in enumerate(layer.blobs):
            stored = source_layer.blobs[j]
            if not blob.shape_equals(stored):
                raise _shape_mismatch(source, layer, j, proto_shape(stored))
            blob.from_proto(stored, reshape=False)
        layer.adopt_stored_layer(source_layer)


def copy_from_file(graph: NetGraph, path: str | os.PathLike) -> None:
    """Copies weights from a .caffemodel (binary NetParameter) or a Caffe HDF5 weights file."""
    path = os.fspath(path)
    if _is_hdf5(path):
        copy_from_hdf5(graph, path)
    else:
        copy_from_param(graph, read_net_binary(path), path)


def copy_from_hdf5(graph: NetGraph, path: str) -> None:
    """Copies weights from Caffe's HDF5 layout `/data/<layer>/<i>`."""
    import h5py

    with h5py.File(path, "r") as f:
        if "data" not in f:
            raise ModelFileError(f"{path}: HDF5 weights file has no /data group")
        group = f["data"]
        for name in group:
            if name not in graph.layer_ids:
                log.info("Ignoring source layer %s", name)
                continue
            target = graph.layers[graph.layer_ids[name]].layer.blobs
            stored = group[name]
            if len(stored) != len(target):
                raise ModelFileError(f"{path}: Incompatible number of blobs for layer {name}: the file "
                                     f"has {len(stored)}, the net expects {len(target)}")
            for j, blob in enumerate(target):
                values = np.asarray(stored[str(j)], dtype=np.float32)
                if values.shape != blob.shape and values.size != blob.count:
                    raise _shape_mismatch(path, graph.layers[graph.layer_ids[name]].layer, j, values.shape)
                blob.mutable_cpu_data()[...] = values.reshape(blob.shape)


def _shape_mismatch(source: str, layer: Layer, index: int, stored_shape: tuple[int, ...]) -> ModelFileError:
    """Caffe's shape-mismatch error, with the layer's own advice where it has some."""
    advice = layer.stored_blob_advice(index, stored_shape) or (
        "To learn this layer's parameters from scratch rather than copying from a saved net, rename the "
        "layer.")
    return ModelFileError(f"{source}: Cannot copy param {index} weights from layer "
                          f"'{layer.layer_param.name}'; shape mismatch. Source param shape is "
                          f"{stored_shape}; target param shape is {layer.blobs[index].shape}. {advice}")


def share_with(graph: NetGraph, other: NetGraph) -> None:
    """Makes a graph's learnable blobs share the data of the same-named layers of another graph."""
    for source in other.layers:
        if source.name not in graph.layer_ids:
            log.info("Ignoring source layer %s", source.name)
            continue
        target = graph.layers[graph.layer_ids[source.name]].layer.blobs
        if len(target) != len(source.layer.blobs):
            raise NetBuildError(f"Incompatible number of blobs for layer {source.name}")
        for j, blob in enumerate(target):
            if blob.shape != source.layer.blobs[j].shape:
                raise NetBuildError(f"Cannot share param {j} weights from layer '{source.name}'; shape "
                                    f"mismatch: {source.layer.blobs[j].shape} vs {blob.shape}")
            blob.share_data(source.layer.blobs[j])


def to_proto(graph: NetGraph, write_diff: bool = False) -> caffe_pb2.NetParameter:
    """The net with every layer (and its learnable blobs), as Caffe's ToProto."""
    param = caffe_pb2.NetParameter(name=graph.name)
    for record in graph.layers:
        param.layer.append(record.layer.to_proto(write_diff))
    return param


def save(graph: NetGraph, path: str | os.PathLike, write_diff: bool = False) -> None:
    """Writes a binary .caffemodel atomically."""
    proto_io.write_binary_file(path, to_proto(graph, write_diff))


def save_hdf5(graph: NetGraph, path: str | os.PathLike, write_diff: bool = False) -> None:
    """Writes Caffe's HDF5 weights layout (`/data/<layer>/<i>`, and `/diff` with write_diff)."""
    import h5py

    tmp = os.fspath(path) + ".tmp"
    with h5py.File(tmp, "w") as f:
        groups = [("data", lambda b: b.cpu_data())]
        if write_diff:
            groups.append(("diff", lambda b: b.cpu_diff()))
        for group_name, values in groups:
            group = f.create_group(group_name)
            for record in graph.layers:
                layer_group = group.create_group(record.name)
                for j, blob in enumerate(record.layer.blobs):
                    layer_group.create_dataset(str(j), data=values(blob))
    os.replace(tmp, path)


def _is_hdf5(path: str) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == HDF5_SIGNATURE
    except FileNotFoundError:
        raise ModelFileError(f"{path}: file not found") from None
