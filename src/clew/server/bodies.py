"""The bodies of the HTTP API's requests and answers: a request's body read under its bound
(MAX_BODY), a JSON object's arguments, an import's lines as they come, the export streamed
as it is written, and the JSON of an error.

The export is written by its own thread into a bounded queue (`_Pipe`) that the answer reads:
a slow client slows the export, and one that goes away stops it.
"""

from __future__ import annotations

import contextlib
import json
import queue
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from typing import TYPE_CHECKING, Any

import anyio
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from clew.errors import ValidationError

if TYPE_CHECKING:
    from clew.memory import Memory

MAX_BODY = 64 * 1024 * 1024  # the most a request body may hold (as the CLI's --max-input-mb)


def json_error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """The JSON answer of a refused or failed request: {"error": message}."""
    return JSONResponse({"error": message}, status_code=status, headers=headers)


async def json_arguments(request: Request) -> dict[str, Any] | Response:
    """A request's JSON object body (none: an empty object), or the 400 it gets."""
    raw = await read_body(request)
    if isinstance(raw, Response):
        return raw
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return json_error(400, "the request body is not valid JSON: send a JSON object")
    if not isinstance(arguments, dict):
        return json_error(400, "the request body must be a JSON object")
    return arguments


async def read_body(request: Request) -> bytes | Response:
    """The request's body, or the 400 that says it is too large."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return json_error(400, f"the request body is larger than {MAX_BODY >> 20} MB")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return json_error(400, f"the request body is larger than {MAX_BODY >> 20} MB")
        chunks.append(chunk)
    return b"".join(chunks)


def body_lines(next_chunk: Callable[[], bytes | None], limit: int = MAX_BODY) -> Iterator[str]:
    """A request body's lines as text, from its chunks as they come (only "\n" ends a line:
    the data may hold other line breaks); ValidationError for a line that is not UTF-8 or
    longer than `limit` bytes."""
    buffer, number = bytearray(), 0

    def text(raw: bytes | bytearray) -> str:
        try:
            return bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(
                f"line {number} of the journal file is not UTF-8 text; send what export"
                " gives; nothing was imported"
            ) from None

    while (chunk := next_chunk()) is not None:
        buffer += chunk
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            number += 1
            yield text(buffer[start : end + 1])
            start = end + 1
        del buffer[:start]
        if len(buffer) > limit:
            raise ValidationError(
                f"line {number + 1} of the journal file is larger than {limit >> 20} MB;"
                " nothing was imported"
            )
    if buffer:
        number += 1
        yield text(buffer)


class _Pipe:
    """A text file whose writes go to a bounded queue in chunks: the export, written by its
    thread, read by the response as it goes (bounded: a slow client slows the export)."""

    CHUNK = 64 * 1024

    def __init__(self) -> None:
        self.queue: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=16)
        self.closed = threading.Event()  # the client went away: stop writing
        self._buffer: list[str] = []
        self._size = 0

    def write(self, text: str) -> int:
        self._buffer.append(text)
        self._size += len(text)
        if self._size >= self.CHUNK:
            self.flush()
        return len(text)

    def flush(self) -> None:
        if self._buffer:
            self.put("".join(self._buffer).encode("utf-8"))
            self._buffer, self._size = [], 0

    def put(self, item: bytes | BaseException | None) -> None:
        while not self.closed.is_set():
            with contextlib.suppress(queue.Full):
                self.queue.put(item, timeout=0.5)
                return
        raise _Gone


class _Gone(Exception):
    """The client stopped reading the export."""


async def exported(mem: Memory) -> AsyncIterator[bytes]:
    """A store's export as it is written, in chunks: the journal's lines, made on a thread
    of their own, sent as the client reads them."""
    pipe = _Pipe()

    def produce() -> None:
        try:
            mem.export_events(pipe)  # type: ignore[arg-type]  # a file's write and flush
            pipe.flush()
            pipe.put(None)
        except _Gone:
            return
        except BaseException as exc:
            with contextlib.suppress(_Gone):
                pipe.put(exc)

    worker = threading.Thread(target=produce, name="clew-export", daemon=True)
    worker.start()
    try:
        while True:
            item = await anyio.to_thread.run_sync(pipe.queue.get)
            if item is None:
                return
            if isinstance(item, BaseException):
                # The status line is sent: the stream ends without its end line, which an
                # import refuses, so a cut export is never taken for a whole one.
                print(f"clew: export failed: {item}", file=sys.stderr)
                return
            yield item
    finally:
        pipe.closed.set()
