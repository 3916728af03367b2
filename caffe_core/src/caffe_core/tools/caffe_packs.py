"""`caffe-packs`: the layer packs installed, and the kit for writing one.

    caffe-packs [list]                  each pack's version, layer types (with variants), blocks and fields
    caffe-packs check                   validates every installed pack: one line per problem, exit 1 if any
    caffe-packs docs [-o FILE]          the layer catalogue (Markdown); --check FILE fails when FILE is stale
    caffe-packs index [-o FILE]         the index of published packs (JSON); --check FILE as for docs
    caffe-packs new NAME --layer TYPE   writes a complete pack in the folder NAME
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import importlib_metadata

from caffe_core.errors import CaffeError
from caffe_core.registry import PackInfo, installed_packs
from caffe_core.schema_extensions import installed_additions

# Only published packs go into the index: the test suite's own packs are named otherwise.
PUBLISHED_PREFIX = "caffe-layers-"
_KINDS = ("layer_types", "param_blocks", "fields")


def list_packs() -> int:
    """Prints one block per installed distribution that provides layer types, blocks or fields."""
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


def check_packs() -> int:
    """Prints every problem of the installed packs (exit 1), or a one-line summary (exit 0)."""
    from caffe_core.pack_check import installed_pack_problems

    problems = installed_pack_problems()
    for problem in problems:
        print(problem)
    if problems:
        return 1
    packs = installed_packs()
    types = sum(len(pack.layer_types) for pack in packs)
    additions = len(installed_additions())
    print(f"no problem: {len(packs)} packs, {types} layer types, {additions} blocks and fields")
    return 0


def write_docs(output: str | None, check: str | None) -> int:
    """Writes the catalogue to a file or stdout; with --check, fails when the file differs from it."""
    from caffe_core.catalogue import catalogue_markdown

    return _write_or_check(catalogue_markdown(), output, check, "docs")


def _write_or_check(text: str, output: str | None, check: str | None, command: str) -> int:
    if check is not None:
        path = Path(check)
        if not path.exists() or path.read_text() != text:
            print(f"{check} is stale: regenerate it with caffe-packs {command} -o {check}")
            return 1
        print(f"{check} is fresh")
        return 0
    if output is None:
        sys.stdout.write(text)
    else:
        Path(output).write_text(text)
    return 0


def installed_index() -> dict[str, dict[str, list[str]]]:
    """The index the installed published packs make: per distribution, its types, blocks and fields."""
    index: dict[str, dict[str, list[str]]] = {}
    for pack in installed_packs():
        if pack.distribution.startswith(PUBLISHED_PREFIX):
            index.setdefault(pack.distribution, {kind: [] for kind in _KINDS})["layer_types"] = \
                list(pack.layer_types)
    for addition in installed_additions():
        if addition.distribution.startswith(PUBLISHED_PREFIX):
            entry = index.setdefault(addition.distribution, {kind: [] for kind in _KINDS})
            entry["param_blocks" if addition.kind == "block" else "fields"].append(addition.key)
    return {dist: {kind: sorted(names) for kind, names in entry.items()}
            for dist, entry in sorted(index.items())}


def index_text(index: dict[str, dict[str, list[str]]]) -> str:
    """The index as the JSON text `pack_index.json` holds."""
    return json.dumps(index, indent=1, sort_keys=True) + "\n"


def write_index(output: str | None, check: str | None) -> int:
    """Writes the index of the installed published packs; with --check, fails when the file differs."""
    return _write_or_check(index_text(installed_index()), output, check, "index")


def new_pack(name: str, layer_type: str, number: int | None) -> int:
    """Writes the pack and says what to do next."""
    from caffe_core.tools.new_pack import create_pack

    root = create_pack(name, layer_type, number=number)
    print(f"created {root}/ with the {layer_type} layer; next:\n"
          f"  pip install ./{name}\n  caffe-packs          # lists {layer_type}\n"
          f"  cd {name} && pytest\n  caffe-packs check")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The command line: one subcommand, list when none is given."""
    parser = argparse.ArgumentParser(prog="caffe-packs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("list", help="the installed packs, their layer types, blocks and fields")
    commands.add_parser("check", help="validate every installed pack")
    docs = commands.add_parser("docs", help="the layer catalogue of the installed packs, as Markdown")
    docs.add_argument("-o", "--output", help="write it to this file (default: stdout)")
    docs.add_argument("--check", metavar="FILE", help="fail when FILE differs from the catalogue")
    index = commands.add_parser("index", help="the index of published packs (types, blocks, fields) as JSON")
    index.add_argument("-o", "--output", help="write it to this file (default: stdout)")
    index.add_argument("--check", metavar="FILE", help="fail when FILE differs from the index")
    new = commands.add_parser("new", help="write a complete layer pack in the folder NAME")
    new.add_argument("name", help="the pack's folder and distribution name, e.g. caffe-layers-zzz")
    new.add_argument("--layer", required=True, help="the layer type of its example layer, e.g. ZZZ")
    new.add_argument("--number", type=int, help="its block's LayerParameter field number (default: derived "
                                                "from the block's name, clear of the installed packs)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs one caffe-packs command (list when none is given)."""
    args = build_parser().parse_args(argv)
    try:
        if args.command == "check":
            return check_packs()
        if args.command == "docs":
            return write_docs(args.output, args.check)
        if args.command == "index":
            return write_index(args.output, args.check)
        if args.command == "new":
            return new_pack(args.name, args.layer, args.number)
        return list_packs()
    except CaffeError as err:
        print(f"caffe-packs: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
