"""What the `caffe` commands share: --gpu/--stage/--phase parsing, flag checks and output score order."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from caffe_core.errors import CaffeError
from caffe_core.proto import caffe_pb2
from caffe_core.tools.caffe_cli_common import (
    output_scores,
    parse_gpus,
    phase_of,
    require_positive,
    stages_of,
    use_devices,
)


def test_parse_gpus():
    assert parse_gpus("") == [] and parse_gpus("3") == [3] and parse_gpus("0,2") == [0, 2]
    with pytest.raises(CaffeError, match="--gpu must be 'all' or a comma-separated list of device ids, "
                                         "got '0,x'"):
        parse_gpus("0,x")


def test_several_gpus_outside_training_are_refused():
    # `caffe train --gpu=0,1` starts a rank per GPU before it gets here; scoring and timing use one GPU.
    with pytest.raises(CaffeError, match=r"testing runs on one GPU; pass one device id to --gpu \(\[0, 1\]"):
        use_devices([0, 1], "testing")


def test_stages_and_phase():
    assert stages_of(argparse.Namespace(stage="")) == []
    assert stages_of(argparse.Namespace(stage="a,,b")) == ["a", "b"]
    assert phase_of(argparse.Namespace(phase=""), caffe_pb2.TEST) == caffe_pb2.TEST
    assert phase_of(argparse.Namespace(phase="TRAIN"), caffe_pb2.TEST) == caffe_pb2.TRAIN
    with pytest.raises(CaffeError, match="Unknown phase: VAL"):
        phase_of(argparse.Namespace(phase="VAL"), caffe_pb2.TRAIN)


def test_require_positive_names_the_flag():
    require_positive(1, "iterations")
    with pytest.raises(CaffeError, match="--iterations must be > 0, got 0"):
        require_positive(0, "iterations")


class _Blob:
    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float32)

    def cpu_data(self):
        return self.values


def test_output_scores_walk_outputs_then_elements_with_their_loss_weight():
    net = argparse.Namespace(output_blob_indices=[2, 0], blob_names=["acc", "mid", "loss"],
                             blob_loss_weights=[0.0, 0.0, 0.5],
                             blobs=[_Blob([0.25, 0.75]), _Blob([9.0]), _Blob([1.5])])
    assert output_scores(net) == [("loss", 1.5, 0.5), ("acc", 0.25, 0.0), ("acc", 0.75, 0.0)]
