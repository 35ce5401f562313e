"""Benchmark the session-state fold (`session_state.advance`), run on every appended turn:
this tree's against another commit's, alternating, in CPU time. A script, not a timed test:

    python benchmarks/bench_session_state.py                 # against main
    python benchmarks/bench_session_state.py --against REV --runs 30

Two workloads, each folded turn by turn from an empty state (messages parsed beforehand):
the design's workload (benchmarks/workload.py: user and assistant prose, tool calls and their
outputs; few of its words are the ones the decision rules need) and the judgement sets'
messages (benchmarks/judgement/data: agents' and users' messages, where most hold one, so
the sentence rules run on most). Each run folds the whole workload once per side, the order
rotating each run; the table gives µs per turn (median and p90 of the runs) and the ratio.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from clew.conversations import session_state
from clew.core.turns import Parts, parse
from common import alternating_cpu, header, pct, table
from workload import messages

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def fold_of(rev: str) -> ModuleType:
    """`clew.conversations.session_state` as it was at `rev` (its imports from this tree's clew)."""
    # its path at `rev`: in the conversations package since issue 26, at the top before
    for where in ("conversations/session_state.py", "session_state.py"):
        shown = subprocess.run(
            ["git", "show", f"{rev}:src/clew/{where}"], cwd=ROOT, capture_output=True, text=True
        )
        if shown.returncode == 0:
            break
    shown.check_returncode()
    source = shown.stdout
    folder = tempfile.mkdtemp()
    path = Path(folder) / "session_state_then.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("session_state_then", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def judgement_messages() -> list[dict[str, Any]]:
    """The judgement sets' messages, as a conversation (an agent's message is the assistant's)."""
    out = []
    for name in ("extract", "session", "progress"):
        path = HERE / "judgement" / "data" / f"{name}.jsonl"
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            text = case.get("text") or case.get("message")
            if isinstance(text, str):
                role = "user" if case.get("role") == "user" else "assistant"
                out.append({"role": role, "content": text})
    return out


def folding(fold: Callable[..., dict[str, Any]], parts: list[Parts]) -> Callable[[int], object]:
    def run(_: int) -> object:
        state: dict[str, Any] = {}
        for number, p in enumerate(parts, 1):
            state = fold(state, number, p)
        return state

    return run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", default="main", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--turns", type=int, default=5000, help="the workload's turns")
    args = parser.parse_args()
    then = fold_of(args.against)
    header(f"Session-state fold: this tree against {args.against}", ("runs", args.runs))
    rows = []
    for label, work in (
        ("the design's workload", messages(args.turns)),
        ("judgement sets' messages", judgement_messages()),
    ):
        parts = [parse(m) for m in work]
        sides = [folding(then.advance, parts), folding(session_state.advance, parts)]
        _, cpu = alternating_cpu(sides, args.runs, warm=2)
        per_turn = [[ms * 1000 / len(parts) for ms in side] for side in cpu]
        before, after = (statistics.median(side) for side in per_turn)
        rows.append([
            f"{label}, {len(parts):,} turns", f"{before:.2f}", f"{pct(per_turn[0], 90):.2f}",
            f"{after:.2f}", f"{pct(per_turn[1], 90):.2f}", f"{after / before:.2f}",
        ])  # fmt: skip
    print(table(
        ["workload", f"{args.against} µs/turn", "p90", "now µs/turn", "p90", "now / then"], rows
    ))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
