"""The smaller edges a new user meets at the command line (issue 27, point 6), each through
`clew.cli.main` on a real store, as a user would run it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import Result

Cli = Callable[..., Result]


def test_counts_take_the_noun_in_their_number(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    cli("task", "new", "Deploy", "--workspace", str(tmp_path))
    assert "clew: 1 active task for this workspace." in cli("prime").out
    cli("task", "new", "Other", "--workspace", str(tmp_path))
    assert "clew: 2 active tasks for this workspace." in cli("prime").out
    assert "(1 more active task here: `clew task list`)" in cli("where").out
    assert "(s)" not in cli("prime").out
