"""What the server checks at its edge, before any key is read or any route runs: the Host a
request names, who the client is behind a listed proxy, and bytes no route could take; and
how a request's route is written into the log. Pure: values in, values out.

The Host rule (against DNS rebinding): a page on attacker.example can make a visitor's browser
send requests to 127.0.0.1 by pointing its own name there, but the browser then says
`Host: attacker.example`. So a request is served only when its Host is the address the server
is bound to with its port (`127.0.0.1:8080`; also `localhost`, on a loopback or wildcard
bind: browsers resolve it themselves, so no DNS answer can move it), or a name the operator
listed (`--allowed-host`, any port: behind a proxy the port is the proxy's). A wildcard bind
(0.0.0.0, ::) takes any IP literal with its port, since an IP literal cannot be rebound;
other names must be listed.
An Origin, when a browser sends one, must name the same host as the Host.

The proxy rule: `X-Forwarded-For` is read only from a peer whose address the operator listed
(`--forwarded-allow-ips`); the client is then the rightmost address in it that is not a
listed proxy (a client can put anything at the front of the header, never at its end).
`Forwarded` is never read: nginx and Caddy pass a client's own `Forwarded` through untouched.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence
from urllib.parse import unquote_to_bytes

from clew.errors import ValidationError

WILDCARDS = frozenset({"0.0.0.0", "::", ""})
MAX_PATH = 2048  # bytes of a path as sent: an id is some 10 characters, a route fewer than 60
MAX_QUERY = 4096
MAX_HEADER = 8192  # a key is 62 characters; a browser's cookie of 8 keys some 500
# Headers clew reads as text: each must be UTF-8 text without control characters.
TEXT_HEADERS = frozenset(
    {
        "authorization",
        "cookie",
        "host",
        "origin",
        "referer",
        "x-forwarded-for",
        "x-forwarded-proto",
        "content-type",
        "mcp-session-id",
        "mcp-protocol-version",
        "last-event-id",
    }
)
ROUTE_CHARS = 300  # of a route in the request log

# What a store may refuse (NUL on PostgreSQL, lone surrogates everywhere) or a terminal may
# act on (other control characters): written as an escape wherever text is kept or shown.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL = re.compile(b"[\x00-\x1f\x7f]")


def _escape(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: str) -> str:
    """`text` with each control character and lone surrogate written as an escape (`\\x00`,
    `\\ud800`): storable on every backend; text that was safe comes back unchanged."""
    return _UNSAFE.sub(_escape, text)


def route_of(raw_path: bytes, limit: int = ROUTE_CHARS) -> str:
    """A request's path as the log keeps it: percent-decoded, each byte that is not UTF-8
    text, each control character and each backslash escaped (so `\\x00` in the log is the
    NUL a client sent, `\\\\x00` the four characters), at most `limit` characters."""
    raw = unquote_to_bytes(raw_path)[: limit * 4].replace(b"\\", b"\\\\")
    return safe(raw.decode("utf-8", "backslashreplace"))[:limit]


# -- hostile bytes ----------------------------------------------------------------------------


def refusal(raw_path: bytes, query: bytes, headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """Why a request's path, query or headers cannot be served (None: they can): too long,
    the NUL character, bytes that are not UTF-8, control characters (but a tab) where text
    is read: no id, name or search a person types holds one."""
    if len(raw_path) > MAX_PATH:
        return f"the path is {len(raw_path):,} bytes long; the most is {MAX_PATH:,}"
    said = _text_refusal(unquote_to_bytes(raw_path), "the path", controls=True)
    if said:
        return said
    if len(query) > MAX_QUERY:
        return f"the query string is {len(query):,} bytes long; the most is {MAX_QUERY:,}"
    said = _text_refusal(
        unquote_to_bytes(query.replace(b"+", b" ")), "the query string", controls=True
    )
    if said:
        return said
    for name, value in headers:
        shown = name.decode("latin-1").lower()
        if len(value) > MAX_HEADER:
            return f"the header {shown} is {len(value):,} bytes long; the most is {MAX_HEADER:,}"
        if shown in TEXT_HEADERS:
            said = _text_refusal(value, f"the header {shown}", controls=True)
            if said:
                return said
        elif b"\x00" in value:
            return f"the header {shown} holds the NUL character"
    return None


def _text_refusal(raw: bytes, what: str, *, controls: bool = False) -> str | None:
    if b"\x00" in raw:
        return f"{what} holds the NUL character (%00), which no text in clew may"
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return f"{what} is not UTF-8 text (percent-encode UTF-8 bytes only)"
    if controls and _CONTROL.search(raw.replace(b"\t", b" ")):
        return f"{what} holds a control character"
    return None


# -- hosts --------------------------------------------------------------------------------------


def _ip(name: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(name.strip("[]"))
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether binding `host` (an address, or `localhost`) serves this machine only."""
    if host.strip("[]").lower() == "localhost":
        return True
    found = _ip(host)
    return found is not None and found.is_loopback


def split_host(value: str) -> tuple[str, int | None] | None:
    """The name (lowercase, brackets and a final dot removed) and port (None: not given) of
    a Host header; None when it is no host."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[1:end], value[end + 1 :]
        if _ip(name) is None or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else None
    else:
        name, colon, port_text_found = value.partition(":")
        port_text = port_text_found if colon else None
        name = name.removesuffix(".")
    if not name or any(c in name for c in "/@ \\?#"):
        return None
    if port_text is None:
        return name, None
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        return None
    return name, int(port_text)


def check_allowed_host(name: str) -> str:
    """A name for --allowed-host, normalised; ValidationError saying what one looks like."""
    text = name.strip().lower().removesuffix(".")
    if text == "*":
        raise ValidationError(
            "--allowed-host takes names, not '*': list each name clients use (or"
            " .example.com for it and every name under it)"
        )
    bare = text[1:] if text.startswith(".") else text
    parsed = split_host(f"[{bare}]" if _ip(bare) is not None and ":" in bare else bare)
    if not bare or parsed is None or parsed[1] is not None:
        raise ValidationError(
            f"--allowed-host {name!r} is not a host name: give a name or address as a client"
            " sends it, without a scheme or port (memory.example.com, .example.com, 10.0.0.5)"
        )
    return text


class Hosts:
    """The Host header values a server bound to `bind` serves (see the module's rule)."""

    def __init__(self, bind: str, allowed: Sequence[str] = ()) -> None:
        self.bind = bind.strip("[]").lower()
        self.allowed = tuple(check_allowed_host(n) for n in allowed)

    def allows(self, header: str, port: int | None) -> bool:
        """Whether a request on local `port` (None: not known, any) whose Host is `header`
        is served."""
        parsed = split_host(header)
        if parsed is None:
            return False
        name, given = parsed
        if self._listed(name):
            return True
        if port is not None and (80 if given is None else given) != port:
            return False
        wildcard = self.bind in WILDCARDS
        if name == "localhost":  # browsers resolve it themselves: no DNS answer moves it
            return wildcard or is_loopback(self.bind)
        if wildcard:
            return _ip(name) is not None
        if _same(name, self.bind):
            return True
        return self.bind == "localhost" and _ip(name) is not None and is_loopback(name)

    def _listed(self, name: str) -> bool:
        for allowed in self.allowed:
            if allowed.startswith("."):
                if name == allowed[1:] or name.endswith(allowed):
                    return True
            elif _same(name, allowed):
                return True
        return False

    def refused(self, header: str) -> str:
        """The line a request with a Host this server does not serve is answered."""
        shown = safe(header[:100]) or "none"
        return (
            f"this server does not answer to Host {shown!r}: it serves its own address and the"
            " names its operator lists with --allowed-host (a guard against DNS rebinding)"
        )


def _same(name: str, other: str) -> bool:
    a, b = _ip(name), _ip(other)
    return a == b if a is not None and b is not None else name == other


def same_origin(origin: str | None, host: str) -> bool:
    """Whether a browser's Origin (absent, or naming the same host and port as the Host
    header, whatever the scheme) comes from this site."""
    if origin is None:
        return True
    scheme, sep, rest = origin.strip().lower().partition("://")
    if not sep or scheme not in ("http", "https"):
        return False  # "null" (a sandboxed frame, a file), or no origin at all
    said = split_host(rest.split("/", 1)[0])
    here = split_host(host)
    if said is None or here is None:
        return False
    default = 443 if scheme == "https" else 80  # a browser leaves out the scheme's own port
    return _same(said[0], here[0]) and (said[1] or default) == (here[1] or default)


# -- proxies ------------------------------------------------------------------------------------


class Proxies:
    """The peers whose X-Forwarded-For (and X-Forwarded-Proto) are believed."""

    def __init__(self, listed: Sequence[str] = ()) -> None:
        self.networks = tuple(_network(n) for part in listed for n in part.split(",") if n.strip())

    def trusts(self, address: str) -> bool:
        """Whether `address` is a listed proxy."""
        found = _ip(address)
        return found is not None and any(found in n for n in self.networks)

    def client(self, peer: str, forwarded_for: str | None) -> str:
        """The client's address: the peer's own, unless the peer is a listed proxy that sent
        X-Forwarded-For; then the rightmost address there that is not a listed proxy."""
        if not forwarded_for or not self.trusts(peer):
            return peer
        hops = [_address(h) for h in forwarded_for.split(",") if h.strip()]
        for hop in reversed(hops):
            if not self.trusts(hop):
                return hop
        return hops[0] if hops else peer

    def scheme(self, peer: str, said: str | None, scheme: str) -> str:
        """The scheme the client used: a listed proxy's X-Forwarded-Proto, else `scheme`."""
        if said is not None and self.trusts(peer):
            last = said.split(",")[-1].strip().lower()
            if last in ("http", "https"):
                return last
        return scheme


def _network(text: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(text.strip().strip("[]"), strict=False)
    except ValueError:
        raise ValidationError(
            f"--forwarded-allow-ips {text.strip()!r} is not an address or network: list the"
            " proxies' addresses (127.0.0.1, 10.0.0.0/8, ::1); there is no '*', since any"
            " client could then choose its own address"
        ) from None


def _address(hop: str) -> str:
    """One X-Forwarded-For entry as an address: brackets and a port removed."""
    hop = hop.strip()
    if hop.startswith("[") and "]" in hop:
        hop = hop[1 : hop.index("]")]
    elif hop.count(":") == 1:
        hop = hop.split(":")[0]
    found = _ip(hop)
    return str(found) if found is not None else safe(hop[:64])


# -- what every answer carries --------------------------------------------------------------

# Every answer: no content sniffing, no referrer sent to another site (a page's URL names its
# ids; "no-referrer" would also make a browser send `Origin: null` on the page's own form
# posts, which the edge refuses), no framing by another site (a form in a frame is
# clickjacking), and nothing kept by a cache unless the route said otherwise (the memory is
# not for a shared cache or a browser's disk).
_ALWAYS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)


def page_policy(style: str) -> bytes:
    """The Content-Security-Policy of the dashboard's pages: its own script, its one inline
    style block (by hash), requests and forms to itself only, no frames, no plugins."""
    import base64
    import hashlib

    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode()
    return (
        "default-src 'none'; script-src 'self'; connect-src 'self'; img-src 'self' data:;"
        f" style-src 'sha256-{digest}'; form-action 'self'; base-uri 'none';"
        " frame-ancestors 'none'"
    ).encode()


API_POLICY = b"default-src 'none'; frame-ancestors 'none'"


def guarded(headers: Sequence[tuple[bytes, bytes]], page: bytes) -> list[tuple[bytes, bytes]]:
    """An answer's headers with what every answer carries added (what it set itself kept):
    `page` as the Content-Security-Policy of HTML, the API's for the rest."""
    names = {name.lower() for name, _ in headers}
    out = list(headers)
    out += [(name, value) for name, value in _ALWAYS if name not in names]
    if b"cache-control" not in names:
        out.append((b"cache-control", b"no-store"))
    if b"content-security-policy" not in names:
        html = any(n.lower() == b"content-type" and v.startswith(b"text/html") for n, v in headers)
        out.append((b"content-security-policy", page if html else API_POLICY))
    return out
