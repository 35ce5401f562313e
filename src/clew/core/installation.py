"""How this copy of clew was installed, and so the command that adds one of its extras.

clew is on no package index, so `pip install 'clew[serve]'` fails for nearly everyone: the
command that works names what clew was installed from. pip records that in the distribution's
`direct_url.json` (PEP 610): a checkout installed editable, a local wheel, sdist or directory,
or a VCS or archive URL; no record means an index. pipx installs through pip too, so the same
record says what to name, and `pipx runpip VENV` is the pip of its environment.

The metadata may describe another copy than the one running (tests and tools run a checkout
through PYTHONPATH while the environment holds an editable install of a different checkout),
so a record counts only when it covers this file; otherwise a checkout around this file is
what to install. Read only when a hint is printed (never on the hook path), once per process.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shlex
import shutil
import sys
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

PACKAGE = Path(__file__).resolve().parents[1]  # the running clew/ directory
PIPX_METADATA = "pipx_metadata.json"  # in the root of each environment pipx made


@dataclasses.dataclass(frozen=True)
class Installation:
    """Where clew came from: `source` is "checkout" (an editable install, or a source tree run
    in place), "path" (a local wheel, sdist or directory), "url" (a PEP 508 direct reference,
    e.g. git+https://...@commit) or "index"; `location` the path or URL; `pip` the command
    that runs pip in clew's environment."""

    source: str
    location: str = ""
    pip: str = "pip"


def install_command(extra: str, installation: Installation | None = None) -> str:
    """Say the shell command that adds `extra` to this clew, e.g. pip install 'clew[serve]'."""
    found = installation or detect()
    if found.source == "checkout":
        return f"{found.pip} install -e {shlex.quote(_shown(found.location) + f'[{extra}]')}"
    if found.source == "path":
        return f"{found.pip} install {shlex.quote(_shown(found.location) + f'[{extra}]')}"
    if found.source == "url":
        return f"{found.pip} install {shlex.quote(f'clew[{extra}] @ {found.location}')}"
    return f"{found.pip} install {shlex.quote(f'clew[{extra}]')}"


def missing_extra(extra: str, error: ImportError) -> ModuleNotFoundError:
    """Make the error an import of a module that needs `extra` raises without it."""
    what = error.name or "a package"
    return ModuleNotFoundError(
        f"{what} is missing: this part of clew needs the {extra} extra: {install_command(extra)}",
        name=error.name,
    )


@functools.cache
def detect() -> Installation:
    """Find how the running clew was installed (read once: installs do not move mid-run)."""
    pip = _pip()
    record = _record()
    if record is not None:
        return dataclasses.replace(record, pip=pip)
    checkout = PACKAGE.parents[1]
    if (checkout / "pyproject.toml").is_file() and checkout / "src" / "clew" == PACKAGE:
        return Installation("checkout", str(checkout), pip)
    return Installation("index", "", pip)


def _record() -> Installation | None:
    """What pip recorded about the installed distribution, if it is this copy."""
    try:
        dist = metadata.distribution("clew")
    except metadata.PackageNotFoundError:
        return None
    text = dist.read_text("direct_url.json")
    origin = json.loads(text) if text else {}
    url = str(origin.get("url", ""))
    local = _file_path(url)
    if origin.get("dir_info", {}).get("editable"):
        if local is None or not PACKAGE.is_relative_to(Path(local).resolve()):
            return None
        return Installation("checkout", local)
    if Path(str(dist.locate_file("clew"))).resolve() != PACKAGE:
        return None
    if not url:
        return Installation("index")
    if local is not None:
        return Installation("path", local)
    vcs = origin.get("vcs_info")
    if isinstance(vcs, dict) and vcs.get("vcs"):
        commit = vcs.get("requested_revision") or vcs.get("commit_id")
        url = f"{vcs['vcs']}+{url}" + (f"@{commit}" if commit else "")
    return Installation("url", url)


def _file_path(url: str) -> str | None:
    parsed = urlparse(url)
    return unquote(parsed.path) if parsed.scheme == "file" else None


def _pip() -> str:
    """The command that runs pip in this environment: pipx's for an environment it made, `pip`
    where the one on PATH is this environment's, else this interpreter's own module."""
    prefix = Path(sys.prefix)
    if (prefix / PIPX_METADATA).is_file():
        return f"pipx runpip {shlex.quote(prefix.name)}"
    on_path = shutil.which("pip")
    if on_path and Path(on_path).parent == Path(sys.executable).parent:
        return "pip"
    return f"{shlex.quote(sys.executable)} -m pip"


def _shown(location: str) -> str:
    """A path as a person would type it from here: "." for this directory, "./x" inside it."""
    try:
        here = Path.cwd()
    except OSError:  # the directory was removed under us
        return location
    path = Path(location)
    if path == here:
        return "."
    if path.is_relative_to(here):
        return f".{os.sep}{path.relative_to(here)}"
    return location
