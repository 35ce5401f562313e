"""Benchmark the file mirrors: one mirrored write as the task's journal.jsonl grows.

Prints a markdown table; a script, not a timed test:

    python benchmarks/bench_mirror.py                 # journals of 1 MB and 100 MB
    python benchmarks/bench_mirror.py --sizes 1 10    # other sizes, in MB

For each size a task folder is prepared with a journal.jsonl of that many bytes of
realistic event lines, then `Mirror.write` runs as the facade runs it after a commit:
the state file rewritten, one new event appended to the journal. Alternating with it,
the floor: the least any durable append can do, one line written with O_APPEND and
fsynced. A mirrored write that copies the journal grows with its size; one that appends
stays near the floor plus the state file's atomic rewrite.

Then end to end: `Memory.update_task(task, message=...)` on a store with mirrors on and the
task's journal.jsonl grown to the size, against the same call on a store with mirrors off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile

import clew
from clew.core.ids import new_id
from clew.models import Event
from clew.state.mirror import JOURNAL_FILE, Mirror, journal_line
from common import alternating_ms, header, pct, table

STATE = "task:\n  id: x\n  status: active\n" + "  - step: a completed step with a summary\n" * 40


def _event(seq: int) -> Event:
    data = {"message": {"id": new_id(), "content": "ran the tests, 3 failed in test_auth " * 8}}
    return Event(seq, new_id(), "default", "t", new_id(), "message.added", data, "2026-11-22T09:00")


def _fill(path: str, size: int) -> int:
    """Write event lines to `path` until it holds `size` bytes; return the last seq."""
    seq = 0
    with open(path, "w", encoding="utf-8") as handle:
        written = 0
        while written < size:
            seq += 1
            line = journal_line(_event(seq)) + "\n"
            written += handle.write(line)
    return seq


def measure(size_mb: float, runs: int) -> list[object]:
    """Median and p95 ms of one mirrored write at a journal of `size_mb`, and the floor."""
    with tempfile.TemporaryDirectory(prefix="clew-bench-mirror-") as root:
        mirror = Mirror(root)
        task_id = new_id()
        folder = mirror.folder(task_id)
        os.makedirs(folder)
        last = _fill(os.path.join(folder, JOURNAL_FILE), int(size_mb * 1_048_576))
        floor_path = os.path.join(root, "floor.jsonl")
        seqs = iter(range(last + 1, last + 10_000))

        def clew(_: int) -> None:
            mirror.write(task_id, lambda after: (STATE, [_event(next(seqs))]))

        def floor(_: int) -> None:
            line = (journal_line(_event(0)) + "\n").encode()
            handle = os.open(floor_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(handle, line)
                os.fsync(handle)
            finally:
                os.close(handle)

        clew_ms, floor_ms = alternating_ms(clew, floor, runs, warm=2)
    median = statistics.median(clew_ms)
    floor_median = statistics.median(floor_ms)
    return [
        f"{size_mb:g} MB",
        f"{median:.2f}",
        f"{pct(clew_ms, 95):.2f}",
        f"{floor_median:.2f}",
        f"{median / floor_median:.1f}x",
    ]


def measure_message(size_mb: float, runs: int) -> list[object]:
    """Median ms of one `update_task(message=...)` with mirrors on (journal of `size_mb`)
    and off."""
    with tempfile.TemporaryDirectory(prefix="clew-bench-mirror-") as root:
        mirrored = clew.open(os.path.join(root, "on", "clew.db"), mirror=True)
        plain = clew.open(os.path.join(root, "off", "clew.db"), mirror=False)
        on = mirrored.create_task("Deploy", ["Build", "Push"]).id
        off = plain.create_task("Deploy", ["Build", "Push"]).id
        journal = os.path.join(root, "on", "tasks", on, JOURNAL_FILE)
        last = mirrored.journal(task_id=on)[-1]
        # Grow the file with older-looking lines, ending at the seq the store has mirrored.
        _fill(journal + ".fill", int(size_mb * 1_048_576))
        with open(journal + ".fill", "ab") as handle:
            handle.write((journal_line(last) + "\n").encode())
        os.replace(journal + ".fill", journal)
        text = "ran the tests, 3 failed in test_auth " * 4
        on_ms, off_ms = alternating_ms(
            lambda i: mirrored.update_task(on, message=f"{i} {text}"),
            lambda i: plain.update_task(off, message=f"{i} {text}"),
            runs,
            warm=2,
        )
        mirrored.close()
        plain.close()
    median, floor = statistics.median(on_ms), statistics.median(off_ms)
    return [f"{size_mb:g} MB", f"{median:.2f}", f"{floor:.2f}", f"{median / floor:.1f}x"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=float, nargs="+", default=[1, 100], metavar="MB")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    header("clew mirrors: one mirrored write against the journal's size", ("runs", args.runs))
    rows = [measure(size, args.runs) for size in args.sizes]
    print(
        table(
            [
                "journal.jsonl",
                "mirrored write median ms",
                "p95 ms",
                "floor (O_APPEND + fsync) ms",
                "write / floor",
            ],
            rows,
        )
    )
    rows = [measure_message(size, args.runs) for size in args.sizes]
    print()
    print(
        table(
            ["journal.jsonl", "message, mirrors on: median ms", "mirrors off ms", "on / off"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
