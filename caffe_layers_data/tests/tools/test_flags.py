"""gflags spellings accepted by the data tools."""

from __future__ import annotations

import pytest

from caffe_layers_data.tools.flags import normalise_argv


def test_single_dash_and_boolean_spellings():
    argv = ["-gray", "--shuffle=false", "--noencoded", "-backend=leveldb", "root/", "-resize_width", "3"]
    assert normalise_argv(argv, ("gray", "shuffle", "encoded")) == [
        "--gray", "--no-shuffle", "--no-encoded", "--backend=leveldb", "root/", "--resize_width", "3"]


def test_bad_boolean_value_is_refused():
    with pytest.raises(SystemExit, match="--gray expects true or false"):
        normalise_argv(["--gray=maybe"], ("gray",))
