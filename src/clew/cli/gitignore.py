"""Keeping a project store out of git: whether a folder's `.clew/` is ignored in the git work
tree around it, and the line that ignores it.

A store holds every command, output and message an agent recorded: committed with the code,
it would travel to everyone who clones it. `clew init` asks (or says how) to add `.clew/` to
the `.gitignore` beside the store. Whether it is ignored already is read from the ignore
files git reads for that folder (each `.gitignore` from the folder up to the work tree's
root, and `.git/info/exclude`), for the patterns that name `.clew` itself; no git command
runs. A pattern this does not understand (a wider glob) only means the offer is made.
"""

from __future__ import annotations

import os

from clew.errors import ValidationError

LINE = ".clew/"


def work_tree(folder: str) -> str | None:
    """The root of the git work tree `folder` is in (a `.git` folder or file), or None."""
    here = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def is_ignored(folder: str, root: str) -> bool:
    """Whether an ignore file of the work tree at `root` names `folder`'s `.clew`."""
    folder, root = os.path.abspath(folder), os.path.abspath(root)
    files = [(os.path.join(root, ".git", "info", "exclude"), root)]
    at = folder
    while True:
        files.append((os.path.join(at, ".gitignore"), at))
        if at == root or os.path.dirname(at) == at:
            break
        at = os.path.dirname(at)
    for path, base in files:
        below = os.path.relpath(folder, base).replace(os.sep, "/")
        if _patterns("" if below == "." else f"{below}/") & set(_lines(path)):
            return True
    return False


def _patterns(prefix: str) -> set[str]:
    """The lines of an ignore file that ignore `.clew` of the folder `prefix` below it: a
    name without a slash matches at any depth; one with a slash is anchored to the file's
    folder (as git reads them)."""
    tails = ("", "/", "/*", "/**")
    anywhere = {".clew", ".clew/", *(f"**/.clew{tail}" for tail in tails)}
    return anywhere | {f"{lead}{prefix}.clew{tail}" for lead in ("", "/") for tail in tails}


def _lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.strip() for line in handle.read(1 << 20).splitlines()]
    except OSError:
        return []


def add(folder: str) -> str:
    """Append `.clew/` to `folder`'s `.gitignore` (made if missing) unless a line of it
    already says so; return the file's path."""
    path = os.path.join(os.path.abspath(folder), ".gitignore")
    if os.path.lexists(path) and not os.path.isfile(path):
        raise ValidationError(f"cannot add {LINE} to {path}: it is not a regular file")
    if LINE in _lines(path):
        return path
    try:
        with open(path, "ab+") as handle:
            handle.seek(0, os.SEEK_END)
            ends = handle.tell() == 0
            if not ends:
                handle.seek(-1, os.SEEK_END)
                ends = handle.read(1) == b"\n"
            handle.write(("" if ends else "\n").encode() + f"{LINE}\n".encode())
    except OSError as exc:
        raise ValidationError(f"cannot add {LINE} to {path}: {exc.strerror or exc}") from None
    return path
