"""The error lines of the middle of a long command output, for the search index: a frozen
copy of clew/archive/error_lines.py as migration 14 shipped it. Never edit it: events written before
they carried their error lines, and the rows migration 14 filled, are derived by exactly
this (a tuned clew/archive/error_lines.py changes only what new events carry).

The index keeps a command output's head (OUTPUT_HEAD characters) and tail (OUTPUT_TAIL): a
2 MB build log that failed in its middle and went on would otherwise hide the failure. So
the lines of the middle that say an error (a traceback, `error:`, `FAILED`, `panic:`, `npm
ERR!`, pytest's `E   ` lines, an exit code, a segmentation fault...) are kept too, each with
the line before and after it, each error once (its numbers aside), MIDDLE_CHARS at most in all.

Invariants:
- Deterministic and derived from the output alone: a replay of an old event derives the
  same lines as migration 14 wrote into its row, so `verify` agrees.
- None when the output is short enough to be indexed whole, or its middle says no error.
- Linear in the output's length: one scan of the middle by one expression.
"""

from __future__ import annotations

import re

OUTPUT_HEAD = 4000  # of an output indexed as its head (as migrations.bounded cuts it)
OUTPUT_TAIL = 8000  # and as its tail
MIDDLE_CHARS = 4000  # of error lines (with their context) kept from the middle
LINE_CHARS = 300  # of each line kept
SEPARATOR = "\n"

# How tools say that something failed, line by line. Case matters: "error" in prose
# ("0 errors", "error handling") is no failure, "error:" and "ERROR" are.
_DIGITS = re.compile(r"\d+")
_SAYS_ERROR = re.compile(
    r"Traceback \(most recent call last\)"  # Python
    r"|\b[A-Z]\w*(?:Error|Exception|Fault)\b(?::|$| in )"  # ValueError: ..., java.io.IOException
    r"|\b(?:[Ee]rror|ERROR)(?:\[\w+\])?:"  # gcc, rustc error[E0308]:, mypy, pip ERROR:
    r"|\[ERROR\]|^\s*ERROR\b|\bERR!"  # maven [ERROR], log levels, npm ERR!
    r"|\b(?:FAILED|FAILURE|FAIL)\b|\bfailed(?: to\b|:)|^\s*Failed\b"  # pytest, go, cargo
    r"|\b(?:fatal|FATAL)\b|\bpanic(?:ked)?\b"  # git fatal:, go panic:, rust panicked at
    r"|^E {2,}\S"  # pytest's assertion lines
    r"|\bexit (?:code|status) [1-9]|\bexited with (?:code )?[1-9]|\breturned non-zero"
    r"|Segmentation fault|core dumped|\bAborted\b|\bKilled\b|out of memory"
    r"|^make(?:\[\d+\])?: \*\*\*|undefined reference to|Caused by:|Uncaught\b"
    r"|\bE[A-Z]{3,}\b:|\bcommand not found\b|\bNo such file or directory\b",
    re.MULTILINE,
)


# Words one of which every error line above holds (lower-cased): found by str.find, which
# scans megabytes in milliseconds where the expression above would take seconds; only the
# lines holding one are tested by it.
_CUES = (
    "error",
    "exception",
    "fault",
    "fail",
    "fatal",
    "panic",
    "traceback",
    "err!",
    "exit",
    "returned non-zero",
    "core dumped",
    "aborted",
    "killed",
    "out of memory",
    "***",
    "undefined reference",
    "caused by",
    "uncaught",
    "not found",
    "no such file",
    "\ne  ",
)
MAX_CUES = 5000  # places of one cue looked at: a log saying "error" on every line costs no more


def error_lines(output: str | bytes | None) -> str | None:
    """The error lines of an output's middle, each with its neighbours, or None."""
    if output is None:
        return None
    text = output.decode("utf-8", "replace") if isinstance(output, bytes) else output
    if len(text) <= OUTPUT_HEAD + OUTPUT_TAIL:
        return None
    start, end = OUTPUT_HEAD, len(text) - OUTPUT_TAIL
    kept: dict[int, str] = {}  # a line's start -> the line, in the output's order
    seen: set[str] = set()
    size = 0
    for first in _candidates(text, start, end):
        line_end = text.find("\n", first)
        if line_end < 0 or line_end > end:
            line_end = end
        line = _line(text, first, line_end)
        if not _SAYS_ERROR.search(line):
            continue
        said = _DIGITS.sub("0", line.strip())  # the same error at another time or place
        if said in seen:  # a log saying one error a thousand times says it once
            continue
        seen.add(said)
        around = [(first, line)]
        if first > start:  # the line before, if it is in the middle
            before = text.rfind("\n", 0, first - 1) + 1
            if before >= start:
                around.insert(0, (before, _line(text, before, first - 1)))
        if line_end + 1 < end:  # the line after
            around.append((line_end + 1, _line(text, line_end + 1)))
        for at, piece in around:
            if at in kept or not piece.strip():
                continue
            if at != first and _DIGITS.sub("0", piece.strip()) in seen:
                continue  # a neighbour that is the error said again
            if size + len(piece) + 1 > MIDDLE_CHARS:
                return _joined(kept)
            kept[at] = piece
            size += len(piece) + 1
    return _joined(kept)


def _candidates(text: str, start: int, end: int) -> list[int]:
    """The starts of the lines of text[start:end] holding a cue, in order."""
    middle = text[start:end].lower()
    places: set[int] = set()
    for cue in _CUES:
        at = middle.find(cue)
        for _ in range(MAX_CUES):
            if at < 0:
                break
            places.add(at + (cue[0] == "\n"))
            at = middle.find(cue, at + len(cue))
    firsts = {middle.rfind("\n", 0, at) + 1 for at in places}
    return sorted(start + first for first in firsts)


def _line(text: str, first: int, last: int | None = None) -> str:
    """The line starting at `first` (ending at `last`, when known), cut to LINE_CHARS, its
    white space kept at the start (pytest's `E   ` says what it is by it)."""
    if last is None:
        last = text.find("\n", first)
    return text[first : min(last if last >= 0 else len(text), first + LINE_CHARS)].rstrip()


def _joined(kept: dict[int, str]) -> str | None:
    return SEPARATOR.join(kept[at] for at in sorted(kept)) or None
