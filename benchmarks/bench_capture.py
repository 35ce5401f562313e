"""What a Claude Code capture hook costs on a long transcript.

A hook runs `clew capture --hook` after every prompt and tool call, so its cost must not grow
with the transcript. A transcript of N lines (the realistic sample in tests/data/ repeated,
each copy with fresh uuids: ~0.75 KB a line) is archived once; then each sample appends three
lines (a tool call, its result, a reply) and captures them.

1. **In process**, alternating samples: clew's capture (the newest archived uuid looked for
   from the file's end, the new lines appended) against the floor a capture without that
   look would pay before any database work: reading the whole file and parsing every line
   (what finding the new lines by their uuids takes). Wall and CPU time, p50 and p90.
2. **Whole processes**, in rotation: `python -c pass` (the floor), `clew prime --hook` (the
   hook path's reference) and `clew capture --hook` on the long transcript, with a fresh
   line appended before each capture. CPU (the child's rusage) beside wall time.

Run: `python benchmarks/bench_capture.py [--lines 2000,20000] [--runs 30]`.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import clew
from common import header, pct, table

SAMPLE = (
    Path(__file__).resolve().parent.parent
    / "tests/data/claude-code/7f3c2a91-4b6e-4d2a-9c1f-2e8b5d0a6c13.jsonl"
)
SESSION = "7f3c2a91-4b6e-4d2a-9c1f-2e8b5d0a6c13"


def lines_of_sample() -> list[dict[str, object]]:
    return [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]


def fresh(line: dict[str, object], parent: str | None) -> dict[str, object]:
    """A copy of a sample line with a new uuid, chained to `parent`."""
    copy = dict(line)
    if "uuid" in copy:
        copy["uuid"], copy["parentUuid"] = str(uuid.uuid4()), parent
    if "leafUuid" in copy:
        copy["leafUuid"] = str(uuid.uuid4())
    return copy


def write_transcript(path: Path, count: int) -> None:
    sample, parent = lines_of_sample(), None
    with path.open("w", encoding="utf-8") as out:
        for n in range(count):
            line = fresh(sample[n % len(sample)], parent)
            parent = line.get("uuid", parent)  # type: ignore[assignment]
            out.write(json.dumps(line, separators=(",", ":")) + "\n")


def append_three(path: Path) -> None:
    sample = lines_of_sample()
    tail = [fresh(sample[i], None) for i in (10, 11, 23)]  # tool call, its result, a reply
    with path.open("a", encoding="utf-8") as out:
        out.write("".join(json.dumps(t, separators=(",", ":")) + "\n" for t in tail))


def read_and_parse(path: Path) -> int:
    """The floor: read the whole transcript and parse every line."""
    with path.open("rb") as handle:
        return sum(1 for raw in handle if json.loads(raw))


def cpu_ms() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return (used.ru_utime + used.ru_stime) * 1000


def alternating(
    mine: Callable[[], object], floor: Callable[[], object], before: Callable[[], object], runs: int
) -> tuple[list[tuple[float, float]], list[tuple[float, float]]]:
    """(wall, cpu) ms of `mine` and `floor`, each after `before`, taking turns at going first."""
    out: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    for i in range(runs + 2):
        pair = [(mine, out[0]), (floor, out[1])]
        for fn, times in pair if i % 2 else pair[::-1]:
            before()
            c0, t0 = cpu_ms(), time.perf_counter()
            fn()
            sample = ((time.perf_counter() - t0) * 1000, cpu_ms() - c0)
            if i >= 2:
                times.append(sample)
    return out


def row(name: str, size: str, times: list[tuple[float, float]]) -> list[object]:
    wall, cpu = [w for w, _ in times], [c for _, c in times]
    return [size, name, f"{pct(wall, 50):.2f}", f"{pct(wall, 90):.2f}", f"{pct(cpu, 50):.2f}"]


def child_cpu_ms() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def processes(folder: Path, transcript: Path, runs: int) -> list[list[object]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLEW_", "PYTHON"))}
    env["CLEW_WORKER"] = "off"
    elsewhere = folder.parent
    event = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(folder),
             "hook_event_name": "PostToolUse"}  # fmt: skip
    start = {**event, "hook_event_name": "SessionStart", "source": "compact"}
    commands = {
        "floor: python -c pass": ([sys.executable, "-c", "pass"], b""),
        "clew prime --hook": (
            [sys.executable, "-m", "clew", "prime", "--hook"],
            json.dumps(start).encode(),
        ),
        "clew capture --hook (3 new lines)": (
            [sys.executable, "-m", "clew", "capture", "--hook"],
            json.dumps(event).encode(),
        ),
    }
    out: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for r in range(runs + 2):
        for name in names[r % 3 :] + names[: r % 3]:
            argv, stdin = commands[name]
            if "capture" in name:
                append_three(transcript)
            c0, t0 = child_cpu_ms(), time.perf_counter()
            done = subprocess.run(argv, input=stdin, cwd=elsewhere, env=env, capture_output=True)
            sample = ((time.perf_counter() - t0) * 1000, child_cpu_ms() - c0)
            assert done.returncode == 0 and not done.stderr, done.stderr
            if r >= 2:
                out[name].append(sample)
    return [row(name, "", times)[1:] for name, times in out.items()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", default="2000,20000", help="transcript sizes, in lines")
    parser.add_argument("--runs", type=int, default=30, help="samples of each measurement")
    args = parser.parse_args()
    sizes = [int(n) for n in args.lines.split(",")]
    header("Claude Code capture on a long transcript", ("runs", args.runs))
    rows, first, process_rows = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            folder = Path(tmp) / f"project-{size}"
            (folder / ".clew").mkdir(parents=True)
            transcript = Path(tmp) / f"{SESSION}-{size}.jsonl"
            write_transcript(transcript, size)
            megabytes = transcript.stat().st_size / 2**20
            with clew.open(folder / ".clew" / "clew.db") as mem:
                t0 = time.perf_counter()
                done = mem.capture_transcript(str(transcript), key=SESSION)
                seconds = time.perf_counter() - t0
                first.append([f"{size:,} lines ({megabytes:.1f} MB)", f"{done.added:,}",
                              f"{seconds:.2f}", f"{done.added / seconds:,.0f}"])  # fmt: skip
                mine, floor = alternating(
                    lambda t=transcript, m=mem: m.capture_transcript(str(t), key=SESSION),
                    lambda t=transcript: read_and_parse(t),
                    lambda t=transcript: append_three(t),
                    args.runs,
                )
                label = f"{size:,} lines"
                rows.append(row("clew capture: 3 new lines", label, mine))
                rows.append(row("floor: read and parse the whole file", label, floor))
                assert mem.verify().ok
            if size == sizes[-1]:
                process_rows = processes(folder, transcript, args.runs)
    print("\n## The first capture (the whole transcript archived)\n")
    print(table(["transcript", "turns", "seconds", "turns/s"], first))
    print("\n## One hook's capture, in process (ms)\n")
    print(table(["transcript", "what", "wall p50", "wall p90", "cpu p50"], rows))
    print(f"\n## Whole processes on the {sizes[-1]:,}-line transcript (ms)\n")
    print(table(["command", "wall p50", "wall p90", "cpu p50"], process_rows))


if __name__ == "__main__":
    main()
