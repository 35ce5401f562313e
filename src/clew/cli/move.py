"""`clew export`, `import`, `push`: move a space's journal to a file or another store."""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

from clew.cli.bar import shown as bar
from clew.cli.common import Commands, input_limit, open_input, open_memory, print_json, whole
from clew.core.location import shown
from clew.errors import ValidationError


def cmd_export(args: argparse.Namespace) -> int:
    if args.month is not None and (args.after is not None or args.since_seq is not None):
        raise ValidationError(
            "--month lists a month's archived tasks; --after and --since-seq cut the whole"
            " journal: give one or the other"
        )
    with open_memory(args) as mem:
        if args.month is not None:
            lines = mem.export_month(args.month)
            _write(args.output, "".join(f"{line}\n" for line in lines))
            count = len(lines)
        elif args.output in (None, "-"):
            with bar():
                count = mem.export_events(sys.stdout, after=args.after, since_seq=args.since_seq)
        else:
            with bar():
                count = _export_to(mem, args)
    if args.output not in (None, "-"):
        print(f"{_events(count)} written to {args.output}", file=sys.stderr)
    return 0


def _export_to(mem: Any, args: argparse.Namespace) -> int:
    """Export into --output atomically: the file appears whole, or not at all."""
    from clew.state.mirror import replacing

    try:
        with replacing(args.output) as handle:
            text = io.TextIOWrapper(handle, encoding="utf-8", newline="\n")
            count: int = mem.export_events(text, after=args.after, since_seq=args.since_seq)
            text.flush()
            text.detach()  # the file is the mirror's to close
    except OSError as exc:
        raise ValidationError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    return count


def _write(output: str | None, text: str) -> None:
    if output in (None, "-"):
        sys.stdout.write(text)
        return
    from clew.state.mirror import write_atomically

    try:
        write_atomically(output, text.encode("utf-8"))
    except OSError as exc:
        raise ValidationError(f"cannot write {output}: {exc.strerror or exc}") from None


def cmd_import(args: argparse.Namespace) -> int:
    if args.source != "journal":
        return _import_transcript(args)
    if args.session is not None:
        raise ValidationError(
            "--session names the session of an assistant's transcript (--from claude-code or"
            " codex); a journal file holds its own sessions"
        )
    limit = input_limit(args)
    handle = open_input(args.file, "the journal file")
    from clew.core.origin import Origin

    with handle, open_memory(args) as mem, bar():
        # This host's own user: any event goes in (its host waits still never run here
        # unless their seal verifies with this host's key), recorded as imported by it.
        report = mem.import_events(_lines(handle, limit), by=Origin("cli"))
    if args.json:
        print_json(report)
        return 0
    print(
        f"imported {_events(report.added)} into space {report.space!r}"
        f" ({report.skipped} of the file's {report.events} were already there)"
    )
    return 0


def _import_transcript(args: argparse.Namespace) -> int:
    """An assistant's transcript file into the session keyed by its session id (again: only
    what is new), as `clew capture` does."""
    from clew.cli.capture import report

    if args.file == "-":
        raise ValidationError(
            f"give the {args.source} transcript's file name: it is read from its end, not stdin"
        )
    with open_memory(args) as mem:
        done = mem.capture_transcript(args.file, format=args.source, key=args.session)
    report(done, args.json)
    return 0


def _lines(handle: BinaryIO, limit: int) -> Iterator[str]:
    """A journal file's lines as text, read one at a time (only "\n" ends one: the data may
    hold other line breaks), each at most `limit` bytes."""
    for number, raw in enumerate(iter(lambda: handle.readline(limit + 1), b""), 1):
        if len(raw) > limit and not raw.endswith(b"\n"):
            raise ValidationError(
                f"line {number} of the journal file is larger than {limit // 2**20} MB; raise"
                f" the limit with --max-input-mb (or $CLEW_MAX_INPUT_MB); nothing was imported"
            )
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(
                f"the journal file is not UTF-8 text (line {number}); nothing was imported"
            ) from None


def cmd_push(args: argparse.Namespace) -> int:
    import os

    target = args.to
    if "://" not in target:
        folder = os.path.dirname(os.path.abspath(target))
        if os.path.isdir(target):
            raise ValidationError(f"--to {target} is a folder; give the store file in it")
        if not os.path.isdir(folder) and not args.create:
            raise ValidationError(
                f"the folder {folder} of the target store does not exist; make it, or add --create"
            )
    with open_memory(args) as mem, bar():
        report = mem.push(
            target, space=args.to_space, batch=args.batch, busy_timeout=args.busy_timeout
        )
    if args.json:
        print_json(report)
        return 0
    print(
        f"pushed {_events(report.added)} to {shown(target)} (space {report.space!r});"
        f" {report.skipped} of {report.events} were already there"
    )
    return 0


def _events(count: int) -> str:
    return "1 event" if count == 1 else f"{count} events"


def _batch(text: str) -> int:
    size = whole(text)
    if size < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a batch size of at least 1")
    return size


def register(commands: Any, command: Commands) -> None:
    """Add `clew export`, `clew import` and `clew push`."""
    p = command(
        commands,
        "export",
        cmd_export,
        "write this space's journal as JSON lines, each event with its hash",
        "Write this space's journal as a journal file: a header line, one JSON line per"
        " event with its data exactly as stored and its hash, and a last line with the count"
        " (docs/cli.md describes the format). `clew import` replays it into any store."
        " --after or --since-seq write only the newer events; --month instead lists the"
        " journal events of the tasks archived in a month.",
    )
    p.add_argument("--output", "-o", metavar="FILE", help="write to FILE (default: stdout)")
    p.add_argument(
        "--after", metavar="EVENT_ID", help="only the events after this one (its whole id)"
    )
    p.add_argument(
        "--since-seq", type=whole, metavar="SEQ", help="only the events numbered above SEQ"
    )
    p.add_argument(
        "--month", metavar="YYYY-MM", help="instead: the events of the tasks archived that month"
    )

    p = command(
        commands,
        "import",
        cmd_import,
        "replay a journal file (from `clew export`), or archive a Claude Code or Codex transcript",
        "Replay a journal file into this space, a line at a time: every line is checked (its"
        " hash chain, its fields, the last line's count) and each event this space does not"
        " hold is added, all in one transaction, so a fault anywhere leaves nothing."
        " Importing the same file twice adds nothing. --from claude-code or --from codex"
        " instead archives a coding assistant's transcript (a Claude Code session's JSONL, a"
        " Codex CLI rollout) as a session keyed by its session id, as `clew capture` does.",
    )
    p.add_argument("file", metavar="FILE", help="the journal file, or - for stdin")
    p.add_argument(
        "--from",
        dest="source",
        choices=("journal", "claude-code", "codex"),
        default="journal",
        help="what FILE is: a journal file (the default), a Claude Code transcript or a Codex"
        " CLI rollout (into the session keyed by its session id; again: only what is new)",
    )
    p.add_argument(
        "--session", metavar="KEY", help="with --from claude-code or codex: the session's key"
    )

    p = command(
        commands,
        "push",
        cmd_push,
        "send this space's new events to another store (a team store)",
        "Send the events of this space that the store at --to does not hold, in order and in"
        " batches (each one transaction): a second push sends nothing, and a push that"
        " stopped resumes where it stopped.",
    )
    p.add_argument(
        "--to", required=True, metavar="STORE", help="the target store: a file path (or URL)"
    )
    p.add_argument(
        "--to-space", metavar="SPACE", help="the target's space (default: this one's name)"
    )
    p.add_argument(
        "--batch", type=_batch, default=500, metavar="N", help="events per transaction (500)"
    )
