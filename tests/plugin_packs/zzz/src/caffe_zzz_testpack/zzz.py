"""ZZZ: top = mul * bottom, with mul from the pack's own zzz_param block."""

from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class ZZZLayer(Layer):
    """Multiplies its bottom by zzz_param.mul."""

    type = "ZZZ"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        """Reads mul from the pack's parameter block."""
        self.mul = get_param_block(self.layer_param, "zzz_param").mul

    def reshape(self, bottom, top):
        """Top has the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        """top = mul * bottom."""
        top[0].mutable_data_on(side)[...] = self.mul * bottom[0].data_on(side)

    def backward_on(self, side, top, propagate_down, bottom):
        """bottom diff = mul * top diff."""
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side)[...] = self.mul * top[0].diff_on(side)
