"""Draws a NetParameter as a graph (pydot/Graphviz): layers as boxes, blobs as octagons.

Needs the optional `draw` extra (pydot). Rendering images (png, svg, pdf, ...) also needs Graphviz's
`dot` program; `.dot` and `.raw` files are the graph's source text and need only pydot.
"""

from __future__ import annotations

import os
import shutil

from caffe.proto import caffe_pb2

try:
    import pydot
except ImportError as err:  # pragma: no cover - depends on the installed extras
    raise ImportError("caffe.draw needs pydot: pip install 'caffe-core[draw]'") from err

LAYER_STYLE_DEFAULT = {"shape": "record", "fillcolor": "#6495ED", "style": "filled"}
NEURON_LAYER_STYLE = {"shape": "record", "fillcolor": "#90EE90", "style": "filled"}
BLOB_STYLE = {"shape": "octagon", "fillcolor": "#E0E0E0", "style": "filled"}
SOURCE_FORMATS = ("dot", "raw")
LEARNING_LAYER_TYPES = ("Convolution", "Deconvolution", "InnerProduct")


def get_pooling_types_dict() -> dict[int, str]:
    """Pooling method number -> name (0 MAX, 1 AVE, 2 STOCHASTIC)."""
    methods = caffe_pb2.PoolingParameter.PoolMethod.DESCRIPTOR.values_by_name
    return {value.number: name for name, value in methods.items()}


def get_edge_label(layer: caffe_pb2.LayerParameter) -> str:
    """The label of a layer's output edges: batch size of Data, num_output of conv and inner product."""
    if layer.type == "Data":
        return "Batch " + str(layer.data_param.batch_size)
    if layer.type in ("Convolution", "Deconvolution"):
        return str(layer.convolution_param.num_output)
    if layer.type == "InnerProduct":
        return str(layer.inner_product_param.num_output)
    return '""'


def get_layer_lr_mult(layer: caffe_pb2.LayerParameter) -> tuple[float, float]:
    """The (weights, bias) lr_mult of a Convolution, Deconvolution or InnerProduct layer (1.0 unset)."""
    if layer.type not in LEARNING_LAYER_TYPES:
        raise ValueError(f"{layer.type} layers do not have a learning rate multiplier")
    specs = layer.param
    if len(specs) > 2:
        raise ValueError(f"Could not parse the learning rate multiplier of layer '{layer.name}' "
                         f"({len(specs)} param specs)")
    mults = [spec.lr_mult for spec in specs] + [1.0] * (2 - len(specs))
    return mults[0], mults[1]


def get_layer_label(layer: caffe_pb2.LayerParameter, rankdir: str, display_lrm: bool = False) -> str:
    """A layer node's quoted label: name, (type), spatial parameters and optionally lr mults."""
    separator = " " if rankdir in ("TB", "BT") else r"\n"
    descriptors = [layer.name]
    if layer.type == "Pooling":
        descriptors.append(f"({layer.type} {get_pooling_types_dict()[layer.pooling_param.pool]})")
    else:
        descriptors.append(f"({layer.type})")
    if layer.type in ("Convolution", "Deconvolution", "Pooling"):
        if layer.type == "Pooling":
            pooling = layer.pooling_param
            kernel_size, stride, pad = pooling.kernel_size, pooling.stride, pooling.pad
        else:
            conv = layer.convolution_param
            kernel_size = conv.kernel_size[0] if len(conv.kernel_size) else 1
            stride = conv.stride[0] if len(conv.stride) else 1
            pad = conv.pad[0] if len(conv.pad) else 0
        spatial = [f"kernel size: {kernel_size}", f"stride: {stride}", f"pad: {pad}"]
        descriptors.append(separator.join(spatial))
    if display_lrm and layer.type in LEARNING_LAYER_TYPES:
        lrm0, lrm1 = get_layer_lr_mult(layer)
        if lrm0 or lrm1:
            descriptors.append(f"lr mult: {lrm0:.1f}, {lrm1:.1f}")
    return '"' + separator.join(descriptors) + '"'


def choose_color_by_layertype(layertype: str) -> str:
    """A layer node's fill colour by type."""
    if layertype in ("Convolution", "Deconvolution"):
        return "#FF5050"
    if layertype == "Pooling":
        return "#FF9900"
    if layertype == "InnerProduct":
        return "#CC33FF"
    return "#6495ED"


def _in_phase(layer: caffe_pb2.LayerParameter, phase: caffe_pb2.Phase | None) -> bool:
    """pycaffe's draw filter: include/exclude rules compared by phase alone."""
    if phase is None:
        return True
    if layer.include and layer.exclude:
        raise ValueError(f"layer {layer.name} has both include and exclude specified.")
    included = not layer.include
    for rule in layer.include:
        included = included or rule.phase == phase
    for rule in layer.exclude:
        included = included and rule.phase != phase
    return included


def get_pydot_graph(caffe_net: caffe_pb2.NetParameter, rankdir: str, label_edges: bool = True,
                    phase: caffe_pb2.Phase | None = None, display_lrm: bool = False) -> pydot.Dot:
    """The net as a pydot digraph (layers of other phases left out when phase is given)."""
    graph = pydot.Dot(caffe_net.name or "Net", graph_type="digraph", rankdir=rankdir)
    nodes: dict[str, pydot.Node] = {}
    edges: list[tuple[str, str, str]] = []
    for layer in caffe_net.layer:
        if not _in_phase(layer, phase):
            continue
        node_name = f"{layer.name}_{layer.type}"
        label = get_layer_label(layer, rankdir, display_lrm=display_lrm)
        if len(layer.bottom) == 1 and len(layer.top) == 1 and layer.bottom[0] == layer.top[0]:
            # obj_dict named, so that the checker does not take a style entry for it
            nodes[node_name] = pydot.Node(label, obj_dict=None, **NEURON_LAYER_STYLE)
        else:
            style = dict(LAYER_STYLE_DEFAULT, fillcolor=choose_color_by_layertype(layer.type))
            nodes[node_name] = pydot.Node(label, obj_dict=None, **style)
        for bottom in layer.bottom:
            nodes[bottom + "_blob"] = pydot.Node(bottom, obj_dict=None, **BLOB_STYLE)
            edges.append((bottom + "_blob", node_name, '""'))
        for top in layer.top:
            nodes[top + "_blob"] = pydot.Node(top)
            edges.append((node_name, top + "_blob", get_edge_label(layer) if label_edges else '""'))
    for node in nodes.values():
        graph.add_node(node)
    for source, destination, label in edges:
        graph.add_edge(pydot.Edge(nodes[source], nodes[destination], label=label))
    return graph


def draw_net(caffe_net: caffe_pb2.NetParameter, rankdir: str, ext: str = "png",
             phase: caffe_pb2.Phase | None = None, display_lrm: bool = False) -> bytes:
    """The drawing as bytes in format ext ('dot'/'raw' give the graph source; others need Graphviz)."""
    graph = get_pydot_graph(caffe_net, rankdir, phase=phase, display_lrm=display_lrm)
    if ext in SOURCE_FORMATS:
        return graph.to_string().encode("utf-8")
    if shutil.which("dot") is None:
        raise RuntimeError(f"drawing a .{ext} image needs Graphviz's `dot` program, which is not on PATH; "
                           f"install Graphviz, or draw to a .dot file")
    return graph.create(format=ext)  # type: ignore[return-value]  # pydot says str; it returns dot's bytes


def draw_net_to_file(caffe_net: caffe_pb2.NetParameter, filename: str | os.PathLike, rankdir: str = "LR",
                     phase: caffe_pb2.Phase | None = None, display_lrm: bool = False) -> None:
    """Draws the net into a file whose extension names the format (.png, .svg, .dot, .raw, ...)."""
    filename = os.fspath(filename)
    ext = filename[filename.rfind(".") + 1:]
    data = draw_net(caffe_net, rankdir, ext, phase, display_lrm)
    with open(filename, "wb") as fid:
        fid.write(data)
