"""R-CNN family fork layers: ROIPooling, SmoothL1Loss, Proposal, PSROIPooling, scale_train Dropout."""
