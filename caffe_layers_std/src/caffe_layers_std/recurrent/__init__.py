"""Caffe's recurrent layers."""
