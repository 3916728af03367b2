"""ONNX converters of the ssd pack's layer types; `caffe_layers_ssd.plugin` registers them."""
