"""Layers of the classification-network Caffe forks (MobileNet v2/v3, SENet, ShuffleNet, DenseNet)."""
