"""examples/pycaffe/layers/pyloss.py: Caffe's Euclidean loss written as a Python layer."""

import numpy as np

import caffe


class EuclideanLossLayer(caffe.Layer):
    """Computes the Euclidean loss as the C++ EuclideanLossLayer does, through the Python layer interface."""

    def setup(self, bottom, top):
        """Checks the input pair."""
        if len(bottom) != 2:
            raise Exception("Need two inputs to compute distance.")

    def reshape(self, bottom, top):
        """Checks the input dimensions match; the loss output is a scalar."""
        if bottom[0].count != bottom[1].count:
            raise Exception("Inputs must have the same dimension.")
        # difference is shape of inputs
        self.diff = np.zeros_like(bottom[0].data, dtype=np.float32)
        # loss output is scalar
        top[0].reshape(1)

    def forward(self, bottom, top):
        """Half the summed squared difference, per item of the batch."""
        self.diff[...] = bottom[0].data - bottom[1].data
        top[0].data[...] = np.sum(self.diff**2) / bottom[0].num / 2.

    def backward(self, top, propagate_down, bottom):
        """The difference over the batch size, with a sign for each input."""
        for i in range(2):
            if not propagate_down[i]:
                continue
            if i == 0:
                sign = 1
            else:
                sign = -1
            bottom[i].diff[...] = sign * self.diff / bottom[i].num
