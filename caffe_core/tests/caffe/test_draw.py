"""caffe.draw: graph structure, labels, phase filtering; images need Graphviz."""

import shutil

import pytest

from caffe.proto import caffe_pb2
from caffe_core import proto_io

pydot = pytest.importorskip("pydot", reason="caffe.draw needs the optional 'draw' extra (pydot)")
from caffe import draw  # noqa: E402

NET = """
name: "tiny"
layer { name: "data" type: "Data" top: "data" top: "label" data_param { batch_size: 64 }
        include { phase: TRAIN } }
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
        param { lr_mult: 1 } param { lr_mult: 2 }
        convolution_param { num_output: 20 kernel_size: 5 stride: 2 pad: 1 } }
layer { name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
        pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
layer { name: "ip" type: "InnerProduct" bottom: "pool1" top: "ip" inner_product_param { num_output: 10 } }
layer { name: "acc" type: "Accuracy" bottom: "ip" bottom: "label" top: "acc" exclude { phase: TRAIN } }
"""

needs_dot = pytest.mark.skipif(shutil.which("dot") is None,
                               reason="rendering images needs Graphviz's `dot` program (not installed)")


@pytest.fixture
def net():
    return proto_io.parse_text(NET, caffe_pb2.NetParameter())


def _edges(graph):
    return {(e.get_source(), e.get_destination(), e.get("label")) for e in graph.get_edges()}


def test_graph_has_layer_and_blob_nodes_and_labelled_edges(net):
    graph = draw.get_pydot_graph(net, "LR")
    assert graph.get_name() == "tiny" and graph.get("rankdir") == "LR"
    names = {node.get_name() for node in graph.get_nodes()}
    assert r'"conv1\n(Convolution)\nkernel size: 5\nstride: 2\npad: 1"' in names
    assert r'"pool1\n(Pooling AVE)\nkernel size: 3\nstride: 2\npad: 0"' in names
    assert {"data", "label", "conv1", "pool1", "ip", "acc"} <= names
    edges = _edges(graph)
    assert ('"data\\n(Data)"', "data", "Batch 64") in edges
    assert ("data", r'"conv1\n(Convolution)\nkernel size: 5\nstride: 2\npad: 1"', '""') in edges
    assert (r'"ip\n(InnerProduct)"', "ip", "10") in edges
    assert (r'"relu1\n(ReLU)"', "conv1", '""') in edges


def test_node_styles_follow_layer_type(net):
    nodes = {node.get_name(): node for node in draw.get_pydot_graph(net, "TB").get_nodes()}
    assert nodes['"relu1 (ReLU)"'].get("fillcolor") == "#90EE90"
    assert nodes['"conv1 (Convolution) kernel size: 5 stride: 2 pad: 1"'].get("fillcolor") == "#FF5050"
    assert nodes['"ip (InnerProduct)"'].get("fillcolor") == "#CC33FF"
    assert nodes["label"].get("shape") == "octagon"


def test_phase_filter_and_unlabelled_edges(net):
    train = draw.get_pydot_graph(net, "LR", phase=caffe_pb2.TRAIN)
    assert r'"acc\n(Accuracy)"' not in {n.get_name() for n in train.get_nodes()}
    test = draw.get_pydot_graph(net, "LR", label_edges=False, phase=caffe_pb2.TEST)
    names = {n.get_name() for n in test.get_nodes()}
    assert '"data\\n(Data)"' not in names and r'"acc\n(Accuracy)"' in names
    assert all(label == '""' for _, _, label in _edges(test))
    both = caffe_pb2.NetParameter()
    both.layer.add(name="x", type="ReLU").include.add(phase=caffe_pb2.TRAIN)
    both.layer[0].exclude.add(phase=caffe_pb2.TEST)
    with pytest.raises(ValueError, match="layer x has both include and exclude"):
        draw.get_pydot_graph(both, "LR", phase=caffe_pb2.TEST)


def test_learning_rate_multipliers(net):
    assert draw.get_layer_lr_mult(net.layer[1]) == (1.0, 2.0)
    assert draw.get_layer_lr_mult(net.layer[4]) == (1.0, 1.0)
    assert draw.get_layer_label(net.layer[1], "TB", display_lrm=True) == \
        '"conv1 (Convolution) kernel size: 5 stride: 2 pad: 1 lr mult: 1.0, 2.0"'
    with pytest.raises(ValueError, match="ReLU layers do not have a learning rate multiplier"):
        draw.get_layer_lr_mult(net.layer[2])


def test_dot_source_needs_no_graphviz(net, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    path = tmp_path / "net.dot"
    draw.draw_net_to_file(net, path, "BT")
    text = path.read_text()
    assert text.startswith("digraph tiny {") and "rankdir=BT" in text
    with pytest.raises(RuntimeError, match=r"\.png image needs Graphviz's `dot` program"):
        draw.draw_net(net, "LR", ext="png")


@needs_dot
def test_png_rendering(net, tmp_path):
    path = tmp_path / "net.png"
    draw.draw_net_to_file(net, path, "LR", phase=caffe_pb2.TEST, display_lrm=True)
    assert path.read_bytes().startswith(b"\x89PNG")


def test_layers_included_in_the_phase_are_drawn(net):
    train = draw.get_pydot_graph(net, "LR", phase=caffe_pb2.TRAIN)
    assert '"data\\n(Data)"' in {n.get_name() for n in train.get_nodes()}


def test_deconvolution_and_convolution_edges_show_num_output():
    for layer_type in ("Convolution", "Deconvolution"):
        layer = caffe_pb2.LayerParameter(name="c", type=layer_type)
        layer.convolution_param.num_output = 7
        assert draw.get_edge_label(layer) == "7"
