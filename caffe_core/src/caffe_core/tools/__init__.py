"""Command-line tools shipped with caffe-core."""
