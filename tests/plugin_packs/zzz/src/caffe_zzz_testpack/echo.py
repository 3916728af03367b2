"""Echo: one type, two classes, where the net tells them apart, not the layer (as FaceBoxes' PriorBox is)."""

from caffe_core.layer import Layer


class EchoLayer(Layer):
    """Every top = the bottom."""

    type = "Echo"
    exact_num_bottom_blobs = 1
    min_top_blobs = 1
    max_top_blobs = 2

    def reshape(self, bottom, top):
        """Each top has the bottom's shape."""
        for blob in top:
            blob.reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        """Each top = bottom."""
        for blob in top:
            blob.mutable_data_on(side)[...] = bottom[0].data_on(side)


class DoublingEchoLayer(EchoLayer):
    """Every top = twice the bottom: the Echo of a fork whose nets give some Echo layer two tops."""

    @classmethod
    def accepts_in_net(cls, param, net):
        """every Echo layer of a net in which some Echo layer has two tops."""
        return any(layer.type == "Echo" and len(layer.top) == 2 for layer in net)

    def forward_on(self, side, bottom, top):
        """Each top = 2 * bottom."""
        for blob in top:
            blob.mutable_data_on(side)[...] = 2 * bottom[0].data_on(side)
