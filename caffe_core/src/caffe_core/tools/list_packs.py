"""`caffe-packs`: lists the installed layer packs, their versions, the layer types each provides (with
their variants) and what each adds to Caffe's schema (parameter blocks and fields, with their numbers)."""

from __future__ import annotations

import argparse
import sys

import importlib_metadata

from caffe_core.params import installed_additions
from caffe_core.registry import PackInfo, installed_packs


def main(argv: list[str] | None = None) -> int:
    """Prints one block per installed distribution that provides layer types."""
    parser = argparse.ArgumentParser(prog="caffe-packs", description=__doc__)
    parser.parse_args(argv)
    additions = installed_additions()
    packs = installed_packs()
    listed = {pack.distribution for pack in packs}
    packs += [PackInfo(dist, importlib_metadata.version(dist), ())
              for dist in sorted({a.distribution for a in additions} - listed)]
    if not packs:
        print("no layer packs installed")
        return 0
    for pack in packs:
        print(f"{pack.distribution} {pack.version} ({len(pack.layer_types)} layer types)")
        print("  " + ", ".join(f"{name} [{', '.join(pack.variants[name])}]" if name in pack.variants else name
                               for name in pack.layer_types))
        for kind, title in (("block", "parameter blocks"), ("field", "fields"), ("alias", "aliases")):
            own = [a for a in additions if a.distribution == pack.distribution and a.kind == kind]
            if own:
                print(f"  {title}: " + ", ".join(a.key if a.number is None else f"{a.key} ({a.number})"
                                                 for a in own))
    return 0


if __name__ == "__main__":
    sys.exit(main())
