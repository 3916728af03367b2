"""ONNX converters of the vision pack's layer types; `caffe_layers_vision.plugin` registers them."""
