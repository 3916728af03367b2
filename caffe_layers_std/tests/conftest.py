"""caffe_layers_std's own test fixture; CPU mode, seed 1701, `make_layer`, `blob_of`, `golden_case`,
`gpu_matches_cpu` and `device_mode` come from the core's pytest plugin."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from caffe_core.testing.exactness import device_tolerance
from caffe_core.testing.golden import check_layer_case


@pytest.fixture
def golden_bit_exact(golden_case: Callable[[str], Path], tmp_path: Path) -> Callable[..., list[str]]:
    """`golden_bit_exact(case, inexact=())`: a golden case's mismatches, blobs but `inexact` bit-exact (on a
    CUDA device within a few ulps: see caffe_core.testing.exactness)."""

    def check(case: str, inexact: tuple[str, ...] = ()) -> list[str]:
        copy = tmp_path / case
        shutil.copytree(golden_case(case), copy)
        with open(copy / "case.json") as f:
            cfg = json.load(f)
        tolerance = (cfg.get("rtol", 1e-4), cfg.get("atol", 1e-5))
        exact = device_tolerance()
        cfg.update(rtol=exact, atol=exact, tol_overrides={key: tolerance for key in inexact})
        with open(copy / "case.json", "w") as f:
            json.dump(cfg, f)
        return check_layer_case(copy)

    return check
