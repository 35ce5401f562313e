"""Redaction: how well it finds secrets, beside detect-secrets, and what it costs a write.

    python benchmarks/bench_redaction.py             # the labelled set, then the write path
    python benchmarks/bench_redaction.py --quick     # fewer write samples

1. **The labelled set** (tests/data/redaction_set.jsonl, made by redaction_set.py: 178
   generated secrets of every kind clew knows, in the contexts an agent's memory holds them,
   and 148 near-misses). For each kind, the share of its secrets caught (no word of 4
   characters or more of the secret left) by clew's rules and by detect-secrets (Yelp's,
   the dev dependency; its default plugins and filters, each sample scanned as the lines of
   a file, caught when a finding covers the secret); for each kind of near-miss, how many
   each flagged. Precision and recall of both, and each one's time per string.
2. **The write path** (the conversation workload, benchmarks/workload.py): appending a turn,
   and recording a command with the workload's tool output as its stdout, with redaction
   on and off, two stores written in turns (the order rotating each step), process CPU
   beside wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import clew
from clew.privacy.redaction import OFF, Redactor
from common import alternating_cpu, header, pct, table
from workload import messages

SET = Path(__file__).resolve().parent.parent / "tests" / "data" / "redaction_set.jsonl"


def leaked(secret: str, out: str) -> bool:
    """Whether any word of 4 characters or more of `secret` is left in `out`."""
    return any(len(w) >= 4 and w in out for w in secret.split())


def clew_scan(rows: list[dict[str, Any]]) -> tuple[list[bool], float]:
    """Whether clew changed each sample's text (and caught its secret), and µs a string."""
    redactor = Redactor()
    out: list[bool] = []
    start = time.process_time()
    for row in rows:
        redactor._clean.clear()  # each string scanned, as a new text is
        text = redactor.text(row["text"])
        out.append(not leaked(row["secret"], text) if row["kind"] else text != row["text"])
    return out, (time.process_time() - start) / len(rows) * 1e6


def detect_secrets_scan(rows: list[dict[str, Any]]) -> tuple[list[bool], list[bool], float]:
    """The same with detect-secrets (its default plugins and filters, each sample scanned
    as the lines of a file): whether it flagged each sample at all, and, for a secret,
    whether a finding covers it (what a redactor built on it could take out); µs a string."""
    from detect_secrets.core.scan import _process_line_based_plugins
    from detect_secrets.settings import default_settings

    flagged: list[bool] = []
    covered: list[bool] = []
    with default_settings():
        start = time.process_time()
        for row in rows:
            lines = list(enumerate(row["text"].splitlines() or [""], 1))
            found = [
                s.secret_value or ""
                for s in _process_line_based_plugins(lines=lines, filename="sample.txt")
            ]
            flagged.append(bool(found))
            secret = row["secret"] or ""
            rest = row["text"]
            for value in sorted(filter(None, found), key=len, reverse=True):
                rest = rest.replace(value, "")
            covered.append(bool(row["kind"]) and bool(found) and not leaked(secret, rest))
        took = (time.process_time() - start) / len(rows) * 1e6
    return flagged, covered, took


def labelled_set() -> tuple[str, dict[str, float]]:
    rows = [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines()]
    ours, our_us = clew_scan(rows)
    flagged, covered, their_us = detect_secrets_scan(rows)
    by_kind: dict[str, list[tuple[bool, bool, bool]]] = {}
    by_miss: dict[str, list[tuple[bool, bool]]] = {}
    for row, a, f, c in zip(rows, ours, flagged, covered, strict=True):
        if row["kind"]:
            key = row["kind"] if not row["category"].startswith("not caught") else "(not caught)"
            by_kind.setdefault(key, []).append((a, f, c))
        else:
            by_miss.setdefault(row["category"], []).append((a, f))
    secrets = sum(1 for r in rows if r["kind"])
    lines = [f"{len(rows)} strings: {secrets} secrets, {len(rows) - secrets} near-misses\n"]
    kind_rows = [
        [kind, len(v), f"{sum(a for a, _, _ in v)}/{len(v)}",
         f"{sum(f for _, f, _ in v)}/{len(v)}", f"{sum(c for _, _, c in v)}/{len(v)}"]
        for kind, v in sorted(by_kind.items())
    ]  # fmt: skip
    lines.append(table(["secret kind", "n", "clew redacted", "detect-secrets flagged",
                        "detect-secrets covered"], kind_rows))  # fmt: skip
    miss_rows = [
        [cat, len(v), sum(a for a, _ in v), sum(f for _, f in v)]
        for cat, v in sorted(by_miss.items())
    ]
    lines.append("")
    lines.append(table(["near-miss", "n", "clew changed", "detect-secrets flagged"], miss_rows))
    summary: dict[str, float] = {}
    totals = []
    near = [not r["kind"] for r in rows]
    for name, hit, false, us in (
        ("clew (redacted)", ours, ours, our_us),
        ("detect-secrets 1.5.0 (flagged)", flagged, flagged, their_us),
        ("detect-secrets 1.5.0 (covered)", covered, flagged, their_us),
    ):
        tp = sum(h for h, n in zip(hit, near, strict=True) if not n)
        fp = sum(f for f, n in zip(false, near, strict=True) if n)
        fn = secrets - tp
        precision, recall = tp / (tp + fp) if tp + fp else 1.0, tp / secrets
        summary[f"{name} precision"], summary[f"{name} recall"] = precision, recall
        totals.append([name, tp, fn, fp, f"{precision:.3f}", f"{recall:.3f}", f"{us:.0f}"])
    lines.append("")
    lines.append(table(["scanner", "caught", "missed", "false", "precision", "recall",
                        "µs CPU a string"], totals))  # fmt: skip
    return "\n".join(lines), summary


class Side:
    """One store, redaction on or off, appending the workload's turns and commands."""

    def __init__(self, path: str, work: list[dict[str, Any]], on: bool) -> None:
        self.mem = clew.open(path)
        if not on:
            self.mem.settings = self.mem.settings._replace(redaction=OFF)
        self.session = self.mem.start_session().id
        self.task = self.mem.create_task("bench", ["run"]).id
        self.work = work

    def turn(self, i: int) -> None:
        self.mem.append_turn(self.session, self.work[i])

    def command(self, i: int) -> None:
        message = self.work[i]
        text = message.get("content") if isinstance(message.get("content"), str) else ""
        self.mem.record_action(self.task, command="pytest -q tests", exit_code=i % 2,
                               stdout=text or "ok")  # fmt: skip


def write_path(tmp: str, samples: int) -> str:
    warm = max(samples // 10, 20)
    work = messages(samples + warm, seed=11)
    rows = []
    for what in ("turn", "command"):
        on = Side(os.path.join(tmp, f"{what}-on.db"), work, True)
        off = Side(os.path.join(tmp, f"{what}-off.db"), work, False)
        sides: list[Callable[[int], object]] = [getattr(on, what), getattr(off, what)]
        wall, cpu = alternating_cpu(sides, samples, warm)
        base_cpu = statistics.fmean(cpu[1])
        for label, w, c in (("on", wall[0], cpu[0]), ("off", wall[1], cpu[1])):
            rows.append([
                f"{'append_turn' if what == 'turn' else 'record_action'}, redaction {label}",
                f"{pct(w, 50) * 1000:.0f}", f"{pct(w, 99) * 1000:.0f}",
                f"{pct(c, 50) * 1000:.0f}", f"{statistics.fmean(c) * 1000:.0f}",
                f"{(statistics.fmean(c) - base_cpu) * 1000:+.1f}",
                f"{statistics.fmean(c) / base_cpu:.3f}",
            ])  # fmt: skip
        on.mem.close()
        off.mem.close()
    return table(
        ["write", "wall p50 µs", "wall p99 µs", "CPU p50 µs", "CPU mean µs", "CPU vs off µs",
         "CPU / off"],
        rows,
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer write samples")
    parser.add_argument("--samples", type=int, help="write samples per side")
    args = parser.parse_args(argv)
    samples = args.samples or (400 if args.quick else 2000)
    header("Redaction: the labelled set and the write path", ("write samples", samples))
    text, _ = labelled_set()
    print("\n## The labelled set\n")
    print(text)
    print("\n## The write path, redaction on and off (the conversation workload)\n")
    with tempfile.TemporaryDirectory(prefix="clew-bench-redaction-") as tmp:
        print(write_path(tmp, samples))
    return 0


if __name__ == "__main__":
    sys.exit(main())
