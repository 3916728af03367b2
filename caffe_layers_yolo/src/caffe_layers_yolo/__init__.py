"""YOLO Caffe ports' layers: Yolov3DetectionOutput, YoloDetectionOutput, Reorg (eric612), Mish (Chen)."""
