"""Caffe's data layers."""
