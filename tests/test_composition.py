"""Composition over inheritance (issue 26 points 1 and 2): no class in src/clew has more than
one base besides a Protocol (or Generic), a framework's base, or the builtin exception an
error class also is. What still inherits several of our own classes is listed below with
those bases; the list may only shrink. A class not on it that gains a second base fails
here, and a listed base that has gone (or a class down to one) must leave the list."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "clew"

# Bases that are not ours to compose away: typing's, and the frameworks we plug into.
TYPING = frozenset({"Protocol", "Generic"})
FRAMEWORK = frozenset({"BaseSessionService", "BaseMemoryService"})
BUILTIN_ERRORS = frozenset(
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
)
# Still built from several of our own classes: nothing since the stores were composed
# (2026-11-28: each holds its parts and takes store/parts.py's table of forwards as its one
# base). A class that gains a second base of ours fails test_nothing_new_...
LEFT: dict[str, set[str]] = {}


def _name(base: ast.expr) -> str:
    """`Generic[T]` and `typing.Protocol` count by their last name."""
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return ast.unparse(base)


def _own_bases(node: ast.ClassDef) -> set[str]:
    """The bases that count: ours, less any framework or builtin-exception one."""
    names = {_name(base) for base in node.bases}
    if "Protocol" in names:
        return set()  # a protocol's bases are protocols too (Python insists)
    names -= TYPING | FRAMEWORK
    if "ClewError" in names:
        names -= BUILTIN_ERRORS
    return names


def _several() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(SOURCE.rglob("*.py")):
        name = str(path.relative_to(SOURCE))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = _own_bases(node)
                if len(bases) > 1 or f"{name}:{node.name}" in LEFT:
                    found[f"{name}:{node.name}"] = bases
    return found


SEVERAL = _several()


def test_nothing_new_inherits_several_of_our_classes() -> None:
    new = {name: bases for name, bases in SEVERAL.items() if name not in LEFT}
    assert new == {}, "compose these: hold the parts as attributes, not as base classes"


def test_no_listed_class_gains_a_base() -> None:
    gained = {
        name: SEVERAL[name] - LEFT[name] for name in LEFT if SEVERAL.get(name, set()) - LEFT[name]
    }
    assert gained == {}, "a class on the list gained a base: compose it instead"


def test_the_list_of_what_is_left_only_shrinks() -> None:
    gone = {
        name: sorted(bases - SEVERAL.get(name, set()))
        for name, bases in LEFT.items()
        if bases - SEVERAL.get(name, set())
    }
    assert gone == {}, "these bases are gone: take them off the list"
    down = sorted(
        name for name in LEFT if len(SEVERAL.get(name, set())) <= 1 and len(LEFT[name]) > 1
    )
    assert down == [], "these classes are down to one base: take them off the list"
