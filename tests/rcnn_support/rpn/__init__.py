"""Stand-in for py-faster-rcnn's lib/rpn package, so its prototxts' `module: 'rpn.proposal_layer'` imports."""
