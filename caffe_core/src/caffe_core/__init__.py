"""caffe_core: Caffe's Blob, SyncedMemory, Layer, Net and Solver, its schema, and the plugin machinery.

Importing caffe_core imports no layer pack; packs load when a net uses one of their types.
"""

import os
from importlib import metadata

# OpenBLAS's idle threads spin for about 0.1 s after each product, taking the cores that host_threads runs
# numpy's copies on; after 2**4 cycles they sleep instead (products run no slower). OpenBLAS reads this when
# numpy loads it, so it applies when caffe_core is imported before numpy.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# The imports below load numpy, so they come after the setting.

from caffe_core.blob import Blob  # noqa: E402
from caffe_core.errors import CaffeError  # noqa: E402
from caffe_core.layer import Layer  # noqa: E402
from caffe_core.net import Net  # noqa: E402
from caffe_core.registry import layer_types, register_layer  # noqa: E402
from caffe_core.runtime import set_device, set_mode_cpu, set_mode_gpu, set_random_seed  # noqa: E402

# Written once, in pyproject.toml: the installed distribution's version.
__version__ = metadata.version("caffe-core")
# The BVLC release whose behaviour and files this reproduces (`caffe --version`, `caffe.__version__`).
CAFFE_VERSION = "1.0.0"

__all__ = [
    "Blob", "CaffeError", "Layer", "Net", "layer_types", "register_layer", "set_device",
    "set_mode_cpu", "set_mode_gpu", "set_random_seed", "__version__", "CAFFE_VERSION",
]
