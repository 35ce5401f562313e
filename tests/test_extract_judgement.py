"""Write-time extraction says only what was said: the rules' claims on the issue's examples,
the labelled set held to its floor (precision per kind at least 95%, rules, whole set), and
the same set scoring a configured model's extraction through the scripted model server."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from benchmarks.judgement import extract

from clew.archive.claims import claims
from tests.test_providers import FakeAPI, Reply, chat


@pytest.mark.parametrize(
    ("text", "role", "kinds"),
    [
        ("Build image: running it using the standard script", "agent", []),
        ("Using the cached wheel", "agent", []),
        ("Now using pytest -x to narrow it down", "agent", []),
        ("Let me try using ripgrep", "agent", []),
        ("I'll use `rg` instead of grep since it is faster.", "agent", []),
        ("Picked up the task from the previous session.", "agent", []),
        (
            "Decided to push to ghcr.io instead of Docker Hub because Docker Hub rate-limits pulls",
            "agent",
            ["decision"],
        ),
        ("Going with Postgres 16: production runs it.", "agent", ["decision"]),
        ("Maybe we should go with Postgres 16?", "agent", []),
        ("Never force-push to main", "user", ["user_instruction"]),
        ("Never mind, I found it.", "user", []),
        ("Never had this problem with the old version.", "user", []),
        ("The user said not to touch the billing module", "agent", ["constraint"]),
        ("This must be the cache.", "agent", []),
        ("Turns out the flake is a race in the session fixture", "agent", ["discovery"]),
        ("I suspect the flake is a race in the session fixture.", "agent", []),
        ("Found 3 matches for SESSION_TTL.", "agent", []),
        (
            "Turns out Docker Hub rate-limits pulls. Decided to push to ghcr.io instead.",
            "agent",
            ["discovery", "decision"],
        ),
    ],
)
def test_a_message_gives_only_what_it_plainly_claims(
    text: str, role: str, kinds: list[str]
) -> None:
    assert [c.kind for c in claims(text, role)] == kinds


def test_the_rules_hold_the_floor_on_the_labelled_set() -> None:
    everything = extract.cases()
    held = extract.cases("held_out")
    assert len(everything) >= 400 and len(held) >= 100
    rows = {row["kind"]: row for row in extract.score()}
    for kind in extract.KINDS:
        whole = rows[kind]
        assert whole["tp"] > 0, kind  # the kind is extracted at all
        assert whole["precision"] >= 0.95, whole
        assert rows[f"{kind}, held out"]["precision"] >= 0.95, rows[f"{kind}, held out"]


@pytest.fixture
def model(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> Iterator[FakeAPI]:
    """The scripted model server, configured as clew's utility model."""
    api = FakeAPI()
    monkeypatch.setenv("CLEW_MODEL", "tiny-local")
    monkeypatch.setenv("CLEW_MODEL_PROVIDER", "openai")
    monkeypatch.setenv("CLEW_MODEL_URL", api.url + "/v1")
    monkeypatch.setenv("CLEW_MODEL_API_KEY", "sk-test")
    for folder in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(folder, str(tmp_path))
    yield api
    api.close()


CHATTER = re.compile(r"running it using", re.I)


def test_the_same_set_scores_a_configured_model(model: FakeAPI) -> None:
    """The scripted model answers each case with its labels, except that it reads every
    "<step>: running it using ..." message as a decision: the scorer counts exactly those
    as wrong, and the model's entries (not the rules') are what it judges."""
    everything = extract.cases()

    def parts(case: dict[str, Any]) -> list[str]:
        said = [case.get(k) or "" for k in ("text", "command", "stdout", "stderr")]
        return [p.strip() for p in said if p.strip()]

    def answer(body: dict[str, Any]) -> Reply:
        prompt = body["messages"][-1]["content"]
        shown = [c for c in everything if all(p in prompt for p in parts(c))]
        case = max(shown, key=lambda c: sum(map(len, parts(c))))  # "mypy src" is twice
        items = [
            {"type": i["kind"], "summary": i.get("says") or "the failure"} for i in case["expect"]
        ]
        if case.get("text") and CHATTER.search(case["text"]):
            items.append({"type": "decision", "summary": case["text"]})
        return chat(json.dumps(items))

    model.replies = [answer] * len(everything)
    rows = {row["kind"]: row for row in extract.score(model=True)}
    invented = sum(1 for c in everything if CHATTER.search(c.get("text", "")))
    assert invented >= 10
    assert rows["decision"]["fp"] == invented
    assert rows["decision"]["recall"] == 1.0
    for kind in ("error", "discovery", "constraint"):
        assert (rows[kind]["precision"], rows[kind]["recall"]) == (1.0, 1.0), rows[kind]
    assert len(model.requests) == len(everything)


def test_scoring_a_model_when_none_is_configured_says_so(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    monkeypatch.delenv("CLEW_MODEL", raising=False)
    for folder in ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(folder, str(tmp_path))
    with pytest.raises(RuntimeError, match="no utility model is configured"):
        extract.score(model=True)
