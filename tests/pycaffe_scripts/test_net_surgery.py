"""examples/net_surgery.ipynb: designer filters, then casting a classifier's inner products to convolutions.

The notebook edits CaffeNet; here LeNet (the repository's examples/mnist weights) is cast the same way:
ip1 and ip2 become ip1-conv and ip2-conv, and a 44 x 44 input gives a 5 x 5 map of classifications.
"""

import shutil
from pathlib import Path

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from PIL import Image

import caffe

HERE = Path(__file__).parent
LENET = HERE.parents[1] / "examples" / "mnist" / "lenet_deploy.prototxt"
LENET_WEIGHTS = HERE.parents[1] / "examples" / "mnist" / "lenet_init.caffemodel"


def correlate(image, filters, biases):
    """Caffe's convolution of one 2-D image with (F, k, k) filters, stride 1, no padding, in float64."""
    windows = sliding_window_view(image.astype(np.float64), filters.shape[1:])
    return np.einsum('hwij,fij->fhw', windows, filters.astype(np.float64)) + biases[:, None, None]


@pytest.fixture
def examples(tmp_path, monkeypatch):
    """{caffe_root}/examples as the working directory, with net_surgery/ and images/."""
    shutil.copytree(HERE / "net_surgery", tmp_path / "net_surgery")
    (tmp_path / "images").mkdir()
    monkeypatch.chdir(tmp_path)
    caffe.set_mode_cpu()
    caffe.set_random_seed(1337)
    return tmp_path


@pytest.fixture
def cat_gray(examples):
    """A gray 90 x 120 picture (a bright square on a soft gradient), standing in for images/cat_gray.jpg."""
    rows, cols = np.mgrid[0:90, 0:120]
    picture = (40 + rows // 3 + cols // 4).astype(np.uint8)
    picture[30:60, 40:80] = 220
    Image.fromarray(picture).save('images/cat_gray.png')
    return picture


def test_designer_filters(examples, cat_gray):
    # Load the net, list its data and params, and filter an example image.
    caffe.set_mode_cpu()
    net = caffe.Net('net_surgery/conv.prototxt', caffe.TEST)
    print("blobs {}\nparams {}".format(net.blobs.keys(), net.params.keys()))  # noqa: UP032
    assert list(net.blobs.keys()) == ['data', 'conv'] and list(net.params.keys()) == ['conv']

    # load image and prepare as a single input batch for Caffe
    im = np.array(Image.open('images/cat_gray.png'))
    assert np.array_equal(im, cat_gray)

    im_input = im[np.newaxis, np.newaxis, :, :]
    net.blobs['data'].reshape(*im_input.shape)
    net.blobs['data'].data[...] = im_input

    net.forward()
    assert net.blobs['conv'].data.shape == (1, 3, 86, 116)
    weights, biases = net.params['conv'][0].data, net.params['conv'][1].data
    assert 0.005 < weights.std() < 0.02 and not biases.any()  # gaussian std 0.01, constant 0
    np.testing.assert_allclose(net.blobs['conv'].data[0], correlate(im, weights[:, 0], biases),
                               rtol=1e-4, atol=1e-3)

    # pick first filter output
    conv0 = net.blobs['conv'].data[0, 0]
    pre_surgery = conv0.mean()
    print("pre-surgery output mean {:.2f}".format(conv0.mean()))  # noqa: UP032
    # set first filter bias to 1
    net.params['conv'][1].data[0] = 1.
    net.forward()
    print("post-surgery output mean {:.2f}".format(conv0.mean()))  # noqa: UP032
    # conv0 is a view of the blob: the second forward shows through it
    np.testing.assert_allclose(conv0.mean(), pre_surgery + 1, rtol=1e-5)

    ksize = net.params['conv'][0].data.shape[2:]
    # make Gaussian blur
    sigma = 1.
    y, x = np.mgrid[-ksize[0]//2 + 1:ksize[0]//2 + 1, -ksize[1]//2 + 1:ksize[1]//2 + 1]
    g = np.exp(-((x**2 + y**2)/(2.0*sigma**2)))
    gaussian = (g / g.sum()).astype(np.float32)
    net.params['conv'][0].data[0] = gaussian
    # make Sobel operator for edge detection
    net.params['conv'][0].data[1:] = 0.
    sobel = np.array((-1, -2, -1, 0, 0, 0, 1, 2, 1), dtype=np.float32).reshape((3, 3))
    net.params['conv'][0].data[1, 0, 1:-1, 1:-1] = sobel  # horizontal
    net.params['conv'][0].data[2, 0, 1:-1, 1:-1] = sobel.T  # vertical
    net.forward()

    blurred, horizontal, vertical = net.blobs['conv'].data[0]
    # the blur keeps the flat inside of the square and its bias of 1 (set above)
    np.testing.assert_allclose(blurred[35:50, 45:70], 221, rtol=1e-5)
    np.testing.assert_allclose(net.blobs['conv'].data[0],
                               correlate(im, net.params['conv'][0].data[:, 0], net.params['conv'][1].data),
                               rtol=1e-4, atol=1e-3)
    # the square's top edge (rows 29-30 in the 86 x 116 output) lights the horizontal filter only
    assert horizontal[27, 50] > 400 and abs(vertical[27, 50]) < 10
    assert vertical[45, 37] > 400 and abs(horizontal[45, 37]) < 10

    # the designed filters save and load back
    net.save('net_surgery/conv_designed.caffemodel')
    loaded = caffe.Net('net_surgery/conv.prototxt', 'net_surgery/conv_designed.caffemodel', caffe.TEST)
    for saved, blob in zip(net.params['conv'], loaded.params['conv'], strict=True):
        assert np.array_equal(saved.data, blob.data)


def test_casting_a_classifier_into_a_fully_convolutional_network(examples, mnist_digits):
    # Load the original network and extract the fully connected layers' parameters.
    net = caffe.Net(str(LENET), str(LENET_WEIGHTS), caffe.TEST)
    params = ['ip1', 'ip2']
    # fc_params = {name: (weights, biases)}
    fc_params = {pr: (net.params[pr][0].data, net.params[pr][1].data) for pr in params}

    shapes = ['{} weights are {} dimensional and biases are {} dimensional'.format(  # noqa: UP032
        fc, fc_params[fc][0].shape, fc_params[fc][1].shape) for fc in params]
    assert shapes[0] == 'ip1 weights are (500, 800) dimensional and biases are (500,) dimensional'

    # Load the fully convolutional network to transplant the parameters.
    net_full_conv = caffe.Net('net_surgery/lenet_full_conv.prototxt', str(LENET_WEIGHTS), caffe.TEST)
    params_full_conv = ['ip1-conv', 'ip2-conv']
    # conv_params = {name: (weights, biases)}
    conv_params = {pr: (net_full_conv.params[pr][0].data, net_full_conv.params[pr][1].data)
                   for pr in params_full_conv}
    assert conv_params['ip1-conv'][0].shape == (500, 50, 4, 4)
    assert conv_params['ip2-conv'][0].shape == (10, 500, 1, 1)
    # the convolutions came from the weights file by name; the cast layers are not in it
    assert np.array_equal(net_full_conv.params['conv2'][0].data, net.params['conv2'][0].data)
    assert not conv_params['ip1-conv'][0].any()

    for pr, pr_conv in zip(params, params_full_conv, strict=True):
        conv_params[pr_conv][0].flat = fc_params[pr][0].flat  # flat unrolls the arrays
        conv_params[pr_conv][1][...] = fc_params[pr][1]

    net_full_conv.save('net_surgery/lenet_full_conv.caffemodel')

    # a 44 x 44 picture: a digit in the top left corner of a dark canvas
    images, labels = mnist_digits["test"]
    canvas = np.zeros((44, 44), dtype=np.uint8)
    canvas[:28, :28] = images[0]
    Image.fromarray(canvas).save('images/digit.png')

    # load input and configure preprocessing
    im = caffe.io.load_image('images/digit.png', color=False)
    np.testing.assert_allclose(im[:, :, 0], canvas / 255., atol=1e-6)
    transformer = caffe.io.Transformer({'data': net_full_conv.blobs['data'].data.shape})
    transformer.set_transpose('data', (2, 0, 1))
    # make classification map by forward and print prediction indices at each location
    net_reloaded = caffe.Net('net_surgery/lenet_full_conv.prototxt', 'net_surgery/lenet_full_conv.caffemodel',
                             caffe.TEST)
    out = net_reloaded.forward_all(data=np.asarray([transformer.preprocess('data', im)]))
    print(out['prob'][0].argmax(axis=0))
    assert out['prob'].shape == (1, 10, 5, 5)

    # each location is the original classifier on the 28 x 28 window 4 pixels further on
    windows = sliding_window_view(im[:, :, 0], (28, 28))[::4, ::4].reshape(25, 1, 28, 28)
    net.blobs['data'].reshape(*windows.shape)
    net.blobs['data'].data[...] = windows
    probs = net.forward()['prob']
    np.testing.assert_allclose(out['prob'][0].reshape(10, 25).T, probs, rtol=1e-4, atol=1e-7)
    # the same class wherever the two best probabilities are further apart than the comparison's rounding
    best_two = np.sort(probs, axis=1)[:, -2:]
    clear = best_two[:, 1] - best_two[:, 0] > 1e-4 * best_two[:, 1]
    assert clear.sum() >= 20
    assert np.array_equal(out['prob'][0].argmax(axis=0).ravel()[clear], probs.argmax(1)[clear])
