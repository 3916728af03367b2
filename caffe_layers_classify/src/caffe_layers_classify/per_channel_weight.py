"""PerChannelWeight: a depthwise weight blob that explains a stored dense convolution weight.

A DepthwiseConvolution with `group` unset is depthwise here (weights (C_out, 1, *kernel)), while the fork's
CPU path reads the same prototxt as a dense convolution with weights (C_out, C, *kernel). A .caffemodel
trained by that CPU path stores the dense blob; the core's weight copy would only say "shape mismatch ...
rename the layer", so this blob recognises the dense shape and says what it means and what to do.
"""

from __future__ import annotations

from caffe_core.blob import Blob, proto_shape
from caffe_core.errors import ModelFileError
from caffe_core.proto import caffe_pb2


def dense_weight_message(stored: tuple[int, ...], expected: tuple[int, ...]) -> str:
    """The explanation for a stored dense weight `stored` where the depthwise `expected` shape was wanted."""
    _, channels, *kernel = stored
    first = [channels, 1, *kernel]
    return (f"the stored weight has shape {list(stored)}, a dense convolution's, but with "
            f"convolution_param.group unset this DepthwiseConvolution is depthwise and takes per-channel "
            f"weights of shape {list(expected)}. The fork computes two different things with a dense "
            f"blob: on the CPU an ordinary convolution over all {channels} input channels, on the GPU a "
            f"per-channel convolution with W[0] read as shape {first} (only for num_output == channels). "
            f"For the CPU result change the layer's type to Convolution (same weights); for per-channel "
            f"weights store them with shape {list(expected)}")


class PerChannelWeight(Blob):
    """The (C_out, 1, *kernel) weight of a group-unset DepthwiseConvolution; refuses a dense one clearly."""

    def __init__(self, source: Blob, layer: str, channels: int) -> None:
        super().__init__(source.shape)
        self.mutable_cpu_data()[...] = source.cpu_data()
        self.layer = layer
        outputs, _, *kernel = source.shape
        self.dense_shape = (outputs, channels, *kernel)

    def is_dense(self, proto: caffe_pb2.BlobProto) -> bool:
        """Whether the stored blob has the dense convolution's shape (and not this blob's)."""
        return self.dense_shape != self.shape and proto_shape(proto) == self.dense_shape

    def shape_equals(self, proto: caffe_pb2.BlobProto) -> bool:
        """As Blob's, but a dense weight also passes, so that from_proto can say what it is."""
        # The core's weight copy checks shape_equals before from_proto and has no layer-specific advice.
        return super().shape_equals(proto) or self.is_dense(proto)

    def from_proto(self, proto: caffe_pb2.BlobProto, reshape: bool = True) -> None:
        """As Blob's, refusing a dense convolution weight with what it means and what to do."""
        if self.is_dense(proto):
            raise ModelFileError(f"{self.layer}: {dense_weight_message(proto_shape(proto), self.shape)}")
        super().from_proto(proto, reshape)
