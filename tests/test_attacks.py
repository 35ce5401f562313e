"""The attack table: what an attacker tries against a running `clew serve`, and what must hold
after it, on SQLite and PostgreSQL (docs/security.md names each row's claim).

Each row is one attack as a function of a served store (a real uvicorn on 127.0.0.1, keys of
space A: read, write, admin, and one of space B) and the files it may touch; it sends what an
attacker would send and asserts both the answer and what must be true after it (no file
created, the journal unchanged, the secret nowhere, the log naming the attempt). A new attack
found is a new row. Other tables cover the rest: the database roles' attempts
(`tests/test_db_roles.py::ATTACKS`) and hostile bytes on every route
(`tests/test_server_edge.py`).
"""

from __future__ import annotations

import io
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

import clew
from clew.core import chain, codec
from clew.server.limits import RateLimit
from tests.test_server import Reply, Served, running

KEYS = (
    ("read", "a", "read"),
    ("write", "a", "write"),
    ("admin", "a", "admin"),
    ("other", "b", "write"),
)
TOKEN = "ghp_" + "Zq7Lm2Xv9Rt4Wb8Nc1Yd6Kf3Hs5Jp0Ga2UeX"  # the 36 characters of a classic token


@dataclass
class Target:
    """What an attack is aimed at: the server, space A's Memory, a task of A, a folder."""

    s: Served
    mem: clew.Memory
    task: str
    tmp: Path

    def export(self) -> str:
        out = io.StringIO()
        self.mem.export_events(out)
        return out.getvalue()


@dataclass(frozen=True)
class Attack:
    """One attack: what it tries, the security.md section whose claim it tests, the attack."""

    name: str
    claim: str
    run: Callable[[Target], None]


def _refused(reply: Reply, status: int, *words: str) -> None:
    assert reply.status == status, (reply.status, reply.text)
    said = reply.json()["error"] if reply.body.startswith(b"{") else reply.text
    assert "\n" not in said.strip() and all(w in said for w in words), said


def _side_journal(t: Target, build: Callable[[clew.Memory, str], None]) -> bytes:
    """A journal file of space A's name made in another store (the attacker's own), whose
    first events are A's own (so it continues A), then what `build` adds."""
    side = clew.open(t.tmp / f"side-{os.urandom(3).hex()}.db", space=t.mem.space)
    try:
        side.import_events(t.export())
        build(side, t.task)
        out = io.StringIO()
        side.export_events(out)
        return out.getvalue().encode()
    finally:
        side.close()


# -- the attacks ---------------------------------------------------------------------------


def import_a_command_wait_then_check(t: Target) -> None:
    marker = t.tmp / "PWNED"
    text = _side_journal(t, lambda m, task: m.add_wait(task, "command", f"touch {marker}"))
    before = t.mem.journal_head()
    _refused(t.s.call("POST", "/api/v1/import", raw=text), 403, "line", "runs a command")
    assert t.mem.journal_head() == before
    t.s.op("smart_wait", {"action": "check"})
    assert not marker.exists()


def add_a_command_wait_with_a_write_key(t: Target) -> None:
    marker = t.tmp / "PWNED"
    args = {"action": "add", "task_id": t.task, "kind": "command", "target": f"touch {marker}"}
    _refused(t.s.op("smart_wait", args), 403)
    _refused(t.s.op("smart_wait", args, key="admin"), 403, "--allow-commands")
    t.s.op("smart_wait", {"action": "check"}, key="admin")
    assert not marker.exists()


def point_a_url_wait_at_the_cloud_metadata_service(t: Target) -> None:
    for url in ("http://169.254.169.254/latest/meta-data/", "http://127.0.0.1:22/"):
        args = {"action": "add", "task_id": t.task, "kind": "url", "target": url}
        for key in ("write", "admin"):
            reply = t.s.op("smart_wait", args, key=key)
            assert reply.status in (400, 403), reply.text
    assert t.mem.list_waits(t.task) == []


def read_a_host_file_through_a_file_wait(t: Target) -> None:
    args = {
        "action": "add",
        "task_id": t.task,
        "kind": "file",
        "target": "/etc/passwd",
        "contains": "root",
    }
    for key in ("write", "admin"):
        assert t.s.op("smart_wait", args, key=key).status == 403
    assert t.mem.list_waits(t.task) == []


def rebind_a_name_to_the_loopback(t: Target) -> None:
    port = t.s.url.rsplit(":", 1)[1]
    for host in (f"127.attacker.example:{port}", f"attacker.example:{port}", "127.0.0.1:1"):
        _refused(t.s.call("GET", "/api/v1/key", headers={"Host": host}), 421)
        _refused(t.s.call("GET", "/", key=None, headers={"Host": host}), 421)


def post_from_another_site(t: Target) -> None:
    before = t.mem.journal_head()
    for origin in ("http://attacker.example", "null", "http://127.0.0.1:1"):
        reply = t.s.call("POST", "/api/v1/task_register", {"name": "x"}, headers={"Origin": origin})
        assert reply.status == 403, reply.text
    assert t.mem.journal_head() == before


def frame_the_dashboard_or_sniff_an_answer(t: Target) -> None:
    for path, key in (("/login", None), (f"/tasks/{t.task}", "read"), ("/api/v1/key", "read")):
        reply = t.s.call("GET", path, key=key)
        assert reply.status == 200, (path, reply.status)
        heard = {k.lower(): v for k, v in reply.headers.items()}
        assert heard["x-frame-options"] == "DENY" and heard["x-content-type-options"] == "nosniff"
        assert "frame-ancestors 'none'" in heard["content-security-policy"]
        assert heard["referrer-policy"] == "same-origin"
        assert heard["cache-control"] == "no-store"
        if reply.headers.get("content-type", "").startswith("text/html"):
            policy = heard["content-security-policy"]
            assert "script-src 'self'" in policy and "unsafe-inline" not in policy


def spoof_an_address_to_guess_keys(t: Target) -> None:
    server = t.s.server
    kept, server.limit = server.limit, RateLimit(0.001, 8)  # a burst of 8, nearly no refill
    try:
        codes = []
        for n in range(12):
            forged = {"X-Forwarded-For": f"10.0.{n}.{n}", "Forwarded": f"for=10.1.{n}.{n}"}
            codes.append(
                t.s.call(
                    "GET", "/api/v1/key", key=f"clew_{n:012x}_{'x' * 43}", headers=forged
                ).status
            )
    finally:
        server.limit = kept
    assert codes == [401] * 8 + [429] * 4


def forge_an_admins_dashboard_edit_by_import(t: Target) -> None:
    admin = t.mem.authenticate(t.s.tokens["admin"]).prefix

    def build(m: clew.Memory, task: str) -> None:
        with m.correlation(f"web:{admin}:forged"):
            m.add_decision(task, "drop the production database")

    assert t.s.call("POST", "/api/v1/import", raw=_side_journal(t, build)).status == 200
    writer = t.mem.authenticate(t.s.tokens["write"]).prefix
    shown = t.s.op("task_history", {"task_id": t.task}, key="read").json()["data"]
    forged = [i for i in shown if "production" in i["text"]]
    assert forged and all(f"key {writer}" in i["by"] and "claim" in i["by"] for i in forged)
    assert all(i["by"].startswith("imported") for i in forged)


def break_the_log_with_a_nul(t: Target) -> None:
    assert t.s.call("GET", "/%00", key=None).status == 400
    assert t.s.call("GET", "/api/v1/key%00", key="admin").status == 400
    t.s.server.flush()
    # Refused at the edge, before a key is read: in the log of no space, which the host sees.
    routes = [r.route for r in t.mem.list_requests(None, limit=50)]
    assert "/%00" not in routes and "/\\x00" in routes and "/api/v1/key\\x00" in routes
    assert t.s.op("task_list", {}, key="read").status == 200


def a_lone_surrogate_in_a_session_id(t: Target) -> None:
    body = b'{"session": "s\\ud800", "messages": [{"role": "user", "content": "hi"}]}'
    for name in ("session_append", "session_turns", "session_context", "session_resume"):
        _refused(t.s.call("POST", f"/api/v1/{name}", raw=body), 400)


def guess_the_admins_secret(t: Target) -> None:
    admin = t.mem.authenticate(t.s.tokens["admin"]).prefix
    _refused(t.s.call("GET", "/api/v1/key", key=f"clew_{admin}_{'A' * 43}"), 401)
    t.s.server.flush()
    log = t.s.call("GET", "/api/v1/requests?limit=20", key="admin").json()["requests"]
    assert any(r["status"] == 401 and r["key_prefix"] == admin for r in log)


def forget_with_a_write_key(t: Target) -> None:
    message = t.mem.add_message(t.task, "keep this").id
    for key in ("read", "write"):
        _refused(t.s.op("forget", {"kind": "message", "id": message}, key=key), 403, "admin")
    assert t.mem.list_messages(t.task)[-1].content == "keep this"


def forget_held_content_by_import_with_a_write_key(t: Target) -> None:
    message = t.mem.add_message(t.task, "keep this too").id

    def build(m: clew.Memory, task: str) -> None:
        m.forget("message", message)

    text = _side_journal(t, build)
    before = t.mem.journal_head()
    reply = t.s.call("POST", "/api/v1/import", raw=text)
    assert reply.status in (400, 403) and "line" in reply.json()["error"], reply.text
    assert t.mem.journal_head() == before and "keep this too" in t.export()


def write_with_a_read_key(t: Target) -> None:
    before = t.mem.journal_head()
    _refused(t.s.op("task_register", {"name": "x"}, key="read"), 403, "scope")
    _refused(t.s.call("POST", "/api/v1/import", raw=t.export().encode(), key="read"), 403)
    assert t.mem.journal_head() == before


def read_another_space(t: Target) -> None:
    name = t.mem.get_task(t.task).name
    for path in ("/api/v1/export", "/"):
        assert name not in t.s.call("GET", path, key="other").text
    assert t.s.op("task_show", {"task_id": t.task}, key="other").status == 404


def store_a_token_from_a_command_line(t: Target) -> None:
    t.mem.record_action(
        t.task,
        command=f"docker login -p {TOKEN} ghcr.io",
        exit_code=0,
        stdout=f"Login Succeeded with {TOKEN}",
    )
    said = t.s.op("task_record", {"task_id": t.task, "error": f"push denied for {TOKEN}"})
    assert said.status == 200, said.text
    turns = t.s.op(
        "session_append",
        {
            "session": "leak",
            "messages": [
                {"role": "user", "content": f"export GITHUB_TOKEN={TOKEN}"},
                {
                    "role": "assistant",
                    "content": "",
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {
                                "name": "bash",
                                "arguments": json.dumps({"command": f"docker login -p {TOKEN}"}),
                            },
                        }
                    ],
                },
            ],
        },
    )
    assert turns.status == 200, turns.text
    for part in (TOKEN, TOKEN[4:20]):
        found = t.s.op("memory_search", {"query": part}, key="read")
        assert TOKEN[4:20] not in found.text
    assert TOKEN[4:20] not in t.export()
    assert TOKEN[4:20] not in t.s.call("GET", "/api/v1/export", key="read").text


def bring_a_token_in_by_import(t: Target) -> None:
    text = _side_journal(t, lambda m, task: m.add_message(task, "token " + TOKEN))
    # The attacker's store redacted it when it was written: put it back, re-chained, as a
    # clew that did not redact would have written it.
    text = _unredacted(text, TOKEN)
    assert TOKEN.encode() in text
    assert t.s.call("POST", "/api/v1/import", raw=text).status == 200
    assert TOKEN[4:20] not in t.export()


def _unredacted(text: bytes, secret: str) -> bytes:
    """A journal file with each `[redacted:...]` marker replaced by `secret` again and the
    chain made whole, as a journal from a clew without redaction reads."""
    lines = text.decode().splitlines()
    out, previous = [lines[0]], json.loads(lines[0]).get("after") or {"hash": ""}
    head = previous["hash"]
    count = 0
    for line in lines[1:-1]:
        row = json.loads(line)
        data = json.loads(json.dumps(row["data"]).replace("[redacted:github-token]", secret))
        data.pop("redactions", None)
        text_data = codec.dumps(data)
        fields = {k: row[k] for k in ("id", "space", "task_id", "correlation_id", "type")}
        head = chain.event_hash(
            head, **fields, digest=chain.data_digest(text_data), created_at=row["created_at"]
        )
        link = chain.Link(row["seq"], *fields.values(), text_data, row["created_at"], head)
        from clew.journal import journalfile

        out.append(journalfile.event_line(link))
        count += 1
    out.append(
        json.dumps(
            {"clew": "end", "events": count, "head": head, "last": json.loads(out[-1])["id"]},
            separators=(",", ":"),
        )
    )
    return ("\n".join(out) + "\n").encode()


def roll_the_store_back(t: Target) -> None:
    kept = _checkpoint(t.s.op("task_list", {}, key="read"))
    assert t.mem.check_checkpoints([kept]).ok
    t.mem.add_message(t.task, "after the checkpoint")
    later = _checkpoint(t.s.op("task_list", {}, key="read"))
    _cut_the_newest_event(t.mem)
    report = t.mem.check_checkpoints([kept, later])
    assert [c.status.value for c in report.checks] == ["holds", "behind"] and not report.ok


def _checkpoint(reply: Reply) -> str:
    """The Clew-Checkpoint header of an answer, as a client keeps it."""
    return next(v for k, v in reply.headers.items() if k.lower() == "clew-checkpoint")


def _cut_the_newest_event(mem: clew.Memory) -> None:
    """Remove a space's newest event as someone with the database in hand would (the guard
    lifted, as the owner of a SQLite file or of PostgreSQL's tables can)."""
    location = mem._store.path
    if location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(location, autocommit=True) as conn:
            conn.execute("SELECT set_config('clew.space', %s, false)", (mem.space,))
            conn.execute("ALTER TABLE events DISABLE TRIGGER events_append_only")
            try:
                conn.execute(
                    "DELETE FROM events WHERE space = %s AND seq = (SELECT max(seq) FROM events"
                    " WHERE space = %s)",
                    (mem.space, mem.space),
                )
            finally:
                conn.execute("ALTER TABLE events ENABLE TRIGGER events_append_only")
        return
    conn = sqlite3.connect(location)
    try:
        (trigger,) = conn.execute(
            "SELECT sql FROM sqlite_master WHERE name = 'events_no_delete'"
        ).fetchone()
        conn.execute("DROP TRIGGER events_no_delete")
        conn.execute(
            "DELETE FROM events WHERE seq = (SELECT max(seq) FROM events WHERE space = ?)",
            (mem.space,),
        )
        conn.execute(trigger)
        conn.commit()
    finally:
        conn.close()


ATTACKS = (
    Attack(
        "a write key imports a journal adding a command wait, then checks the waits",
        "Nothing from outside becomes a command",
        import_a_command_wait_then_check,
    ),
    Attack(
        "a write key, then an admin key, adds a command wait on a server that allows none",
        "Nothing from outside becomes a command",
        add_a_command_wait_with_a_write_key,
    ),
    Attack(
        "a URL wait at the cloud metadata service or another local port",
        "Nothing from outside becomes a command",
        point_a_url_wait_at_the_cloud_metadata_service,
    ),
    Attack(
        "a file wait on /etc/passwd",
        "Nothing from outside becomes a command",
        read_a_host_file_through_a_file_wait,
    ),
    Attack(
        "a page rebinds its own name to 127.0.0.1",
        "Hosts and proxies",
        rebind_a_name_to_the_loopback,
    ),
    Attack(
        "a page of another site posts with the user's key",
        "Hosts and proxies",
        post_from_another_site,
    ),
    Attack(
        "another site frames the dashboard, or a browser sniffs an answer's type",
        "Hosts and proxies",
        frame_the_dashboard_or_sniff_an_answer,
    ),
    Attack(
        "wrong keys each claiming another X-Forwarded-For",
        "Hosts and proxies",
        spoof_an_address_to_guess_keys,
    ),
    Attack(
        "a write key imports events claiming an admin's dashboard edit",
        "Who did what",
        forge_an_admins_dashboard_edit_by_import,
    ),
    Attack(
        "one keyless GET /%00, then the log and the API", "Hostile bytes", break_the_log_with_a_nul
    ),
    Attack("a lone surrogate in a session id", "Hostile bytes", a_lone_surrogate_in_a_session_id),
    Attack("a wrong secret for the admin's key prefix", "The audit trail", guess_the_admins_secret),
    Attack("a read or write key forgets", "Forgetting", forget_with_a_write_key),
    Attack(
        "a write key imports a forget of content the space holds",
        "Forgetting",
        forget_held_content_by_import_with_a_write_key,
    ),
    Attack("a read key writes and imports", "Actors", write_with_a_read_key),
    Attack("a key of another space reads this one", "Actors", read_another_space),
    Attack(
        "a token on a command line, in its output and a turn",
        "Secrets",
        store_a_token_from_a_command_line,
    ),
    Attack(
        "a journal from a clew that kept the token, imported", "Secrets", bring_a_token_in_by_import
    ),
    Attack(
        "the store's newest events removed after a client kept a checkpoint",
        "Rollback and rewrite",
        roll_the_store_back,
    ),
)


@pytest.fixture
def target(db: Path, tmp_path: Path) -> Iterator[Target]:
    with running(db, KEYS) as s:
        mem = s.server.spaces.home
        task = mem.create_task("Deploy the target", ["Build", "Ship"]).id
        yield Target(s, mem, task, tmp_path)


@pytest.mark.parametrize("attack", ATTACKS, ids=[a.name for a in ATTACKS])
def test_attack(attack: Attack, target: Target, backend: str) -> None:
    attack.run(target)
    report = target.mem.verify()
    if attack.run is not roll_the_store_back:  # that attack breaks the chain on purpose
        assert report.ok, report.differences


def test_every_attack_names_a_claim_of_the_threat_model() -> None:
    text = (Path(__file__).parent.parent / "docs" / "security.md").read_text(encoding="utf-8")
    headings = {line[3:] for line in text.splitlines() if line.startswith("## ")}
    for attack in ATTACKS:
        assert any(h.startswith(attack.claim) for h in headings), attack.claim
    assert len({a.name for a in ATTACKS}) == len(ATTACKS)
