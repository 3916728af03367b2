"""The SSD fork's layer types and parameter blocks (weiliu89/caffe `ssd`, behaving as inisis/caffe)."""
