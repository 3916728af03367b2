"""`caffe-packs`: lists the installed layer packs, their versions and the layer types each provides."""

from __future__ import annotations

import argparse
import sys

from caffe_core.registry import installed_packs


def main(argv: list[str] | None = None) -> int:
    """Prints one block per installed distribution that provides layer types."""
    parser = argparse.ArgumentParser(prog="caffe-packs", description=__doc__)
    parser.parse_args(argv)
    packs = installed_packs()
    if not packs:
        print("no layer packs installed")
        return 0
    for pack in packs:
        print(f"{pack.distribution} {pack.version} ({len(pack.layer_types)} layer types)")
        print("  " + ", ".join(pack.layer_types))
    return 0


if __name__ == "__main__":
    sys.exit(main())
