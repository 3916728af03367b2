"""A Python layer that fails on one rank at one iteration, to test that a failing rank ends the whole job."""

import os
import signal

import caffe
from caffe_core import runtime


class FailOnRank(caffe.Layer):
    """Passes its bottom through; on rank `rank`, at forward number `at`, raises or kills itself."""

    def setup(self, bottom, top):
        rank, at, how = self.param_str.split(",")
        self.rank, self.at, self.how = int(rank), int(at), how
        self.calls = 0

    def reshape(self, bottom, top):
        top[0].reshape(*bottom[0].data.shape)

    def forward(self, bottom, top):
        self.calls += 1
        if runtime.solver_rank() == self.rank and self.calls == self.at:
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise RuntimeError(f"injected failure at forward {self.at}")
        top[0].data[...] = bottom[0].data

    def backward(self, top, propagate_down, bottom):
        bottom[0].diff[...] = top[0].diff
