"""Scoring search over long multi-session conversations: each conversation written into its
own clew store through the public API (a session per sitting, at its date; each turn with
its speaker), each question asked of `Memory.search_all`, and the turns it returns scored
against the turns labelled as its evidence.

The LoCoMo harness (locomo.py) and the held-out set (heldout.py) are two readers of this:
each turns its data into `Conversation`s.
"""

from __future__ import annotations

import hashlib
import json
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.retrieval.build import Clock, locked, open_store, quiet

TOP = 10
CACHE = Path(__file__).resolve().parent / ".cache" / "conversations"
# Bumped when what is written for a conversation changes, so cached stores are rebuilt.
WRITER = "1"
TURN_GAP = timedelta(seconds=30)  # between the turns of one sitting


@dataclass(frozen=True)
class Said:
    """One turn: its label in the set (LoCoMo's dia_id), who said it, and what."""

    ref: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Sitting:
    """One session of a conversation, at its date."""

    at: datetime
    turns: tuple[Said, ...]


@dataclass(frozen=True)
class Asked:
    """One question, its category and the refs of the turns that are its evidence."""

    question: str
    category: str
    evidence: tuple[str, ...]
    at: datetime | None = None  # when it is asked (default: the conversation's asked_at)


@dataclass(frozen=True)
class Conversation:
    name: str
    speakers: tuple[str, ...]
    sittings: tuple[Sitting, ...]
    questions: tuple[Asked, ...]
    asked_at: datetime | None = None  # default: a day after the last sitting
    roles: dict[str, str] = field(default_factory=dict)  # speaker -> role (default user)

    def digest(self) -> str:
        h = hashlib.sha256(f"{WRITER}:{self.name}".encode())
        for s in self.sittings:
            h.update(s.at.isoformat().encode())
            for t in s.turns:
                h.update(f"\0{t.ref}\0{t.speaker}\0{t.text}".encode())
        h.update(json.dumps(self.roles, sort_keys=True).encode())
        return h.hexdigest()[:16]


def write(conversation: Conversation, path: Path) -> dict[str, str]:
    """Write a conversation into a new store at `path`: one session per sitting, started
    and spoken at its date (the store's clock set to it), each turn with its speaker's name.
    Returns each turn's ref -> clew turn id."""
    clock = Clock(conversation.sittings[0].at)
    refs: dict[str, str] = {}
    mem = open_store(path, clock)
    try:
        with quiet():
            for n, sitting in enumerate(conversation.sittings, 1):
                clock.now = sitting.at
                session = mem.start_session(title=f"{conversation.name} session {n}").id
                for i, said in enumerate(sitting.turns):
                    clock.now = sitting.at + i * TURN_GAP
                    role = conversation.roles.get(said.speaker, "user")
                    turn = mem.append_turn(
                        session, {"role": role, "name": said.speaker, "content": said.text}
                    )
                    refs[said.ref] = turn.id
    finally:
        mem.close()
    return refs


def stored(conversation: Conversation, cache: Path = CACHE) -> tuple[Path, dict[str, str]]:
    """The conversation's store, written once and cached by a hash of its content."""
    folder = cache / f"{conversation.name}-{conversation.digest()}"
    store, refs_file = folder / "store.db", folder / "refs.json"
    # Two runs at once write it once: unlocked, both appended every turn to one file.
    with locked(folder):
        if not (store.exists() and refs_file.exists()):
            folder.mkdir(parents=True, exist_ok=True)
            for old in folder.glob("store.db*"):
                old.unlink()
            refs_file.write_text(json.dumps(write(conversation, store)))
    return store, json.loads(refs_file.read_text())


def ask(mem: Any, question: str, mode: str) -> tuple[list[tuple[str, str]], bool]:
    """The (kind, id) of the first TOP hits, and whether the first is marked confident."""
    from clew.errors import ValidationError

    try:
        hits = mem.search_all(question, mode=mode, limit=TOP)
    except ValidationError:  # nothing to look for in the question
        return [], False
    return [(h.kind, h.id) for h in hits], bool(hits and hits[0].confident)


def run(
    conversations: Iterable[Conversation],
    modes: Sequence[str],
    progress: Callable[[str], None] | None = None,
    cache: Path = CACHE,
) -> list[dict[str, Any]]:
    """Every question of every conversation asked in each mode: one row per question and
    mode (conversation, category, mode, ranks of evidence in the top TOP, confident)."""
    rows: list[dict[str, Any]] = []
    for conv in conversations:
        store, refs = stored(conv, cache)
        at = conv.asked_at or (conv.sittings[-1].at + timedelta(days=1))
        clock = Clock(at)
        mem = open_store(store, clock)
        try:
            if any(m != "keyword" for m in modes):
                _embed(mem)
            for q in conv.questions:
                wanted = {("turn", refs[r]) for r in q.evidence if r in refs}
                if not wanted:
                    continue  # evidence the conversation does not hold
                clock.now = q.at or at
                for mode in modes:
                    with quiet():
                        keys, sure = ask(mem, q.question, mode)
                    ranks = [n for n, k in enumerate(keys, 1) if k in wanted]
                    rows.append({"conversation": conv.name, "category": q.category,
                                 "mode": mode, "question": q.question, "ranks": ranks,
                                 "confident": sure})  # fmt: skip
        finally:
            mem.close()
        if progress is not None:
            progress(f"{conv.name}: {len(conv.questions)} questions")
    return rows


def _embed(mem: Any) -> None:
    from clew.errors import VectorsUnavailable

    try:
        if mem.index_status().pending:
            mem.update_index()
    except VectorsUnavailable:
        pass


def score(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """hit@5, hit@10, MRR (first evidence in the top TOP), and of the top hits marked
    confident, how often (fires) and how often rightly (precision)."""
    if not rows:
        return {"n": 0}
    out: dict[str, float] = {"n": len(rows)}
    for k in (1, 5, 10):
        out[f"hit@{k}"] = statistics.fmean(bool(r["ranks"]) and r["ranks"][0] <= k for r in rows)
    out["mrr"] = statistics.fmean(1 / r["ranks"][0] if r["ranks"] else 0.0 for r in rows)
    sure = [r for r in rows if r["confident"]]
    out["fires"] = len(sure) / len(rows)
    out["precision"] = (
        statistics.fmean(bool(r["ranks"]) and r["ranks"][0] == 1 for r in sure) if sure else 0.0
    )
    return out


def table(rows: Sequence[dict[str, Any]], categories: Sequence[str]) -> list[dict[str, Any]]:
    """One line per mode and category (and `all`), the scores in percent."""
    lines = []
    for mode in dict.fromkeys(r["mode"] for r in rows):
        mine = [r for r in rows if r["mode"] == mode]
        for category in (*categories, "all"):
            chosen = mine if category == "all" else [r for r in mine if r["category"] == category]
            if not chosen:
                continue
            s = score(chosen)
            lines.append({"mode": mode, "category": category, **s})
    return lines


def printed(lines: Sequence[dict[str, Any]]) -> str:
    head = f"{'mode':<8} {'category':<13} {'n':>5} {'hit@1':>6} {'hit@5':>6} {'hit@10':>6}" \
           f" {'MRR':>6} {'conf%':>6} {'conf-prec':>9}"  # fmt: skip
    out = [head]
    for x in lines:
        out.append(
            f"{x['mode']:<8} {x['category']:<13} {x['n']:>5} {100 * x['hit@1']:>6.1f}"
            f" {100 * x['hit@5']:>6.1f} {100 * x['hit@10']:>6.1f} {100 * x['mrr']:>6.1f}"
            f" {100 * x['fires']:>6.1f} {100 * x['precision']:>9.1f}"
        )
    return "\n".join(out)
