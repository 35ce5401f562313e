"""What every `clew` command shares: the parser class, opening the store, printing, and
reading values from the command line (files, stdin, JSON, KEY=VALUE, durations)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from clew.errors import ClewError, ValidationError

if TYPE_CHECKING:
    from clew.memory import Memory

Handler = Callable[[argparse.Namespace], int]


class UsageError(ClewError):
    """The command line itself is wrong."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the --help to read."""

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)")


class Commands:
    """Adds subcommands that share the global options (--db, --space, --json)."""

    def __init__(self, common: argparse.ArgumentParser) -> None:
        self.common = common

    def __call__(
        self, group: Any, name: str, handler: Handler, help: str, description: str = ""
    ) -> Parser:
        sub: Parser = group.add_parser(
            name, help=help, description=description or help, parents=[self.common]
        )
        sub.set_defaults(handler=handler)
        return sub


def open_memory(args: argparse.Namespace) -> Memory:
    """Open the store the command line names, as `clew.open` does, with the CLI's guards."""
    import clew

    path, source = store_path(args)
    mem = clew.open(path, space=args.space, busy_timeout=args.busy_timeout)
    if source == "user":
        _announce_user_store(path)  # after opening, so a refusal stays one line
    if mem.settings.worker == "auto":
        # A thread would die with this short process: queued jobs go to a detached one.
        mem.settings = mem.settings._replace(worker="process")
    return mem


def store_path(args: argparse.Namespace, *, create: bool = False) -> tuple[str, str]:
    """The store a command line names and where it came from (see `locate_store`). A --db
    or $CLEW_DB store whose folder is missing is refused (a typo must not make a store
    nobody reads) unless `create` or --create."""
    import os

    from clew.location import locate_store

    path, source = locate_store(args.db)
    folder = os.path.dirname(os.path.abspath(path))
    if source in ("--db", "CLEW_DB") and not (create or args.create) and not os.path.isdir(folder):
        named = f"--db {path}" if source == "--db" else f"$CLEW_DB={path}"
        raise ValidationError(
            f"the folder {folder} of the store ({named}) does not exist; make the store"
            f" with `clew --db {path} init`, or add --create"
        )
    return path, source


def _announce_user_store(path: str) -> None:
    """Say once per store (a marker file beside it remembers) that the per-user store is used."""
    import os

    marker = f"{path}.announced"
    if os.path.exists(marker):
        return
    print(
        f"clew: using the per-user store {path}: no .clew/ folder was found above this one"
        " (`clew init` makes one here); this note is shown once",
        file=sys.stderr,
    )
    try:
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "a", encoding="utf-8"):
            pass
    except OSError:
        pass  # a home we cannot write: the note shows again next time, which is harmless


def print_json(value: Any) -> None:
    from clew.models import to_jsonable

    print(json.dumps(to_jsonable(value), indent=2, ensure_ascii=False))


def show(args: argparse.Namespace, value: Any, text: str) -> int:
    """Print `value` as JSON under --json, else `text`; return the success exit code."""
    if args.json:
        print_json(value)
    else:
        print(text)
    return 0


def show_lines(
    args: argparse.Namespace, items: Sequence[Any], line: Callable[[Any], str], empty: str
) -> int:
    """Print `items` as JSON under --json, else one `line` each, or `empty` when there are
    none; return the success exit code."""
    if args.json:
        print_json(items)
    elif not items:
        print(empty)
    else:
        for item in items:
            print(line(item))
    return 0


def current_time() -> Any:
    from clew.clock import utcnow

    return utcnow()


def meta(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    """Parse repeated KEY=VALUE options; a VALUE that is valid JSON is taken as JSON."""
    if not pairs:
        return None
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"metadata {pair!r} is not KEY=VALUE")
        try:
            result[key.strip()] = json.loads(raw)
        except ValueError:
            result[key.strip()] = raw
    return result


def json_arg(text: str | None, field: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ValidationError(f"{field} is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ValidationError(f"{field} must be a JSON object like '{{\"key\": 1}}'")
    return value


def read_output(source: str | None, field: str, stdin_used: list[bool]) -> bytes | None:
    """Read a command's output from a file, or from stdin for '-', as exact bytes."""
    if source is None:
        return None
    if source == "-":
        if stdin_used:
            raise ValidationError("only one of --stdout-file and --stderr-file can read stdin")
        stdin_used.append(True)
        return sys.stdin.buffer.read()
    try:
        with open(source, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise ValidationError(f"cannot read {field} from {source}: {exc.strerror}") from None


def step_ref(text: str | None) -> int | str | None:
    if text is None:
        return None
    return int(text) if text.strip().isdigit() else text


# -- commands -------------------------------------------------------------------------------


def tags(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def read_text(source: str, field: str) -> str:
    data = read_output(source, field, [])
    assert data is not None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{field} from {source} is not UTF-8 text") from None


def position(text: str) -> int:
    if not text.strip().isdigit():
        raise ValidationError(f"position {text!r} must be a step number like 2")
    return int(text)


def duration(text: str) -> float | None:
    """Parse '90s', '30m', '24h', '7d' (or 'never') into seconds."""
    if text == "never":
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    number, unit = text[:-1], text[-1:]
    try:
        if unit not in units:
            raise ValueError(text)
        return float(number) * units[unit]
    except ValueError:
        raise ValidationError(f"duration {text!r} is not like 90s, 30m, 24h, 7d or never") from None


def as_dict(value: Any) -> dict[str, Any]:
    from clew.models import to_jsonable

    result: dict[str, Any] = to_jsonable(value)
    return result


class OrderedOps(argparse.Action):
    """Collect replanning options in the order they were given."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        ops = list(getattr(namespace, "ops", None) or [])
        ops.append((self.dest, list(values) if isinstance(values, list) else [values]))
        namespace.ops = ops
