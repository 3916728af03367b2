"""Text-recognition and text-detection Caffe forks' layers: CRNN, CTPN, caffe_ocr, deepdetect."""
