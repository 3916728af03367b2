"""`draw_net input_net_proto_file output_image_file [--rankdir LR] [--phase ALL] [--display_lrm]`.

Old-format nets (V0/V1 `layers`) are upgraded first, so they are drawn rather than left empty.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from caffe_core.errors import CaffeError
from caffe_core.net_files import read_net_param
from caffe_core.proto import caffe_pb2

PHASES = {"ALL": None, "TRAIN": caffe_pb2.TRAIN, "TEST": caffe_pb2.TEST}


def build_parser() -> argparse.ArgumentParser:
    """The command line, as Caffe's python/draw_net.py reads it."""
    parser = argparse.ArgumentParser(prog="draw_net", description="Draw a network graph.",
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("input_net_proto_file", help="Input network prototxt file")
    parser.add_argument("output_image_file",
                        help="Output image file (.png, .svg, ...; .dot writes the graph source, "
                             "which needs no Graphviz)")
    parser.add_argument("--rankdir", default="LR",
                        help="One of TB (top-bottom, i.e., vertical), LR (left-right, i.e., "
                             "horizontal), BT, RL")
    parser.add_argument("--phase", default="ALL",
                        help="Which network phase to draw: can be TRAIN, TEST, or ALL. If ALL, then all "
                             "layers are drawn regardless of phase.")
    parser.add_argument("--display_lrm", action="store_true",
                        help="Use this flag to visualize the learning rate multiplier, when non-zero, for "
                             "the learning layers (Convolution, Deconvolution, InnerProduct).")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Draws the net; returns the exit code."""
    args = build_parser().parse_args(argv)
    if args.phase not in PHASES:
        print(f"draw_net: Unknown phase: {args.phase} (expected ALL, TRAIN or TEST)", file=sys.stderr)
        return 2
    try:
        from caffe import draw

        net = read_net_param(args.input_net_proto_file)
        print(f"Drawing net to {args.output_image_file}")
        draw.draw_net_to_file(net, args.output_image_file, args.rankdir, PHASES[args.phase], args.display_lrm)
    except (CaffeError, ImportError, RuntimeError, OSError) as err:
        print(f"draw_net: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
