"""Peak memory of building a deploy net and one TEST forward at batch 32, with and without the memory planner.

Each measurement runs in its own process (peak resident set size, as `time_vs_caffe.sh` measures it). With
`--caffe DIR` (a reference BVLC Caffe built by ../shared/tools/build_reference_caffe.sh) the same net runs
in Caffe's pycaffe too and the ratios ours/Caffe are printed. The nets are public ones, read from the folder
CAFFE_PUBLIC_MODELS names (../shared/models).

    CAFFE_PUBLIC_MODELS=../shared/models .venv/bin/python benchmarks/bench_memory.py [--batch 32] \
        [--caffe /path/to/caffe]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

from caffe_core.testing.public_models import PublicModelsError, find_public_model

NETS = {
    "GoogLeNet": "bvlc/models/bvlc_googlenet/deploy.prototxt",
    "ResNet-50": "external/resnet50_deploy.prototxt",
}
PEAK = """
import resource, sys, caffe
caffe.set_mode_cpu()
kwargs = {{"optimize_memory": True}} if {planner} else {{}}
net = caffe.Net(sys.argv[1], caffe.TEST, **kwargs)
net.forward()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


def at_batch(path: pathlib.Path, batch: int, folder: str) -> str:
    """A copy of the deploy file whose first input dimension is `batch`."""
    text = re.sub(r"(input_dim:\s*|dim:\s*)\d+", lambda m: m.group(1) + str(batch), path.read_text(), count=1)
    copy = pathlib.Path(folder) / path.name.replace(".prototxt", f"_b{batch}.prototxt")
    copy.write_text(text)
    return str(copy)


def peak_mb(python: str, model: str, planner: bool, env: dict[str, str] | None = None) -> int:
    """The peak resident MB of one process that builds the net and runs one forward."""
    done = subprocess.run([python, "-c", PEAK.format(planner=planner), model], capture_output=True, text=True,
                          env=env, cwd=tempfile.gettempdir(), check=False)
    if done.returncode:
        raise SystemExit(f"measuring {model} failed:\n{done.stderr[-2000:]}")
    return int(done.stdout.split()[-1])


def main() -> None:
    """Measures every net and prints one line each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--caffe", help="a reference Caffe build directory (its python/ is used)")
    args = parser.parse_args()
    try:
        nets = {name: find_public_model(relative) for name, relative in NETS.items()}
    except PublicModelsError as err:
        raise SystemExit(f"bench_memory: {err}") from None
    with tempfile.TemporaryDirectory() as folder:
        for name, path in nets.items():
            model = at_batch(path, args.batch, folder)
            plain, planned = peak_mb(sys.executable, model, False), peak_mb(sys.executable, model, True)
            line = f"{name:10s} batch {args.batch}: ours {plain:6d} MB, with optimize_memory {planned:6d} MB"
            if args.caffe:
                env = {**os.environ, "GLOG_minloglevel": "2",
                       "PYTHONPATH": os.path.join(args.caffe, "python")}
                caffe = peak_mb("/usr/bin/python3", model, False, env)
                line += (f"; Caffe {caffe:6d} MB; ratios {plain / caffe:.2f} plain, {planned / caffe:.2f} "
                         f"with optimize_memory")
            print(line, flush=True)


if __name__ == "__main__":
    main()
