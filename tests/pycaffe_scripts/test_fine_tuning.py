"""examples/02-fine-tuning.ipynb: fine-tuning a CaffeNet for style recognition, written the notebook's way.

Scaled for CI: the notebook's CaffeNet keeps its layers, names, fillers and parameter routing, with fewer
filters and a 35 x 35 crop; Flickr Style is five synthetic "styles" of 40 x 40 PNGs (a tint and a stripe
direction each) listed for ImageData; the "ImageNet weights" stand in for trained ones: Xavier weights
with colour-opposing blurs as conv1 (no ImageNet here). fc6/fc7 keep 256 units: with fewer, dropout
in front of frozen layers swamps the features.
"""

import os
import tempfile

import numpy as np
import pytest
from PIL import Image

import caffe
from caffe import layers as L
from caffe import params as P
from caffe.proto import caffe_pb2

NUM_STYLE_LABELS = 5
STYLES = ['Detailed', 'Pastel', 'Melancholy', 'Noir', 'HDR']
TINTS = np.array([[200, 60, 60], [60, 200, 60], [60, 60, 200], [200, 200, 60], [60, 200, 200]])

weight_param = dict(lr_mult=1, decay_mult=1)
bias_param = dict(lr_mult=2, decay_mult=0)
learned_param = [weight_param, bias_param]

frozen_param = [dict(lr_mult=0)] * 2


def conv_relu(bottom, ks, nout, stride=1, pad=0, group=1,
              param=learned_param,
              weight_filler=dict(type='gaussian', std=0.01),  # noqa: B006
              bias_filler=dict(type='constant', value=0.1)):  # noqa: B006
    conv = L.Convolution(bottom, kernel_size=ks, stride=stride,
                         num_output=nout, pad=pad, group=group,
                         param=param, weight_filler=weight_filler,
                         bias_filler=bias_filler)
    return conv, L.ReLU(conv, in_place=True)


def fc_relu(bottom, nout, param=learned_param,
            weight_filler=dict(type='gaussian', std=0.005),  # noqa: B006
            bias_filler=dict(type='constant', value=0.1)):  # noqa: B006
    fc = L.InnerProduct(bottom, num_output=nout, param=param,
                        weight_filler=weight_filler,
                        bias_filler=bias_filler)
    return fc, L.ReLU(fc, in_place=True)


def max_pool(bottom, ks, stride=1):
    return L.Pooling(bottom, pool=P.Pooling.MAX, kernel_size=ks, stride=stride)


def caffenet(data, label=None, train=True, num_classes=1000,
             classifier_name='fc8', learn_all=False):
    """A CaffeNet NetSpec written to a temporary file; returns the file name."""
    n = caffe.NetSpec()
    n.data = data
    param = learned_param if learn_all else frozen_param
    n.conv1, n.relu1 = conv_relu(n.data, 5, 16, stride=2, param=param)
    n.pool1 = max_pool(n.relu1, 3, stride=2)
    n.norm1 = L.LRN(n.pool1, local_size=5, alpha=1e-4, beta=0.75)
    n.conv2, n.relu2 = conv_relu(n.norm1, 3, 16, pad=1, group=2, param=param)
    n.pool2 = max_pool(n.relu2, 3, stride=2)
    n.norm2 = L.LRN(n.pool2, local_size=5, alpha=1e-4, beta=0.75)
    n.conv3, n.relu3 = conv_relu(n.norm2, 3, 24, pad=1, param=param)
    n.conv4, n.relu4 = conv_relu(n.relu3, 3, 24, pad=1, group=2, param=param)
    n.conv5, n.relu5 = conv_relu(n.relu4, 3, 16, pad=1, group=2, param=param)
    n.pool5 = max_pool(n.relu5, 3, stride=2)
    n.fc6, n.relu6 = fc_relu(n.pool5, 256, param=param)
    if train:
        n.drop6 = fc7input = L.Dropout(n.relu6, in_place=True)
    else:
        fc7input = n.relu6
    n.fc7, n.relu7 = fc_relu(fc7input, 256, param=param)
    if train:
        n.drop7 = fc8input = L.Dropout(n.relu7, in_place=True)
    else:
        fc8input = n.relu7
    # always learn fc8 (param=learned_param)
    fc8 = L.InnerProduct(fc8input, num_output=num_classes, param=learned_param)
    # give fc8 the name specified by argument `classifier_name`
    n.__setattr__(classifier_name, fc8)
    if not train:
        n.probs = L.Softmax(fc8)
    if label is not None:
        n.label = label
        n.loss = L.SoftmaxWithLoss(fc8, n.label)
        n.acc = L.Accuracy(fc8, n.label)
    # write the net to a temporary file and return its filename
    with tempfile.NamedTemporaryFile(mode='w', delete=False) as f:
        f.write(str(n.to_proto()))
        return f.name


def style_net(train=True, learn_all=False, subset=None):
    if subset is None:
        subset = 'train' if train else 'test'
    source = caffe_root + 'data/flickr_style/%s.txt' % subset  # noqa: UP031
    transform_param = dict(mirror=train, crop_size=35,
                           mean_file=caffe_root + 'data/ilsvrc12/imagenet_mean.binaryproto')
    style_data, style_label = L.ImageData(
        transform_param=transform_param, source=source,
        batch_size=25, new_height=40, new_width=40, ntop=2)
    return caffenet(data=style_data, label=style_label, train=train,
                    num_classes=NUM_STYLE_LABELS,
                    classifier_name='fc8_flickr',
                    learn_all=learn_all)


def solver(train_net_path, test_net_path=None, base_lr=0.001):
    s = caffe_pb2.SolverParameter()

    # Specify locations of the train and (maybe) test networks.
    s.train_net = train_net_path
    if test_net_path is not None:
        s.test_net.append(test_net_path)
        s.test_interval = 1000  # Test after every 1000 training iterations.
        s.test_iter.append(100)  # Test on 100 batches each time we test.

    # The number of iterations over which to average the gradient.
    s.iter_size = 1

    s.max_iter = 100000     # # of times to update the net (training iterations)

    # Solve using the stochastic gradient descent (SGD) algorithm.
    s.type = 'SGD'

    # Set the initial learning rate for SGD.
    s.base_lr = base_lr

    # Set `lr_policy` to define how the learning rate changes during training.
    s.lr_policy = 'step'
    s.gamma = 0.1
    s.stepsize = 20000

    # Set other SGD hyperparameters.
    s.momentum = 0.9
    s.weight_decay = 5e-4

    # Display the current training loss and accuracy every 1000 iterations.
    s.display = 1000

    # Snapshots are files used to store networks we've trained.
    s.snapshot = 10000
    s.snapshot_prefix = caffe_root + 'models/finetune_flickr_style/finetune_flickr_style'

    # Train on the CPU.
    s.solver_mode = caffe_pb2.SolverParameter.CPU

    # Write the solver to a temporary file and return its filename.
    with tempfile.NamedTemporaryFile(mode='w', delete=False) as f:
        f.write(str(s))
        return f.name


def run_solvers(niter, solvers, disp_interval=10):
    """Run solvers for niter iterations,
       returning the loss and accuracy recorded each iteration.
       `solvers` is a list of (name, solver) tuples."""
    blobs = ('loss', 'acc')
    loss, acc = ({name: np.zeros(niter) for name, _ in solvers}
                 for _ in blobs)
    for it in range(niter):
        for name, s in solvers:
            s.step(1)  # run a single SGD step in Caffe
            loss[name][it], acc[name][it] = (s.net.blobs[b].data.copy()
                                             for b in blobs)
        if it % disp_interval == 0 or it + 1 == niter:
            loss_disp = '; '.join('%s: loss=%.3f, acc=%2d%%' %  # noqa: UP031
                                  (n, loss[n][it], np.round(100*acc[n][it]))
                                  for n, _ in solvers)
            print('%3d) %s' % (it, loss_disp))  # noqa: UP031
    # Save the learned weights from both nets.
    weight_dir = tempfile.mkdtemp()
    weights = {}
    for name, s in solvers:
        filename = 'weights.%s.caffemodel' % name  # noqa: UP031
        weights[name] = os.path.join(weight_dir, filename)
        s.net.save(weights[name])
    return loss, acc, weights


def eval_style_net(weights, test_iters=10):
    test_net = caffe.Net(style_net(train=False), weights, caffe.TEST)
    accuracy = 0
    for _it in range(test_iters):
        accuracy += test_net.forward()['acc']
    accuracy /= test_iters
    return test_net, accuracy


caffe_root = ''


@pytest.fixture
def flickr_style(tmp_path, monkeypatch):
    """{caffe_root} with data/flickr_style (images and lists), the mean file and the "ImageNet" weights."""
    monkeypatch.setitem(globals(), 'caffe_root', str(tmp_path) + '/')
    monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path))
    monkeypatch.chdir(tmp_path)
    caffe.set_mode_cpu()
    caffe.set_random_seed(4242)
    rng = np.random.default_rng(3)
    style_dir = tmp_path / 'data' / 'flickr_style'
    (style_dir / 'images').mkdir(parents=True)
    rows = np.arange(40)[:, None]
    for subset, count in [('train', 200), ('test', 100)]:
        lines = []
        for index in range(count):
            label = index % NUM_STYLE_LABELS
            stripes = np.sin((rows if label % 2 else rows.T) * (0.5 + 0.3 * label)) * 40
            picture = TINTS[label] + stripes[:, :, None] + rng.normal(0, 50, size=(40, 40, 3))
            name = style_dir / 'images' / f'{subset}_{index:03d}.png'
            Image.fromarray(np.clip(picture, 0, 255).astype(np.uint8)).save(name)
            lines.append(f'{name} {label}\n')
        (style_dir / f'{subset}.txt').write_text(''.join(lines))

    (tmp_path / 'data' / 'ilsvrc12').mkdir(parents=True)
    mean = np.full((1, 3, 40, 40), 128.)
    with open(tmp_path / 'data' / 'ilsvrc12' / 'imagenet_mean.binaryproto', 'wb') as f:
        f.write(caffe.io.array_to_blobproto(mean).SerializeToString())

    stand_in = caffe.Net(caffenet(data=L.DummyData(shape=dict(dim=[1, 3, 35, 35])), train=False), caffe.TEST)
    for blobs in stand_in.params.values():
        fan_in = blobs[0].data[0].size
        blobs[0].data[...] = rng.uniform(-1, 1, blobs[0].data.shape) * np.sqrt(3. / fan_in)
    # conv1 as trained first layers often are: colour-opponent blurs, blind to the pixel noise
    colours = rng.uniform(-1, 1, (16, 3))
    stand_in.params['conv1'][0].data[...] = colours[:, :, None, None] / (25 * 2.)
    (tmp_path / 'models' / 'bvlc_reference_caffenet').mkdir(parents=True)
    (tmp_path / 'models' / 'finetune_flickr_style').mkdir()
    weights = str(tmp_path / 'models' / 'bvlc_reference_caffenet' / 'bvlc_reference_caffenet.caffemodel')
    stand_in.save(weights)
    return weights


def test_fine_tuning_a_pretrained_network_for_style_recognition(flickr_style):
    weights = flickr_style
    assert os.path.exists(weights)

    dummy_data = L.DummyData(shape=dict(dim=[1, 3, 35, 35]))
    imagenet_net_filename = caffenet(data=dummy_data, train=False)
    imagenet_net = caffe.Net(imagenet_net_filename, weights, caffe.TEST)

    untrained_style_net = caffe.Net(style_net(train=False, subset='train'),
                                    weights, caffe.TEST)
    untrained_style_net.forward()
    style_data_batch = untrained_style_net.blobs['data'].data.copy()
    style_label_batch = np.array(untrained_style_net.blobs['label'].data, dtype=np.int32)
    # the first 25 training images in list order, centre-cropped (mirror is off) less the mean file
    assert list(style_label_batch) == [index % NUM_STYLE_LABELS for index in range(25)]
    first = np.asarray(Image.open(caffe_root + 'data/flickr_style/images/train_000.png'), dtype=np.float32)
    np.testing.assert_allclose(style_data_batch[0], first[2:37, 2:37, ::-1].transpose(2, 0, 1) - 128.)

    def disp_preds(net, image, labels, k=5, name='ImageNet'):
        input_blob = net.blobs['data']  # noqa: F841
        net.blobs['data'].data[0, ...] = image
        probs = net.forward(start='conv1')['probs'][0]
        top_k = (-probs).argsort()[:k]
        print('top %d predicted %s labels =' % (k, name))  # noqa: UP031
        print('\n'.join('\t(%d) %5.2f%% %s' % (i+1, 100*probs[p], labels[p])  # noqa: UP031
                        for i, p in enumerate(top_k)))
        return probs, top_k

    batch_index = 8
    image = style_data_batch[batch_index]
    probs, top_k = disp_preds(imagenet_net, image, [f'synset {i}' for i in range(1000)], name='ImageNet')
    assert np.isclose(probs.sum(), 1, rtol=1e-5) and np.all(np.diff(probs[top_k]) <= 0)
    style_probs, _ = disp_preds(untrained_style_net, image, STYLES, name='style')
    # fc8_flickr has no filler (zero weights): every style is equally likely before training
    np.testing.assert_allclose(style_probs, 1. / NUM_STYLE_LABELS, rtol=1e-6)
    # the two nets took the same pretrained conv1..fc7 by name, so they compute the same features
    np.testing.assert_allclose(untrained_style_net.blobs['fc7'].data[0], imagenet_net.blobs['fc7'].data[0],
                               rtol=1e-5, atol=1e-4)
    assert np.array_equal(untrained_style_net.params['conv1'][0].data, imagenet_net.params['conv1'][0].data)

    niter = 30  # number of iterations to train

    # Reset style_solver as before.
    style_solver_filename = solver(style_net(train=True))
    style_solver = caffe.get_solver(style_solver_filename)
    style_solver.net.copy_from(weights)
    frozen_before = style_solver.net.params['conv1'][0].data.copy()

    # For reference, we also create a solver that isn't initialized from
    # the pretrained ImageNet weights.
    scratch_style_solver_filename = solver(style_net(train=True))
    scratch_style_solver = caffe.get_solver(scratch_style_solver_filename)

    print('Running solvers for %d iterations...' % niter)  # noqa: UP031
    solvers = [('pretrained', style_solver),
               ('scratch', scratch_style_solver)]
    loss, acc, weights = run_solvers(niter, solvers)
    print('Done.')

    train_loss, scratch_train_loss = loss['pretrained'], loss['scratch']
    train_acc, scratch_train_acc = acc['pretrained'], acc['scratch']
    style_weights, scratch_style_weights = weights['pretrained'], weights['scratch']

    # lr_mult 0 froze conv1..fc7; only fc8_flickr learned
    assert np.array_equal(style_solver.net.params['conv1'][0].data, frozen_before)
    assert style_solver.net.params['fc8_flickr'][0].data.any()
    np.testing.assert_allclose(train_loss[0], np.log(NUM_STYLE_LABELS), rtol=1e-5)
    # measured here (dropout makes the training batches noisy): over the last 10 iterations a mean
    # loss of 1.01 and accuracy of 65% with the pretrained features; from scratch, ln(5) and chance
    assert train_loss[-10:].mean() < 0.75 * train_loss[0]
    assert train_acc[-10:].mean() > 0.45
    np.testing.assert_allclose(scratch_train_loss, np.log(NUM_STYLE_LABELS), atol=0.01)
    assert scratch_train_acc.mean() < 0.3

    # Delete solvers to save memory.
    del style_solver, scratch_style_solver, solvers

    test_net, accuracy = eval_style_net(style_weights, test_iters=4)
    print('Accuracy, trained from ImageNet initialization: %3.1f%%' % (100*accuracy, ))  # noqa: UP031
    scratch_test_net, scratch_accuracy = eval_style_net(scratch_style_weights, test_iters=4)
    print('Accuracy, trained from   random initialization: %3.1f%%' % (100*scratch_accuracy, ))  # noqa: UP031
    # measured here: 100% with the pretrained features, 20% (chance) from the notebook's
    # scratch initialisation, whose near-constant features leave fc8_flickr nothing to learn from
    assert accuracy > 0.8
    assert accuracy > scratch_accuracy + 0.3

    # End-to-end finetuning: learn_all=True turns on learning in all layers
    end_to_end_net = style_net(train=True, learn_all=True)

    # Set base_lr to 1e-3, the same as last time when learning only the classifier.
    base_lr = 0.001

    style_solver_filename = solver(end_to_end_net, base_lr=base_lr)
    style_solver = caffe.get_solver(style_solver_filename)
    style_solver.net.copy_from(style_weights)
    conv1_before = style_solver.net.params['conv1'][0].data.copy()

    print('Running solvers for %d iterations...' % 5)  # noqa: UP031
    solvers = [('pretrained, end-to-end', style_solver)]
    _, finetuned_acc, finetuned_weights = run_solvers(5, solvers)
    assert not np.array_equal(style_solver.net.params['conv1'][0].data, conv1_before)
    test_net, accuracy = eval_style_net(finetuned_weights['pretrained, end-to-end'], test_iters=4)
    assert accuracy > 0.8
