"""The design's conversation workload (DESIGN.md, "The workload to measure on"): a synthetic
coding-agent session of user turns of 10-60 words, assistant turns of 20-200 words and tool
results of 200-4,000 characters (file contents, test output, grep hits, shell output), about
10% / 50% / 40%, some 124 MB of text per 100k turns; with planted search targets of known
selectivity: a common phrase in ~1% of turns, a traceback in ~0.5%, a rare identifier in
exactly 3. Deterministic for a seed.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

RARE = "ERR_LEDGER_4417"  # exactly 3 turns
PHRASE = "flaky integration test"  # ~1% of turns
TRACEBACK = "ConnectionResetError"  # the last line of a traceback in ~0.5% of turns

_WORD_TEXT = (
    "the config schema index cache retry build deploy image container registry token request"
    " response handler worker queue batch stream log trace span migrate column table query"
    " plan step test suite fixture mock patch module import function class method argument"
    " return value error warning we should then check first because this that it file line"
    " run update change add remove fix use keep make sure what why how where auth session"
)
_WORDS = _WORD_TEXT.split()
_CODE = (
    "def {w}_{n}(self, {w}):",
    "    return self.{w}.get({w!r}, {n})",
    "    if not {w}:",
    "        raise ValueError('{w} missing')",
    "class {W}{n}:",
    "import {w}",
    "    {w} = {w}_{n}({w}, retries={n})",
)
_OUTPUT = (
    "tests/test_{w}.py::test_{w}_{n} PASSED",
    "tests/test_{w}.py::test_{w}_{n} FAILED",
    "src/{w}/{w}.py:{n}:    {w}.{w}({w})",
    "INFO  worker.{n} processed batch {n} in {n}ms",
    "WARN  cache miss for key {w}:{n}",
    "{n} passed, {n} skipped in {n}.{n}s",
)


def _words(rng: random.Random, low: int, high: int) -> str:
    text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(low, high)))
    return text.capitalize() + "."


def _lines(rng: random.Random, shapes: tuple[str, ...], size: int) -> str:
    out: list[str] = []
    length = 0
    while length < size:
        w = rng.choice(_WORDS)
        line = rng.choice(shapes).format(w=w, W=w.capitalize(), n=rng.randint(1, 999))
        out.append(line)
        length += len(line) + 1
    return "\n".join(out)[:size]


def messages(total: int, seed: int = 7) -> list[dict[str, Any]]:
    """`total` messages of the workload, in order: user, assistant calling tools, results."""
    return list(stream(total, seed))


def stream(total: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """`messages(total, seed)` one at a time, holding only the last (for a million)."""
    rng = random.Random(seed)
    rare_at = {total // 7, total // 2, total - 5}
    last: dict[str, Any] | None = None
    call = 0
    for n in range(total):
        pending = last is not None and last["role"] == "assistant" and last.get("tool_calls")
        if pending:  # a call's result always follows it
            assert last is not None
            size = rng.randint(200, 4000)
            shapes = _CODE if rng.random() < 0.5 else _OUTPUT
            message: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": last["tool_calls"][0]["id"],
                "content": _lines(rng, shapes, size),
            }
        elif rng.random() < 1 / 6:  # user : assistant = 10 : 50
            message = {"role": "user", "content": _words(rng, 10, 60)}
        else:
            message = {"role": "assistant", "content": _words(rng, 20, 200)}
            if rng.random() < 0.8:  # 80% of assistant turns call a tool: 40% are results
                call += 1
                name = rng.choice(("read_file", "bash", "grep", "write_file"))
                target = rng.choice(_WORDS)
                args = (
                    {"command": f"pytest tests/test_{target}.py -q"}
                    if name == "bash"
                    else {"path": f"src/{target}.py"}
                )
                function = {"name": name, "arguments": json.dumps(args)}
                message["tool_calls"] = [{"id": f"call_{call}", "type": "function",
                                          "function": function}]  # fmt: skip
        if n % 100 == 37:  # the common phrase, ~1%
            key = "content"
            message[key] = f"{message.get(key) or ''} The {PHRASE} failed again."
        if n % 200 == 11 and message["role"] == "tool":  # a traceback, ~0.5% of turns
            message["content"] += (
                '\nTraceback (most recent call last):\n  File "src/net.py", line 88, in send\n'
                f"{TRACEBACK}: [Errno 104] Connection reset by peer"
            )
        elif n % 200 == 11:
            message["content"] = (message.get("content") or "") + (
                f"\nThe worker died with a {TRACEBACK} on the socket."
            )
        if n in rare_at:
            message["content"] = f"{message.get('content') or ''} quota hit: {RARE}"
        yield message
        last = message
