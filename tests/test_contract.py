"""The backend contract is written down: every method says its semantics, and nothing of
SQLite or SQL crosses it. That each backend keeps it: test_store_conformance.py."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from clew.store import contract
from clew.store.conformance import PROTOCOLS

# Every protocol of the contract: the bases of `Store`, so a new protocol is checked too.
_PROTOCOLS = PROTOCOLS


def _methods(protocol: type) -> dict[str, object]:
    return {
        name: value
        for name, value in vars(protocol).items()
        if callable(value) and not name.startswith("_")
    }


def test_every_method_of_the_contract_says_what_it_does() -> None:
    seen: set[str] = set()
    for protocol in _PROTOCOLS:
        assert inspect.getdoc(protocol)
        for name, method in _methods(protocol).items():
            assert inspect.getdoc(method), f"{protocol.__name__}.{name} has no docstring"
            assert name not in seen, f"{name} is in two protocols"
            seen.add(name)
    union = {
        n
        for n in dir(contract.Store)
        if not n.startswith("_") and callable(getattr(contract.Store, n))
    }
    assert union == seen


def test_no_sql_dialect_or_driver_crosses_the_contract() -> None:
    for path in sorted(Path(contract.__file__).parent.glob("*.py")):  # each subject's module
        text = path.read_text(encoding="utf-8")
        code = re.sub(r'"""[\s\S]*?"""', "", text)  # docstrings may name backends
        assert "sqlite3" not in code and "Connection" not in code, path.name
        for word in ("MATCH", "fts5", "rowid", "SELECT", "LIMIT"):
            assert word not in code, (path.name, word)
