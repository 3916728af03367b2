"""caffe_core: Caffe's Blob, SyncedMemory, Layer, Net and Solver, its schema, and the plugin machinery.

Importing caffe_core imports no layer pack; packs load when a net uses one of their types.
"""

from caffe_core.blob import Blob
from caffe_core.errors import CaffeError
from caffe_core.layer import Layer
from caffe_core.net import Net
from caffe_core.registry import layer_types, register_layer
from caffe_core.runtime import set_device, set_mode_cpu, set_mode_gpu, set_random_seed

__version__ = "0.1.0"
# The BVLC release whose behaviour and files this reproduces (`caffe --version`, `caffe.__version__`).
CAFFE_VERSION = "1.0.0"

__all__ = [
    "Blob", "CaffeError", "Layer", "Net", "layer_types", "register_layer", "set_device",
    "set_mode_cpu", "set_mode_gpu", "set_random_seed", "__version__", "CAFFE_VERSION",
]
