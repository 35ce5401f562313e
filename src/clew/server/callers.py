"""Who a request of `clew serve` comes from: the key its Authorization header carries
(Bearer KEY, or HTTP Basic with KEY as the password), whether a request without one comes
from this machine's own pages and tools, and what its line in the request log says. Pure.

A malformed Authorization header is a wrong key (""), never no key (None): a request that
tried a key is refused, not served as the loopback's keyless caller.
"""

from __future__ import annotations

import base64

from clew.server import edge


class Said:
    """What a request's log line says, filled in as the request goes."""

    __slots__ = ("noted", "prefix", "space", "status")

    def __init__(self) -> None:
        self.prefix: str | None = None  # the key used, or tried
        self.space = ""  # its space ("" when no key has that prefix)
        self.status = 500  # until an answer begins
        self.noted = False


def is_local(headers: dict[str, str], client: str) -> bool:
    """Whether a request without a key comes from this machine's own pages and tools: from a
    loopback address (not through a listed proxy) with a loopback Host. A web page elsewhere
    can make a browser send a request to 127.0.0.1, but not with its Host (edge.py's rule;
    a browser's Origin was checked there too)."""
    host = edge.split_host(headers.get("host", ""))
    return (
        host is not None and edge.is_loopback(host[0]) and (not client or edge.is_loopback(client))
    )


def key_of(header: str) -> str | None:
    """The key an Authorization header carries: Bearer KEY, or Basic with KEY as password."""
    kind, _, value = header.strip().partition(" ")
    if kind.lower() == "bearer" and value.strip():
        return value.strip()
    if kind.lower() == "basic" and value.strip():
        try:
            decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return ""  # a malformed header is a wrong key, not no key
        return decoded.partition(":")[2]
    return "" if header.strip() else None
