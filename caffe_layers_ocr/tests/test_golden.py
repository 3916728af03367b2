"""Golden cases. caffe_ocr's (Transpose, Reverse, CTCGreedyDecoder, WarpCTCLoss) were computed by
senlinuc/caffe_ocr's own pycaffe (CPU build), which agreed with their hand-derived loop transcriptions exactly
(within 1e-6 for the CTC gradients); jolibrain's (CtcLoss, ContinuationIndicator, LabelsequenceAccuracy) are
hand-derived: the fork's Forward_cpu/Backward_cpu and warp-ctc's CPU cost_and_grad written out as their loops
in float32, its Caffe not being built here. Each case.json's "caffe" and "notes" say which. The CTC costs are
also checked against the sum over every alignment (tests/test_ctc.py)."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = ["transpose_ocr", "reverse_ocr_axis0", "reverse_ocr_axis1", "ctc_greedy_decoder_ocr",
         "ctc_greedy_decoder_ocr_accuracy", "warp_ctc_loss_ocr", "warp_ctc_loss_ocr_lengths",
         "ctc_loss_jolibrain", "ctc_loss_jolibrain_time_step", "continuation_indicator_jolibrain",
         "labelsequence_accuracy_jolibrain"]


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []
