"""Pick: one type, two classes (variants) chosen by bottom count, as forks that redefined a type need."""

from caffe_core.layer import Layer


class PickFirstLayer(Layer):
    """One bottom: top = bottom."""

    type = "Pick"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    @classmethod
    def accepts(cls, param):
        """layers with one bottom."""
        return len(param.bottom) == 1

    def reshape(self, bottom, top):
        """Top has the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        """top = bottom."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side)


class PickSumLayer(PickFirstLayer):
    """Two bottoms: top = bottom 0 + bottom 1."""

    exact_num_bottom_blobs = 2

    @classmethod
    def accepts(cls, param):
        """layers with two bottoms."""
        return len(param.bottom) == 2

    def forward_on(self, side, bottom, top):
        """top = bottom 0 + bottom 1."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side) + bottom[1].data_on(side)
