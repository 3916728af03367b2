"""Generates caffe_core's Python schema module from proto/caffe.proto, or checks it is fresh.

usage: python proto/generate.py [--check]
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET = ROOT / "caffe_core" / "src" / "caffe_core" / "proto"
MODULE = "caffe_core.proto.caffe_pb2"


def generate(out_dir: pathlib.Path) -> None:
    """Runs protoc (from grpcio-tools) and writes caffe_pb2.py/.pyi into out_dir."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "grpc_tools.protoc", f"-I{ROOT}",
             f"--python_out={tmp}", f"--pyi_out={tmp}", "proto/caffe.proto"],
            check=True, cwd=ROOT,
        )
        for name in ("caffe_pb2.py", "caffe_pb2.pyi"):
            text = (pathlib.Path(tmp) / "proto" / name).read_text()
            # protoc names the module after the include path; the package lives elsewhere.
            text = text.replace("'proto.caffe_pb2'", f"'{MODULE}'")
            (out_dir / name).write_text(text)


def main() -> int:
    """Regenerates the module, or with --check fails when the committed one is stale."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.check:
        generate(TARGET)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(pathlib.Path(tmp))
        stale = [n for n in ("caffe_pb2.py", "caffe_pb2.pyi")
                 if (pathlib.Path(tmp) / n).read_text() != (TARGET / n).read_text()]
    if stale:
        print(f"stale generated schema: {', '.join(stale)}; run python proto/generate.py")
        return 1
    print("generated schema is fresh")
    return 0


if __name__ == "__main__":
    sys.exit(main())
