"""The search judgement set (benchmarks/judgement/search.py) held to its floor: a sample of
every kind, keyword search (the core install). The full set: `python
benchmarks/judgement/search.py`."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCORER = Path(__file__).resolve().parents[1] / "benchmarks" / "judgement" / "search.py"
FLOOR = {"current_first": 0.85, "identifier": 0.9, "kind_coverage": 0.8, "label": 0.9}


def test_search_judgement_sample_holds_the_floor() -> None:
    spec = importlib.util.spec_from_file_location("search_judgement", SCORER)
    assert spec is not None and spec.loader is not None
    scorer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scorer)
    for kind, floor in FLOOR.items():
        sample = [c for c in scorer.cases() if c["kind"] == kind][::4]
        judged = [scorer.judge(c) for c in sample]
        first = sum(1 for right, _ in judged if right) / len(judged)
        five = sum(1 for _, near in judged if near) / len(judged)
        assert first >= floor, (kind, first)
        assert five >= 0.95, (kind, five)
