"""Automatic Split layers for blobs consumed more than once, with Caffe's names (InsertSplits)."""

from __future__ import annotations

from caffe_core.errors import NetBuildError
from caffe_core.proto import caffe_pb2


def split_layer_name(layer_name: str, blob_name: str, blob_index: int) -> str:
    """Caffe's name for the Split layer of a top: `<blob>_<layer>_<i>_split`."""
    return f"{blob_name}_{layer_name}_{blob_index}_split"


def split_blob_name(layer_name: str, blob_name: str, blob_index: int, split_index: int) -> str:
    """Caffe's name for one Split output: `<blob>_<layer>_<i>_split_<j>`."""
    return f"{blob_name}_{layer_name}_{blob_index}_split_{split_index}"


def insert_splits(param: caffe_pb2.NetParameter) -> caffe_pb2.NetParameter:
    """A copy of the net with a Split layer after every top used by several bottoms (or bottom + loss)."""
    last_top: dict[str, tuple[int, int]] = {}
    source_of_bottom: dict[tuple[int, int], tuple[int, int]] = {}
    uses: dict[tuple[int, int], int] = {}
    loss_weight: dict[tuple[int, int], float] = {}
    for i, layer in enumerate(param.layer):
        for j, blob in enumerate(layer.bottom):
            if blob not in last_top:
                raise NetBuildError(f"Unknown bottom blob '{blob}' (layer '{layer.name}', bottom index {j})")
            source_of_bottom[(i, j)] = last_top[blob]
            uses[last_top[blob]] = uses.get(last_top[blob], 0) + 1
        for j, blob in enumerate(layer.top):
            last_top[blob] = (i, j)
        for j in range(min(len(layer.loss_weight), len(layer.top))):
            top = last_top[layer.top[j]]
            loss_weight[top] = layer.loss_weight[j]
            if loss_weight[top]:
                uses[top] = uses.get(top, 0) + 1

    out = caffe_pb2.NetParameter()
    out.CopyFrom(param)
    del out.layer[:]
    next_split: dict[tuple[int, int], int] = {}
    for i, original in enumerate(param.layer):
        layer = out.layer.add()
        layer.CopyFrom(original)
        for j, blob in enumerate(layer.bottom):
            top = source_of_bottom[(i, j)]
            if uses.get(top, 0) > 1:
                k = next_split.get(top, 0)
                next_split[top] = k + 1
                layer.bottom[j] = split_blob_name(param.layer[top[0]].name, blob, top[1], k)
        for j, blob in enumerate(layer.top):
            count = uses.get((i, j), 0)
            if count <= 1:
                continue
            weight = loss_weight.get((i, j), 0.0)
            split = out.layer.add(name=split_layer_name(layer.name, blob, j), type="Split")
            split.bottom.append(blob)
            for k in range(count):
                split.top.append(split_blob_name(layer.name, blob, j, k))
                if weight:
                    split.loss_weight.append(weight if k == 0 else 0.0)
            if weight:
                layer.ClearField("loss_weight")
                next_split[(i, j)] = next_split.get((i, j), 0) + 1
    return out
