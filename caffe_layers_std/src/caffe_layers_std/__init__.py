"""Caffe's neuron, common/utility, loss/metric, recurrent and Python layers."""
