"""CONTRIBUTING.md's checklists stay true where a test can hold them: every file it names
exists, every registry reaches each place the page says it must, the next free migration
number is the next one on both backends, and the benchmarks pages name every benchmark and
link into the log's sections that exist.

What no test can hold (which fields of an event are content a user may forget, when an old
event shape needs an upgrade) the page says is a judgement, and names the test to add."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from clew.models import EVENT_TYPES
from clew.store import contract, migrations, projection
from clew.store.postgres import migrations as pg_migrations
from clew.store.sqlite.store import SQLiteStore
from clew.tools import registry as tools

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
# A backticked path on the page: under one of the repository's folders, or a root file.
PATH = re.compile(r"`((?:src|tests|docs|benchmarks|tools|\.ci)/[^`\s]+|[A-Za-z_.]+\.(?:md|toml))`")
# A backticked module named alone or by its package (`memory.py`, `tasks/tracker.py`): it
# lives somewhere in the tree.
MODULE = re.compile(r"`((?:\w+/)*\w+\.py)`")


def test_every_file_the_page_names_exists() -> None:
    named = {m.split("::")[0] for m in PATH.findall(PAGE)}
    assert len(named) > 40  # the pattern still finds the page's paths
    missing = sorted(
        p
        for p in named
        if "<" not in p  # a placeholder: `benchmarks/bench_<subject>.py`
        and not (any(ROOT.glob(p)) if "*" in p else (ROOT / p).exists())
    )
    assert not missing, f"CONTRIBUTING.md names files that do not exist: {missing}"
    files = [p.as_posix() for d in ("src", "tests", "benchmarks") for p in (ROOT / d).rglob("*.py")]
    alone = set(MODULE.findall(PAGE)) - named
    assert len(alone) > 10
    unknown = sorted(m for m in alone if not any(f.endswith("/" + m) for f in files))
    assert not unknown, "CONTRIBUTING.md names modules that do not exist"


def test_the_readme_sends_contributors_to_the_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "CONTRIBUTING.md" in readme and "docs/benchmarks.md" in readme


# -- an event type -----------------------------------------------------------------------------


def test_every_event_type_is_projected_and_has_its_free_text_named() -> None:
    import clew.store.sqlite.store  # noqa: F401  (registers every handler)
    from clew.privacy.free_text import TEXT_FIELDS

    assert set(projection._HANDLERS) == EVENT_TYPES
    assert set(TEXT_FIELDS) == EVENT_TYPES


def test_every_event_type_is_emitted_by_a_module_of_the_library() -> None:
    """Step 2: each type is written by the facade's code, not only registered (the models,
    the free-text and forgetting tables and the store's projections only name it)."""
    registries = {"models/journal.py", "privacy/free_text.py", "journal/forgettable.py"}
    package = ROOT / "src" / "clew"
    sources = [
        p.read_text(encoding="utf-8")
        for p in package.rglob("*.py")
        if p.relative_to(package).as_posix() not in registries
        and "store" not in p.relative_to(package).parts
    ]
    silent = sorted(t for t in EVENT_TYPES if not any(f'"{t}"' in s for s in sources))
    assert not silent, f"event types no module emits: {silent}"


def test_the_architecture_lists_exactly_the_event_types() -> None:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    listed = text.split("\nEvent types: ", 1)[1].split(" Handlers that insert rows", 1)[0]
    assert set(re.findall(r"`([a-z_]+\.[a-z_]+)`", listed)) == EVENT_TYPES


# -- a tool ------------------------------------------------------------------------------------


def test_every_tool_has_its_row_in_the_agents_page_and_no_row_is_stale() -> None:
    text = (DOCS / "agents.md").read_text(encoding="utf-8")
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", text, re.M))
    assert rows == set(tools.TOOLS)


# -- a backend method --------------------------------------------------------------------------


def _contract_methods() -> list[str]:
    return [
        name
        for name in dir(contract.Store)
        if not name.startswith("_") and callable(getattr(contract.Store, name))
    ]


def test_both_backends_provide_every_method_of_the_contract() -> None:
    pytest.importorskip("psycopg")
    from clew.store.postgres.store import PostgresStore

    for name in _contract_methods():
        assert callable(getattr(SQLiteStore, name, None)), f"SQLiteStore lacks {name}"
        assert callable(getattr(PostgresStore, name, None)), f"PostgresStore lacks {name}"


# -- a migration -------------------------------------------------------------------------------


def test_the_next_free_migration_is_the_next_one_on_both_backends() -> None:
    found = re.search(r"The next free number is \*\*(\d+)\*\*", PAGE)
    assert found is not None
    number = int(found.group(1))
    assert number == migrations.LATEST + 1 == pg_migrations.LATEST + 1
    # The page's steps name the number, and the one before it for the undo chain.
    assert f"undo_migration_{number}" in PAGE and f"undo_migration_{number - 1}" in PAGE
    assert f"Migration({number}," in PAGE


def test_the_newest_migration_can_be_undone_in_tests() -> None:
    from tests import old_stores

    assert callable(getattr(old_stores, f"undo_migration_{migrations.LATEST}", None))


# -- a benchmark -------------------------------------------------------------------------------


def _slug(heading: str) -> str:
    """The anchor a markdown heading gets (GitHub's rule: lower case, punctuation dropped,
    spaces to hyphens)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", page.read_text(encoding="utf-8"), re.M):
        slug = _slug(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        found.add(f"{slug}-{n}" if n else slug)
    return found


def test_every_benchmark_script_has_its_row_on_the_page() -> None:
    """A script with no round logged yet still has its row (saying so); its figures, once
    measured, go to the log and the row links to them (the test below)."""
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        assert script.name in page, f"docs/benchmarks.md has no row for {script.name}"


def test_every_command_on_the_benchmarks_page_names_a_script_that_exists() -> None:
    page = (DOCS / "benchmarks.md").read_text(encoding="utf-8")
    scripts = set(re.findall(r"python (benchmarks/[\w/]+\.py)", page))
    assert len(scripts) > 30
    assert not sorted(s for s in scripts if not (ROOT / s).exists())


def test_every_link_into_the_benchmarks_log_finds_its_section() -> None:
    anchors = _anchors(DOCS / "benchmarks-log.md")
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted(DOCS.rglob("*.md"))]
    for page in pages:
        for anchor in re.findall(r"benchmarks-log\.md#([\w-]+)", page.read_text("utf-8")):
            assert anchor in anchors, f"{page.name} links to a missing section: #{anchor}"
