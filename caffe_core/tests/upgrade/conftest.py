"""Fixtures for the upgrade tests: old-format nets written for them and their upgraded forms (fixtures/)."""

from pathlib import Path

import pytest

from caffe_core import proto_io
from caffe_core.proto import caffe_pb2

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def net_fixture():
    """Loads fixtures/<name>.prototxt as a NetParameter (no upgrade applied)."""

    def load(name: str) -> caffe_pb2.NetParameter:
        return proto_io.read_text_file(FIXTURES / f"{name}.prototxt", caffe_pb2.NetParameter())

    return load
