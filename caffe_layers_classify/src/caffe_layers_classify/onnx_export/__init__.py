"""ONNX converters of the classify pack's layer types; `caffe_layers_classify.plugin` registers them."""
