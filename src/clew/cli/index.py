"""`clew index`: the vector index's status, updates and rebuilds (the `vectors` extra)."""

from __future__ import annotations

import argparse
from typing import Any

from clew.cli.common import Commands, Parser, open_memory, print_json, whole


def _status_json(status: Any) -> dict[str, Any]:
    return {
        "model": status.model,
        "embedded": status.embedded,
        "total": status.total,
        "pending": status.pending,
        "lag": status.lag(),
        "kinds": {
            kind: {"embedded": done, "total": total}
            for kind, (done, total) in (status.kinds or {}).items()
        },
    }


def _ann_json(status: Any) -> dict[str, Any]:
    return {
        "used": status.used,
        "native": status.native,
        "installed": status.installed,
        "path": status.path,
        "exists": status.exists,
        "vectors": status.count,
        "covered_seq": status.covered,
        "lag": status.lag,
        "bytes": status.bytes,
        "says": status.describe(),
    }


def _records(count: int) -> str:
    return f"{count:,} record" + ("" if count == 1 else "s")


def _print_status(status: Any) -> None:
    from clew.search.vectors import unavailable

    print(f"model: {status.model or 'none (' + unavailable() + ')'}")
    print(status.lag())
    for kind, (done, total) in (status.kinds or {}).items():
        print(f"  {kind:<9}{done:>12,} of {total:,}")


def cmd_index_status(args: argparse.Namespace) -> int:
    with open_memory(args) as mem:
        status = mem.index_status()
        approximate = mem.ann_status()
    if args.json:
        print_json({**_status_json(status), "approximate": _ann_json(approximate)})
    else:
        _print_status(status)
        print(approximate.describe())
    return 0


def cmd_index_update(args: argparse.Namespace) -> int:
    from clew.cli.bar import shown as bar

    with open_memory(args) as mem:
        with bar():
            done = mem.update_index(limit=args.limit)
        status = mem.index_status()
        approximate = mem.prepare_nearest()
    if args.json:
        print_json({"updated": done, **_status_json(status), "approximate": _ann_json(approximate)})
    else:
        print(f"updated {_records(done)}; {status.lag()}")
        if approximate.used:
            print(approximate.describe())
    return 0


def cmd_index_rebuild(args: argparse.Namespace) -> int:
    from clew.cli.bar import shown as bar

    with open_memory(args) as mem:
        with bar():
            done = mem.rebuild_index()
        status = mem.index_status()
        approximate = mem.prepare_nearest()
    if args.json:
        print_json({"updated": done, **_status_json(status), "approximate": _ann_json(approximate)})
    else:
        print(f"embedded {_records(done)} again; {status.lag()}")
        if approximate.used:
            print(approximate.describe())
    return 0


def register(commands: Any, command: Commands) -> None:
    """Add `clew index`."""
    index_parser = commands.add_parser(
        "index",
        help="the vector index: how far it is, update it, rebuild it",
        description="The vector index: embeddings of entries, messages, commands, turns and"
        " trace decisions, made off the write path by a model that ships with the `vectors`"
        " extra (`clew index status` prints the command that adds it). Derived from the"
        " records and never journaled: export, import and push leave it behind, and"
        " `rebuild` makes it again.",
    )
    index = index_parser.add_subparsers(
        dest="index_command", metavar="INDEX_COMMAND", parser_class=Parser
    )
    index.required = True
    command(
        index,
        "status",
        cmd_index_status,
        "how many records have a current vector, of how many",
        "Print the model and how far its index is ('embedded 9,812 of 9,820'), per kind, and"
        " the approximate index above 200,000 vectors: its file, what it holds, how far behind.",
    )
    p = command(
        index,
        "update",
        cmd_index_update,
        "embed the records that have no current vector",
        "Embed the records with no vector of the current model, or changed since theirs was"
        " made, in batches (each its own transaction); a record whose text did not change keeps"
        " its vector; then builds or tops up the approximate index where one is needed.",
    )
    p.add_argument("--limit", type=whole, metavar="N", help="embed at most N records")
    command(
        index,
        "rebuild",
        cmd_index_rebuild,
        "drop this space's vectors of the model and embed everything again",
        "Delete this space's vectors of the current model and embed every record again.",
    )
