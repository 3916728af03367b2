"""The generated schema module (caffe_pb2), built from proto/caffe.proto by proto/generate.py."""
