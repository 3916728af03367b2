"""coord_map: maps through conv, pool, deconv and crop, as Caffe's python/caffe/test/test_coord_map.py."""

import numpy as np
import pytest

import caffe
from caffe import layers as L
from caffe import params as P
from caffe.coord_map import (
    AxisMismatchException,
    UndefinedMapException,
    compose,
    coord_map,
    coord_map_from_to,
    crop,
    inverse,
)


def coord_net_spec(ks=3, stride=1, pad=0, pool=2, dstride=2, dpad=0):
    """data -> conv -> max pool -> deconv (kernel twice its stride), plus a second input aux."""
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[2, 1, 100, 100]))
    n.aux = L.Input(shape=dict(dim=[2, 1, 20, 20]))
    n.conv = L.Convolution(n.data, num_output=10, kernel_size=ks, stride=stride, pad=pad)
    n.pool = L.Pooling(n.conv, pool=P.Pooling.MAX, kernel_size=pool, stride=pool, pad=0)
    deconv_ks = [s * 2 for s in dstride] if isinstance(dstride, list) else dstride * 2
    n.deconv = L.Deconvolution(n.pool, num_output=10, kernel_size=deconv_ks, stride=dstride, pad=dpad)
    return n


def test_conv_pool_deconv():
    n = coord_net_spec()
    assert coord_map_from_to(n.deconv, n.data) == (1, 1, 0)
    n = coord_net_spec(pool=4, dstride=4)
    assert coord_map_from_to(n.deconv, n.data) == (1, 1, -1)


def test_pass_through_and_1x1_conv_are_identity():
    n = coord_net_spec()
    reference = coord_map_from_to(n.deconv, n.data)
    n.relu = L.ReLU(n.deconv)
    n.conv1x1 = L.Convolution(n.relu, num_output=10, kernel_size=1, stride=1, pad=0)
    for top in (n.relu, n.conv1x1):
        assert coord_map_from_to(top, n.data) == reference


@pytest.mark.parametrize("pad", [1, 4, 7])
def test_conv_padding_adds_offset_and_deconv_padding_subtracts_it(pad):
    n = coord_net_spec()
    ax, a, b = coord_map_from_to(n.deconv, n.data)
    n = coord_net_spec(pad=pad)
    assert coord_map_from_to(n.deconv, n.data) == (ax, a, b - pad)
    n = coord_net_spec(dpad=pad)
    assert coord_map_from_to(n.deconv, n.data) == (ax, a, b + pad)
    n = coord_net_spec(pad=pad, dpad=pad)
    assert coord_map_from_to(n.deconv, n.data) == (ax, a, b)


def test_multiple_bottoms_and_tops_map_identically():
    n = coord_net_spec()
    n.conv_data, n.conv_aux = L.Convolution(n.data, n.aux, ntop=2, num_output=10, kernel_size=5, stride=2,
                                            pad=0)
    assert coord_map_from_to(n.conv_data, n.data) == coord_map_from_to(n.conv_aux, n.aux)


def test_anisotropic_map_is_its_isotropic_parts():
    n3x3 = coord_net_spec(ks=3, stride=1, pad=0)
    n5x5 = coord_net_spec(ks=5, stride=2, pad=10)
    n3x5 = coord_net_spec(ks=[3, 5], stride=[1, 2], pad=[0, 10])
    ax_3, a_3, b_3 = coord_map_from_to(n3x3.deconv, n3x3.data)
    ax_5, a_5, b_5 = coord_map_from_to(n5x5.deconv, n5x5.data)
    ax_35, a_35, b_35 = coord_map_from_to(n3x5.deconv, n3x5.data)
    assert ax_3 == ax_5 == ax_35
    assert (a_3, b_3) == (a_35[0], b_35[0])
    assert (a_5, b_5) == (a_35[1], b_35[1])


def test_nd_conv_maps_every_spatial_axis():
    n = caffe.NetSpec()
    n.data = L.Input(shape=dict(dim=[2, 3, 100, 100, 100]))
    n.conv = L.Convolution(n.data, num_output=10, kernel_size=[3, 3, 3], stride=[1, 1, 1], pad=[0, 1, 2])
    n.pool = L.Pooling(n.conv, pool=P.Pooling.MAX, kernel_size=2, stride=2, pad=0)
    n.deconv = L.Deconvolution(n.pool, num_output=10, kernel_size=4, stride=2, pad=0)
    ax, a, b = coord_map_from_to(n.deconv, n.data)
    assert ax == 1
    assert len(a) == len(b) == 3
    assert np.all(a == 1)
    assert b[0] - 1 == b[1] and b[1] - 1 == b[2]


@pytest.mark.parametrize("offset", [0, 3, 10])
def test_crop_of_crop_adds_its_offset(offset):
    n = coord_net_spec()
    ax, a, b = coord_map_from_to(n.deconv, n.data)
    n.crop = L.Crop(n.deconv, n.data, axis=2, offset=offset)
    assert coord_map_from_to(n.crop, n.data) == (ax, a, b + offset)


def test_crop_helper_specs_a_crop_layer():
    n = coord_net_spec(pool=4, dstride=4, dpad=0)
    n.data_crop = crop(n.deconv, n.data)
    layer = n.to_proto().layer[-1]
    assert layer.type == "Crop"
    assert list(layer.bottom) == ["deconv", "data"]
    assert layer.crop_param.axis == 2
    assert list(layer.crop_param.offset) == [1]


def test_spatially_unconnected_tops_raise():
    n = coord_net_spec()
    n.ip = L.InnerProduct(n.deconv, num_output=10)
    with pytest.raises(RuntimeError, match="Could not compute map between tops"):
        coord_map_from_to(n.ip, n.data)


def test_crop_refuses_scale_mismatch_and_negative_offsets():
    n = coord_net_spec(pool=3, dstride=2)
    with pytest.raises(AssertionError, match="scale mismatch"):
        crop(n.deconv, n.data)
    n = coord_net_spec(dpad=10)
    with pytest.raises(AssertionError, match="cannot crop negative width"):
        crop(n.deconv, n.data)


def test_map_algebra():
    assert compose((None, 1, 0), (1, 0.5, 2)) == (1, 0.5, 2)
    assert compose((1, 2, 1), (1, 0.5, 2)) == (1, 1.0, 5)
    assert inverse((1, 0.5, -1)) == (1, 2.0, 2.0)
    with pytest.raises(AxisMismatchException):
        compose((1, 1, 0), (2, 1, 0))
    with pytest.raises(UndefinedMapException, match="InnerProduct"):
        coord_map(L.InnerProduct(L.Input(), num_output=1).fn)
    with pytest.raises(AssertionError, match="legacy _h/_w"):
        coord_map(L.Convolution(L.Input(), kernel_h=3, kernel_w=3).fn)


def test_crop_reference_bottom_is_not_walked():
    # Only a Crop's first bottom maps to its top: aux is cropped by data, so data is no ancestor.
    n = coord_net_spec()
    n.cropped = L.Crop(n.aux, n.data)
    with pytest.raises(RuntimeError, match="Could not compute map between tops"):
        coord_map_from_to(n.cropped, n.data)


@pytest.mark.parametrize("legacy", ["pad_h", "kernel_h", "stride_h", "stride_w"])
def test_legacy_h_w_conv_params_are_refused(legacy):
    n = coord_net_spec()
    n.legacy = L.Convolution(n.data, num_output=10, kernel_size=3, **{legacy: 2})
    with pytest.raises(AssertionError, match="legacy _h/_w params"):
        coord_map_from_to(n.legacy, n.data)
