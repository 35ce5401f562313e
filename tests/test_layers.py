"""The layers docs/architecture.md draws are the ones import-linter enforces.

`[tool.importlinter]` in pyproject.toml holds the contracts (`lint-imports` in .ci/run checks
the code against them); the page's picture of the layers is made from the `layers` contract
here, so the two cannot drift: a change to either fails this test, which prints the picture
the contract makes. Every exception a contract allows (`ignore_imports`) is named on the page.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "architecture.md"
BEGIN = "<!-- layers: made from [tool.importlinter] in pyproject.toml (tests/test_layers.py) -->"
END = "<!-- /layers -->"
WIDTH = 100  # the page's lines
LABEL = 10  # the column of a group's name


def contracts() -> list[dict[str, Any]]:
    """The import-linter contracts, as pyproject.toml declares them."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = config["tool"]["importlinter"]["contracts"]
    return found


def layers() -> list[str]:
    """The layers contract's layers, top to bottom."""
    (contract,) = [c for c in contracts() if c["type"] == "layers"]
    return list(contract["layers"])


def groups(names: list[str]) -> list[str]:
    """The group each layer belongs to (shown once, on the group's first layer): the doors
    down to Memory, the facade, the subject packages, the kernel with its settings, then the
    base: the store and what every part shares."""
    firsts = {0: "doors", names.index("memory"): "facade", names.index("memory") + 1: "subjects"}
    firsts |= {names.index("kernel"): "kernel", names.index("settings") + 1: "base"}
    return [firsts.get(i, "") for i in range(len(names))]


def picture() -> str:
    """The layers drawn as the page shows them: one layer a line (a long one wrapped), `|`
    between modules that may not import each other, `:` between those that may."""
    names = layers()
    lines = []
    for group, layer in zip(groups(names), names, strict=True):
        parts = layer.split(" : ")
        line = f"{group:<{LABEL}}{parts[0]}"
        for part in parts[1:]:
            if len(line) + len(part) + 3 > WIDTH:
                lines.append(line + " :")
                line = " " * (LABEL + 2) + part
            else:
                line += " : " + part
        lines.append(line)
    return "\n".join(lines)


def drawn() -> str:
    """The picture on the page, between its markers."""
    text = PAGE.read_text(encoding="utf-8")
    found = re.search(re.escape(BEGIN) + r"\n```text\n(.*?)\n```\n" + re.escape(END), text, re.S)
    assert found, f"docs/architecture.md has no layers picture between {BEGIN} and {END}"
    return found.group(1)


def test_the_architecture_page_draws_the_enforced_layers() -> None:
    assert drawn() == picture(), "docs/architecture.md's layers should read:\n" + picture()


def test_every_module_of_clew_is_in_a_layer() -> None:
    """lint-imports checks it too (`exhaustive`); here it fails with the names."""
    package = ROOT / "src" / "clew"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.parent.name for p in package.glob("*/__init__.py")}
    placed = {m.strip() for layer in layers() for m in re.split(r"[|:]", layer)}
    assert modules - placed == set(), "modules in no layer of [tool.importlinter]"
    assert placed - modules == set(), "layers naming no module of clew"


def test_every_exception_to_a_contract_is_on_the_page() -> None:
    text = PAGE.read_text(encoding="utf-8")
    for contract in contracts():
        for allowed in contract.get("ignore_imports", []):
            assert f"`{allowed}`" in text, f"docs/architecture.md does not explain {allowed}"


# Migration 10 replays the journal into a scratch store the migrations set up (see the page's
# "acyclic" contract): the one cycle of imports that runs.
MIGRATION_10 = {
    ("clew.store.migrations", "clew.store.sqlite.backfill"),
    ("clew.store.sqlite.backfill", "clew.store.sqlite.file"),
    ("clew.store.sqlite.file", "clew.store.migrations"),
}


def test_no_module_imports_one_that_imports_it_back() -> None:
    """Any two modules, a package and its own modules included (which the acyclic contract,
    between siblings, does not compare): imports inside functions count, annotations under
    TYPE_CHECKING do not."""
    grimp = pytest.importorskip("grimp")
    graph = grimp.build_graph("clew", cache_dir=None, exclude_type_checking_imports=True)
    cyclic = {
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if graph.chain_exists(importer=imported, imported=importer)
    }
    assert cyclic == MIGRATION_10


def _modules(layer_names: list[str]) -> set[str]:
    return {f"clew.{m.strip()}" for layer in layer_names for m in re.split(r"[|:]", layer)}


def test_every_module_of_a_subject_is_a_service_or_a_pure_helper() -> None:
    """`pure-no-store` lists the pure helpers, and forbids them the store, the kernel and the
    services it names: every module of a subject package is on one list, never on both, so a
    new module is placed as soon as it exists."""
    names = layers()
    rule = {c.get("id"): c for c in contracts()}["pure-no-store"]
    pure = set(rule["source_modules"])
    services = set(rule["forbidden_modules"]) - {"clew.store", "clew.kernel", "clew.memory"}
    package = ROOT / "src" / "clew"
    subjects = _modules(names[names.index("memory") + 1 : names.index("kernel")])
    found = {
        f"{subject}.{path.stem}"
        for subject in subjects
        for path in (package / subject.removeprefix("clew.")).glob("*.py")
        if path.stem != "__init__"
    }
    assert pure & services == set(), "a module both pure and a service"
    assert found - pure - services == set(), "modules on neither list of pure-no-store"
    assert services - found == set(), "services that are no module of a subject package"
    # a service is what is handed the kernel: it imports it, and no pure helper does
    for module in services:
        text = (package / (module.removeprefix("clew.").replace(".", "/") + ".py")).read_text()
        assert "clew.kernel" in text or module in KERNEL_FREE_SERVICES, module


# Services that do not name the kernel themselves: the vector index's cache, the outline's
# store-side search and the worker, which are handed what they use by a service that does.
KERNEL_FREE_SERVICES = {"clew.search.ann", "clew.archive.outline", "clew.jobs.worker"}


def test_the_door_rule_names_every_door() -> None:
    """`doors-no-store` lists the doors: every layer above the facade."""
    names = layers()
    rule = {c.get("id"): c for c in contracts()}["doors-no-store"]
    assert set(rule["source_modules"]) == _modules(names[: names.index("memory")])
