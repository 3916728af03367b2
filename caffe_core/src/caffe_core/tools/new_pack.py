"""`caffe-packs new NAME --layer TYPE`: writes a complete layer pack that pip installs and whose tests pass.

The pack holds one layer of that type (top = scale * bottom + bias, forward and backward on the xp path)
with its own parameter block declared in Python, its plugin, its ONNX converter, its tests (forward,
gradient check, the block through a .caffemodel, a GPU parity test, the ONNX export in onnxruntime, the
core's conformance suite) and a README.
"""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import importlib_metadata

from caffe_core.errors import CaffeError
from caffe_core.schema_extensions import installed_additions

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Where generated blocks take their LayerParameter number: far above every fork's numbers we know.
FIRST_NUMBER, NUMBER_SPAN = 100_000, 400_000


def snake_case(name: str) -> str:
    """InnerProduct -> inner_product, ZZZ -> zzz, ReLU6 -> re_lu6."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def block_number(block: str, taken: set[int]) -> int:
    """A stable LayerParameter number for a new block (from its name), skipping the installed ones."""
    number = FIRST_NUMBER + zlib.crc32(block.encode()) % NUMBER_SPAN
    while number in taken:
        number += 1
    return number


def create_pack(name: str, layer_type: str, directory: str | Path = ".", number: int | None = None) -> Path:
    """Writes the pack folder `directory/name` and returns it; refuses to overwrite anything."""
    package = re.sub(r"[-.]+", "_", name).lower()
    if not _IDENTIFIER.match(package):
        raise CaffeError(f"pack name '{name}' must give a Python package name ({package!r} is not one)")
    if not _IDENTIFIER.match(layer_type):
        raise CaffeError(f"layer type '{layer_type}' must be an identifier (letters, digits, underscores)")
    root = Path(directory) / name
    if root.exists():
        raise CaffeError(f"{root} already exists; choose another name or remove it")
    module = snake_case(layer_type)
    block = f"{module}_param"
    taken = {a.number for a in installed_additions() if a.kind == "block" and a.number is not None}
    values = {
        "name": name, "package": package, "type": layer_type, "module": module, "block": block,
        "number": str(number if number is not None else block_number(block, taken)),
        "core": _core_requirement(), "core_onnx": _core_requirement().replace("core", "core[onnx]", 1),
    }
    for relative, template in _FILES.items():
        path = root / _fill(relative, values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_fill(template, values))
    return root


def _core_requirement() -> str:
    major, minor = importlib_metadata.version("caffe-core").split(".")[:2]
    return f"caffe-core>={major}.{minor},<{major}.{int(minor) + 1}"


def _fill(template: str, values: dict[str, str]) -> str:
    return re.sub(r"@(\w+)@", lambda m: values[m.group(1)], template).lstrip("\n")


_FILES = {
    "pyproject.toml": '''
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "@name@"
version = "0.1.0"
description = "A Caffe layer pack: the @type@ layer"
requires-python = ">=3.11"
dependencies = ["@core@", "numpy>=1.26"]

[project.optional-dependencies]
test = ["pytest>=8"]
onnx = ["@core_onnx@"]

[project.entry-points."caffe.layers"]
@type@ = "@package@.@module@:@type@Layer"

[project.entry-points."caffe.plugins"]
@package@ = "@package@.plugin"

[tool.setuptools.packages.find]
where = ["src"]

[tool.setuptools.package-data]
"*" = ["py.typed"]

[tool.pytest.ini_options]
addopts = "-ra"
''',
    "README.md": '''
# @name@

A layer pack for caffe-py: the `@type@` layer, with its parameter block `@block@` (LayerParameter
field @number@).

    layer { name: "z" type: "@type@" bottom: "x" top: "y" @block@ { scale: 2 bias: 0.5 } }

computes `y = scale * x + bias`. Install it beside caffe-core (`pip install .`), then `caffe-packs` lists
`@type@` and `caffe-packs check` validates the pack. Run its tests with `pytest` in this folder.

- `src/@package@/@module@.py`: the layer (one code path for numpy and cupy through `side.xp`).
- `src/@package@/params.py`: the `@type@Parameter` message, declared in Python (no .proto, no protoc).
- `src/@package@/plugin.py`: the hooks that declare `@block@` at field @number@ (a pack reproducing a
  Caffe fork uses the fork's own number; `caffe-packs check` says if another installed pack claims it) and
  register the layer's ONNX converter.
- `src/@package@/onnx_export.py`: the converter `caffe.onnx.export` uses for `@type@` (a Mul and an Add).
- `tests/`: forward, gradient check, the block through a .caffemodel, GPU parity, the ONNX export in
  onnxruntime (with `pip install .[onnx]`), the conformance suite.
''',
    "src/@package@/__init__.py": '''
"""@name@: the @type@ layer for caffe-py."""
''',
    # PEP 561: the package's annotations are its type information.
    "src/@package@/py.typed": "",
    "src/@package@/params.py": '''
"""@block@: the @type@ layer's parameters, declared in Python."""

from caffe_core.messages import Field, Message, build_messages

PARAMETER = Message("@type@Parameter", [
    Field("scale", "float", 1, default=1.0),
    Field("bias", "float", 2, default=0.0),
])

@type@Parameter = build_messages("@package@", [PARAMETER])["@type@Parameter"]
''',
    "src/@package@/plugin.py": '''
"""Hook implementations of @name@: its parameter block and its ONNX converter."""

from collections.abc import Callable

from caffe_core.hookspecs import hookimpl
from caffe_core.schema_extensions import ParamBlock

BLOCK_NUMBER = @number@


@hookimpl
def caffe_param_blocks() -> dict[str, ParamBlock]:
    """Declares @block@ as LayerParameter field @number@."""
    from @package@.params import @type@Parameter

    return {"@block@": ParamBlock(@type@Parameter, BLOCK_NUMBER)}


@hookimpl
def caffe_onnx_converters() -> dict[str, Callable[..., None]]:
    """The converter of @type@ (onnx is imported only when a net is exported)."""
    from @package@.onnx_export import convert_@module@

    return {"@type@": convert_@module@}
''',
    "src/@package@/onnx_export.py": '''
"""The ONNX converter of @type@: Mul by scale, then Add bias."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from caffe_core.onnx_export import OnnxGraph

from @package@.@module@ import @type@Layer


def convert_@module@(
        layer: @type@Layer, graph: OnnxGraph, bottoms: Sequence[str], tops: Sequence[str]) -> None:
    """top = scale * bottom + bias."""
    scaled = graph.op("Mul", [bottoms[0], graph.constant(np.float32(layer.scale), "scale")])
    graph.op("Add", [scaled, graph.constant(np.float32(layer.bias), "bias")], tops[0])
''',
    "src/@package@/@module@.py": '''
"""@type@: top = scale * bottom + bias, with scale and bias from @block@."""

from __future__ import annotations

from collections.abc import Sequence

from caffe_core.blob import Blob
from caffe_core.device import Side
from caffe_core.layer import Layer
from caffe_core.schema_extensions import get_param_block


class @type@Layer(Layer):
    """Scales and shifts its bottom by @block@.scale and @block@.bias."""

    type = "@type@"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Reads scale and bias from the layer's @block@."""
        block = get_param_block(self.layer_param, "@block@")
        self.scale, self.bias = block.scale, block.bias

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """The top has the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def forward_on(self, side: Side, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """top = scale * bottom + bias, with numpy on the CPU and cupy on the GPU."""
        top[0].mutable_data_on(side)[...] = self.scale * bottom[0].data_on(side) + self.bias

    def backward_on(self, side: Side, top: Sequence[Blob], propagate_down: Sequence[bool],
                    bottom: Sequence[Blob]) -> None:
        """bottom diff = scale * top diff."""
        if propagate_down[0]:
            bottom[0].mutable_diff_on(side)[...] = self.scale * top[0].diff_on(side)
''',
    "tests/test_@module@.py": '''
"""@type@: forward, gradient, its parameter block from text and through a .caffemodel, GPU parity."""

import numpy as np
import pytest

from caffe_core import proto_io
from caffe_core.blob import Blob
from caffe_core.net import Net
from caffe_core.net_files import read_net_binary
from caffe_core.proto import caffe_pb2
from caffe_core.schema_extensions import get_param_block
from caffe_core.testing import GradientChecker
from caffe_core.testing.wire import wire_field_numbers

LAYER = 'name: "z" type: "@type@" @block@ { scale: 3 bias: 0.5 }'
NET = f"""
layer {{ name: "in" type: "Input" top: "x" input_param {{ shape {{ dim: 2 dim: 3 }} }} }}
layer {{ {LAYER} bottom: "x" top: "y" }}
"""


def test_forward(make_layer, blob_of):
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    bottom, top = [blob_of(x)], [Blob()]
    layer = make_layer(LAYER)
    layer.setup(bottom, top)
    layer.forward(bottom, top)
    np.testing.assert_allclose(top[0].cpu_data(), 3 * x + 0.5, rtol=1e-6)


def test_gradient(make_layer, gaussian):
    GradientChecker(1e-2, 1e-3).check_gradient_exhaustive(make_layer(LAYER), [gaussian((2, 3, 4))], [Blob()])


def test_block_survives_a_caffemodel_with_its_field_number(tmp_path):
    net = Net(proto_io.parse_text(NET, caffe_pb2.NetParameter()))
    net.save(tmp_path / "net.caffemodel")
    layer = read_net_binary(tmp_path / "net.caffemodel").layer[1]
    assert get_param_block(layer, "@block@").scale == 3
    assert @number@ in wire_field_numbers(layer.SerializeToString())


@pytest.mark.gpu
def test_gpu_matches_cpu(gpu_matches_cpu):
    gpu_matches_cpu(LAYER, [np.random.default_rng(2).standard_normal((2, 3, 4))])


def test_onnx_export_gives_the_layers_outputs():
    pytest.importorskip("onnxruntime", reason="the ONNX export test needs `pip install .[onnx]`")
    from caffe_core.testing.onnx_check import assert_onnx_matches, randomise

    net = Net(proto_io.parse_text(NET, caffe_pb2.NetParameter()), phase=caffe_pb2.TEST)
    randomise(net, np.random.default_rng(3))
    assert_onnx_matches(net)
''',
    "tests/test_conformance.py": '''
"""The core's conformance suite for this pack."""

from caffe_core.testing.conformance import Example, conformance_suite

EXAMPLES = {"@type@": Example("@block@ { scale: 2 }", bottoms=[(2, 3, 4)])}

TestConformance = conformance_suite("@name@", examples=EXAMPLES)
''',
}
