"""examples/01-learning-lenet.ipynb, cell by cell: NetSpec LeNet over MNIST LMDBs, a Python solver loop.

Scaled for CI: 640 training and 200 test digits, smaller batches and fewer iterations than the notebook's
(64/100, 200 iterations, 100 test batches); the code reads as the notebook's cells do.
"""

import numpy as np
from numpy import zeros

import caffe
from caffe import layers as L
from caffe import params as P

TRAIN_BATCH = 32
TEST_BATCH = 50
TEST_BATCHES = 4  # the 200 test digits


def lenet(lmdb, batch_size):
    # our version of LeNet: a series of linear and simple nonlinear transformations
    n = caffe.NetSpec()

    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1./255), ntop=2)

    n.conv1 = L.Convolution(n.data, kernel_size=5, num_output=20, weight_filler=dict(type='xavier'))
    n.pool1 = L.Pooling(n.conv1, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.conv2 = L.Convolution(n.pool1, kernel_size=5, num_output=50, weight_filler=dict(type='xavier'))
    n.pool2 = L.Pooling(n.conv2, kernel_size=2, stride=2, pool=P.Pooling.MAX)
    n.fc1 =   L.InnerProduct(n.pool2, num_output=500, weight_filler=dict(type='xavier'))
    n.relu1 = L.ReLU(n.fc1, in_place=True)
    n.score = L.InnerProduct(n.relu1, num_output=10, weight_filler=dict(type='xavier'))
    n.loss =  L.SoftmaxWithLoss(n.score, n.label)

    return n.to_proto()


LENET_AUTO_SOLVER = f"""# The train/test net protocol buffer definition
train_net: "mnist/lenet_auto_train.prototxt"
test_net: "mnist/lenet_auto_test.prototxt"
# test_iter specifies how many forward passes the test should carry out.
test_iter: {TEST_BATCHES}
# Carry out testing every 500 training iterations.
test_interval: 500
# The base learning rate, momentum and the weight decay of the network.
base_lr: 0.01
momentum: 0.9
weight_decay: 0.0005
# The learning rate policy
lr_policy: "inv"
gamma: 0.0001
power: 0.75
# Display every 100 iterations
display: 100
# The maximum number of iterations
max_iter: 10000
# snapshot intermediate results
snapshot: 5000
snapshot_prefix: "mnist/lenet"
# 0xCAFFE: reproducible Xavier weights (not in the notebook's file)
random_seed: 831486
"""


def test_lenet_prototxts_are_written_as_caffe_writes_them(caffe_examples, golden_text):
    with open('mnist/lenet_auto_train.prototxt', 'w') as f:
        f.write(str(lenet('mnist/mnist_train_lmdb', 64)))

    with open('mnist/lenet_auto_test.prototxt', 'w') as f:
        f.write(str(lenet('mnist/mnist_test_lmdb', 100)))

    assert open('mnist/lenet_auto_train.prototxt').read() == golden_text("lenet_auto_train.prototxt")
    assert open('mnist/lenet_auto_test.prototxt').read() == golden_text("lenet_auto_test.prototxt")


def test_solving_in_python_with_lenet(caffe_examples, mnist_digits):
    with open('mnist/lenet_auto_train.prototxt', 'w') as f:
        f.write(str(lenet('mnist/mnist_train_lmdb', TRAIN_BATCH)))
    with open('mnist/lenet_auto_test.prototxt', 'w') as f:
        f.write(str(lenet('mnist/mnist_test_lmdb', TEST_BATCH)))
    with open('mnist/lenet_auto_solver.prototxt', 'w') as f:
        f.write(LENET_AUTO_SOLVER)

    caffe.set_mode_cpu()

    ### load the solver and create train and test nets
    solver = None  # ignore this workaround for lmdb data (can't instantiate two solvers on the same data)
    solver = caffe.SGDSolver('mnist/lenet_auto_solver.prototxt')

    # each output is (batch size, feature dim, spatial dim)
    assert [(k, v.data.shape) for k, v in solver.net.blobs.items()] == [
        ('data', (TRAIN_BATCH, 1, 28, 28)), ('label', (TRAIN_BATCH,)), ('conv1', (TRAIN_BATCH, 20, 24, 24)),
        ('pool1', (TRAIN_BATCH, 20, 12, 12)), ('conv2', (TRAIN_BATCH, 50, 8, 8)),
        ('pool2', (TRAIN_BATCH, 50, 4, 4)), ('fc1', (TRAIN_BATCH, 500)), ('score', (TRAIN_BATCH, 10)),
        ('loss', ())]
    # just print the weight sizes (we'll omit the biases)
    assert [(k, v[0].data.shape) for k, v in solver.net.params.items()] == [
        ('conv1', (20, 1, 5, 5)), ('conv2', (50, 20, 5, 5)), ('fc1', (500, 800)), ('score', (10, 500))]

    out = solver.net.forward()  # train net
    solver.test_nets[0].forward()  # test net (there can be more than one)
    assert list(out) == ['loss'] and 2.0 < float(out['loss']) < 2.6  # about ln(10) from Xavier weights

    # the nets hold the first digits of each database, scaled by 1/255
    train_images, train_labels = mnist_digits["train"]
    test_images, test_labels = mnist_digits["test"]
    assert np.array_equal(solver.net.blobs['label'].data, train_labels[:TRAIN_BATCH])
    np.testing.assert_allclose(solver.net.blobs['data'].data[:8, 0],
                               train_images[:8] * np.float32(1. / 255), rtol=1e-6)
    assert np.array_equal(solver.test_nets[0].blobs['label'].data, test_labels[:TEST_BATCH])
    # we use a little trick to tile the first eight images
    tiled = solver.test_nets[0].blobs['data'].data[:8, 0].transpose(1, 0, 2).reshape(28, 8*28)
    np.testing.assert_array_equal(tiled[:, 28:56], solver.test_nets[0].blobs['data'].data[1, 0])

    conv1_before = solver.net.params['conv1'][0].data.copy()
    solver.step(1)
    conv1_grad = solver.net.params['conv1'][0].diff[:, 0].reshape(4, 5, 5, 5).transpose(0, 2, 1, 3)
    assert conv1_grad.reshape(4*5, 5*5).any()
    assert solver.iter == 1
    # as in Caffe, after the update each param diff holds the step that was subtracted from it
    np.testing.assert_allclose(solver.net.params['conv1'][0].data,
                               conv1_before - solver.net.params['conv1'][0].diff, rtol=1e-6, atol=1e-9)

    niter = 30
    test_interval = 10
    # losses will also be stored in the log
    train_loss = zeros(niter)
    test_acc = zeros(int(np.ceil(niter / test_interval)))
    output = zeros((niter, 8, 10))

    # the main solver loop
    for it in range(niter):
        solver.step(1)  # SGD by Caffe

        # store the train loss
        train_loss[it] = solver.net.blobs['loss'].data

        # store the output on the first test batch
        # (start the forward pass at conv1 to avoid loading new data)
        labels_before = solver.test_nets[0].blobs['label'].data.copy()
        solver.test_nets[0].forward(start='conv1')
        output[it] = solver.test_nets[0].blobs['score'].data[:8]
        assert np.array_equal(solver.test_nets[0].blobs['label'].data, labels_before)

        # run a full test every so often
        if it % test_interval == 0:
            correct = 0
            for test_it in range(TEST_BATCHES):  # noqa: B007
                solver.test_nets[0].forward()
                correct += sum(solver.test_nets[0].blobs['score'].data.argmax(1)
                               == solver.test_nets[0].blobs['label'].data)
            test_acc[it // test_interval] = correct / (TEST_BATCHES * TEST_BATCH)

    assert solver.iter == niter + 1
    # measured here: loss 2.3 -> about 0.7, test accuracy 0.125 -> 0.74 at iteration 20
    assert train_loss[-5:].mean() < 0.5 * train_loss[:5].mean()
    assert test_acc[0] < 0.4
    assert test_acc[-1] > 0.6 and test_acc[-1] > test_acc[0] + 0.3
    # the softmax of the recorded scores grows confident on the first test digits
    probs = np.exp(output) / np.exp(output).sum(2, keepdims=True)
    assert probs[-1].max(1).mean() > probs[0].max(1).mean()


def custom_net(lmdb, batch_size):
    # define your own net!
    n = caffe.NetSpec()

    # keep this data layer for all networks
    n.data, n.label = L.Data(batch_size=batch_size, backend=P.Data.LMDB, source=lmdb,
                             transform_param=dict(scale=1./255), ntop=2)

    # this single layer defines a simple linear classifier
    # (in particular this defines a multiway logistic regression)
    n.score =   L.InnerProduct(n.data, num_output=10, weight_filler=dict(type='xavier'))

    n.loss =  L.SoftmaxWithLoss(n.score, n.label)

    return n.to_proto()


def test_experimenting_with_a_custom_net_and_a_solver_written_from_python(caffe_examples):
    train_net_path = 'mnist/custom_auto_train.prototxt'
    test_net_path = 'mnist/custom_auto_test.prototxt'
    solver_config_path = 'mnist/custom_auto_solver.prototxt'

    with open(train_net_path, 'w') as f:
        f.write(str(custom_net('mnist/mnist_train_lmdb', 64)))
    with open(test_net_path, 'w') as f:
        f.write(str(custom_net('mnist/mnist_test_lmdb', 100)))

    ### define solver
    from caffe.proto import caffe_pb2
    s = caffe_pb2.SolverParameter()

    # Set a seed for reproducible experiments:
    # this controls for randomization in training.
    s.random_seed = 0xCAFFE

    # Specify locations of the train and (maybe) test networks.
    s.train_net = train_net_path
    s.test_net.append(test_net_path)
    s.test_interval = 500  # Test after every 500 training iterations.
    s.test_iter.append(2) # Test on 2 batches each time we test.

    s.max_iter = 10000     # no. of times to update the net (training iterations)

    # solver types include "SGD", "Adam", and "Nesterov" among others.
    s.type = "SGD"

    # Set the initial learning rate for SGD.
    s.base_lr = 0.01
    # Set momentum to accelerate learning by
    # taking weighted average of current and previous updates.
    s.momentum = 0.9
    # Set weight decay to regularize and prevent overfitting
    s.weight_decay = 5e-4

    # Set `lr_policy` to define how the learning rate changes during training.
    # This is the same policy as our default LeNet.
    s.lr_policy = 'inv'
    s.gamma = 0.0001
    s.power = 0.75

    # Display the current training loss and accuracy every 1000 iterations.
    s.display = 1000

    # Snapshots are files used to store networks we've trained.
    # We'll snapshot every 5K iterations -- twice during training.
    s.snapshot = 5000
    s.snapshot_prefix = 'mnist/custom_net'

    # Train on the CPU
    s.solver_mode = caffe_pb2.SolverParameter.CPU

    # Write the solver to a temporary file and return its filename.
    with open(solver_config_path, 'w') as f:
        f.write(str(s))

    ### load the solver and create train and test nets
    solver = None  # ignore this workaround for lmdb data (can't instantiate two solvers on the same data)
    solver = caffe.get_solver(solver_config_path)
    assert isinstance(solver, caffe.SGDSolver)
    assert solver.param.random_seed == 0xCAFFE and solver.param.test_iter == [2]

    ### solve
    niter = 100
    test_interval = niter // 10
    # losses will also be stored in the log
    train_loss = zeros(niter)
    test_acc = zeros(int(np.ceil(niter / test_interval)))

    # the main solver loop
    for it in range(niter):
        solver.step(1)  # SGD by Caffe

        # store the train loss
        train_loss[it] = solver.net.blobs['loss'].data

        # run a full test every so often
        if it % test_interval == 0:
            correct = 0
            for test_it in range(2):  # noqa: B007
                solver.test_nets[0].forward()
                correct += sum(solver.test_nets[0].blobs['score'].data.argmax(1)
                               == solver.test_nets[0].blobs['label'].data)
            test_acc[it // test_interval] = correct / 200

    # measured here: loss 2.35 -> about 0.53, test accuracy 0.06 -> 0.83 (a linear classifier on pixels)
    assert train_loss[-10:].mean() < 0.5 * train_loss[:5].mean()
    assert test_acc[0] < 0.5
    assert test_acc[-3:].min() > 0.7
