"""Type names for the arrays code handles on either side: `Array` and `ArrayModule`.

`Array` is a numpy array on the host or a cupy array on the device (or the stand-in's, under
`CAFFE_GPU_STANDIN=1`). cupy is optional and ships no type information, so for the type checker the alias
names numpy's ndarray: device arrays implement the same interface, and code written once for both sides
(`side.xp`) is checked against numpy's. `ArrayModule` is that `xp`: the numpy or cupy module.
"""

from types import ModuleType
from typing import Any, TypeAlias

import numpy as np

Array: TypeAlias = np.ndarray[Any, np.dtype[Any]]
ArrayModule: TypeAlias = ModuleType
