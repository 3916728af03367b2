"""`caffe_to_onnx deploy.prototxt weights.caffemodel model.onnx [--opset N] [--batch_size N]`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from caffe_core.errors import CaffeError


def build_parser() -> argparse.ArgumentParser:
    """The command line."""
    parser = argparse.ArgumentParser(prog="caffe_to_onnx",
                                     description="Write a trained Caffe net as an ONNX model.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("model", help="The deploy net definition (.prototxt)")
    parser.add_argument("weights", help="The trained weights (.caffemodel, or .h5 as Caffe writes it)")
    parser.add_argument("output", help="The ONNX file to write")
    parser.add_argument("--opset", type=int, default=None, help="The ONNX opset (default 17)")
    parser.add_argument("--batch_size", type=int, default=0,
                        help="Reshape every input to this batch size first (0 keeps the prototxt's)")
    parser.add_argument("--level", type=int, default=0, help="The net state's level")
    parser.add_argument("--stage", default="", help="Comma-separated net state stages")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Builds the TEST net, loads the weights, exports it; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        from caffe_core import onnx_export
        from caffe_core.net import Net
        from caffe_core.proto import caffe_pb2

        net = Net(args.model, phase=caffe_pb2.TEST, level=args.level,
                  stages=[s for s in args.stage.split(",") if s])
        if args.weights.endswith((".h5", ".hdf5")):
            net.copy_trained_layers_from_hdf5(args.weights)
        else:
            net.copy_trained_layers_from(args.weights)
        if args.batch_size:
            for blob in net.input_blobs:
                blob.reshape(args.batch_size, *blob.shape[1:])
            net.reshape()
        model = onnx_export.export(net, args.output, args.opset or onnx_export.DEFAULT_OPSET)
    except (CaffeError, ImportError, OSError) as err:
        print(f"caffe_to_onnx: {err}", file=sys.stderr)
        return 1
    graph = model.graph
    print(f"Wrote {args.output}: opset {model.opset_import[0].version}, {len(graph.node)} nodes, inputs "
          f"{', '.join(i.name for i in graph.input)}, outputs {', '.join(o.name for o in graph.output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
