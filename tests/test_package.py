"""clew as a package: `python -m build` makes an sdist and, from it, a wheel that holds every
data file; the wheel installs into a fresh environment and runs there with no source tree;
the install hint it prints names the wheel, and running that hint installs the extra. The
version is one number, and CHANGELOG.md's newest release names it.

The wheel is built once per run (some 7 s of CPU: setuptools in two isolated environments,
fetched from the package index) and installed once; the tests that use it stay on one xdist
worker. CLEW_SKIP_PACKAGE=1 skips them where no package index is reachable.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

import clew

ROOT = Path(__file__).resolve().parents[1]
# What a build from the sdist needs beside the modules, and what the wheel must hold.
DATA = (
    "py.typed",
    "prompts/ask.toml",
    "prompts/guidance.md",
    "models_data/manifest.json",
    "models_data/minilm-static-256.rows.npy",
    "models_data/tokenizer.json",
    "models_data/minilm-onnx-int8/model.onnx",
    "words_data/related.tsv",
    "server/static/live.js",
)
# The tests that build or install: on one xdist worker, which builds the wheel once.
BUILDS = pytest.mark.xdist_group("package")
SKIPPED = pytest.mark.skipif(
    os.environ.get("CLEW_SKIP_PACKAGE") == "1", reason="CLEW_SKIP_PACKAGE=1: no package index"
)


def _run(*command: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def _clean_env(home: Path, path: str | None = None) -> dict[str, str]:
    """The environment of a machine without this checkout: no PYTHONPATH, no clew settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "CLEW_"))}
    env.update(HOME=str(home), PYTHONDONTWRITEBYTECODE="1")
    env.pop("VIRTUAL_ENV", None)
    if path is not None:
        env["PATH"] = path
    return env


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel built from it, as `python -m build` makes them."""
    pytest.importorskip("build", reason="the dev extra's `build` is not installed")
    work = tmp_path_factory.mktemp("package")
    tree = work / "tree"  # a copy: a build writes build/ and *.egg-info into its tree
    tree.mkdir()
    for name in ("pyproject.toml", "README.md", "MANIFEST.in", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(
        ROOT / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    out = work / "dist"
    built = _run(sys.executable, "-m", "build", "--outdir", out, tree, cwd=work, env={**os.environ})
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


@pytest.fixture(scope="session")
def wheel(dist: Path) -> Path:
    (found,) = dist.glob("clew-*.whl")
    return found


@pytest.fixture(scope="session")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh environment with the wheel installed, as on a second machine."""
    root = tmp_path_factory.mktemp("venv")
    made = _run(sys.executable, "-m", "venv", root / "venv", cwd=root, env=_clean_env(root))
    assert made.returncode == 0, made.stderr
    venv = root / "venv"
    pip = _run(venv / "bin" / "python", "-m", "pip", "install", "-q", wheel, cwd=root,
               env=_clean_env(root))  # fmt: skip
    assert pip.returncode == 0, pip.stderr[-3000:]
    return venv


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder with no clew source above it: where a user of the wheel runs it."""
    return tmp_path


def test_the_version_is_one_number_and_the_changelog_names_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "clew.__version__"}
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.findall(r"^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$", changelog, re.M)
    assert releases and releases[0] == clew.__version__
    assert "## [Unreleased]" in changelog.split(f"## [{releases[0]}]")[0]


@BUILDS
@SKIPPED
def test_the_sdist_and_the_wheel_hold_every_data_file(dist: Path, wheel: Path) -> None:
    (sdist,) = dist.glob("clew-*.tar.gz")
    version = clew.__version__
    assert wheel.name == f"clew-{version}-py3-none-any.whl"
    with tarfile.open(sdist) as tar:
        names = set(tar.getnames())
    top = f"clew-{version}"
    assert {f"{top}/pyproject.toml", f"{top}/README.md", f"{top}/CHANGELOG.md"} <= names
    assert not [n for n in names if n.startswith(f"{top}/tests/")]  # a suite without its data
    assert not [d for d in DATA if f"{top}/src/clew/{d}" not in names]
    with zipfile.ZipFile(wheel) as archive:
        held = set(archive.namelist())
        meta = archive.read(f"clew-{version}.dist-info/METADATA").decode()
        entry = archive.read(f"clew-{version}.dist-info/entry_points.txt").decode()
    assert not [d for d in DATA if f"clew/{d}" not in held]
    assert "clew/core/installation.py" in held and not [n for n in held if "__pycache__" in n]
    assert f"\nVersion: {version}\n" in meta and "clew = clew.cli:main" in entry
    assert "Provides-Extra: serve" in meta and "Provides-Extra: postgres" in meta


@BUILDS
@SKIPPED
def test_the_wheel_runs_without_the_source_tree(venv: Path, elsewhere: Path) -> None:
    env = _clean_env(elsewhere)
    clew_bin = venv / "bin" / "clew"
    version = _run(clew_bin, "--version", cwd=elsewhere, env=env)
    assert version.stdout.strip() == f"clew {clew.__version__}"
    where = _run(venv / "bin" / "python", "-c", "import clew; print(clew.__file__)",
                 cwd=elsewhere, env=env)  # fmt: skip
    assert Path(where.stdout.strip()).is_relative_to(venv) and ROOT.as_posix() not in where.stdout
    demo = _run(clew_bin, "demo", cwd=elsewhere, env=env)
    assert demo.returncode == 0, demo.stderr
    assert "chained unbroken" in demo.stdout


@BUILDS
@SKIPPED
def test_a_hint_the_wheel_prints_names_the_wheel_and_installs_the_extra(
    venv: Path, wheel: Path, elsewhere: Path
) -> None:
    # The environment is active, as a user's is: its own pip is the first on PATH.
    env = _clean_env(elsewhere, f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    clew_bin = venv / "bin" / "clew"
    for command, extra in ((["serve"], "serve"), (["mcp"], "mcp")):
        refused = _run(clew_bin, *command, cwd=elsewhere, env=env)
        assert refused.returncode == 2
        assert refused.stderr.endswith(f": pip install '{wheel}[{extra}]'\n"), refused.stderr
    # The lightest extra, installed for real by the command clew printed: psycopg's two wheels.
    store = "postgresql://nobody@127.0.0.1:9/none"
    refused = _run(clew_bin, "--db", store, "where", cwd=elsewhere, env=env)
    assert refused.returncode == 2
    hint = refused.stderr.strip().rsplit("psycopg-pool: ", 1)[1]
    assert hint == f"pip install '{wheel}[postgres]'"
    done = _run(*shlex.split(hint), "-q", cwd=elsewhere, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    check = _run(venv / "bin" / "python", "-c", "import psycopg, psycopg_pool", cwd=elsewhere,
                 env=env)  # fmt: skip
    assert check.returncode == 0, check.stderr
    after = _run(clew_bin, "--db", store, "where", cwd=elsewhere, env=env)
    assert "psycopg-pool:" not in after.stderr  # now it tries the server itself


def test_the_docs_give_install_commands_that_work() -> None:
    # clew is on no index: `pip install 'clew[x]'` fails. A checkout's command or a wheel's.
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").rglob("*.md"))]
    bad = [
        f"{page.relative_to(ROOT)}: {line.strip()}"
        for page in pages
        if page.name != "benchmarks-log.md"  # a log of past measurements, kept as it was
        for line in page.read_text(encoding="utf-8").splitlines()
        if re.search(r"pip install ['\"]?clew\b", line)
    ]
    assert not bad, "install commands that need a package index:\n" + "\n".join(bad)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "python -m build" in readme and "pipx install" in readme
    # The wheel the docs name is the one a build makes today.
    named = {v for p in pages for v in re.findall(r"clew-(\d[\w.]*)-py3", p.read_text("utf-8"))}
    assert named == {clew.__version__}


def test_every_extra_installed_together_loads_in_any_order() -> None:
    # onnxruntime (vectors-onnx) crashed a process that had loaded usearch (ann) first.
    import importlib.util

    if not (importlib.util.find_spec("usearch") and importlib.util.find_spec("onnxruntime")):
        pytest.skip("the ann and vectors-onnx extras are not both installed")
    code = (
        "from clew.search import ann, embedding; assert ann.available();"
        " print(embedding.load('minilm-onnx-int8').embed(['a question']).shape)"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert done.returncode == 0 and done.stdout.split() == ["(1,", "384)"], done.stderr
