"""pycaffe's `caffe.proto` package."""
