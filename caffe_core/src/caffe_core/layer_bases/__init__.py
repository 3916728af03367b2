"""What BVLC keeps in its own tree for layers to share: the bases and machinery every layer pack builds on.

`neuron.NeuronLayer` and `loss.LossLayer` are Caffe's NeuronLayer and LossLayer; `kernel_geometry` reads
convolution_param's N-D kernel, stride, pad and dilation; `convolution_blobs` creates or checks a
convolution's weight and bias; `dropout.DropoutLayerBase` draws Caffe's Dropout mask and back-propagates
through it; `batch_norm.BatchNormLayerBase` keeps Caffe's batch-norm statistics.
"""
