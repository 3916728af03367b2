"""Golden cases, computed by the forks' own pycaffe (CPU builds): caffe_ocr's (Transpose, Reverse,
CTCGreedyDecoder, WarpCTCLoss) by senlinuc/caffe_ocr's, jolibrain's (CtcLoss, ContinuationIndicator,
LabelsequenceAccuracy) by jolibrain/caffe's. Each agreed with a loop-by-loop float32 transcription of the
fork's code made before the forks were built (exactly, or within 1e-6 for the CTC gradients). The CTC costs
are also checked against the sum over every alignment (tests/test_ctc.py)."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = ["transpose_ocr", "reverse_ocr_axis0", "reverse_ocr_axis1", "ctc_greedy_decoder_ocr",
         "ctc_greedy_decoder_ocr_accuracy", "warp_ctc_loss_ocr", "warp_ctc_loss_ocr_lengths",
         "ctc_loss_jolibrain", "ctc_loss_jolibrain_time_step", "continuation_indicator_jolibrain",
         "labelsequence_accuracy_jolibrain"]


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []
