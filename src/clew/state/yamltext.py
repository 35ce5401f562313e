"""A small YAML emitter for prompt text: block style, one scalar per line, no dependency.

Output invariants, which token budgeting relies on (see tokens.py): every line is one
complete `key: value` or `- value`, no line has trailing whitespace, there are no blank
lines, and the text ends with a newline. A string is written plain only when it cannot
be misread (it starts with an ASCII letter, uses a small safe alphabet and is no YAML
keyword); anything else is double-quoted with JSON's escapes, plus escapes for the
characters YAML would fold or refuse, so any Unicode string parses back exactly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from json.encoder import encode_basestring  # what json.dumps(str, ensure_ascii=False) runs
from typing import Any

_PLAIN = re.compile(r"[A-Za-z](?:[A-Za-z0-9 _./()+@=,'-]*[A-Za-z0-9_./()+@=,'-])?\Z").match
# Words YAML 1.1 (PyYAML) or 1.2 would read as booleans or null.
_KEYWORDS = frozenset(["y", "n", "yes", "no", "true", "false", "on", "off", "null"])
# Characters JSON leaves raw that YAML must not see raw in a double-quoted scalar:
# C1 controls and DEL (not printable), NEL / LS / PS (line breaks, folded), BOM,
# non-characters, and lone surrogates.
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_INDENT = "  "


def scalar(value: object) -> str:
    """Return `value` (str, int, float, bool or None) as a one-line YAML scalar."""
    if type(value) is str:  # most values: plain text, checked first (the state's render)
        return _text(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is int:  # what json.dumps writes for an int, without its call
        return int.__repr__(value)
    if isinstance(value, int | float):
        return json.dumps(value)
    if not isinstance(value, str):
        raise TypeError(f"cannot write {type(value).__name__} as a YAML scalar")
    return _written(value)  # a str subclass (a StrEnum): not kept, keys are plain text


def _text(value: str) -> str:
    # Each short text's scalar kept once worked out: a state writes the same titles, ids
    # and statuses on every render, and a lookup costs a fifth of the check below.
    found = _TEXTS.get(value)
    if found is None:
        found = _written(value)
        if len(value) <= _TEXT_KEPT:
            if len(_TEXTS) >= _TEXTS_MAX:
                _TEXTS.clear()  # a plain bound: renders in turn share few texts
            _TEXTS[value] = found
    return found


_TEXTS: dict[str, str] = {}
_TEXTS_MAX = 4096
_TEXT_KEPT = 200  # characters: longer text is rarely written twice


def _written(value: str) -> str:
    # The keywords are five letters at most: longer text is never lower-cased to look.
    if _PLAIN(value) and (len(value) > 5 or value.lower() not in _KEYWORDS) and "  " not in value:
        return value
    # Not json.dumps: with ensure_ascii=False it builds a new encoder on every call (a state
    # quotes some 25 strings; that was a tenth of its rendering).
    quoted = encode_basestring(value)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


_SCALARS = frozenset({str, int, float, bool, type(None)})


def _is_scalar(value: object) -> bool:
    # The exact types by one set lookup; their subclasses (a StrEnum) by isinstance.
    return type(value) in _SCALARS or isinstance(value, str | int | float | bool)


def _lines(value: Any, indent: str, out: list[str]) -> None:
    # Exact types first (str, int, None, dict, list: nearly every value of a state), each
    # by one `is`; the abstract Mapping and Sequence checks cost ~0.5 µs each through abc.
    kind = type(value)
    if kind is dict or (kind is not list and isinstance(value, Mapping)):
        for key, item in value.items():
            kind = type(item)
            if kind is str:
                out.append(f"{indent}{key}: {_text(item)}")
            elif kind is int:
                out.append(f"{indent}{key}: {int.__repr__(item)}")
            elif item is None:
                out.append(f"{indent}{key}: null")
            elif kind is dict and item:
                out.append(f"{indent}{key}:")
                _lines(item, indent + _INDENT, out)
            elif _is_scalar(item):
                out.append(f"{indent}{key}: {scalar(item)}")
            elif not item:
                out.append(f"{indent}{key}: {'{}' if isinstance(item, Mapping) else '[]'}")
            elif isinstance(item, Sequence) and all(isinstance(i, int) for i in item):
                out.append(f"{indent}{key}: [{', '.join(scalar(i) for i in item)}]")
            else:
                out.append(f"{indent}{key}:")
                _lines(item, indent + _INDENT, out)
    elif kind is list or (isinstance(value, Sequence) and not isinstance(value, str)):
        for item in value:
            kind = type(item)
            if kind is str:
                out.append(f"{indent}- {_text(item)}")
            elif (kind is dict and item) or (
                not _is_scalar(item) and isinstance(item, Mapping) and item
            ):
                nested: list[str] = []
                _lines(item, indent + _INDENT, nested)
                # The first key shares the dash's line: "- key: value".
                out.append(f"{indent}- {nested[0][len(indent) + len(_INDENT) :]}")
                out.extend(nested[1:])
            elif _is_scalar(item):
                out.append(f"{indent}- {scalar(item)}")
            else:
                raise TypeError("sequences hold scalars or non-empty mappings")
    else:
        raise TypeError(f"cannot write {type(value).__name__} as a YAML block")


def dump_lines(data: Mapping[str, Any]) -> list[str]:
    """Return the lines of `data` (a mapping) as block YAML."""
    out: list[str] = []
    _lines(data, "", out)
    return out


def dump(data: Mapping[str, Any]) -> str:
    """Return `data` (a mapping) as a block YAML document ending with a newline."""
    return "\n".join(dump_lines(data)) + "\n"
