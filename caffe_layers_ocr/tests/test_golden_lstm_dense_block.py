"""Golden cases of Lstm and DenseBlock, hand-derived from senlinuc/caffe_ocr@81642f61 (loop-by-loop
transcriptions of lstm_layer_Junhyuk.cpp/.cu and DenseBlock_layer.cpp/.cu; each case.json says which path and
what it pins): Lstm forward and backward (one sequence; three sequences with gradient clipping), DenseBlock
TEST forward with a non-zero factor (CPU path) and with factor 0 (GPU path), TRAIN forward, running
statistics and backward (GPU path). Two more were computed by the fork's own pycaffe (CPU build):
`lstm_fork_cpu` (forward and backward, one sequence, clipping) and `dense_block_fork_cpu_test` (TEST forward
with BC and a non-zero factor, the CPU path's statistics)."""

import pytest

from caffe_core.testing.golden import check_layer_case

CASES = ["lstm_one_sequence", "lstm_batch3_clipped", "dense_block_test_bc_factor", "dense_block_test_factor0",
         "dense_block_train_bc", "lstm_fork_cpu", "dense_block_fork_cpu_test"]


@pytest.mark.parametrize("case", CASES)
def test_golden(golden_case, case):
    assert check_layer_case(golden_case(case)) == []
