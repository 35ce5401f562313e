"""What the hook path imports: `clew prime`, `clew prime --hook`, `clew task show` and
`clew task update` run as a coding assistant's hooks run them, on every session start and
after every compaction, so what they import is what every hook pays for.

Each command runs in a fresh interpreter that lists the modules it imported beyond the
interpreter's own start; a module outside the allowed lists fails the test. Nothing is timed
(benchmarks/bench_tracker.py measures the processes' CPU time). A module that must join the
hook path goes into the lists below, with a reason; one a hook never runs (the MCP server,
the HTTP API, tools, embeddings, model providers, views, YAML mirrors, PostgreSQL, third-party
packages) belongs behind a lazy import in the function that needs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import clew
from clew.core import clock
from clew.core.tokens import Vocabulary

# The interpreter's own modules before clew starts count as free; the harness writes what
# the command added to the file named by its first argument.
HARNESS = """
import sys
before = set(sys.modules)
from clew.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as out:
    out.write("\\n".join(sorted(set(sys.modules) - before)))
sys.exit(code)
"""

# The clew modules the hook path may import. Memory is built from its subjects' services, so
# every service module is here, with its subject package (a docstring, nothing to run); what
# those modules need only for work a hook does not do (search ranking, model prompts,
# embeddings, exports...) is imported where it is used.
ALLOWED_CLEW = frozenset(
    {
        "clew",
        # the subject packages: each __init__ is a docstring (clew.tools: lazy public names)
        "clew.access",
        "clew.archive",
        "clew.conversations",
        "clew.core",
        "clew.jobs",
        "clew.journal",
        "clew.privacy",
        "clew.search",
        "clew.state",
        "clew.tasks",
        "clew.tools",
        "clew.core.text",  # clipping a line for a prompt (re only)
        "clew.archive.entries",
        "clew.conversations.assembly",
        "clew.journal.audit",  # a Memory service: the journal read back and verified
        "clew.state.brief",
        "clew.conversations.capture",  # a service: transcript capture (json and os only)
        "clew.conversations.plan_capture",  # a service: the agent's own list kept as a task
        "clew.conversations.agent_plans",  # the list's calls read from new lines (json, re)
        "clew.core.checks",
        "clew.archive.claims",  # the session state's key decisions (re; compiled on first use)
        "clew.journal.checkpoints",  # a service: checkpoints (os and stat only; the rest lazily)
        "clew.cli",
        "clew.cli.capture",  # capture --hook
        "clew.cli.common",
        "clew.cli.options",  # the options of commands that share a tool's parameters
        "clew.cli.state",  # prime
        "clew.cli.tasks",  # task show, task update
        "clew.core.clock",
        "clew.config",
        "clew.conversations.context",
        "clew.conversations.prompting",
        "clew.tasks.entities",
        "clew.archive.error_lines",  # a command's error lines, on the ledger's write path (re only)
        "clew.errors",
        "clew.kernel",
        "clew.archive.fingerprint",
        "clew.search.hits",  # what search makes of its records (retrieval's helpers; re only)
        "clew.jobs.governor",
        "clew.core.ids",
        "clew.jobs.outbox",
        "clew.journal.journalfile",
        "clew.core.lifecycle",
        "clew.archive.linking",
        "clew.core.location",
        "clew.memory",
        "clew.models",  # the value types: a package by subject, every module re-exported
        "clew.models.access",
        "clew.models.archive",
        "clew.models.conversations",
        "clew.models.jobs",
        "clew.models.journal",
        "clew.models.jsonable",
        "clew.models.search",
        "clew.models.tasks",
        "clew.core.origin",  # who may make the host act: waits and imports ask it (os only)
        "clew.core.pattern",
        "clew.tasks.progress",
        "clew.providers",  # the provider protocol only; no provider module
        "clew.providers.protocol",  # the protocol's types, which the package re-exports
        "clew.search.question",
        "clew.search.ranking",
        "clew.conversations.recall",
        "clew.conversations.recollection",
        "clew.tasks.record",
        "clew.privacy.redaction",  # secrets out before every write (re; patterns compiled lazily)
        "clew.privacy.secret_shapes",  # redaction's rules (re, math; compiled on first use)
        "clew.privacy.free_text",  # which fields of each event redaction reads (a table of names)
        "clew.search.retrieval",
        "clew.core.query",
        "clew.archive.semantic",
        "clew.conversations.session_state",
        "clew.conversations.sessions",
        "clew.settings",  # the Settings value a Memory is made with
        "clew.state.document",
        "clew.tasks.stuck",
        "clew.state.summaries",
        "clew.tasks.taskrecord",
        "clew.tasks.rules",
        "clew.core.tokens",
        "clew.tools.spec",  # `task update`'s options are the task_update tool's parameters
        "clew.conversations.transcripts",  # capture --hook reads the transcript's lines with it
        "clew.archive.trace",
        "clew.tasks.tracker",  # a Memory service: tasks, plans, steps, messages
        "clew.access.keys",  # the server's keys, a service (hashlib; secrets only to make one)
        "clew.access.roles",  # PostgreSQL's roles, a service (its checks imported when called)
        "clew.core.credentials",
        "clew.journal.transfer",
        "clew.journal.forgetting",  # `forget`, a service (what it reads and rewrites: lazily)
        "clew.core.turns",
        "clew.jobs.upkeep",
        "clew.jobs.utility",
        "clew.search.vectors",
        "clew.tools.views",  # `task show` prints with it
        "clew.core.fields",  # the chain's encoding
        "clew.core.forwarding",  # Memory's calls to its services, a store's to its parts
        "clew.tasks.waits",
        "clew.tasks.watch",
        "clew.jobs.worker",  # `task update` wakes the worker when it queued a job
        "clew.state.working",
        "clew.state.yamltext",
        # the SQLite store and its parts
        "clew.store.portable.imports",
        "clew.store",
        "clew.store.portable",  # the packages of the store's modules (store/__init__.py)
        "clew.store.sqlite",
        "clew.core.chain",
        "clew.core.codec",
        "clew.store.contract",  # the contract: one module of protocols per subject
        "clew.store.contract.admin",
        "clew.store.contract.archive",
        "clew.store.contract.conversations",
        "clew.store.contract.graph",
        "clew.store.contract.jobs",
        "clew.store.contract.journal",
        "clew.store.contract.search",
        "clew.store.contract.tasks",
        "clew.store.contract.vectors",
        # the projection's upgrade of older events (re only)
        "clew.store.projection.frozen_error_lines",
        "clew.store.migrations",
        "clew.store.projection",
        "clew.store.projection.archive",
        "clew.store.projection.conversations",
        "clew.store.projection.handlers",
        "clew.store.projection.record",
        "clew.store.projection.redactions",
        "clew.store.projection.utility",
        "clew.store.projection.waits",
        "clew.store.rows",
        "clew.store.sql",
        "clew.store.sqlite.store",
        "clew.store.portable.archive",
        "clew.store.sqlite.backfill",
        "clew.store.portable.conversations",
        "clew.store.sqlite.file",  # the file opened, recognised and migrated
        "clew.store.portable.journal",
        "clew.store.portable.record",
        "clew.store.sqlite.search",
        "clew.store.portable.tasks",
        "clew.store.portable.trace",
        "clew.store.portable.utility",
        "clew.store.portable.vectors",
        "clew.store.sqlite.verify",
        "clew.store.portable.findings",  # what verify reports, on both backends
        "clew.store.portable.waits",
        "clew.store.portable.keys",
        "clew.store.sqlite.heads",  # chain_heads and chain_hashes, a part of the store
        "clew.store.parts",  # the store's parts and the contract methods each answers
        "clew.store.sqlite.writes",  # SQLite's side of the journal's write path
        "clew.store.sqlite.connection",  # the portable statements' connection
        "clew.store.portable.search",  # what search shares (sqlite_search imports it)
    }
)

# Standard-library packages the hook path may import (any of their submodules).
ALLOWED_STDLIB = frozenset(
    {
        "argparse",
        "base64",
        "binascii",
        "bisect",
        "calendar",
        "collections",
        "contextlib",
        "contextvars",
        "copyreg",
        "datetime",
        "enum",
        "errno",
        "fcntl",
        "functools",
        "gettext",
        "hashlib",
        "itertools",
        "json",
        "keyword",
        "locale",
        "marshal",
        "math",
        "operator",
        "random",
        "re",
        "reprlib",
        "select",
        "selectors",
        "shlex",
        "signal",
        "sqlite3",
        "string",
        "struct",
        "subprocess",
        "threading",
        "time",
        "types",
        "typing",
        "warnings",
        "weakref",
        # what those import, or the interpreter loads lazily, on some Python versions
        "__future__",
        "_strptime",
        "importlib",
        "sre_compile",
        "sre_constants",
        "sre_parse",
        "token",
    }
)

# The C parts of those (a module named _x is allowed with x, and these besides).
ALLOWED_PRIVATE = frozenset(
    {"_blake2", "_hashlib", "_posixsubprocess", "_sha512", "_sre", "_typing", "_weakrefset"}
)

# Never on the hook path: each costs milliseconds to import and a hook never uses it.
HEAVY = (
    "logging",
    "tomllib",
    "urllib",
    "pathlib",
    "tempfile",
    "shutil",
    "asyncio",
    "importlib.resources",
    "inspect",
    "dataclasses",
    "traceback",
    "textwrap",
)


def allowed(module: str) -> bool:
    """Whether the hook path may import `module` (a name from sys.modules)."""
    if module.startswith("clew"):
        return module in ALLOWED_CLEW
    top = module.split(".")[0]
    if top not in sys.stdlib_module_names:
        return False  # no third-party package on the hook path
    return top in ALLOWED_STDLIB or top in ALLOWED_PRIVATE or top.lstrip("_") in ALLOWED_STDLIB


def imported(cwd: Path, *argv: str, stdin: str = "") -> set[str]:
    """The modules `clew ARGV` imports, run as its own process in `cwd`."""
    listing = cwd / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, str(listing), *argv],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return set(listing.read_text(encoding="utf-8").split("\n"))


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, str]:
    """A project folder with its store, one active task with a plan, a command and notes."""
    folder = tmp_path / "project"
    (folder / ".clew").mkdir(parents=True)
    with clew.open(folder / ".clew" / "clew.db") as mem:
        task = mem.create_task("Deploy", ["Build", "Push", "Run"], workspace=str(folder))
        mem.update_task(task.id, step=1, step_status="active", message="building the image")
        mem.record_action(task.id, command="make build", exit_code=2, stderr="Error: no disk")
        mem.add_entry("decision", "Use the slim base image", task_id=task.id)
    return folder, task.id


def hook_paths(folder: Path, task_id: str) -> dict[str, tuple[list[str], str]]:
    event = json.dumps({"hook_event_name": "SessionStart", "cwd": str(folder)})
    update = ["task", "update", task_id, "-m", "built", "--step", "1", "--step-status", "completed"]
    transcript = folder / "transcript.jsonl"
    line = {"type": "user", "uuid": "u1", "message": {"role": "user", "content": "go"}}
    transcript.write_text(json.dumps(line) + "\n", encoding="utf-8")
    captured = {
        "hook_event_name": "PostToolUse",
        "cwd": str(folder),
        "session_id": "s1",
        "transcript_path": str(transcript),
    }
    return {
        "capture --hook": (["capture", "--hook"], json.dumps(captured)),
        "prime": (["prime"], ""),
        "prime --hook": (["prime", "--hook"], event),
        "task show": (["task", "show", task_id], ""),
        "task update": (update, ""),
    }


@pytest.mark.parametrize(
    "path", ["prime", "prime --hook", "capture --hook", "task show", "task update"]
)
def test_the_hook_path_imports_only_what_it_uses(project: tuple[Path, str], path: str) -> None:
    folder, task_id = project
    argv, stdin = hook_paths(folder, task_id)[path]
    # --hook finds the store from the event's folder; run it from elsewhere, as hooks do.
    cwd = folder.parent if path.endswith("--hook") else folder
    modules = imported(cwd, *argv, stdin=stdin)
    assert "clew.memory" in modules  # the harness saw the command do its work
    outside = sorted(m for m in modules if not allowed(m))
    assert outside == [], f"`clew {path}` imports modules outside the allowed list: {outside}"
    heavy = sorted(m for m in modules if m in HEAVY or m.split(".")[0] in HEAVY)
    assert heavy == []


def test_the_allowed_list_is_not_vacuous(project: tuple[Path, str]) -> None:
    # What the lists keep out is what the other commands import: if `clew mcp`'s tools or
    # search's question parser stopped being caught, the test above would prove nothing.
    assert not allowed("clew.tools.registry")
    assert not allowed("clew.server.mcp_server")
    assert not allowed("clew.search.embedding")
    assert not allowed("clew.store.postgres.store")
    assert not allowed("logging")
    assert not allowed("tiktoken")
    assert not allowed("urllib.parse")
    assert allowed("_sqlite3") and allowed("json.decoder") and allowed("clew.models")
    folder, _ = project
    modules = imported(folder, "tools", "--json")
    assert any(not allowed(m) for m in modules)  # the tool registry is not on the hook path


def test_version_and_import_clew_stay_small(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, clew; print('\\n'.join(sorted(sys.modules)))"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    modules = {m for m in done.stdout.split("\n") if m.startswith("clew")}
    assert modules == {"clew"}  # `import clew` loads the rest on first use


def _strptime_parse(text: str) -> datetime | None:
    try:
        return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def _fast_parse(text: str) -> datetime | None:
    try:
        return clock.parse(text)
    except ValueError:
        return None


@settings(max_examples=300)
@given(
    st.datetimes(min_value=datetime(1000, 1, 1)),
    st.lists(st.tuples(st.integers(0, 26), st.sampled_from("07-T:.Z +x,\u0663")), max_size=2),
)
def test_timestamps_parse_as_strptime_parses_them(moment: datetime, edits: list[Any]) -> None:
    # The hook path parses stamps without strptime (its first call costs ~10 ms); what it
    # accepts, and what it makes of it, must be exactly what strptime accepts and makes.
    text = clock.stamp(moment.replace(tzinfo=UTC))
    assert clock.parse(text) == _strptime_parse(text)
    for place, char in edits:
        text = text[:place] + char + text[place + 1 :]
    assert _fast_parse(text) == _strptime_parse(text)


@settings(max_examples=200)
@given(st.sets(st.text(max_size=4)), st.lists(st.text(max_size=4), max_size=40))
def test_the_vocabulary_answers_as_a_set_does(tokens: set[str], probes: list[str]) -> None:
    # The hook path loads cl100k's vocabulary as a sorted list (a set costs 3x to unmarshal);
    # by bisection or, after many lookups, as a set, it must answer exactly as the set.
    vocabulary = Vocabulary(sorted(tokens), set_after=len(probes) // 2)
    for probe in [*probes, *tokens]:
        assert (probe in vocabulary) == (probe in tokens)


@pytest.mark.parametrize(
    "argv",
    [
        ["task", "show", "abc", "--json"],
        ["task", "update", "abc", "-m", "built", "--step", "2", "--step-status", "completed"],
        ["--db", "task", "task", "show", "abc"],  # a global option's value that names a group
        ["session", "list", "--all"],
        ["where", "abc"],
        ["prime", "--hook"],
        ["capture", "--hook"],
    ],
)
def test_a_command_line_parses_as_the_whole_parser_parses_it(argv: list[str]) -> None:
    # A hook's command line builds only its subcommand's parser (`task show`, not the other
    # 19 task commands); what it parses must be exactly what the whole parser makes of it.
    from clew.cli import build_parser

    assert vars(build_parser(argv).parse_args(argv)) == vars(build_parser().parse_args(argv))


_URL_CHARS = st.sampled_from([*"abcXYZ09.-_~:@%/?#&=+!$,;*", "\u00e9", "\u2100", "\x01"])


@settings(max_examples=400)
@given(st.sampled_from(["http://", "https://", "HTTP://"]), st.text(_URL_CHARS, max_size=30))
def test_a_url_s_host_is_what_urlsplit_says(scheme: str, rest: str) -> None:
    # The task record finds hosts in a task's commands without importing urllib on the hook
    # path; for every URL it can meet, the host must be exactly urlsplit's.
    from urllib.parse import urlsplit

    from clew.tasks.entities import url_hostname

    url = scheme + rest
    try:
        expected = urlsplit(url).hostname
    except ValueError:  # urlsplit refuses some non-ASCII hosts: so must this
        with pytest.raises(ValueError, match="NFKC"):
            url_hostname(url)
        return
    assert url_hostname(url) == expected


@settings(max_examples=300)
@given(st.lists(st.text(st.sampled_from(list(" ab12.-\t")), max_size=8) | st.none(), max_size=6))
def test_a_command_key_says_what_same_command_says(commands: list[str | None]) -> None:
    # The brief compares its actions' commands by key, computed once each (it compared
    # every pair): equal keys that are not None must say what comparing the pair says
    # (`pairwise`: the same words, numbers included; issue 25).
    from clew.archive.linking import command_key, same_command

    def pairwise(a: str | None, b: str | None) -> bool:
        if not a or not b:
            return False
        first, second = (" ".join(c.split()) for c in (a, b))
        return bool(first) and first == second

    for a in commands:
        for b in commands:
            key = command_key(a)
            assert (key is not None and key == command_key(b)) == pairwise(a, b)
            assert same_command(a, b) == pairwise(a, b)
