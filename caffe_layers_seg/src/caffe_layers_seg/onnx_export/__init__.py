"""ONNX converters of the seg pack's layer types; `caffe_layers_seg.plugin` registers them."""
