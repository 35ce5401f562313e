"""The errors judgement set (benchmarks/judgement/errors.py) held to issue 25's floor: clew
resolves an error itself only when it may (precision 1.0 on at least 200 histories), and
shows a passing run as evidence where the agent must judge."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent


def scorer() -> ModuleType:
    path = ROOT / "benchmarks" / "judgement" / "errors.py"
    spec = importlib.util.spec_from_file_location("judgement_errors", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["judgement_errors"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, float]]:
    return {r["kind"]: r for r in scorer().score()}


def test_the_set_has_the_histories_the_issue_names() -> None:
    cases = scorer().cases()
    assert len(cases) >= 200
    families = {c["family"] for c in cases}
    assert {"neighbouring shard", "partition", "version", "selector", "temp path"} <= families
    variants = " ".join(c["variant"] for c in cases)
    for said in ("agent's error", "keeps clew's copy open", "kept open", "fixed", "another task"):
        assert said in variants
    assert any(c["split"] == "held_out" for c in cases)


def test_auto_resolution_is_always_right(rows: dict[str, dict[str, float]]) -> None:
    for kind in ("auto_resolve", "auto_resolve (held-out)"):
        assert rows[kind]["fp"] == 0 and rows[kind]["precision"] == 1.0
        assert rows[kind]["recall"] >= 0.95


def test_evidence_is_added_where_the_agent_must_judge(rows: dict[str, dict[str, float]]) -> None:
    for kind in ("evidence", "evidence (held-out)"):
        assert rows[kind]["precision"] == 1.0
        assert rows[kind]["recall"] >= 0.95


def test_the_set_file_is_what_its_generator_writes() -> None:
    import json

    path = ROOT / "benchmarks" / "judgement" / "errors_cases.py"
    spec = importlib.util.spec_from_file_location("judgement_errors_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["judgement_errors_cases"] = module
    spec.loader.exec_module(module)
    written = (ROOT / "benchmarks" / "judgement" / "data" / "errors.jsonl").read_text()
    assert [json.loads(line) for line in written.splitlines()] == module.build()
