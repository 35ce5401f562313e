"""Score a conversation's key decisions: what the session state (folded on every appended
turn, shown to the prompt as `key_decisions`) takes from user and assistant messages, against
the decisions they state and the rules a user sets; precision and recall.

    python benchmarks/judgement/session.py              # the table
    python benchmarks/judgement/session.py --mistakes   # each case it got wrong

Two sets, one kind (`session_decision`): data/session.jsonl (this area's own conversation
messages, written before the first score) and every message case of data/extract.jsonl (the
task-side extraction set: its decisions, by either role, and a user's constraints, are key
decisions; an assistant's relay of a rule and a finding are not). Each case is one message
appended to a session of its own through clew's public API (`start_session`, `append_turn`,
`session_state`); a key decision matches an expected item whose `says` it contains (case
aside). A `git commit -m` message is a key decision too, but no case runs one. See session.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data" / "session.jsonl"
EXTRACT = HERE / "data" / "extract.jsonl"
KIND = "session_decision"
_ROLE = {"agent": "assistant", "assistant": "assistant", "user": "user"}


def _read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def cases() -> list[dict[str, Any]]:
    """Every case: this area's own (`set` "session"), then the extraction set's messages
    (`set` "extract"), each with its role in the conversation and its expected key decisions."""
    own = [{**c, "set": "session"} for c in _read(DATA)]
    taken = []
    for case in _read(EXTRACT):
        if "text" not in case or case.get("role") not in _ROLE:
            continue  # a command's output: no message
        role = _ROLE[case["role"]]
        kinds = {"decision"} | ({"constraint"} if role == "user" else set())
        expect = [i for i in case["expect"] if i["kind"] in kinds]
        taken.append({**case, "role": role, "expect": expect, "set": "extract"})
    return own + taken


def found(chosen: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Case id -> the key decisions the session state holds after its message."""
    import clew

    if not hasattr(clew.Memory, "session_state"):
        raise RuntimeError("this clew has no conversation archive (no Memory.session_state)")
    os.environ["CLEW_WORKER"] = "off"
    with tempfile.TemporaryDirectory() as folder:
        mem = clew.open(Path(folder) / "session.db", mirror=False)
        try:
            out = {}
            for case in chosen:
                session = mem.start_session()
                mem.append_turn(session.id, role=case["role"], content=case["text"])
                state = mem.session_state(session.id).state
                out[case["id"]] = [d["text"] for d in state.get("decisions", [])]
            return out
        finally:
            mem.close()


def judge(case: dict[str, Any], said: list[str]) -> tuple[int, int, int]:
    """(tp, fp, fn) of one case; each expected item is matched once."""
    open_ = [item["says"].casefold() for item in case["expect"]]
    tp = fp = 0
    for text in said:
        match = next((s for s in open_ if s in text.casefold()), None)
        if match is None:
            fp += 1
        else:
            open_.remove(match)
            tp += 1
    return tp, fp, len(open_)


def row(label: str, chosen: list[dict[str, Any]], said: dict[str, list[str]]) -> dict[str, Any]:
    tp = fp = fn = 0
    for case in chosen:
        a, b, c = judge(case, said[case["id"]])
        tp, fp, fn = tp + a, fp + b, fn + c
    return {
        "kind": label,
        "cases": len(chosen),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
    }


def score() -> list[dict[str, Any]]:
    """The whole of both sets, then each role, this area's own set, the extraction set and
    its held-out part."""
    everything = cases()
    said = found(everything)
    parts = [
        ("", everything),
        (", user", [c for c in everything if c["role"] == "user"]),
        (", assistant", [c for c in everything if c["role"] == "assistant"]),
        (", own set", [c for c in everything if c["set"] == "session"]),
        (", extract set", [c for c in everything if c["set"] == "extract"]),
        (
            ", extract held out",
            [c for c in everything if c["set"] == "extract" and c["part"] == "held_out"],
        ),
    ]
    return [row(KIND + label, chosen, said) for label, chosen in parts]


def mistakes() -> list[str]:
    """Each case whose key decisions differ from what was expected, one line each."""
    everything = cases()
    said = found(everything)
    lines = []
    for case in everything:
        _, fp, fn = judge(case, said[case["id"]])
        if fp or fn:
            expected = [i["says"] for i in case["expect"]]
            lines.append(
                f"{case['id']} ({case['role']}): {case['text'][:100]!r}"
                f" expected {expected} got {said[case['id']]}"
            )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mistakes", action="store_true", help="list the cases it got wrong")
    args = parser.parse_args()
    if args.mistakes:
        print("\n".join(mistakes()))
        return 0
    print("| kind | cases | tp | fp | fn | precision | recall |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in score():
        print(
            f"| {r['kind']} | {r['cases']} | {r['tp']} | {r['fp']} | {r['fn']}"
            f" | {r['precision']:.3f} | {r['recall']:.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
