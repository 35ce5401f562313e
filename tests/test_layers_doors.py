"""The doors rule (docs/architecture.md, "Doors"): only the store and the facade reach the
store's connection and the facade's write transaction. Every other module (the CLI, the
servers, the integrations, the pure modules) goes through public calls: `Memory`'s methods,
`Memory.atomic()` for several calls in one transaction, `Memory.graph_checkpoints` for
LangGraph's checkpoints."""

from __future__ import annotations

import ast
from pathlib import Path

import clew
from clew.kernel import Service

SOURCE = Path(clew.__file__).parent
# What only the store and the facade may touch: the store itself, its connection, and the
# facade's write transaction.
PRIVATE = frozenset({"_store", "_connection", "_write"})


def _services(cls: type) -> list[type]:
    return [cls, *(s for sub in cls.__subclasses__() for s in _services(sub))]


# The facade: the modules that define Memory's own classes (its bases, until they become
# services), and the services composed into it, handed the kernel as an argument.
FACADE = frozenset(
    SOURCE.joinpath(*cls.__module__.split(".")[1:]).with_suffix(".py")
    for cls in (*clew.Memory.__mro__, *_services(Service))
    if cls.__module__.startswith("clew.")
)


def _allowed(path: Path) -> bool:
    return SOURCE / "store" in path.parents or path in FACADE


def _reaches(path: Path, root: Path = SOURCE.parent) -> list[str]:
    """Where a module touches what only the store and the facade may, as file:line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    nodes = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in PRIVATE]
    nodes.sort(key=lambda n: (n.lineno, n.col_offset))
    return [f"{path.relative_to(root)}:{n.lineno}: .{n.attr}" for n in nodes]


def test_the_facade_is_found() -> None:
    assert SOURCE / "kernel.py" in FACADE and SOURCE / "memory.py" in FACADE
    assert all(path.is_file() for path in FACADE)


def test_no_module_outside_the_store_and_the_facade_reaches_past_them() -> None:
    found = [
        line
        for path in sorted(SOURCE.rglob("*.py"))
        if not _allowed(path)
        for line in _reaches(path)
    ]
    assert not found, (
        "these reach past the facade to the store's connection or the facade's write"
        " transaction; use a public call (Memory.atomic() for several calls in one"
        " transaction, Memory.graph_checkpoints for LangGraph's checkpoints) or add one:\n"
        + "\n".join(found)
    )


def test_the_rule_sees_an_attribute_and_nothing_else(tmp_path: Path) -> None:
    module = tmp_path / "door.py"
    module.write_text(
        "# memory._store in a comment\n"
        "text = 'memory._write() in a string'\n"
        "def f(memory):\n"
        "    return memory._store.transaction(), memory._written\n",
        encoding="utf-8",
    )
    assert _reaches(module, tmp_path) == ["door.py:4: ._store"]
