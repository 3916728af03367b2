"""Caffe's data layers, data transformer and database tools."""
