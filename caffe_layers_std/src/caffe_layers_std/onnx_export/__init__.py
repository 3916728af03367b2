"""ONNX converters of the std pack's layer types, by family; `caffe_layers_std.plugin` registers them."""
