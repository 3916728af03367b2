"""The pack author's ten minutes, end to end: in a fresh virtual environment holding only
caffe-core[test,onnx] and caffe-layers-std (no protoc, no grpcio-tools), `caffe-packs new` writes a pack
that pip installs, that `caffe-packs` lists, whose own tests pass (its ONNX export included), and that
`caffe-packs check` finds sound."""

import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*argv: str | Path, cwd: Path) -> str:
    """Runs a command, failing the test with its output when it fails; returns its stdout."""
    result = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{argv} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.slow
def test_a_new_pack_installs_lists_passes_its_tests_and_checks_clean(tmp_path):
    venv.create(tmp_path / "env", with_pip=True)
    bin_dir = tmp_path / "env" / ("Scripts" if sys.platform == "win32" else "bin")
    run(bin_dir / "python", "-m", "pip", "install", "-q", f"{ROOT / 'caffe_core'}[test,onnx]",
        ROOT / "caffe_layers_std", cwd=tmp_path)
    installed = run(bin_dir / "python", "-m", "pip", "list", "--format=freeze", cwd=tmp_path)
    assert "grpcio" not in installed and "caffe-core==" in installed
    run(bin_dir / "caffe-packs", "new", "caffe-layers-zzz", "--layer", "ZZZ", cwd=tmp_path)
    run(bin_dir / "python", "-m", "pip", "install", "-q", "./caffe-layers-zzz", cwd=tmp_path)
    listing = run(bin_dir / "caffe-packs", cwd=tmp_path)
    assert "caffe-layers-zzz 0.1.0 (1 layer types)\n  ZZZ\n  parameter blocks: zzz_param (" in listing
    tests = run(bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                cwd=tmp_path / "caffe-layers-zzz")
    passed = int(tests.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert passed >= 3 and " failed" not in tests
    onnx_test = run(bin_dir / "python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "onnx",
                    cwd=tmp_path / "caffe-layers-zzz")
    assert onnx_test.strip().splitlines()[-1].startswith("1 passed")
    assert run(bin_dir / "caffe-packs", "check", cwd=tmp_path).startswith("no problem: 3 packs")
