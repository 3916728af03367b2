"""ONNX converters of the yolo pack's layer types; `caffe_layers_yolo.plugin` registers them."""
