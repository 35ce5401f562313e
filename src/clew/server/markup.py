"""The dashboard's HTML plumbing: one `escape` for every value that came from the store or
the request, and the page around a body. Pure: values in, text out.

Every page reads without JavaScript; `live.js` only refreshes the parts marked `data-live`
when the journal moves, and forms are plain POSTs that redirect back.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import NamedTuple

STYLE = (
    "body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}"
    "header{background:#1f2a37;color:#fff;padding:.5em 1.2em;display:flex;gap:1.2em;"
    "align-items:center;flex-wrap:wrap}header a{color:#fff;text-decoration:none}"
    "header .space{margin-left:auto}main{max-width:72em;margin:1em auto;padding:0 1.2em}"
    "table{border-collapse:collapse;width:100%;background:#fff}td,th{padding:.3em .6em;"
    "text-align:left;border-bottom:1px solid #e3e3e3;vertical-align:top}"
    "progress{width:7em}.muted{color:#6b7280}.ok{color:#15803d}.bad{color:#b91c1c}"
    "section{background:#fff;border:1px solid #e3e3e3;border-radius:6px;padding:.4em 1em;"
    "margin:.8em 0}h2{font-size:1.05em;margin:.5em 0}pre{white-space:pre-wrap;"
    "word-break:break-word;background:#f3f4f6;padding:.5em;border-radius:4px;max-height:40em;"
    "overflow:auto}ol.plan li{padding:.15em .3em}li.current{background:#fef3c7;font-weight:600}"
    "li.completed,li.skipped{color:#6b7280}.turn{border-left:3px solid #d1d5db;padding:.2em .8em;"
    "margin:.6em 0}.turn.user{border-color:#2563eb}.turn.assistant{border-color:#16a34a}"
    ".turn.tool{border-color:#9ca3af}form.inline{display:inline}input[type=text],"
    "input[type=search],input[type=password]{padding:.25em;min-width:16em}"
    ".tag{display:inline-block;border-radius:3px;padding:0 .35em;background:#e5e7eb;"
    "font-size:.85em}td .muted{white-space:nowrap}"
)


def escape(value: object) -> str:
    """`value` as text safe inside HTML and quoted attributes (None is empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


class Nav(NamedTuple):
    """What the header shows: the space, the caller, the spaces it may switch to."""

    space: str
    who: str  # the key's name or prefix, or "local"
    scope: str
    others: tuple[tuple[str, str], ...] = ()  # (key prefix, space) of the other keys held
    csrf: str = ""
    seq: int = 0  # the journal's head when the page was made (live.js follows from it)


def page(title: str, body: str, nav: Nav, *, live: bool = False) -> str:
    """The whole document around `body`."""
    picker = ""
    if nav.others:
        options = "".join(
            f'<option value="{escape(p)}">{escape(s)} ({escape(p)})</option>' for p, s in nav.others
        )
        picker = (
            f'<form class=inline method=post action="/use">{hidden(nav.csrf)}'
            f"<select name=prefix>{options}</select> <button>switch space</button></form>"
        )
    script = '<script src="/static/live.js" defer></script>' if live else ""
    forget = '<a href="/forget">forget</a>' if nav.scope == "admin" else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width,initial-scale=1">'
        f"<title>{escape(title)} · clew</title><style>{STYLE}</style>{script}</head>"
        f'<body data-seq="{nav.seq}"><header><strong><a href="/">clew</a></strong>'
        f'<a href="/">tasks</a><a href="/sessions">sessions</a>{forget}'
        '<form class=inline method=get action="/search">'
        '<input type=search name=q placeholder="search everything" aria-label=search></form>'
        f"<span class=space>space <b id=space>{escape(nav.space)}</b> · {escape(nav.who)}"
        f" ({escape(nav.scope)})</span>{picker}"
        '<a href="/login">add a key</a>'
        f'<form class=inline method=post action="/logout">{hidden(nav.csrf)}'
        "<button>forget keys</button></form></header>"
        f"<main><h1>{escape(title)}</h1>{body}</main></body></html>"
    )


def hidden(csrf: str) -> str:
    """The CSRF field every form carries."""
    return f'<input type=hidden name=csrf value="{escape(csrf)}">'


def table(headings: Sequence[str], rows: Iterable[str], empty: str) -> str:
    """A table of already-rendered rows, or `empty` when there are none."""
    body = "".join(rows)
    if not body:
        return f"<p class=muted>{escape(empty)}</p>"
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    return f"<table><tr>{head}</tr>{body}</table>"


def cells(*values: str) -> str:
    """One table row of already-rendered cells."""
    return "<tr>" + "".join(f"<td>{v}</td>" for v in values) + "</tr>"


def when(stamp: str | None) -> str:
    """A store timestamp, shortened to the minute."""
    return escape((stamp or "")[:16].replace("T", " "))


def login(message: str = "") -> str:
    """The page that takes a key (no header: nothing of a space is known yet)."""
    said = f"<p class=bad role=alert>{escape(message)}</p>" if message else ""
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>clew: key</title>"
        f"<style>{STYLE}</style></head><body><main><h1>clew</h1>{said}"
        "<p>Give a key from <code>clew keys create</code>; the key decides the space."
        " Keys you add are kept in this browser, and you can switch between their spaces.</p>"
        '<form method=post action="/login"><input type=password name=key autocomplete=off'
        ' placeholder="clew_..." aria-label=key required> <button>open</button></form>'
        "</main></body></html>"
    )
