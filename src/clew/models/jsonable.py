"""Any value of clew.models as plain JSON-ready data.

Like every module of clew.models, this one does without `from __future__ import
annotations`: NamedTuple compiles each field's annotation that is a string, and the hook
path imports every record (see the package's docstring).
"""

import base64
from enum import StrEnum
from typing import Any


def to_jsonable(value: Any) -> Any:
    """Return `value` (records, enums, tuples, bytes) as plain JSON-ready data."""
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {name: to_jsonable(getattr(value, name)) for name in value._fields}
    if isinstance(value, StrEnum):
        return value.value
    if isinstance(value, bytes):
        # Non-UTF-8 output is shown as base64 so JSON stays valid and nothing is altered.
        return {"base64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    return value
