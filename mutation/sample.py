"""Generates a package's mutants with mutmut and prints a seeded uniform sample of their names, one a line.

Run from the package folder inside the `mutation` session's environment (mutmut 3.8.1, whose generation steps
this calls in the order `mutmut run` does): `python ../mutation/sample.py N SEED OUTPUT [GLOB ...]`. The same
source and seed give the same sample; after killing one sample's survivors, a new seed gives a fair estimate.
"""

import fnmatch
import json
import random
import sys
from os import makedirs
from pathlib import Path

from mutmut.__main__ import create_mutants, store_lines_covered_by_tests
from mutmut.mutation.trampoline import set_mutant_under_test
from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths


def generated_names() -> list[str]:
    """Every mutant of the package, generated afresh into mutants/ as `mutmut run` would."""
    set_mutant_under_test("mutant_generation")
    makedirs(Path("mutants"), exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    store_lines_covered_by_tests()
    create_mutants(2)
    names = []
    for meta in sorted(Path("mutants").rglob("*.py.meta")):
        names += json.loads(meta.read_text())["exit_code_by_key"]
    return sorted(names)


def main(argv: list[str]) -> None:
    """Writes the sample to OUTPUT, a name a line, and says how many it was drawn from."""
    size, seed, output, globs = int(argv[0]), int(argv[1]), Path(argv[2]), argv[3:]
    names = [n for n in generated_names() if not globs or any(fnmatch.fnmatch(n, g) for g in globs)]
    chosen = sorted(random.Random(seed).sample(names, min(size, len(names))))
    output.write_text("".join(f"{name}\n" for name in chosen))
    print(f"sampled {len(chosen)} of {len(names)} mutants (seed {seed}) into {output}")


if __name__ == "__main__":
    main(sys.argv[1:])
