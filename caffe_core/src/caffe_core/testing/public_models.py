"""Public models (BVLC's and other projects' prototxts) for tests, from the folder CAFFE_PUBLIC_MODELS names.

The repository holds no copy of them. A test about a public model asks for it by its path under that folder
(`public_model("bvlc/examples/mnist/lenet.prototxt")`) and skips, saying how to run it, when the variable is
unset; the noxfile points the variable at ../shared/models when that folder exists.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

VARIABLE = "CAFFE_PUBLIC_MODELS"
SKIP_REASON = f"set {VARIABLE} to a folder of the public models (../shared/models) to run this"


class PublicModelsError(RuntimeError):
    """CAFFE_PUBLIC_MODELS unset where a model is required, naming no folder, or lacking the model."""


def public_models_folder() -> Path | None:
    """The folder CAFFE_PUBLIC_MODELS names, or None when the variable is unset or empty."""
    value = os.environ.get(VARIABLE)
    if not value:
        return None
    folder = Path(value)
    if not folder.is_dir():
        raise PublicModelsError(f"{VARIABLE}={value} is not a folder")
    return folder


def find_public_model(relative: str) -> Path:
    """The public model at `relative` under the folder (for scripts: an error, not a skip, without it)."""
    folder = public_models_folder()
    if folder is None:
        raise PublicModelsError(f"{relative} is a public model: {SKIP_REASON}")
    path = folder / relative
    if not path.is_file():
        raise PublicModelsError(f"{VARIABLE}={folder} has no {relative}")
    return path


def public_model(relative: str) -> Path:
    """The public model at `relative` under the folder; skips the calling test when the variable is unset."""
    if public_models_folder() is None:
        pytest.skip(SKIP_REASON)
    return find_public_model(relative)


def public_model_params(pattern: str) -> list:
    """pytest params of the public files matching `pattern` (a glob under the folder), each with its path
    under the folder as id; without the variable, one param that skips saying how to run them."""
    folder = public_models_folder()
    if folder is None:
        return [pytest.param(None, id=VARIABLE + "-unset", marks=pytest.mark.skip(reason=SKIP_REASON))]
    return [pytest.param(path, id=str(path.relative_to(folder))) for path in sorted(folder.glob(pattern))]
