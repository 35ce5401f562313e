"""Text for prompts: one line, clipped to a budget of characters, and step numbers as ranges.
Pure."""

from __future__ import annotations

import re
from collections.abc import Sequence

# Control characters, and those YAML escapes in six bytes (a BOM, non-characters, lone
# surrogates): invisible in a prompt, and costly once escaped (a goal of U+FFFE cut to
# twelve characters took the core state two bytes past its bound).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\ufeff\ufffe\uffff\ud800-\udfff]")


def clip(text: str, limit: int) -> str:
    """Return `text` on one line for a prompt, cut to `limit` characters with an ellipsis;
    control characters and those YAML escapes (invisible, and costly once escaped) show
    as '?'."""
    # Printable text holds no whitespace but the ASCII space (str.isprintable), so text
    # with no run of spaces and none at its ends is already flat: most titles and summaries.
    if text.isprintable() and "  " not in text and text[:1] != " " and text[-1:] != " ":
        flat = text
    else:
        flat = " ".join(text.split())
        if not flat.isprintable():  # a control character is never printable
            flat = _CONTROL.sub("?", flat)
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def clip_command(command: str, limit: int) -> str:
    """A command line on one line in `limit` characters, cut in the middle: its program at the
    head and its last arguments at the tail, where runs of one command differ (a shard, a
    partition, a version, a test id), so two clipped runs still read apart."""
    flat = clip(command, len(command) + 1)
    if len(flat) <= limit or limit < 8:
        return clip(flat, limit)
    head = max(1, (limit - 1) // 3)
    tail = limit - 1 - head
    return flat[:head].rstrip() + "…" + flat[len(flat) - tail :].lstrip()


def number_ranges(numbers: Sequence[int]) -> str:
    """Format sorted step numbers compactly: [1, 2, 3, 5] -> '1-3, 5'."""
    parts: list[str] = []
    start = prev = None
    for n in numbers:
        if start is None:
            start = prev = n
        elif prev is not None and n == prev + 1:
            prev = n
        else:
            parts.append(f"{start}-{prev}" if start != prev else f"{start}")
            start = prev = n
    if start is not None:
        parts.append(f"{start}-{prev}" if start != prev else f"{start}")
    return ", ".join(parts)


def counted(count: int, noun: str, plural: str = "") -> str:
    """Return '1 task' or '2 tasks': a count with its noun in the number it takes
    (`plural` for a noun that does not just add an s)."""
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def clip_words(text: str, limit: int) -> str:
    """Return `text` on one line in `limit` characters, cut at a word boundary with an
    ellipsis, and never inside a `quoted command` (a command cut mid-word reads as another
    command: the cut falls before its opening backtick)."""
    flat = clip(text, len(text) + 1)
    if len(flat) <= limit:
        return flat
    head = flat[: limit - 1]
    if flat[limit - 1] != " ":  # the cut falls inside a word: drop that word
        head = head[: head.rfind(" ") + 1] if " " in head else ""
    if head.count("`") % 2:  # inside a quoted command: drop it
        head = head[: head.rfind("`")]
    head = head.rstrip(" ;,:")
    return head + "…" if head else clip(flat, limit)
