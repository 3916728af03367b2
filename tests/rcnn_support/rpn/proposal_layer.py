"""py-faster-rcnn's rpn.proposal_layer, served by the rcnn pack's ProposalLayer."""

from caffe_layers_rcnn.py_faster_rcnn import ProposalLayer

__all__ = ["ProposalLayer"]
