"""Shared fixtures: a store in tmp_path, a clock the test moves, the CLI in-process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import clew
from clew.cli import main


class FakeClock:
    """A clock that only moves when told to."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 9, 0, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture(autouse=True, scope="session")
def _private_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the token caches the tests write out of the user's ~/.cache; leave queued jobs
    queued (tests that test the worker run it themselves); no maintenance by itself (a test's
    clock is not the CLI's: tests that test maintenance turn it on); no model from the
    environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
        patch.setenv("CLEW_WORKER", "off")
        patch.setenv("CLEW_MAINTENANCE", "off")
        for name in ("CLEW_MODEL", "CLEW_LARGE_MODEL", "CLEW_DB", "CLEW_SPACE"):
            patch.delenv(name, raising=False)
        yield


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    # The folder exists, as it would for a real --db: the CLI refuses a missing one.
    (tmp_path / "store").mkdir(exist_ok=True)
    return tmp_path / "store" / "clew.db"


@pytest.fixture
def mem(db: Path, clock: FakeClock) -> Iterator[clew.Memory]:
    with clew.open(db, clock=clock) as memory:
        yield memory


@dataclass
class Result:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(db: Path, capsys: pytest.CaptureFixture[str]) -> Callable[..., Result]:
    """Run `clew --db <db> ARGS...` in-process and capture what it prints."""

    def run(*args: str) -> Result:
        capsys.readouterr()
        code = main(["--db", str(db), *args])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def run_in_lockstep(scripts: Sequence[Sequence[str]]) -> list[tuple[int, str, str]]:
    """Run Python scripts (code, then its arguments) as processes that each print "ready",
    then wait for "go": all start writing at the same moment. Return (code, out, err)s."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", *script],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for script in scripts
    ]
    try:
        for proc in procs:  # every process has the store open before any starts writing
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        results = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return [(proc.returncode, out, err) for proc, (out, err) in zip(procs, results, strict=True)]
