"""A test-only pack providing a Twin layer (identity)."""

from caffe_core.layer import Layer


class TwinLayer(Layer):
    """Copies its bottom."""

    type = "Twin"

    def reshape(self, bottom, top):
        """Top has the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        """top = bottom."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)
