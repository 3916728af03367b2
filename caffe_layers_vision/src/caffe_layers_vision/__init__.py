"""Caffe's vision layers: Convolution, Deconvolution, Pooling, LRN, SPP, Crop, Im2col."""
