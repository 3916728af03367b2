"""The public models of the Caffe forks' own repositories build with the output shapes those repositories
document. Their files are not ours to copy into this repository: the test reads them from the folder named
by CAFFE_FORK_MODELS, which holds each repository at the listed commit as `<owner>+<name>/` (a clone of
github.com/<owner>/<name>), and skips, saying so, without it. `models.json` lists the files and shapes
(-1: a size the data decides, such as the number of proposals)."""

import json
import os
import pathlib
import sys

import pytest

from caffe_core.net import Net
from caffe_core.proto import caffe_pb2

HERE = pathlib.Path(__file__).parent
MODELS = json.loads((HERE / "public_fork_models" / "models.json").read_text())
ROOT = os.environ.get("CAFFE_FORK_MODELS")


@pytest.fixture(autouse=True)
def py_faster_rcnn_proposal_module(monkeypatch):
    """py-faster-rcnn's nets name `rpn.proposal_layer`; the shim points it at the R-CNN pack's layer."""
    monkeypatch.setattr(sys, "path", [str(HERE / "rcnn_support"), *sys.path])


CASES = [pytest.param(m, marks=pytest.mark.requires_layer_types(*m["types"]), id=f"{m['repo']}/{m['path']}")
         for m in MODELS]


@pytest.mark.skipif(ROOT is None, reason="set CAFFE_FORK_MODELS to a folder of the forks' repositories "
                                         "(<owner>+<name>/ at the commits in models.json)")
@pytest.mark.parametrize("model", CASES)
def test_builds_with_the_documented_output_shapes(model):
    path = pathlib.Path(ROOT) / model["repo"].replace("/", "+") / model["path"]
    net = Net(path, phase=caffe_pb2.TEST)
    for blob, shape in model["outputs"].items():
        got = list(net.blob_by_name(blob).shape)
        assert len(got) == len(shape) and all(w in (-1, g) for w, g in zip(shape, got, strict=True)), \
            f"{blob}: {got}, documented {shape}"
