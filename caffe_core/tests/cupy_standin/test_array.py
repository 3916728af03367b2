"""The stand-in's device array refuses implicit crossings, as cupy's does, and counts the explicit ones."""

import numpy as np
import pytest

from caffe_core import cupy_standin as cp
from caffe_core.cupy_standin.array import StandinUnsupported


def device(values, dtype=np.float32):
    return cp.asarray(np.asarray(values, dtype=dtype))


def test_numpy_asarray_of_a_device_array_raises_as_cupy_does():
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(device([1, 2]))


@pytest.mark.parametrize("call", [np.exp, np.sum, np.concatenate, lambda a: np.add(a, 1)])
def test_numpy_functions_and_ufuncs_refuse_device_arrays(call):
    a = device([1, 2])
    with pytest.raises(TypeError):
        call([a, a] if call is np.concatenate else a)


@pytest.mark.parametrize("mix", [
    lambda d, h: d + h, lambda d, h: h + d, lambda d, h: d * h, lambda d, h: h < d,
    lambda d, h: cp.maximum(d, h), lambda d, h: cp.where(d > 0, h, d), lambda d, h: cp.matmul(d, h),
])
def test_mixing_host_and_device_arrays_raises(mix):
    with pytest.raises(TypeError):
        mix(device([1, 2]), np.array([3, 4], np.float32))


def test_writing_host_data_into_a_device_array_or_device_data_into_a_host_array_raises():
    d, h = device([1, 2]), np.zeros(2, np.float32)
    with pytest.raises(TypeError):
        d[...] = h
    with pytest.raises(TypeError):
        h[...] = d
    with pytest.raises(TypeError):
        d[np.array([0])]


def test_scalars_mix_freely_and_results_stay_on_the_device():
    d = device([1, -2])
    for result in (d * 2.0, np.float32(3) * d, d > 0, -d, abs(d), d.sum(), d[0], cp.sqrt(d * d)):
        assert isinstance(result, cp.ndarray)
    assert d.sum().shape == () and d.max().ndim == 0


def test_only_explicit_copies_cross_and_each_is_counted():
    before = cp.transfers()
    d = cp.asarray(np.arange(4, dtype=np.float32))
    host = d.get()
    out = np.empty(4, np.float32)
    cp.asnumpy(d, out=out)
    d.set(np.ones(4, np.float32))
    total = float(d.sum()) + int(d[0]) + bool(d[1]) + d[2].item()
    delta = cp.transfers() - before
    assert (delta.to_device, delta.to_device_bytes) == (2, 32)
    assert (delta.to_host, delta.to_host_bytes) == (6, 32 + 4 * 4)
    np.testing.assert_array_equal(host, np.arange(4))
    np.testing.assert_array_equal(out, np.arange(4))
    assert total == 4 + 1 + 1 + 1


def test_device_memory_never_aliases_host_memory():
    host = np.zeros(3, np.float32)
    d = cp.asarray(host)
    host[0] = 5
    d[1] = 7
    np.testing.assert_array_equal(d.get(), [0, 7, 0])
    copy = d.get()
    copy[2] = 9
    assert float(d[2]) == 0


def test_in_place_operators_and_views_write_the_same_device_memory():
    d = cp.zeros(6, dtype=np.float32)
    view = d.reshape(2, 3)
    view[1] += 2
    view *= 3
    cp.add(view[0], 1, out=view[0])
    np.testing.assert_array_equal(d.get(), [1, 1, 1, 6, 6, 6])


def test_ufunc_at_accumulates_repeated_indices():
    target = cp.zeros(3, dtype=np.float32)
    cp.add.at(target, cp.asarray(np.array([0, 2, 0])), device([1, 2, 3]))
    np.testing.assert_array_equal(target.get(), [4, 0, 2])


def test_what_the_stand_in_lacks_fails_loudly():
    with pytest.raises(StandinUnsupported, match="cupy.fft"):
        cp.fft  # noqa: B018
    with pytest.raises(StandinUnsupported, match="ndarray.tobytes"):
        device([1]).tobytes()
    with pytest.raises(StandinUnsupported, match="cupy.random.normal"):
        cp.random.normal  # noqa: B018
    with pytest.raises(StandinUnsupported, match="cupy.add.outer"):
        cp.add.outer  # noqa: B018


def test_device_memory_is_accounted_while_arrays_live():
    start = cp.memory().current_bytes
    a = cp.zeros(1000, dtype=np.float32)
    view = a[10:]
    assert cp.memory().current_bytes == start + 4000
    del a
    assert cp.memory().current_bytes == start + 4000
    del view
    assert cp.memory().current_bytes == start
    assert cp.memory().peak_bytes >= start + 4000


def test_two_devices_and_their_properties():
    assert cp.cuda.runtime.getDeviceCount() == 2
    with cp.cuda.Device(1):
        pass
    with pytest.raises(RuntimeError, match="invalid device ordinal 2"):
        cp.cuda.Device(2)
    assert cp.cuda.runtime.getDeviceProperties(0)["name"].startswith(b"cupy stand-in")
