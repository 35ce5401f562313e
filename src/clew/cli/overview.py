"""What bare `clew` and `clew --help` print: the commands grouped, the everyday ones first,
with examples. Static text, so printing it imports no command module (a test checks that
every top-level command appears here exactly once)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

GROUPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Everyday",
        (
            ("task", "track a task: its plan, progress, commands, decisions and errors"),
            ("state", "the compact task state an agent keeps in its prompt"),
            ("where", '"where was I?" for this folder\'s active task (or a given one)'),
            ("search", "search everything recorded: entries, messages, commands and output, turns"),
            ("recall", "bring back earlier turns of a conversation, verbatim"),
            ("session", "conversations kept turn by turn: import, list, resume, export"),
        ),
    ),
    (
        "Memory",
        (
            ("note", "record a decision, error, finding or other entry"),
            ("entries", "list entries by task, type, status, tag and time"),
            ("seen", "have I seen this error before, and what fixed it?"),
            ("fix", "record a fix tried for an error, and whether it worked"),
            ("ledger", "every recorded command, its exit code and outcome"),
            ("trace", "the episodic trace: decisions, validations, tool calls"),
            ("pattern", "patterns that worked or failed, with their evidence"),
            ("guard", "guardrails: rules the agent must follow, checked on commands"),
            ("ask", "ask a question about this folder's task (or a given one)"),
            ("stuck", "is a task stuck: no progress, or the same failure again?"),
            ("wait", "smart waits: a command, file, local URL, time or condition"),
        ),
    ),
    (
        "For agents",
        (
            ("prime", "the state of this folder's active tasks, for session hooks"),
            ("context", "a task's context for a prompt: state, decisions, patterns"),
            ("tools", "the tools' schemas for function calling, or call one"),
            ("prompt", "the system-prompt text that says when to call which tool"),
            ("mcp", "run the MCP server (stdio, or HTTP with --port)"),
            ("integrate", "install clew's hooks and MCP server in Claude Code"),
            ("capture", "archive a Claude Code or Codex transcript's new lines (hooks)"),
            ("serve", "the HTTP server: JSON API, MCP and a dashboard, keys per space"),
            ("keys", "the HTTP server's keys: create, list, revoke, request log"),
        ),
    ),
    (
        "Maintenance",
        (
            ("init", "create a project store (.clew/) in this folder"),
            ("verify", "rebuild every table from the journal and compare"),
            ("checkpoint", "seal the journal's head into a file kept outside the store"),
            ("journal", "print the journal's events in commit order"),
            ("forget", "remove a record's content, or a pattern's matches, leaving a tombstone"),
            ("redactions", "where secrets were taken out of what was stored"),
            ("work", "do queued jobs and due waits now (extractions, summaries)"),
            ("maintain", "pause idle tasks, archive closed ones, expire waits (runs itself)"),
            ("export", "write this space's journal as JSONL, each event with its hash"),
            ("import", "replay a journal file, or a Claude Code or Codex transcript"),
            ("push", "send this space's new events to another store, e.g. a team store"),
            ("index", "the vector index: its lag, update it, rebuild it (extra `vectors`)"),
            ("jobs", "list queued, running, done and failed jobs"),
            ("usage", "what the utility model cost: calls and tokens"),
            ("db", "PostgreSQL roles: grant a role what a server, member or reader may do"),
            ("demo", "a walkthrough on a temporary store"),
            ("completion", "print a completion script for bash, zsh or fish"),
        ),
    ),
)

EXAMPLES = (
    ('clew task new "Deploy" --plan "Build image" "Push" "Run"', "register a task; prints its id"),
    ('clew task update ID --step 1 --step-status completed -m "built"', "report progress"),
    ("clew where", "after a restart: where was I?"),
    ('clew search "permission denied"', "find what was recorded"),
    ("clew recall SESSION --range 1-3", "turns 1 to 3 of a conversation"),
)


def commands() -> list[str]:
    """Every top-level command the overview lists, in its order."""
    return [name for _, group in GROUPS for name, _ in group]


def text(version: str) -> str:
    """The overview as printed."""
    width = max(len(name) for name in commands()) + 2
    lines = [
        f"clew {version}: a task memory for LLM agents that never loses the thread.",
        "",
        "usage: clew [--db PATH] [--space NAME] [--json] COMMAND ...",
    ]
    for title, group in GROUPS:
        lines += ["", f"{title}:"]
        lines += [f"  {name:<{width}}{summary}" for name, summary in group]
    lines += ["", "Examples:"]
    lines += [f"  {example}\n      {why}" for example, why in EXAMPLES]
    lines += [
        "",
        "Options for every command: --db PATH, --space NAME, --json, --create,",
        "--busy-timeout SECONDS, --max-input-mb MB.",
        "`clew COMMAND --help` shows a command's options; docs/cli.md (in clew's source)",
        "describes every command, and `clew demo` shows the main job in a minute.",
    ]
    return "\n".join(lines) + "\n"


def suggestion(word: str, choices: Iterable[str]) -> str | None:
    """The choice closest to a mistyped `word`, if any is close."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None
