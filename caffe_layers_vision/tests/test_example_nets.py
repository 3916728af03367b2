"""Golden cases computed by BVLC Caffe for the example nets built on vision layers: LeNet, CIFAR-10 quick."""

from __future__ import annotations

import json
import os

import pytest

from caffe_core import registry
from caffe_core.errors import CaffeError
from caffe_core.testing.golden import check_layer_case

NET_CASES = ["lenet", "cifar10_quick"]


def _implemented(layer_type: str) -> bool:
    try:
        registry.layer_class(layer_type)
    except CaffeError:
        return False
    return True


@pytest.mark.parametrize("case", NET_CASES)
def test_net_case(golden_case, case: str) -> None:
    with open(os.path.join(golden_case(case), "case.json")) as f:
        types = json.load(f)["layer_types"]
    missing = [t for t in types if not _implemented(t)]
    if missing:
        pytest.skip(f"layer types from packs that are not installed: {', '.join(missing)}")
    assert check_layer_case(golden_case(case)) == []
