"""ONNX converters of the rcnn pack's layer types; `caffe_layers_rcnn.plugin` registers them."""
