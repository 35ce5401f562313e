"""Where the store lives when nobody says: found like git finds `.git`.

Order: an explicit path, then $CLEW_DB, then `.clew/clew.db` in the nearest
directory upward that has a `.clew/` folder, then a per-user default
($XDG_DATA_HOME/clew/clew.db, ~/.local/share/clew/clew.db).
"""

from __future__ import annotations

import os
from pathlib import Path

STORE_DIR = ".clew"
STORE_FILE = "clew.db"
DEFAULT_SPACE = "default"


def user_default() -> Path:
    """Return the per-user store path used when no project store is found."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(base) / "clew" / STORE_FILE


def find_project_store(start: Path) -> Path | None:
    """Return `.clew/clew.db` of the nearest directory at or above `start` with `.clew/`."""
    for directory in (start, *start.parents):
        if (directory / STORE_DIR).is_dir():
            return directory / STORE_DIR / STORE_FILE
    return None


def resolve_store(explicit: str | os.PathLike[str] | None = None, cwd: Path | None = None) -> str:
    """Return the store location to open, following the documented order."""
    if explicit is not None and os.fspath(explicit) != "":
        return os.fspath(explicit)
    env = os.environ.get("CLEW_DB")
    if env:
        return env
    found = find_project_store((cwd or Path.cwd()).resolve())
    return str(found if found is not None else user_default())


def resolve_space(explicit: str | None = None) -> str:
    """Return the space to use: explicit, then $CLEW_SPACE, then 'default'."""
    return explicit or os.environ.get("CLEW_SPACE") or DEFAULT_SPACE
