"""Benchmark the bulk commands as whole processes against floors measured in the same run.

Prints markdown tables; a script, not a timed test:

    python benchmarks/bench_bulk.py --quick        # 20,000 messages, about a minute
    python benchmarks/bench_bulk.py --messages 100000
    python benchmarks/bench_bulk.py --messages 1000000 --keep /big/folder   # a million

The input is the design's conversation workload (benchmarks/workload.py) written as one JSONL
file. Each command runs as a real process (`python -m clew ...`); its wall time, its CPU time
(user + system, the child's own rusage from `os.wait4`) and its peak RSS are measured.
Each has a floor doing the same work with the standard library alone, also as a process, on
the same input, at the same durability (WAL, synchronous=NORMAL, the whole import one
transaction), the two taking turns at going first:

- `session import FILE`: floor = read the same JSONL line by line, and in one transaction
  insert one journal event per message (JSON data holding the message, chained by BLAKE2b
  as clew's are) and its turn row (same columns and indexes), then the FTS5 index of the
  turns in one statement (what clew's import does too; a trigger per row costs ~2.5x);
- `session export ID` and `clew export`: floor = one SELECT streaming the same rows (the
  messages; the events) to a file;
- `verify`: floor = one full scan of the events reading every column and re-hashing the
  chain (what any verify must at least do).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from typing import Any, NamedTuple

import workload
from common import header, table

HERE = os.path.dirname(os.path.abspath(__file__))

# The floors run as scripts of their own in a child process, like clew does.
FLOOR_IMPORT = r"""
import hashlib, json, sqlite3, sys, uuid
db, path = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA journal_mode = WAL")
conn.execute("PRAGMA synchronous = NORMAL")
conn.executescript('''
CREATE TABLE IF NOT EXISTS events (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
  space TEXT NOT NULL, task_id TEXT, correlation_id TEXT NOT NULL, type TEXT NOT NULL,
  data TEXT NOT NULL, created_at TEXT NOT NULL, hash TEXT);
CREATE INDEX IF NOT EXISTS events_task ON events(task_id, seq);
CREATE INDEX IF NOT EXISTS events_correlation ON events(correlation_id);
CREATE INDEX IF NOT EXISTS events_type ON events(type);
CREATE INDEX IF NOT EXISTS events_space ON events(space, seq);
CREATE TABLE IF NOT EXISTS turns (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE,
  space TEXT NOT NULL, session_id TEXT NOT NULL, turn INTEGER NOT NULL, role TEXT NOT NULL,
  content TEXT, text_content INTEGER NOT NULL, tool_calls TEXT, tool_call_id TEXT,
  tool_name TEXT, call_turn INTEGER, message TEXT NOT NULL, token_count INTEGER NOT NULL,
  hidden INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, UNIQUE (session_id, turn));
CREATE INDEX IF NOT EXISTS turns_tool ON turns(session_id, tool_name, turn)
  WHERE tool_name IS NOT NULL;
CREATE INDEX IF NOT EXISTS turns_time ON turns(space, created_at);
CREATE VIRTUAL TABLE IF NOT EXISTS turns_fts USING fts5(content, content='turns',
  content_rowid='seq', tokenize='porter unicode61 remove_diacritics 2');
''')
session, now, corr = uuid.uuid4().hex, "2026-01-01T00:00:00.000000Z", uuid.uuid4().hex
head = ""

def rows():
    global head
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = json.loads(line)
            text = m.get("content") if isinstance(m.get("content"), str) else None
            calls = m.get("tool_calls")
            tid, eid = uuid.uuid4().hex, uuid.uuid4().hex
            data = json.dumps({"session_id": session, "turn": {"id": tid, "number": n,
                               "message": m, "role": m["role"]}}, ensure_ascii=False)
            h = hashlib.blake2b(digest_size=32)
            for part in (head, eid, "s", corr, "turn.appended", data, now):
                b = part.encode()
                h.update(len(b).to_bytes(8, "big")); h.update(b)
            head = h.hexdigest()
            stored = json.dumps({**m, "content": None}, ensure_ascii=False)
            yield (eid, "s", corr, "turn.appended", data, now, head, tid, session, n,
                   m["role"], text, None if calls is None else json.dumps(calls),
                   m.get("tool_call_id"), stored, len(text or "") // 4, now)

conn.execute("BEGIN IMMEDIATE")
for r in rows():
    conn.execute("INSERT INTO events (id, space, correlation_id, type, data, created_at, hash)"
                 " VALUES (?, ?, ?, ?, ?, ?, ?)", r[:7])
    conn.execute("INSERT INTO turns (id, space, session_id, turn, role, content, text_content,"
                 " tool_calls, tool_call_id, message, token_count, created_at)"
                 " VALUES (?, 's', ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)", r[7:])
# The search index in one statement at the end (an insert trigger costs ~2.5x as much).
conn.execute("INSERT INTO turns_fts (rowid, content) SELECT seq, content FROM turns")
conn.execute("COMMIT")
"""

# The least an import can do at clew's guarantees and with clew's schema: the message stored
# once (the turn row refers to its event and `turns` is a view reading the text from it, as
# since migration 15), no parsing beyond json.loads, no session state. Switches a bulk writer
# may use, argv[3], comma-separated:
#   cache=MB   the page cache for the transaction (default: SQLite's 2 MB)
#   many=N     rows inserted N at a time by executemany (seq given: the write lock holds the
#              journal's head, so the next seq is known)
#   late       the secondary indexes of both tables dropped and made again at the end
#   temp       temp_store = MEMORY
#   nockpt     wal_autocheckpoint = 0, the checkpoint run apart after the commit
#   rollback   a rollback journal instead of WAL: NOT clew's guarantees (readers would wait,
#              and the mode needs the store to itself), only what writing the store once costs
# Prints its phases' CPU seconds [user, system] as JSON.
LEAST_IMPORT = r"""
import hashlib, itertools, json, os, sqlite3, sys
db, path = sys.argv[1], sys.argv[2]
opts = dict(o.partition("=")[::2] for o in sys.argv[3].split(",") if o) if sys.argv[3:] else {}
conn = sqlite3.connect(db, isolation_level=None)
conn.execute("PRAGMA journal_mode = " + ("DELETE" if "rollback" in opts else "WAL"))
conn.execute("PRAGMA synchronous = NORMAL")
conn.execute("PRAGMA foreign_keys = ON")
if "cache" in opts:
    conn.execute(f"PRAGMA cache_size = -{int(opts['cache']) * 1024}")
if "temp" in opts:
    conn.execute("PRAGMA temp_store = MEMORY")
if "nockpt" in opts:
    conn.execute("PRAGMA wal_autocheckpoint = 0")
TEXT = ("CASE r.text_in WHEN 1 THEN json_extract(e.data, '$.turn.message.content')"
        " WHEN 2 THEN json_extract(e.data, '$.turn.message.output')"
        " WHEN 3 THEN json_extract(e.data, '$.turn.text') END")
INDEXES = [
    "CREATE INDEX events_task ON events(task_id, seq)",
    "CREATE INDEX events_correlation ON events(correlation_id)",
    "CREATE INDEX events_type ON events(type)",
    "CREATE INDEX events_space ON events(space, seq)",
    "CREATE INDEX turns_tool ON turn_rows(session_id, tool_name, turn)"
    " WHERE tool_name IS NOT NULL",
    "CREATE INDEX turns_hidden ON turn_rows(session_id, turn) WHERE hidden = 1",
    "CREATE INDEX turns_time ON turn_rows(space, created_at)",
]
conn.executescript(
    "CREATE TABLE events (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, space TEXT NOT NULL,"
    " task_id TEXT, correlation_id TEXT NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL,"
    " created_at TEXT NOT NULL, hash TEXT);"
    "CREATE TABLE sessions (id TEXT PRIMARY KEY, space TEXT NOT NULL, turn_count INTEGER,"
    " state TEXT);"
    "CREATE TABLE turn_rows (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, space TEXT NOT"
    " NULL, session_id TEXT NOT NULL REFERENCES sessions(id), turn INTEGER NOT NULL, role TEXT"
    " NOT NULL, content TEXT, text_content INTEGER NOT NULL, tool_calls TEXT, tool_call_id TEXT,"
    " tool_name TEXT, call_turn INTEGER, message TEXT NOT NULL, token_count INTEGER NOT NULL"
    " DEFAULT 0, hidden INTEGER NOT NULL DEFAULT 0, created_at TEXT NOT NULL, event_seq INTEGER,"
    " text_in INTEGER, UNIQUE (session_id, turn));"
    + ";".join(INDEXES) + ";"
    f"CREATE VIEW turns AS SELECT r.seq, CASE WHEN r.text_in IS NULL THEN r.content ELSE {TEXT}"
    " END AS content FROM turn_rows r LEFT JOIN events e ON e.seq = r.event_seq;"
    "CREATE VIRTUAL TABLE turns_fts USING fts5(content, content='turns', content_rowid='seq',"
    " tokenize='porter unicode61 remove_diacritics 2');"
)
symbols = bytes(ord("0123456789abcdefghjkmnpqrstvwxyz"[b % 32]) for b in range(256))
def new_id():
    return os.urandom(10).translate(symbols).decode("ascii")
session, now, corr = new_id(), "2026-01-01T00:00:00.000000Z", new_id()
encode = json.JSONEncoder(ensure_ascii=False).encode
conn.execute("INSERT INTO sessions VALUES (?, 's', 0, '{}')", (session,))
head = ""

def rows():
    global head
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = json.loads(line)
            content = m.get("content")
            text = isinstance(content, str)
            text_in = 1 if text and "\0" not in content else None
            calls = m.get("tool_calls")
            tid, eid = new_id(), new_id()
            data = encode({"session_id": session, "turn": {"id": tid, "number": n,
                           "message": m, "role": m["role"], "text_from": "content"}})
            h = hashlib.blake2b(digest_size=32)
            for part in (head, eid, "s", "", corr, "turn.appended", data, now):
                b = part.encode()
                h.update(len(b).to_bytes(8, "big")); h.update(b)
            head = h.hexdigest()
            stored = encode({**m, "content": None}) if text else encode(m)
            yield ((n, eid, corr, data, now, head),
                   (tid, session, n, m["role"], None if text_in else content, int(text),
                    None if calls is None else encode(calls), m.get("tool_call_id"), stored,
                    len(content or "") // 4 if text else 0, now, n, text_in))

phases, mark = {}, os.times()
def phase(name):
    global mark
    t = os.times()
    phases[name] = [round(t.user - mark.user, 2), round(t.system - mark.system, 2)]
    mark = t

EVENT = ("INSERT INTO events (seq, id, space, correlation_id, type, data, created_at, hash)"
         " VALUES (?, ?, 's', ?, 'turn.appended', ?, ?, ?)")
TURN = ("INSERT INTO turn_rows (id, space, session_id, turn, role, content, text_content,"
        " tool_calls, tool_call_id, message, token_count, created_at, event_seq, text_in)"
        " VALUES (?, 's', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
conn.execute("BEGIN IMMEDIATE")
if "late" in opts:
    for sql in INDEXES:
        conn.execute("DROP INDEX " + sql.split()[2])
many = int(opts.get("many") or 0)
if many:
    source = rows()
    while batch := list(itertools.islice(source, many)):
        conn.executemany(EVENT, [b[0] for b in batch])
        conn.executemany(TURN, [b[1] for b in batch])
else:
    for event, turn in rows():
        conn.execute(EVENT, event)
        conn.execute(TURN, turn)
total = conn.execute("SELECT count(*) FROM turn_rows").fetchone()[0]
conn.execute("UPDATE sessions SET turn_count = ? WHERE id = ?", (total, session))
phase("rows")
if "late" in opts:
    for sql in INDEXES:
        conn.execute(sql)
    phase("indexes")
conn.execute("INSERT INTO turns_fts (rowid, content) SELECT seq, content FROM turns ORDER BY seq")
phase("fts")
conn.execute("COMMIT")
phase("commit")
if "nockpt" in opts:
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    phase("checkpoint")
conn.close()
phase("close")
print(json.dumps(phases))
"""

FLOOR_EXPORT_TURNS = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for message, content in conn.execute("SELECT message, content FROM turns ORDER BY seq"):
        out.write(message); out.write(content or ""); out.write("\n")
"""

FLOOR_EXPORT_EVENTS = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
with open(sys.argv[2], "w", encoding="utf-8") as out:
    for row in conn.execute("SELECT id, type, data, created_at, hash FROM events ORDER BY seq"):
        out.write("\t".join(str(c) for c in row)); out.write("\n")
"""

FLOOR_SCAN = r"""
import hashlib, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
head = ""
for row in conn.execute("SELECT id, space, task_id, correlation_id, type, data, created_at"
                        " FROM events ORDER BY seq"):
    h = hashlib.blake2b(digest_size=32)
    for part in (head, *row):
        b = (part or "").encode()
        h.update(len(b).to_bytes(8, "big")); h.update(b)
    head = h.hexdigest()
"""


def write_input(path: str, total: int) -> int:
    """Write `total` messages of the workload as JSONL; return its size in bytes."""
    with open(path, "w", encoding="utf-8") as out:
        for message in workload.stream(total):
            out.write(json.dumps(message, ensure_ascii=False) + "\n")
    return os.path.getsize(path)


class Run(NamedTuple):
    """One process's wall seconds, CPU seconds (user + system) and peak RSS (MB)."""

    wall: float
    cpu: float
    rss: float
    times: tuple[float, float] = (0.0, 0.0)  # user, system

    def cells(self) -> list[str]:
        return [f"{self.wall:.1f}", f"{self.cpu:.1f}", f"{self.rss:.0f}"]


def run_measured(
    argv: list[str], stdout: str | None = None, env: dict[str, str] | None = None
) -> Run:
    """Run `argv` as a child and measure it alone (its own rusage from wait4)."""
    t0 = time.perf_counter()
    with open(stdout or os.devnull, "w") as sink:
        environ = {**os.environ, **env} if env else None
        proc = subprocess.Popen(argv, stdout=sink, stderr=subprocess.PIPE, env=environ)
        assert proc.stderr is not None
        err = proc.stderr.read()
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own rusage, not all children's
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(argv[:6])} failed ({proc.returncode}): {err[-2000:].decode()}")
    cpu = usage.ru_utime + usage.ru_stime
    return Run(wall, cpu, usage.ru_maxrss / 1024, (usage.ru_utime, usage.ru_stime))


def clew(db: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "clew", "--db", db, *args]


def floor(script: str, *args: str) -> list[str]:
    return [sys.executable, "-c", script, *args]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="20,000 messages")
    parser.add_argument("--messages", type=int, default=100_000, help="messages (100,000)")
    parser.add_argument("--keep", metavar="FOLDER", help="work in FOLDER (default: a temp one)")
    parser.add_argument(
        "--moves",
        action="store_true",
        help="also time `clew import` of the exported journal and `clew push` (no floor:"
        " their peak RSS is the point)",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="then run clew's session import and verify once more under cProfile and print"
        " their top costs (own time; the runs are slower than the timed ones)",
    )
    parser.add_argument(
        "--verify-store",
        metavar="DB",
        help="only time verify of the existing store DB, against the floor's scan (and"
        " --peer's verify), alternating, --rounds times",
    )
    parser.add_argument(
        "--peer",
        metavar="SRC",
        action="append",
        default=[],
        help="another checkout's src folder (e.g. main's), run alike (repeatable)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds for --verify-store (2)")
    parser.add_argument(
        "--bounds",
        nargs="*",
        metavar="SWITCHES",
        help="only the import: clew (and --peer's), the floor and the least possible import"
        " (LEAST_IMPORT) with each set of switches given (e.g. '' cache=256 many=1000,late;"
        " 'clew': clew alone), alternating, --rounds times; CPU user and system apart",
    )
    args = parser.parse_args()
    if args.bounds is not None:
        bounds(args.messages, args.keep, args.bounds, args.rounds, args.peer)
        return
    if args.verify_store:
        verify_alternating(args.verify_store, args.peer, args.rounds)
        return
    total = 20_000 if args.quick else args.messages
    folder = args.keep or tempfile.mkdtemp(prefix="clew-bulk-")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, f"messages-{total}.jsonl")
    if not os.path.exists(source):
        write_input(source, total)
    size = os.path.getsize(source)
    limit = str(min(2047, max(64, size // 2**20 + 1)))
    rows: list[list[Any]] = []
    stores: dict[str, str] = {}

    def fresh(name: str) -> str:
        path = os.path.join(folder, name)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
        return path

    # Import: clew and its floor alternate going first (twice in a quick run, once else).
    rounds = 2 if total <= 20_000 else 1
    imports: dict[str, list[Run]] = {"clew": [], "floor": []}
    for r in range(rounds):
        order = ["clew", "floor"] if r % 2 == 0 else ["floor", "clew"]
        for side in order:
            if side == "clew":
                db = fresh("clew.db")
                argv = clew(db, "--max-input-mb", limit, "session", "import", source)
                imports["clew"].append(run_measured(argv))
                stores["clew"] = db
            else:
                db = fresh("floor.db")
                imports["floor"].append(run_measured(floor(FLOOR_IMPORT, db, source)))
                stores["floor"] = db
    c, f = min(imports["clew"], key=lambda x: x.wall), min(imports["floor"], key=lambda x: x.wall)
    rows.append(["session import", *c.cells(), *f.cells(), f"{f.cpu / c.cpu:.2f}"])

    session = _only_session(stores["clew"])
    out = os.path.join(folder, "out")
    pairs = [
        ("session export", clew(stores["clew"], "session", "export", session),
         floor(FLOOR_EXPORT_TURNS, stores["floor"], out)),
        ("clew export", clew(stores["clew"], "export"),
         floor(FLOOR_EXPORT_EVENTS, stores["floor"], out)),
        ("verify", clew(stores["clew"], "verify"), floor(FLOOR_SCAN, stores["floor"])),
    ]  # fmt: skip
    for name, ours, theirs in pairs:
        c = run_measured(ours, out)
        f = run_measured(theirs)
        rows.append([name, *c.cells(), *f.cells(), f"{f.cpu / c.cpu:.2f}"])
    if args.moves:
        journal = os.path.join(folder, "journal.jsonl")
        run_measured(clew(stores["clew"], "export", "-o", journal))
        moved = [
            ("clew import (journal file)", clew(fresh("imported.db"), "import", journal)),
            ("clew push (to a new file)", clew(stores["clew"], "push", "--to", fresh("team.db"))),
        ]
        for name, argv in moved:
            rows.append([name, *run_measured(argv).cells(), "", "", "", ""])

    header(
        "Bulk commands as whole processes",
        ("messages", f"{total:,}"),
        ("input", f"{size / 2**20:,.0f} MB of JSONL"),
        ("durability", "both: WAL, synchronous=NORMAL, the import one transaction"),
    )
    print()
    print(
        table(
            [
                "command",
                "wall s",
                "CPU s",
                "peak RSS MB",
                "floor wall s",
                "floor CPU s",
                "floor RSS MB",
                "floor/clew CPU",
            ],
            rows,
        )
    )
    if args.profile:
        db = fresh("profiled.db")
        for name, argv in (
            ("session import", ["--max-input-mb", limit, "session", "import", source]),
            ("verify", ["verify"]),
        ):
            print()
            print(profile_command(name, db, argv, folder))


def bounds(
    total: int, keep: str | None, switches: list[str], rounds: int, peers: list[str]
) -> None:
    """The import's lower bounds: clew (and `peers`, other checkouts' src), the floor and
    LEAST_IMPORT with each set of switches (none given: as clew; "clew": clew alone), as
    processes taking turns at going first; one row a run."""
    folder = keep or tempfile.mkdtemp(prefix="clew-bulk-")
    os.makedirs(folder, exist_ok=True)
    source = os.path.join(folder, f"messages-{total}.jsonl")
    if not os.path.exists(source):
        write_input(source, total)
    limit = str(min(2047, max(64, os.path.getsize(source) // 2**20 + 1)))
    db = os.path.join(folder, "bound.db")
    ours = clew(db, "--max-input-mb", limit, "session", "import", source)
    sides: list[tuple[str, list[str], dict[str, str]]] = [("clew", ours, {})]
    for peer in peers:
        sides.append((f"clew ({peer})", ours, {"PYTHONPATH": peer}))
    if switches != ["clew"]:
        sides.append(("floor (message twice)", floor(FLOOR_IMPORT, db, source), {}))
        for switch in switches or [""]:
            name = f"least {switch or '(as clew)'}"
            sides.append((name, floor(LEAST_IMPORT, db, source, switch), {}))
    rows = []
    for r in range(rounds):
        for name, argv, env in sides if r % 2 == 0 else sides[::-1]:
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(db + suffix):
                    os.remove(db + suffix)
            out = os.path.join(folder, "phases.json")
            run = run_measured(argv, out, env)
            user, system = run.times
            with open(out) as f:
                said = f.read().strip()
            phases = (
                ", ".join(f"{k} {u:.1f}+{s:.1f}" for k, (u, s) in json.loads(said).items())
                if said.startswith("{")
                else ""
            )
            size = os.path.getsize(db) / 2**20
            rows.append(
                [
                    name,
                    str(r + 1),
                    f"{run.wall:.1f}",
                    f"{user:.1f}",
                    f"{system:.1f}",
                    f"{run.cpu:.1f}",
                    f"{run.rss:.0f}",
                    f"{size:,.0f}",
                    phases,
                ]
            )
    header(
        "Session import: clew, its floor and the least possible",
        ("messages", f"{total:,}"),
        ("durability", "all: WAL, synchronous=NORMAL, one transaction (but 'rollback')"),
    )
    print()
    print(
        table(
            [
                "side",
                "round",
                "wall s",
                "user s",
                "system s",
                "CPU s",
                "peak RSS MB",
                "store MB",
                "phases (user+system s)",
            ],
            rows,
        )
    )


def verify_alternating(db: str, peers: list[str], rounds: int) -> None:
    """verify of one store by this checkout, by `peer` (a src folder) and the floor's scan,
    taking turns at going first; one row a run."""
    sides: list[tuple[str, list[str], dict[str, str]]] = [
        ("clew (this checkout)", clew(db, "verify"), {}),
        ("floor (scan + re-hash)", floor(FLOOR_SCAN, db), {}),
    ]
    for peer in peers:
        sides.insert(1, (f"clew ({peer})", clew(db, "verify"), {"PYTHONPATH": peer}))
    rows = []
    for r in range(rounds):
        for name, argv, env in sides if r % 2 == 0 else sides[::-1]:
            rows.append([name, str(r + 1), *run_measured(argv, env=env).cells()])
    header("verify as a whole process", ("store", db), ("rounds", str(rounds)))
    print()
    print(table(["side", "round", "wall s", "CPU s", "peak RSS MB"], rows))


def profile_command(name: str, db: str, argv: list[str], folder: str, top: int = 15) -> str:
    """clew's `argv` on `db` under cProfile: the functions with the most own time, as a
    share of the whole process, so that what is left is named, not guessed."""
    import io
    import pstats

    stats_file = os.path.join(folder, "command.prof")
    run_measured([sys.executable, "-m", "cProfile", "-o", stats_file, *clew(db, *argv)[1:]])
    out = io.StringIO()
    stats = pstats.Stats(stats_file, stream=out)
    total = stats.total_tt  # type: ignore[attr-defined]
    entries = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]  # type: ignore[attr-defined]
    lines = [f"{name} under cProfile: {total:.1f} s; top {top} by own time", ""]
    lines.append(f"{'own s':>7} {'share':>6} {'calls':>9}  function")
    for (path, line, name), (_, calls, own, _cum, _callers) in entries:
        where = f"{os.path.basename(path)}:{line}" if line else path
        lines.append(f"{own:7.2f} {own / total:6.1%} {calls:9,}  {name} ({where})")
    return "\n".join(lines)


def _only_session(db: str) -> str:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("SELECT id FROM sessions").fetchone()[0])
    finally:
        conn.close()


if __name__ == "__main__":
    main()
