"""Shared helpers for caffe_layers_data's tests: golden cases run from scratch copies, small databases.

CPU mode, seed 1701, `make_layer`, `blob_of`, `golden_case` ... come from the core's pytest plugin."""

from __future__ import annotations

import json
import logging
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import lmdb
import numpy as np
import plyvel
import pytest
from PIL import Image

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2
from caffe_core.proto_io import parse_text
from caffe_layers_data.datum import array_to_datum
from caffe_layers_data.db import open_db


@pytest.fixture
def golden_copy(golden_case: Callable[[str], Path], tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch) -> Callable[[str], tuple[Path, dict]]:
    """`golden_copy(name)`: copies the plugin's `golden_case(name)` into a scratch folder (databases are
    written to when opened), enters it and returns (folder, case.json)."""

    def enter(name: str) -> tuple[Path, dict]:
        target = tmp_path / name
        shutil.copytree(golden_case(name), target)
        monkeypatch.chdir(target)
        with open(target / "case.json") as f:
            return target, json.load(f)

    return enter


def run_case(cfg: dict) -> list[str]:
    """Builds the case's net in the current folder, runs its passes and lists every top that differs."""
    phase = caffe_pb2.TRAIN if cfg["phase"] == "TRAIN" else caffe_pb2.TEST
    net = Net("net.prototxt", phase=phase)
    stored = np.load("outputs.npz")
    problems = []
    for p in range(cfg["passes"]):
        net.forward()
        for top in cfg["tops"]:
            got, want = net.blob_by_name(top).cpu_data(), stored[top][p]
            if got.shape != want.shape or not np.array_equal(got, want):
                problems.append(f"pass {p} top {top}: got {got.shape}, want {want.shape}")
    return problems


def net_from_text(text: str, phase: int = caffe_pb2.TEST) -> Net:
    """A Net from NetParameter text."""
    return Net(parse_text(text, caffe_pb2.NetParameter(), source="<test net>"), phase=phase)


def write_records(path: os.PathLike | str, records: dict[bytes, caffe_pb2.Datum],
                  backend: str = "lmdb") -> None:
    """A database holding the given Datums under their keys."""
    with open_db(backend, str(path), "new") as db:
        txn = db.new_transaction()
        for key, datum in records.items():
            txn.put(key, datum.SerializeToString())
        txn.commit()


def read_records(path: os.PathLike | str, backend: str = "lmdb") -> list[tuple[bytes, bytes]]:
    """Every (key, value) of a database in key order, read with lmdb or plyvel directly (not our backends)."""
    if backend == "leveldb":
        db = plyvel.DB(str(path))
        records = list(db)
        db.close()
        return records
    env = lmdb.open(str(path), readonly=True, lock=False)
    with env.begin() as txn:
        records = list(txn.cursor())
    env.close()
    return records


def write_db(path: os.PathLike | str, images: list[np.ndarray], labels: list[int] | None = None,
             backend: str = "lmdb") -> None:
    """A database of raw Datums (CxHxW uint8 images) keyed %08d, labelled 0, 1, ... unless given."""
    labels = labels if labels is not None else list(range(len(images)))
    write_records(path, {b"%08d" % i: array_to_datum(image, label)
                         for i, (image, label) in enumerate(zip(images, labels, strict=True))}, backend)


def write_images(folder: Path, count: int, size: tuple[int, int] = (4, 6)) -> list[str]:
    """PNGs `im {i}.png`, each of one RGB colour (i, 2i, 3i), in folder; their list lines, labelled 10 + i."""
    folder.mkdir(exist_ok=True)
    for i in range(count):
        Image.fromarray(np.full((*size, 3), (i, 2 * i, 3 * i), np.uint8)).save(folder / f"im {i}.png")
    return [f"im {i}.png {i + 10}" for i in range(count)]


def data_net(source: str, batch_size: int, transform: str = "", backend: str = "LMDB") -> str:
    """Net text holding one Data layer."""
    return f"""
name: "d"
layer {{ name: "data" type: "Data" top: "data" top: "label"
  transform_param {{ {transform} }}
  data_param {{ source: "{source}" backend: {backend} batch_size: {batch_size} }} }}
"""


@pytest.fixture
def dt() -> SimpleNamespace:
    """This suite's helpers (test modules cannot import conftest under --import-mode=importlib)."""
    return SimpleNamespace(run_case=run_case, net=net_from_text, data_net=data_net, write_db=write_db,
                           write_records=write_records, read_records=read_records, write_images=write_images)


@pytest.fixture
def data_log(caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> pytest.LogCaptureFixture:
    """caplog receiving the `caffe.data` records (glog setup may have stopped `caffe` propagating)."""
    monkeypatch.setattr(logging.getLogger("caffe"), "propagate", True)
    caplog.set_level(logging.INFO, logger="caffe.data")
    return caplog
