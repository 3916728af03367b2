"""Python: a layer whose code is a `caffe.Layer` subclass named by python_param {module, layer, param_str}.

As Caffe's PythonLayer: the module is imported (from sys.path, or else the working directory), the class is
instantiated with the LayerParameter, `param_str` and `phase` are set, then `setup`, `reshape`, `forward`
and `backward` are delegated to it. CPU only: in GPU mode the blobs are synced to the host around it.
Attributes the net does not know (a data layer's `reset()`, say) are looked up on the Python object, as
pycaffe's `net.layers[i]` is that object in Caffe.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from caffe.python_layer_base import BlobVec
from caffe.python_layer_base import Layer as PythonLayerBase
from caffe_core.blob import Blob
from caffe_core.layer import Layer
from caffe_core.proto import caffe_pb2


class PythonLayer(Layer):
    """Runs a user's caffe.Layer subclass inside the net."""

    type = "Python"

    def __init__(self, param: caffe_pb2.LayerParameter) -> None:
        super().__init__(param)
        python_param = param.python_param
        if not python_param.module or not python_param.layer:
            raise self.error("python_param needs both 'module' and 'layer' (the module to import and the "
                             f"caffe.Layer subclass in it); got module '{python_param.module}', "
                             f"layer '{python_param.layer}'")
        where = f"python_param module '{python_param.module}', layer '{python_param.layer}'"
        layer_class = getattr(self._import_module(python_param.module, where), python_param.layer, None)
        if layer_class is None:
            raise self.error(f"{where}: the module has no attribute '{python_param.layer}'")
        if not (isinstance(layer_class, type) and issubclass(layer_class, PythonLayerBase)):
            raise self.error(f"{where}: '{python_param.layer}' must be a subclass of caffe.Layer, "
                             f"got {layer_class!r}")
        try:
            self.python_layer = layer_class(self.layer_param)
        except Exception as err:
            raise self.error(f"{where}: creating the layer failed: {type(err).__name__}: {err}") from err
        self._adopt_blobs()

    def _import_module(self, name: str, where: str) -> ModuleType:
        added = os.getcwd() not in sys.path
        if added:
            sys.path.append(os.getcwd())
        try:
            return importlib.import_module(name)
        except Exception as err:
            raise self.error(f"{where}: importing the module failed: {type(err).__name__}: {err}") from err
        finally:
            if added:
                sys.path.remove(os.getcwd())

    def _adopt_blobs(self) -> None:
        blobs = getattr(self.python_layer, "blobs", None)
        if not isinstance(blobs, list):
            raise self.error(f"Python layer class {type(self.python_layer).__name__} has no blob list "
                             "'blobs'; call caffe.Layer.__init__(self, param) from its __init__")
        if not isinstance(blobs, BlobVec):
            blobs = BlobVec(blobs)
            self.python_layer.blobs = blobs
        self.blobs = blobs

    def __getattr__(self, name: str) -> Any:
        python_layer = self.__dict__.get("python_layer")
        if python_layer is None:
            raise AttributeError(name)
        return getattr(python_layer, name)

    def layer_setup(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Sets param_str and phase on the Python object, then calls its setup."""
        self.python_layer.param_str = self.layer_param.python_param.param_str
        self.python_layer.phase = int(self.phase)
        self.python_layer.setup(list(bottom), list(top))
        self._adopt_blobs()

    def reshape(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Calls the Python object's reshape."""
        self.python_layer.reshape(list(bottom), list(top))

    def forward_cpu(self, bottom: Sequence[Blob], top: Sequence[Blob]) -> None:
        """Calls the Python object's forward."""
        self.python_layer.forward(list(bottom), list(top))

    def backward_cpu(self, top: Sequence[Blob], propagate_down: Sequence[bool],
                     bottom: Sequence[Blob]) -> None:
        """Calls the Python object's backward."""
        self.python_layer.backward(list(top), [bool(p) for p in propagate_down], list(bottom))
