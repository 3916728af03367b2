"""Hook implementations of the test pack: its parameter block."""

from typing import Any

from caffe_core.hookspecs import hookimpl
from caffe_core.params import ParamBlock


@hookimpl
def caffe_param_blocks() -> dict[str, Any]:
    """Declares zzz_param as LayerParameter field 5000."""
    from caffe_zzz_testpack.zzz_pb2 import ZZZParameter

    return {"zzz_param": ParamBlock(ZZZParameter, 5000)}
