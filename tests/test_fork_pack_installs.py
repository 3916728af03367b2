"""A fork model from a pip install of exactly the packs it needs: MobileNet-SSD (a public model, from the
folder CAFFE_PUBLIC_MODELS names) produces detections with caffe-core, caffe-layers-std, caffe-layers-vision
and caffe-layers-ssd alone in a fresh environment (the SSD net tests run there, none skipped)."""

import subprocess
import sys
import venv
from pathlib import Path

import pytest

from caffe_core.testing.public_models import public_model

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_mobilenet_ssd_runs_on_core_std_vision_and_ssd_alone(tmp_path):
    public_model("external/mobilenet_ssd_deploy.prototxt")  # skip before installing if the SSD tests would
    venv.create(tmp_path / "env", with_pip=True)
    python = tmp_path / "env" / ("Scripts" if sys.platform == "win32" else "bin") / "python"
    packs = [ROOT / f"caffe_layers_{name}" for name in ("std", "vision", "ssd")]
    subprocess.run([python, "-m", "pip", "install", "-q", f"{ROOT / 'caffe_core'}[test]", *packs],
                   check=True, capture_output=True)
    installed = subprocess.run([python, "-m", "pip", "list", "--format=freeze"], capture_output=True,
                               text=True, check=True).stdout
    assert sorted(line.split("==")[0] for line in installed.splitlines() if line.startswith("caffe")) == \
        ["caffe-core", "caffe-layers-ssd", "caffe-layers-std", "caffe-layers-vision"]
    result = subprocess.run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "tests/test_ssd_nets.py"], cwd=ROOT, capture_output=True, text=True)
    summary = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0 and "passed" in summary and "skipped" not in summary, result.stdout
