"""Fixtures of the cross-package tests: copies of the main job's MNIST example."""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

REPO = Path(__file__).resolve().parents[1]


def copy_example(root: Path) -> tuple[Path, ModuleType]:
    """examples/mnist copied under root (no databases or snapshots), and its train_lenet loaded from there."""
    example = root / "examples" / "mnist"
    shutil.copytree(REPO / "examples" / "mnist", example,
                    ignore=shutil.ignore_patterns("mnist_*_lmdb", "*.tmp", "lenet_iter_*"))
    spec = importlib.util.spec_from_file_location(f"train_lenet_{id(example)}", example / "train_lenet.py")
    job = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(job)
    return example, job


@pytest.fixture
def mnist_copy() -> Callable[[Path], tuple[Path, ModuleType]]:
    """`mnist_copy(root)`: examples/mnist copied under root without databases, and its train_lenet module."""
    return copy_example


@pytest.fixture(scope="session")
def mnist_workdir(tmp_path_factory: pytest.TempPathFactory) -> SimpleNamespace:
    """A folder (`.root`) holding examples/mnist with its LMDBs, as the prototxts' relative paths expect,
    and the copy's train_lenet module (`.job`); shared by the tests that train on it."""
    root = tmp_path_factory.mktemp("mnist")
    example, job = copy_example(root)
    job.materialise_databases(example)
    return SimpleNamespace(root=root, job=job)
