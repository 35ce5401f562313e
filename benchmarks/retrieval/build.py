"""Write the labelled set through clew's public API into a fresh SQLite store, and map its
record keys to clew's (kind, id); pad a store to a size with the design's conversation
workload; copy every record's text into the floor's own FTS5 table.

Writes are back-dated with the store's clock (`clew.open(clock=...)`), in time order, so
every record, turn and session carries the time the set gives it. Extraction jobs,
maintenance, stuck alerts and progress inference are off while writing, so that what is
stored is exactly the set (no derived entries that copy a labelled record's text).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from benchmarks.retrieval.corpus import Book, Record

import clew

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
_QUIET = {"CLEW_WORKER": "off", "CLEW_MAINTENANCE": "0", "CLEW_STUCK": "0",
          "CLEW_PROGRESS": "off", "CLEW_MIRROR": "0"}  # fmt: skip


# The harnesses and the conversation sets: not the 303-question set's data.
_NOT_DATA = (
    "run.py",
    "build.py",
    "words.py",
    "variants.py",
    "dense.py",
    "__init__.py",
    "conversations.py",
    "locomo.py",
    "heldout.py",
    "heldout_data.py",
)


class Clock:
    """A clock the builder (and the harness, for a question's `asked_at`) sets."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@contextmanager
def quiet() -> Iterator[None]:
    """No background work and no maintenance while the set is written or searched."""
    saved = {k: os.environ.get(k) for k in _QUIET}
    os.environ.update(_QUIET)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def generator_hash(size: int) -> str:
    """What the cached store depends on: the sources of the set's data and the size."""
    digest = hashlib.sha256(f"size={size}".encode())
    for name in sorted(p.name for p in HERE.glob("*.py") if p.name not in _NOT_DATA):
        digest.update((HERE / name).read_bytes())
    return digest.hexdigest()[:16]


def open_store(path: Path, clock: Clock) -> clew.Memory:
    with quiet():
        return clew.open(path, clock=clock, mirror=False)


def write(book: Book, path: Path) -> dict[str, dict[str, Any]]:
    """Write a book into a new store at `path`; return its keys' clew references
    ({kind, id, session_id, turn})."""
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC))
    first: dict[str, datetime] = {}
    for r in book.records:
        first[r.owner] = min(first.get(r.owner, r.at), r.at)
    events: list[tuple[datetime, int, int, Any]] = []
    for n, c in enumerate(book.containers):
        start = min(c.at, first.get(c.key, c.at))
        # A session for a task starts after its task.
        if c.kind == "session" and c.args.get("task"):
            start = max(start, next(t.at for t in book.containers if t.key == c.args["task"]))
        events.append((start, 0, n, c))
    for n, r in enumerate(book.records):
        events.append((r.at, 1, n, r))
    events.sort(key=lambda e: (e[0], e[1], e[2]))
    ids: dict[str, str] = {}
    refs: dict[str, dict[str, Any]] = {}
    mem = open_store(path, clock)
    try:
        with quiet():
            for moment, _, _, item in events:
                clock.now = moment
                if isinstance(item, Record):
                    refs[item.key] = _record(mem, item, ids)
                elif item.kind == "task":
                    a = item.args
                    ids[item.key] = mem.create_task(a["name"], a["plan"], goal=a["goal"]).id
                else:
                    task = item.args.get("task")
                    ids[item.key] = mem.start_session(
                        title=item.args["title"], task_id=ids[task] if task else None
                    ).id
    finally:
        mem.close()
    return refs


def _record(mem: clew.Memory, r: Record, ids: dict[str, str]) -> dict[str, Any]:
    a = r.args
    owner = ids[r.owner]
    if r.kind == "message":
        made = mem.add_message(owner, a["content"], role=a["role"])
        return {"kind": "message", "id": made.id}
    if r.kind == "entry":
        entry = mem.add_entry(a["type"], a["summary"], task_id=owner, detail=a["detail"],
                              tags=a["tags"], resolution=a["resolution"],
                              command=a["command"])  # fmt: skip
        return {"kind": "entry", "id": entry.id}
    if r.kind == "action":
        action = mem.record_action(owner, command=a["command"], exit_code=a["exit_code"],
                                   stdout=a["stdout"] or None, stderr=a["stderr"] or None,
                                   cwd=a["cwd"])  # fmt: skip
        return {"kind": "action", "id": action.id}
    if r.kind == "decision":
        decision = mem.trace_decision(owner, a["action"], outcome=a["outcome"], error=a["error"],
                                      agent=a["agent"])  # fmt: skip
        return {"kind": "decision", "id": decision.id}
    turn = mem.append_turn(owner, dict(a))
    return {"kind": "turn", "id": turn.id, "session_id": turn.session_id, "turn": turn.number}


def pad(path: Path, total: int, *, batch: int = 2000) -> int:
    """Add conversation turns of the design's workload (benchmarks/workload.py) until the
    store holds about `total` records, spread over January to June in sessions of 20,000
    turns; return how many were added."""
    from benchmarks import workload

    have = count_records(path)
    wanted = max(0, total - have)
    if not wanted:
        return 0
    clock = Clock(datetime(2026, 1, 1, tzinfo=UTC))
    span = timedelta(days=180) / wanted
    mem = open_store(path, clock)
    added = 0
    try:
        with quiet():
            while added < wanted:
                chunk = workload.messages(min(20_000, wanted - added), 1000 + added // 20_000)
                session = mem.start_session(title=f"padding {added // 20_000}").id
                for start in range(0, len(chunk), batch):
                    clock.now = datetime(2026, 1, 1, tzinfo=UTC) + span * (added + start)
                    mem.append_turns(session, chunk[start : start + batch])
                added += len(chunk)
                print(f"  padded {added:,} of {wanted:,} turns", flush=True)
    finally:
        mem.close()
    return added


def count_records(path: Path) -> int:
    """Entries, task messages, commands, trace decisions and turns in a store."""
    db = sqlite3.connect(path)
    try:
        return sum(
            db.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("entries", "task_messages", "actions", "trace_decisions", "turns")
        )
    finally:
        db.close()


# The text of each record, as clew's own indexes hold it (a command's outputs cut to head
# and tail by record_docs): one document per record for the floor.
_FLOOR_DOCS = (
    "SELECT 'entry', id, summary || char(10) || coalesce(detail, '') || char(10) || tags"
    " || char(10) || coalesce(resolution, '') FROM clew.entries",
    "SELECT kind, ref_id, title || char(10) || body || char(10) || stderr FROM clew.record_docs",
    "SELECT 'decision', id, action || char(10) || coalesce(error, '') || char(10)"
    " || coalesce(context, '') FROM clew.trace_decisions",
    "SELECT 'turn', id, coalesce(content, '') FROM clew.turns",
)


def floor_index(store: Path, floor: Path) -> None:
    """A separate plain SQLite file holding every record's text in one FTS5 table
    (porter unicode61), the comparator the issue names."""
    floor.unlink(missing_ok=True)
    db = sqlite3.connect(floor)
    try:
        db.execute("ATTACH DATABASE ? AS clew", (f"file:{store}?mode=ro",))
        db.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, kind TEXT, ref_id TEXT)")
        db.execute("CREATE VIRTUAL TABLE docs_fts USING fts5(body, tokenize='porter unicode61')")
        for select in _FLOOR_DOCS:
            rows = db.execute(select)
            while batch := rows.fetchmany(5000):
                cur = db.execute("SELECT coalesce(max(id), 0) FROM docs").fetchone()[0]
                db.executemany(
                    "INSERT INTO docs (id, kind, ref_id) VALUES (?, ?, ?)",
                    [(cur + i + 1, k, r) for i, (k, r, _) in enumerate(batch)],
                )
                db.executemany(
                    "INSERT INTO docs_fts (rowid, body) VALUES (?, ?)",
                    [(cur + i + 1, t) for i, (_, _, t) in enumerate(batch)],
                )
        db.commit()
    finally:
        db.close()


def cached(
    book_for: Any, size: int, records: int | None = None
) -> tuple[Path, Path, dict[str, Any]]:
    """The built store for this generator (building it if needed), padded to `records`
    when given: (store path, floor path, key references)."""
    base = CACHE / f"set-{generator_hash(size)}"
    store, refs_file = base / "store.db", base / "refs.json"
    with locked(base):  # two runs at once build it once
        if not refs_file.exists():
            shutil.rmtree(base, ignore_errors=True)
            base.mkdir(parents=True)
            started = time.perf_counter()
            refs = write(book_for(size=size), store)
            refs_file.write_text(json.dumps(refs))
            print(f"built the set's store in {time.perf_counter() - started:.1f}s", flush=True)
    refs = json.loads(refs_file.read_text())
    if records is not None:
        padded = CACHE / f"set-{generator_hash(size)}-{records}"
        with locked(padded):
            if not (padded / "done").exists():
                shutil.rmtree(padded, ignore_errors=True)
                padded.mkdir(parents=True)
                for name in ("store.db", "refs.json"):  # the floor is made from the padded store
                    shutil.copy2(base / name, padded / name)
                pad(padded / "store.db", records)
                (padded / "done").write_text("")
        base, store = padded, padded / "store.db"
        # The padded store's own references: the set's store may have been built again since.
        refs = json.loads((padded / "refs.json").read_text())
    floor = base / "floor.db"
    with locked(base):
        if not floor.exists():
            floor_index(store, floor.with_suffix(".tmp"))
            floor.with_suffix(".tmp").rename(floor)
    return store, floor, refs


@contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold an exclusive lock on the cache entry `folder` (a file beside it)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with folder.with_name(folder.name + ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
