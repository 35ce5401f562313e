"""A progress bar on stderr for the commands that can run long (import, export, verify,
push, index): drawn only when stderr is a terminal, and only once the work has run a
second, so piped output and quick runs show nothing. It listens to `clew.core.meter`'s reports;
no dependency, one line redrawn in place and erased at the end."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import TextIO

_WIDTH = 24  # characters of the bar itself
_DELAY = 1.0  # seconds before the bar first shows
_EVERY = 0.2  # seconds between redraws


class Bar:
    """Draws `what [#####-----] 42% 420,000/1,000,000 0:12 left` on a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.started = time.monotonic()
        self.drawn_at = 0.0
        self.shown = False
        self.phase = ""  # what is being done now, and since when (for the time left)
        self.phase_at = self.started

    def __call__(self, what: str, done: int, total: int | None) -> None:
        now = time.monotonic()
        if what != self.phase:
            self.phase, self.phase_at = what, now
        elapsed = now - self.phase_at
        if now - self.started < _DELAY or now - self.drawn_at < _EVERY:
            return
        self.drawn_at = now
        if total:
            share = min(max(done / total, 0.0), 1.0)
            filled = int(share * _WIDTH)
            left = elapsed * (1 - share) / share if share > 0 else None
            line = (
                f"{what} [{'#' * filled}{'-' * (_WIDTH - filled)}] {share:4.0%}"
                f" {done:,}/{total:,}" + (f" {_clock(left)} left" if left is not None else "")
            )
        else:  # how many when there is a count, and for how long
            line = f"{what} {done:,} {_clock(elapsed)}" if done else f"{what} {_clock(elapsed)}"
        self.stream.write("\r" + line + "\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return (
        f"{minutes // 60}:{minutes % 60:02d}:{secs:02d}"
        if minutes >= 60
        else f"{minutes}:{secs:02d}"
    )


@contextlib.contextmanager
def shown(stream: TextIO | None = None) -> Iterator[None]:
    """Draw the reports made inside the block as a bar on `stream` (stderr) if it is a
    terminal; otherwise do nothing."""
    out = sys.stderr if stream is None else stream
    try:
        terminal = out.isatty()
    except (AttributeError, ValueError):
        terminal = False
    if not terminal:
        yield
        return
    from clew.core import meter

    bar = Bar(out)
    try:
        with meter.listening(bar):
            yield
    finally:
        bar.close()
