"""The Python loss layer linreg.prototxt names (module pyloss): a Euclidean loss written in Python."""

import numpy as np

import caffe


class EuclideanLossLayer(caffe.Layer):
    """Half the squared distance between two inputs, summed and divided by the batch size, as Caffe's
    EuclideanLoss computes it, through the Python layer interface."""

    def setup(self, bottom, top):
        """Refuses anything but two inputs."""
        if len(bottom) != 2:
            raise ValueError(f"EuclideanLossLayer compares two inputs, not {len(bottom)}")

    def reshape(self, bottom, top):
        """Refuses inputs of different sizes; the loss is one number."""
        sizes = (bottom[0].count, bottom[1].count)
        if sizes[0] != sizes[1]:
            raise ValueError(f"EuclideanLossLayer inputs differ in size: {sizes}")
        self.difference = np.zeros_like(bottom[0].data, dtype=np.float32)
        top[0].reshape(1)

    def forward(self, bottom, top):
        """Keeps first - second for backward and writes the loss."""
        self.difference[...] = bottom[0].data - bottom[1].data
        top[0].data[...] = np.sum(self.difference ** 2) / bottom[0].num / 2.0

    def backward(self, top, propagate_down, bottom):
        """The gradient is the difference over the batch size: + for the first input, - for the second."""
        for index, sign in enumerate((1, -1)):
            if propagate_down[index]:
                bottom[index].diff[...] = sign * self.difference / bottom[index].num
