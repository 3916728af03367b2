"""Run-time layer types and converters for the exporter's tests, so they need no layer pack."""

from types import SimpleNamespace

import numpy as np
import pytest

from caffe_core import plugins, registry
from caffe_core.errors import OnnxExportError
from caffe_core.hookspecs import hookimpl
from caffe_core.layer import Layer


class ScaleByBlobLayer(Layer):
    """top = bottom * w, with one learned blob w of the bottom's trailing shape (in place allowed)."""

    type = "TestScaleByBlob"
    exact_num_bottom_blobs = 1
    exact_num_top_blobs = 1

    def layer_setup(self, bottom, top):
        """One blob shaped like a bottom item."""
        from caffe_core.blob import Blob

        self.blobs = [Blob(bottom[0].shape[1:])]
        self.blobs[0].mutable_cpu_data()[...] = 1.0

    def reshape(self, bottom, top):
        """Top has the bottom's shape."""
        top[0].reshape_like(bottom[0])

    def forward_on(self, side, bottom, top):
        """top = bottom * w."""
        top[0].mutable_data_on(side)[...] = bottom[0].data_on(side) * self.blobs[0].data_on(side)


class SilentLayer(ScaleByBlobLayer):
    """Its converter forgets to produce the top."""

    type = "TestSilent"


class RefusedLayer(ScaleByBlobLayer):
    """Its converter refuses the layer."""

    type = "TestRefused"


class UnconvertibleLayer(ScaleByBlobLayer):
    """No converter at all."""

    type = "TestUnconvertible"


def convert_scale_by_blob(layer, graph, bottoms, tops):
    """Mul by the blob as an initializer."""
    graph.op("Mul", [bottoms[0], graph.constant(layer.blobs[0].cpu_data(), "w")], tops[0])


def convert_silent(layer, graph, bottoms, tops):
    """Produces a value under another name only."""
    graph.op("Identity", bottoms)


def convert_refused(layer, graph, bottoms, tops):
    """Refuses."""
    raise OnnxExportError("mode 7 has no ONNX equivalent")


LAYERS = (ScaleByBlobLayer, SilentLayer, RefusedLayer, UnconvertibleLayer)
CONVERTERS = {"TestScaleByBlob": convert_scale_by_blob, "TestSilent": convert_silent,
              "TestRefused": convert_refused}


@pytest.fixture
def test_layers():
    """Registers the test layer types and their converters for one test."""
    plugin = SimpleNamespace(caffe_onnx_converters=hookimpl(lambda: CONVERTERS))
    for cls in LAYERS:
        registry.register_layer(cls.type, cls)
    plugins.register_plugin(plugin, name="onnx-export-tests")
    yield
    plugins.unregister_plugin(plugin)
    for cls in LAYERS:
        registry.unregister_layer(cls.type)



def random_rng():
    """The tests' random source."""
    return np.random.default_rng(3)
