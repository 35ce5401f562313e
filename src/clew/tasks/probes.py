"""Checking a wait: validate what it awaits, then look (run the command, stat the file, ask
the local URL, read the clock).

`target_of` and `criteria_of` are pure and run when a wait is added, so a wait that could
never be checked is refused with one line. `probe` does the I/O, never inside a transaction,
and never for a wait that makes the host act (a command, a file, a URL) whose seal does not
verify with this host's sealing key (`unsealed`): such a wait was not added here by a caller
allowed to add it (origin.py), so it is refused, whatever the row says. Otherwise:
a command runs in its own process group with a time limit and its output is read with a cap
(the first and last 32 KB are kept, the rest is read and dropped); a URL may only be on this
machine (127.0.0.1, localhost, ::1), is asked without proxies and without following
redirects, and its body is read up to 64 KB.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, NamedTuple

from clew.core.lifecycle import (
    CRITERIA,
    LOCAL_HOSTS,
    MAX_REGEX,
    POLLED,
    Wait,
    WaitKind,
    seal_fields,
)
from clew.errors import ValidationError

HEAD = TAIL = 32 * 1024
BODY = 64 * 1024
FILE_READ = 1024 * 1024
EVIDENCE_CHARS = 600


NOT_SEALED = (
    "never run: it was not added here by a caller allowed to add it (it came in by an"
    " import, a push or a direct write to the store, or was sealed with another host's key);"
    " add it again here to run it (`clew wait add`, or smart_wait add as a server allows)"
)


class Probe(NamedTuple):
    """What one look saw: met, pending (not yet), broken (cannot be checked) or refused (a
    host wait this host never vouched for: not looked at)."""

    outcome: str
    observation: str  # short and stable: a change of it is journaled
    evidence: str  # for a person: the observation and what backs it


# -- validation (pure) ------------------------------------------------------------------------


def target_of(kind: WaitKind, target: str, now: datetime, cwd: str | None) -> str:
    """Return the wait's target in its stored form, or raise ValidationError."""
    if kind is not WaitKind.MANUAL and "\x00" in target:
        raise ValidationError(f"a {kind.value} wait's target cannot hold a NUL character")
    if kind is WaitKind.URL:
        check_url(target)
    elif kind is WaitKind.FILE:
        path = os.path.expanduser(target)
        return path if os.path.isabs(path) else os.path.normpath(os.path.join(cwd or "", path))
    elif kind is WaitKind.TIME:
        from clew.core.clock import parse, stamp

        try:
            moment = datetime.fromisoformat(target.strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValidationError(
                f"time {target!r} is not an ISO time like 2026-11-23T15:00Z (or give a delay"
                " like 10m)"
            ) from None
        if moment.tzinfo is None:
            from datetime import UTC

            moment = moment.replace(tzinfo=UTC)
        return stamp(parse(stamp(moment)))
    return target


def check_url(url: str) -> None:
    """Refuse a URL that is not http(s) on this machine."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        host = parts.hostname
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError as exc:
        raise ValidationError(f"url {url!r} is not a valid URL ({exc})") from None
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        raise ValidationError(f"url {url!r} holds spaces or control characters; encode them")
    if parts.scheme not in ("http", "https"):
        raise ValidationError(f"url {url!r} must start with http:// or https://")
    if host not in LOCAL_HOSTS:
        raise ValidationError(
            f"url {url!r} is not on this machine: a URL wait may only ask 127.0.0.1,"
            " localhost or [::1] (poll a remote service with a command wait instead)"
        )


def criteria_of(kind: WaitKind, given: Mapping[str, Any]) -> dict[str, Any]:
    """Return the success criteria a kind accepts, checked, or raise ValidationError."""
    allowed = CRITERIA[kind]
    unknown = [k for k, v in given.items() if v is not None and k not in allowed]
    if unknown:
        takes = ", ".join(allowed) if allowed else "no criteria"
        raise ValidationError(f"a {kind.value} wait takes {takes}, not {', '.join(unknown)}")
    out: dict[str, Any] = {}
    for key in allowed:
        value = given.get(key)
        if value is None:
            continue
        if key in ("exit_code", "status"):
            low, high = (0, 255) if key == "exit_code" else (100, 599)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValidationError(f"{key} must be a whole number {low}-{high}, not {value!r}")
        else:
            if not isinstance(value, str) or not value:
                raise ValidationError(f"{key} must be non-empty text, not {value!r}")
            if key == "regex":
                if len(value) > MAX_REGEX:
                    raise ValidationError(f"regex is too long ({len(value)} > {MAX_REGEX} chars)")
                try:
                    re.compile(value)
                except re.error as exc:
                    raise ValidationError(f"regex {value!r} is not valid: {exc}") from None
        out[key] = value
    return out


def _matches(criteria: Mapping[str, Any], text: str) -> str | None:
    """Why the text fails the content criteria, or None if it meets them."""
    if "contains" in criteria and criteria["contains"] not in text:
        return f"output lacks {criteria['contains']!r}"
    if "regex" in criteria and re.search(criteria["regex"], text) is None:
        return f"no match for /{criteria['regex']}/"
    return None


def _tail(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= EVIDENCE_CHARS else "…" + flat[-EVIDENCE_CHARS:]


# -- looking (I/O) ----------------------------------------------------------------------------


def probe(wait: Wait, now: datetime) -> Probe:
    """Look once at what the wait awaits, if this host vouches for it. Never raises: a look
    that cannot be made is a broken probe, so one odd wait cannot stop the worker."""
    try:
        if wait.kind in POLLED:
            why = unsealed(wait)
            if why is not None:
                return Probe("refused", "not run", why)
        return _look(wait, now)
    except Exception as exc:  # the last net: say what happened, on the wait
        return Probe("broken", "cannot check", f"the check failed: {type(exc).__name__}: {exc}")


def unsealed(wait: Wait) -> str | None:
    """Why a wait that makes the host act must not run (None: it may): its seal is not this
    host's seal of what it holds, or a file wait kept in a folder now resolves outside it."""
    from clew.core import origin
    from clew.privacy import sealing

    try:
        key = sealing.secret(create=False)
    except ValidationError as exc:  # nothing was sealed here (or the key was moved away)
        return f"{NOT_SEALED}; {exc}"
    fields = seal_fields(wait.space, wait.task_id, wait._asdict())
    if not sealing.check("wait", fields, wait.seal, key=key):
        return NOT_SEALED
    if wait.confined_to is not None and origin.inside(wait.target, (wait.confined_to,)) is None:
        return (
            f"not run: {wait.target} now resolves outside {wait.confined_to}, the folder the server"
            " allowed it in (a symbolic link changed?)"
        )
    return None


def _look(wait: Wait, now: datetime) -> Probe:
    if wait.kind is WaitKind.COMMAND:
        return _command(wait)
    if wait.kind is WaitKind.FILE:
        return _file(wait)
    if wait.kind is WaitKind.URL:
        return _url(wait)
    if wait.kind is WaitKind.TIME:
        from clew.core.clock import parse

        if now >= parse(wait.target):
            return Probe("met", "the time came", f"it is past {wait.target[:16]}Z")
        return Probe("pending", "not yet", f"waiting until {wait.target[:16]}Z")
    return Probe("pending", "waiting for someone", "resolved by hand")


def run_bounded(command: str, timeout: float, cwd: str | None) -> tuple[int | None, str]:
    """Run a shell command with a time limit; return its exit code (None if it ran out of
    time and was killed) and its output (stdout and stderr), capped."""
    import signal
    import subprocess
    import threading

    proc = subprocess.Popen(
        command,
        shell=True,
        cwd=cwd or None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: a timeout kills its children too
    )
    head = bytearray()
    tail = bytearray()
    dropped = [0]

    def read() -> None:
        stream = proc.stdout
        assert stream is not None
        for chunk in iter(lambda: os.read(stream.fileno(), 65536), b""):
            room = HEAD - len(head)
            if room > 0:
                head.extend(chunk[:room])
                chunk = chunk[room:]
            tail.extend(chunk)
            if len(tail) > TAIL:
                dropped[0] += len(tail) - TAIL
                del tail[: len(tail) - TAIL]

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        code: int | None = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            proc.kill()
        proc.wait()
    reader.join(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()
    gap = f"\n[… {dropped[0]} bytes …]\n" if dropped[0] else ""
    text = head.decode("utf-8", "replace") + gap + tail.decode("utf-8", "replace")
    return code, text


def _command(wait: Wait) -> Probe:
    try:
        code, output = run_bounded(wait.target, wait.run_timeout, wait.cwd)
    except (OSError, ValueError) as exc:
        return Probe("broken", "cannot run", f"the command cannot run: {exc}")
    if code is None:
        return Probe(
            "pending",
            f"ran over {wait.run_timeout:g}s",
            f"killed after {wait.run_timeout:g}s: {_tail(output)}",
        )
    wanted = wait.criteria.get("exit_code", 0)
    said = f" — {_tail(output)}" if output.strip() else ""
    if code != wanted:
        return Probe("pending", f"exit {code}", f"exit {code} (waiting for {wanted}){said}")
    why = _matches(wait.criteria, output)
    if why is not None:
        return Probe("pending", f"exit {code}, {why}", f"exit {code}, {why}{said}")
    return Probe("met", f"exit {code}", f"exit {code}{said}")


def _file(wait: Wait) -> Probe:
    path = wait.target
    if not os.path.exists(path):
        return Probe("pending", "absent", f"{path} does not exist yet")
    if os.path.isdir(path):
        if wait.criteria:
            return Probe("broken", "a folder", f"{path} is a folder; its content cannot match")
        return Probe("met", "present", f"the folder {path} exists")
    try:
        size = os.path.getsize(path)
        if not wait.criteria:
            return Probe("met", "present", f"{path} exists ({size} bytes)")
        with open(path, "rb") as handle:
            text = handle.read(FILE_READ).decode("utf-8", "replace")
    except OSError as exc:
        return Probe("broken", "unreadable", f"{path} cannot be read: {exc.strerror or exc}")
    why = _matches(wait.criteria, text)
    if why is not None:
        return Probe("pending", f"present, {why}", f"{path} exists ({size} bytes), {why}")
    return Probe("met", "present, matches", f"{path} exists ({size} bytes) and matches")


def _url(wait: Wait) -> Probe:
    import urllib.error
    import urllib.request

    try:
        check_url(wait.target)
    except ValidationError as exc:
        return Probe("broken", "not local", str(exc))

    class Refuse(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: Any, **kwargs: Any) -> None:
            return None  # the 3xx itself is the answer

    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), Refuse())
    try:
        with opener.open(wait.target, timeout=wait.run_timeout) as response:
            status, body = response.status, response.read(BODY)
    except urllib.error.HTTPError as exc:
        status, body = exc.code, exc.read(BODY) if exc.fp is not None else b""
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return Probe("pending", f"no answer ({reason})", f"{wait.target}: no answer ({reason})")
    text = body.decode("utf-8", "replace")
    wanted = wait.criteria.get("status")
    ok = status == wanted if wanted is not None else 200 <= status < 300
    said = f" — {_tail(text)}" if text.strip() else ""
    if not ok:
        want = wanted if wanted is not None else "2xx"
        return Probe("pending", f"HTTP {status}", f"HTTP {status} (waiting for {want}){said}")
    why = _matches(wait.criteria, text)
    if why is not None:
        return Probe("pending", f"HTTP {status}, {why}", f"HTTP {status}, {why}{said}")
    return Probe("met", f"HTTP {status}", f"{wait.target} answered HTTP {status}{said}")
