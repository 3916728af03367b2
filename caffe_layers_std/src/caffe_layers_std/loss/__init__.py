"""Caffe's loss layers."""
