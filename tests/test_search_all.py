"""Search over everything recorded: entries, task messages, commands with their output,
conversation turns and the trace's decisions; the index of messages, commands and decisions
(kept by triggers, bounded, filled for older stores, checked by verify); `seen` over failed
commands' output; the recall tools' default session; sentences that keep their dots."""

from __future__ import annotations

import json
import math
import shlex
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import clew
from clew.archive.extraction import rules, sentences
from clew.models import RECORD_KINDS, Message, MessageRole, MessageType
from clew.store.migrations import OUTPUT_HEAD, OUTPUT_TAIL
from clew.tools import registry as tools
from tests.conftest import Result
from tests.old_stores import undo_migration_10, undo_migration_12

Cli = Callable[..., Result]


def clew_process(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m clew --db DB ARGS...` as a real process."""
    return subprocess.run(
        [sys.executable, "-m", "clew", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def record_one_of_each(mem: clew.Memory, word: str) -> dict[str, str]:
    """An entry, a message, a failed command (the word in its stderr), a turn, a trace
    decision (the word in its error): their ids."""
    task = mem.create_task("Deploy", ["build", "ship"])
    entry = mem.add_decision(task.id, f"Use {word} for the images")
    mem.update_task(task.id, message=f"pushed to {word} at last")
    message = mem.list_messages(task.id)[0]
    action = mem.record_action(
        task.id, command="docker push app", exit_code=1, stderr=f"denied by {word}\n"
    )
    decision = mem.trace_decision(
        task.id, "retry the push with a token", outcome="failure", error=f"still refused by {word}"
    )
    session = mem.start_session(workspace="/srv/app")
    hello = mem.append_turn(session.id, {"role": "user", "content": "hello"})
    turn = mem.append_turn(session.id, {"role": "user", "content": f"please use {word}"})
    return {
        "entry": entry.id,
        "message": message.id,
        "action": action.id,
        "turn": turn.id,
        "decision": decision.id,
        "task": task.id,
        "session": session.id,
        "hello": hello.id,
    }


def test_search_finds_every_kind_and_each_open_command_shows_it(db: Path, cli: Cli) -> None:
    with clew.open(db) as mem:
        ids = record_one_of_each(mem, "kestrel")
        # A store's other spaces (the PostgreSQL half runs in one) are named in the command.
        space = "" if mem.space == "default" else f" --space {mem.space}"
    done = clew_process(db, "search", "kestrel", "--json")  # the real command, once
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # The turn before the one that matches ranks too (as its neighbour), below every match.
    hits = [h for h in found if h["id"] != ids["hello"]]
    assert found[-1]["id"] == ids["hello"]
    assert {h["kind"]: h["id"] for h in hits} == {k: ids[k] for k in RECORD_KINDS}
    by_kind = {h["kind"]: h for h in hits}
    assert by_kind["action"]["open"] == f"clew task output {ids['action']} --stderr{space}"
    assert by_kind["turn"]["open"] == f"clew recall {ids['session']} --around 2{space}"
    assert by_kind["decision"]["open"] == f"clew trace show {ids['task']}{space}"
    assert by_kind["decision"]["label"] == "decision failure"
    assert by_kind["action"]["label"] == "failed exit 1"
    for hit in hits:
        # The printed command really works, and shows the record with the word in it (run
        # through the CLI's main in-process: the command's words are the point, not a process).
        words = shlex.split(hit["open"])
        assert words[0] == "clew"
        opened = cli(*words[1:])
        assert opened.code == 0, (hit["open"], opened.err)
        assert "kestrel" in opened.out, hit["open"]
    text = cli("search", "kestrel").out
    assert text.count("open: clew ") == 6 and "[failed exit 1]" in text


def test_kind_narrows_and_filters_keep_working(mem: clew.Memory) -> None:
    ids = record_one_of_each(mem, "kestrel")
    # The turn that matches, then the turn before it (its neighbour).
    turns = mem.search_all("kestrel", kinds="turn")
    assert [h.id for h in turns] == [ids["turn"], ids["hello"]]
    assert turns[0].score > turns[1].score
    two = mem.search_all("kestrel", kinds=["message", "action"])
    assert sorted(h.kind for h in two) == ["action", "message"]
    assert sorted(h.kind for h in mem.search_all("kestrel", kinds="entry, turn")) == [
        "entry",
        "turn",
        "turn",
    ]
    # --task keeps the task's records; turns count when their session belongs to the task.
    other = mem.create_task("Other", ["one"])
    mem.update_task(other.id, message="kestrel elsewhere")
    mine = mem.search_all("kestrel", task_id=ids["task"])
    assert {h.kind for h in mine} == {"entry", "message", "action", "decision"}
    mem.update_session(ids["session"], task_id=ids["task"])
    assert "turn" in {h.kind for h in mem.search_all("kestrel", task_id=ids["task"])}
    # Entry filters mean entries only; time filters apply to every kind.
    assert {h.kind for h in mem.search_all("kestrel", type="decision")} == {"entry"}
    assert mem.search_all("kestrel", since="2099-01-01") == []
    assert len(mem.search_all("kestrel", limit=2)) == 2
    # Memory.search is unchanged: entries, as SearchHits.
    assert [h.entry.id for h in mem.search("kestrel")] == [ids["entry"]]


def test_cli_kind_is_repeatable_and_takes_a_comma_list(cli: Cli, mem: clew.Memory) -> None:
    record_one_of_each(mem, "kestrel")
    kinds = {
        h["kind"]
        for h in json.loads(
            cli("search", "kestrel", "--kind", "turn", "--kind", "entry", "--json").out
        )
    }
    assert kinds == {"turn", "entry"}
    kinds = {
        h["kind"]
        for h in json.loads(cli("search", "kestrel", "--kind", "action,message", "--json").out)
    }
    assert kinds == {"action", "message"}


def test_identifiers_rank_exact_hits_first_across_kinds(mem: clew.Memory) -> None:
    task = mem.create_task("Net", ["one"])
    mem.add_finding(task.id, "err conn reset shows up under load, err conn reset again")
    action = mem.record_action(task.id, command="curl x", exit_code=7, stderr="ERR_CONN_RESET\n")
    assert mem.search_all("ERR_CONN_RESET")[0].id == action.id


def test_a_huge_output_is_indexed_by_its_head_and_tail(mem: clew.Memory, db: Path) -> None:
    task = mem.create_task("Logs", ["one"])
    middle = "filler " * (10 * 1024 * 1024 // 7)
    output = f"alphahead starts\n{middle} middleword {middle}\nomegatail ends\n"
    action = mem.record_action(task.id, command="make logs", exit_code=2, stdout=output)
    assert [h.id for h in mem.search_all("alphahead")] == [action.id]
    assert [h.id for h in mem.search_all("omegatail")] == [action.id]
    assert mem.search_all("middleword") == []  # the middle of 10 MB is not indexed
    assert mem.get_action(action.id).stdout == output  # the row keeps it all
    ((size,),) = mem._store._rows(
        "SELECT max(length(body)) FROM record_docs WHERE space = $1", (mem.space,)
    )
    assert size <= OUTPUT_HEAD + OUTPUT_TAIL + 3
    assert mem.verify().ok


def test_binary_output_is_indexed_and_the_index_stays_sound(mem: clew.Memory) -> None:
    task = mem.create_task("Bytes", ["one"])
    action = mem.record_action(
        task.id, command="./tool", exit_code=1, stderr=b"\xff\xfe boom zebrafish \x80\n"
    )
    assert [h.id for h in mem.search_all("zebrafish")] == [action.id]
    assert mem.verify().ok


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=st.one_of(st.none(), st.text(max_size=300), st.binary(max_size=300)),
    second=st.one_of(st.none(), st.text(max_size=300), st.binary(max_size=300)),
)
def test_the_records_index_follows_any_output_and_any_update(
    tmp_path_factory: pytest.TempPathFactory, first: str | bytes | None, second: str | bytes | None
) -> None:
    with clew.open(tmp_path_factory.mktemp("prop") / "clew.db") as mem:
        task = mem.create_task("Prop", ["one"])
        started = mem.record_action(task.id, command="run it", status="started", stdout=first)
        mem.finish_action(started.id, exit_code=3, stderr=second, stdout="quokka")
        mem.update_task(
            task.id, message="x" if not isinstance(first, str) or not first.strip() else first
        )
        assert mem.verify().ok
        assert [h.id for h in mem.search_all("quokka", kinds="action")] == [started.id]


@pytest.mark.sqlite_only("takes a SQLite file back to schema 6 by hand")
def test_an_older_store_gets_its_records_indexed_when_opened(db: Path) -> None:
    with clew.open(db) as mem:
        ids = record_one_of_each(mem, "kestrel")
    # Take the store back to schema 6: no records index, the rows still there. (Task records
    # came later; their rows are put back as they were once the schema has them again.)
    conn = sqlite3.connect(db)
    undo_migration_10(conn)
    kept = conn.execute("SELECT * FROM task_records").fetchall()
    conn.executescript(
        """
        DROP TABLE waits; DROP TABLE schedule; DROP INDEX tasks_archived;
        ALTER TABLE tasks DROP COLUMN archived_at; DELETE FROM clew_migrations WHERE number = 8;
        DROP TRIGGER records_action_insert; DROP TRIGGER records_action_update;
        DROP TRIGGER records_action_delete; DROP TRIGGER records_message_insert;
        DROP TRIGGER records_message_delete; DROP TABLE records_fts; DROP TABLE record_docs;
        DROP TABLE step_records; DROP TABLE task_records;
        DELETE FROM clew_migrations WHERE number >= 7;
        """
    )
    conn.close()
    with clew.open(db):
        pass
    conn = sqlite3.connect(db)
    marks = ", ".join("?" for _ in kept[0])
    conn.executemany(f"INSERT INTO task_records VALUES ({marks})", kept)
    conn.commit()
    conn.close()
    with clew.open(db) as mem:
        found = {h.kind: h.id for h in mem.search_all("kestrel")}
        assert found["action"] == ids["action"] and found["message"] == ids["message"]
        assert found["decision"] == ids["decision"]
        assert mem.verify().ok


@pytest.mark.sqlite_only("damages the SQLite file; test_pg_search checks PostgreSQL's")
def test_verify_reports_a_damaged_records_index(mem: clew.Memory, db: Path) -> None:
    ids = record_one_of_each(mem, "kestrel")
    assert mem.verify().ok
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM record_docs WHERE ref_id = ?", (ids["message"],))
    conn.commit()
    found = [d for d in mem.verify().differences if d.table == "records_fts"]
    assert found and "1 message(s), command(s) or decision(s) are not in the search index" in (
        found[0].stored
    )
    # A document whose text was edited (the index then disagrees with it) is caught too.
    conn.execute("INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
    conn.execute("UPDATE record_docs SET body = 'edited' WHERE ref_id = ?", (ids["action"],))
    conn.commit()
    conn.close()
    found = [d for d in mem.verify().differences if d.table == "records_fts"]
    assert found and "1 differ from their row" in found[0].stored


# -- decisions of the trace ----------------------------------------------------------------


def test_a_decision_is_found_by_its_action_and_its_error_and_filtered(mem: clew.Memory) -> None:
    # Keyword search: by meaning, the other decisions about a registry would rank too.
    task = mem.create_task("Deploy", ["build", "ship"])
    ship = mem.trace_decision(
        task.id,
        "Switch the image registry to ghcr.io\nthe hub throttles pulls",
        outcome="failure",
        error="quota exceeded on the mirror",
        agent="planner",
        state="EXECUTING",
        context={"why": "rate limited"},
        artifacts={"file": "deploy.yaml"},
        step=2,
    )
    build = mem.trace_decision(task.id, "Pin the registry digest", step=1)
    other = mem.create_task("Other", ["one"])
    elsewhere = mem.trace_decision(other.id, "Use the registry cache", error="mirror offline")
    # By its action: the hit says what it is, where it belongs and how it turned out.
    (hit,) = mem.search_all("ghcr.io", mode="keyword", kinds="decision")
    assert (hit.kind, hit.id, hit.task_id, hit.step_id) == (
        "decision",
        ship.id,
        task.id,
        ship.plan_item_id,
    )
    assert hit.label == "decision failure" and hit.field == "action"
    assert hit.title == "Switch the image registry to ghcr.io"  # its first line
    assert "[ghcr.io]" in hit.snippet or "[ghcr]" in hit.snippet
    assert hit.created_at == ship.created_at and hit.score > 0
    space = "" if mem.space == "default" else f" --space {mem.space}"
    assert hit.open == f"clew trace show {task.id}{space}"
    # By its error words, and by its agent and artifacts: found in how it turned out.
    (by_error,) = mem.search_all("quota exceeded", mode="keyword", kinds="decision")
    assert by_error.id == ship.id and by_error.field == "outcome"
    assert "[quota]" in by_error.snippet
    assert [h.id for h in mem.search_all("deploy.yaml", mode="keyword", kinds="decision")] == [
        ship.id
    ]
    # Without kinds, search over everything finds it too.
    assert ship.id in [h.id for h in mem.search_all("quota exceeded", mode="keyword")]
    # Task and step filters keep a decision of that task and step, and no other.
    found = {h.id for h in mem.search_all("registry", mode="keyword", kinds="decision")}
    assert found == {ship.id, build.id, elsewhere.id}
    assert {h.id for h in mem.search_all("registry", mode="keyword", task_id=task.id)} == {
        ship.id,
        build.id,
    }
    assert [h.id for h in mem.search_all("registry", mode="keyword", task_id=task.id, step=2)] == [
        ship.id
    ]
    assert [h.id for h in mem.search_all("registry", mode="keyword", task_id=task.id, step=1)] == [
        build.id
    ]
    assert [h.id for h in mem.search_all("mirror", mode="keyword", task_id=other.id)] == [
        elsewhere.id
    ]
    # Validating a decision changes nothing searchable: the index stays sound.
    mem.trace_validation(ship.id, passed=False, feedback="still throttled")
    assert mem.verify().ok


def test_a_decision_found_by_meaning_alone_is_described(mem: clew.Memory) -> None:
    task = mem.create_task("Deploy", ["build"])
    decision = mem.trace_decision(task.id, "Roll back the release\nthen page", step=1)
    described = mem.retrieval._describe([("decision", decision.id), ("decision", "gone")])
    hit = described[("decision", decision.id)]
    assert (hit.kind, hit.title, hit.label) == (
        "decision",
        "Roll back the release",
        "decision success",
    )
    assert hit.task_id == task.id and hit.step_id == decision.plan_item_id
    assert ("decision", "gone") not in described  # deleted since it was embedded


def test_the_decision_open_command_shows_its_error(db: Path, cli: Cli) -> None:
    with clew.open(db) as mem:
        task = mem.create_task("Deploy", ["build"])
        mem.trace_decision(task.id, "push again", outcome="retry", error="refused by kestrel")
        (hit,) = mem.search_all("kestrel", kinds="decision")
    opened = cli(*shlex.split(hit.open)[1:])
    assert opened.code == 0, opened.err
    assert "push again -> retry" in opened.out and "error: refused by kestrel" in opened.out


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    action=st.text(min_size=1, max_size=200).filter(str.strip),
    error=st.one_of(st.none(), st.text(max_size=200).filter(str.strip)),
    context=st.one_of(
        st.none(), st.dictionaries(st.text(max_size=8), st.text(max_size=40), max_size=3)
    ),
)
def test_the_records_index_follows_any_decision(
    tmp_path_factory: pytest.TempPathFactory,
    action: str,
    error: str | None,
    context: dict[str, str] | None,
) -> None:
    with clew.open(tmp_path_factory.mktemp("prop") / "clew.db") as mem:
        task = mem.create_task("Prop", ["one"])
        made = mem.trace_decision(
            task.id, action, error=error, context=context, artifacts={"marker": "wombat"}
        )
        assert mem.verify().ok
        assert [h.id for h in mem.search_all("wombat", kinds="decision")] == [made.id]


def test_a_huge_decision_is_indexed_by_its_head_and_tail(mem: clew.Memory) -> None:
    task = mem.create_task("Big", ["one"])
    filler = "filler " * 20_000
    log = f"{filler} middleword {filler} omegatail"
    made = mem.trace_decision(
        task.id, "load the dump", error="alphahead failed", context={"log": log}
    )
    assert [h.id for h in mem.search_all("alphahead", kinds="decision")] == [made.id]
    assert [h.id for h in mem.search_all("omegatail", kinds="decision")] == [made.id]
    assert mem.search_all("middleword", kinds="decision") == []
    assert mem.verify().ok


@pytest.mark.sqlite_only("takes a SQLite file back to schema 10 by hand")
def test_an_older_store_gets_its_decisions_indexed_at_migration_12(db: Path) -> None:
    with clew.open(db) as mem:
        task = mem.create_task("Old", ["one", "two"])
        made = [
            mem.trace_decision(
                task.id, f"decision {n} about the gannet", step=n % 2 + 1, error=f"reason {n}"
            )
            for n in range(4)
        ]
        action = mem.record_action(task.id, command="echo gannet", exit_code=0)
    conn = sqlite3.connect(db)
    undo_migration_12(conn)
    assert conn.execute("SELECT count(*) FROM record_docs WHERE kind = 'decision'").fetchone()
    assert conn.execute("SELECT max(number) FROM clew_migrations").fetchone() == (11,)
    conn.close()
    with clew.open(db) as mem:
        assert mem.verify().ok
        found = mem.search_all("gannet", kinds=["decision", "action"], limit=10)
        assert {h.id for h in found} == {d.id for d in made} | {action.id}
        assert mem.search_all("reason 3", kinds="decision")[0].id == made[3].id
    conn = sqlite3.connect(db)
    # Their documents follow the decisions' order, after the documents made before.
    order = [r[0] for r in conn.execute("SELECT ref_id FROM record_docs ORDER BY seq")]
    assert order == [action.id, *(d.id for d in made)]
    conn.close()


@pytest.mark.sqlite_only("edits the SQLite file by hand; test_pg_search checks PostgreSQL's")
def test_verify_reports_a_decision_missing_from_the_index(mem: clew.Memory, db: Path) -> None:
    task = mem.create_task("Deploy", ["one"])
    made = mem.trace_decision(task.id, "retry the push", error="denied by kestrel")
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO records_fts (records_fts, rowid, title, body, stderr) SELECT 'delete', seq,"
        " title, body, stderr FROM record_docs WHERE ref_id = ?",
        (made.id,),
    )
    conn.execute("DELETE FROM record_docs WHERE ref_id = ?", (made.id,))
    conn.commit()
    found = [d for d in mem.verify().differences if d.table == "records_fts"]
    assert found and found[0].stored.startswith("1 message(s), command(s) or decision(s)")
    # A decision deleted by hand takes its document with it.
    conn.execute(
        "INSERT INTO record_docs (kind, ref_id, space, task_id, created_at, title, body,"
        " stderr) VALUES ('decision', ?, ?, ?, '2026', 'x', 'y', '')",
        (made.id, mem.space, task.id),
    )
    conn.execute("INSERT INTO records_fts (records_fts) VALUES ('rebuild')")
    conn.execute("DELETE FROM trace_decisions WHERE id = ?", (made.id,))
    conn.commit()
    assert conn.execute("SELECT count(*) FROM record_docs").fetchone() == (0,)
    conn.close()


def test_seen_finds_the_failed_make_by_its_output(db: Path, cli: Cli) -> None:
    line = "make: *** [Makefile:2: all] Error 2"
    made = cli("task", "new", "Build", "--plan", "compile")
    task = made.out.strip()
    failed = cli(
        "task",
        "action",
        task,
        "-c",
        "make",
        "--exit-code",
        "2",
        "--stderr",
        f"cc -o app main.c\nmain.c:3: error\n{line}\n",
    )
    assert failed.code == 0, failed.err
    action = failed.out.strip().split()[0]
    # The same output from a command that passed is not a failure seen before.
    cli("task", "action", task, "-c", "make -k", "--exit-code", "0", "--stdout", line)
    seen = clew_process(db, "seen", line)  # the real command, once
    assert seen.returncode == 0, seen.stderr
    assert f"command {action}" in seen.stdout and "exit 2" in seen.stdout
    assert "seen once" in seen.stdout
    data = json.loads(cli("seen", "MAKE:  *** [makefile:2: all] error 2", "--json").out)
    assert data["seen"] and [a["id"] for a in data["failed_commands"]] == [action]
    assert "not seen before" in cli("seen", "make: *** [Makefile:9: x] Error 1").out


def test_conversation_recall_without_a_session_searches_the_whole_workspace(
    mem: clew.Memory,
) -> None:
    older = mem.start_session(workspace="/srv/app", title="first")
    mem.append_turn(older.id, {"role": "user", "content": "the port is 8080"})
    newer = mem.start_session(workspace="/srv/app", title="second")
    mem.append_turn(newer.id, {"role": "user", "content": "the port is 9090"})
    elsewhere = mem.start_session(workspace="/srv/other")
    mem.append_turn(elsewhere.id, {"role": "user", "content": "the port is 7070"})
    here = tools.Context(workspace="/srv/app")
    found = tools.call(mem, "conversation_recall", {"action": "search", "query": "port"}, here)
    assert not found.is_error
    # Search looks through every session of the workspace, and no other.
    assert found.text.startswith("2 turns of the 2 sessions of /srv/app match 'port'")
    assert "9090" in found.text and "8080" in found.text and "7070" not in found.text
    assert {h["session_id"] for h in found.data["hits"]} == {older.id, newer.id}
    # The other actions take the workspace's newest session, and say so.
    summary = tools.call(mem, "conversation_recall", {"action": "summary"}, here)
    assert summary.text.startswith(f"(Session {newer.id}: the newest of workspace /srv/app.)")
    listed = tools.call(mem, "session_list", {}, here)
    assert listed.text.index(newer.id) < listed.text.index(older.id)
    assert elsewhere.id not in listed.text and "'second'" in listed.text
    assert elsewhere.id in tools.call(mem, "session_list", {"all": True}, here).text
    named = tools.call(mem, "conversation_recall", {"action": "summary", "session": older.id})
    assert not named.is_error and not named.text.startswith("(Session")


# -- sentences ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("use ghcr.io instead of docker hub", ["use ghcr.io instead of docker hub"]),
        (
            "Decided: use ghcr.io instead of docker hub. Then push.",
            ["Decided: use ghcr.io instead of docker hub.", "Then push."],
        ),
        ("Pin v1.2.3 and python 3.11 now. Done", ["Pin v1.2.3 and python 3.11 now.", "Done"]),
        (
            "Edit src/app.py and ./run.sh first! Then test?",
            ["Edit src/app.py and ./run.sh first!", "Then test?"],
        ),
        (
            "See https://example.com/a.b?c=1 for it. ok",
            ["See https://example.com/a.b?c=1 for it.", "ok"],
        ),
        (
            "Use a fast tool, e.g. ripgrep, i.e. rg. Next",
            ["Use a fast tool, e.g. ripgrep, i.e. rg.", "Next"],
        ),
        (
            "Going with the slim image (e.g. python:3.11-slim) now",
            ["Going with the slim image (e.g. python:3.11-slim) now"],
        ),
        ("one line\nanother line", ["one line", "another line"]),
        ("Wait... really?! yes", ["Wait...", "really?!", "yes"]),
        ("", []),
    ],
)
def test_sentences_never_split_inside_names_versions_or_paths(
    text: str, expected: list[str]
) -> None:
    assert sentences(text) == expected


_NAME = st.from_regex(
    r"(?:[a-z]{2,8}\.(?:io|com|dev)|v?\d{1,2}\.\d{1,2}(?:\.\d{1,2})?|(?:\./|src/)[a-z]{1,6}\.(?:py|sh)"
    r"|https://[a-z]{2,6}\.[a-z]{2,3}/[a-z]{1,5}\.[a-z]{1,3})",
    fullmatch=True,
)


@given(
    st.lists(st.one_of(st.from_regex(r"[a-z]{1,8}", fullmatch=True), _NAME), min_size=1, max_size=8)
)
def test_a_sentence_of_names_stays_whole(words: list[str]) -> None:
    sentence = "Use " + " ".join(words) + " now."
    assert sentences(sentence) == [sentence]
    assert sentences(f"{sentence} And {sentence}") == [sentence, f"And {sentence}"]


def test_extraction_keeps_a_decision_about_a_host_whole() -> None:
    message = Message(
        "m1",
        "default",
        "t1",
        MessageRole.AGENT,
        MessageType.TEXT,
        "Going with ghcr.io instead of docker hub. Pulls are rate limited.",
        "2026-11-22T09:00:00Z",
    )
    (draft,) = rules(None, [], [message], [])
    assert draft.summary == "Going with ghcr.io instead of docker hub."


# -- the engine: ranked, explained, by meaning ----------------------------------------------


def test_a_question_in_plain_words_ranks_the_record_holding_its_words_first(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Ship", ["pick a registry"])
    mem.add_decision(task.id, "Use GHCR as the container registry; Docker Hub rate limits bit us")
    mem.add_finding(task.id, "the registry mirror in the office is slow")
    mem.update_task(task.id, message="what about the registry?")
    hits = mem.search_all("which registry did we pick, and why?", explain=True, mode="keyword")
    assert hits[0].label == "decision" and "GHCR" in hits[0].title
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    top = hits[0].explain
    assert top is not None and top.keyword_rank is not None and top.dense_rank is None
    assert any(b.startswith("a decision as asked") for b in top.boosts)
    assert all(h.explain is None for h in mem.search_all("registry", mode="keyword"))


def test_hybrid_finds_by_meaning_what_shares_no_word(mem: clew.Memory) -> None:
    task = mem.create_task("Home", ["one"])
    dog = mem.add_finding(task.id, "The vet says the puppy needs six weeks of short lead walks")
    mem.add_finding(task.id, "The quarterly tax return is due on the 31st")
    # No word shared: keyword search finds it by related words at most, never confidently.
    assert not any(h.confident for h in mem.search_all("how is my dog doing", mode="keyword"))
    hits = mem.search_all("how is my dog doing", mode="hybrid", explain=True)
    assert hits and hits[0].id == dog.id
    assert hits[0].explain is not None and hits[0].explain.dense_rank == 1
    assert mem.index_status().pending == 0  # the first hybrid search embedded what it needed


def test_a_hybrid_search_inside_a_read_transaction_does_not_write(mem: clew.Memory) -> None:
    task = mem.create_task("Home", ["one"])
    mem.add_finding(task.id, "the puppy needs short walks")
    with mem._store.transaction():
        mem.search_all("dog", mode="hybrid")  # nothing embedded yet: no vector to find
    assert mem.index_status().embedded == 0


def test_a_mode_that_is_not_one_is_refused(mem: clew.Memory, cli: Cli) -> None:
    with pytest.raises(clew.ValidationError, match="search mode 'fuzzy'"):
        mem.search_all("x", mode="fuzzy")
    assert tools.call(mem, "memory_search", {"query": "x", "mode": "fuzzy"}).is_error
    done = cli("search", "x", "--mode", "fuzzy")
    assert done.code == 2 and "--mode" in done.err and "Traceback" not in done.err


def test_seen_before_names_errors_like_it_whose_text_differs(mem: clew.Memory) -> None:
    task = mem.create_task("Net", ["one"])
    mem.add_error(task.id, "upload to s3 failed: connection reset by peer after 30s")
    found = mem.seen_before("TimeoutError: the s3 upload connection was reset by the peer")
    assert not found.seen  # another fingerprint
    assert [h.kind for h in found.similar][:1] == ["entry"]
    assert "connection reset" in found.similar[0].title
    from clew.tools.views import error_history_view

    assert "like it (another fingerprint):" in error_history_view(found, datetime.now(UTC))


def test_recall_search_across_sessions_ranks_best_first(mem: clew.Memory) -> None:
    one = mem.start_session(workspace="/srv/home", title="spring", at="2026-04-02")
    mem.append_turns(
        one.id,
        [
            {"role": "user", "content": "Melanie signed up for a pottery class on Tuesdays"},
            {"role": "assistant", "content": "Lovely, she will enjoy the wheel"},
        ],
        at="2026-04-02",
    )
    two = mem.start_session(workspace="/srv/home", title="summer", at="2026-06-10")
    mem.append_turns(two.id, [{"role": "user", "content": "the garden needs water"}])
    found = mem.recall(None, "search", workspace="/srv/home", query="Melanie's pottery class")
    assert found.hits and found.hits[0].session_id == one.id and found.hits[0].turn == 1
    assert "Session " + one.id in found.text and "pottery" in found.text
    assert found.hits[0].score >= max(h.score for h in found.hits)


def test_a_time_finds_its_turns_written_out_of_time_order(
    mem: clew.Memory, clock: Callable[[], datetime], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Turns of one day written at three moments, between turns of other days: SQLite
    # walks the index in ranges of turn numbers (blocks of 1 here, joined to 2 ranges at
    # most), so every range must be walked and the best of all of them kept.
    from clew.store.sqlite import search as sqlite_search

    monkeypatch.setattr(sqlite_search, "SPAN_BLOCK", 1)
    monkeypatch.setattr(sqlite_search, "MAX_SPANS", 2)
    session = mem.start_session(title="imported").id
    days = ["2026-05-02", "2026-01-05", "2026-05-03", "2026-01-05", "2026-05-04", "2026-01-05"]
    written = []
    for n, day in enumerate(days):
        clock.now = datetime.fromisoformat(f"{day}T10:00:00+00:00")  # type: ignore[attr-defined]
        words = "kestrel nest " * (n + 1)  # each a different score
        written.append(mem.append_turn(session, {"role": "user", "content": words}).id)
    found = mem.search_all("kestrel nest", kinds="turn", since="2026-01-05", until="2026-01-06")
    # The day's three first (then their neighbours, which may be of other days).
    assert {h.id for h in found[:3]} == {written[1], written[3], written[5]}
    assert mem.search_all("kestrel", kinds="turn", since="2026-02-01", until="2026-03-01") == []


def test_a_word_in_most_turns_is_left_to_the_ranking(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A word that fills the newest turns (3 matches within 10 turns here) is not looked
    # for in the turns index when a rarer word is left: the turn with both still ranks
    # first, and a turn holding only the common word is no match of its own.
    from clew.core.query import parse
    from clew.store.sqlite import search as sqlite_search

    monkeypatch.setattr(sqlite_search, "COMMON_PROBE", 3)
    session = mem.start_session(title="chatter").id
    plain = [
        mem.append_turn(session, {"role": "user", "content": f"alpha note {n}"}).id
        for n in range(10)
    ]
    rare = mem.append_turn(session, {"role": "user", "content": "alpha kestrel"}).id
    found = mem.search_all("alpha kestrel", kinds="turn")
    assert found[0].id == rare
    matched = {
        h.id
        for h in mem._store.search_records(
            parse("alpha kestrel", any_terms=True), ["turn"], limit=20
        )
    }
    if isinstance(mem._store._text, sqlite_search.Fts5Index):
        assert matched == {rare}
    else:  # PostgreSQL ranks every match (its idf is capped instead)
        assert matched == {rare, *plain}
    # One word alone is always looked for, however common.
    assert len(mem.search_all("alpha", kinds="turn", limit=20)) == 11


class _Toy:
    """An embedding model that knows one thing: Biscuit is a dog (1, 0); all else is (0.3, 1)."""

    model_id = "toy-dogs@1"
    dim = 2

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        rows = [
            [1.0, 0.0] if any(w in t.casefold() for w in ("dog", "biscuit")) else [0.3, 1.0]
            for t in texts
        ]
        out = np.array(rows, dtype=np.float32).reshape(len(texts), 2)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_hybrid_keeps_the_record_nearest_in_meaning_among_the_first_two(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.search import ranking, retrieval, vectors

    pytest.importorskip("numpy")
    monkeypatch.setattr(vectors, "load_embedder", _Toy)
    monkeypatch.setattr(retrieval, "load_embedder", _Toy)
    # Meaning weighs almost nothing, so the fused order is the keyword order.
    monkeypatch.setattr(ranking, "DENSE_BY_MODEL", {})
    monkeypatch.setattr(ranking, "DENSE", 0.05)
    monkeypatch.setattr(ranking, "ADAPT", 0.0)
    task = mem.create_task("Home", ["one"])
    for n in range(20):  # so that "vet" is a word of weight to bm25
        mem.add_finding(task.id, f"groceries: item {n} on the list")
    for place in (
        "on Elm street",
        "at the mall",
        "by the station",
        "downtown",
        "uptown",
        "near the park",
        "on the hill",
    ):
        mem.add_finding(task.id, f"the vet {place} had something to say about cats")
    puppy = mem.add_finding(task.id, "Biscuit must rest her injured leg for six weeks")
    question = "what did the vet say about my dog?"

    monkeypatch.setattr(ranking, "MEANING_PLACE", 0)
    fused = mem.search_all(question, mode="hybrid", explain=True)
    assert [h.id for h in fused].index(puppy.id) >= 5  # the keyword matches bury it

    monkeypatch.setattr(ranking, "MEANING_PLACE", 2)
    hits = mem.search_all(question, mode="hybrid", explain=True)
    assert [h.id for h in hits].index(puppy.id) == 1
    kept = hits[1].explain
    assert kept is not None and kept.dense_rank == 1
    assert any(b.startswith("nearest in meaning: kept at place 2") for b in kept.boosts)
    assert hits[0] == fused[0]  # the first hit does not move
    assert [h.id for h in hits[2:6]] == [h.id for h in fused[1:5]]  # the rest: one down
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    # Keyword search never uses meaning, so it never keeps a place for it.
    assert puppy.id not in [h.id for h in mem.search_all(question, mode="keyword")]


def test_a_hybrid_hit_meaning_put_above_keywords_best_is_not_confident(
    mem: clew.Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clew.search import ranking, retrieval, vectors

    pytest.importorskip("numpy")
    monkeypatch.setattr(vectors, "load_embedder", _Toy)
    monkeypatch.setattr(retrieval, "load_embedder", _Toy)
    # Meaning trusted here and weighing much, so that it can lift a hit above keyword's best.
    monkeypatch.setattr(ranking, "WEAK_COVER", math.inf)
    monkeypatch.setattr(ranking, "FLAT", -math.inf)
    monkeypatch.setattr(ranking, "DENSE_BY_MODEL", {})
    monkeypatch.setattr(ranking, "DENSE", 0.7)
    monkeypatch.setattr(ranking, "ADAPT", 0.0)
    task = mem.create_task("Home", ["one"])
    for n in range(12):  # so that the question's words are of weight to bm25 (far in meaning)
        mem.add_finding(task.id, f"dog food: item {n} on the list")
    words = mem.add_finding(task.id, "kennel booking kennel booking kennel booking for Biscuit")
    meaning = mem.add_finding(task.id, "a kennel booking, at last")
    question = "kennel booking"
    by_words = mem.search_all(question, mode="keyword")
    assert by_words[0].id == words.id
    hits = mem.search_all(question, mode="hybrid", explain=True)
    assert hits[0].id == meaning.id  # meaning (not a dog: close to the question) lifted it
    top = hits[0].explain
    assert top is not None and top.coverage == 1.0
    assert any(b.startswith("the whole question") for b in top.boosts)  # alone: a mark
    assert not hits[0].confident  # but the words do not lead: no mark
    assert by_words[0].confident  # keyword's own best, holding the question, has it
