"""What every `clew` command shares: the parser class, opening the store, printing, and
reading values from the command line (files, stdin, JSON, KEY=VALUE, durations)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO, NoReturn

from clew.errors import ClewError, ValidationError

if TYPE_CHECKING:
    from clew.memory import Memory

Handler = Callable[[argparse.Namespace], int]


def _help_width() -> int:
    """The width argparse gives help: the terminal's columns (as shutil finds them) less 2."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return (columns or 80) - 2


class UsageError(ClewError):
    """The command line itself is wrong."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the --help to read."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        # argparse makes a formatter for every add_argument, and its own imports shutil (with
        # bz2, lzma and zlib) for the terminal's width: milliseconds a hook never uses.
        if self.formatter_class is argparse.HelpFormatter:
            return argparse.HelpFormatter(self.prog, width=_help_width())
        return super()._get_formatter()

    def error(self, message: str) -> NoReturn:
        import re

        # A mistyped command: say so plainly, with the closest one (argparse lists them all).
        typo = re.match(
            r"argument \w*COMMAND: invalid choice: '?(.*?)'? \(choose from (.*)\)$", message
        )
        if typo:
            from clew.cli.overview import suggestion

            word, choices = typo.group(1), [c.strip(" '") for c in typo.group(2).split(",")]
            close = suggestion(word, choices)
            kind = " ".join([*self.prog.split()[1:], "command"])
            message = f"unknown {kind} {word!r}" + (f"; did you mean {close!r}?" if close else "")
        raise UsageError(f"{message} (see `{self.prog} --help`)")


class _Unbuilt:
    """The parser of a subcommand this command line does not run, left unbuilt: building
    `clew task`'s 20 subcommands' 139 options cost a hook (`task show`) ~3 ms."""

    def add_argument(self, *args: Any, **kwargs: Any) -> None:
        return None

    def add_mutually_exclusive_group(self, *args: Any, **kwargs: Any) -> _Unbuilt:
        return self

    def set_defaults(self, **kwargs: Any) -> None:
        return None


class Commands:
    """Adds subcommands that share the global options (--db, --space, --json).

    With `only`, the command line runs that subcommand of the group whose parsers set `dest`
    (`show` of `clew task`, dest `task_command`): its siblings are not built (`skipped`),
    and `found` says whether `only` was among them; if not, the caller builds them all, so
    that a typo meets argparse's list of choices."""

    def __init__(
        self, common: argparse.ArgumentParser, dest: str | None = None, only: str | None = None
    ) -> None:
        self.common = common
        self.dest = dest
        self.only = only
        self.skipped = self.found = False

    def __call__(
        self, group: Any, name: str, handler: Handler, help: str, description: str = ""
    ) -> Parser:
        if self.only is not None and getattr(group, "dest", None) == self.dest:
            if name != self.only:
                self.skipped = True
                return _Unbuilt()  # type: ignore[return-value]
            self.found = True
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

    from clew.core.location import is_url, locate_store

    path, source = locate_store(args.db)
    if is_url(path):  # a team store: no folder to check, nothing to announce
        return path, source
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


def folder_task(mem: Memory, given: str | None) -> tuple[str, int]:
    """The task a command means: the one given, else this folder's newest active task; with
    how many other active tasks the folder has."""
    if given is not None:
        return given, 0
    here = mem.workspace_tasks()
    if not here:
        raise ValidationError(
            "no active task for this folder; give a task id (`clew task list` lists them)"
        )
    return here[0].id, len(here) - 1


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
    from clew.core.clock import utcnow

    return utcnow()


def json_or_text(raw: str, field: str) -> Any:
    """A value given on the command line: its JSON meaning if it is JSON, else the text."""
    from clew.core.checks import NotJson, json_value

    try:
        return json_value(raw, field)
    except NotJson:
        return raw


def meta(pairs: Sequence[str] | None) -> dict[str, Any] | None:
    """Parse repeated KEY=VALUE options; a VALUE that is valid JSON is taken as JSON."""
    if not pairs:
        return None
    result: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValidationError(f"metadata {pair!r} is not KEY=VALUE")
        result[key.strip()] = json_or_text(raw, f"--meta {key.strip()}")
    return result


def json_arg(text: str | None, field: str) -> dict[str, Any] | None:
    """Parse an option's JSON object, or raise naming the option."""
    from clew.core.checks import json_value

    if text is None:
        return None
    value = json_value(text, field)
    if not isinstance(value, dict):
        raise ValidationError(f"{field} must be a JSON object like '{{\"key\": 1}}'")
    return value


# -- reading files and stdin: always bounded ------------------------------------------------

DEFAULT_INPUT_MB = 64  # a command's whole output (10 MB logs are common) fits with room
INPUT_LIMIT_ENV = "CLEW_MAX_INPUT_MB"


def input_limit(args: argparse.Namespace) -> int:
    """How many bytes one file or stdin may hold: --max-input-mb, else $CLEW_MAX_INPUT_MB,
    else 64 MB."""
    given = getattr(args, "max_input_mb", None)
    if given is None:
        raw = os.environ.get(INPUT_LIMIT_ENV, "").strip()
        given = _megabytes(raw) if raw else DEFAULT_INPUT_MB
        if given is None:
            raise ValidationError(f"${INPUT_LIMIT_ENV} {raw[:40]!r} is not {_MEGABYTES}")
    return int(given) * 2**20


MAX_INPUT_MB = 2047  # SQLite's largest value is 2 GB by default
_MEGABYTES = f"a number of megabytes from 1 to {MAX_INPUT_MB}"


def _megabytes(text: str) -> int | None:
    text = text.strip()
    ok = text.isascii() and text.isdigit() and len(text) <= 6
    return int(text) if ok and 1 <= int(text) <= MAX_INPUT_MB else None


def megabytes(text: str) -> int:
    """argparse type: a size limit in megabytes."""
    size = _megabytes(text)
    if size is None:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not {_MEGABYTES}")
    return size


def whole(text: str) -> int:
    """argparse type: a whole number that fits in 64 bits (what the store keeps)."""
    from clew.core.checks import BEYOND_64_BITS, MAX_INT, MIN_INT

    digits = text.strip().removeprefix("-").removeprefix("+")
    if not (digits.isascii() and digits.isdigit()):
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a whole number")
    if len(digits.lstrip("0")) > 19 or not MIN_INT <= int(text) <= MAX_INT:
        raise argparse.ArgumentTypeError(f"{_shown(text)} is {BEYOND_64_BITS}")
    return int(text)


def decimal(text: str) -> float:
    """argparse type: a finite number (no nan, inf or 1e999)."""
    import math

    try:
        number = float(text)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"{_shown(text)} is not a finite number like 2.5")
    return number


def _shown(text: str) -> str:
    from clew.core.checks import shown

    return shown(text)


def read_output(source: str | None, field: str, stdin_used: list[bool], limit: int) -> bytes | None:
    """Read a command's output from a regular file, or from stdin for '-', as exact bytes;
    at most `limit` bytes (see `open_input`)."""
    if source is None:
        return None
    if source == "-":
        if stdin_used:
            raise ValidationError("only one of --stdout-file and --stderr-file can read stdin")
        stdin_used.append(True)
        return _capped(sys.stdin.buffer.read(limit + 1), field, "stdin", limit)
    with open_input(source, field) as handle:
        try:
            return _capped(handle.read(limit + 1), field, source, limit)
        except OSError as exc:
            raise ValidationError(f"cannot read {field} from {source}: {exc.strerror}") from None


def open_input(source: str, field: str) -> BinaryIO:
    """Open a regular file (or stdin for '-') to read `field` from, in binary. Devices,
    FIFOs and folders are refused rather than read: a stream with no end would hang or fill
    memory (stdin is the way to pass a stream)."""
    import stat

    if source == "-":
        return sys.stdin.buffer
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer before we can refuse it.
        fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValidationError(f"cannot read {field} from {source}: {exc.strerror}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(mode) else "not a regular file"
        raise ValidationError(
            f"cannot read {field} from {source}: it is {kind}; give a file, or pipe a"
            " stream to stdin and give '-'"
        )
    return os.fdopen(fd, "rb")


def _capped(data: bytes, field: str, source: str, limit: int) -> bytes:
    if len(data) > limit:
        raise ValidationError(
            f"{field} from {source} is larger than {limit // 2**20} MB; raise the limit with"
            f" --max-input-mb (or ${INPUT_LIMIT_ENV})"
        )
    return data


def step_ref(text: str | None) -> int | str | None:
    """A step given on the command line: its number, else its id (or prefix)."""
    if text is None:
        return None
    return _step_number(text) if text.strip().isdigit() else text


def _step_number(text: str) -> int:
    digits = text.strip()
    if not digits.isascii() or len(digits.lstrip("0")) > 6:  # plans are far shorter
        raise ValidationError(f"step {_shown(text)} is out of range: give a step number like 2")
    return int(digits)


# -- commands -------------------------------------------------------------------------------


def tags(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def read_text(source: str, field: str, limit: int) -> str:
    """Read UTF-8 text from a file, or from stdin for '-', bounded like `read_output`."""
    data = read_output(source, field, [], limit)
    assert data is not None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValidationError(f"{field} from {source} is not UTF-8 text") from None


def position(text: str) -> int:
    if not text.strip().isdigit():
        raise ValidationError(f"position {_shown(text)} must be a step number like 2")
    return _step_number(text)


def duration(text: str) -> float | None:
    """Parse '90s', '30m', '24h', '7d' (or 'never') into seconds."""
    if text == "never":
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    from clew.core.checks import duration as seconds

    number, unit = text[:-1], text[-1:]
    try:
        if unit not in units:
            raise ValueError(text)
        value = float(number) * units[unit]
    except ValueError:
        raise ValidationError(
            f"duration {_shown(text)} is not like 90s, 30m, 24h, 7d or never"
        ) from None
    from clew.core.checks import MAX_SECONDS

    if value > MAX_SECONDS:
        raise ValidationError(f"duration {_shown(text)} is longer than 100 years")
    return seconds(value, "duration")


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
