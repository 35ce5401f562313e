"""Benchmark the conversation archive on the design's workload (benchmarks/workload.py).

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_conversations.py                  # 100k and 1M turns
    python benchmarks/bench_conversations.py --sizes 100000   # one size
    python benchmarks/bench_conversations.py --quick          # smoke run
    python benchmarks/bench_conversations.py --quick --append-only --samples 1000
    python benchmarks/bench_conversations.py --variants --samples 1500

Append: `Memory.append_turn(session, message)`, durable and searchable when it returns,
alternating with the floor: raw stdlib sqlite3 on clew's schema writing the same event JSON,
the turn row (FTS5 kept by clew's trigger) and the session's counters, one transaction per
turn. Both sides append the same message at each step. For reference, the Agents SDK's own
`SQLiteSession.add_items([item])` (no search) appends the same messages, as shipped (WAL,
synchronous=FULL: an fsync every commit) and at clew's durability (WAL, synchronous=NORMAL:
fsyncs at checkpoints); every row says its durability, read from its connection. And the
least possible, raw sqlite3 at clew's durability writing per turn only what any searchable
archive that can be rebuilt must: a row holding the message and its FTS5 entry, or a chained
journal event holding the message with the row referring to it (no other index, no session).
Every side's WAL pages and bytes per turn follow. `--variants`: FTS5 options and page sizes
on the least side with a journal, clew at three page sizes, and the least side growing
to the B-trees clew's schema writes per turn, a piece at a time.

Recall: `Memory.recall(session, "search", query=...)` (safe parsing, bm25 over the newest
5,000 matches, exact matches first, each hit with its neighbours, formatted within 8,000
tokens) next to the floor: the plain FTS5 query `MATCH ? ORDER BY rank LIMIT 10`.

Context: `assemble_context` of the seeded session (its newest turns up to the budget), the
first time in a process (every turn counted by the tokenizer) and again (counts remembered).
Resume: `Memory.resume`, and the `clew session resume` command as a new process.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import clew
from clew.conversations import session_state
from clew.core import chain, clock, turns
from clew.core.ids import new_id
from clew.core.turns import parse
from common import alternating_cpu, alternating_ms, header, pct, table, timed_ms
from workload import PHRASE, RARE, TRACEBACK, messages

BATCH = 2000


def seed(mem: clew.Memory, total: int) -> tuple[str, float]:
    """A session of `total` workload turns, appended through the API in batches."""
    session = mem.start_session(workspace="/bench", model="bench")
    t0 = time.perf_counter()
    all_messages = messages(total)
    for start in range(0, total, BATCH):
        mem.append_turns(session.id, all_messages[start : start + BATCH])
        if (start // BATCH) % 50 == 49:
            print(f"[bench] seeded {start + BATCH:,} turns", file=sys.stderr, flush=True)
    return session.id, time.perf_counter() - t0


def prepared(work: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """What clew derives from each message of `work` appended in order to a new session (the
    event's turn data less its id, and the session state after it), computed before the
    clock starts: the floor writes these values, it does not derive them."""
    out = []
    state: dict[str, Any] = {}
    pending: dict[str, Any] = {}
    for number, message in enumerate(work, 1):
        parts = parse(message)
        call, name = {}, None
        if parts.role == "tool":
            call = pending.pop(parts.tool_call_id or "", {})
            name = parts.tool_name or call.get("name")
        for c in parts.tool_calls:
            if c.id:
                pending[c.id] = {"name": c.name, "turn": number}
        folded = session_state.advance(state, number, parts)
        turn = {"number": number, "message": message,
                "token_count": turns.estimate_tokens(parts.text, parts.tool_calls),
                "tool_name": name, "call_turn": call.get("turn"),
                **turns.derived(message, parts),
                "state": session_state.change(state, folded)}  # fmt: skip
        out.append((turn, folded))
        state = folded
    return out


class Floor:
    """Raw sqlite3 doing what clew's schema requires of one turn, in one transaction: the
    journal event (the same data as clew's, chained to the space's last hash, read under
    the write lock), the turn's row (turn_rows: its event's seq, the message's envelope,
    its text only where the event does not hold it) with its search index entry, and the
    session's counters and state. The values clew derives from a message are computed
    before the clock starts (`prepared`); encoding what is stored is timed."""

    def __init__(self, path: str, session_id: str, work: list[dict[str, Any]]) -> None:
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA synchronous = NORMAL")
        self.session_id = session_id
        self.turns = prepared(work)
        # A store before migration 15 keeps each turn's message and text in its row too.
        self.rows = bool(
            self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'turn_rows'").fetchone()
        )

    def append(self, i: int) -> None:
        t, state = self.turns[i]
        at = clock.stamp(clock.utcnow())
        turn_id, event_id = new_id(), new_id()
        turn = {"id": turn_id, **t}
        data = json.dumps({"session_id": self.session_id, "turn": turn}, ensure_ascii=False,
                          separators=(",", ":"))  # fmt: skip
        message = t["message"]
        text = message[t["text_from"]] if "text_from" in t else t["text"]
        text_in = None if text is None else {"content": 1, "output": 2}.get(t.get("text_from"), 3)
        # The message's envelope (a text content taken out), as the row keeps it.
        text_content = isinstance(message.get("content"), str)
        envelope = json.dumps({**message, "content": None} if text_content else message,
                              ensure_ascii=False)  # fmt: skip
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        head = c.execute(
            "SELECT hash FROM events WHERE space = 'default' ORDER BY seq DESC LIMIT 1"
        ).fetchone()
        digest = chain.event_hash(
            head[0] if head else "", id=event_id, space="default", task_id=None,
            correlation_id=event_id, type="turn.appended", digest=chain.data_digest(data),
            created_at=at,
        )  # fmt: skip
        (seq,) = c.execute(
            "INSERT INTO events (id, space, task_id, correlation_id, type, data, created_at,"
            " hash) VALUES (?, 'default', NULL, ?, 'turn.appended', ?, ?, ?) RETURNING seq",
            (event_id, event_id, data, at, digest),
        ).fetchone()
        if not self.rows:
            c.execute(
                "INSERT INTO turns (id, space, session_id, turn, role, content, text_content,"
                " tool_calls, tool_call_id, tool_name, call_turn, message, token_count,"
                " created_at) VALUES (?, 'default', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (turn_id, self.session_id, t["number"], t["role"], text,
                 int(text_content),
                 json.dumps(t["tool_calls"]) if t["tool_calls"] else None, t["tool_call_id"],
                 t["tool_name"], t["call_turn"], envelope,
                 t["token_count"], at),
            )  # fmt: skip
            self._session(c, t, state, at)
            return
        row = c.execute(
            "INSERT INTO turn_rows (id, space, session_id, turn, role, content, text_content,"
            " tool_calls, tool_call_id, tool_name, call_turn, message, token_count, created_at,"
            " event_seq, text_in) VALUES (?, 'default', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (turn_id, self.session_id, t["number"], t["role"],
             text if text_in is None else None, int(text_content),
             json.dumps(t["tool_calls"]) if t["tool_calls"] else None, t["tool_call_id"],
             t["tool_name"], t["call_turn"], envelope,
             t["token_count"], at, seq, text_in),
        ).lastrowid  # fmt: skip
        c.execute("INSERT INTO turns_fts (rowid, content) VALUES (?, ?)", (row, text))
        self._session(c, t, state, at)

    def _session(
        self, c: sqlite3.Connection, t: dict[str, Any], state: dict[str, Any], at: str
    ) -> None:
        if t["state"]:
            c.execute(
                "UPDATE sessions SET turn_count = turn_count + 1, total_tokens = total_tokens"
                " + ?, last_active_at = ?, state = ? WHERE id = ?",
                (t["token_count"], at, json.dumps(state, ensure_ascii=False), self.session_id),
            )
        else:
            c.execute(
                "UPDATE sessions SET turn_count = turn_count + 1, total_tokens = total_tokens"
                " + ?, last_active_at = ? WHERE id = ?",
                (t["token_count"], at, self.session_id),
            )
        c.execute("COMMIT")


_TOKENIZE = "porter unicode61 remove_diacritics 2"  # clew's


class Least:
    """The least a searchable archive that can be rebuilt must write per turn, raw sqlite3,
    one transaction a turn at clew's durability, no index beyond the rowids: one row holding
    the message and its FTS5 entry (`journal=False`), or a chained journal event holding the
    message with the turn's row referring to it (`journal=True`; the chain's head is read
    under the write lock, as clew's). FTS5 keeps no content of its own (`content=''`): an
    external-content index, clew's kind, writes the same pages. `fts` adds FTS5 options
    (", columnsize=0") and `settings` its configuration (("automerge", 8)), `page_size` sets
    the new file's page size."""

    def __init__(
        self, path: str, work: list[dict[str, Any]], *, journal: bool, fts: str = "",
        settings: Sequence[tuple[str, int]] = (), page_size: int | None = None,
    ) -> None:  # fmt: skip
        self.conn = c = sqlite3.connect(path, isolation_level=None)
        if page_size:
            c.execute(f"PRAGMA page_size = {page_size}")
        c.execute("PRAGMA journal_mode = WAL")
        c.execute("PRAGMA synchronous = NORMAL")
        self.journal, self.work = journal, work
        if journal:
            c.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY, data TEXT NOT NULL,"
                      " hash TEXT NOT NULL)")  # fmt: skip
        c.execute("CREATE TABLE turns (seq INTEGER PRIMARY KEY, session_id TEXT NOT NULL,"
                  " turn INTEGER NOT NULL, ref)")  # fmt: skip
        c.execute(f"CREATE VIRTUAL TABLE turns_fts USING fts5(content, content='',"
                  f" tokenize='{_TOKENIZE}'{fts})")  # fmt: skip
        for name, value in settings:  # FTS5's persistent configuration (automerge...)
            c.execute("INSERT INTO turns_fts (turns_fts, rank) VALUES (?, ?)", (name, value))
        self.texts = [parse(m).text for m in work]  # derived before the clock, as the floor's

    def append(self, i: int) -> None:
        data = json.dumps({"session_id": "s", "turn": i, "message": self.work[i]},
                          ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        ref: object = data
        if self.journal:
            head = c.execute("SELECT hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
            digest = hashlib.sha256(((head[0] if head else "") + data).encode()).hexdigest()
            ref = c.execute(
                "INSERT INTO events (data, hash) VALUES (?, ?)", (data, digest)
            ).lastrowid
        row = c.execute(
            "INSERT INTO turns (session_id, turn, ref) VALUES ('s', ?, ?)", (i, ref)
        ).lastrowid
        c.execute("INSERT INTO turns_fts (rowid, content) VALUES (?, ?)", (row, self.texts[i]))
        c.execute("COMMIT")


# From the least side with a journal up to the B-trees clew's schema writes per turn, a piece
# at a time: (label, statements adding it).
_RUNGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("least (event)", ()),
    ("+ events(id) unique", ("CREATE UNIQUE INDEX events_id ON events(id)",)),
    ("+ events(space, seq)", ("CREATE INDEX events_space ON events(space, seq)",)),
    ("+ events(task_id, seq), events(type)", ("CREATE INDEX events_task ON events(task_id, seq)",
                                              "CREATE INDEX events_type ON events(type)")),
    ("+ turns(id) unique, turns(session_id, turn) unique",
     ("CREATE UNIQUE INDEX turns_id ON turns(id)",
      "CREATE UNIQUE INDEX turns_number ON turns(session_id, turn)")),
    ("+ turns(space, created_at)", ("CREATE INDEX turns_time ON turns(space, created_at)",)),
    ("+ the session's row, its state (2.7 KB) rewritten",
     ("CREATE TABLE sessions (id TEXT PRIMARY KEY, turn_count INTEGER, last_active_at TEXT,"
      " state TEXT)", "INSERT INTO sessions VALUES ('s', 0, '', '{}')")),
)  # fmt: skip


class Rung(Least):
    """The least side with a journal and the first `level` + 1 of `_RUNGS` added: the events
    and rows get the columns those indexes need (ids, space, task, type, time), and the
    session's row is updated as clew's is (a counter, the time, a state of clew's size)."""

    def __init__(self, path: str, work: list[dict[str, Any]], level: int) -> None:
        super().__init__(path, work, journal=True)
        c = self.conn
        for column in ("id", "space", "task_id", "type"):
            c.execute(f"ALTER TABLE events ADD COLUMN {column} TEXT")
        for column in ("id", "space", "created_at"):
            c.execute(f"ALTER TABLE turns ADD COLUMN {column} TEXT")
        for _, statements in _RUNGS[1 : level + 1]:
            for statement in statements:
                c.execute(statement)
        self.session = level >= 6
        self.state = json.dumps({"files": ["f" * 40] * 25, "open_errors": ["e" * 80] * 10})

    def append(self, i: int) -> None:
        data = json.dumps({"session_id": "s", "turn": i, "message": self.work[i]},
                          ensure_ascii=False, separators=(",", ":"))  # fmt: skip
        at = clock.stamp(clock.utcnow())
        c = self.conn
        c.execute("BEGIN IMMEDIATE")
        head = c.execute("SELECT hash FROM events ORDER BY seq DESC LIMIT 1").fetchone()
        digest = hashlib.sha256(((head[0] if head else "") + data).encode()).hexdigest()
        ref = c.execute(
            "INSERT INTO events (data, hash, id, space, task_id, type)"
            " VALUES (?, ?, ?, 'default', NULL, 'turn.appended')", (data, digest, new_id()),
        ).lastrowid  # fmt: skip
        row = c.execute(
            "INSERT INTO turns (session_id, turn, ref, id, space, created_at)"
            " VALUES ('s', ?, ?, ?, 'default', ?)", (i, ref, new_id(), at),
        ).lastrowid  # fmt: skip
        c.execute("INSERT INTO turns_fts (rowid, content) VALUES (?, ?)", (row, self.texts[i]))
        if self.session:
            c.execute(
                "UPDATE sessions SET turn_count = turn_count + 1, last_active_at = ?, state = ?"
                " WHERE id = 's'", (at, self.state),
            )  # fmt: skip
        c.execute("COMMIT")


def measure_rungs(tmp: str, samples: int) -> list[list[object]]:
    """Each of `_RUNGS` in a store of its own, alternating (CPU, wall), with its WAL pages
    and bytes per turn measured on another store."""
    warm = samples // 10
    work = messages(samples + warm, seed=23)
    sides = [Rung(os.path.join(tmp, f"rung-{n}.db"), work, n) for n in range(len(_RUNGS))]
    wall, cpu = alternating_cpu([side.append for side in sides], samples, warm)
    costs = messages(420, seed=13)
    rows: list[list[object]] = []
    for n, ((label, _), w, c) in enumerate(zip(_RUNGS, wall, cpu, strict=True)):
        sides[n].conn.close()
        path = os.path.join(tmp, f"rung-costs-{n}.db")
        rung = Rung(path, costs, n)
        pages, size = wal_costs(path, rung.append)
        rung.conn.close()
        rows.append([label, f"{pct(w, 50) * 1000:.0f}", f"{pct(c, 50) * 1000:.0f}",
                     f"{statistics.fmean(c) * 1000:.0f}", f"{pages:.1f}",
                     f"{size:,.0f}"])  # fmt: skip
    return rows


_SYNCHRONOUS = {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}


def durability(conn: sqlite3.Connection) -> str:
    """What a connection's commits survive, read from it: journal mode and synchronous."""
    mode = str(conn.execute("PRAGMA journal_mode").fetchone()[0]).upper()
    sync = _SYNCHRONOUS.get(conn.execute("PRAGMA synchronous").fetchone()[0], "?")
    fsync = {"FULL": "fsync every commit", "EXTRA": "fsync every commit",
             "NORMAL": "fsync at checkpoints" if mode == "WAL" else "fsync every commit",
             "OFF": "no fsync"}.get(sync, "?")  # fmt: skip
    return f"{mode}, synchronous={sync} ({fsync})"


class SDK:
    """The Agents SDK's SQLiteSession appending one message a call (no search index, no
    journal); `synchronous` overrides the setting it ships with (WAL, SQLite's FULL)."""

    def __init__(self, path: str, work: list[dict[str, Any]], synchronous: str | None) -> None:
        from agents import SQLiteSession

        class Session(SQLiteSession):
            @staticmethod
            def _configure_connection(conn: sqlite3.Connection) -> None:
                SQLiteSession._configure_connection(conn)  # WAL, as shipped
                if synchronous is not None:
                    conn.execute(f"PRAGMA synchronous = {synchronous}")

        self.path, self.work, self.configure = path, work, Session._configure_connection
        self.session = Session("bench", path)
        self.loop = asyncio.new_event_loop()

    def append(self, i: int) -> None:
        self.loop.run_until_complete(self.session.add_items([self.work[i]]))  # type: ignore[list-item]

    def durability(self) -> str:
        # A connection configured as the writes' were (they ran on a worker thread's own).
        probe = sqlite3.connect(self.path)
        self.configure(probe)
        described = durability(probe)
        probe.close()
        return described

    def close(self) -> None:
        self.session.close()
        self.loop.close()


def measure_append(
    tmp: str, samples: int, shared: bool = False
) -> tuple[list[list[object]], dict[str, float]]:
    """clew, the floor and the Agents SDK (as shipped, and at clew's durability) append the
    same message at each step, each to its own session, taking turns at going first; wall
    and process CPU time per append. Returns the table and clew's ratio to each side. The
    floor writes a store of its own (clew's schema), so that each side is its file's only
    writer, as an agent's store is; `shared`: clew's file, whose every commit is then
    another connection's to clew (which must read its journal's head and its session's row
    again on every turn)."""
    warm = samples // 10
    work = messages(samples + warm, seed=11)
    floor_path = os.path.join(tmp, "append.db" if shared else "append-floor.db")
    if not shared:
        with clew.open(floor_path) as other:
            floor_session = other.start_session().id
    with clew.open(os.path.join(tmp, "append.db")) as mem:
        clew_session = mem.start_session()
        if shared:
            floor_session = mem.start_session().id
        floor = Floor(floor_path, floor_session, work)
        shipped = SDK(os.path.join(tmp, "sdk-shipped.db"), work, None)
        normal = SDK(os.path.join(tmp, "sdk-normal.db"), work, "NORMAL")
        row = Least(os.path.join(tmp, "least-row.db"), work, journal=False)
        event = Least(os.path.join(tmp, "least-event.db"), work, journal=True)
        sides: list[tuple[str, Callable[[int], object], str]] = [
            ("clew append_turn", lambda i: mem.append_turn(clew_session.id, work[i]),
             durability(mem._store._conn)),  # type: ignore[attr-defined]
            ("floor: raw sqlite3 + FTS5, same rows and event", floor.append,
             durability(floor.conn)),
            ("Agents SDK SQLiteSession.add_items, as shipped (no search)", shipped.append,
             shipped.durability()),
            ("Agents SDK SQLiteSession.add_items, at clew's durability", normal.append,
             normal.durability()),
            (LEAST_ROW, row.append, durability(row.conn)),
            (LEAST_EVENT, event.append, durability(event.conn)),
        ]  # fmt: skip
        wall, cpu = alternating_cpu([fn for _, fn, _ in sides], samples, warm)
        floor.conn.close()
        row.conn.close()
        event.conn.close()
        shipped.close()
        normal.close()
    clew_cpu, clew_wall = statistics.fmean(cpu[0]), statistics.fmean(wall[0])
    rows: list[list[object]] = []
    ratios: dict[str, float] = {}
    for (label, _, durable), w, c in zip(sides, wall, cpu, strict=True):
        mean_cpu, mean_wall = statistics.fmean(c), statistics.fmean(w)
        ratio = "" if label.startswith("clew") else f"{mean_wall / clew_wall:.2f}"
        cpu_ratio = "" if label.startswith("clew") else f"{mean_cpu / clew_cpu:.2f}"
        if not label.startswith("clew"):
            ratios[label] = mean_cpu / clew_cpu
        rows.append([label, durable, f"{pct(w, 50) * 1000:.0f}", f"{pct(w, 99) * 1000:.0f}",
                     f"{pct(c, 50) * 1000:.0f}", f"{pct(c, 99) * 1000:.0f}",
                     f"{mean_cpu * 1000:.0f}", f"{1e3 / mean_wall:,.0f}",
                     f"{1e3 / mean_cpu:,.0f}", ratio, cpu_ratio])  # fmt: skip
    return rows, ratios


LEAST_ROW = "least possible: one row holding the message + FTS5"
LEAST_EVENT = "least possible: chained event holding the message, row referring to it + FTS5"

_GROUPS = (("journal", "events"), ("row and indexes", "turn"), ("search index", "turns_fts"))


def measure_storage(tmp: str, count: int) -> list[list[object]]:
    """Bytes a turn costs on disk: `count` workload turns appended one by one, then each
    table and index's pages (SQLite's dbstat) summed by what they hold."""
    path = os.path.join(tmp, "storage.db")
    work = messages(count, seed=5)
    with clew.open(path) as mem:
        session = mem.start_session()
        empty = _sizes(path)  # every table's and index's first page: not a turn's cost
        for message in work:
            mem.append_turn(session.id, message)
    full = _sizes(path)
    conn = sqlite3.connect(path)
    events = conn.execute("SELECT count(*) FROM events").fetchone()[0] - 1
    conn.close()
    os.unlink(path)
    sizes: dict[str, int] = {}
    for group, size in full.items():
        sizes[group] = size - empty.get(group, 0)
    message_bytes = sum(len(json.dumps(m, ensure_ascii=False).encode()) for m in work)
    rows: list[list[object]] = [
        [group, f"{sizes.get(group, 0) / count:,.0f}", f"{sizes.get(group, 0) / events:,.0f}"]
        for group, _ in (*_GROUPS, ("other", ""))
    ]
    total = sum(sizes.values())
    rows.append(["**all**", f"**{total / count:,.0f}**", f"{total / events:,.0f}"])
    rows.append(["the message's JSON", f"{message_bytes / count:,.0f}",
                 f"{total / message_bytes:.1f}x stored"])  # fmt: skip
    return rows


def wal_costs(
    path: str, append: Callable[[int], object], count: int = 40, rounds: int = 10
) -> tuple[float, float]:
    """Pages a side writes to the WAL per turn (what a commit costs in I/O) and bytes its
    store grows by per turn (SQLite's dbstat), over `rounds` of `count` turns appended after
    a checkpoint that empties the WAL (so that no automatic checkpoint runs inside a round),
    after 20 turns: FTS5's merges, every few commits, are spread over the rounds."""
    for i in range(20):
        append(i)
    conn = sqlite3.connect(path)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    before = conn.execute("SELECT sum(pgsize) FROM dbstat").fetchone()[0]
    frames = 0.0
    for r in range(rounds):
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        for i in range(20 + r * count, 20 + (r + 1) * count):
            append(i)
        frames += (os.path.getsize(path + "-wal") - 32) / (page + 24)  # a header, a header a frame
    after = conn.execute("SELECT sum(pgsize) FROM dbstat").fetchone()[0]
    conn.close()
    return frames / (count * rounds), (after - before) / (count * rounds)


def measure_pages(tmp: str, count: int = 40, rounds: int = 10) -> list[list[object]]:
    """Pages written to the WAL and bytes stored per turn, each side in a store of its own
    (`wal_costs`), with each side's page size."""
    work = messages(20 + count * rounds, seed=13)
    rows: list[list[object]] = []

    def row(label: str, path: str, append: Callable[[int], object]) -> None:
        pages, size = wal_costs(path, append, count, rounds)
        conn = sqlite3.connect(path)
        page = conn.execute("PRAGMA page_size").fetchone()[0]
        conn.close()
        rows.append([label, f"{page:,}", f"{pages:.1f}", f"{size:,.0f}"])

    path = os.path.join(tmp, "pages-clew.db")
    with clew.open(path) as mem:
        sid = mem.start_session().id
        row("clew append_turn", path, lambda i: mem.append_turn(sid, work[i]))
    path = os.path.join(tmp, "pages-floor.db")
    with clew.open(path) as mem:
        floor = Floor(path, mem.start_session().id, work)
        row("floor", path, floor.append)
        floor.conn.close()
    path = os.path.join(tmp, "pages-sdk.db")
    sdk = SDK(path, work, "NORMAL")
    row("Agents SDK SQLiteSession.add_items", path, sdk.append)
    sdk.close()
    for label, journal in ((LEAST_ROW, False), (LEAST_EVENT, True)):
        path = os.path.join(tmp, f"pages-least-{journal}.db")
        least = Least(path, work, journal=journal)
        row(label, path, least.append)
        least.conn.close()
    return rows


def sized(path: str, page_size: int) -> str:
    """`path`, a new SQLite file created with `page_size` (for clew.open to migrate)."""
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA page_size = {page_size}")
    conn.execute("PRAGMA journal_mode = WAL")  # writes the header: the size is the file's
    conn.close()
    return path


_VARIANTS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("least (event): FTS5 as clew's", {}),
    ("least (event): columnsize=0", {"fts": ", columnsize=0"}),
    ("least (event): automerge=2", {"settings": (("automerge", 2),)}),
    ("least (event): automerge=8", {"settings": (("automerge", 8),)}),
    ("least (event): automerge=16, crisismerge=64",
     {"settings": (("automerge", 16), ("crisismerge", 64))}),
    ("least (event): pgsz=1000", {"settings": (("pgsz", 1000),)}),
    ("least (event): page_size=8192", {"page_size": 8192}),
    ("least (event): page_size=16384", {"page_size": 16384}),
    ("least (event): page_size=1024", {"page_size": 1024}),
)  # fmt: skip


def measure_variants(tmp: str, samples: int) -> list[list[object]]:
    """FTS5 options and page sizes on the least-possible side with a journal, alternating,
    then clew at three page sizes, alternating (CPU and wall), each with its WAL pages and
    bytes per turn measured on a store of its own."""
    warm = samples // 10
    work = messages(samples + warm, seed=17)
    sides: list[tuple[str, Callable[[int], object]]] = []
    closing: list[Callable[[], object]] = []
    for n, (label, options) in enumerate(_VARIANTS):
        least = Least(os.path.join(tmp, f"variant-{n}.db"), work, journal=True, **options)
        sides.append((label, least.append))
        closing.append(least.conn.close)
    for page in (4096, 8192, 16384):
        mem = clew.open(sized(os.path.join(tmp, f"variant-clew-{page}.db"), page))
        sid = mem.start_session().id
        sides.append((f"clew append_turn: page_size={page}", _appender(mem, sid, work)))
        closing.append(mem.close)
    # Two alternations: a side's CPU moves with the one run before it (its caches), and
    # clew's working set is many times the least side's.
    split = len(_VARIANTS)
    wall, cpu = alternating_cpu([fn for _, fn in sides[:split]], samples, warm)
    more = alternating_cpu([fn for _, fn in sides[split:]], samples, warm)
    wall, cpu = wall + more[0], cpu + more[1]
    for close in closing:
        close()
    costs = messages(420, seed=13)
    rows: list[list[object]] = []
    for n, ((label, _), w, c) in enumerate(zip(sides, wall, cpu, strict=True)):
        path = os.path.join(tmp, f"variant-costs-{n}.db")
        if n < len(_VARIANTS):
            least = Least(path, costs, journal=True, **_VARIANTS[n][1])
            pages, size = wal_costs(path, least.append)
            least.conn.close()
        else:
            with clew.open(sized(path, int(label.rsplit("=", 1)[1]))) as mem:
                sid = mem.start_session().id
                pages, size = wal_costs(path, _appender(mem, sid, costs))
        rows.append([label, f"{pct(w, 50) * 1000:.0f}", f"{pct(w, 99) * 1000:.0f}",
                     f"{pct(c, 50) * 1000:.0f}", f"{statistics.fmean(c) * 1000:.0f}",
                     f"{pages:.1f}", f"{pages * int(_page_of(path)) / 1024:.1f}",
                     f"{size:,.0f}"])  # fmt: skip
    return rows


def _appender(
    mem: clew.Memory, session_id: str, work: list[dict[str, Any]]
) -> Callable[[int], object]:
    """`append(i)`: clew appending work[i] to the session."""
    return lambda i: mem.append_turn(session_id, work[i])


def _page_of(path: str) -> int:
    conn = sqlite3.connect(path)
    page = int(conn.execute("PRAGMA page_size").fetchone()[0])
    conn.close()
    return page


def _sizes(path: str) -> dict[str, int]:
    """Bytes of pages by what they hold (_GROUPS; the rest is "other")."""
    conn = sqlite3.connect(path)
    owner = dict(conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type != 'view'"))
    sizes: dict[str, int] = {}
    for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        table = owner.get(name, name)
        group = next((g for g, prefix in reversed(_GROUPS) if table.startswith(prefix)), "other")
        sizes[group] = sizes.get(group, 0) + size
    conn.close()
    return sizes


def profile_append(tmp: str, count: int, top: int = 12) -> str:
    """The top Python and SQLite costs of `count` append_turn calls, by own time."""
    import cProfile
    import io
    import pstats

    work = messages(count, seed=7)
    with clew.open(os.path.join(tmp, "profile.db")) as mem:
        session = mem.start_session()
        for message in work[:50]:
            mem.append_turn(session.id, message)
        profile = cProfile.Profile()
        profile.enable()
        for message in work[50:]:
            mem.append_turn(session.id, message)
        profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).sort_stats("tottime")
    stats.print_stats(top)
    lines = out.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if "ncalls" in line)
    return "\n".join(lines[start:])


def measure_store(
    tmp: str, size: int, runs: int
) -> tuple[list[list[object]], list[list[object]], list[list[object]]]:
    path = os.path.join(tmp, f"turns-{size}.db")
    searches: list[list[object]] = []
    contexts: list[list[object]] = []
    resumes: list[list[object]] = []
    with clew.open(path) as mem:
        session_id, seconds = seed(mem, size)
        mem.recall(session_id, "search", query="warm up")  # loads the tokenizer, once a process
        conn = sqlite3.connect(path)
        for label, query, fts in (
            (f"rare identifier (3 turns): {RARE}", RARE, f'"{RARE}"'),
            (f"traceback in ~0.5%: {TRACEBACK}", TRACEBACK, f'"{TRACEBACK}"'),
            (f'phrase in ~1%: "{PHRASE}"', f'"{PHRASE}"', f'"{PHRASE}"'),
        ):
            matches = conn.execute(
                "SELECT count(*) FROM turns_fts WHERE turns_fts MATCH ?", (fts,)
            ).fetchone()[0]
            clew_ms, floor_ms = alternating_ms(
                lambda i, q=query: mem.recall(session_id, "search", query=q),
                lambda i, f=fts: conn.execute(
                    "SELECT rowid, bm25(turns_fts) FROM turns_fts WHERE turns_fts MATCH ?"
                    " ORDER BY rank LIMIT 10",
                    (f,),
                ).fetchall(),
                runs,
            )
            figures = [f"{pct(v, q):.1f}" for v in (clew_ms, floor_ms) for q in (50, 95)]
            searches.append([f"{size:,}", label, f"{matches:,}", *figures])
        conn.close()
        for budget in (32_000, 128_000):
            mem.conversations._measured.clear()  # a process's first assembly counts every turn
            first = timed_ms(lambda b=budget: mem.assemble_context(session_id, budget=b), 1)[0]
            again = timed_ms(lambda b=budget: mem.assemble_context(session_id, budget=b), runs)
            shown = len(mem.assemble_context(session_id, budget=budget).turns)
            contexts.append([f"{size:,}", f"{budget:,}", f"{shown:,}", f"{first:.0f}",
                             f"{pct(again, 50):.1f}", f"{pct(again, 95):.1f}"])  # fmt: skip
        api = timed_ms(lambda: mem.resume(session_id), runs)
    cli = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "clew", "--db", path, "session", "resume", session_id,
             "--json"], check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        cli.append((time.perf_counter() - t0) * 1000)
    resumes.append([f"{size:,}", "Memory.resume (32k budget)", f"{pct(api, 50):.1f}",
                    f"{pct(api, 95):.1f}"])  # fmt: skip
    resumes.append([f"{size:,}", "`clew session resume --json` (new process)",
                    f"{statistics.median(cli):.0f}", f"{max(cli):.0f}"])  # fmt: skip
    size_mb = os.path.getsize(path) / 1e6
    os.unlink(path)
    print(f"[bench] {size:,} turns: seeded in {seconds:.0f} s ({size / seconds:,.0f} turns/s in"
          f" batches of {BATCH}), {size_mb:,.0f} MB", file=sys.stderr)  # fmt: skip
    return searches, contexts, resumes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", help="session sizes in turns, comma-separated")
    parser.add_argument("--quick", action="store_true", help="small sizes, few samples")
    parser.add_argument("--samples", type=int, help="append samples per side")
    parser.add_argument("--runs", type=int, help="runs per query and side")
    parser.add_argument("--storage", type=int, default=5000, help="turns for the storage table")
    parser.add_argument("--append-only", action="store_true", help="append and storage only")
    parser.add_argument(
        "--shared-file", action="store_true", help="the append floor writes clew's own file"
    )
    parser.add_argument(
        "--variants", action="store_true", help="FTS5 options, page sizes, B-trees one by one"
    )
    args = parser.parse_args(argv)
    sizes = [
        int(s) for s in (args.sizes or ("3000" if args.quick else "100000,1000000")).split(",")
    ]
    samples = args.samples or (100 if args.quick else 1000)
    runs = args.runs or (10 if args.quick else 40)
    header("clew conversation archive benchmark")
    with tempfile.TemporaryDirectory(prefix="clew-bench-turns-") as tmp:
        if args.variants:
            print(
                f"\n## FTS5 options and page sizes ({samples} samples per side, alternating;"
                " all WAL, synchronous=NORMAL)\n"
            )
            print(table(["side", "wall p50 µs", "wall p99 µs", "CPU p50 µs", "CPU µs/turn",
                         "WAL pages per turn", "WAL KB per turn", "bytes per turn"],
                        measure_variants(tmp, samples)))  # fmt: skip
            print(f"\n## From the least side to clew's B-trees, a piece at a time ({samples}"
                  " samples per side, alternating; WAL, synchronous=NORMAL)\n")  # fmt: skip
            print(table(["side", "wall p50 µs", "CPU p50 µs", "CPU µs/turn",
                         "WAL pages per turn", "bytes per turn"],
                        measure_rungs(tmp, samples)))  # fmt: skip
            return 0
        where = "clew's file" if args.shared_file else "a file of its own"
        print(
            f"\n## Append one turn ({samples} samples per side, alternating; the floor writes"
            f" {where}); aims: clew >= 0.8 of the floor, >= 1.0x the SDK at the same"
            " durability\n"
        )
        rows, ratios = measure_append(tmp, samples, args.shared_file)
        print(table(["side", "durability", "wall p50 µs", "wall p99 µs", "CPU p50 µs",
                     "CPU p99 µs", "CPU µs/turn",
                     "turns/s (wall)", "turns/s (CPU)", "clew/side (wall)", "clew/side (CPU)"],
                    rows))  # fmt: skip
        print(
            f"\n## Storage per turn ({args.storage:,} workload turns appended one by one;"
            " SQLite's dbstat, pages)\n"
        )
        print(table(["what", "bytes per turn", "bytes per event"],
                    measure_storage(tmp, args.storage)))  # fmt: skip
        print(
            "\n## Pages written to the WAL and bytes stored per turn (10 rounds of 40 turns,"
            " each after a checkpoint; dbstat)\n"
        )
        print(table(["side", "page size", "WAL pages per turn", "bytes per turn"],
                    measure_pages(tmp)))  # fmt: skip
        floor_ratio = ratios["floor: raw sqlite3 + FTS5, same rows and event"]
        sdk_ratio = ratios["Agents SDK SQLiteSession.add_items, at clew's durability"]
        if floor_ratio < 0.8 or sdk_ratio < 1.0:
            print(f"\nAims not met (CPU: {floor_ratio:.2f} of the floor, {sdk_ratio:.2f}x the"
                  " SDK at clew's durability). Where append_turn's time goes (cProfile,"
                  " 500 appends, own time):\n\n```")  # fmt: skip
            print(profile_append(tmp, 550))
            print("```")
        sys.stdout.flush()
        if args.append_only:
            return 0
        searches, contexts, resumes = [], [], []
        for size in sizes:
            s, c, r = measure_store(tmp, size, runs)
            searches += s
            contexts += c
            resumes += r
        print(f"\n## Recall search, top 10 ({runs} runs per query and side)\n")
        print(table(["turns", "query", "matches", "clew p50 ms", "clew p95 ms", "floor p50 ms",
                     "floor p95 ms"], searches))  # fmt: skip
        print(f"\n## Context assembly ({runs} runs after the first)\n")
        print(table(["turns", "budget", "turns in", "first ms", "p50 ms", "p95 ms"], contexts))
        print(f"\n## Resume ({runs} runs; the command 5)\n")
        print(table(["turns", "how", "p50 ms", "p95 / max ms"], resumes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
