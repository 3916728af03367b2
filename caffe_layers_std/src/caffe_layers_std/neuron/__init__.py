"""Caffe's neuron layers."""
