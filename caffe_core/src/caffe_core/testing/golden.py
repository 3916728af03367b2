"""Runs a golden layer case computed by BVLC Caffe against this implementation.

A case folder holds net.prototxt, case.json, blobs.npz and optionally weights.caffemodel (see the
golden README). `check_layer_case(path)` returns the list of mismatches; an empty list means the
case reproduces within its tolerances.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator

import numpy as np

from caffe_core.blob import Blob
from caffe_core.net import Net
from caffe_core.proto import caffe_pb2


@contextlib.contextmanager
def working_directory(path: str | os.PathLike) -> Iterator[None]:
    """Temporarily changes the working directory (cases use relative paths)."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _mismatch(key: str, got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str | None:
    if np.size(got) != np.size(want):
        return f"{key}: shape {np.shape(got)} vs expected {np.shape(want)}"
    got = np.asarray(got, dtype=np.float64).reshape(np.shape(want))
    excess = np.abs(got - want) - (atol + rtol * np.abs(want))
    if (excess > 0).any():
        i = np.unravel_index(np.argmax(excess), excess.shape)
        return f"{key}: max excess {excess[i]:.3g} at {i} (got {got[i]:.6g}, want {want[i]:.6g})"
    return None


def build_case_net(case_dir: str | os.PathLike) -> tuple[Net, dict]:
    """Builds a case's net in its phase with its weights (from the caffemodel or the seed recipe)."""
    with open(os.path.join(case_dir, "case.json")) as f:
        cfg = json.load(f)
    phase = caffe_pb2.TRAIN if cfg.get("phase", "TEST") == "TRAIN" else caffe_pb2.TEST
    with working_directory(case_dir):
        net = Net("net.prototxt", phase=phase)
        if os.path.exists("weights.caffemodel"):
            net.copy_trained_layers_from("weights.caffemodel")
        elif cfg.get("weights_seed"):
            seed = cfg["weights_seed"]
            rng = np.random.RandomState(seed["seed"])
            for p in seed["params"]:
                values = rng.standard_normal(size=tuple(p["shape"])) * p["std"] + p["mean"]
                layer = net.layer_by_name(p["layer"])
                layer.blobs[p["index"]].mutable_cpu_data()[...] = values.astype(np.float32)
    return net, cfg


def check_layer_case(case_dir: str | os.PathLike) -> list[str]:
    """Runs forward (and backward when the case says so) and returns every mismatch."""
    net, cfg = build_case_net(case_dir)
    rtol0, atol0 = cfg.get("rtol", 1e-4), cfg.get("atol", 1e-5)
    overrides = cfg.get("tol_overrides", {})
    stored = np.load(os.path.join(case_dir, "blobs.npz"))
    problems: list[str] = []

    def compare(key: str, got: np.ndarray) -> None:
        rtol, atol = overrides.get(key, (rtol0, atol0))
        problem = _mismatch(key, got, stored[key], rtol, atol)
        if problem:
            problems.append(problem)

    def param(name: str) -> Blob:
        layer, _, index = name.rpartition("/")
        return net.layer_by_name(layer).blobs[int(index)]

    keys = [(k, *k.split("/", 1)) for k in stored.files]
    for key, kind, name in keys:
        if kind == "param":
            compare(key, param(name).cpu_data())
    for key, kind, name in keys:
        if kind == "input":
            blob = net.blob_by_name(name)
            blob.mutable_cpu_data()[...] = stored[key].reshape(blob.shape)
    with working_directory(case_dir):
        net.forward()
    for key, kind, name in keys:
        if kind == "data":
            if not net.has_blob(name):
                problems.append(f"missing blob {name}")
                continue
            compare(key, net.blob_by_name(name).cpu_data())
        elif kind == "param_after":
            compare(key, param(name).cpu_data())
    if not cfg.get("check_backward"):
        return problems
    for blob in net.learnable_params:
        blob.mutable_cpu_diff()[...] = 0
    for key, kind, name in keys:
        if kind == "topdiff":
            blob = net.blob_by_name(name)
            blob.mutable_cpu_diff()[...] = stored[key].reshape(blob.shape)
    net.backward()
    for key, kind, name in keys:
        if kind == "diff":
            compare(key, net.blob_by_name(name).cpu_diff())
        elif kind == "pdiff":
            compare(key, param(name).cpu_diff())
    return problems
