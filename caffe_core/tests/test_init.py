"""The caffe_core package: its version is the one pyproject.toml gives the distribution."""

import tomllib
from pathlib import Path

import caffe_core

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"


def test_version_is_the_distributions():
    assert caffe_core.__version__ == tomllib.loads(PYPROJECT.read_text())["project"]["version"]
