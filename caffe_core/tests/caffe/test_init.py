"""The `caffe` package exports what pycaffe's did."""

import caffe
from caffe import net_spec


def test_exports_match_pycaffe():
    for name in ("Net", "NetSpec", "layers", "params", "to_proto", "io", "Classifier", "Detector", "Timer",
                 "NCCL", "has_nccl", "solver_count", "set_solver_count", "solver_rank", "set_solver_rank",
                 "set_multiprocess", "TRAIN", "TEST"):
        assert hasattr(caffe, name), name
    assert caffe.layers is net_spec.layers and caffe.io.load_image is not None
