"""Caffe's data tools: convert_imageset, compute_image_mean, convert_mnist_data."""
