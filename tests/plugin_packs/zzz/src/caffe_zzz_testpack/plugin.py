"""Hook implementations of the test pack: its parameter blocks and the fields it adds to Caffe's messages."""

from typing import Any

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ExtraField, FieldAlias, ParamBlock


@hookimpl
def caffe_param_blocks() -> dict[str, Any]:
    """zzz_param (compiled .proto) as LayerParameter field 5000; zzz_py_param (declared in Python) as 60."""
    from caffe_zzz_testpack.py_params import ZZZPyParameter
    from caffe_zzz_testpack.zzz_pb2 import ZZZParameter

    return {"zzz_param": ParamBlock(ZZZParameter, 5000), "zzz_py_param": ParamBlock(ZZZPyParameter, 60)}


@hookimpl
def caffe_message_fields() -> dict[str, Any]:
    """An alias onto PoolingParameter.round_mode and an extra DropoutParameter field at number 7."""
    return {
        "PoolingParameter.zzz_ceil": FieldAlias({"true": "round_mode: CEIL", "false": "round_mode: FLOOR"}),
        "DropoutParameter.zzz_keep": ExtraField("bool", 7, default=True),
    }
