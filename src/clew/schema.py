"""Checking tool arguments against the tools' JSON Schemas. Pure.

Only what the registry's schemas use: `type` (one or a list), `enum`, `properties`,
`required`, `additionalProperties: false`, `items`, `minItems`, `minimum`, `maximum`. The
error names the argument and what it should be, for a model to correct its call.
"""

from __future__ import annotations

from typing import Any

from clew.checks import shown
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
            raise ValidationError(f"{where} needs at least {schema['minItems']} item(s)")
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
    """Check a tool call's arguments (None values count as not given)."""
    for name in [k for k, v in arguments.items() if v is None]:
        del arguments[name]
    check(schema, arguments, "arguments")
