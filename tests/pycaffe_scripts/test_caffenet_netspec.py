"""examples/pycaffe/caffenet.py and python/caffe/test/test_net_spec.py: nets written with NetSpec, saved as
prototxt text and loaded back with caffe.Net."""

import tempfile

import lmdb
import numpy as np
import pytest

import caffe
from caffe import layers as L
from caffe import params as P
from caffe import to_proto

# helper function for common structures


def conv_relu(bottom, ks, nout, stride=1, pad=0, group=1):
    conv = L.Convolution(bottom, kernel_size=ks, stride=stride,
                         num_output=nout, pad=pad, group=group)
    return conv, L.ReLU(conv, in_place=True)


def fc_relu(bottom, nout):
    fc = L.InnerProduct(bottom, num_output=nout)
    return fc, L.ReLU(fc, in_place=True)


def max_pool(bottom, ks, stride=1):
    return L.Pooling(bottom, pool=P.Pooling.MAX, kernel_size=ks, stride=stride)


def caffenet(lmdb, batch_size=256, include_acc=False):
    data, label = L.Data(source=lmdb, backend=P.Data.LMDB, batch_size=batch_size, ntop=2,
                         transform_param=dict(crop_size=227, mean_value=[104, 117, 123], mirror=True))

    # the net itself
    conv1, relu1 = conv_relu(data, 11, 96, stride=4)
    pool1 = max_pool(relu1, 3, stride=2)
    norm1 = L.LRN(pool1, local_size=5, alpha=1e-4, beta=0.75)
    conv2, relu2 = conv_relu(norm1, 5, 256, pad=2, group=2)
    pool2 = max_pool(relu2, 3, stride=2)
    norm2 = L.LRN(pool2, local_size=5, alpha=1e-4, beta=0.75)
    conv3, relu3 = conv_relu(norm2, 3, 384, pad=1)
    conv4, relu4 = conv_relu(relu3, 3, 384, pad=1, group=2)
    conv5, relu5 = conv_relu(relu4, 3, 256, pad=1, group=2)
    pool5 = max_pool(relu5, 3, stride=2)
    fc6, relu6 = fc_relu(pool5, 4096)
    drop6 = L.Dropout(relu6, in_place=True)
    fc7, relu7 = fc_relu(drop6, 4096)
    drop7 = L.Dropout(relu7, in_place=True)
    fc8 = L.InnerProduct(drop7, num_output=1000)
    loss = L.SoftmaxWithLoss(fc8, label)

    if include_acc:
        acc = L.Accuracy(fc8, label)
        return to_proto(loss, acc)
    else:
        return to_proto(loss)


def make_net():
    with open('train.prototxt', 'w') as f:
        print(caffenet('/path/to/caffe-train-lmdb'), file=f)

    with open('test.prototxt', 'w') as f:
        print(caffenet('/path/to/caffe-val-lmdb', batch_size=50, include_acc=True), file=f)


def test_make_net_writes_what_caffe_writes(tmp_path, monkeypatch, golden_text):
    monkeypatch.chdir(tmp_path)
    make_net()
    # print() adds one newline after the text
    assert open('train.prototxt').read() == golden_text('caffenet_train.prototxt') + '\n'
    assert open('test.prototxt').read() == golden_text('caffenet_test.prototxt') + '\n'


def test_caffenet_loads_back_with_caffenets_shapes_and_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    images = rng.integers(0, 256, size=(2, 3, 240, 240), dtype=np.uint8)
    env = lmdb.open('caffe-val-lmdb', map_size=1 << 24)
    with env.begin(write=True) as txn:
        for index, label in enumerate([3, 999]):
            txn.put(b'%08d' % index, caffe.io.array_to_datum(images[index], label).SerializeToString())
    env.close()

    with open('test.prototxt', 'w') as f:
        print(caffenet('caffe-val-lmdb', batch_size=2, include_acc=True), file=f)
    caffe.set_mode_cpu()
    net = caffe.Net('test.prototxt', caffe.TEST)

    shapes = {name: blob.data.shape for name, blob in net.blobs.items() if '_split_' not in name}
    assert shapes == {
        'Data1': (2, 3, 227, 227), 'Data2': (2,), 'Convolution1': (2, 96, 55, 55),
        'Pooling1': (2, 96, 27, 27), 'LRN1': (2, 96, 27, 27), 'Convolution2': (2, 256, 27, 27),
        'Pooling2': (2, 256, 13, 13),
        'LRN2': (2, 256, 13, 13), 'Convolution3': (2, 384, 13, 13), 'Convolution4': (2, 384, 13, 13),
        'Convolution5': (2, 256, 13, 13), 'Pooling3': (2, 256, 6, 6), 'InnerProduct1': (2, 4096),
        'InnerProduct2': (2, 4096), 'InnerProduct3': (2, 1000), 'SoftmaxWithLoss1': (), 'Accuracy1': ()}
    assert [(k, v[0].data.shape) for k, v in net.params.items()] == [
        ('Convolution1', (96, 3, 11, 11)), ('Convolution2', (256, 48, 5, 5)),
        ('Convolution3', (384, 256, 3, 3)), ('Convolution4', (384, 192, 3, 3)),
        ('Convolution5', (256, 192, 3, 3)), ('InnerProduct1', (4096, 9216)),
        ('InnerProduct2', (4096, 4096)), ('InnerProduct3', (1000, 4096))]
    # Caffe keeps the unconsumed blobs in a std::set: the outputs come sorted by name
    assert net.outputs == ['Accuracy1', 'SoftmaxWithLoss1']

    out = net.forward()
    # TEST crops the centre; mirror applies in either phase, so each item is the crop or its mirror image
    means = np.array([104, 117, 123], dtype=np.float32)[:, None, None]
    for index in range(2):
        crop = images[index, :, 6:233, 6:233] - means
        data = net.blobs['Data1'].data[index]
        assert np.array_equal(data, crop) or np.array_equal(data, crop[:, :, ::-1])
    assert list(net.blobs['Data2'].data) == [3, 999]
    # no fillers given: every weight is 0, so all 1,000 scores tie, the loss is ln(1000) and
    # Accuracy counts a tie with the true class against it
    np.testing.assert_allclose(out['SoftmaxWithLoss1'], np.log(1000), rtol=1e-6)
    assert out['Accuracy1'] == 0


def lenet(batch_size):
    n = caffe.NetSpec()
    n.data, n.label = L.DummyData(shape=[dict(dim=[batch_size, 1, 28, 28]),
                                         dict(dim=[batch_size, 1, 1, 1])],
                                  transform_param=dict(scale=1./255), ntop=2)
    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20,
                            weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50,
                            weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.ip1 = L.InnerProduct(n.pool2, num_output=500,
                           weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.ip1, in_place=True)
    n.ip2 = L.InnerProduct(n.relu1, num_output=10,
                           weight_filler=dict(type='xavier'))
    n.loss = L.SoftmaxWithLoss(n.ip2, n.label)
    return n.to_proto()


def anon_lenet(batch_size):
    data, label = L.DummyData(shape=[dict(dim=[batch_size, 1, 28, 28]),
                                     dict(dim=[batch_size, 1, 1, 1])],
                              transform_param=dict(scale=1./255), ntop=2)
    conv1 = L.Convolution(data, kernel_size=5, num_output=20,
                          weight_filler=dict(type='xavier'))
    pool1 = L.Pooling(conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    conv2 = L.Convolution(pool1, kernel_size=5, num_output=50,
                          weight_filler=dict(type='xavier'))
    pool2 = L.Pooling(conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    ip1 = L.InnerProduct(pool2, num_output=500,
                         weight_filler=dict(type='xavier'))
    relu1 = L.ReLU(ip1, in_place=True)
    ip2 = L.InnerProduct(relu1, num_output=10,
                         weight_filler=dict(type='xavier'))
    loss = L.SoftmaxWithLoss(ip2, label)
    return loss.to_proto()


def silent_net():
    n = caffe.NetSpec()
    n.data, n.data2 = L.DummyData(shape=[dict(dim=[3]), dict(dim=[4, 2])], ntop=2)
    n.silence_data = L.Silence(n.data, ntop=0)
    n.silence_data2 = L.Silence(n.data2, ntop=0)
    return n.to_proto()


@pytest.fixture
def temporary_files(tmp_path, monkeypatch):
    """Keeps NamedTemporaryFile's files in the test's own folder."""
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))


def load_net(net_proto):
    f = tempfile.NamedTemporaryFile(mode='w+', delete=False)
    f.write(str(net_proto))
    f.close()
    return caffe.Net(f.name, caffe.TEST)


def test_lenet_specs_save_and_load_back(temporary_files):
    """Construct and build the Caffe version of LeNet, named and anonymous."""
    for spec, relu_name, loss_name in [(lenet, 'relu1', 'loss'), (anon_lenet, 'ReLU1', 'SoftmaxWithLoss1')]:
        net_proto = spec(8)
        # check that relu is in-place
        assert net_proto.layer[6].bottom == net_proto.layer[6].top
        assert net_proto.layer[6].name == relu_name
        net = load_net(net_proto)
        # check that all layers are present
        assert len(net.layers) == 9
        # DummyData fills 0 by default: every score is the zero-filled bias, so the loss is ln(10)
        out = net.forward()
        np.testing.assert_allclose(out[loss_name], np.log(10), rtol=1e-6)
        assert net.params[net_proto.layer[1].name][0].data.std() > 0.05  # Xavier-filled


def test_zero_tops(temporary_files):
    """Test net construction for top-less layers."""
    net_proto = silent_net()
    net = load_net(net_proto)
    assert len(net.forward()) == 0
    assert [layer.name for layer in net_proto.layer] == ['data', 'silence_data', 'silence_data2']
