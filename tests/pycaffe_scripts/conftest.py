"""Fixtures for the notebook scripts: a Caffe-like working tree with small MNIST LMDBs, and golden text."""

import gzip
import shutil
from pathlib import Path

import lmdb
import numpy as np
import pytest

import caffe

HERE = Path(__file__).parent
MNIST = HERE.parents[1] / "examples" / "mnist" / "data"
TRAIN_DIGITS = 640
TEST_DIGITS = 200


def read_idx(path: Path) -> np.ndarray:
    """The uint8 payload of a gzipped IDX file, shaped by its header."""
    raw = gzip.decompress(path.read_bytes())
    dims = raw[3]
    shape = np.frombuffer(raw, dtype=">i4", count=dims, offset=4)
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def write_mnist_lmdb(target: Path, images: np.ndarray, labels: np.ndarray) -> None:
    """Stores 1x28x28 Datums under keys %08d, as Caffe's convert_mnist_data does."""
    env = lmdb.open(str(target), map_size=1 << 26)
    with env.begin(write=True) as txn:
        for index, (image, label) in enumerate(zip(images, labels, strict=True)):
            datum = caffe.io.array_to_datum(image[np.newaxis], int(label))
            txn.put(b"%08d" % index, datum.SerializeToString())
    env.close()


@pytest.fixture(scope="session")
def mnist_digits() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The first digits of the bundled MNIST subset: {'train': (images, labels), 'test': ...}."""
    return {
        "train": (read_idx(MNIST / "train-images-idx3-ubyte.gz")[:TRAIN_DIGITS],
                  read_idx(MNIST / "train-labels-idx1-ubyte.gz")[:TRAIN_DIGITS]),
        "test": (read_idx(MNIST / "t10k-images-idx3-ubyte.gz")[:TEST_DIGITS],
                 read_idx(MNIST / "t10k-labels-idx1-ubyte.gz")[:TEST_DIGITS]),
    }


@pytest.fixture(scope="session")
def mnist_lmdbs(tmp_path_factory, mnist_digits) -> Path:
    """A folder holding mnist_train_lmdb and mnist_test_lmdb, as examples/mnist/create_mnist.sh leaves."""
    folder = tmp_path_factory.mktemp("mnist_dbs")
    for split in ("train", "test"):
        write_mnist_lmdb(folder / f"mnist_{split}_lmdb", *mnist_digits[split])
    return folder


@pytest.fixture
def caffe_examples(tmp_path, monkeypatch, mnist_lmdbs) -> Path:
    """A fresh {caffe_root}/examples folder (the working directory) with mnist/ and its LMDBs."""
    examples = tmp_path / "examples"
    (examples / "mnist").mkdir(parents=True)
    for name in ("mnist_train_lmdb", "mnist_test_lmdb"):
        shutil.copytree(mnist_lmdbs / name, examples / "mnist" / name)
    monkeypatch.chdir(examples)
    caffe.set_mode_cpu()
    return examples


@pytest.fixture
def golden_text():
    """Reads a prototxt printed by BVLC pycaffe for the same NetSpec calls (copied from the golden set)."""
    return lambda name: (HERE / "golden" / name).read_text()
