"""Face-recognition Caffe forks' layers: NormFace, AM-Softmax, SphereFace, center loss, ArcFace."""
