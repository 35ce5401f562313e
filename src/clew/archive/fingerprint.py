"""Error fingerprints: the same failure seen again gets the same signature.

Pure. An error's text is reduced to its telling line (the last line that names an error,
else the last line), split into a kind (`ModuleNotFoundError`, `ECONNRESET`, `E501`...)
and a message whose variable parts are masked: URLs, paths, UUIDs, hashes, ids,
timestamps and numbers. The command is reduced the same way (its program and words kept,
its paths and numbers masked). The signature is the three together; its key is a short
hash of it, so "have I seen this before, and what worked?" is an exact, indexed lookup.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from clew.core.pattern import LazyPattern, lazy

MAX_CHARS = 300  # of the masked message kept in the signature

_ERROR_LINE = lazy(
    r"\b(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Failure|Warning)|error|ERROR|Error|"
    r"fatal|FATAL|failed|FAILED|denied|E[A-Z]{3,})\b"
)
_KIND = lazy(
    r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Fault|Failure|Warning)|E[A-Z]{3,}|"
    r"[A-Z]+(?:_[A-Z0-9]+)+|[A-Z]{1,3}\d{2,5})\b"
)
# Masks, applied in order; each turns what varies between two sightings into a token.
_TIMESTAMP = r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
_UUID = r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
_PATH = r"(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][\w.@+-]+)+[/\\]?|\b[\w.-]+(?:/[\w.@+-]+)+"
_FILE = r"\b[\w-]+\.(?:py|js|ts|tsx|jsx|go|rs|rb|java|c|h|cpp|json|ya?ml|toml|txt|md|sh|sql|log)\b"
_MASKS: tuple[tuple[LazyPattern, str], ...] = (
    (lazy(r"\b[a-z][a-z0-9+.-]*://\S+", re.I), "<url>"),
    (lazy(_TIMESTAMP), "<time>"),
    (lazy(r"\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b"), "<time>"),
    (lazy(_UUID, re.I), "<uuid>"),
    (lazy(_PATH), "<path>"),
    (lazy(_FILE), "<path>"),
    (lazy(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    (lazy(r"\b[0-9a-f]{7,}\b"), "<hex>"),
    (lazy(r"\b(?=[a-z]*\d)(?=\d*[a-z])[0-9a-z]{8,}\b"), "<id>"),
    (lazy(r"\d+(?:\.\d+)*"), "<n>"),
)
_SPACES = lazy(r"\s+")


class Fingerprint(NamedTuple):
    """An error's signature: its kind, its masked message and its masked command."""

    kind: str
    message: str
    command: str | None
    key: str  # 16 hex digits: the exact-lookup key


def mask(text: str) -> str:
    """Mask the parts of `text` that vary between sightings of one error."""
    for pattern, token in _MASKS:
        text = pattern.sub(token, text)
    return _SPACES.sub(" ", text).strip()


_STRONG = lazy(
    r"\b[A-Z][A-Za-z0-9]*(?:Error|Exception|Fault)\b:|\berror(?:\[\w+\])?:|\bE[A-Z]{3,}\b|"
    r"\bfatal:"
)


# What any match of _STRONG holds: one of these, or an E and three capitals. Most failed
# commands' output holds none, and searching each of its lines for _STRONG in vain was
# most of the cost of a turn's session-state fold when a command failed.
_STRONG_PARTS = ("Error:", "Exception:", "Fault:", "error", "fatal:")
_STRONG_E = lazy(r"E[A-Z]{3}")


def _may_be_strong(text: str) -> bool:
    return any(part in text for part in _STRONG_PARTS) or _STRONG_E.search(text) is not None


def telling_line(text: str) -> str:
    """The line of an error text that says what went wrong: the last one that names an error
    plainly ("ValueError: ...", "error: ...") over wrappers' lines ("make: *** Error 1"),
    else the last that mentions an error, else the last line."""
    lines = text.strip().splitlines()
    if not lines:
        return ""
    # From the last line up, each stripped when reached: the line is usually near the end.
    for pattern in (_STRONG, _ERROR_LINE) if _may_be_strong(text) else (_ERROR_LINE,):
        search = pattern.compiled.search
        for line in reversed(lines):
            if search(line):  # a line's spaces at its edges change no match: \b sees none
                return line.strip()
    return lines[-1].strip()  # the text was stripped: its last line holds something


_WORD = lazy(r"[A-Za-z][A-Za-z-]*\Z")


def command_shape(command: str) -> str:
    """A command's shape: the program, its subcommand words and flags; every other argument
    (files, hosts, versions, numbers) is `<arg>`, and flag values are masked."""
    words = command.strip().split()
    if not words:
        return ""
    shape = [words[0].rsplit("/", 1)[-1]]  # /usr/bin/python3 -> python3
    for word in words[1:]:
        if word.startswith("-"):
            flag, sep, _ = word.partition("=")
            shape.append(f"{flag}=<arg>" if sep else flag)
        else:
            shape.append(word if _WORD.match(word) else "<arg>")
    return " ".join(shape)


def fingerprint(text: str, command: str | None = None) -> Fingerprint:
    """Return the fingerprint of an error text (and the command that failed, if known)."""
    import hashlib  # only writes and lookups of errors pay for it, not the CLI's start

    line = telling_line(text)
    found = _KIND.search(line)
    kind = found.group(1) if found else "error"
    message = mask(line)[:MAX_CHARS]
    shape = command_shape(command) if command and command.strip() else None
    signature = "\x00".join((kind, message, shape or ""))
    key = hashlib.blake2b(signature.encode("utf-8"), digest_size=8).hexdigest()
    return Fingerprint(kind, message, shape, key)
