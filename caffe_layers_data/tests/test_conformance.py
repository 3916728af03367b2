"""The core's conformance suite over every layer type of caffe-layers-data: each imports, sets up, runs
forward, reshapes and back-propagates finite diffs; the pack's declarations clash with no installed pack.

The file-reading layers read tiny sources this module writes, once, into a scratch folder; MemoryData gets
its arrays through `reset`. HDF5Output writes one forward per file, as Caffe's, so it cannot run the suite's
forward-reshape-forward: the test below checks it the same way with one forward."""

from __future__ import annotations

import tempfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from PIL import Image

from caffe_core.blob import Blob
from caffe_core.errors import LayerSetupError
from caffe_core.layer import Layer
from caffe_core.testing.conformance import Example, conformance_suite
from caffe_layers_data.datum import array_to_datum
from caffe_layers_data.db import open_db

# Removed when the interpreter exits.
_FILES = tempfile.TemporaryDirectory(prefix="caffe-layers-data-conformance-")


def _write_sources(folder: Path) -> None:
    """Two 6x8 colour images with an image list and a window file, an LMDB of two 3x4x5 Datums, and
    an HDF5 file of four rows listed in a source file."""
    rng = np.random.default_rng(0)
    for name in ("a.png", "b.png"):
        Image.fromarray(rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)).save(folder / name)
    (folder / "images.txt").write_text("a.png 1\nb.png 0\n")
    (folder / "windows.txt").write_text("# 0\na.png\n3\n6\n8\n2\n1 0.9 1 1 6 4\n0 0.1 0 0 2 2\n"
                                        "# 1\nb.png\n3\n6\n8\n1\n2 0.8 2 1 7 5\n")
    with open_db("lmdb", str(folder / "db"), "new") as db:
        txn = db.new_transaction()
        for i in range(2):
            txn.put(b"%08d" % i, array_to_datum(rng.integers(0, 256, (3, 4, 5), dtype=np.uint8), i)
                    .SerializeToString())
        txn.commit()
    with h5py.File(folder / "rows.h5", "w") as f:  # datasets named as the suite names the tops
        f["t0"] = rng.standard_normal((4, 2, 3, 3)).astype(np.float32)
        f["t1"] = np.arange(4, dtype=np.float32)
    (folder / "hdf5.txt").write_text(f"{folder / 'rows.h5'}\n")


FOLDER = Path(_FILES.name)
_write_sources(FOLDER)

def _give_arrays(layer: Layer) -> None:
    """MemoryData serves only arrays handed to it through reset() (pycaffe's set_input_arrays)."""
    layer.reset(np.arange(24, dtype=np.float32).reshape(4, 1, 2, 3), np.arange(4, dtype=np.float32))


TestConformance = conformance_suite("caffe-layers-data", skip={
    "HDF5Output": "a second forward into one file fails, as in Caffe (its datasets exist), so the suite's "
                  "forward-reshape-forward cannot pass: test_hdf5_output_conforms_with_one_forward_per_file "
                  "checks it",
}, examples={
    "Data": Example(f'data_param {{ source: "{FOLDER / "db"}" backend: LMDB batch_size: 2 }} '
                    "transform_param { crop_size: 3 mirror: true }", bottoms=[], tops=2),
    "DummyData": Example('dummy_data_param { shape { dim: 2 dim: 3 } data_filler { type: "gaussian" } '
                         "shape { dim: 2 } }", bottoms=[], tops=2),
    "HDF5Data": Example(f'hdf5_data_param {{ source: "{FOLDER / "hdf5.txt"}" batch_size: 3 }}',
                        bottoms=[], tops=2),
    "MemoryData": Example("memory_data_param { batch_size: 2 channels: 1 height: 2 width: 3 }", bottoms=[],
                          tops=2, prepare=_give_arrays),
    "ImageData": Example(f'image_data_param {{ source: "{FOLDER / "images.txt"}" root_folder: "{FOLDER}/" '
                         "batch_size: 2 new_height: 4 new_width: 5 }", bottoms=[], tops=2),
    "WindowData": Example(f'window_data_param {{ source: "{FOLDER / "windows.txt"}" root_folder: "{FOLDER}/" '
                          "batch_size: 4 fg_fraction: 0.5 } transform_param { crop_size: 4 }",
                          bottoms=[], tops=2),
})


def _assert_finite_diffs(blobs: list[Blob]) -> None:
    for blob in blobs:
        assert blob.cpu_diff().shape == blob.shape
        assert np.isfinite(blob.cpu_diff()).all()


def test_hdf5_output_conforms_with_one_forward_per_file(make_layer, gaussian, blob_of, tmp_path):
    layer = make_layer('name: "h" type: "HDF5Output" bottom: "data" bottom: "label" '
                       f'hdf5_output_param {{ file_name: "{tmp_path / "out.h5"}" }}')
    bottom = [gaussian((2, 3, 4, 5)), blob_of([1, 0])]
    layer.setup(bottom, [])
    layer.forward(bottom, [])
    layer.reshape(bottom, [])
    with pytest.raises(LayerSetupError, match="dataset 'data' already exists"):
        layer.forward(bottom, [])
    layer.backward([], [layer.allow_force_backward(i) for i in range(2)], bottom)
    _assert_finite_diffs([*bottom, *layer.blobs])
    with h5py.File(tmp_path / "out.h5", "r") as f:
        assert np.array_equal(f["data"][...], bottom[0].cpu_data())
