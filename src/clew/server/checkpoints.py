"""The server's checkpoints: sealed heads of the spaces' journals, kept outside the store.

Two kinds of evidence that the store was not rolled back or rewritten (checkpointfile.py
says what a checkpoint proves):

- with `--checkpoint-file FILE`, the server appends a line for every space whose journal
  moved: once at start (which also proves the file writable before anything is served),
  then at most every `--checkpoint-every` seconds, and once more at shutdown;
- every answer of the API to a caller with a key (or the keyless loopback caller) carries
  a `Clew-Checkpoint` header, and `GET /api/v1/checkpoint` answers with one: a sealed
  checkpoint of the caller's own space as it stands after the request, never another
  space's. A client keeps them; the server's operator checks them with `clew verify
  --checkpoint` (the seal is keyed: only the holder of the server's sealing key can check
  one, or make one).

A checkpoint is counted on from the previous one of its space (`Memory.checkpoint`'s
`since`), so making one costs a few index reads, not a count of the journal.
"""

from __future__ import annotations

import sys
import threading
import traceback
from typing import TYPE_CHECKING, Any

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clew.errors import ClewError
from clew.journal import checkpointfile
from clew.journal.checkpoints import append
from clew.models import Checkpoint
from clew.server.api import CHECKPOINT_HEADER as HEADER

if TYPE_CHECKING:
    from clew.server.app import Spaces

EVERY_SECONDS = 60.0


class Keeper:
    """The newest checkpoint of each space, made on demand, and the file the moved ones go to."""

    def __init__(self, spaces: Spaces, file: str | None = None, every: float = EVERY_SECONDS):
        self.spaces = spaces
        self.file = file
        self.every = every
        self._newest: dict[str, Checkpoint] = {}  # counted on from
        self._written: dict[str, Checkpoint] = {}  # the last line of each space in the file
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # one write of the file at a time

    def of(self, space: str) -> Checkpoint:
        """A sealed checkpoint of `space`'s journal as it stands now."""
        with self._lock:
            known = self._newest.get(space)
        made = self.spaces.get(space).checkpoint(since={space: known} if known else None)[0]
        self._keep([made])
        return made

    def write(self) -> int:
        """Append a line for each space whose journal moved since this server's last line of
        it (a space with no event has nothing to prove); return how many were appended."""
        if self.file is None:
            return 0
        with self._writing:
            with self._lock:
                known = dict(self._newest)
            made = self.spaces.home.checkpoint(all_spaces=True, since=known)
            self._keep(made)
            moved = [c for c in made if c.events and _moved(self._written.get(c.space), c)]
            append(self.file, [checkpointfile.line(c) for c in moved])
            self._written.update((c.space, c) for c in moved)
            return len(moved)

    def write_quietly(self) -> None:
        """`write`, saying on stderr why it could not: a background task that raised would
        take the server's other tasks (MCP's sessions, the log's flusher) down with it."""
        try:
            self.write()
        except ClewError as exc:
            print(f"clew: no checkpoint written this time: {exc}", file=sys.stderr)
        except Exception:  # a bug of clew's: said, and the next round tries again
            print("clew: no checkpoint written this time (a bug in clew):", file=sys.stderr)
            traceback.print_exc(file=sys.stderr)

    async def run(self) -> None:
        """Write the moved spaces' lines every `every` seconds until cancelled."""
        while True:
            await anyio.sleep(self.every)
            await anyio.to_thread.run_sync(self.write_quietly)

    def _keep(self, made: list[Checkpoint]) -> None:
        with self._lock:
            for c in made:
                known = self._newest.get(c.space)
                if known is None or known.events <= c.events:
                    self._newest[c.space] = c

    def headers(self, app: ASGIApp, paths: tuple[str, ...], skip: frozenset[str]) -> ASGIApp:
        """Wrap `app` (inside the keys middleware, which names the caller): an answer to a
        path under `paths` (not in `skip`) gets the caller's space's checkpoint as a header;
        one that cannot be made (a busy store) is left out, never failing the answer."""

        async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
            path = str(scope.get("path", ""))
            if scope["type"] != "http" or not path.startswith(paths) or path in skip:
                await app(scope, receive, send)
                return

            async def sending(message: Message) -> None:
                space = getattr(scope.get("clew.caller"), "space", None)
                if message["type"] == "http.response.start" and isinstance(space, str):
                    value = await anyio.to_thread.run_sync(self._header, space)
                    if value is not None:
                        pair = (HEADER.lower().encode("ascii"), value)
                        message = {**message, "headers": [*message.get("headers", []), pair]}
                await send(message)

            await app(scope, receive, sending)

        return wrapped

    def _header(self, space: str) -> bytes | None:
        try:
            return checkpointfile.line(self.of(space)).encode("ascii")
        except ClewError:  # busy: the next answer carries one
            return None
        except Exception:  # a bug of clew's must not cost the answer it rides on
            traceback.print_exc(file=sys.stderr)
            return None


def _moved(before: Checkpoint | None, now: Checkpoint) -> bool:
    return before is None or (before.events, before.head) != (now.events, now.head)


def answer(checkpoint: Checkpoint) -> dict[str, Any]:
    """The body of GET /api/v1/checkpoint: the checkpoint, and the line to keep."""
    return {"checkpoint": checkpoint._asdict(), "line": checkpointfile.line(checkpoint)}
