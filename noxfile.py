"""Sessions: `python3 -m nox` runs tests, gpu_standin, lint, typecheck, schema, catalogue and docs (as CI
does); see `-l`. `mutation` (mutmut over a package, on demand) is not among them."""

import json
import os
import re
import tomllib
from pathlib import Path

import nox

nox.options.sessions = ["tests", "gpu_standin", "lint", "typecheck", "schema", "catalogue", "docs"]
nox.options.reuse_existing_virtualenvs = True

CORE = "./caffe_core"
PACKS = {"std": "./caffe_layers_std", "vision": "./caffe_layers_vision", "data": "./caffe_layers_data",
         "ssd": "./caffe_layers_ssd", "seg": "./caffe_layers_seg", "classify": "./caffe_layers_classify",
         "rcnn": "./caffe_layers_rcnn", "yolo": "./caffe_layers_yolo",
         "ocr": "./caffe_layers_ocr", "face": "./caffe_layers_face"}
TEST_PACKS = ["./tests/plugin_packs/zzz", "./tests/plugin_packs/rival", "./tests/plugin_packs/broken"]
PYTEST = ["pytest>=8"]
DOCS_TEST = ["pyyaml>=6"]  # the docs tests read mkdocs.yml's nav
RUFF = "ruff==0.17.6"
# mypy and the stub packages of the typed dependencies that ship none ([tool.mypy] in pyproject.toml).
MYPY = ["mypy==2.4.1", "types-protobuf==7.35.1.20260906", "types-tqdm==4.70.0.20261106"]
MUTMUT = "mutmut==3.8.1"
# What `nox -s mutation` mutates when given nothing: the modules of mutation/baseline.md.
MUTATION_BASELINE = ["caffe_core/src/caffe_core/net_state.py", "caffe_core/src/caffe_core/insert_splits.py",
                     "caffe_core/src/caffe_core/solvers/lr_policy.py"]
# mutmut's exit codes (mutmut.stats.status_by_exit_code) folded into the baseline's columns.
MUTANT_STATUS = {0: "survived", 1: "killed", 3: "killed", 24: "timeout", -24: "timeout", 36: "timeout",
                 152: "timeout", 255: "timeout", 33: "no tests", None: "not checked"}
# The repository holds no copy of the public models (BVLC's and other projects' prototxts): the tests about
# them read the folder this variable names, and skip without it.
PUBLIC_MODELS_VARIABLE = "CAFFE_PUBLIC_MODELS"
SHARED_MODELS = Path(__file__).resolve().parent.parent / "shared" / "models"
DOCS = ["mkdocs==1.6.1", "mkdocs-material==9.8.1", "mkdocstrings==1.0.8", "mkdocstrings-python==2.0.11",
        RUFF]  # ruff formats the API pages' signatures


def public_models_env() -> dict[str, str]:
    """Test sessions' environment: CAFFE_PUBLIC_MODELS=../shared/models when that exists, unless set."""
    if PUBLIC_MODELS_VARIABLE in os.environ or not SHARED_MODELS.is_dir():
        return {}
    return {PUBLIC_MODELS_VARIABLE: str(SHARED_MODELS)}


@nox.session
def tests(session: nox.Session) -> None:
    """Every package's tests and the cross-package tests, with all packs installed."""
    session.install(CORE + "[test,plot,progress,draw,mpi,onnx]", *PACKS.values(), *TEST_PACKS, *PYTEST,
                    *DOCS_TEST)
    session.run("pytest", "caffe_core/tests", *(f"{p[2:]}/tests" for p in PACKS.values()), "tests",
                *session.posargs, env=public_models_env())


@nox.session
def gpu_standin(session: nox.Session) -> None:
    """The whole suite again in GPU mode, on the strict cupy stand-in (the slow jobs run in `tests`)."""
    session.install(CORE + "[test,plot,progress,draw,mpi,onnx]", *PACKS.values(), *TEST_PACKS, *PYTEST,
                    *DOCS_TEST)
    session.run("pytest", "--caffe-mode=gpu", "-m", "not slow", "caffe_core/tests",
                *(f"{p[2:]}/tests" for p in PACKS.values()), "tests", *session.posargs,
                env={"CAFFE_GPU_STANDIN": "1", **public_models_env()})


@nox.session
def core(session: nox.Session) -> None:
    """The core's own tests against the core alone (plus the tiny test packs)."""
    session.install(CORE + "[test]", *TEST_PACKS, *PYTEST)
    session.run("pytest", "caffe_core/tests", *session.posargs, env=public_models_env())


def local_dependencies(pack: str) -> list[str]:
    """The repository's packs a pack depends on (pip cannot find them on an index)."""
    with open(f"{PACKS[pack]}/pyproject.toml", "rb") as f:
        requirements = tomllib.load(f)["project"]["dependencies"]
    names = {re.split(r"[<>=!~ ;\[]", r, maxsplit=1)[0] for r in requirements}
    return [path for name, path in PACKS.items() if f"caffe-layers-{name}" in names]


@nox.session
@nox.parametrize("pack", list(PACKS))
def pack(session: nox.Session, pack: str) -> None:
    """One pack's own tests against the core (and the packs it depends on); cases needing others skip."""
    session.install(CORE, *local_dependencies(pack), PACKS[pack], *PYTEST)
    session.run("pytest", f"{PACKS[pack][2:]}/tests", *session.posargs)


def mutation_targets(args: list[str]) -> tuple[str, list[str]]:
    """The package folder and mutant-name globs for `mutation`'s arguments (a package, or its modules)."""
    folders = {"core": CORE[2:], **{name: path[2:] for name, path in PACKS.items()}}
    if len(args) == 1 and args[0] in folders:
        return folders[args[0]], []
    packages = {Path(arg).parts[0] for arg in args}
    if len(packages) != 1 or not packages <= set(folders.values()):
        raise ValueError(f"give one of {', '.join(folders)}, or .py files of one package's src/, not {args}")
    globs = []
    for arg in args:
        module = ".".join(Path(arg).relative_to(Path(arg).parts[0], "src").with_suffix("").parts)
        module = module.removesuffix(".__init__")
        # a module's functions are <module>.x_<name>, its methods <module>.xǁ<class>ǁ<name>
        globs += [f"{module}.x_*", f"{module}.xǁ*"]
    return packages.pop(), globs


def mutation_counts(folder: str, only: set[str] | None = None) -> dict[str, dict[str, int]]:
    """Per mutated module, how many of its mutants (of `only`, when given) mutmut has left in each state."""
    counts: dict[str, dict[str, int]] = {}
    for meta in sorted(Path(folder, "mutants").rglob("*.py.meta")):
        codes = [code for name, code in json.loads(meta.read_text())["exit_code_by_key"].items()
                 if only is None or name in only]
        if any(code is not None for code in codes):
            module = str(meta.relative_to(Path(folder, "mutants")).with_suffix(""))
            states = counts.setdefault(module, {})
            for code in codes:
                state = MUTANT_STATUS.get(code, "suspicious")
                states[state] = states.get(state, 0) + 1
    return counts


def option_value(session: nox.Session, args: list[str], option: str) -> str | None:
    """Takes `option N` out of args and gives N (a whole number), or None when the option is absent."""
    if option not in args:
        return None
    at = args.index(option)
    value, args[at:at + 2] = args[at + 1:at + 2], []
    if not value or not value[0].isdigit():
        session.error(f"{option} takes a whole number")
    return value[0]


@nox.session
def mutation(session: nox.Session) -> None:
    """mutmut with the fast tests over `-- core`, `-- <pack>` or `-- <package>/src/<module>.py ...`;
    `--sample N [--seed S]` runs a seeded uniform sample of N of those mutants (seed 1701 unless given)."""
    args = list(session.posargs)
    sample, seed = option_value(session, args, "--sample"), option_value(session, args, "--seed") or "1701"
    try:
        folder, globs = mutation_targets(args or MUTATION_BASELINE)
    except ValueError as e:
        session.error(str(e))
    session.install(CORE + "[test,onnx]", *TEST_PACKS, *PACKS.values(), *PYTEST, MUTMUT)
    session.chdir(folder)
    sampled = None
    if sample:
        names = Path("mutants", "sample.txt")
        session.run("python", "../mutation/sample.py", sample, seed, str(names), *globs)
        globs = names.read_text().split()
        sampled = set(globs)
    session.run("mutmut", "run", *globs)
    if not sample:
        session.run("mutmut", "results")
    total: dict[str, int] = {}
    for module, states in mutation_counts(".", sampled).items():
        session.log(f"{module}: " + ", ".join(f"{n} {state}" for state, n in sorted(states.items())))
        for state, n in states.items():
            total[state] = total.get(state, 0) + n
    what = f"the sample of {sample} (seed {seed})" if sample else "all mutants"
    session.log(f"{folder}, {what}: " + ", ".join(f"{n} {state}" for state, n in sorted(total.items())))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the whole repository."""
    session.install(RUFF)
    session.run("ruff", "check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy over every package's source, with the dependencies the packages import installed."""
    session.install(CORE + "[test,plot,progress,draw,mpi,onnx]", *PACKS.values(), *MYPY)
    session.run("mypy")


@nox.session
def schema(session: nox.Session) -> None:
    """Fails when the committed caffe_pb2 module is stale against proto/caffe.proto."""
    session.install("grpcio-tools==1.85.1", "protobuf>=7.35.1,<8")
    session.run("python", "proto/generate.py", "--check")


@nox.session
def catalogue(session: nox.Session) -> None:
    """Fails when docs/layer_catalogue.md or the core's pack index is stale against the repository's packs."""
    session.install(CORE, *PACKS.values())
    session.run("caffe-packs", "docs", "--check", "docs/layer_catalogue.md")
    session.run("caffe-packs", "index", "--check", "caffe_core/src/caffe_core/pack_index.json")


@nox.session
def docs(session: nox.Session) -> None:
    """Builds the documentation site into site/ with MkDocs; --strict fails on a broken link or reference."""
    session.install(CORE, *PACKS.values(), *DOCS)
    session.run("mkdocs", "build", "--strict", "--site-dir", "site", *session.posargs,
                env={"NO_MKDOCS_2_WARNING": "1"})


@nox.session
def main(session: nox.Session) -> None:
    """The main job: trains LeNet on the bundled MNIST digits, as Caffe's tutorial does."""
    session.install(CORE, *PACKS.values())
    session.run("python", "examples/mnist/train_lenet.py", *session.posargs)
