"""Segmentation and resampling layers of the Caffe forks (SegNet, ENet, PSPNet, TSN, inisis)."""
