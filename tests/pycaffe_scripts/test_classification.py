"""examples/00-classification.ipynb: classifying an image with caffe.io.Transformer and caffe.Classifier.

CaffeNet and its ImageNet weights are replaced by a CaffeNet-shaped deploy net small enough to recompute
with numpy (classification/deploy.prototxt) and weights drawn from its fillers with a fixed seed.
"""

import shutil
from pathlib import Path

import numpy as np
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from PIL import Image

import caffe

HERE = Path(__file__).parent
CLASSES = [f'n{index:08d} class {index}' for index in range(10)]


def numpy_forward(net, batch):
    """deploy.prototxt's forward in float64 numpy: conv, ReLU, 2x2 max pooling, fc6, ReLU, fc8, softmax."""
    w1, b1 = (blob.data.astype(np.float64) for blob in net.params['conv1'])
    w6, b6 = (blob.data.astype(np.float64) for blob in net.params['fc6'])
    w8, b8 = (blob.data.astype(np.float64) for blob in net.params['fc8'])
    windows = sliding_window_view(batch.astype(np.float64), (5, 5), axis=(2, 3))
    conv1 = np.maximum(np.einsum('nchwij,fcij->nfhw', windows, w1) + b1[:, None, None], 0)
    n, f, h, w = conv1.shape
    pool1 = conv1.reshape(n, f, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    fc6 = np.maximum(pool1.reshape(n, -1) @ w6.T + b6, 0)
    fc8 = fc6 @ w8.T + b8
    scores = np.exp(fc8 - fc8.max(1, keepdims=True))
    return scores / scores.sum(1, keepdims=True)


def numpy_preprocess(image, mu):
    """The Transformer's steps by hand: H x W x RGB in [0, 1] -> BGR x H x W in [0, 255], less the mean."""
    return image.transpose(2, 0, 1)[::-1] * 255 - mu[:, None, None]


@pytest.fixture
def caffe_root(tmp_path, monkeypatch):
    """{caffe_root} with the model, its weights, a mean file, a label file and a 36 x 36 picture."""
    model = tmp_path / 'models' / 'tiny_caffenet'
    model.mkdir(parents=True)
    shutil.copy(HERE / 'classification' / 'deploy.prototxt', model / 'deploy.prototxt')
    caffe.set_random_seed(2016)
    caffe.Net(str(model / 'deploy.prototxt'), caffe.TEST).save(str(model / 'tiny_caffenet.caffemodel'))

    (tmp_path / 'python' / 'caffe' / 'imagenet').mkdir(parents=True)
    rng = np.random.default_rng(7)
    mean_image = rng.uniform(90, 130, size=(3, 36, 36)) + np.array([104., 117., 123.])[:, None, None] - 110
    np.save(tmp_path / 'python' / 'caffe' / 'imagenet' / 'ilsvrc_2012_mean.npy', mean_image)

    (tmp_path / 'data' / 'ilsvrc12').mkdir(parents=True)
    (tmp_path / 'data' / 'ilsvrc12' / 'synset_words.txt').write_text('\n'.join(CLASSES) + '\n')

    (tmp_path / 'examples' / 'images').mkdir(parents=True)
    picture = rng.integers(0, 256, size=(36, 36, 3), dtype=np.uint8)
    picture[8:28, 8:28, 0] = 250
    Image.fromarray(picture).save(tmp_path / 'examples' / 'images' / 'cat.png')

    monkeypatch.chdir(tmp_path / 'examples')
    return tmp_path


def test_classification_with_a_transformer(caffe_root):
    caffe_root = '../'
    caffe.set_mode_cpu()

    model_def = caffe_root + 'models/tiny_caffenet/deploy.prototxt'
    model_weights = caffe_root + 'models/tiny_caffenet/tiny_caffenet.caffemodel'

    net = caffe.Net(model_def,      # defines the structure of the model
                    model_weights,  # contains the trained weights
                    caffe.TEST)     # use test mode (e.g., don't perform dropout)

    # load the mean ImageNet image (as distributed with Caffe) for subtraction
    mu = np.load(caffe_root + 'python/caffe/imagenet/ilsvrc_2012_mean.npy')
    mu = mu.mean(1).mean(1)  # average over pixels to obtain the mean (BGR) pixel values
    print('mean-subtracted values:', list(zip('BGR', mu, strict=True)))

    # create transformer for the input called 'data'
    transformer = caffe.io.Transformer({'data': net.blobs['data'].data.shape})

    transformer.set_transpose('data', (2, 0, 1))  # move image channels to outermost dimension
    transformer.set_mean('data', mu)            # subtract the dataset-mean value in each channel
    transformer.set_raw_scale('data', 255)      # rescale from [0, 1] to [0, 255]
    transformer.set_channel_swap('data', (2, 1, 0))  # swap channels from RGB to BGR

    # set the size of the input (we can skip this if we're happy
    #  with the default; we can also change it later, e.g., for different batch sizes)
    net.blobs['data'].reshape(50,        # batch size
                              3,         # 3-channel (BGR) images
                              32, 32)    # image size is 32x32

    image = caffe.io.load_image(caffe_root + 'examples/images/cat.png')
    assert image.shape == (36, 36, 3) and image.dtype == np.float32
    np.testing.assert_allclose(image, np.asarray(Image.open('images/cat.png')) / 255., atol=1e-6)
    image = image[2:34, 2:34]  # the net's input size, so that no resizing enters the comparisons
    transformed_image = transformer.preprocess('data', image)
    np.testing.assert_allclose(transformed_image, numpy_preprocess(image, mu), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(transformer.deprocess('data', transformed_image), image, atol=1e-5)

    # copy the image data into the memory allocated for the net
    net.blobs['data'].data[...] = transformed_image

    ### perform classification
    output = net.forward()

    output_prob = output['prob'][0]  # the output probability vector for the first image in the batch

    print('predicted class is:', output_prob.argmax())
    expected = numpy_forward(net, transformed_image[np.newaxis])[0]
    np.testing.assert_allclose(output_prob, expected, rtol=1e-4, atol=1e-6)
    assert output_prob.argmax() == expected.argmax()
    assert output['prob'].shape == (50, 10)
    np.testing.assert_allclose(output['prob'], np.tile(output_prob, (50, 1)), rtol=1e-5, atol=1e-9)

    # load ImageNet labels
    labels_file = caffe_root + 'data/ilsvrc12/synset_words.txt'
    labels = np.loadtxt(labels_file, str, delimiter='\t')
    print('output label:', labels[output_prob.argmax()])
    assert labels[output_prob.argmax()] == CLASSES[expected.argmax()]

    # sort top five predictions from softmax output
    top_inds = output_prob.argsort()[::-1][:5]  # reverse sort and take five largest items
    assert list(top_inds) == list(np.argsort(-expected)[:5])
    assert list(zip(output_prob[top_inds], labels[top_inds], strict=True))[0][1] == labels[expected.argmax()]

    # for each layer, show the output shape
    shapes = {layer_name: blob.data.shape for layer_name, blob in net.blobs.items()}
    assert shapes == {'data': (50, 3, 32, 32), 'conv1': (50, 8, 28, 28), 'pool1': (50, 8, 14, 14),
                      'fc6': (50, 32), 'fc8': (50, 10), 'prob': (50, 10)}
    weights = {layer_name: (param[0].data.shape, param[1].data.shape)
               for layer_name, param in net.params.items()}
    assert weights == {'conv1': ((8, 3, 5, 5), (8,)), 'fc6': ((32, 1568), (32,)), 'fc8': ((10, 32), (10,))}

    # the parameters are a list of [weights, biases]
    filters = net.params['conv1'][0].data
    assert filters.transpose(0, 2, 3, 1).shape == (8, 5, 5, 3)
    feat = net.blobs['conv1'].data[0, :36]
    assert feat.min() >= 0  # after the in-place ReLU

    # a second picture, classified by copying it into the same memory
    second = np.ascontiguousarray(image[::-1])
    net.blobs['data'].data[...] = transformer.preprocess('data', second)
    net.forward()
    output_prob = net.blobs['prob'].data[0]
    expected = numpy_forward(net, numpy_preprocess(second, mu)[np.newaxis])[0]
    np.testing.assert_allclose(output_prob, expected, rtol=1e-4, atol=1e-6)


def test_classifier_predicts_over_ten_crops_or_the_centre(caffe_root):
    caffe_root = '../'
    MODEL_FILE = caffe_root + 'models/tiny_caffenet/deploy.prototxt'
    PRETRAINED = caffe_root + 'models/tiny_caffenet/tiny_caffenet.caffemodel'
    IMAGE_FILE = 'images/cat.png'

    caffe.set_mode_cpu()
    mu = np.load(caffe_root + 'python/caffe/imagenet/ilsvrc_2012_mean.npy').mean(1).mean(1)
    net = caffe.Classifier(MODEL_FILE, PRETRAINED,
                           mean=mu,
                           channel_swap=(2, 1, 0),
                           raw_scale=255,
                           image_dims=(36, 36))

    input_image = caffe.io.load_image(IMAGE_FILE)

    # predict takes any number of images, and formats them for the Caffe net automatically
    prediction = net.predict([input_image])
    print('prediction shape:', prediction[0].shape)
    print('predicted class:', prediction[0].argmax())
    assert prediction.shape == (1, 10)
    # ten crops: the four corners and the centre, and their mirror images; their probabilities averaged
    corners = [(0, 0), (0, 4), (4, 0), (4, 4), (2, 2)]
    crops = [input_image[r:r + 32, c:c + 32] for r, c in corners]
    crops += [crop[:, ::-1] for crop in crops]
    expected = numpy_forward(net, np.asarray([numpy_preprocess(crop, mu) for crop in crops])).mean(0)
    np.testing.assert_allclose(prediction[0], expected, rtol=1e-4, atol=1e-6)
    assert prediction[0].argmax() == expected.argmax()

    prediction = net.predict([input_image], oversample=False)
    print('prediction shape:', prediction[0].shape)
    print('predicted class:', prediction[0].argmax())
    centre = numpy_forward(net, numpy_preprocess(input_image[2:34, 2:34], mu)[np.newaxis])[0]
    np.testing.assert_allclose(prediction[0], centre, rtol=1e-4, atol=1e-6)
    assert prediction[0].argmax() == centre.argmax()

    # Resize the image to the standard (36, 36) and oversample net input sized crops.
    input_oversampled = caffe.io.oversample([caffe.io.resize_image(input_image, net.image_dims)],
                                            net.crop_dims)
    # 'data' is the input blob name in the model definition, so we preprocess for that input.
    caffe_input = np.asarray([net.transformer.preprocess('data', in_) for in_ in input_oversampled])
    # forward() takes keyword args for the input blobs with preprocessed input arrays.
    out = net.forward(data=caffe_input)
    np.testing.assert_allclose(out['prob'].mean(0), expected, rtol=1e-4, atol=1e-6)
