"""The sealing key: kept outside the store, made once, and a seal only passes for its own
purpose and fields."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clew.errors import ValidationError
from clew.privacy import sealing

KEY = bytes(range(32))
texts = st.one_of(st.none(), st.text(max_size=40))


def test_the_key_is_made_once_private_and_shared_by_racing_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "deep" / "secret.key")
    found: list[bytes] = []

    def make() -> None:
        sealing._cache.pop(path, None)
        found.append(sealing._make(path))

    threads = [threading.Thread(target=make) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(found)) == 1 and len(found[0]) == sealing.KEY_BYTES
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sorted(os.listdir(tmp_path / "deep")) == ["secret.key"]  # no temporary file left
    assert sealing.secret(path) == found[0]


def test_the_environment_names_the_key_and_a_damaged_key_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = tmp_path / "k"
    monkeypatch.setenv("CLEW_SECRET_FILE", str(named))
    assert sealing.secret_path() == str(named)
    with pytest.raises(ValidationError, match="no sealing key"):
        sealing.secret(create=False)
    bad = tmp_path / "short"
    bad.write_bytes(b"abc")
    with pytest.raises(ValidationError, match="not 32 bytes"):
        sealing.secret(str(bad))


@given(purpose=st.sampled_from(["wait", "checkpoint"]), fields=st.tuples(texts, texts, texts))
def test_a_seal_checks_only_for_its_purpose_fields_and_key(
    purpose: str, fields: tuple[str | None, str | None, str | None]
) -> None:
    made = sealing.seal(purpose, fields, key=KEY)
    assert sealing.check(purpose, fields, made, key=KEY)
    other = "checkpoint" if purpose == "wait" else "wait"
    assert not sealing.check(other, fields, made, key=KEY)
    assert not sealing.check(purpose, fields, made, key=bytes(32))
    assert not sealing.check(purpose, (*fields[:2], (fields[2] or "") + "x"), made, key=KEY)
    assert not sealing.check(purpose, fields, made[:-1], key=KEY)
    assert not sealing.check(purpose, fields, None, key=KEY)
    # None and "" are different fields: the encoding cannot confuse them
    if fields[0] is None:
        assert not sealing.check(purpose, ("", *fields[1:]), made, key=KEY)
