"""Caffe's common layers."""
