"""Golden cases computed by BVLC Caffe for the example nets built on vision layers: LeNet, CIFAR-10 quick."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from caffe_core.testing.golden import check_layer_case

NET_CASES = ["lenet", "cifar10_quick"]


def _case(name: str):
    """The case, skipped (naming them) when no installed pack provides one of its layer types."""
    with open(Path(__file__).parent / "golden" / name / "case.json") as f:
        types = json.load(f)["layer_types"]
    return pytest.param(name, marks=pytest.mark.requires_layer_types(*types))


@pytest.mark.parametrize("case", [_case(name) for name in NET_CASES])
def test_net_case(golden_case, case: str) -> None:
    assert check_layer_case(golden_case(case)) == []
