"""Checking tool arguments against the tools' JSON Schemas. Pure.

Only what the registry's schemas use: `type` (one or a list), `enum`, `properties`,
`required`, `additionalProperties: false`, `items`, `minItems`, `minimum`, `maximum`. The
error names the argument and what it should be, for a model to correct its call.
"""

from __future__ import annotations

from typing import Any

from clew.core.checks import shown
from clew.core.text import counted
from clew.errors import ValidationError

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list, tuple),
    "object": (dict,),
    "null": (type(None),),
}


def _is(value: Any, kind: str) -> bool:
    if kind in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _TYPES[kind])


def check(schema: dict[str, Any], value: Any, where: str) -> None:
    """Raise a ValidationError if `value` does not match `schema`."""
    kinds = schema.get("type")
    if kinds is not None:
        wanted = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(value, k) for k in wanted):
            raise ValidationError(f"{where} must be {' or '.join(wanted)}, not {shown(value)}")
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        raise ValidationError(f"{where} is {shown(value)}; it must be one of {allowed}")
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ValidationError(
                f"{where} must be at least {schema['minimum']}, not {shown(value)}"
            )
        if "maximum" in schema and value > schema["maximum"]:
            raise ValidationError(
                f"{where} must be at most {schema['maximum']}, not {shown(value)}"
            )
    if isinstance(value, list | tuple):
        if len(value) < schema.get("minItems", 0):
            raise ValidationError(f"{where} needs at least {counted(schema['minItems'], 'item')}")
        for n, item in enumerate(value, 1):
            if "items" in schema:
                check(schema["items"], item, f"{where}[{n}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                owner = "" if where == "arguments" else f" of {where}"
                raise ValidationError(f"the required argument {name!r}{owner} is missing")
        for name, item in value.items():
            if name in properties:
                check(properties[name], item, f"{where}.{name}" if where != "arguments" else name)
            elif schema.get("additionalProperties") is False:
                known = ", ".join(properties)
                raise ValidationError(f"unknown argument {name!r}; the arguments are: {known}")


def check_arguments(schema: dict[str, Any], arguments: dict[str, Any]) -> None:
    """Check a tool call's arguments (None values count as not given), and that every text
    in them, however deep, is text a store can keep (`check_text`)."""
    for name in [k for k, v in arguments.items() if v is None]:
        del arguments[name]
    check_text(arguments, "arguments")
    check(schema, arguments, "arguments")


def check_text(value: Any, where: str) -> None:
    """Raise a ValidationError naming the argument if any text in `value` (a key too) holds
    the NUL character, which a PostgreSQL store cannot keep (so no store of clew's takes it
    from a call, whichever its backend), or a lone surrogate, which is no UTF-8 text."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, at = stack.pop()
        if isinstance(item, str):
            _check_one(item, at)
        elif isinstance(item, dict):
            for key, child in item.items():
                named = f"{at}.{key}" if at != "arguments" else str(key)
                if isinstance(key, str):
                    _check_one(key, f"a key of {at}")
                stack.append((child, named))
        elif isinstance(item, list | tuple):
            stack.extend((child, f"{at}[{n}]") for n, child in enumerate(item, 1))


def _check_one(text: str, where: str) -> None:
    if "\x00" in text:
        raise ValidationError(
            f"{shown_name(where)} holds the NUL character (\\u0000), which clew keeps in no"
            " store; remove it"
        )
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise ValidationError(
                f"{shown_name(where)} holds a lone surrogate (such as \\ud800), which is not"
                " UTF-8 text; send the text it stands for"
            ) from None


def shown_name(where: str) -> str:
    """An argument's path as an error names it: on one line (a key can hold anything), at
    most 80 characters."""
    where = where if len(where) <= 80 else f"{where[:60]}…"
    if where.isprintable():
        return where
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in where)
