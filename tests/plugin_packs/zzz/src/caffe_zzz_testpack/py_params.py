"""zzz_py_param: a parameter block declared in Python (no .proto, no protoc)."""

from caffe_core.messages import Enum, Field, Message, build_messages
from caffe_core.proto import caffe_pb2

MODE = Enum("Mode", {"ADD": 0, "MUL": 1})
ZZZ_PY = Message("ZZZPyParameter", [
    Field("mode", MODE, 1, default="MUL"),
    Field("factor", "float", 2, default=2.0),
    Field("offsets", "float", 3, repeated=True),
    Field("filler", caffe_pb2.FillerParameter, 4),
], enums=[MODE])

ZZZPyParameter = build_messages("caffe_zzz_testpack.py", [ZZZ_PY])["ZZZPyParameter"]
