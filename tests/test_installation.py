"""The command clew prints to add an extra names what clew was installed from.

clew is on no package index, so `pip install 'clew[serve]'` fails unless clew came from one:
each way of installing (a checkout, a wheel or sdist file, a URL, pipx) gets its own command.
tests/test_package.py runs the wheel's for real.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from clew.core import installation
from clew.core.installation import Installation, detect, install_command

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _fresh() -> Any:
    detect.cache_clear()
    yield
    detect.cache_clear()


def test_each_way_of_installing_gets_its_own_command(tmp_path: Path) -> None:
    wheel = tmp_path / "dist" / "clew-0.2.0-py3-none-any.whl"
    cases = {
        Installation("index"): "pip install 'clew[serve]'",
        Installation("checkout", "/src/clew"): "pip install -e '/src/clew[serve]'",
        Installation("path", str(wheel)): f"pip install '{wheel}[serve]'",
        Installation("url", "git+https://example.com/clew.git@v0.2.0"): (
            "pip install 'clew[serve] @ git+https://example.com/clew.git@v0.2.0'"
        ),
        Installation("index", "", "/opt/venv/bin/python -m pip"): (
            "/opt/venv/bin/python -m pip install 'clew[serve]'"
        ),
        Installation("path", str(wheel), "pipx runpip clew"): (
            f"pipx runpip clew install '{wheel}[serve]'"
        ),
    }
    for found, command in cases.items():
        assert install_command("serve", found) == command


def test_a_path_is_shown_as_typed_from_the_folder_it_is_printed_in(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    here = Installation("checkout", str(tmp_path))
    assert install_command("mcp", here) == "pip install -e '.[mcp]'"
    wheel = tmp_path / "dist" / "clew-0.2.0-py3-none-any.whl"
    assert (
        install_command("mcp", Installation("path", str(wheel)))
        == "pip install './dist/clew-0.2.0-py3-none-any.whl[mcp]'"
    )
    odd = Installation("checkout", "/home/me/my clew")  # quoted for a shell as one word
    assert install_command("mcp", odd) == "pip install -e '/home/me/my clew[mcp]'"


def test_a_checkout_on_the_path_is_the_checkout_whatever_else_is_installed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The suite runs this checkout from src/ while the environment may hold another install.
    monkeypatch.chdir(ROOT)
    found = detect()
    assert found.source == "checkout" and Path(found.location) == ROOT
    assert install_command("serve").endswith("install -e '.[serve]'")


class Dist:
    """A stand-in for importlib.metadata's distribution of clew."""

    def __init__(self, site: Path, direct_url: dict[str, Any] | None) -> None:
        self.site = site
        self.direct_url = direct_url

    def read_text(self, name: str) -> str | None:
        assert name == "direct_url.json"
        return None if self.direct_url is None else json.dumps(self.direct_url)

    def locate_file(self, path: str) -> Path:
        return self.site / path


def _installed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, direct_url: dict[str, Any] | None
) -> Path:
    """Pretend clew is installed in tmp_path/site with this record of where it came from."""
    site = tmp_path / "site"
    (site / "clew").mkdir(parents=True)
    monkeypatch.setattr(installation, "PACKAGE", site / "clew")
    monkeypatch.setattr(installation.metadata, "distribution", lambda name: Dist(site, direct_url))
    monkeypatch.setattr(installation.sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.chdir(tmp_path)
    return site


def test_an_install_from_an_index_names_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _installed(monkeypatch, tmp_path, None)
    assert detect().source == "index"
    assert install_command("postgres").endswith("install 'clew[postgres]'")


def test_an_install_from_a_wheel_names_the_wheel(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    wheel = "/srv/wheels/clew-0.2.0-py3-none-any.whl"
    _installed(monkeypatch, tmp_path, {"url": f"file://{wheel}", "archive_info": {}})
    assert detect() == Installation("path", wheel, detect().pip)
    assert install_command("vectors").endswith(f"install '{wheel}[vectors]'")


def test_an_install_from_git_names_the_commit(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record = {
        "url": "https://example.com/clew.git",
        "vcs_info": {"vcs": "git", "commit_id": "ab12", "requested_revision": "v0.2.0"},
    }
    _installed(monkeypatch, tmp_path, record)
    assert install_command("mcp").endswith(
        "install 'clew[mcp] @ git+https://example.com/clew.git@v0.2.0'"
    )


def test_an_editable_install_of_this_copy_names_its_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "src" / "clew").mkdir(parents=True)
    monkeypatch.setattr(installation, "PACKAGE", checkout / "src" / "clew")
    record = {"url": checkout.as_uri(), "dir_info": {"editable": True}}
    monkeypatch.setattr(installation.metadata, "distribution", lambda name: Dist(tmp_path, record))
    monkeypatch.chdir(tmp_path)
    assert install_command("serve").endswith("install -e './checkout[serve]'")


def test_a_record_of_another_copy_is_ignored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # An installed wheel elsewhere on the path says nothing about the copy that is running.
    _installed(monkeypatch, tmp_path, {"url": "file:///srv/clew.whl", "archive_info": {}})
    monkeypatch.setattr(installation, "PACKAGE", tmp_path / "loose" / "clew")
    assert detect().source == "index"


def test_under_pipx_the_command_runs_its_pip(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    wheel = "/srv/wheels/clew-0.2.0-py3-none-any.whl"
    _installed(monkeypatch, tmp_path, {"url": f"file://{wheel}", "archive_info": {}})
    venv = tmp_path / "pipx" / "venvs" / "clew"
    venv.mkdir(parents=True)
    (venv / installation.PIPX_METADATA).write_text("{}")
    monkeypatch.setattr(installation.sys, "prefix", str(venv))
    assert install_command("serve") == f"pipx runpip clew install '{wheel}[serve]'"


def test_pip_is_this_environments_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    monkeypatch.setattr(installation.sys, "prefix", str(tmp_path / "venv"))
    monkeypatch.setattr(installation.sys, "executable", str(bin_dir / "python"))
    monkeypatch.setattr(installation.shutil, "which", lambda name: str(bin_dir / name))
    assert installation._pip() == "pip"  # the environment is active: its pip is on PATH
    monkeypatch.setattr(installation.shutil, "which", lambda name: "/usr/bin/pip")
    assert installation._pip() == f"{bin_dir / 'python'} -m pip"  # another pip is first


@pytest.mark.parametrize(
    ("module", "blocked", "extra"),
    [
        ("clew.integrations.langgraph", "langchain_core.runnables", "langgraph"),
        ("clew.integrations.adk", "google.adk.errors", "adk"),
        ("clew.integrations.claude_agent_sdk", "claude_agent_sdk", "claude-agent-sdk"),
    ],
)
def test_an_integration_without_its_extra_says_how_to_add_it(
    monkeypatch: pytest.MonkeyPatch, module: str, blocked: str, extra: str
) -> None:
    import importlib

    for name in (module, "clew.integrations.langgraph_saver", "clew.integrations.langgraph_store"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.setitem(sys.modules, blocked, None)  # as if the extra were not installed
    with pytest.raises(ModuleNotFoundError) as missing:
        importlib.import_module(module)
    assert str(missing.value) == (
        f"{blocked} is missing: this part of clew needs the {extra} extra: {install_command(extra)}"
    )
    assert missing.value.name == blocked
