"""The error lines of the middle of long command output: what is kept (each error line with
its neighbours, bounded), that search finds a command by them on both backends while the
rest of the middle stays out of the index, and that a store made before migration 14 gets
them."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.archive.error_lines import MIDDLE_CHARS, OUTPUT_HEAD, OUTPUT_TAIL, error_lines
from tests.conftest import new_space, postgres_url
from tests.old_stores import undo_migration_14

ERROR = "ValueError: ERR_TOKEN_EXPIRED refresh window closed for tenant kestrel"
BEFORE = '  File "src/auth/refresh.py", line 88, in renew'
AFTER = "during handling, the retry queue drained"


def filler(lines: int, word: str = "module") -> str:
    """Build-log lines that say no error."""
    return "".join(
        f"compiling {word}_{i} ok: wrote {i * 7} bytes to build/obj_{i}.o\n" for i in range(lines)
    )


def long_log(middle: str, size: int = 3_000_000) -> str:
    """A log of about `size` characters with `middle` in the middle of it, between two lines
    that are further from it than a neighbour."""
    half = filler(size // 120)
    far = "far above: the gyrfalcon cache warmed\nnothing here\n"
    return half + far + middle + "nothing here\nfar below: the ptarmigan cache cooled\n" + half


# -- what is kept ------------------------------------------------------------------------


def test_an_error_line_is_kept_with_its_neighbours_and_no_more() -> None:
    log = long_log(f"{BEFORE}\n{ERROR}\n{AFTER}\n")
    assert len(log) > 3_000_000
    assert error_lines(log) == f"{BEFORE}\n{ERROR}\n{AFTER}"


def test_short_output_has_none_its_head_and_tail_are_indexed_whole() -> None:
    assert error_lines(f"{ERROR}\n" + filler(10)) is None
    assert error_lines(None) is None
    # An error in the head or the tail of a long output is indexed already.
    assert error_lines(f"{ERROR}\n" + filler(1000)) is None
    assert error_lines(filler(1000) + f"{ERROR}\n") is None


@pytest.mark.parametrize(
    "line",
    [
        "Traceback (most recent call last):",
        "E       AssertionError: assert 3 == 4",
        "FAILED tests/test_auth.py::test_refresh - KeyError: 'token'",
        "--- FAIL: TestRefresh (0.01s)",
        "npm ERR! code ELIFECYCLE",
        "error[E0308]: mismatched types",
        "src/main.c:12:5: error: 'x' undeclared (first use in this function)",
        "panic: runtime error: index out of range [3] with length 3",
        "thread 'main' panicked at 'boom', src/main.rs:2:5",
        'Exception in thread "main" java.lang.NullPointerException',
        "Caused by: java.io.IOException: Broken pipe",
        "make[2]: *** [Makefile:12: build] Error 1",
        "Segmentation fault (core dumped)",
        "ERROR: Could not find a version that satisfies the requirement foo==9",
        "fatal: not a git repository (or any of the parent directories): .git",
        "Process exited with code 137",
        "/usr/bin/ld: main.o: undefined reference to `frobnicate'",
        "[ERROR] Failed to execute goal on project api",
        "ERROR: failed to solve: process did not complete successfully: exit code: 2",
    ],
)
def test_tools_error_lines_are_recognised(line: str) -> None:
    kept = error_lines(long_log(f"{line}\n", size=40_000))
    assert kept == f"nothing here\n{line}\nnothing here"


@pytest.mark.parametrize(
    "line",
    ["compiled the error handling module", "0 errors, 2 warnings", "tests passed: 12"],
)
def test_lines_that_only_mention_errors_are_not_kept(line: str) -> None:
    assert error_lines(long_log(f"{line}\n", size=40_000)) is None


def test_an_error_said_many_times_is_kept_once() -> None:
    repeated = "".join(f"12:00:{i % 60:02d} ERROR: connection reset by peer\n" for i in range(5000))
    kept = error_lines(long_log(repeated, size=40_000))
    assert kept is not None
    assert kept.count("connection reset by peer") == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from([ERROR, BEFORE, AFTER, "ok", "", "E   x", "npm ERR! y", "panic: z"]),
        min_size=1,
        max_size=3000,
    ),
    st.integers(0, 400),
)
def test_what_is_kept_is_bounded_and_lines_of_the_middle(lines: list[str], pad: int) -> None:
    text = "x" * (OUTPUT_HEAD + pad) + "\n" + "\n".join(lines) + "\n" + "y" * OUTPUT_TAIL
    kept = error_lines(text)
    if kept is None:
        return
    assert len(kept) <= MIDDLE_CHARS
    middle = set(text[OUTPUT_HEAD : len(text) - OUTPUT_TAIL].split("\n"))
    assert all(line in middle for line in kept.split("\n"))


# -- searched, on both backends --------------------------------------------------------------


def record_log(mem: clew.Memory, log: str, *, stream: str = "stdout") -> str:
    task = mem.create_task("Build", ["compile"])
    stdout, stderr = (log, None) if stream == "stdout" else (None, log)
    action = mem.record_action(
        task.id, command="make all", exit_code=2, stdout=stdout, stderr=stderr
    )
    return action.id


def commands(mem: clew.Memory, query: str) -> list[str]:
    """The commands a keyword search finds, best first."""
    return [h.id for h in mem.search_all(query, kinds="action", mode="keyword")]


def test_a_command_is_found_by_an_error_in_the_middle_of_its_output(mem: clew.Memory) -> None:
    action_id = record_log(mem, long_log(f"{BEFORE}\n{ERROR}\n{AFTER}\n"))
    by_words = mem.search_all("refresh window closed", kinds="action", mode="keyword")
    assert [h.id for h in by_words] == [action_id]
    by_identifier = mem.search_all("ERR_TOKEN_EXPIRED", mode="keyword")
    assert by_identifier[0].id == action_id and by_identifier[0].confident
    assert "[ERR_TOKEN_EXPIRED]" in by_identifier[0].snippet
    # The hit opens the whole output, not the bounded copy.
    assert by_identifier[0].open == f"clew task output {action_id}" or by_identifier[
        0
    ].open.startswith(f"clew task output {action_id} --space")
    assert len(mem._store.get_action(action_id).stdout or "") > 3_000_000
    # The line next to the error is kept; the ones further away, like the rest of the
    # middle, are not indexed.
    assert commands(mem, "retry queue drained") == [action_id]
    assert commands(mem, "gyrfalcon") == []
    assert commands(mem, "ptarmigan") == []
    assert mem.verify().ok


def test_stderr_is_searched_by_its_middle_too(mem: clew.Memory) -> None:
    action_id = record_log(mem, long_log(f"{ERROR}\n"), stream="stderr")
    hits = mem.search_all("ERR_TOKEN_EXPIRED", kinds="action", mode="keyword")
    assert [h.id for h in hits] == [action_id]
    assert "--stderr" in hits[0].open


def test_output_given_when_a_command_finishes_is_searched_by_its_middle(
    mem: clew.Memory,
) -> None:
    task = mem.create_task("Build", ["compile"])
    started = mem.record_action(task.id, command="make all", status="started")
    assert commands(mem, "ERR_TOKEN_EXPIRED") == []
    mem.finish_action(started.id, exit_code=2, stdout=long_log(f"{ERROR}\n"))
    assert commands(mem, "ERR_TOKEN_EXPIRED") == [started.id]
    assert mem.verify().ok


@pytest.mark.sqlite_only("takes a SQLite file back to schema 13 by hand")
def test_an_older_store_gets_the_error_lines_at_migration_14(db: Path) -> None:
    with clew.open(db) as mem:
        action_id = record_log(mem, long_log(f"{BEFORE}\n{ERROR}\n{AFTER}\n", size=200_000))
        short = record_log(mem, f"{ERROR}\n")
    conn = sqlite3.connect(db)
    undo_migration_14(conn)
    assert conn.execute("SELECT max(number) FROM clew_migrations").fetchone() == (13,)
    conn.close()
    conn = sqlite3.connect(db)
    # Before: only the short output (indexed whole) holds the error.
    matched = conn.execute(
        "SELECT d.ref_id FROM records_fts JOIN record_docs d ON d.seq = records_fts.rowid"
        " WHERE records_fts MATCH '\"err token expired\"'"
    ).fetchall()
    assert matched == [(short,)]
    conn.close()
    with clew.open(db) as mem:
        found = {h.id for h in mem.search_all("ERR_TOKEN_EXPIRED", kinds="action", mode="keyword")}
        assert found == {action_id, short}
        assert commands(mem, "gyrfalcon") == []
        assert mem.verify().ok


def test_postgres_fills_in_the_error_lines_of_older_outputs(clock: Any) -> None:
    psycopg = pytest.importorskip("psycopg")
    from clew.store.postgres.migrations import _backfill_error_lines

    url = postgres_url()
    with clew.open(url, space=new_space(), clock=clock) as mem:
        action_id = record_log(mem, long_log(f"{ERROR}\n", size=200_000))
        with psycopg.connect(url) as raw:  # as a store made before migration 14 holds it
            raw.execute("SELECT set_config('clew.space', %s, true)", (mem.space,))
            raw.execute("UPDATE actions SET stdout_errors = NULL, stderr_errors = NULL")
        assert commands(mem, "ERR_TOKEN_EXPIRED") == []
        with psycopg.connect(url) as raw:
            _backfill_error_lines(raw)
        assert commands(mem, "ERR_TOKEN_EXPIRED") == [action_id]
        assert mem.verify().ok
