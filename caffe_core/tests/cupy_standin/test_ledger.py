"""The stand-in's books: transfer counts, their difference, and the line a process prints when it exits."""

import os
import subprocess
import sys

from caffe_core.cupy_standin.ledger import Ledger, Transfers

USES_GPU_MODE = """
import numpy as np
import caffe_core
from caffe_core.blob import Blob
caffe_core.set_mode_gpu()
blob = Blob((2, 3))
blob.mutable_cpu_data()[...] = 1
blob.mutable_gpu_data()[...] *= 2
assert blob.cpu_data().sum() == 12
"""


def run_python(code, standin):
    env = {k: v for k, v in os.environ.items() if k != "CAFFE_GPU_STANDIN"}
    if standin:
        env["CAFFE_GPU_STANDIN"] = "1"
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_a_process_in_gpu_mode_on_the_stand_in_reports_its_transfers_at_exit():
    done = run_python(USES_GPU_MODE, standin=True)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "GPU stand-in transfers: host->device 1 (24 bytes), device->host 1 (24 bytes)")


def test_without_the_switch_gpu_mode_needs_cupy_and_nothing_is_reported():
    done = run_python("import caffe_core; print('ok')", standin=False)
    assert done.returncode == 0 and "stand-in" not in done.stderr


def test_transfers_subtract_and_count_both_ways():
    ledger = Ledger()
    ledger.copied_to_device(8)
    start = ledger.transfers()
    ledger.copied_to_device(4)
    ledger.copied_to_host(16)
    ledger.copied_to_host(2)
    assert ledger.transfers() - start == Transfers(1, 4, 2, 18)
    assert (ledger.transfers() - start).copies == 3
    assert ledger.report() == "GPU stand-in transfers: host->device 2 (12 bytes), device->host 2 (18 bytes)"
